/* The box reduction and the transpose of 8-bit RGB rasters, each with an AVX2 build chosen at run
 * time by dr_resample_uses_avx2() (so that the tests' baseline switch reaches them too) and a
 * portable one. Both builds give the same bytes. */
#include "resample_internal.h"

#include <string.h>

#if DR_RESAMPLE_X86
#include <immintrin.h>
#endif

#define DR_INLINE static inline __attribute__((always_inline))

/* ---- Box reduction ---- */

/* Any factor: the general reduction. */
DR_INLINE void box_reduce_body(const uint8_t *source, int32_t width, int32_t height, int32_t factor, uint8_t *target,
                               uint32_t *sums) {
    int32_t out_width = width / factor > 0 ? width / factor : 1, out_height = height / factor > 0 ? height / factor : 1;
    int32_t block_width = factor < width ? factor : width, block_height = factor < height ? factor : height;
    size_t used = (size_t)out_width * (size_t)block_width * 3;
    uint32_t area = (uint32_t)block_width * (uint32_t)block_height;
    /* Dividing by the area is a multiply by its reciprocal in 32.32 fixed point, rounded up: exact
     * for every sum up to 256 × area while the area is under 4096 (checked exhaustively), and
     * three hardware divisions a pixel were most of the reduction's time. */
    uint64_t reciprocal = area < 4096 ? ((UINT64_C(1) << 32) + area - 1) / area : 0;
#define DR_BLOCK_MEAN(SUM) \
    (uint8_t)(reciprocal ? (uint32_t)((((uint64_t)(SUM) + area / 2) * reciprocal) >> 32) : ((SUM) + area / 2) / area)
    for (int32_t oy = 0; oy < out_height; oy++) {
        /* The block's rows summed column by column (a straight loop the compiler vectorises), then
         * each block's columns. */
        memset(sums, 0, used * sizeof *sums);
        for (int32_t r = 0; r < block_height; r++) {
            const uint8_t *row = source + ((size_t)oy * (size_t)factor + (size_t)r) * (size_t)width * 3;
            for (size_t i = 0; i < used; i++) sums[i] += row[i];
        }
        uint8_t *out = target + (size_t)oy * (size_t)out_width * 3;
        for (int32_t ox = 0; ox < out_width; ox++) {
            uint32_t red = 0, green = 0, blue = 0;
            const uint32_t *p = sums + (size_t)ox * (size_t)block_width * 3;
            for (int32_t x = 0; x < block_width; x++) {
                red += p[x * 3];
                green += p[x * 3 + 1];
                blue += p[x * 3 + 2];
            }
            out[ox * 3] = DR_BLOCK_MEAN(red);
            out[ox * 3 + 1] = DR_BLOCK_MEAN(green);
            out[ox * 3 + 2] = DR_BLOCK_MEAN(blue);
        }
    }
#undef DR_BLOCK_MEAN
}

/* Factor 2 over output pixels [from, to) of one output row, whose source rows are `top` and
 * `bottom`: each byte the rounded mean (a + b + c + d + 2) / 4 of its channel's four samples, what
 * the general reduction gives for an area of 4 (its reciprocal 2^30 makes it (sum + 2) >> 2). */
DR_INLINE void box_reduce2_span(const uint8_t *top, const uint8_t *bottom, int32_t from, int32_t to, uint8_t *out) {
    for (int32_t ox = from; ox < to; ox++) {
        const uint8_t *a = top + (size_t)ox * 6, *b = bottom + (size_t)ox * 6;
        for (int c = 0; c < 3; c++) {
            uint32_t sum = (uint32_t)a[c] + a[c + 3] + b[c] + b[c + 3];
            out[(size_t)ox * 3 + (size_t)c] = (uint8_t)((sum + 2) >> 2);
        }
    }
}

/* Factor 2 on a picture at least 2 by 2, portable. Rows are `width` * 3 bytes apart (the caller
 * may start `source` inside a wider picture's first row: only out_width * 2 pixels of a row are
 * read). */
static void box_reduce2_generic(const uint8_t *source, int32_t width, int32_t height, uint8_t *target) {
    size_t stride = (size_t)width * 3;
    int32_t out_width = width / 2, out_height = height / 2;
    for (int32_t oy = 0; oy < out_height; oy++) {
        const uint8_t *top = source + (size_t)oy * 2 * stride;
        box_reduce2_span(top, top + stride, 0, out_width, target + (size_t)oy * (size_t)out_width * 3);
    }
}

#if DR_RESAMPLE_X86
#define DR_AVX2 __attribute__((target("avx2")))

/* Factor 2 on a picture at least 2 by 2, in AVX2, with the same bytes as box_reduce2_generic: 8
 * output pixels (24 bytes) from 16 source pixels (48 bytes) of each of the two source rows.
 *
 * The 48 bytes are four groups of 4 source pixels (12 bytes, 2 output pixels), each loaded as a
 * 16-byte window into one 128-bit lane. A byte shuffle puts the two samples each output byte sums
 * side by side (red of pixels 0 and 1, green of 0 and 1, ...; six pairs, then zeros) and
 * `vpmaddubsw` by ones adds each pair into a 16-bit lane. The two rows' sums are added, rounded
 * ((sum + 2) >> 2), packed to bytes, and the two lanes' 12 bytes each moved together for one
 * 24-byte store. The window of the last group starts 4 bytes early (its shuffle 4 bytes on), so
 * that no read passes the 48 bytes: a mirrored reduction's last row ends exactly there. */
DR_AVX2 static void box_reduce2_avx2(const uint8_t *source, int32_t width, int32_t height, uint8_t *target) {
    size_t stride = (size_t)width * 3;
    int32_t out_width = width / 2, out_height = height / 2;
    /* ta and ba (top and bottom row) hold groups 0 (low lane) and 2 (high lane), tb and bb groups
     * 1 and 3, so that the pack's order (a's low lane, b's low lane | a's high, b's high) is
     * groups 0, 1 | 2, 3. */
    const __m256i pairs = _mm256_setr_epi8(0, 3, 1, 4, 2, 5, 6, 9, 7, 10, 8, 11, -1, -1, -1, -1, 0, 3, 1, 4, 2, 5, 6,
                                           9, 7, 10, 8, 11, -1, -1, -1, -1);
    const __m256i pairs_late = _mm256_setr_epi8(0, 3, 1, 4, 2, 5, 6, 9, 7, 10, 8, 11, -1, -1, -1, -1, 4, 7, 5, 8, 6,
                                                9, 10, 13, 11, 14, 12, 15, -1, -1, -1, -1);
    /* After the pack each lane holds 6 + 2 unused + 6 + 2 unused bytes: the 12 moved to its
     * start, then the lanes' first three words joined. */
    const __m256i gather = _mm256_setr_epi8(0, 1, 2, 3, 4, 5, 8, 9, 10, 11, 12, 13, -1, -1, -1, -1, 0, 1, 2, 3, 4, 5,
                                            8, 9, 10, 11, 12, 13, -1, -1, -1, -1);
    const __m256i join = _mm256_setr_epi32(0, 1, 2, 4, 5, 6, 7, 7);
    const __m256i ones = _mm256_set1_epi8(1);
    const __m256i two = _mm256_set1_epi16(2);
    int32_t vector_end = out_width & ~7;
    for (int32_t oy = 0; oy < out_height; oy++) {
        const uint8_t *top = source + (size_t)oy * 2 * stride, *bottom = top + stride;
        uint8_t *out = target + (size_t)oy * (size_t)out_width * 3;
        for (int32_t ox = 0; ox < vector_end; ox += 8) {
            const uint8_t *t = top + (size_t)ox * 6, *b = bottom + (size_t)ox * 6;
            __m256i ta = _mm256_loadu2_m128i((const __m128i *)(t + 24), (const __m128i *)t);
            __m256i tb = _mm256_loadu2_m128i((const __m128i *)(t + 32), (const __m128i *)(t + 12));
            __m256i ba = _mm256_loadu2_m128i((const __m128i *)(b + 24), (const __m128i *)b);
            __m256i bb = _mm256_loadu2_m128i((const __m128i *)(b + 32), (const __m128i *)(b + 12));
            __m256i sa = _mm256_add_epi16(_mm256_maddubs_epi16(_mm256_shuffle_epi8(ta, pairs), ones),
                                          _mm256_maddubs_epi16(_mm256_shuffle_epi8(ba, pairs), ones));
            __m256i sb = _mm256_add_epi16(_mm256_maddubs_epi16(_mm256_shuffle_epi8(tb, pairs_late), ones),
                                          _mm256_maddubs_epi16(_mm256_shuffle_epi8(bb, pairs_late), ones));
            sa = _mm256_srli_epi16(_mm256_add_epi16(sa, two), 2);
            sb = _mm256_srli_epi16(_mm256_add_epi16(sb, two), 2);
            __m256i bytes = _mm256_shuffle_epi8(_mm256_packus_epi16(sa, sb), gather);
            bytes = _mm256_permutevar8x32_epi32(bytes, join);
            uint8_t *o = out + (size_t)ox * 3;
            _mm_storeu_si128((__m128i *)o, _mm256_castsi256_si128(bytes));
            _mm_storel_epi64((__m128i *)(o + 16), _mm256_extracti128_si256(bytes, 1));
        }
        box_reduce2_span(top, bottom, vector_end, out_width, out);
    }
}

__attribute__((target("avx2,fma"))) static void box_reduce_avx2(const uint8_t *source, int32_t width, int32_t height,
                                                                 int32_t factor, uint8_t *target, uint32_t *sums) {
    box_reduce_body(source, width, height, factor, target, sums);
}
#endif

static void box_reduce_generic(const uint8_t *source, int32_t width, int32_t height, int32_t factor, uint8_t *target,
                               uint32_t *sums) {
    box_reduce_body(source, width, height, factor, target, sums);
}

void dr_box_reduce(const uint8_t *source, int32_t width, int32_t height, int32_t factor, uint8_t *target,
                   uint32_t *sums) {
    /* Factor 2 with both axes at least 2 long (an axis shorter than the factor is one block of
     * its whole length, left to the general code). */
    int halves = factor == 2 && width >= 2 && height >= 2;
#if DR_RESAMPLE_X86
    if (dr_resample_uses_avx2()) {
        if (halves)
            box_reduce2_avx2(source, width, height, target);
        else
            box_reduce_avx2(source, width, height, factor, target, sums);
        return;
    }
#endif
    if (halves)
        box_reduce2_generic(source, width, height, target);
    else
        box_reduce_generic(source, width, height, factor, target, sums);
}

/* ---- Transpose ---- */

/* Target pixels (x, y) for x in [x_from, x_to) and y from y_from to the row's end, from source
 * pixel (y, x), in blocks of 16 by 16 pixels: a block's source rows and target rows stay in the
 * cache while it is copied, where a whole column's walk would fetch a new line for every pixel.
 *
 * Each pixel moves as one 4-byte word whose last byte the next pixel of its target row,
 * (x, y + 1), overwrites later in this call (the next y, or the next band of rows). The last
 * pixel of a target row (y = height - 1), whose fourth byte would land on the next row's first
 * pixel, already written, or past the buffer, and whose source, for the source's last pixel,
 * would be read past the buffer, moves as 3 bytes. */
static void transpose_scalar(const uint8_t *source, int32_t width, int32_t height, uint8_t *target, int32_t x_from,
                             int32_t x_to, int32_t y_from) {
    enum { block = 16 };
    size_t source_stride = (size_t)width * 3, target_stride = (size_t)height * 3;
    for (int32_t y0 = y_from; y0 < height; y0 += block) {
        int32_t y1 = y0 + block < height ? y0 + block : height;
        int32_t words_end = y1 < height ? y1 : height - 1;
        for (int32_t x0 = x_from; x0 < x_to; x0 += block) {
            int32_t x1 = x0 + block < x_to ? x0 + block : x_to;
            for (int32_t x = x0; x < x1; x++) {
                const uint8_t *s = source + (size_t)y0 * source_stride + (size_t)x * 3;
                uint8_t *t = target + (size_t)x * target_stride + (size_t)y0 * 3;
                int32_t y = y0;
                for (; y < words_end; y++) {
                    uint32_t word;
                    memcpy(&word, s, 4);
                    memcpy(t, &word, 4);
                    t += 3;
                    s += source_stride;
                }
                for (; y < y1; y++) {
                    memcpy(t, s, 3);
                    t += 3;
                    s += source_stride;
                }
            }
        }
    }
}

#if DR_RESAMPLE_X86
/* One block of 8 by 8 pixels: source rows s + i * source_stride (i < 8), 24 bytes each, into target
 * rows t + j * target_stride (j < 8), 24 bytes each; nothing else is read or written.
 *
 * Each source row's pixels 0-3 and 4-7 are loaded as 16-byte windows (at bytes 0 and 8, so that
 * nothing past the row's 24 bytes is read) and spread to one pixel per 32-bit lane by a byte
 * shuffle, rows i and i + 4 side by side in the two 128-bit lanes. A 4 by 4 transpose of 32-bit
 * lanes within each 128-bit lane (unpack of 32 then of 64 bits) then gives, for source pixel j, a
 * vector of rows 0-3 (low lane) and 4-7 (high lane): target row j. A byte shuffle drops each
 * pixel's fourth byte, a word permute joins the lanes' 12 bytes, and the row is stored as 16 + 8
 * bytes. */
DR_AVX2 DR_INLINE void transpose8_avx2(const uint8_t *s, size_t source_stride, uint8_t *t, size_t target_stride) {
    const __m256i spread_low =
        _mm256_setr_epi8(0, 1, 2, -1, 3, 4, 5, -1, 6, 7, 8, -1, 9, 10, 11, -1, 0, 1, 2, -1, 3, 4, 5, -1, 6, 7, 8, -1,
                         9, 10, 11, -1);
    const __m256i spread_high = _mm256_setr_epi8(4, 5, 6, -1, 7, 8, 9, -1, 10, 11, 12, -1, 13, 14, 15, -1, 4, 5, 6,
                                                 -1, 7, 8, 9, -1, 10, 11, 12, -1, 13, 14, 15, -1);
    const __m256i squeeze = _mm256_setr_epi8(0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, -1, -1, -1, -1, 0, 1, 2, 4, 5, 6,
                                             8, 9, 10, 12, 13, 14, -1, -1, -1, -1);
    const __m256i join = _mm256_setr_epi32(0, 1, 2, 4, 5, 6, 7, 7);
    __m256i low[4], high[4];
    for (int i = 0; i < 4; i++) {
        const uint8_t *row = s + (size_t)i * source_stride, *row4 = s + (size_t)(i + 4) * source_stride;
        low[i] = _mm256_shuffle_epi8(_mm256_loadu2_m128i((const __m128i *)row4, (const __m128i *)row), spread_low);
        high[i] = _mm256_shuffle_epi8(
            _mm256_loadu2_m128i((const __m128i *)(row4 + 8), (const __m128i *)(row + 8)), spread_high);
    }
    __m256i columns[8];
    for (int half = 0; half < 2; half++) {
        __m256i *v = half ? high : low;
        __m256i a = _mm256_unpacklo_epi32(v[0], v[1]), b = _mm256_unpackhi_epi32(v[0], v[1]);
        __m256i c = _mm256_unpacklo_epi32(v[2], v[3]), d = _mm256_unpackhi_epi32(v[2], v[3]);
        columns[half * 4] = _mm256_unpacklo_epi64(a, c);
        columns[half * 4 + 1] = _mm256_unpackhi_epi64(a, c);
        columns[half * 4 + 2] = _mm256_unpacklo_epi64(b, d);
        columns[half * 4 + 3] = _mm256_unpackhi_epi64(b, d);
    }
    for (int j = 0; j < 8; j++) {
        __m256i bytes = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(columns[j], squeeze), join);
        uint8_t *row = t + (size_t)j * target_stride;
        _mm_storeu_si128((__m128i *)row, _mm256_castsi256_si128(bytes));
        _mm_storel_epi64((__m128i *)(row + 16), _mm256_extracti128_si256(bytes, 1));
    }
}

/* The whole 8 by 8 blocks in AVX2, then the bottom rows and right columns left over by the
 * scalar copy. The blocks go in strips of 64 source columns (64 target rows), each from top to
 * bottom, so that the target is written nearly in order and a strip's source lines (192 bytes of
 * each row) are read whole: on a 3264 by 2160 picture this measured 10-20 % faster than bands of
 * rows or square tiles, and hints to prefetch were slower. */
DR_AVX2 static void transpose_avx2(const uint8_t *source, int32_t width, int32_t height, uint8_t *target) {
    enum { strip = 64 };
    size_t source_stride = (size_t)width * 3, target_stride = (size_t)height * 3;
    int32_t width8 = width & ~7, height8 = height & ~7;
    for (int32_t x_strip = 0; x_strip < width8; x_strip += strip) {
        int32_t x_end = x_strip + strip < width8 ? x_strip + strip : width8;
        for (int32_t y0 = 0; y0 < height8; y0 += 8) {
            const uint8_t *s = source + (size_t)y0 * source_stride;
            uint8_t *t = target + (size_t)y0 * 3;
            for (int32_t x0 = x_strip; x0 < x_end; x0 += 8)
                transpose8_avx2(s + (size_t)x0 * 3, source_stride, t + (size_t)x0 * target_stride, target_stride);
        }
    }
    transpose_scalar(source, width, height, target, 0, width8, height8);
    transpose_scalar(source, width, height, target, width8, width, 0);
}
#endif

void dr_transpose_rgb(const uint8_t *source, int32_t width, int32_t height, uint8_t *target) {
#if DR_RESAMPLE_X86
    if (dr_resample_uses_avx2()) {
        transpose_avx2(source, width, height, target);
        return;
    }
#endif
    transpose_scalar(source, width, height, target, 0, width, 0);
}
