/*
 * The encoder's forward DCT and quantisation in AVX2, one call per row of blocks.
 *
 * libjpeg-turbo's forward DCT method runs three SIMD functions per 8x8 block (sample
 * conversion, the islow transform, quantisation), each through a wrapper that reads the
 * library's thread-local SIMD flag, and in a shared library every such read is a call of
 * __tls_get_addr. This build does the same arithmetic in one function for two blocks side by
 * side, in registers throughout:
 * - the samples, less 128, in 16-bit lanes, a row of each block per vector (one block a 128-bit
 *   half), transposed within the halves so that each vector is a column of both;
 * - pass 1 of jfdctint.c's islow transform over the rows, lane by lane (a lane is a row), its
 *   outputs transposed back; pass 2 over the columns the same way; the library's 32-bit products
 *   made by vpmaddwd over pairs of 16-bit values (islow_pass16 says why 16 bits hold every sum);
 * - the quantisation as the library's SIMD quantiser does it (jcdctmgr.c's compute_reciprocal
 *   tables): each magnitude plus its correction, multiplied by the reciprocal and then by the
 *   scale, keeping the high 16 bits each time, the sign put back.
 * Every product and sum is exact, so the coefficients are the library's, bit for bit.
 *
 * dr_jpeg_use_avx2_fdct installs it after jpeg_start_compress, only where the processor has
 * AVX2, the tables are baseline (1...255), and check blocks run through both agree.
 * JPEGForwardDCTTests compare whole encodes with the library's.
 */
/* jpegint.h's encoder internals (the forward DCT's method), before jpeglib.h comes in. */
#define JPEG_INTERNALS
#include "fdct.h"
#include "transforms.h"

#include <string.h>

#include <immintrin.h>

#define DR_AVX2 __attribute__((target("avx2")))
#define DR_INLINE static inline __attribute__((always_inline))

typedef void (*forward_method)(j_compress_ptr, jpeg_component_info *, JSAMPARRAY, JBLOCKROW, JDIMENSION, JDIMENSION,
                               JDIMENSION);

/* One quantisation table as the library's SIMD quantiser holds it: a coefficient's magnitude c
 * becomes ((c + correction) × reciprocal >> 16) × scale >> 16, in unsigned 16-bit lanes. */
typedef struct {
    uint16_t correction[DCTSIZE2] __attribute__((aligned(32)));
    uint16_t reciprocal[DCTSIZE2] __attribute__((aligned(32)));
    uint16_t scale[DCTSIZE2] __attribute__((aligned(32)));
} quantiser;

/* What the AVX2 method reads through cinfo->client_data. */
typedef struct {
    uint32_t magic;
    forward_method library;
    quantiser tables[NUM_QUANT_TBLS];
} forward_state;

enum { STATE_MAGIC = 0x46444354u };

/* jcdctmgr.c's compute_reciprocal for a divisor of 8 to 2,040 (a baseline table's value times 8). */
static void reciprocal_of(uint16_t divisor, uint16_t *reciprocal, uint16_t *correction, uint16_t *scale) {
    int r = 16 + (31 - __builtin_clz(divisor));
    uint32_t quotient = (uint32_t)((1u << r) / divisor), remainder = (uint32_t)((1u << r) % divisor);
    uint16_t c = (uint16_t)(divisor / 2);
    if (remainder == 0) {
        /* A power of two: the quotient would need a seventeenth bit. */
        quotient >>= 1;
        r--;
    } else if (remainder <= divisor / 2u) {
        c++;
    } else {
        quotient++;
    }
    *reciprocal = (uint16_t)quotient;
    *correction = c;
    *scale = (uint16_t)(1u << (32 - r));
}

/* The state for `cinfo` (made and kept in client_data the first time), or NULL when the AVX2
 * build cannot serve it. */
static forward_state *state_for(j_compress_ptr cinfo) {
    if (dr_jpeg_library_transforms_only() || !dr_jpeg_processor_has_avx2()) return NULL;
    forward_state *state = (forward_state *)cinfo->client_data;
    if (state != NULL) return state->magic == STATE_MAGIC ? state : NULL;
    if (cinfo->dct_method != JDCT_ISLOW || cinfo->data_precision != 8 || cinfo->fdct == NULL) return NULL;
    for (int ci = 0; ci < cinfo->num_components; ci++) {
        const int t = cinfo->comp_info[ci].quant_tbl_no;
        if (t < 0 || t >= NUM_QUANT_TBLS || cinfo->quant_tbl_ptrs[t] == NULL) return NULL;
        for (int i = 0; i < DCTSIZE2; i++) {
            const UINT16 q = cinfo->quant_tbl_ptrs[t]->quantval[i];
            if (q < 1 || q > 255) return NULL;
        }
    }
    state = (forward_state *)(*cinfo->mem->alloc_small)((j_common_ptr)cinfo, JPOOL_IMAGE, sizeof(forward_state) + 32);
    state = (forward_state *)(((uintptr_t)state + 31) & ~(uintptr_t)31);
    memset(state, 0, sizeof(*state));
    state->magic = STATE_MAGIC;
    state->library = cinfo->fdct->forward_DCT;
    for (int t = 0; t < NUM_QUANT_TBLS; t++) {
        if (cinfo->quant_tbl_ptrs[t] == NULL) continue;
        quantiser *q = &state->tables[t];
        for (int i = 0; i < DCTSIZE2; i++) {
            const UINT16 value = cinfo->quant_tbl_ptrs[t]->quantval[i];
            if (value < 1 || value > 255) continue; /* a table no component uses */
            reciprocal_of((uint16_t)(value << 3), &q->reciprocal[i], &q->correction[i], &q->scale[i]);
        }
    }
    cinfo->client_data = state;
    return state;
}

/* Eight vectors of eight 16-bit values transposed within each 128-bit half: for two blocks at
 * once (one a half), r[i] element j becomes r[j] element i. */
DR_AVX2 DR_INLINE void transpose8x8(__m256i r[8]) {
    const __m256i t0 = _mm256_unpacklo_epi16(r[0], r[1]), t1 = _mm256_unpackhi_epi16(r[0], r[1]);
    const __m256i t2 = _mm256_unpacklo_epi16(r[2], r[3]), t3 = _mm256_unpackhi_epi16(r[2], r[3]);
    const __m256i t4 = _mm256_unpacklo_epi16(r[4], r[5]), t5 = _mm256_unpackhi_epi16(r[4], r[5]);
    const __m256i t6 = _mm256_unpacklo_epi16(r[6], r[7]), t7 = _mm256_unpackhi_epi16(r[6], r[7]);
    const __m256i u0 = _mm256_unpacklo_epi32(t0, t2), u1 = _mm256_unpackhi_epi32(t0, t2);
    const __m256i u2 = _mm256_unpacklo_epi32(t1, t3), u3 = _mm256_unpackhi_epi32(t1, t3);
    const __m256i u4 = _mm256_unpacklo_epi32(t4, t6), u5 = _mm256_unpackhi_epi32(t4, t6);
    const __m256i u6 = _mm256_unpacklo_epi32(t5, t7), u7 = _mm256_unpackhi_epi32(t5, t7);
    r[0] = _mm256_unpacklo_epi64(u0, u4);
    r[1] = _mm256_unpackhi_epi64(u0, u4);
    r[2] = _mm256_unpacklo_epi64(u1, u5);
    r[3] = _mm256_unpackhi_epi64(u1, u5);
    r[4] = _mm256_unpacklo_epi64(u2, u6);
    r[5] = _mm256_unpackhi_epi64(u2, u6);
    r[6] = _mm256_unpacklo_epi64(u3, u7);
    r[7] = _mm256_unpackhi_epi64(u3, u7);
}

/* Two 16-bit weights as one 32-bit lane, for vpmaddwd over pairs (x, y): x * a + y * b. */
#define PAIR(a, b) _mm256_set1_epi32((int32_t)(((uint32_t)(uint16_t)(int16_t)(b) << 16) | (uint16_t)(int16_t)(a)))

/* x * a + y * b in 32 bits for the low four and the high four values of each half. */
typedef struct { __m256i lo, hi; } wide;

DR_AVX2 DR_INLINE wide dot(__m256i x, __m256i y, __m256i weights) {
    wide w = {_mm256_madd_epi16(_mm256_unpacklo_epi16(x, y), weights), _mm256_madd_epi16(_mm256_unpackhi_epi16(x, y), weights)};
    return w;
}

DR_AVX2 DR_INLINE wide add_wide(wide a, wide b) {
    wide w = {_mm256_add_epi32(a.lo, b.lo), _mm256_add_epi32(a.hi, b.hi)};
    return w;
}

/* libjpeg's DESCALE (x / 2^n, rounded half up) of both halves, back in 16 bits. */
DR_AVX2 DR_INLINE __m256i descale16(wide x, int n) {
    const __m256i half = _mm256_set1_epi32(1 << (n - 1));
    return _mm256_packs_epi32(_mm256_srai_epi32(_mm256_add_epi32(x.lo, half), n), _mm256_srai_epi32(_mm256_add_epi32(x.hi, half), n));
}

/* One pass of jfdctint.c's islow transform over eight vectors, lane by lane, in 16 bits: x[k]
 * holds input k of each lane's eight, out[k] gets output k. Pass 1 scales its outputs up by
 * PASS1_BITS (2), pass 2 takes them back out. Each product the library makes in 32 bits is made
 * by vpmaddwd over a pair of 16-bit values, its shared products distributed over the pair's
 * weights (the library's FIX values, CONST_BITS 13): z1 = (tmp12 + tmp13) * FIX(0.541196100)
 * joins out2's and out6's own products, z5 joins z3's and z4's, and z1 and z2 the odd outputs'.
 * Integer products distribute exactly, so every output is the library's.
 *
 * Why 16 bits hold it: a sample less 128 is -128...127, and each of pass 1's outputs is linear
 * in its row's samples before its rounding, so its extremes lie at the 256 corners of that range:
 * found there, they are -4,096 and 4,080 (the DC, 8 x 128 x 4, the lowest). Pass 2's sums of
 * eight of them are then within -32,768...32,640, and every vpmaddwd input is a sum of at most
 * four (within +-16,384). */
DR_AVX2 DR_INLINE void islow_pass16(const __m256i x[8], __m256i out[8], int second) {
    const int n = second ? 13 + 2 : 13 - 2;
    const __m256i tmp0 = _mm256_add_epi16(x[0], x[7]), tmp7 = _mm256_sub_epi16(x[0], x[7]);
    const __m256i tmp1 = _mm256_add_epi16(x[1], x[6]), tmp6 = _mm256_sub_epi16(x[1], x[6]);
    const __m256i tmp2 = _mm256_add_epi16(x[2], x[5]), tmp5 = _mm256_sub_epi16(x[2], x[5]);
    const __m256i tmp3 = _mm256_add_epi16(x[3], x[4]), tmp4 = _mm256_sub_epi16(x[3], x[4]);

    /* The even part. */
    const __m256i tmp10 = _mm256_add_epi16(tmp0, tmp3), tmp13 = _mm256_sub_epi16(tmp0, tmp3);
    const __m256i tmp11 = _mm256_add_epi16(tmp1, tmp2), tmp12 = _mm256_sub_epi16(tmp1, tmp2);
    if (second) {
        const __m256i two = _mm256_set1_epi16(2);
        out[0] = _mm256_srai_epi16(_mm256_add_epi16(_mm256_add_epi16(tmp10, tmp11), two), 2);
        out[4] = _mm256_srai_epi16(_mm256_add_epi16(_mm256_sub_epi16(tmp10, tmp11), two), 2);
    } else {
        out[0] = _mm256_slli_epi16(_mm256_add_epi16(tmp10, tmp11), 2);
        out[4] = _mm256_slli_epi16(_mm256_sub_epi16(tmp10, tmp11), 2);
    }
    out[2] = descale16(dot(tmp13, tmp12, PAIR(4433 + 6270, 4433)), n);
    out[6] = descale16(dot(tmp13, tmp12, PAIR(4433, 4433 - 15137)), n);

    /* The odd part: z3 and z4 over (tmp4 + tmp6, tmp5 + tmp7), z5 spread over both. */
    const __m256i a = _mm256_add_epi16(tmp4, tmp6), b = _mm256_add_epi16(tmp5, tmp7);
    const wide z3 = dot(a, b, PAIR(9633 - 16069, 9633));
    const wide z4 = dot(a, b, PAIR(9633, 9633 - 3196));
    out[7] = descale16(add_wide(dot(tmp4, tmp7, PAIR(2446 - 7373, -7373)), z3), n);
    out[1] = descale16(add_wide(dot(tmp4, tmp7, PAIR(-7373, 12299 - 7373)), z4), n);
    out[5] = descale16(add_wide(dot(tmp5, tmp6, PAIR(16819 - 20995, -20995)), z4), n);
    out[3] = descale16(add_wide(dot(tmp5, tmp6, PAIR(-20995, 25172 - 20995)), z3), n);
}

/* Sixteen coefficients (two rows of a block) quantised as the library's SIMD quantiser does. */
DR_AVX2 DR_INLINE void quantise16(__m256i c, const quantiser *q, int at, JCOEFPTR out) {
    __m256i m = _mm256_add_epi16(_mm256_abs_epi16(c), _mm256_load_si256((const __m256i *)(q->correction + at)));
    m = _mm256_mulhi_epu16(m, _mm256_load_si256((const __m256i *)(q->reciprocal + at)));
    m = _mm256_mulhi_epu16(m, _mm256_load_si256((const __m256i *)(q->scale + at)));
    _mm256_storeu_si256((__m256i *)(out + at), _mm256_sign_epi16(m, c));
}

/* The blocks at columns `col` and `col` + 8 of `rows` (eight rows of samples), transformed and
 * quantised into `first` and, unless it is NULL (one block left), `second` (natural order). */
DR_AVX2 DR_INLINE void forward_blocks(JSAMPARRAY rows, JDIMENSION col, const quantiser *q, JCOEFPTR first, JCOEFPTR second) {
    __m256i x[8], y[8];
    const __m256i centre = _mm256_set1_epi16(CENTERJSAMPLE);
    for (int r = 0; r < DCTSIZE; r++) {
        const __m128i bytes = second ? _mm_loadu_si128((const __m128i *)(rows[r] + col)) : _mm_loadl_epi64((const __m128i *)(rows[r] + col));
        x[r] = _mm256_sub_epi16(_mm256_cvtepu8_epi16(bytes), centre);
    }
    transpose8x8(x);       /* x[k]: sample k of each row */
    islow_pass16(x, y, 0); /* y[k]: pass-1 output k of each row */
    transpose8x8(y);       /* y[r]: row r's pass-1 outputs */
    islow_pass16(y, x, 1); /* x[u]: coefficients (u, 0...7) */
    for (int u = 0; u < DCTSIZE; u += 2) {
        quantise16(_mm256_permute2x128_si256(x[u], x[u + 1], 0x20), q, 8 * u, first);
        if (second) quantise16(_mm256_permute2x128_si256(x[u], x[u + 1], 0x31), q, 8 * u, second);
    }
}

/* The forward DCT method (jpeg_forward_dct.forward_DCT) in AVX2, two blocks at a time. */
DR_AVX2 static void forward_dct_avx2(j_compress_ptr cinfo, jpeg_component_info *compptr, JSAMPARRAY sample_data,
                                     JBLOCKROW coef_blocks, JDIMENSION start_row, JDIMENSION start_col,
                                     JDIMENSION num_blocks) {
    const forward_state *state = (const forward_state *)cinfo->client_data;
    const quantiser *q = &state->tables[compptr->quant_tbl_no];
    JSAMPARRAY rows = sample_data + start_row;
    JDIMENSION b = 0;
    for (; b + 2 <= num_blocks; b += 2, start_col += 2 * DCTSIZE)
        forward_blocks(rows, start_col, q, coef_blocks[b], coef_blocks[b + 1]);
    if (b < num_blocks) forward_blocks(rows, start_col, q, coef_blocks[b], NULL);
}

/* A block of samples of one of four kinds: noise, the extremes (0 and 255) at random, a smooth
 * ramp with a little noise, and one flat value. */
static void fill_samples(JSAMPLE block[DCTSIZE][32], uint32_t *state, int kind) {
    *state = *state * 1664525u + 1013904223u;
    const int flat = (int)(*state >> 24), slope = (int)(*state >> 20 & 15) - 8;
    for (int r = 0; r < DCTSIZE; r++)
        for (int c = 0; c < 32; c++) {
            *state = *state * 1664525u + 1013904223u;
            const uint32_t bits = *state >> 8;
            int v;
            switch (kind) {
            case 0: v = (int)(bits & 255); break;
            case 1: v = bits & 1 ? 255 : 0; break;
            case 2: v = flat + slope * (r + c) + (int)(bits % 5) - 2; break;
            default: v = flat; break;
            }
            block[r][c] = (JSAMPLE)(v < 0 ? 0 : v > 255 ? 255 : v);
        }
}

long dr_fdct_compare(j_compress_ptr cinfo, uint32_t seed, long blocks) {
    forward_state *state = state_for(cinfo);
    if (state == NULL) return -1;
    JSAMPLE samples[DCTSIZE][32];
    JSAMPROW rows[DCTSIZE];
    for (int r = 0; r < DCTSIZE; r++) rows[r] = samples[r];
    uint32_t random = seed;
    long mismatches = 0;
    for (int ci = 0; ci < cinfo->num_components; ci++) {
        jpeg_component_info *compptr = &cinfo->comp_info[ci];
        for (long b = 0; b < blocks; b++) {
            /* One block alone, then two side by side (the two ways forward_dct_avx2 takes them),
             * from column 8, so that a read before or past them would differ. */
            const JDIMENSION count = (JDIMENSION)(b % 2 + 1);
            JBLOCK expected[2], actual[2];
            fill_samples(samples, &random, (int)(b % 4));
            memset(expected, 0x5A, sizeof(expected));
            memset(actual, 0x5A, sizeof(actual));
            state->library(cinfo, compptr, rows, expected, 0, DCTSIZE, count);
            forward_dct_avx2(cinfo, compptr, rows, actual, 0, DCTSIZE, count);
            if (memcmp(expected, actual, sizeof(expected)) != 0) mismatches++;
        }
    }
    return mismatches;
}

void dr_jpeg_use_avx2_fdct(j_compress_ptr cinfo) {
    if (state_for(cinfo) == NULL) return;
    if (dr_fdct_compare(cinfo, 0x9E3779B9u, 16) == 0) cinfo->fdct->forward_DCT = forward_dct_avx2;
}
