#include "cdeadline.h"

#include <time.h>

static _Thread_local uint64_t dr_deadline_ns = 0;

uint64_t darkroom_monotonic_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

void darkroom_set_deadline(uint64_t monotonic_ns) { dr_deadline_ns = monotonic_ns; }

int darkroom_past_deadline(void) {
    return dr_deadline_ns != 0 && darkroom_monotonic_ns() >= dr_deadline_ns;
}
