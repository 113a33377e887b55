#include "cresample.h"
#include "resample_internal.h"

#include <math.h>

/*
 * The analysis copy's per-pixel measures (Imaging's PictureAnalysis): luma and interest. Every
 * value is computed with the same float operations, in the same order, as the scalar definition
 * in PictureAnalysis.swift, so the two builds below and that definition agree bit for bit; no
 * operation is fused or reordered.
 */
#pragma clang fp contract(off)

#define DR_INLINE static inline __attribute__((always_inline))

DR_INLINE float luma_of(float r, float g, float b) { return 0.299f * r + 0.587f * g + 0.114f * b; }

DR_INLINE void luma_body(const uint8_t *rgb, size_t count, float *luma) {
    for (size_t i = 0; i < count; i++) luma[i] = luma_of(rgb[i * 3], rgb[i * 3 + 1], rgb[i * 3 + 2]);
}

/* The interest of one pixel from its Laplacian (already made absolute) and its colour. */
DR_INLINE float interest(float laplacian, float y, float r, float g, float b) {
    float high = r > g ? (r > b ? r : b) : (g > b ? g : b);
    float low = r < g ? (r < b ? r : b) : (g < b ? g : b);
    float saturation = high - low;
    float value = laplacian;
    value = saturation > DR_SALIENCY_SATURATION_FLOOR ? value + DR_SALIENCY_SATURATION_WEIGHT * saturation : value;
    /* The skin-tone box (Chai and Ngan): y is the pixel's luma, the same expression. */
    float cb = 128.0f - 0.168736f * r - 0.331264f * g + 0.5f * b;
    float cr = 128.0f + 0.5f * r - 0.418688f * g - 0.081312f * b;
    int skin = (y > 40.0f) & (cb >= 77.0f) & (cb <= 127.0f) & (cr >= 133.0f) & (cr <= 173.0f);
    return skin ? value + DR_SALIENCY_SKIN_SCORE : value;
}

/* One row of scores; `up` and `down` are the neighbour rows (the row itself at the picture's
 * edges), and the first and last pixels take themselves for their missing neighbour. */
DR_INLINE void saliency_row(const uint8_t *rgb, const float *luma, const float *up, const float *down, int32_t width,
                            float *scores) {
    for (int32_t x = 0; x < width; x++) {
        float centre = luma[x];
        float left = x > 0 ? luma[x - 1] : centre, right = x + 1 < width ? luma[x + 1] : centre;
        float laplacian = fabsf(4.0f * centre - left - right - up[x] - down[x]);
        scores[x] = interest(laplacian, centre, rgb[x * 3], rgb[x * 3 + 1], rgb[x * 3 + 2]);
    }
}

DR_INLINE void saliency_body(const uint8_t *rgb, const float *luma, int32_t width, int32_t height, float *scores) {
    for (int32_t y = 0; y < height; y++) {
        const float *row = luma + (size_t)y * (size_t)width;
        const float *up = y > 0 ? row - width : row, *down = y + 1 < height ? row + width : row;
        saliency_row(rgb + (size_t)y * (size_t)width * 3, row, up, down, width, scores + (size_t)y * (size_t)width);
    }
}

#if DR_RESAMPLE_X86
__attribute__((target("avx2"))) static void luma_avx2(const uint8_t *rgb, size_t count, float *luma) {
    luma_body(rgb, count, luma);
}
__attribute__((target("avx2"))) static void saliency_avx2(const uint8_t *rgb, const float *luma, int32_t width,
                                                          int32_t height, float *scores) {
    saliency_body(rgb, luma, width, height, scores);
}
#endif

void dr_luma(const uint8_t *rgb, size_t count, float *luma) {
#if DR_RESAMPLE_X86
    if (dr_resample_uses_avx2()) {
        luma_avx2(rgb, count, luma);
        return;
    }
#endif
    luma_body(rgb, count, luma);
}

void dr_saliency(const uint8_t *rgb, const float *luma, int32_t width, int32_t height, float *scores) {
#if DR_RESAMPLE_X86
    if (dr_resample_uses_avx2()) {
        saliency_avx2(rgb, luma, width, height, scores);
        return;
    }
#endif
    saliency_body(rgb, luma, width, height, scores);
}

/* ---- Sums over the analysis copy, in the order of their plain definitions (see cresample.h) ---- */

void dr_luma_statistics(const float *luma, int32_t width, int32_t height, float low, float high, dr_luma_statistics_t *out) {
    /* Four partial sums, element i into sum i % 4 (the first and last of each row's run
     * counted by position in the run), combined as (s0 + s1) + (s2 + s3): one chain of additions
     * waited on every element. */
    size_t count = (size_t)width * (size_t)height;
    double sum[4] = {0, 0, 0, 0};
    int64_t clipped = 0;
    size_t i = 0;
    for (; i + 4 <= count; i += 4) {
        for (int k = 0; k < 4; k++) {
            float value = luma[i + (size_t)k];
            sum[k] += (double)value;
            clipped += value <= low || value >= high;
        }
    }
    for (; i < count; i++) {
        float value = luma[i];
        sum[i % 4] += (double)value;
        clipped += value <= low || value >= high;
    }
    double laplacian_sum[4] = {0, 0, 0, 0}, laplacian_squares[4] = {0, 0, 0, 0};
    int64_t samples = 0;
    if (width >= 3 && height >= 3) {
        for (int32_t y = 1; y < height - 1; y++) {
            const float *row = luma + (size_t)y * (size_t)width;
            int32_t x = 1;
            for (; x + 4 <= width - 1; x += 4) {
                for (int k = 0; k < 4; k++) {
                    const float *p = row + x + k;
                    double value = (double)(4.0f * p[0] - p[-1] - p[1] - p[-width] - p[width]);
                    laplacian_sum[k] += value;
                    laplacian_squares[k] += value * value;
                }
            }
            for (; x < width - 1; x++) {
                const float *p = row + x;
                double value = (double)(4.0f * p[0] - p[-1] - p[1] - p[-width] - p[width]);
                laplacian_sum[(x - 1) % 4] += value;
                laplacian_squares[(x - 1) % 4] += value * value;
            }
            samples += width - 2;
        }
    }
    out->sum = (sum[0] + sum[1]) + (sum[2] + sum[3]);
    out->clipped = clipped;
    out->laplacian_sum = (laplacian_sum[0] + laplacian_sum[1]) + (laplacian_sum[2] + laplacian_sum[3]);
    out->laplacian_squares = (laplacian_squares[0] + laplacian_squares[1]) + (laplacian_squares[2] + laplacian_squares[3]);
    out->samples = samples;
}

void dr_summed_area(const float *scores, int32_t width, int32_t height, double *table) {
    /* Each entry is the entry above plus its row's running sum, as a plain loop makes it; the
     * running sums of four rows are made side by side (each still in order), since one row's
     * chain of additions waited on every element. */
    size_t stride = (size_t)width + 1;
    for (size_t i = 0; i < stride; i++) table[i] = 0;
    int32_t y = 0;
    for (; y + 4 <= height; y += 4) {
        double running[4] = {0, 0, 0, 0};
        for (int k = 0; k < 4; k++) table[(size_t)(y + k + 1) * stride] = 0;
        for (int32_t x = 0; x < width; x++) {
            for (int k = 0; k < 4; k++) {
                running[k] += (double)scores[(size_t)(y + k) * (size_t)width + (size_t)x];
                table[(size_t)(y + k + 1) * stride + (size_t)x + 1] = running[k];
            }
        }
        for (int k = 0; k < 4; k++) {
            const double *above = table + (size_t)(y + k) * stride;
            double *here = table + (size_t)(y + k + 1) * stride;
            for (int32_t x = 1; x <= width; x++) here[x] = above[x] + here[x];
        }
    }
    for (; y < height; y++) {
        const float *row = scores + (size_t)y * (size_t)width;
        const double *above = table + (size_t)y * stride;
        double *here = table + (size_t)(y + 1) * stride;
        here[0] = 0;
        double row_sum = 0;
        for (int32_t x = 0; x < width; x++) {
            row_sum += (double)row[x];
            here[x + 1] = above[x + 1] + row_sum;
        }
    }
}
