#include "cruntime.h"
#include <malloc.h>

int darkroom_keep_large_allocations(size_t mmap_threshold_bytes, size_t trim_threshold_bytes) {
    int ok = mallopt(M_MMAP_THRESHOLD, (int)mmap_threshold_bytes);
    ok &= mallopt(M_TRIM_THRESHOLD, (int)trim_threshold_bytes);
    return ok;
}
