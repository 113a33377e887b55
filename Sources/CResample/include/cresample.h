#ifndef DARKROOM_CRESAMPLE_H
#define DARKROOM_CRESAMPLE_H

#include <stddef.h>
#include <stdint.h>

/*
 * Imaging's pixel loops in C: the resampler, the box reduction and the transpose that make and
 * turn rasters, and the analysis copy's per-pixel measures (analysis.c).
 *
 * The separable resampling passes over 8-bit RGB, vectorised: the filter taps are computed by
 * the caller (Imaging's ResampleAxis), this layer only runs them, vertical pass first, over the
 * source columns the output reads, then the horizontal pass. On x86-64 processors with AVX2 the
 * passes run in 16-bit fixed point, 16 lanes, on strips of 16 output rows (resample_fixed.c,
 * chosen at run time); other processors run them in float with their baseline vector unit
 * (resample.c). The two agree within a level.
 */

/* One axis's taps: for output pixel i, `taps` weights from source pixel starts[i] (the starts
 * rise along the axis, or fall where it is mirrored). Every start
 * satisfies 0 <= starts[i] and starts[i] + taps <= source size + 1 (a read one past the end
 * meets a zero weight); `taps` is even. */
typedef struct {
    int32_t output_size;
    int32_t taps;
    const int32_t *starts;
    const float *weights;
    /* The weights as the fixed-point passes hold them (`dr_resample_quantise` of this axis, with
     * its result in `fixed_bits`), made once by a caller that keeps the axis; NULL: the passes
     * make them on each call. */
    const int16_t *fixed_weights;
    int32_t fixed_bits;
} dr_resample_axis;

/* The axis's weights as 16-bit integers (output_size * taps of them into `out`), each output's
 * summing to one exactly, with the fractional bits returned: 15, or 14 when some weight is one or
 * more (a cut filter's edge); 0 when a weight is beyond ±2, which the fixed-point passes cannot
 * hold (the float passes then run). */
int dr_resample_quantise(const dr_resample_axis *axis, int16_t *out);

/* Floats of scratch `dr_resample` needs for these axes over a source `source_width` wide. */
size_t dr_resample_scratch_floats(int32_t source_width, const dr_resample_axis *horizontal,
                                  const dr_resample_axis *vertical);

/* Resamples `source` (rows of `source_stride` bytes) into `target` (horizontal->output_size
 * by vertical->output_size, rows of `target_stride` bytes), using `scratch` of at least
 * dr_resample_scratch_floats floats. Returns 0, or -1 when the scratch is too small. */
int dr_resample(const uint8_t *source, int32_t source_width, int32_t source_height, size_t source_stride,
                const dr_resample_axis *horizontal, const dr_resample_axis *vertical,
                uint8_t *target, size_t target_stride, float *scratch, size_t scratch_floats);

/* `dr_resample` with its output transposed: target pixel (x, y) is the resampled pixel (y, x),
 * so `target` is vertical->output_size wide and horizontal->output_size high. A picture stored
 * turned a quarter (EXIF orientations 5 to 8) is resampled upright with no transposed copy of
 * it: its horizontal axis is the picture's vertical one. Returns 0; -1 when the scratch is too
 * small; 1 when this processor or these weights cannot (the caller transposes, then resamples). */
int dr_resample_transposed(const uint8_t *source, int32_t source_width, int32_t source_height, size_t source_stride,
                           const dr_resample_axis *horizontal, const dr_resample_axis *vertical, uint8_t *target,
                           size_t target_stride, float *scratch, size_t scratch_floats);

/* Whether `dr_resample_transposed` runs on this processor (AVX2 with AVX-512 VBMI) and thread. */
int dr_resample_transposes(void);

/* `source` (rows of width * 3 bytes) reduced by an integer `factor`: each output pixel of
 * `target` ((width / factor) by (height / factor), at least 1 by 1) the rounded mean of a block
 * of factor by factor pixels (at most the picture's size); the partial blocks at the right and
 * bottom edges are dropped. `sums` holds (width / factor) * min(factor, width) * 3 counts. */
void dr_box_reduce(const uint8_t *source, int32_t width, int32_t height, int32_t factor, uint8_t *target,
                   uint32_t *sums);

/* `source` (width by height, rows of width * 3 bytes) transposed into `target` (height by width,
 * rows of height * 3 bytes): target pixel (x, y) is source pixel (y, x). */
void dr_transpose_rgb(const uint8_t *source, int32_t width, int32_t height, uint8_t *target);

/* Rec. 601 luma (0...255) of `count` RGB pixels into `luma`. */
void dr_luma(const uint8_t *rgb, size_t count, float *luma);

/* The attention score's weights, here once for the C below and for Imaging's PictureAnalysis:
 * saturation (max - min of R, G, B, 0...255) above the floor adds the weight times itself; a skin
 * tone adds the skin score (skin draws the eye in portraits and groups). */
#define DR_SALIENCY_SATURATION_FLOOR 48.0f
#define DR_SALIENCY_SATURATION_WEIGHT 0.5f
#define DR_SALIENCY_SKIN_SCORE 96.0f

/* The attention crop's interest of each pixel of `rgb` (width by height, rows of width * 3
 * bytes) whose luma `dr_luma` gave: |4-neighbour Laplacian of luma| (a missing neighbour at the
 * edge is the pixel itself), plus the saturation's share above its floor, plus the skin score for
 * a skin tone (Cb 77...127, Cr 133...173, luma above 40). Plain float arithmetic, nothing fused:
 * the AVX2 build and the baseline one give the same bits, and so does the scalar reference in
 * Imaging's tests. */
void dr_saliency(const uint8_t *rgb, const float *luma, int32_t width, int32_t height, float *scores);

/* The sums `dr_luma_statistics` gives. */
typedef struct {
    double sum;               /* of every luma value, in order */
    int64_t clipped;          /* values <= low or >= high */
    double laplacian_sum;     /* of 4c - left - right - up - down (in float, in that order) over interior pixels */
    double laplacian_squares; /* of the same, squared in double */
    int64_t samples;          /* interior pixels: (width - 2) * (height - 2), or 0 below 3 by 3 */
} dr_luma_statistics_t;

/* The sharpness, brightness and clipping sums of a luma plane (PictureAnalysis.statistics), in
 * double: each sum in four partial sums (element i of its run into sum i % 4, the Laplacian's run
 * starting again on each row), combined as (s0 + s1) + (s2 + s3). */
void dr_luma_statistics(const float *luma, int32_t width, int32_t height, float low, float high, dr_luma_statistics_t *out);

/* The summed-area table of `scores` ((width + 1) by (height + 1) doubles, the first row and
 * column zero): entry (x + 1, y + 1) is the entry above plus row y's running sum to x, in double,
 * each sum in order: the bits of a plain loop. */
void dr_summed_area(const float *scores, int32_t width, int32_t height, double *table);

/* 1 when the fixed-point AVX2 passes are in use on this processor (and thread), else 0. */
int dr_resample_uses_avx2(void);
/* 1 when their vertical pass runs on AVX-512 VNNI (`vpdpwssd`, exact 32-bit sums of two taps at
 * a time, rounded once) on this processor and thread, else 0. */
int dr_resample_uses_vnni(void);
/* On the calling thread only, runs the AVX2 passes without VNNI even where it is present (on: 1),
 * or lets the processor decide again (0): for the tests. */
void dr_resample_prefer_plain_avx2(int on);
/* On the calling thread only, runs the baseline float passes (and the box reduction's baseline
 * build) even where AVX2 is present (on: 1), or lets the processor decide again (0): for the
 * tests, which check both. */
void dr_resample_prefer_baseline(int on);

#endif
