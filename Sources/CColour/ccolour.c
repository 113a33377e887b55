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

int dr_colour_to_srgb(uint8_t *rgb, size_t pixel_count, const uint8_t *icc, size_t icc_length) {
    return dr_transform(rgb, TYPE_RGB_8, 3, cmsSigRgbData, rgb, pixel_count, icc, icc_length);
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
