#include "ccolour.h"

#include <lcms2.h>
#include <math.h>
#include <pthread.h>

static pthread_once_t dr_quiet_once = PTHREAD_ONCE_INIT;

/* lcms2 prints nothing: a bad profile is reported by the return value. */
static void dr_quiet(void) { cmsSetLogErrorHandler(NULL); }

/* Transforms `pixel_count` pixels of `input_format` (of `in_bytes` each) from the space of `icc`
   (which must be `space`) to 8-bit sRGB in `rgb`. */
static int dr_transform(const uint8_t *input, cmsUInt32Number input_format, size_t in_bytes, cmsColorSpaceSignature space,
                        uint8_t *rgb, size_t pixel_count, const uint8_t *icc, size_t icc_length) {
    if (input == NULL || rgb == NULL || icc == NULL || icc_length == 0) return DR_COLOUR_BAD_ARGUMENT;
    pthread_once(&dr_quiet_once, dr_quiet);
    cmsHPROFILE source = cmsOpenProfileFromMem(icc, (cmsUInt32Number)icc_length);
    if (source == NULL) return DR_COLOUR_UNUSABLE_PROFILE;
    if (cmsGetColorSpace(source) != space) {
        cmsCloseProfile(source);
        return DR_COLOUR_UNUSABLE_PROFILE;
    }
    cmsHPROFILE srgb = cmsCreate_sRGBProfile();
    if (srgb == NULL) {
        cmsCloseProfile(source);
        return DR_COLOUR_UNUSABLE_PROFILE;
    }
    cmsHTRANSFORM transform = cmsCreateTransform(source, input_format, srgb, TYPE_RGB_8, INTENT_PERCEPTUAL, 0);
    cmsCloseProfile(source);
    cmsCloseProfile(srgb);
    if (transform == NULL) return DR_COLOUR_UNUSABLE_PROFILE;
    /* In bands, so that the count always fits lcms2's 32-bit pixel count. */
    const size_t band = 1u << 24;
    for (size_t done = 0; done < pixel_count; done += band) {
        const size_t count = pixel_count - done < band ? pixel_count - done : band;
        cmsDoTransform(transform, input + done * in_bytes, rgb + done * 3, (cmsUInt32Number)count);
    }
    cmsDeleteTransform(transform);
    return DR_COLOUR_OK;
}

int dr_colour_to_srgb_lcms(uint8_t *rgb, size_t pixel_count, const uint8_t *icc, size_t icc_length) {
    return dr_transform(rgb, TYPE_RGB_8, 3, cmsSigRgbData, rgb, pixel_count, icc, icc_length);
}

/* The matrix-shaper path. The profiles phones and cameras write (Display P3, Adobe RGB, ...)
 * are three tone curves and a matrix; so is sRGB. The whole conversion is then: each channel
 * through its curve to linear light, one 3x3 matrix (the source's colorants, then the inverse of
 * sRGB's, both adapted to D50 as the tags store them), and sRGB's curve back. lcms2 runs the
 * same steps through its generic pipeline at about three times the cost; here they are two
 * tables and integer arithmetic. Linear light is in DR_LINEAR_ONE steps, fine enough that the
 * darkest levels round as lcms2 rounds them (tested within one level on every channel). */
#define DR_LINEAR_BITS 14
#define DR_LINEAR_ONE (1 << DR_LINEAR_BITS)
#define DR_MATRIX_BITS 14

static uint8_t dr_srgb_encode[DR_LINEAR_ONE + 1];
static pthread_once_t dr_srgb_encode_once = PTHREAD_ONCE_INIT;

/* sRGB's curve (IEC 61966-2-1), from linear light to the 8-bit level, at every step. */
static void dr_fill_srgb_encode(void) {
    for (int step = 0; step <= DR_LINEAR_ONE; step++) {
        const double linear = (double)step / DR_LINEAR_ONE;
        const double level = linear <= 0.0031308 ? 12.92 * linear : 1.055 * pow(linear, 1 / 2.4) - 0.055;
        dr_srgb_encode[step] = (uint8_t)lrint(fmin(fmax(level, 0), 1) * 255);
    }
}

/* The XYZ columns of a matrix-shaper profile's colorants; 0 when a tag is missing. */
static int dr_colorants(cmsHPROFILE profile, double columns[3][3]) {
    const cmsTagSignature tags[] = {cmsSigRedColorantTag, cmsSigGreenColorantTag, cmsSigBlueColorantTag};
    for (int c = 0; c < 3; c++) {
        const cmsCIEXYZ *xyz = cmsReadTag(profile, tags[c]);
        if (xyz == NULL) return 0;
        columns[0][c] = xyz->X;
        columns[1][c] = xyz->Y;
        columns[2][c] = xyz->Z;
    }
    return 1;
}

static int dr_invert(const double m[3][3], double out[3][3]) {
    const double det = m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
                       m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
    if (fabs(det) < 1e-9) return 0;
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) {
            /* The cofactor of (c, r), for the transpose. */
            const int r1 = (c + 1) % 3, r2 = (c + 2) % 3, c1 = (r + 1) % 3, c2 = (r + 2) % 3;
            out[r][c] = (m[r1][c1] * m[r2][c2] - m[r1][c2] * m[r2][c1]) / det;
        }
    return 1;
}

/* Converts in place through the matrix-shaper `source`; DR_COLOUR_UNUSABLE_PROFILE, the pixels
 * untouched, when it is not one this path can take. */
static int dr_matrix_shaper_to_srgb(uint8_t *rgb, size_t pixel_count, cmsHPROFILE source) {
    if (cmsGetColorSpace(source) != cmsSigRgbData || !cmsIsMatrixShaper(source)) return DR_COLOUR_UNUSABLE_PROFILE;
    double from[3][3], srgb_columns[3][3], to[3][3];
    cmsHPROFILE srgb = cmsCreate_sRGBProfile();
    if (srgb == NULL) return DR_COLOUR_UNUSABLE_PROFILE;
    const int ok = dr_colorants(source, from) && dr_colorants(srgb, srgb_columns) && dr_invert(srgb_columns, to);
    cmsCloseProfile(srgb);
    if (!ok) return DR_COLOUR_UNUSABLE_PROFILE;

    int32_t matrix[3][3];
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) {
            const double value = to[r][0] * from[0][c] + to[r][1] * from[1][c] + to[r][2] * from[2][c];
            if (!(fabs(value) < 8)) return DR_COLOUR_UNUSABLE_PROFILE;
            matrix[r][c] = (int32_t)lrint(value * (1 << DR_MATRIX_BITS));
        }
    const cmsTagSignature curves[] = {cmsSigRedTRCTag, cmsSigGreenTRCTag, cmsSigBlueTRCTag};
    int32_t linear[3][256];
    for (int c = 0; c < 3; c++) {
        const cmsToneCurve *curve = cmsReadTag(source, curves[c]);
        if (curve == NULL) return DR_COLOUR_UNUSABLE_PROFILE;
        for (int level = 0; level < 256; level++) {
            const float value = cmsEvalToneCurveFloat(curve, (cmsFloat32Number)level / 255);
            linear[c][level] = (int32_t)lrintf(fminf(fmaxf(value, 0), 1) * DR_LINEAR_ONE);
        }
    }
    pthread_once(&dr_srgb_encode_once, dr_fill_srgb_encode);

    /* In runs: the table reads are scalar, the matrix between them vectorises. */
    enum { RUN = 256 };
    int32_t in[3][RUN], out[3][RUN];
    const int32_t half = 1 << (DR_MATRIX_BITS - 1);
    for (size_t start = 0; start < pixel_count; start += RUN) {
        const size_t count = pixel_count - start < RUN ? pixel_count - start : RUN;
        uint8_t *run = rgb + start * 3;
        for (size_t i = 0; i < count; i++) {
            in[0][i] = linear[0][run[i * 3]];
            in[1][i] = linear[1][run[i * 3 + 1]];
            in[2][i] = linear[2][run[i * 3 + 2]];
        }
        for (int c = 0; c < 3; c++)
            for (size_t i = 0; i < count; i++) {
                const int32_t value = (matrix[c][0] * in[0][i] + matrix[c][1] * in[1][i] + matrix[c][2] * in[2][i] + half) >> DR_MATRIX_BITS;
                out[c][i] = value < 0 ? 0 : value > DR_LINEAR_ONE ? DR_LINEAR_ONE : value;
            }
        for (size_t i = 0; i < count; i++) {
            run[i * 3] = dr_srgb_encode[out[0][i]];
            run[i * 3 + 1] = dr_srgb_encode[out[1][i]];
            run[i * 3 + 2] = dr_srgb_encode[out[2][i]];
        }
    }
    return DR_COLOUR_OK;
}

int dr_colour_to_srgb(uint8_t *rgb, size_t pixel_count, const uint8_t *icc, size_t icc_length) {
    if (rgb == NULL || icc == NULL || icc_length == 0) return DR_COLOUR_BAD_ARGUMENT;
    pthread_once(&dr_quiet_once, dr_quiet);
    cmsHPROFILE source = cmsOpenProfileFromMem(icc, (cmsUInt32Number)icc_length);
    if (source == NULL) return DR_COLOUR_UNUSABLE_PROFILE;
    const int code = dr_matrix_shaper_to_srgb(rgb, pixel_count, source);
    cmsCloseProfile(source);
    if (code == DR_COLOUR_OK) return code;
    return dr_colour_to_srgb_lcms(rgb, pixel_count, icc, icc_length);
}

int dr_colour_cmyk_to_srgb(const uint8_t *cmyk, int inverted, uint8_t *rgb, size_t pixel_count,
                           const uint8_t *icc, size_t icc_length) {
    return dr_transform(cmyk, inverted ? TYPE_CMYK_8_REV : TYPE_CMYK_8, 4, cmsSigCmykData, rgb, pixel_count, icc, icc_length);
}

int dr_colour_is_cmyk(const uint8_t *icc, size_t icc_length) {
    if (icc == NULL || icc_length == 0) return 0;
    pthread_once(&dr_quiet_once, dr_quiet);
    cmsHPROFILE profile = cmsOpenProfileFromMem(icc, (cmsUInt32Number)icc_length);
    if (profile == NULL) return 0;
    const int cmyk = cmsGetColorSpace(profile) == cmsSigCmykData;
    cmsCloseProfile(profile);
    return cmyk;
}

static int dr_near(const cmsCIEXYZ *a, const cmsCIEXYZ *b) {
    return a != NULL && b != NULL && fabs(a->X - b->X) < 0.001 && fabs(a->Y - b->Y) < 0.001 && fabs(a->Z - b->Z) < 0.001;
}

static int dr_same_curve(cmsHPROFILE profile, cmsHPROFILE reference, cmsTagSignature tag) {
    const cmsToneCurve *curve = cmsReadTag(profile, tag), *expected = cmsReadTag(reference, tag);
    if (curve == NULL || expected == NULL) return 0;
    for (int level = 0; level <= 255; level += 5) {
        const cmsFloat32Number x = (cmsFloat32Number)level / 255;
        if (fabsf(cmsEvalToneCurveFloat(curve, x) - cmsEvalToneCurveFloat(expected, x)) * 255 > 1) return 0;
    }
    return 1;
}

int dr_colour_is_srgb(const uint8_t *icc, size_t icc_length) {
    if (icc == NULL || icc_length == 0) return 0;
    pthread_once(&dr_quiet_once, dr_quiet);
    cmsHPROFILE profile = cmsOpenProfileFromMem(icc, (cmsUInt32Number)icc_length);
    if (profile == NULL) return 0;
    cmsHPROFILE srgb = cmsCreate_sRGBProfile();
    int same = srgb != NULL && cmsGetColorSpace(profile) == cmsSigRgbData && cmsIsMatrixShaper(profile);
    /* The colorants (adapted to the D50 connection space) and the curves are the whole
     * transform of a matrix-shaper profile. The media white point is not compared: version 2
     * profiles such as the common "sRGB IEC61966-2.1" store D65 there, version 4 ones D50, and
     * neither changes a perceptual or relative conversion. */
    const cmsTagSignature colorants[] = {cmsSigRedColorantTag, cmsSigGreenColorantTag, cmsSigBlueColorantTag};
    for (int i = 0; same && i < 3; i++) same = dr_near(cmsReadTag(profile, colorants[i]), cmsReadTag(srgb, colorants[i]));
    const cmsTagSignature curves[] = {cmsSigRedTRCTag, cmsSigGreenTRCTag, cmsSigBlueTRCTag};
    for (int i = 0; same && i < 3; i++) same = dr_same_curve(profile, srgb, curves[i]);
    if (srgb != NULL) cmsCloseProfile(srgb);
    cmsCloseProfile(profile);
    return same;
}
