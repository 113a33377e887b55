#ifndef DARKROOM_CDEADLINE_H
#define DARKROOM_CDEADLINE_H

#include <stdint.h>

/*
 * A deadline for the work the calling thread is doing (one photo), checked by the decoders
 * while they run: a decode that outlives it stops at its next check (a few milliseconds apart at
 * most) and returns a "past deadline" status, so a photo's timeout stops its work instead of
 * being noticed once the work is done. Each thread has its own; 0 means none.
 */

/* Nanoseconds of CLOCK_MONOTONIC: the clock the deadline is measured on. */
uint64_t darkroom_monotonic_ns(void);

/* Sets the calling thread's deadline (CLOCK_MONOTONIC nanoseconds), or clears it with 0. */
void darkroom_set_deadline(uint64_t monotonic_ns);

/* 1 when the calling thread has a deadline and it has passed, else 0. */
int darkroom_past_deadline(void);

#endif
