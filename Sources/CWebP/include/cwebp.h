#ifndef DR_CWEBP_H
#define DR_CWEBP_H

/*
 * A thin C layer over libwebp's encoder and muxer, for WebP variants: libwebp reports errors by
 * return value, so no longjmp is involved; this layer releases every libwebp object on every
 * path, and embeds the source's ICC profile (an ICCP chunk, through the muxer) when there is
 * one. Buffers handed to the caller are released with dr_webp_free.
 */

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    DR_WEBP_OK = 0,
    /// The encoder refused the picture (its size, or memory).
    DR_WEBP_ENCODE_FAILED = 1,
    /// The muxer could not add the ICC profile.
    DR_WEBP_MUX_FAILED = 2,
    /// The caller passed invalid arguments.
    DR_WEBP_BAD_ARGUMENT = 3
} dr_webp_code;

/// Encodes packed 8-bit RGB (stride = width * 3) as a lossy WebP of `quality` (1...100),
/// with `icc` (when `icc_length` > 0) as its colour profile. *out is malloc'd by libwebp.
int dr_webp_encode(const uint8_t *rgb, int width, int height, int quality,
                   const uint8_t *icc, size_t icc_length, uint8_t **out, size_t *out_length);

/// The canvas size of a WebP file; 0 when it is not one.
int dr_webp_size(const uint8_t *data, size_t size, int *width, int *height);

/// Releases a buffer that this layer returned.
void dr_webp_free(void *pointer);

#ifdef __cplusplus
}
#endif

#endif
