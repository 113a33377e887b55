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
    /// The nclx box's transfer characteristics and colour primaries (ITU-T H.273 code points:
    /// transfer 16 PQ, 18 HLG; primaries 1 BT.709, 9 BT.2020, 11 DCI-P3, 12 Display P3), 0 without one.
    int transfer;
    int primaries;
    /// 1 when the decode tone-maps this HDR image to SDR sRGB (see dr_hdr_to_sdr): an nclx box
    /// with the PQ or HLG transfer and BT.2020 or P3 primaries, more than 8 bits, no ICC profile.
    int hdr;
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
/// are reduced to 8 bits by libheif), reading its ICC profile. An HDR image (info->hdr) is
/// decoded at its own bit depth instead and tone-mapped to SDR sRGB by dr_hdr_to_sdr.
int dr_heif_decode(const uint8_t *data, size_t size, uint64_t pixel_limit,
                   dr_heif_info *info, dr_heif_image *image, dr_heif_status *status);

/// The primary image's first EXIF item, from its TIFF header on (the item's 4-byte offset
/// prefix is skipped). *out is NULL when there is none; at most `max_bytes` are returned.
int dr_heif_exif(const uint8_t *data, size_t size, size_t max_bytes,
                 uint8_t **out, size_t *out_length, dr_heif_status *status);

/// The HEIF flavour of a file by its ftyp box ("image/heic", "image/heif", "image/avif"), as
/// libheif names it; NULL when the bytes are not a HEIF still image.
const char *dr_heif_mime_type(const uint8_t *data, size_t size);

/// The H.273 transfer characteristics this layer tone-maps.
#define DR_HDR_PQ 16
#define DR_HDR_HLG 18
/// SDR white in cd/m2: BT.2408's HDR reference white (203) is shown as sRGB's white.
#define DR_HDR_SDR_WHITE 203.0

/// HDR to SDR sRGB: `plane` holds width x height pixels of three 16-bit little-endian samples
/// (rows `stride` bytes apart) of which the low `bits` are used, coded with `transfer` (PQ or
/// HLG) in the colour space of `primaries` (rx ry gx gy bx by wx wy). Each pixel is linearised
/// (PQ EOTF; HLG inverse OETF and BT.2100's OOTF for a 1000 cd/m2 display), its luminance
/// tone-mapped from `source_peak` to DR_HDR_SDR_WHITE by ITU-R BT.2390's EETF (the channels
/// scaled by the same factor), converted to sRGB's primaries (3x3 matrix, Bradford-adapted to
/// D65 where the white differs), brought into the gamut towards its own luminance, and encoded
/// with the sRGB transfer into `rgb` (width * 3 bytes a row, packed). 0, -1 for bad arguments,
/// -2 when out of memory.
int dr_hdr_to_sdr(const uint8_t *plane, size_t stride, int width, int height, int bits, int transfer,
                  const double primaries[8], double source_peak, uint8_t *rgb);

/// The source peak the tone mapping assumes: HLG's nominal 1000 cd/m2; for PQ the content's
/// MaxCLL, else the mastering display's peak, else 1000 (0 meaning absent).
double dr_hdr_source_peak(int transfer, double max_content_light, double mastering_peak);

/// BT.2390's EETF alone: `nits` of a source up to `source_peak` to cd/m2 on the SDR display.
double dr_hdr_tone_map_luminance(double nits, double source_peak);

/// The 3x3 matrix from linear RGB in `primaries` to linear sRGB (row-major), and the source's
/// luminance coefficients. 0 when the primaries are degenerate.
int dr_hdr_matrix(const double primaries[8], double matrix[9], double luma[3]);

/// Releases a buffer that this layer returned.
void dr_heif_free(void *pointer);

#ifdef __cplusplus
}
#endif

#endif
