#ifndef DR_CHEIF_H
#define DR_CHEIF_H

/*
 * A thin C layer over libheif (HEIC, HEIF, AVIF).
 *
 * libheif reports errors by return value, so no longjmp is involved; this layer exists so
 * that every libheif object (context, handle, image, options) is released on every path in
 * one place, and so that the pixel limit is checked against the header before libheif
 * allocates the decoded image. Buffers handed to the caller are released with dr_heif_free.
 */

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    DR_HEIF_OK = 0,
    /// libheif refused the data; the message says why.
    DR_HEIF_CORRUPT = 1,
    /// The data ends before the image does.
    DR_HEIF_TRUNCATED = 2,
    /// width x height is above the caller's pixel limit.
    DR_HEIF_TOO_MANY_PIXELS = 3,
    /// The primary image declares a zero width or height.
    DR_HEIF_ZERO_SIZE = 4,
    /// An allocation failed.
    DR_HEIF_NO_MEMORY = 5,
    /// The image's codec has no decoder in this libheif build.
    DR_HEIF_UNSUPPORTED = 6,
    /// The caller passed invalid arguments.
    DR_HEIF_BAD_ARGUMENT = 7,
    /// The calling thread's deadline (cdeadline.h) had passed before decoding began.
    DR_HEIF_PAST_DEADLINE = 8
} dr_heif_code;

#define DR_HEIF_MESSAGE_MAX 200

typedef struct {
    int code;
    char message[DR_HEIF_MESSAGE_MAX];
} dr_heif_status;

/// The primary image's header. Width and height are the displayed size: the container's
/// transformations (irot, imir, clap) are already applied, as libheif does on decode.
typedef struct {
    int width;
    int height;
    int luma_bits;
    int has_alpha;
    /// 0: none, 1: ICC profile, 2: nclx colour description.
    int color_profile;
    int image_count;
} dr_heif_info;

/// A decoded image: 8-bit RGB, rows packed (stride = width * 3), and its ICC profile.
typedef struct {
    uint8_t *pixels;
    int width;
    int height;
    uint8_t *icc;
    unsigned int icc_length;
} dr_heif_image;

/// Reads the primary image's header. `pixel_limit` bounds width x height (0: no bound).
int dr_heif_probe(const uint8_t *data, size_t size, uint64_t pixel_limit,
                  dr_heif_info *info, dr_heif_status *status);

/// Decodes the primary image, transformations applied, to 8-bit RGB (10- and 12-bit samples
/// are reduced to 8 bits by libheif), reading its ICC profile.
int dr_heif_decode(const uint8_t *data, size_t size, uint64_t pixel_limit,
                   dr_heif_info *info, dr_heif_image *image, dr_heif_status *status);

/// The primary image's first EXIF item, from its TIFF header on (the item's 4-byte offset
/// prefix is skipped). *out is NULL when there is none; at most `max_bytes` are returned.
int dr_heif_exif(const uint8_t *data, size_t size, size_t max_bytes,
                 uint8_t **out, size_t *out_length, dr_heif_status *status);

/// The HEIF flavour of a file by its ftyp box ("image/heic", "image/heif", "image/avif"), as
/// libheif names it; NULL when the bytes are not a HEIF still image.
const char *dr_heif_mime_type(const uint8_t *data, size_t size);

/// Releases a buffer that this layer returned.
void dr_heif_free(void *pointer);

#ifdef __cplusplus
}
#endif

#endif
