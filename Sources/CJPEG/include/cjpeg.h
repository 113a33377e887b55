#ifndef DR_CJPEG_H
#define DR_CJPEG_H

/*
 * A thin C layer over libjpeg(-turbo).
 *
 * libjpeg reports fatal errors by calling error_exit, whose default ends the process.
 * Every function here runs the whole library call inside its own setjmp frame, so a
 * longjmp never crosses a Swift frame, and returns a status code plus a message.
 * Every jpeg_create_* and every allocation is released on every path; buffers handed
 * to the caller are released with dr_jpeg_free.
 */

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Outcome of a shim call.
typedef enum {
    DR_JPEG_OK = 0,
    /// libjpeg refused the data; the message says why.
    DR_JPEG_CORRUPT = 1,
    /// The data ends before the image does (premature end of JPEG data).
    DR_JPEG_TRUNCATED = 2,
    /// The header's width x height is above the caller's pixel limit.
    DR_JPEG_TOO_MANY_PIXELS = 3,
    /// The header declares a zero width or height.
    DR_JPEG_ZERO_SIZE = 4,
    /// 12-bit (or other non-8-bit) samples, which this libjpeg build cannot decode.
    DR_JPEG_UNSUPPORTED_PRECISION = 5,
    /// An allocation failed.
    DR_JPEG_NO_MEMORY = 6,
    /// The caller passed invalid arguments.
    DR_JPEG_BAD_ARGUMENT = 7,
    /// A multi-scan (progressive) file whose whole-image coefficient buffers would exceed
    /// DR_JPEG_COEFFICIENT_BYTES_PER_PIXEL bytes per pixel of the caller's pixel limit.
    DR_JPEG_OVER_MEMORY_CEILING = 8,
    /// The calling thread's deadline (cdeadline.h) passed while decoding.
    DR_JPEG_PAST_DEADLINE = 9
} dr_jpeg_code;

/// The memory ceiling of a progressive decode's coefficient buffers, in bytes per pixel of the
/// pixel limit: 2, so 200 MB under the default limit of 100 million pixels.
#define DR_JPEG_COEFFICIENT_BYTES_PER_PIXEL 2u

/// Room for libjpeg's formatted message (JMSG_LENGTH_MAX is 200).
#define DR_JPEG_MESSAGE_MAX 200

/// Status of a call: code, the library's message and warning count.
typedef struct {
    int code;
    /// libjpeg's message code of the failure (or of the first warning), or -1.
    int library_code;
    /// How many corrupt-data warnings libjpeg emitted (they do not stop a decode).
    long warnings;
    char message[DR_JPEG_MESSAGE_MAX];
    /// The first warning's text, empty when there was none.
    char first_warning[DR_JPEG_MESSAGE_MAX];
} dr_jpeg_status;

/// What the header says. Width and height are filled as soon as the frame header was read,
/// even when a later check fails, so the caller can name the claimed size.
typedef struct {
    int width;
    int height;
    int components;
    /// libjpeg's J_COLOR_SPACE of the stored data.
    int color_space;
    int precision;
    int progressive;
    int arithmetic;
    int adobe_marker;
    int has_icc;
} dr_jpeg_info;

/// A decoded image: 8-bit RGB, rows packed (stride = width * 3), and the embedded ICC profile.
/// For a CMYK or YCCK file decoded with `keep_cmyk`, also the CMYK samples as libjpeg gave them
/// (4 bytes a pixel; `cmyk_inverted` when an Adobe marker says they are stored inverted, 255
/// meaning no ink), so that the caller can convert them through the file's CMYK profile; the
/// RGB pixels are then the decoder's own approximation.
typedef struct {
    uint8_t *pixels;
    int width;
    int height;
    uint8_t *icc;
    unsigned int icc_length;
    uint8_t *cmyk;
    int cmyk_inverted;
} dr_jpeg_image;

/// Reads the header only. `pixel_limit` bounds width x height (0: no bound).
int dr_jpeg_probe(const uint8_t *data, size_t size, uint64_t pixel_limit,
                  dr_jpeg_info *info, dr_jpeg_status *status);

/// Decodes at scale scale_num/8 (1...8), to 8-bit RGB, reading the ICC profile.
/// Premature end of data is an error (DR_JPEG_TRUNCATED), not a grey-padded picture.
/// `fast` selects libjpeg-turbo's faster, slightly less exact IDCT and upsampling; `keep_cmyk`
/// keeps a CMYK file's samples in `image->cmyk` as well.
int dr_jpeg_decode(const uint8_t *data, size_t size, int scale_num, uint64_t pixel_limit,
                   int fast, int keep_cmyk, dr_jpeg_info *info, dr_jpeg_image *image, dr_jpeg_status *status);

/// Encodes 8-bit RGB rows (`stride` bytes apart) as a JPEG with only the markers libjpeg
/// always writes (SOI, JFIF APP0, tables, frame) plus, when `icc` is not NULL, the ICC profile.
/// On success *out (released with dr_jpeg_free) holds *out_length bytes.
int dr_jpeg_encode(const uint8_t *rgb, int width, int height, size_t stride, int quality,
                   int progressive, int optimize, const uint8_t *icc, unsigned int icc_length,
                   uint8_t **out, unsigned long *out_length, dr_jpeg_status *status);

/// Releases a buffer that this layer returned.
void dr_jpeg_free(void *pointer);

/// Where the processor has AVX2, decodes at 3/8, 5/8 and 6/8 run AVX2 builds of libjpeg-turbo's
/// 3x3, 5x5, 6x6, 10x10 and 12x12 inverse DCTs (idct.c), and encodes an AVX2 build of its forward
/// DCT and quantisation (fdct.c), each bit for bit the library's. With `on`, this thread's decodes
/// and encodes use the library's own transforms instead: the tests compare the two.
void dr_jpeg_prefer_library_transforms(int on);

/// 1 where this processor and libjpeg build take the AVX2 inverse DCTs, else 0.
int dr_jpeg_avx2_idct_available(void);

/// For the tests: sets up an encoder at `quality` (with `random_tables`, tables drawn from
/// `seed`, values 1...255 and 1...40) and makes `blocks` runs of generated samples for each of
/// its three components, one block and two side by side in turn, through the library's forward
/// DCT method and the AVX2 one. Returns how many runs came out differently; -1 when the AVX2 one cannot serve here (no AVX2) or the
/// arguments were refused (`status`).
long dr_jpeg_fdct_mismatches(int quality, uint32_t seed, long blocks, int random_tables, dr_jpeg_status *status);

/// Starts a decode of `data` at scale_num/8 and, for each component whose inverse DCT has an AVX2
/// build, runs `blocks` generated coefficient blocks (every seventh with a random quantisation
/// table) through the library's function and the AVX2 one. Returns how many blocks came out
/// differently, with `*components` the number of components checked; -1 when there were none
/// (no AVX2, or no component at a size with an AVX2 build) or the data was refused (`status`).
long dr_jpeg_idct_mismatches(const uint8_t *data, size_t size, int scale_num, uint32_t seed, long blocks,
                             int *components, dr_jpeg_status *status);

#ifdef __cplusplus
}
#endif

#endif
