#ifndef DARKROOM_CRESAMPLE_INTERNAL_H
#define DARKROOM_CRESAMPLE_INTERNAL_H
/* What the two implementations of the passes share: the float passes (resample.c, any
 * processor) and the fixed-point ones (resample_fixed.c, AVX2). */
#include "cresample.h"

#if defined(__x86_64__) && defined(__clang__)
#define DR_RESAMPLE_X86 1
#endif

/* The source columns the horizontal taps read: [first, end). */
typedef struct {
    int32_t first;
    int32_t end;
} dr_span;

static inline dr_span dr_columns_read(const dr_resample_axis *horizontal) {
    dr_span span = {0, 1};
    if (horizontal->output_size <= 0) return span;
    span.first = horizontal->starts[0];
    span.end = horizontal->starts[0] + horizontal->taps;
    for (int32_t i = 1; i < horizontal->output_size; i++) {
        int32_t start = horizontal->starts[i];
        if (start < span.first) span.first = start;
        if (start + horizontal->taps > span.end) span.end = start + horizontal->taps;
    }
    return span;
}

#if DR_RESAMPLE_X86
/* Bytes of scratch the fixed-point passes need (from any address: they align it themselves). */
size_t dr_resample_fixed_scratch_bytes(const dr_resample_axis *horizontal, const dr_resample_axis *vertical);
/* The fixed-point passes; the caller has checked that the processor has AVX2. Returns 0; -1
 * when the scratch is too small; 1 when a weight is beyond what they hold (the float passes
 * must run instead). */
int dr_resample_fixed_avx2(const uint8_t *source, int32_t source_width, int32_t source_height, size_t source_stride,
                           const dr_resample_axis *horizontal, const dr_resample_axis *vertical, uint8_t *target,
                           size_t target_stride, void *scratch, size_t scratch_bytes, int transpose);
#endif

#endif
