/*
 * libpng shim: every library call runs inside a setjmp frame owned by this file.
 * See include/cpng.h for the contract.
 */
#include "cpng.h"
#include "cdeadline.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <png.h>

/* Largest ancillary chunk libpng may allocate (an ICC profile is far smaller). */
#define DR_PNG_CHUNK_MALLOC_MAX (8u * 1024u * 1024u)
/* Most sPLT/text/unknown chunks kept before libpng refuses more. */
#define DR_PNG_CHUNK_CACHE_MAX 128u
/* The PNG format's own dimension ceiling (2^31 - 1). */
#define DR_PNG_DIMENSION_MAX 0x7fffffffu

/* Zero bytes the reader may invent past the end before it calls the file truncated. */
#define DR_PNG_PADDING_MAX 65536u
/* Compressed bytes libpng may read once the last row is being read. The last row of a real
   file needs a few kilobytes at most; past the row, libpng would inflate whatever image data
   remains (a zlib bomb: gigabytes of output from a few megabytes) only to discard it. */
#define DR_PNG_LAST_ROW_INPUT_MAX (1u << 20)

/* The input as a cursor, plus the status that the callbacks fill. */
typedef struct {
    const uint8_t *data;
    size_t size;
    size_t offset;
    /* Zero bytes handed out past the end of the data. */
    size_t padded;
    /* Set while the last row is read: every pixel row is in the caller's buffer by the time libpng
       skips the rest of the image data, so running out of data then is not truncation. */
    int final_row;
    /* Set when the reader stopped libpng after the last row. */
    int complete;
    /* Compressed bytes read since the last row began. */
    size_t after_final;
    /* Set when the thread's deadline passed while reading. */
    int past_deadline;
    dr_png_status *status;
} dr_png_reader;

/*
 * The reader on the heap, made by the public functions around the ones that call setjmp: the
 * callbacks change it between setjmp and longjmp, and C leaves an automatic object so changed
 * indeterminate after the jump (an optimising compiler may read it as it was at the setjmp).
 */
static dr_png_reader *dr_reader_new(const uint8_t *data, size_t size, dr_png_status *status) {
    dr_png_reader *reader = calloc(1, sizeof(*reader));
    if (reader == NULL) return NULL;
    reader->data = data;
    reader->size = size;
    reader->status = status;
    return reader;
}

/*
 * libpng reads image data in blocks of up to 8 KiB of the IDAT chunk's declared length, so a
 * file whose last IDAT chunk claims more bytes than it has (but whose compressed stream is
 * complete) would fail though every pixel is there. Past the end the reader hands out zeros:
 * a complete stream never looks at them, and an incomplete one fails in zlib, which is then
 * reported as truncation because padding was used.
 */
static void dr_png_read(png_structp png, png_bytep out, size_t length) {
    dr_png_reader *reader = (dr_png_reader *)png_get_io_ptr(png);
    const size_t available = reader->size - reader->offset;
    const size_t copied = length < available ? length : available;
    /* Each read is at most 8 KiB of compressed data: the deadline is checked that often. */
    if (darkroom_past_deadline()) {
        reader->past_deadline = 1;
        snprintf(reader->status->message, DR_PNG_MESSAGE_MAX, "decoding stopped at the photo's deadline");
        png_longjmp(png, 1);
    }
    if (reader->final_row) {
        reader->after_final += length;
        if (reader->after_final > DR_PNG_LAST_ROW_INPUT_MAX) {
            reader->complete = 1;
            png_longjmp(png, 1);
        }
    }
    memcpy(out, reader->data + reader->offset, copied);
    reader->offset += copied;
    if (copied < length) {
        reader->padded += length - copied;
        if (reader->padded > DR_PNG_PADDING_MAX) {
            if (reader->final_row) {
                reader->complete = 1;
                png_longjmp(png, 1);
            }
            png_error(png, "file is truncated (premature end of PNG data)");
        }
        memset(out + copied, 0, length - copied);
    }
}

static void dr_png_error(png_structp png, png_const_charp message) {
    dr_png_reader *reader = (dr_png_reader *)png_get_error_ptr(png);
    snprintf(reader->status->message, DR_PNG_MESSAGE_MAX, "%s", message ? message : "libpng error");
    png_longjmp(png, 1);
}

/* Warnings are counted and kept, never printed: the caller decides what to log. */
static void dr_png_warning(png_structp png, png_const_charp message) {
    dr_png_reader *reader = (dr_png_reader *)png_get_error_ptr(png);
    reader->status->warnings++;
    if (reader->status->first_warning[0] == 0)
        snprintf(reader->status->first_warning, DR_PNG_MESSAGE_MAX, "%s", message ? message : "");
}

static void dr_status_reset(dr_png_status *status) {
    status->code = DR_PNG_OK;
    status->warnings = 0;
    status->message[0] = 0;
    status->first_warning[0] = 0;
}

static uint32_t dr_be32(const uint8_t *p) {
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | (uint32_t)p[3];
}

/*
 * Checks the IHDR fields before libpng sees the file: IHDR is the first chunk at a fixed
 * offset, so a claimed size is refused before any allocation, with the size named.
 */
static int dr_precheck(const uint8_t *data, size_t size, uint64_t pixel_limit, dr_png_info *info,
                       dr_png_status *status) {
    static const uint8_t signature[8] = {137, 80, 78, 71, 13, 10, 26, 10};
    if (size < 8 || memcmp(data, signature, 8) != 0) {
        snprintf(status->message, DR_PNG_MESSAGE_MAX, "not a PNG signature");
        return DR_PNG_CORRUPT;
    }
    if (size < 8 + 8 + 13) {
        snprintf(status->message, DR_PNG_MESSAGE_MAX, "file is truncated (no complete IHDR chunk)");
        return DR_PNG_TRUNCATED;
    }
    if (memcmp(data + 12, "IHDR", 4) != 0) {
        snprintf(status->message, DR_PNG_MESSAGE_MAX, "IHDR is not the first chunk");
        return DR_PNG_CORRUPT;
    }
    const uint32_t width = dr_be32(data + 16), height = dr_be32(data + 20);
    info->width = width > DR_PNG_DIMENSION_MAX ? -1 : (int)width;
    info->height = height > DR_PNG_DIMENSION_MAX ? -1 : (int)height;
    info->bit_depth = data[24];
    info->color_type = data[25];
    info->interlaced = data[28] != 0;
    if (width == 0 || height == 0) return DR_PNG_ZERO_SIZE;
    if (pixel_limit != 0 && (uint64_t)width * (uint64_t)height > pixel_limit) return DR_PNG_TOO_MANY_PIXELS;
    return DR_PNG_OK;
}

/* Chunks that rendering never needs: libpng skips them unread (no inflating of text bombs). */
static void dr_ignore_chunks(png_structp png) {
    static const png_byte ignored[] =
        "tEXt\0zTXt\0iTXt\0eXIf\0sPLT\0hIST\0pCAL\0sCAL\0tIME\0sTER\0pHYs\0oFFs\0bKGD\0cHRM\0gAMA\0sBIT\0sRGB";
    png_set_keep_unknown_chunks(png, PNG_HANDLE_CHUNK_NEVER, ignored, (int)(sizeof(ignored) / 5));
    png_set_keep_unknown_chunks(png, PNG_HANDLE_CHUNK_NEVER, NULL, 0);
}

static void dr_configure(png_structp png, dr_png_reader *reader, uint64_t pixel_limit) {
    png_set_read_fn(png, reader, dr_png_read);
    png_uint_32 dimension_max = DR_PNG_DIMENSION_MAX;
    if (pixel_limit != 0 && pixel_limit < dimension_max) dimension_max = (png_uint_32)pixel_limit;
    png_set_user_limits(png, dimension_max, dimension_max);
    png_set_chunk_malloc_max(png, DR_PNG_CHUNK_MALLOC_MAX);
    png_set_chunk_cache_max(png, DR_PNG_CHUNK_CACHE_MAX);
    dr_ignore_chunks(png);
}

static void dr_fill_info(png_structp png, png_infop info_ptr, dr_png_info *info) {
    info->width = (int)png_get_image_width(png, info_ptr);
    info->height = (int)png_get_image_height(png, info_ptr);
    info->bit_depth = png_get_bit_depth(png, info_ptr);
    info->color_type = png_get_color_type(png, info_ptr);
    info->interlaced = png_get_interlace_type(png, info_ptr) != PNG_INTERLACE_NONE;
    info->has_icc = png_get_valid(png, info_ptr, PNG_INFO_iCCP) != 0;
    info->has_alpha = (info->color_type & PNG_COLOR_MASK_ALPHA) != 0 ||
                      png_get_valid(png, info_ptr, PNG_INFO_tRNS) != 0;
}

static int dr_png_probe_with(dr_png_reader *reader, const uint8_t *data, size_t size, uint64_t pixel_limit,
                             dr_png_info *info, dr_png_status *status) {
    png_structp png = NULL;
    png_infop info_ptr = NULL;

    dr_status_reset(status);
    memset(info, 0, sizeof(*info));
    if (data == NULL) return status->code = DR_PNG_BAD_ARGUMENT;
    status->code = dr_precheck(data, size, pixel_limit, info, status);
    if (status->code != DR_PNG_OK) return status->code;

    png = png_create_read_struct(PNG_LIBPNG_VER_STRING, reader, dr_png_error, dr_png_warning);
    if (png == NULL) return status->code = DR_PNG_NO_MEMORY;
    info_ptr = png_create_info_struct(png);
    if (info_ptr == NULL) {
        png_destroy_read_struct(&png, NULL, NULL);
        return status->code = DR_PNG_NO_MEMORY;
    }
    if (setjmp(png_jmpbuf(png))) {
        status->code = reader->past_deadline ? DR_PNG_PAST_DEADLINE : reader->padded ? DR_PNG_TRUNCATED : DR_PNG_CORRUPT;
        png_destroy_read_struct(&png, &info_ptr, NULL);
        return status->code;
    }
    dr_configure(png, reader, pixel_limit);
    png_read_info(png, info_ptr);
    dr_fill_info(png, info_ptr, info);
    png_destroy_read_struct(&png, &info_ptr, NULL);
    return status->code;
}

int dr_png_probe(const uint8_t *data, size_t size, uint64_t pixel_limit,
                 dr_png_info *info, dr_png_status *status) {
    dr_png_reader *const reader = dr_reader_new(data, size, status);
    if (reader == NULL) {
        dr_status_reset(status);
        return status->code = DR_PNG_NO_MEMORY;
    }
    const int code = dr_png_probe_with(reader, data, size, pixel_limit, info, status);
    free(reader);
    return code;
}

/* Composites RGBA over the background into packed RGB, in place (the output never overtakes). */
static void dr_flatten(uint8_t *pixels, size_t count, uint32_t background_rgb) {
    const unsigned br = (background_rgb >> 16) & 0xff, bg = (background_rgb >> 8) & 0xff, bb = background_rgb & 0xff;
    const uint8_t *in = pixels;
    uint8_t *out = pixels;
    for (size_t i = 0; i < count; i++) {
        const unsigned a = in[3], na = 255 - a;
        out[0] = (uint8_t)((in[0] * a + br * na + 127) / 255);
        out[1] = (uint8_t)((in[1] * a + bg * na + 127) / 255);
        out[2] = (uint8_t)((in[2] * a + bb * na + 127) / 255);
        in += 4;
        out += 3;
    }
}

/* Flattens, releases libpng and hands the pixels and profile to the caller. */
static int dr_png_finish(png_structp *png, png_infop *info_ptr, uint8_t *pixels, png_bytep *rows, uint8_t *icc,
                         uint32_t background_rgb, dr_png_image *image, dr_png_status *status) {
    const size_t width = png_get_image_width(*png, *info_ptr), height = png_get_image_height(*png, *info_ptr);
    const size_t channels = png_get_channels(*png, *info_ptr);
    free(rows);
    if (channels == 4) dr_flatten(pixels, width * height, background_rgb);
    png_destroy_read_struct(png, info_ptr, NULL);
    image->pixels = pixels;
    image->width = (int)width;
    image->height = (int)height;
    image->icc = icc;
    status->code = DR_PNG_OK;
    return DR_PNG_OK;
}

static int dr_png_decode_with(dr_png_reader *reader, const uint8_t *data, size_t size, uint64_t pixel_limit,
                              uint32_t background_rgb, dr_png_info *info, dr_png_image *image, dr_png_status *status) {
    png_structp png = NULL;
    png_infop info_ptr = NULL;
    uint8_t *volatile pixels = NULL;
    png_bytep *volatile rows = NULL;
    uint8_t *volatile icc = NULL;

    dr_status_reset(status);
    memset(info, 0, sizeof(*info));
    memset(image, 0, sizeof(*image));
    if (data == NULL) return status->code = DR_PNG_BAD_ARGUMENT;
    status->code = dr_precheck(data, size, pixel_limit, info, status);
    if (status->code != DR_PNG_OK) return status->code;

    png = png_create_read_struct(PNG_LIBPNG_VER_STRING, reader, dr_png_error, dr_png_warning);
    if (png == NULL) return status->code = DR_PNG_NO_MEMORY;
    info_ptr = png_create_info_struct(png);
    if (info_ptr == NULL) {
        png_destroy_read_struct(&png, NULL, NULL);
        return status->code = DR_PNG_NO_MEMORY;
    }
    if (setjmp(png_jmpbuf(png))) {
        if (reader->complete) {
            /* Stopped after the last row (a final IDAT chunk that claims more bytes than the file has). */
            status->message[0] = 0;
            return dr_png_finish(&png, &info_ptr, pixels, rows, icc, background_rgb, image, status);
        }
        status->code = reader->past_deadline ? DR_PNG_PAST_DEADLINE : reader->padded ? DR_PNG_TRUNCATED : DR_PNG_CORRUPT;
        free(pixels);
        free(rows);
        free(icc);
        png_destroy_read_struct(&png, &info_ptr, NULL);
        return status->code;
    }
    dr_configure(png, reader, pixel_limit);
    png_read_info(png, info_ptr);
    dr_fill_info(png, info_ptr, info);
    /*
     * IHDR and PLTE were CRC-checked strictly above. A bad CRC on image data is only warned
     * about: zlib's own Adler-32 still guards those bytes, and other decoders (Pillow) accept it.
     */
    png_set_crc_action(png, PNG_CRC_WARN_USE, PNG_CRC_DEFAULT);

    png_charp name = NULL;
    int compression = 0;
    png_bytep profile = NULL;
    png_uint_32 profile_length = 0;
    if (png_get_iCCP(png, info_ptr, &name, &compression, &profile, &profile_length) && profile_length > 0) {
        icc = malloc(profile_length);
        if (icc == NULL) png_error(png, "out of memory for the ICC profile");
        memcpy(icc, profile, profile_length);
        image->icc_length = profile_length;
    }

    const int color_type = info->color_type;
    if (color_type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
    if (color_type == PNG_COLOR_TYPE_GRAY && info->bit_depth < 8) png_set_expand_gray_1_2_4_to_8(png);
    if (png_get_valid(png, info_ptr, PNG_INFO_tRNS)) png_set_tRNS_to_alpha(png);
    if (info->bit_depth == 16) png_set_scale_16(png);
    if (color_type == PNG_COLOR_TYPE_GRAY || color_type == PNG_COLOR_TYPE_GRAY_ALPHA) png_set_gray_to_rgb(png);
    const int passes = png_set_interlace_handling(png);
    png_read_update_info(png, info_ptr);

    const size_t width = png_get_image_width(png, info_ptr), height = png_get_image_height(png, info_ptr);
    const size_t channels = png_get_channels(png, info_ptr);
    const size_t rowbytes = png_get_rowbytes(png, info_ptr);
    if ((channels != 3 && channels != 4) || rowbytes != width * channels)
        png_error(png, "unexpected pixel layout after expansion");
    pixels = malloc(rowbytes * height);
    rows = malloc(sizeof(png_bytep) * height);
    if (pixels == NULL || rows == NULL) png_error(png, "out of memory for the image");
    for (size_t y = 0; y < height; y++) rows[y] = pixels + y * rowbytes;
    /* Row by row (as png_read_image does) so that the reader knows when the last row is read. */
    for (int pass = 0; pass < passes; pass++) {
        for (size_t y = 0; y < height; y++) {
            if (pass == passes - 1 && y == height - 1) reader->final_row = 1;
            png_read_row(png, rows[y], NULL);
        }
    }
    /* png_read_end is not called: chunks after the image data carry nothing rendering needs. */
    return dr_png_finish(&png, &info_ptr, pixels, rows, icc, background_rgb, image, status);
}

int dr_png_decode(const uint8_t *data, size_t size, uint64_t pixel_limit, uint32_t background_rgb,
                  dr_png_info *info, dr_png_image *image, dr_png_status *status) {
    dr_png_reader *const reader = dr_reader_new(data, size, status);
    if (reader == NULL) {
        dr_status_reset(status);
        return status->code = DR_PNG_NO_MEMORY;
    }
    const int code = dr_png_decode_with(reader, data, size, pixel_limit, background_rgb, info, image, status);
    free(reader);
    return code;
}

void dr_png_free(void *pointer) { free(pointer); }
