#ifndef DR_CCOLOUR_H
#define DR_CCOLOUR_H

/*
 * A thin C layer over Little CMS (lcms2): converts a decoded picture from the colour space its
 * embedded ICC profile describes (Display P3, Adobe RGB, ...) to sRGB, so that an app or a
 * browser that ignores profiles still shows the right colours. lcms2 reports errors by return
 * value (its log handler is silenced here); every profile and transform is released on every
 * path.
 */

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    DR_COLOUR_OK = 0,
    /// The profile could not be read, is not an RGB one, or cannot be transformed to sRGB:
    /// the pixels are untouched.
    DR_COLOUR_UNUSABLE_PROFILE = 1,
    /// The caller passed invalid arguments.
    DR_COLOUR_BAD_ARGUMENT = 2
} dr_colour_code;

/// Converts `pixel_count` packed 8-bit RGB pixels in place from the space of `icc` to sRGB
/// (perceptual intent: relative colorimetric for the matrix profiles cameras and phones write).
/// A matrix-shaper profile (three tone curves and a matrix, as phones and cameras write) takes
/// a path of two tables and integer arithmetic, within one level of lcms2's; any other goes
/// through lcms2.
int dr_colour_to_srgb(uint8_t *rgb, size_t pixel_count, const uint8_t *icc, size_t icc_length);

/// The same conversion through lcms2 whatever the profile: the general path, and the reference
/// the matrix-shaper one is tested against.
int dr_colour_to_srgb_lcms(uint8_t *rgb, size_t pixel_count, const uint8_t *icc, size_t icc_length);

/// Converts `pixel_count` CMYK pixels (4 bytes each; `inverted` when 255 means no ink, as
/// Adobe writes them) through the CMYK profile `icc` to sRGB, into `rgb` (3 bytes each).
int dr_colour_cmyk_to_srgb(const uint8_t *cmyk, int inverted, uint8_t *rgb, size_t pixel_count,
                           const uint8_t *icc, size_t icc_length);

/// 1 when `icc` is a CMYK profile (readable by lcms2).
int dr_colour_is_cmyk(const uint8_t *icc, size_t icc_length);

/// 1 when `icc` is an RGB profile whose primaries and white point are sRGB's (within 0.001 in
/// XYZ) and whose tone curves are sRGB's (within one level of 255): converting would change
/// nothing. 0 otherwise, and for a profile that cannot be read.
int dr_colour_is_srgb(const uint8_t *icc, size_t icc_length);

#ifdef __cplusplus
}
#endif

#endif
