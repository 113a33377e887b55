/*
 * HDR (PQ or HLG) to SDR sRGB: see dr_hdr_to_sdr in include/cheif.h. tools/hdr/reference.py is
 * the same operator in floating point, written from the same recommendations, for the tests.
 */
#include "cheif.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* SMPTE ST 2084 (PQ) constants. */
static const double pq_m1 = 2610.0 / 16384.0, pq_m2 = 2523.0 / 4096.0 * 128.0;
static const double pq_c1 = 3424.0 / 4096.0, pq_c2 = 2413.0 / 4096.0 * 32.0, pq_c3 = 2392.0 / 4096.0 * 32.0;

/* PQ signal (0...1) to luminance in cd/m2. */
static double pq_eotf(double signal) {
    double p = pow(signal < 0 ? 0 : signal, 1.0 / pq_m2);
    double num = p - pq_c1;
    if (num < 0) num = 0;
    return 10000.0 * pow(num / (pq_c2 - pq_c3 * p), 1.0 / pq_m1);
}

/* Luminance in cd/m2 to PQ signal (0...1). */
static double pq_inverse(double nits) {
    double y = pow((nits < 0 ? 0 : nits) / 10000.0, pq_m1);
    return pow((pq_c1 + pq_c2 * y) / (1.0 + pq_c3 * y), pq_m2);
}

/* ARIB STD-B67 / BT.2100 HLG inverse OETF: signal (0...1) to scene-linear light (0...1). */
static double hlg_inverse_oetf(double signal) {
    const double a = 0.17883277, b = 1.0 - 4.0 * 0.17883277, c = 0.5 - 0.17883277 * log(4.0 * 0.17883277);
    if (signal <= 0) return 0;
    if (signal <= 0.5) return signal * signal / 3.0;
    return (exp((signal - c) / a) + b) / 12.0;
}

/* ITU-R BT.2390 EETF: luminance `nits` of a source mastered up to `source_peak` onto a display
 * whose peak is `target_peak` (black levels 0), in the PQ domain with its Hermite-spline knee. */
static double bt2390_eetf(double nits, double source_peak, double target_peak) {
    if (source_peak <= target_peak) return nits < target_peak ? nits : target_peak;
    double source_pq = pq_inverse(source_peak);
    double e1 = pq_inverse(nits) / source_pq;
    if (e1 > 1) e1 = 1;
    double max_lum = pq_inverse(target_peak) / source_pq;
    double ks = 1.5 * max_lum - 0.5;
    double e2 = e1;
    if (e1 > ks) {
        double t = (e1 - ks) / (1 - ks), t2 = t * t, t3 = t2 * t;
        e2 = (2 * t3 - 3 * t2 + 1) * ks + (t3 - 2 * t2 + t) * (1 - ks) + (-2 * t3 + 3 * t2) * max_lum;
    }
    return pq_eotf(e2 * source_pq);
}

/* 3x3 helpers, row-major. */
static void mat_mul(const double a[9], const double b[9], double out[9]) {
    double r[9];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) r[i * 3 + j] = a[i * 3] * b[j] + a[i * 3 + 1] * b[3 + j] + a[i * 3 + 2] * b[6 + j];
    memcpy(out, r, sizeof r);
}

static int mat_invert(const double m[9], double out[9]) {
    double det = m[0] * (m[4] * m[8] - m[5] * m[7]) - m[1] * (m[3] * m[8] - m[5] * m[6]) + m[2] * (m[3] * m[7] - m[4] * m[6]);
    if (fabs(det) < 1e-12) return 0;
    double r[9] = {
        (m[4] * m[8] - m[5] * m[7]) / det, (m[2] * m[7] - m[1] * m[8]) / det, (m[1] * m[5] - m[2] * m[4]) / det,
        (m[5] * m[6] - m[3] * m[8]) / det, (m[0] * m[8] - m[2] * m[6]) / det, (m[2] * m[3] - m[0] * m[5]) / det,
        (m[3] * m[7] - m[4] * m[6]) / det, (m[1] * m[6] - m[0] * m[7]) / det, (m[0] * m[4] - m[1] * m[3]) / det};
    memcpy(out, r, sizeof r);
    return 1;
}

/* RGB to XYZ for primaries (rx ry gx gy bx by wx wy). */
static int rgb_to_xyz(const double p[8], double out[9]) {
    double m[9] = {p[0] / p[1], p[2] / p[3], p[4] / p[5], 1, 1, 1,
                   (1 - p[0] - p[1]) / p[1], (1 - p[2] - p[3]) / p[3], (1 - p[4] - p[5]) / p[5]};
    double inverse[9];
    if (!mat_invert(m, inverse)) return 0;
    double white[3] = {p[6] / p[7], 1, (1 - p[6] - p[7]) / p[7]};
    double s[3];
    for (int i = 0; i < 3; i++) s[i] = inverse[i * 3] * white[0] + inverse[i * 3 + 1] * white[1] + inverse[i * 3 + 2] * white[2];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) out[i * 3 + j] = m[i * 3 + j] * s[j];
    return 1;
}

int dr_hdr_matrix(const double primaries[8], double matrix[9], double luma[3]) {
    static const double srgb[8] = {0.64, 0.33, 0.30, 0.60, 0.15, 0.06, 0.3127, 0.3290};
    static const double bradford[9] = {0.8951, 0.2664, -0.1614, -0.7502, 1.7135, 0.0367, 0.0389, -0.0685, 1.0296};
    double source[9], target[9], target_inverse[9];
    if (!rgb_to_xyz(primaries, source) || !rgb_to_xyz(srgb, target) || !mat_invert(target, target_inverse)) return 0;
    for (int i = 0; i < 3; i++) luma[i] = source[3 + i];
    /* Bradford adaptation from the source's white to D65 when they differ (DCI-P3's is not D65). */
    if (fabs(primaries[6] - srgb[6]) > 1e-4 || fabs(primaries[7] - srgb[7]) > 1e-4) {
        double from[3] = {primaries[6] / primaries[7], 1, (1 - primaries[6] - primaries[7]) / primaries[7]};
        double to[3] = {srgb[6] / srgb[7], 1, (1 - srgb[6] - srgb[7]) / srgb[7]};
        double cone_from[3], cone_to[3], bradford_inverse[9];
        for (int i = 0; i < 3; i++) {
            cone_from[i] = bradford[i * 3] * from[0] + bradford[i * 3 + 1] * from[1] + bradford[i * 3 + 2] * from[2];
            cone_to[i] = bradford[i * 3] * to[0] + bradford[i * 3 + 1] * to[1] + bradford[i * 3 + 2] * to[2];
        }
        double scale[9] = {cone_to[0] / cone_from[0], 0, 0, 0, cone_to[1] / cone_from[1], 0, 0, 0, cone_to[2] / cone_from[2]};
        if (!mat_invert(bradford, bradford_inverse)) return 0;
        double adapt[9];
        mat_mul(scale, bradford, adapt);
        mat_mul(bradford_inverse, adapt, adapt);
        mat_mul(adapt, source, source);
    }
    mat_mul(target_inverse, source, matrix);
    return 1;
}

double dr_hdr_source_peak(int transfer, double max_content_light, double mastering_peak) {
    if (transfer == DR_HDR_HLG) return 1000.0;
    double peak = max_content_light > 0 ? max_content_light : (mastering_peak > 0 ? mastering_peak : 1000.0);
    if (peak > 10000.0) peak = 10000.0;
    return peak;
}

double dr_hdr_tone_map_luminance(double nits, double source_peak) {
    return bt2390_eetf(nits, source_peak, DR_HDR_SDR_WHITE);
}

/* Entries of the gain table over the source's luminance range. */
#define GAIN_TABLE 65536
#define ENCODE_TABLE 4096

static double srgb_encode(double linear) {
    if (linear <= 0) return 0;
    if (linear >= 1) return 1;
    return linear <= 0.0031308 ? 12.92 * linear : 1.055 * pow(linear, 1 / 2.4) - 0.055;
}

int dr_hdr_to_sdr(const uint8_t *plane, size_t stride, int width, int height, int bits, int transfer,
                  const double primaries[8], double source_peak, uint8_t *rgb) {
    if (plane == NULL || rgb == NULL || width <= 0 || height <= 0 || bits < 8 || bits > 16) return -1;
    if (transfer != DR_HDR_PQ && transfer != DR_HDR_HLG) return -1;
    double matrix[9], luma[3];
    if (!dr_hdr_matrix(primaries, matrix, luma)) return -1;
    const int levels = 1 << bits;
    const double top = (double)(levels - 1);
    float *linear = malloc(sizeof(float) * (size_t)levels);
    float *gain = malloc(sizeof(float) * (GAIN_TABLE + 2));
    float *encode = malloc(sizeof(float) * (ENCODE_TABLE + 2));
    if (linear == NULL || gain == NULL || encode == NULL) {
        free(linear);
        free(gain);
        free(encode);
        return -2;
    }
    /* linear: code value to light, cd/m2 for PQ, scene light 0...1 for HLG. gain: by that
     * light's luminance Y over [0, range], the factor taking the pixel's channels to SDR
     * linear (1 = SDR white), the tone curve divided by Y. */
    double range;
    if (transfer == DR_HDR_PQ) {
        for (int i = 0; i < levels; i++) linear[i] = (float)pq_eotf(i / top);
        range = source_peak;
        for (int i = 0; i <= GAIN_TABLE + 1; i++) {
            double y = range * i / GAIN_TABLE;
            gain[i] = y <= 0 ? 1.0f / (float)DR_HDR_SDR_WHITE
                             : (float)(bt2390_eetf(y, source_peak, DR_HDR_SDR_WHITE) / y / DR_HDR_SDR_WHITE);
        }
    } else {
        /* BT.2100 HLG reference OOTF for a 1000 cd/m2 display: Fd = Lw * Ys^(gamma - 1) * E, gamma 1.2. */
        const double gamma = 1.2;
        for (int i = 0; i < levels; i++) linear[i] = (float)hlg_inverse_oetf(i / top);
        range = 1.0;
        for (int i = 0; i <= GAIN_TABLE + 1; i++) {
            double ys = (double)i / GAIN_TABLE;
            double display = source_peak * pow(ys, gamma);
            gain[i] = ys <= 0 ? 0.0f
                              : (float)(bt2390_eetf(display, source_peak, DR_HDR_SDR_WHITE) / ys / DR_HDR_SDR_WHITE);
        }
    }
    for (int i = 0; i <= ENCODE_TABLE + 1; i++) encode[i] = (float)(255.0 * srgb_encode((double)i / ENCODE_TABLE));

    const float m[9] = {(float)matrix[0], (float)matrix[1], (float)matrix[2], (float)matrix[3], (float)matrix[4],
                        (float)matrix[5], (float)matrix[6], (float)matrix[7], (float)matrix[8]};
    const float ky[3] = {(float)luma[0], (float)luma[1], (float)luma[2]};
    const float to_index = (float)(GAIN_TABLE / range);
    const int mask = levels - 1;
    for (int y = 0; y < height; y++) {
        const uint8_t *row = plane + stride * (size_t)y;
        uint8_t *out = rgb + (size_t)y * (size_t)width * 3;
        for (int x = 0; x < width; x++) {
            float c[3];
            for (int k = 0; k < 3; k++) {
                const uint8_t *p = row + ((size_t)x * 3 + (size_t)k) * 2;
                c[k] = linear[(p[0] | (p[1] << 8)) & mask];
            }
            float yl = ky[0] * c[0] + ky[1] * c[1] + ky[2] * c[2];
            float position = yl * to_index, g;
            if (position >= GAIN_TABLE) {
                /* Above the source's stated peak: the curve's end, the display's peak. */
                g = transfer == DR_HDR_PQ ? 1.0f / yl : gain[GAIN_TABLE];
            } else {
                int i = (int)position;
                float f = position - (float)i;
                g = gain[i] + (gain[i + 1] - gain[i]) * f;
            }
            float s[3];
            for (int k = 0; k < 3; k++) s[k] = (m[k * 3] * c[0] + m[k * 3 + 1] * c[1] + m[k * 3 + 2] * c[2]) * g;
            /* Out of sRGB's gamut or above its white: towards the pixel's own luminance (hue and
             * luminance kept), just far enough for every channel to be inside 0...1. */
            float lum = 0.2126f * s[0] + 0.7152f * s[1] + 0.0722f * s[2];
            float lo = fminf(s[0], fminf(s[1], s[2])), hi = fmaxf(s[0], fmaxf(s[1], s[2]));
            if (lum >= 1) {
                s[0] = s[1] = s[2] = 1;
            } else if (lum <= 0) {
                s[0] = s[1] = s[2] = 0;
            } else {
                float t = 1;
                if (lo < 0) t = lum / (lum - lo);
                if (hi > 1) t = fminf(t, (1 - lum) / (hi - lum));
                if (t < 1)
                    for (int k = 0; k < 3; k++) s[k] = lum + t * (s[k] - lum);
            }
            for (int k = 0; k < 3; k++) {
                float position2 = s[k] * ENCODE_TABLE;
                if (position2 <= 0) position2 = 0;
                if (position2 >= ENCODE_TABLE) position2 = ENCODE_TABLE;
                int i = (int)position2;
                float f = position2 - (float)i;
                float v = encode[i] + (encode[i + 1] - encode[i]) * f;
                out[x * 3 + k] = (uint8_t)(int)(v + 0.5f);
            }
        }
    }
    free(linear);
    free(gain);
    free(encode);
    return 0;
}
