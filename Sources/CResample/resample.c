/* The float passes, on any processor (its baseline vector unit): where the processor has AVX2
 * the fixed-point passes of resample_fixed.c run instead. Also the choice between the AVX2
 * builds and the baseline ones, which the box reduction and the transpose (reduce.c) follow. */
#include "resample_internal.h"

#include <stdatomic.h>
#include <string.h>

/* Multiply-adds fuse into one instruction where the target has them. */
#pragma clang fp contract(fast)

typedef float dr_v8 __attribute__((vector_size(32)));

#define DR_INLINE static inline __attribute__((always_inline))

DR_INLINE dr_v8 load8(const float *p) {
    dr_v8 v;
    memcpy(&v, p, sizeof v);
    return v;
}

DR_INLINE void store8(float *p, dr_v8 v) { memcpy(p, &v, sizeof v); }

/* The floats of the vertical pass's row: the span's samples rounded up to whole 32-float chunks,
 * plus 8 zeros for the horizontal pass's 8-float reads past the last tap. */
static size_t row_floats(dr_span span) {
    size_t samples = (size_t)(span.end - span.first) * 3;
    return (samples + 31) / 32 * 32 + 8;
}

/* The scratch, in floats: the source rows of one output row (pointers, first so that they are
 * aligned), the vertical pass's row, the horizontal pass's float row, the expanded horizontal
 * weights. */
typedef struct {
    size_t rows;
    size_t row;
    size_t intermediate;
    size_t output;
    size_t weights;
    size_t total;
} dr_layout;

static dr_layout layout(int32_t source_width, const dr_resample_axis *horizontal, const dr_resample_axis *vertical) {
    (void)source_width;
    dr_layout l;
    /* Pointers to the source rows of two output rows, and their two weight lists. */
    l.rows = (size_t)vertical->taps * 2 * (sizeof(const uint8_t *) / sizeof(float)) + (size_t)vertical->taps * 4;
    l.row = row_floats(dr_columns_read(horizontal));
    l.intermediate = l.row * 2;
    l.output = (size_t)horizontal->output_size * 3 + 8;
    l.weights = (size_t)horizontal->output_size * (size_t)(horizontal->taps / 2) * 8;
    l.total = l.rows + l.intermediate + l.output + l.weights;
    return l;
}

size_t dr_resample_scratch_floats(int32_t source_width, const dr_resample_axis *horizontal,
                                  const dr_resample_axis *vertical) {
    size_t floats = layout(source_width, horizontal, vertical).total;
#if DR_RESAMPLE_X86
    /* Enough for either path, whichever runs. */
    size_t fixed = (dr_resample_fixed_scratch_bytes(horizontal, vertical) + sizeof(float) - 1) / sizeof(float);
    if (fixed > floats) floats = fixed;
#endif
    return floats;
}

typedef uint8_t dr_b8 __attribute__((vector_size(8)));

/* Eight bytes as eight floats. */
DR_INLINE dr_v8 load8_bytes(const uint8_t *p) {
    dr_b8 b;
    memcpy(&b, p, sizeof b);
    return __builtin_convertvector(b, dr_v8);
}

/* target[i] = sum over k of weights[k] * rows[k][i] for the `samples` bytes of each source row,
 * read straight from the source (no copy: the rows of one output row are a few kilobytes of
 * bytes, where floats would be four times as many), then zeros up to `count`. Four 8-lane
 * accumulators per chunk of 32, each tap one widening read and one multiply-add per accumulator. */
DR_INLINE void vertical_pass(const uint8_t *const *rows, const float *weights, int32_t taps, int32_t samples,
                             float *target, size_t count) {
    int32_t i = 0;
    for (; i + 32 <= samples; i += 32) {
        dr_v8 a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0};
        for (int32_t k = 0; k < taps; k++) {
            const uint8_t *r = rows[k] + i;
            float w = weights[k];
            a0 += load8_bytes(r) * w;
            a1 += load8_bytes(r + 8) * w;
            a2 += load8_bytes(r + 16) * w;
            a3 += load8_bytes(r + 24) * w;
        }
        store8(target + i, a0);
        store8(target + i + 8, a1);
        store8(target + i + 16, a2);
        store8(target + i + 24, a3);
    }
    for (; i < samples; i++) {
        float sum = 0;
        for (int32_t k = 0; k < taps; k++) sum += (float)rows[k][i] * weights[k];
        target[i] = sum;
    }
    for (size_t j = (size_t)samples; j < count; j++) target[j] = 0;
}

/* Two output rows' vertical sums in one pass over the source rows both read (`count` rows from
 * the first's first; a row outside one's taps has a zero weight in it): each source row is
 * read and widened once for both, where two passes would read the shared rows twice. */
DR_INLINE void vertical_pass2(const uint8_t *const *rows, const float *weights, const float *second_weights,
                              int32_t count, int32_t samples, float *target, float *second_target, size_t length) {
    int32_t i = 0;
    for (; i + 32 <= samples; i += 32) {
        dr_v8 a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0}, b0 = {0}, b1 = {0}, b2 = {0}, b3 = {0};
        for (int32_t k = 0; k < count; k++) {
            const uint8_t *r = rows[k] + i;
            float w = weights[k], x = second_weights[k];
            dr_v8 s0 = load8_bytes(r), s1 = load8_bytes(r + 8), s2 = load8_bytes(r + 16), s3 = load8_bytes(r + 24);
            a0 += s0 * w;
            a1 += s1 * w;
            a2 += s2 * w;
            a3 += s3 * w;
            b0 += s0 * x;
            b1 += s1 * x;
            b2 += s2 * x;
            b3 += s3 * x;
        }
        store8(target + i, a0);
        store8(target + i + 8, a1);
        store8(target + i + 16, a2);
        store8(target + i + 24, a3);
        store8(second_target + i, b0);
        store8(second_target + i + 8, b1);
        store8(second_target + i + 16, b2);
        store8(second_target + i + 24, b3);
    }
    for (; i < samples; i++) {
        float sum = 0, second = 0;
        for (int32_t k = 0; k < count; k++) {
            sum += (float)rows[k][i] * weights[k];
            second += (float)rows[k][i] * second_weights[k];
        }
        target[i] = sum;
        second_target[i] = second;
    }
    for (size_t j = (size_t)samples; j < length; j++) {
        target[j] = 0;
        second_target[j] = 0;
    }
}

/* One output pixel of the horizontal pass: `pairs` pairs of taps from `p`. Two neighbouring
 * source pixels (6 floats) are one 8-lane read, multiplied by their pair of weights expanded to
 * [w w w w' w' w' 0 0]; the two halves of the sum are the output pixel. (Two pixels gathered
 * into one vector and stored together measured no faster.) */
DR_INLINE void horizontal_pixel(const float *p, const float *w, int32_t pairs, float *target) {
    dr_v8 a = {0}, b = {0};
    int32_t j = 0;
    for (; j + 1 < pairs; j += 2) {
        a += load8(p + 6 * j) * load8(w + 8 * j);
        b += load8(p + 6 * j + 6) * load8(w + 8 * j + 8);
    }
    if (j < pairs) a += load8(p + 6 * j) * load8(w + 8 * j);
    a += b;
    target[0] = a[0] + a[3];
    target[1] = a[1] + a[4];
    target[2] = a[2] + a[5];
}

typedef int32_t dr_i8 __attribute__((vector_size(32)));
typedef uint8_t dr_u8x8 __attribute__((vector_size(8)));

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "CResample writes pixels as little-endian words"
#endif

/* `ROW(pairs)` with the pair count a constant for the common counts (1 to 8), so that the
 * compiler unrolls each loop for its count and keeps no register spills across output pixels. */
#define DR_BY_PAIRS(ROW)                   \
    switch (pairs) {                       \
    case 1: ROW(1); break;                 \
    case 2: ROW(2); break;                 \
    case 3: ROW(3); break;                 \
    case 4: ROW(4); break;                 \
    case 5: ROW(5); break;                 \
    case 6: ROW(6); break;                 \
    case 7: ROW(7); break;                 \
    case 8: ROW(8); break;                 \
    default: ROW(pairs); break;            \
    }

/* The same for two rows at once (two output rows of the same columns): each pair of weights
 * is read once for both, the two pixels' halves are gathered into one vector and added, and
 * the six values are clamped to 0...255, rounded and written as bytes straight away: each
 * pixel as a 4-byte word whose last byte the next pixel overwrites, or, for the last pixel
 * of a row (`last`), its 3 bytes alone. */
DR_INLINE void horizontal_pixel2(const float *pa, const float *pb, const float *w, int32_t pairs, uint8_t *ta,
                                 uint8_t *tb, int last) {
    dr_v8 a0 = {0}, a1 = {0}, b0 = {0}, b1 = {0};
    int32_t j = 0;
    for (; j + 1 < pairs; j += 2) {
        dr_v8 w0 = load8(w + 8 * j), w1 = load8(w + 8 * j + 8);
        a0 += load8(pa + 6 * j) * w0;
        b0 += load8(pb + 6 * j) * w0;
        a1 += load8(pa + 6 * j + 6) * w1;
        b1 += load8(pb + 6 * j + 6) * w1;
    }
    if (j < pairs) {
        dr_v8 w0 = load8(w + 8 * j);
        a0 += load8(pa + 6 * j) * w0;
        b0 += load8(pb + 6 * j) * w0;
    }
    dr_v8 a = a0 + a1, b = b0 + b1;
    dr_v8 low = __builtin_shufflevector(a, b, 0, 1, 2, 8, 9, 10, 6, 7);
    dr_v8 high = __builtin_shufflevector(a, b, 3, 4, 5, 11, 12, 13, 6, 7);
    const dr_v8 zero = {0}, top = {255, 255, 255, 255, 255, 255, 255, 255}, half = {0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f};
    dr_v8 sum = __builtin_elementwise_min(__builtin_elementwise_max(low + high, zero), top) + half;
    dr_u8x8 bytes = __builtin_convertvector(__builtin_convertvector(sum, dr_i8), dr_u8x8);
    uint64_t packed;
    memcpy(&packed, &bytes, sizeof packed);
    uint32_t first = (uint32_t)packed, second = (uint32_t)(packed >> 24);
    if (last) {
        memcpy(ta, &first, 3);
        memcpy(tb, &second, 3);
    } else {
        memcpy(ta, &first, 4);
        memcpy(tb, &second, 4);
    }
}

#define DR_HORIZONTAL_ROWS2(PAIRS)                                                                           \
    for (int32_t ox = 0; ox < width; ox++) {                                                                 \
        size_t offset = (size_t)(starts[ox] - first_column) * 3;                                             \
        const float *w = expanded + (size_t)ox * (PAIRS) * 8;                                                \
        if (ox + 1 < width)                                                                                  \
            horizontal_pixel2(row + offset, second + offset, w, (PAIRS), target + (size_t)ox * 3,            \
                              second_target + (size_t)ox * 3, 0);                                            \
        else                                                                                                 \
            horizontal_pixel2(row + offset, second + offset, w, (PAIRS), target + (size_t)ox * 3,            \
                              second_target + (size_t)ox * 3, 1);                                            \
    }

DR_INLINE void horizontal_pass2(const float *row, const float *second, int32_t first_column, const int32_t *starts,
                                const float *expanded, int32_t pairs, int32_t width, uint8_t *target,
                                uint8_t *second_target) {
    DR_BY_PAIRS(DR_HORIZONTAL_ROWS2);
}

/* One row through the horizontal taps (the last row of an odd count). */
#define DR_HORIZONTAL_ROW(PAIRS)                                                                           \
    for (int32_t ox = 0; ox < width; ox++)                                                                 \
        horizontal_pixel(row + (size_t)(starts[ox] - first_column) * 3, expanded + (size_t)ox * (PAIRS) * 8, \
                         (PAIRS), target + (size_t)ox * 3)

DR_INLINE void horizontal_pass(const float *row, int32_t first_column, const int32_t *starts, const float *expanded,
                               int32_t pairs, int32_t width, float *target) {
    DR_BY_PAIRS(DR_HORIZONTAL_ROW);
}

/* Floats to bytes, clamped to 0...255 (Lanczos overshoots) and rounded to nearest. */
DR_INLINE void store_bytes(const float *values, uint8_t *target, int32_t count) {
    for (int32_t i = 0; i < count; i++) {
        float v = values[i];
        v = v < 0 ? 0 : (v > 255 ? 255 : v);
        target[i] = (uint8_t)(int32_t)(v + 0.5f);
    }
}

DR_INLINE int resample_body(const uint8_t *source, int32_t source_width, int32_t source_height, size_t source_stride,
                            const dr_resample_axis *h, const dr_resample_axis *v, uint8_t *target,
                            size_t target_stride, float *scratch, size_t scratch_floats) {
    dr_layout l = layout(source_width, h, v);
    if (scratch_floats < l.total || h->taps < 2 || v->taps < 1 || h->taps % 2 != 0) return -1;
    dr_span span = dr_columns_read(h);
    const uint8_t **rows = (const uint8_t **)(void *)scratch;
    float *intermediate = scratch + l.rows;
    float *output = intermediate + l.intermediate;
    float *expanded = output + l.output;
    int32_t pairs = h->taps / 2;
    int32_t taps = v->taps;

    for (int32_t ox = 0; ox < h->output_size; ox++) {
        const float *w = h->weights + (size_t)ox * (size_t)h->taps;
        float *e = expanded + (size_t)ox * (size_t)pairs * 8;
        for (int32_t j = 0; j < pairs; j++) {
            float w0 = w[2 * j], w1 = w[2 * j + 1];
            float lanes[8] = {w0, w0, w0, w1, w1, w1, 0, 0};
            memcpy(e + 8 * j, lanes, sizeof lanes);
        }
    }

    int32_t real_columns = span.end > source_width ? source_width - span.first : span.end - span.first;
    int32_t samples = real_columns * 3;

    float *second_intermediate = intermediate + l.row;
    float *merged = (float *)(void *)(rows + 2 * taps);
    float *second_merged = merged + 2 * taps;
    for (int32_t oy = 0; oy < v->output_size; oy += 2) {
        /* Two output rows at a time (the last alone when their count is odd). */
        int32_t count = oy + 1 < v->output_size ? 2 : 1;
        /* The starts rise, or fall when the axis is mirrored (a flipped orientation read in place). */
        int32_t start_a = v->starts[oy], start_b = count == 2 ? v->starts[oy + 1] : start_a;
        int32_t first = start_a < start_b ? start_a : start_b;
        int32_t span_rows = (start_a < start_b ? start_b : start_a) - first + taps;
        if (count == 2 && span_rows <= taps + taps / 2) {
            /* Their rows overlap by at least half: one pass over the rows of both. */
            const float *wa = v->weights + (size_t)oy * (size_t)taps, *wb = wa + taps;
            int32_t shift_a = start_a - first, shift_b = start_b - first;
            for (int32_t k = 0; k < span_rows; k++) {
                int32_t row = first + k < source_height ? first + k : source_height - 1;
                rows[k] = source + (size_t)row * source_stride + (size_t)span.first * 3;
                merged[k] = k >= shift_a && k - shift_a < taps ? wa[k - shift_a] : 0;
                second_merged[k] = k >= shift_b && k - shift_b < taps ? wb[k - shift_b] : 0;
            }
            vertical_pass2(rows, merged, second_merged, span_rows, samples, intermediate, second_intermediate, l.row);
        } else {
            for (int32_t r = 0; r < count; r++) {
                int32_t row_first = v->starts[oy + r];
                for (int32_t k = 0; k < taps; k++) {
                    /* A read one past the last row meets a zero weight; it repeats the last row. */
                    int32_t row = row_first + k < source_height ? row_first + k : source_height - 1;
                    rows[k] = source + (size_t)row * source_stride + (size_t)span.first * 3;
                }
                vertical_pass(rows, v->weights + (size_t)(oy + r) * (size_t)taps, taps, samples,
                              r == 0 ? intermediate : second_intermediate, l.row);
            }
        }
        if (count == 2) {
            horizontal_pass2(intermediate, second_intermediate, span.first, h->starts, expanded, pairs, h->output_size,
                             target + (size_t)oy * target_stride, target + (size_t)(oy + 1) * target_stride);
        } else {
            horizontal_pass(intermediate, span.first, h->starts, expanded, pairs, h->output_size, output);
            store_bytes(output, target + (size_t)oy * target_stride, h->output_size * 3);
        }
    }
    return 0;
}

static int resample_generic(const uint8_t *source, int32_t source_width, int32_t source_height, size_t source_stride,
                            const dr_resample_axis *h, const dr_resample_axis *v, uint8_t *target,
                            size_t target_stride, float *scratch, size_t scratch_floats) {
    return resample_body(source, source_width, source_height, source_stride, h, v, target, target_stride, scratch,
                         scratch_floats);
}

/* 0: not yet asked, 1: AVX2 and FMA, 2: baseline, 3: AVX2 and FMA with AVX-512 VNNI. */
static _Atomic int isa_choice = 0;
/* On a thread that asked for them (the tests, to check every path): 1, the baseline passes; 2,
 * the AVX2 passes without VNNI. */
static _Thread_local int preference = 0;

void dr_resample_prefer_baseline(int on) { preference = on ? 1 : 0; }
void dr_resample_prefer_plain_avx2(int on) { preference = on ? 2 : 0; }

static int isa(void) {
    int choice = atomic_load_explicit(&isa_choice, memory_order_relaxed);
    if (choice == 0) {
#if DR_RESAMPLE_X86
        __builtin_cpu_init();
        choice = (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) ? 1 : 2;
        if (choice == 1 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
            __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vnni"))
            choice = 3;
#else
        choice = 2;
#endif
        atomic_store_explicit(&isa_choice, choice, memory_order_relaxed);
    }
    return choice;
}

int dr_resample_uses_avx2(void) { return preference != 1 && (isa() == 1 || isa() == 3); }

int dr_resample_uses_vnni(void) { return preference == 0 && isa() == 3; }

/* 0: not yet asked, 1: yes, 2: no. */
static _Atomic int vbmi_choice = 0;

int dr_resample_transposes(void) {
    if (preference != 0 || !dr_resample_uses_avx2()) return 0;
    int choice = atomic_load_explicit(&vbmi_choice, memory_order_relaxed);
    if (choice == 0) {
#if DR_RESAMPLE_X86
        __builtin_cpu_init();
        choice = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
                 __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vbmi") ? 1 : 2;
#else
        choice = 2;
#endif
        atomic_store_explicit(&vbmi_choice, choice, memory_order_relaxed);
    }
    return choice == 1;
}

int dr_resample(const uint8_t *source, int32_t source_width, int32_t source_height, size_t source_stride,
                const dr_resample_axis *horizontal, const dr_resample_axis *vertical, uint8_t *target,
                size_t target_stride, float *scratch, size_t scratch_floats) {
#if DR_RESAMPLE_X86
    if (dr_resample_uses_avx2()) {
        int code = dr_resample_fixed_avx2(source, source_width, source_height, source_stride, horizontal, vertical,
                                          target, target_stride, scratch, scratch_floats * sizeof(float), 0);
        if (code != 1) return code;
    }
#endif
    return resample_generic(source, source_width, source_height, source_stride, horizontal, vertical, target,
                            target_stride, scratch, scratch_floats);
}

int dr_resample_transposed(const uint8_t *source, int32_t source_width, int32_t source_height, size_t source_stride,
                           const dr_resample_axis *horizontal, const dr_resample_axis *vertical, uint8_t *target,
                           size_t target_stride, float *scratch, size_t scratch_floats) {
#if DR_RESAMPLE_X86
    if (dr_resample_transposes())
        return dr_resample_fixed_avx2(source, source_width, source_height, source_stride, horizontal, vertical, target,
                                      target_stride, scratch, scratch_floats * sizeof(float), 1);
#endif
    (void)source; (void)source_width; (void)source_height; (void)source_stride; (void)horizontal; (void)vertical;
    (void)target; (void)target_stride; (void)scratch; (void)scratch_floats;
    return 1;
}
