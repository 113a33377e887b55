/* The resampler's passes in fixed point, for processors with AVX2: 16-bit samples with six
 * fractional bits (64 is one level) and 16-bit weights with fifteen (32768 is one), multiplied
 * with rounding (`vpmulhrsw`, 16 lanes), so that a vector holds twice the samples of the float
 * passes and a byte needs no conversion to float.
 *
 * The output is made in strips of 16 rows. The vertical pass sums each strip row's source rows
 * (two output rows per pass over the source rows both read) into a row of 16-bit samples; the
 * strip is then transposed, 16 by 16, so that each source sample's 16 rows are one vector; the
 * horizontal pass then reads, for every tap, one vector per channel and multiplies it by the
 * tap's weight broadcast: 16 output rows at once, no sum gathered from lanes. Sixteen output
 * pixels' sums are transposed back and written as bytes, clamped to 0...255 by the pack.
 *
 * An axis whose weights are all under one (the usual case) has them with 15 fractional bits; one
 * with a weight of one or more (an edge of an enlarged picture, where the cut filter's weights are
 * renormalised to about 1.2) with 14, its horizontal sums then with five fractional bits; an axis
 * with a weight beyond ±2 (only a degenerate window) is left to the float passes.
 *
 * Where the processor has AVX-512 VNNI, the vertical pass adds two taps at a time into exact
 * 32-bit sums instead (`vertical2_vnni`), rounded to 1/64 of a level once. Where it has AVX-512
 * VBMI, the output can be written transposed (`horizontal16_transposed`): a strip's sixteen sums
 * of one output pixel are then sixteen pixels of one target row, so a picture stored turned a
 * quarter is resampled upright from its stored rows, with no transposed copy of it.
 *
 * Error against exact arithmetic: each product is rounded to 1/64 of a level (1/32 in a
 * horizontal pass with 14-bit weights), so a sum of n taps is within n/128 (n/64) of a level
 * before the final rounding: within a level of the float passes, which the tests check.
 * Headroom: a sample can reach 255 × 64 × 1.35 ≈ 22,000 in either pass (the largest sum of
 * |weights| a clipped Lanczos-3 window has), within int16. */
#include "resample_internal.h"

/* One axis's weights as 16-bit integers with `bits` fractional bits, each output's summing to
 * one exactly: 15 bits (32768 is one) when every weight is under one, 14 when some weight is
 * not (at a picture's edge, where the filter is cut and its weights renormalised, one can
 * reach about 1.2). Returns the bits, or 0 when a weight is beyond ±2 (a degenerate window),
 * which the fixed-point passes cannot hold. */
int dr_resample_quantise(const dr_resample_axis *axis, int16_t *out) {
    size_t count = (size_t)axis->output_size * (size_t)axis->taps;
    float largest = 0;
    for (size_t i = 0; i < count; i++) {
        float magnitude = axis->weights[i] < 0 ? -axis->weights[i] : axis->weights[i];
        if (magnitude > largest) largest = magnitude;
    }
    if (largest >= 1.99f) return 0;
    int bits = largest < 0.999f ? 15 : 14;
    float one = (float)(1 << bits);
    for (int32_t i = 0; i < axis->output_size; i++) {
        const float *w = axis->weights + (size_t)i * (size_t)axis->taps;
        int16_t *q = out + (size_t)i * (size_t)axis->taps;
        int32_t sum = 0, top = 0;
        for (int32_t k = 0; k < axis->taps; k++) {
            float v = w[k] * one;
            q[k] = (int16_t)(int32_t)(v < 0 ? v - 0.5f : v + 0.5f);
            sum += q[k];
            if (q[k] > q[top]) top = k;
        }
        int32_t fixed = q[top] + ((1 << bits) - sum);
        q[top] = (int16_t)(fixed > 32767 ? 32767 : fixed);
    }
    return bits;
}

#if DR_RESAMPLE_X86
#include <immintrin.h>
#include <string.h>

#define DR_INLINE static inline __attribute__((always_inline))
#define DR_AVX2 __attribute__((target("avx2")))

enum { STRIP16 = 16, BLOCK16 = 16 };

/* The rounding multiply of _mm256_mulhrs_epi16, for the few samples past the last whole vector. */
DR_INLINE int16_t mulhrs(int16_t x, int16_t w) { return (int16_t)(((int32_t)x * w + 16384) >> 15); }

/* Two output rows' vertical sums (Q6: 64 is one level) over `count` source rows, each row's
 * bytes widened and scaled once for both. */
DR_AVX2 static void vertical2(const uint8_t *const *rows, const int16_t *wa, const int16_t *wb, int32_t count,
                              int32_t samples, int32_t shift, int16_t *ta, int16_t *tb) {
    /* Bytes shifted so that the products come out with six fractional bits (the weights have
     * `21 - shift` of them). */
    const __m128i by = _mm_cvtsi32_si128(shift);
    int32_t i = 0;
    for (; i + 64 <= samples; i += 64) {
        __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0, b0 = a0, b1 = a0, b2 = a0, b3 = a0;
        for (int32_t k = 0; k < count; k++) {
            const uint8_t *r = rows[k] + i;
            __m256i u = _mm256_set1_epi16(wa[k]), v = _mm256_set1_epi16(wb[k]);
            __m256i x0 = _mm256_sll_epi16(_mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)r)), by);
            __m256i x1 = _mm256_sll_epi16(_mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(r + 16))), by);
            __m256i x2 = _mm256_sll_epi16(_mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(r + 32))), by);
            __m256i x3 = _mm256_sll_epi16(_mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(r + 48))), by);
            a0 = _mm256_add_epi16(a0, _mm256_mulhrs_epi16(x0, u));
            a1 = _mm256_add_epi16(a1, _mm256_mulhrs_epi16(x1, u));
            a2 = _mm256_add_epi16(a2, _mm256_mulhrs_epi16(x2, u));
            a3 = _mm256_add_epi16(a3, _mm256_mulhrs_epi16(x3, u));
            b0 = _mm256_add_epi16(b0, _mm256_mulhrs_epi16(x0, v));
            b1 = _mm256_add_epi16(b1, _mm256_mulhrs_epi16(x1, v));
            b2 = _mm256_add_epi16(b2, _mm256_mulhrs_epi16(x2, v));
            b3 = _mm256_add_epi16(b3, _mm256_mulhrs_epi16(x3, v));
        }
        _mm256_storeu_si256((__m256i *)(ta + i), a0);
        _mm256_storeu_si256((__m256i *)(ta + i + 16), a1);
        _mm256_storeu_si256((__m256i *)(ta + i + 32), a2);
        _mm256_storeu_si256((__m256i *)(ta + i + 48), a3);
        _mm256_storeu_si256((__m256i *)(tb + i), b0);
        _mm256_storeu_si256((__m256i *)(tb + i + 16), b1);
        _mm256_storeu_si256((__m256i *)(tb + i + 32), b2);
        _mm256_storeu_si256((__m256i *)(tb + i + 48), b3);
    }
    for (; i + 16 <= samples; i += 16) {
        __m256i a = _mm256_setzero_si256(), b = a;
        for (int32_t k = 0; k < count; k++) {
            __m256i x = _mm256_sll_epi16(_mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(rows[k] + i))), by);
            a = _mm256_add_epi16(a, _mm256_mulhrs_epi16(x, _mm256_set1_epi16(wa[k])));
            b = _mm256_add_epi16(b, _mm256_mulhrs_epi16(x, _mm256_set1_epi16(wb[k])));
        }
        _mm256_storeu_si256((__m256i *)(ta + i), a);
        _mm256_storeu_si256((__m256i *)(tb + i), b);
    }
    for (; i < samples; i++) {
        int16_t a = 0, b = 0;
        for (int32_t k = 0; k < count; k++) {
            int16_t x = (int16_t)(rows[k][i] << shift);
            a = (int16_t)(a + mulhrs(x, wa[k]));
            b = (int16_t)(b + mulhrs(x, wb[k]));
        }
        ta[i] = a;
        tb[i] = b;
    }
}

#define DR_VNNI __attribute__((target("avx2,avx512f,avx512vl,avx512bw,avx512vnni")))

/* Four sums, each given its vector of sample pairs times the weight pair `w`. */
DR_VNNI DR_INLINE void dot4(__m256i *s0, __m256i *s1, __m256i *s2, __m256i *s3, __m256i x0, __m256i x1, __m256i x2,
                            __m256i x3, int32_t w) {
    __m256i u = _mm256_set1_epi32(w);
    *s0 = _mm256_dpwssd_epi32(*s0, x0, u);
    *s1 = _mm256_dpwssd_epi32(*s1, x1, u);
    *s2 = _mm256_dpwssd_epi32(*s2, x2, u);
    *s3 = _mm256_dpwssd_epi32(*s3, x3, u);
}

/* `vertical2` on AVX-512 VNNI (256-bit vectors): the samples of two source rows interleaved as
 * 16-bit pairs, so that one `vpdpwssd` adds two taps' exact products into 32-bit sums, rounded to
 * six fractional bits once at the end (`bits`: the weights' fractional bits). Within a level of
 * `vertical2`, whose products are each rounded; fewer instructions per tap (4 % less time for the
 * render's five typical resizes in a C harness). Each of the two outputs makes products only over
 * the pairs where it has a weight: their merged rows carry zeros at either end (the same sums, 4 %
 * less time again in that harness). At most 128 source rows. */
DR_VNNI static void vertical2_vnni(const uint8_t *const *rows, const int16_t *wa, const int16_t *wb, int32_t count,
                                   int32_t samples, int32_t bits, int16_t *ta, int16_t *tb) {
    int32_t down = bits - 6;
    int32_t pairs = (count + 1) / 2;
    int32_t pa[64], pb[64];
    const uint8_t *first[64], *second[64];
    for (int32_t p = 0; p < pairs; p++) {
        int32_t k = 2 * p;
        int16_t a0 = wa[k], b0 = wb[k], a1 = k + 1 < count ? wa[k + 1] : 0, b1 = k + 1 < count ? wb[k + 1] : 0;
        pa[p] = (int32_t)(uint16_t)a0 | (int32_t)((uint32_t)(uint16_t)a1 << 16);
        pb[p] = (int32_t)(uint16_t)b0 | (int32_t)((uint32_t)(uint16_t)b1 << 16);
        first[p] = rows[k];
        second[p] = k + 1 < count ? rows[k + 1] : rows[k];
    }
    /* Each output's pairs with a weight: the merged rows of two outputs a step apart carry
     * zeros at either end, whose products need not be made. */
    int32_t alo = 0, ahi = pairs, blo = 0, bhi = pairs;
    while (alo < ahi && pa[alo] == 0) alo++;
    while (ahi > alo && pa[ahi - 1] == 0) ahi--;
    while (blo < bhi && pb[blo] == 0) blo++;
    while (bhi > blo && pb[bhi - 1] == 0) bhi--;
    int32_t lo = alo < blo ? alo : blo, hi = ahi > bhi ? ahi : bhi;
    const __m256i half = _mm256_set1_epi32(1 << (down - 1));
    const __m128i by = _mm_cvtsi32_si128(down);
    int32_t i = 0;
    for (; i + 32 <= samples; i += 32) {
        /* The sums start at the rounding half, so that the shift alone rounds them. */
        __m256i a0 = half, a1 = a0, a2 = a0, a3 = a0, b0 = a0, b1 = a0, b2 = a0, b3 = a0;
        for (int32_t p = lo; p < hi; p++) {
            const uint8_t *r0 = first[p] + i, *r1 = second[p] + i;
            __m256i x0 = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)r0));
            __m256i y0 = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)r1));
            __m256i x1 = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(r0 + 16)));
            __m256i y1 = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(r1 + 16)));
            __m256i l0 = _mm256_unpacklo_epi16(x0, y0), h0 = _mm256_unpackhi_epi16(x0, y0);
            __m256i l1 = _mm256_unpacklo_epi16(x1, y1), h1 = _mm256_unpackhi_epi16(x1, y1);
            if (p >= alo && p < ahi) dot4(&a0, &a1, &a2, &a3, l0, h0, l1, h1, pa[p]);
            if (p >= blo && p < bhi) dot4(&b0, &b1, &b2, &b3, l0, h0, l1, h1, pb[p]);
        }
#define DR_Q6(X) _mm256_sra_epi32((X), by)
        _mm256_storeu_si256((__m256i *)(ta + i), _mm256_packs_epi32(DR_Q6(a0), DR_Q6(a1)));
        _mm256_storeu_si256((__m256i *)(ta + i + 16), _mm256_packs_epi32(DR_Q6(a2), DR_Q6(a3)));
        _mm256_storeu_si256((__m256i *)(tb + i), _mm256_packs_epi32(DR_Q6(b0), DR_Q6(b1)));
        _mm256_storeu_si256((__m256i *)(tb + i + 16), _mm256_packs_epi32(DR_Q6(b2), DR_Q6(b3)));
#undef DR_Q6
    }
    for (; i < samples; i++) {
        int32_t a = 0, b = 0;
        for (int32_t k = 0; k < count; k++) {
            a += (int32_t)rows[k][i] * wa[k];
            b += (int32_t)rows[k][i] * wb[k];
        }
        a = (a + (1 << (down - 1))) >> down;
        b = (b + (1 << (down - 1))) >> down;
        ta[i] = (int16_t)(a > 32767 ? 32767 : a < -32768 ? -32768 : a);
        tb[i] = (int16_t)(b > 32767 ? 32767 : b < -32768 ? -32768 : b);
    }
}

/* Sixteen vectors of sixteen transposed in place: r[j][i] becomes r[i][j]. */
DR_AVX2 DR_INLINE void transpose16(__m256i r[16]) {
    __m256i a[16], b[16], c[16];
    for (int j = 0; j < 8; j++) {
        a[2 * j] = _mm256_unpacklo_epi16(r[2 * j], r[2 * j + 1]);
        a[2 * j + 1] = _mm256_unpackhi_epi16(r[2 * j], r[2 * j + 1]);
    }
    for (int j = 0; j < 4; j++) {
        b[4 * j] = _mm256_unpacklo_epi32(a[4 * j], a[4 * j + 2]);
        b[4 * j + 1] = _mm256_unpackhi_epi32(a[4 * j], a[4 * j + 2]);
        b[4 * j + 2] = _mm256_unpacklo_epi32(a[4 * j + 1], a[4 * j + 3]);
        b[4 * j + 3] = _mm256_unpackhi_epi32(a[4 * j + 1], a[4 * j + 3]);
    }
    for (int j = 0; j < 2; j++)
        for (int m = 0; m < 4; m++) {
            c[8 * j + 2 * m] = _mm256_unpacklo_epi64(b[8 * j + m], b[8 * j + 4 + m]);
            c[8 * j + 2 * m + 1] = _mm256_unpackhi_epi64(b[8 * j + m], b[8 * j + 4 + m]);
        }
    for (int m = 0; m < 8; m++) {
        r[m] = _mm256_permute2x128_si256(c[m], c[8 + m], 0x20);
        r[m + 8] = _mm256_permute2x128_si256(c[m], c[8 + m], 0x31);
    }
}

/* Two output pixels' horizontal sums over the strip's sixteen rows, three channels each (`s`,
 * with `bits - 9` fractional bits): the columns from `c0` and `c1`, the weights `w0` and `w1`.
 * Two at a time, the six sums, two weights and the products stay in AVX2's sixteen registers
 * (four at a time spilled their sums to the stack on every tap). The sums start at the rounding
 * half, so that the shift alone rounds them. */
DR_AVX2 DR_INLINE void taps2(const __m256i *c0, const __m256i *c1, const int16_t *w0, const int16_t *w1, int32_t taps,
                             __m256i half, __m256i s[6]) {
    for (int j = 0; j < 6; j++) s[j] = half;
    for (int32_t k = 0; k < taps; k++) {
        __m256i u0 = _mm256_set1_epi16(w0[k]), u1 = _mm256_set1_epi16(w1[k]);
        const __m256i *p0 = c0 + 3 * k, *p1 = c1 + 3 * k;
        s[0] = _mm256_add_epi16(s[0], _mm256_mulhrs_epi16(_mm256_load_si256(p0), u0));
        s[1] = _mm256_add_epi16(s[1], _mm256_mulhrs_epi16(_mm256_load_si256(p0 + 1), u0));
        s[2] = _mm256_add_epi16(s[2], _mm256_mulhrs_epi16(_mm256_load_si256(p0 + 2), u0));
        s[3] = _mm256_add_epi16(s[3], _mm256_mulhrs_epi16(_mm256_load_si256(p1), u1));
        s[4] = _mm256_add_epi16(s[4], _mm256_mulhrs_epi16(_mm256_load_si256(p1 + 1), u1));
        s[5] = _mm256_add_epi16(s[5], _mm256_mulhrs_epi16(_mm256_load_si256(p1 + 2), u1));
    }
}

#define DR_VBMI __attribute__((target("avx2,avx512f,avx512vl,avx512bw,avx512vbmi")))

/* `horizontal16` writing its output transposed: output pixel x of the strip's row r goes to
 * row x, column `first_row` + r of `target`, so that the strip's sixteen sums of one output
 * pixel are sixteen consecutive pixels of one target row, interleaved into bytes by one byte
 * permute; no transpose of the sums. */
DR_VBMI static void horizontal16_transposed(const __m256i *columns, int32_t first_column, const int32_t *starts,
                                            const int16_t *weights, int32_t bits, int32_t taps, int32_t width,
                                            int32_t rows, int32_t first_row, uint8_t *target, size_t target_stride) {
    const __m128i fraction = _mm_cvtsi32_si128(bits - 9);
    const __m256i half = _mm256_set1_epi16((int16_t)(1 << (bits - 10)));
    /* After the packs, bytes 0-7 hold R0-7, 8-15 G0-7, 16-23 R8-15, 24-31 G8-15, 32-39 B0-7,
     * 48-55 B8-15: gathered as R0 G0 B0 R1 ... B15. */
    uint8_t order[64];
    for (int i = 0; i < 16; i++) {
        int low = i < 8;
        order[3 * i] = (uint8_t)(low ? i : 16 + i - 8);
        order[3 * i + 1] = (uint8_t)(low ? 8 + i : 24 + i - 8);
        order[3 * i + 2] = (uint8_t)(low ? 32 + i : 48 + i - 8);
    }
    for (int i = 48; i < 64; i++) order[i] = 0;
    const __m512i permute = _mm512_loadu_si512((const void *)order);
    const __mmask64 mask = rows >= 16 ? (__mmask64)0xFFFFFFFFFFFFull : (((__mmask64)1 << (3 * rows)) - 1);
    for (int32_t x = 0; x < width; x += 2) {
        int32_t x1 = x + 1 < width ? x + 1 : x;
        const __m256i *c0 = columns + (size_t)(starts[x] - first_column) * 3;
        const __m256i *c1 = columns + (size_t)(starts[x1] - first_column) * 3;
        __m256i s[6];
        taps2(c0, c1, weights + (size_t)x * (size_t)taps, weights + (size_t)x1 * (size_t)taps, taps, half, s);
        for (int32_t j = 0; j < 2 && x + j < width; j++) {
            __m256i r = _mm256_sra_epi16(s[3 * j], fraction), g = _mm256_sra_epi16(s[3 * j + 1], fraction);
            __m256i b = _mm256_sra_epi16(s[3 * j + 2], fraction);
            __m512i z = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_packus_epi16(r, g)), _mm256_packus_epi16(b, b), 1);
            _mm512_mask_storeu_epi8(target + (size_t)(x + j) * target_stride + (size_t)first_row * 3, mask,
                                    _mm512_permutexvar_epi8(permute, z));
        }
    }
}

/* The horizontal taps over the strip's columns (`columns`: one vector of the sixteen rows per
 * sample), sixteen output pixels at a time, written as bytes to the strip's `rows` rows. */
DR_AVX2 static void horizontal16(const __m256i *columns, int32_t first_column, const int32_t *starts,
                                 const int16_t *weights, int32_t bits, int32_t taps, int32_t width, int32_t rows,
                                 uint8_t *target, size_t target_stride) {
    /* The sums have `bits - 9` fractional bits (six with 15-bit weights, five with 14). */
    const __m128i fraction = _mm_cvtsi32_si128(bits - 9);
    const __m256i half = _mm256_set1_epi16((int16_t)(1 << (bits - 10)));
    for (int32_t ox0 = 0; ox0 < width; ox0 += BLOCK16) {
        int32_t m = width - ox0 < BLOCK16 ? width - ox0 : BLOCK16;
        __m256i out[48];
        for (int32_t q = 0; q < BLOCK16; q += 2) {
            int32_t o[2];
            for (int32_t j = 0; j < 2; j++) o[j] = ox0 + q + j < width ? ox0 + q + j : width - 1;
            const int16_t *w0 = weights + (size_t)o[0] * (size_t)taps, *w1 = weights + (size_t)o[1] * (size_t)taps;
            const __m256i *c0 = columns + (size_t)(starts[o[0]] - first_column) * 3;
            const __m256i *c1 = columns + (size_t)(starts[o[1]] - first_column) * 3;
            __m256i s[6];
            taps2(c0, c1, w0, w1, taps, half, s);
            for (int j = 0; j < 6; j++) out[q * 3 + j] = _mm256_sra_epi16(s[j], fraction);
        }
        transpose16(out);
        transpose16(out + 16);
        transpose16(out + 32);
        /* Row r's 48 values are out[r], out[16 + r], out[32 + r]: packed to bytes (clamped to
         * 0...255), the in-lane order of the pack undone. */
        for (int32_t r = 0; r < rows; r++) {
            __m256i ab = _mm256_permute4x64_epi64(_mm256_packus_epi16(out[r], out[16 + r]), 0xD8);
            __m128i c = _mm_packus_epi16(_mm256_castsi256_si128(out[32 + r]), _mm256_extracti128_si256(out[32 + r], 1));
            uint8_t *t = target + (size_t)r * target_stride + (size_t)ox0 * 3;
            if (m == BLOCK16) {
                _mm256_storeu_si256((__m256i *)t, ab);
                _mm_storeu_si128((__m128i *)(t + 32), c);
            } else {
                uint8_t bytes[48];
                _mm256_storeu_si256((__m256i *)bytes, ab);
                _mm_storeu_si128((__m128i *)(bytes + 32), c);
                memcpy(t, bytes, (size_t)m * 3);
            }
        }
    }
}

/* The layout of the fixed-point path's scratch, in bytes from a 32-byte aligned start. */
typedef struct {
    size_t rows, merged, hweights, vweights, strip, columns, total, row;
} fixed_layout;

static size_t align32(size_t n) { return (n + 31) / 32 * 32; }

static fixed_layout layout16(const dr_resample_axis *h, const dr_resample_axis *v) {
    dr_span span = dr_columns_read(h);
    size_t samples = (size_t)(span.end - span.first) * 3;
    fixed_layout l;
    l.row = (samples + 15) / 16 * 16;
    size_t at = 0;
    l.rows = at; at = align32(at + (size_t)v->taps * 2 * sizeof(const uint8_t *));
    l.merged = at; at = align32(at + (size_t)v->taps * 4 * sizeof(int16_t));
    l.hweights = at; at = align32(at + (size_t)h->output_size * (size_t)h->taps * sizeof(int16_t));
    l.vweights = at; at = align32(at + (size_t)v->output_size * (size_t)v->taps * sizeof(int16_t));
    l.strip = at; at = align32(at + STRIP16 * l.row * sizeof(int16_t));
    l.columns = at; at = align32(at + l.row * STRIP16 * sizeof(int16_t));
    l.total = at + 32;
    return l;
}

size_t dr_resample_fixed_scratch_bytes(const dr_resample_axis *h, const dr_resample_axis *v) {
    return layout16(h, v).total;
}

DR_AVX2 int dr_resample_fixed_avx2(const uint8_t *source, int32_t source_width, int32_t source_height,
                                   size_t source_stride, const dr_resample_axis *h, const dr_resample_axis *v,
                                   uint8_t *target, size_t target_stride, void *scratch, size_t scratch_bytes,
                                   int transpose) {
    fixed_layout l = layout16(h, v);
    if (scratch_bytes < l.total || h->taps < 2 || v->taps < 1) return -1;
    uint8_t *base = (uint8_t *)(((uintptr_t)scratch + 31) & ~(uintptr_t)31);
    const uint8_t **rows = (const uint8_t **)(void *)(base + l.rows);
    int16_t *merged = (int16_t *)(void *)(base + l.merged), *second_merged = merged + 2 * v->taps;
    const int16_t *hw = (int16_t *)(void *)(base + l.hweights), *vw = (int16_t *)(void *)(base + l.vweights);
    int16_t *strip = (int16_t *)(void *)(base + l.strip);
    __m256i *columns = (__m256i *)(void *)(base + l.columns);
    /* The caller's fixed-point weights where it kept them, else made here into the scratch. */
    int hbits = h->fixed_weights ? h->fixed_bits : dr_resample_quantise(h, (int16_t *)(void *)(base + l.hweights));
    int vbits = v->fixed_weights ? v->fixed_bits : dr_resample_quantise(v, (int16_t *)(void *)(base + l.vweights));
    if (h->fixed_weights) hw = h->fixed_weights;
    if (v->fixed_weights) vw = v->fixed_weights;
    if (hbits == 0 || vbits == 0) return 1;
    int32_t vshift = 21 - vbits;
    int vnni = dr_resample_uses_vnni();
    dr_span span = dr_columns_read(h);
    int32_t real_columns = span.end > source_width ? source_width - span.first : span.end - span.first;
    int32_t samples = real_columns * 3;
    int32_t taps = v->taps;
    memset(strip, 0, STRIP16 * l.row * sizeof(int16_t));

    for (int32_t oy0 = 0; oy0 < v->output_size; oy0 += STRIP16) {
        int32_t n = v->output_size - oy0 < STRIP16 ? v->output_size - oy0 : STRIP16;
        for (int32_t s = 0; s < n; s += 2) {
            int32_t oy = oy0 + s;
            int32_t count = s + 1 < n ? 2 : 1;
            int16_t *ta = strip + (size_t)s * l.row, *tb = count == 2 ? ta + l.row : ta;
            int32_t start_a = v->starts[oy], start_b = count == 2 ? v->starts[oy + 1] : start_a;
            const int16_t *wa = vw + (size_t)oy * (size_t)taps, *wb = count == 2 ? wa + taps : wa;
            int32_t first = start_a < start_b ? start_a : start_b;
            int32_t span_rows = (start_a < start_b ? start_b : start_a) - first + taps;
            if (span_rows <= taps + taps / 2) {
                /* The two rows' source rows overlap by at least half: one pass over both. */
                int32_t shift_a = start_a - first, shift_b = start_b - first;
                for (int32_t k = 0; k < span_rows; k++) {
                    /* A read one past the last row meets a zero weight; it repeats the last row. */
                    int32_t y = first + k < source_height ? first + k : source_height - 1;
                    rows[k] = source + (size_t)y * source_stride + (size_t)span.first * 3;
                    merged[k] = k >= shift_a && k - shift_a < taps ? wa[k - shift_a] : 0;
                    second_merged[k] = k >= shift_b && k - shift_b < taps ? wb[k - shift_b] : 0;
                }
                if (vnni && span_rows <= 128)
                    vertical2_vnni(rows, merged, second_merged, span_rows, samples, vbits, ta, tb);
                else
                    vertical2(rows, merged, second_merged, span_rows, samples, vshift, ta, tb);
            } else {
                /* Far apart (a window so narrow that the filter is wider than its step): each alone. */
                for (int32_t r = 0; r < count; r++) {
                    int32_t row_first = r == 0 ? start_a : start_b;
                    const int16_t *w = r == 0 ? wa : wb;
                    for (int32_t k = 0; k < taps; k++) {
                        int32_t y = row_first + k < source_height ? row_first + k : source_height - 1;
                        rows[k] = source + (size_t)y * source_stride + (size_t)span.first * 3;
                    }
                    int16_t *t = r == 0 ? ta : tb;
                    vertical2(rows, w, w, taps, samples, vshift, t, t);
                }
            }
        }
        for (size_t i = 0; i < l.row; i += 16) {
            __m256i r16[16];
            for (int32_t j = 0; j < STRIP16; j++) r16[j] = _mm256_loadu_si256((const __m256i *)(strip + (size_t)j * l.row + i));
            transpose16(r16);
            for (int32_t j = 0; j < 16; j++) _mm256_store_si256(columns + i + (size_t)j, r16[j]);
        }
        if (transpose)
            horizontal16_transposed(columns, span.first, h->starts, hw, hbits, h->taps, h->output_size, n, oy0, target,
                                    target_stride);
        else
            horizontal16(columns, span.first, h->starts, hw, hbits, h->taps, h->output_size, n,
                         target + (size_t)oy0 * target_stride, target_stride);
    }
    return 0;
}

#endif
