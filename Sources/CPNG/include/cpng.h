#ifndef DR_CPNG_H
#define DR_CPNG_H

/*
 * A thin C layer over libpng.
 *
 * libpng reports fatal errors by longjmp to png_jmpbuf. Every function here runs the whole
 * library call inside its own setjmp frame, so a longjmp never crosses a Swift frame, and
 * returns a status code plus a message. Every png_create_* and allocation is released on
 * every path; buffers handed to the caller are released with dr_png_free.
 */

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Outcome of a shim call.
typedef enum {
    DR_PNG_OK = 0,
    /// libpng refused the data; the message says why.
    DR_PNG_CORRUPT = 1,
    /// The data ends before the image does.
    DR_PNG_TRUNCATED = 2,
    /// The header's width x height is above the caller's pixel limit.
    DR_PNG_TOO_MANY_PIXELS = 3,
    /// The header declares a zero width or height.
    DR_PNG_ZERO_SIZE = 4,
    /// An allocation failed.
    DR_PNG_NO_MEMORY = 5,
    /// The caller passed invalid arguments.
    DR_PNG_BAD_ARGUMENT = 6,
    /// The calling thread's deadline (cdeadline.h) passed while decoding.
    DR_PNG_PAST_DEADLINE = 7
} dr_png_code;

/// Room for a message.
#define DR_PNG_MESSAGE_MAX 200

/// Status of a call: code, the library's message and warning count.
typedef struct {
    int code;
    long warnings;
    char message[DR_PNG_MESSAGE_MAX];
    char first_warning[DR_PNG_MESSAGE_MAX];
} dr_png_status;

/// What the IHDR chunk says (filled as soon as it was read, even when a later check fails).
typedef struct {
    int width;
    int height;
    int bit_depth;
    /// PNG colour type: 0 gray, 2 RGB, 3 palette, 4 gray+alpha, 6 RGBA.
    int color_type;
    int interlaced;
    int has_icc;
    int has_alpha;
} dr_png_info;

/// A decoded image: 8-bit RGB, rows packed (stride = width * 3), alpha flattened on the
/// background, and the embedded ICC profile (iCCP), if any.
typedef struct {
    uint8_t *pixels;
    int width;
    int height;
    uint8_t *icc;
    unsigned int icc_length;
} dr_png_image;

/// Reads the chunks before the image data. `pixel_limit` bounds width x height (0: no bound).
int dr_png_probe(const uint8_t *data, size_t size, uint64_t pixel_limit,
                 dr_png_info *info, dr_png_status *status);

/// Decodes every colour type, bit depth and interlacing to 8-bit RGB; transparency is
/// composited over the background colour (background_rgb: 0xRRGGBB).
int dr_png_decode(const uint8_t *data, size_t size, uint64_t pixel_limit, uint32_t background_rgb,
                  dr_png_info *info, dr_png_image *image, dr_png_status *status);

/// Releases a buffer that this layer returned.
void dr_png_free(void *pointer);

#ifdef __cplusplus
}
#endif

#endif
