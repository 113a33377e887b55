/*
 * libjpeg shim: every library call runs inside a setjmp frame owned by this file.
 * See include/cjpeg.h for the contract.
 */
#include "cjpeg.h"
#include "cdeadline.h"
#include "fdct.h"
#include "idct.h"
#include "transforms.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <jerror.h>

/* ---- the AVX2 transforms' two questions (transforms.h) ---- */

static int has_avx2;
static pthread_once_t has_avx2_once = PTHREAD_ONCE_INIT;

static void ask_for_avx2(void) { has_avx2 = __builtin_cpu_supports("avx2") ? 1 : 0; }

int dr_jpeg_processor_has_avx2(void) {
    pthread_once(&has_avx2_once, ask_for_avx2);
    return has_avx2;
}

static _Thread_local int library_transforms_only = 0;

void dr_jpeg_prefer_library_transforms(int on) { library_transforms_only = on ? 1 : 0; }

int dr_jpeg_library_transforms_only(void) { return library_transforms_only; }

/* libjpeg's error manager, extended with the jump target and the status to fill. */
typedef struct {
    struct jpeg_error_mgr base;
    jmp_buf jump;
    dr_jpeg_status *status;
    int truncated;
    int past_deadline;
} dr_error_mgr;

static void dr_copy_message(j_common_ptr cinfo, char *buffer) {
    char text[JMSG_LENGTH_MAX];
    text[0] = 0;
    (*cinfo->err->format_message)(cinfo, text);
    snprintf(buffer, DR_JPEG_MESSAGE_MAX, "%s", text);
}

/* Fatal errors: record the message and jump back into the shim function. */
static void dr_error_exit(j_common_ptr cinfo) {
    dr_error_mgr *err = (dr_error_mgr *)cinfo->err;
    dr_copy_message(cinfo, err->status->message);
    err->status->library_code = err->base.msg_code;
    longjmp(err->jump, 1);
}

/*
 * Warnings (msg_level -1) and trace messages (>= 0). The default prints to stderr;
 * here nothing is printed. Premature end of data is fatal: libjpeg would otherwise pad
 * the rest of the picture with grey, and a half-grey variant is worse than a clear refusal.
 * Other corrupt-data warnings (extraneous bytes, a bad Huffman code in one MCU) are counted
 * and the decode goes on, as most viewers do.
 */
static void dr_emit_message(j_common_ptr cinfo, int msg_level) {
    dr_error_mgr *err = (dr_error_mgr *)cinfo->err;
    if (msg_level >= 0) return;
    err->base.num_warnings++;
    err->status->warnings = err->base.num_warnings;
    if (err->status->first_warning[0] == 0) {
        dr_copy_message(cinfo, err->status->first_warning);
    }
    if (err->base.msg_code == JWRN_JPEG_EOF) {
        err->truncated = 1;
        dr_copy_message(cinfo, err->status->message);
        err->status->library_code = err->base.msg_code;
        longjmp(err->jump, 1);
    }
}

static void dr_output_message(j_common_ptr cinfo) { (void)cinfo; }

/*
 * libjpeg calls this once per scanline call and once per row of MCUs while it reads the scans
 * of a progressive file: the thread's deadline (cdeadline.h) is checked there, and a decode
 * past it jumps out like an error.
 */
static void dr_progress(j_common_ptr cinfo) {
    if (!darkroom_past_deadline()) return;
    dr_error_mgr *err = (dr_error_mgr *)cinfo->err;
    err->past_deadline = 1;
    snprintf(err->status->message, DR_JPEG_MESSAGE_MAX, "decoding stopped at the photo's deadline");
    longjmp(err->jump, 1);
}

static void dr_status_reset(dr_jpeg_status *status) {
    status->code = DR_JPEG_OK;
    status->library_code = -1;
    status->warnings = 0;
    status->message[0] = 0;
    status->first_warning[0] = 0;
}

static void dr_install_errors(dr_error_mgr *err, dr_jpeg_status *status) {
    jpeg_std_error(&err->base);
    err->base.error_exit = dr_error_exit;
    err->base.emit_message = dr_emit_message;
    err->base.output_message = dr_output_message;
    err->status = status;
    err->truncated = 0;
    err->past_deadline = 0;
}

/*
 * A shim function's libjpeg object and error manager, on the heap. After a longjmp, C leaves
 * indeterminate every automatic object changed since the setjmp, and an optimising compiler does
 * use that: with both on the stack, the -O2 build's error path read the decompressor's fields
 * as they were before the header was read, so a 60000x60000 header was named corrupt instead of
 * over the pixel limit. Each function reaches them through a pointer set before its setjmp and
 * never changed, which the jump leaves intact.
 */
/* A growing in-memory destination owned by this file, so every path knows the live buffer. */
typedef struct {
    struct jpeg_destination_mgr pub;
    uint8_t *buffer;
    size_t capacity;
    size_t length;
} dr_memory_destination;

typedef struct {
    /* Both of libjpeg's objects begin with its common fields, which jpeg_destroy reads. */
    union {
        struct jpeg_common_struct common;
        struct jpeg_decompress_struct decompress;
        struct jpeg_compress_struct compress;
    } object;
    dr_error_mgr err;
    /* dr_jpeg_encode's output, handed to the caller (dr_session_free leaves its buffer). */
    dr_memory_destination destination;
    /* jpeg_mem_dest's buffer, for a function that writes there. */
    unsigned char *memory;
    unsigned long memory_length;
} dr_session;

static dr_session *dr_session_new(dr_jpeg_status *status) {
    dr_session *s = calloc(1, sizeof(*s));
    if (s == NULL) return NULL;
    dr_install_errors(&s->err, status);
    s->object.common.err = &s->err.base;
    return s;
}

/* Safe before jpeg_create_* too: libjpeg destroys nothing it has not made. */
static void dr_session_free(dr_session *s) {
    jpeg_destroy(&s->object.common);
    free(s->memory);
    free(s);
}

static void dr_fill_info(const struct jpeg_decompress_struct *cinfo, dr_jpeg_info *info) {
    info->width = (int)cinfo->image_width;
    info->height = (int)cinfo->image_height;
    info->components = cinfo->num_components;
    info->color_space = (int)cinfo->jpeg_color_space;
    info->precision = cinfo->data_precision;
    info->progressive = cinfo->progressive_mode ? 1 : 0;
    info->arithmetic = cinfo->arith_code ? 1 : 0;
    info->adobe_marker = cinfo->saw_Adobe_marker ? 1 : 0;
}

/* Classifies a failure after the jump: truncation, precision, zero size or plain corruption. */
static int dr_failure_code(const dr_error_mgr *err, const struct jpeg_decompress_struct *cinfo) {
    if (err->past_deadline) return DR_JPEG_PAST_DEADLINE;
    if (err->truncated || err->base.msg_code == JERR_INPUT_EOF || err->base.msg_code == JERR_INPUT_EMPTY)
        return DR_JPEG_TRUNCATED;
    if (err->base.msg_code == JERR_BAD_PRECISION) return DR_JPEG_UNSUPPORTED_PRECISION;
    if (err->base.msg_code == JERR_EMPTY_IMAGE && (cinfo->image_width == 0 || cinfo->image_height == 0))
        return DR_JPEG_ZERO_SIZE;
    if (err->base.msg_code == JERR_OUT_OF_MEMORY) return DR_JPEG_NO_MEMORY;
    return DR_JPEG_CORRUPT;
}

/* The header's claimed size against the limit; libjpeg has stored it once SOF was read. */
static int dr_over_limit(const struct jpeg_decompress_struct *cinfo, uint64_t pixel_limit) {
    if (pixel_limit == 0) return 0;
    return (uint64_t)cinfo->image_width * (uint64_t)cinfo->image_height > pixel_limit;
}

/* A decode's failure after the jump, with what the header said: a size above the limit is named
 * as such whatever else went wrong after the frame header was read. */
static int dr_decode_failure(dr_session *s, uint64_t pixel_limit, dr_jpeg_info *info) {
    dr_fill_info(&s->object.decompress, info);
    return dr_over_limit(&s->object.decompress, pixel_limit) ? DR_JPEG_TOO_MANY_PIXELS
                                                             : dr_failure_code(&s->err, &s->object.decompress);
}

/* libjpeg-turbo sizes its working memory from the header; this bounds it as well. */
static long dr_memory_bound(uint64_t pixel_limit) {
    const uint64_t per_pixel = 16; /* coefficients (2 bytes x up to 4 components) and slack */
    const uint64_t floor_bytes = 64u << 20;
    uint64_t bound = pixel_limit == 0 ? 0 : pixel_limit * per_pixel;
    if (bound != 0 && bound < floor_bytes) bound = floor_bytes;
    if (bound > (uint64_t)0x7fffffff * 16) bound = (uint64_t)0x7fffffff * 16;
    return (long)bound;
}

/*
 * Bytes of coefficients libjpeg holds for the whole image when the file has several scans
 * (progressive, or a multi-scan baseline): 64 coefficients of 2 bytes per block per component,
 * allocated (and zeroed) before any row is output, whatever the file's own size. Zero for a
 * single-scan file, which is decoded a band of rows at a time.
 */
static uint64_t dr_coefficient_bytes(struct jpeg_decompress_struct *cinfo) {
    if (!jpeg_has_multiple_scans(cinfo)) return 0;
    uint64_t total = 0;
    const uint64_t max_h = (uint64_t)cinfo->max_h_samp_factor * DCTSIZE, max_v = (uint64_t)cinfo->max_v_samp_factor * DCTSIZE;
    for (int i = 0; i < cinfo->num_components; i++) {
        const jpeg_component_info *c = &cinfo->comp_info[i];
        const uint64_t blocks_wide = ((uint64_t)cinfo->image_width * c->h_samp_factor + max_h - 1) / max_h;
        const uint64_t blocks_high = ((uint64_t)cinfo->image_height * c->v_samp_factor + max_v - 1) / max_v;
        /* Rounded up to whole MCU rows and columns, as libjpeg allocates them. */
        total += (blocks_wide + c->h_samp_factor) * (blocks_high + c->v_samp_factor) * DCTSIZE2 * sizeof(JCOEF);
    }
    return total;
}

/*
 * The frame header's sample precision, read from the bytes before libjpeg sees them (0 when no
 * SOF is found before the first scan): libjpeg stores it only once it has parsed the SOF, so a
 * file it refuses earlier, or differently in another build, would be named "0-bit". The
 * header's size and components are filled into `info` as well.
 */
static int dr_sof_precision(const uint8_t *data, size_t size, dr_jpeg_info *info) {
    if (size < 4 || data[0] != 0xFF || data[1] != 0xD8) return 0;
    size_t i = 2;
    while (i + 4 <= size) {
        if (data[i] != 0xFF) return 0;
        uint8_t marker = data[i + 1];
        if (marker == 0xFF) { i++; continue; } /* fill byte */
        if (marker == 0xD8 || (marker >= 0xD0 && marker <= 0xD7) || marker == 0x01) { i += 2; continue; }
        if (marker == 0xDA || marker == 0xD9) return 0;
        size_t length = ((size_t)data[i + 2] << 8) | data[i + 3];
        if (length < 2) return 0;
        int is_sof = marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC;
        if (is_sof) {
            if (i + 10 > size || length < 8) return 0;
            info->precision = data[i + 4];
            info->height = (data[i + 5] << 8) | data[i + 6];
            info->width = (data[i + 7] << 8) | data[i + 8];
            info->components = data[i + 9];
            info->progressive = marker == 0xC2 || marker == 0xC6 || marker == 0xCA || marker == 0xCE;
            info->arithmetic = marker >= 0xC9;
            return info->precision;
        }
        i += 2 + length;
    }
    return 0;
}

/* Refuses a file whose frame header declares other than 8-bit samples, naming its precision
 * (a size above the pixel limit is named first, as libjpeg's path does). */
static int dr_refuse_precision(const uint8_t *data, size_t size, uint64_t pixel_limit, dr_jpeg_info *info,
                               dr_jpeg_status *status) {
    int precision = dr_sof_precision(data, size, info);
    if (precision == 0 || precision == 8) {
        memset(info, 0, sizeof(*info));
        return 0;
    }
    if (pixel_limit != 0 && (uint64_t)info->width * (uint64_t)info->height > pixel_limit) {
        status->code = DR_JPEG_TOO_MANY_PIXELS;
        return 1;
    }
    snprintf(status->message, DR_JPEG_MESSAGE_MAX, "Unsupported JPEG data precision %d", precision);
    status->code = DR_JPEG_UNSUPPORTED_PRECISION;
    return 1;
}

/* A decode's session, or NULL with the status set: a frame header of other than 8-bit samples
 * is refused before libjpeg sees it (dr_refuse_precision). */
static dr_session *dr_decode_session(const uint8_t *data, size_t size, uint64_t pixel_limit, dr_jpeg_info *info,
                                     dr_jpeg_status *status) {
    if (dr_refuse_precision(data, size, pixel_limit, info, status)) return NULL;
    dr_session *s = dr_session_new(status);
    if (s == NULL) status->code = DR_JPEG_NO_MEMORY;
    return s;
}

static int dr_read_header(struct jpeg_decompress_struct *cinfo, const uint8_t *data, size_t size) {
    jpeg_mem_src(cinfo, data, (unsigned long)size);
    jpeg_save_markers(cinfo, JPEG_APP0 + 2, 0xFFFF); /* ICC profile chunks */
    return jpeg_read_header(cinfo, TRUE);
}

int dr_jpeg_probe(const uint8_t *data, size_t size, uint64_t pixel_limit,
                  dr_jpeg_info *info, dr_jpeg_status *status) {
    JOCTET *volatile icc = NULL;

    dr_status_reset(status);
    memset(info, 0, sizeof(*info));
    if (data == NULL || size == 0) {
        status->code = DR_JPEG_BAD_ARGUMENT;
        return status->code;
    }
    dr_session *const s = dr_decode_session(data, size, pixel_limit, info, status);
    if (s == NULL) return status->code;
    struct jpeg_decompress_struct *const cinfo = &s->object.decompress;
    if (setjmp(s->err.jump)) {
        status->code = dr_decode_failure(s, pixel_limit, info);
        if (icc) free(icc);
        dr_session_free(s);
        return status->code;
    }
    jpeg_create_decompress(cinfo);
    cinfo->mem->max_memory_to_use = dr_memory_bound(pixel_limit);
    int header = dr_read_header(cinfo, data, size);
    dr_fill_info(cinfo, info);
    if (header != JPEG_HEADER_OK) {
        snprintf(status->message, DR_JPEG_MESSAGE_MAX, "JPEG datastream contains no image");
        status->code = DR_JPEG_CORRUPT;
    } else if (dr_over_limit(cinfo, pixel_limit)) {
        status->code = DR_JPEG_TOO_MANY_PIXELS;
    } else {
        JOCTET *profile = NULL;
        unsigned int length = 0;
        if (jpeg_read_icc_profile(cinfo, &profile, &length)) {
            icc = profile;
            info->has_icc = 1;
        }
    }
    if (icc) free(icc);
    icc = NULL;
    dr_session_free(s);
    return status->code;
}

/* CMYK as libjpeg returns it to RGB. Adobe writers store the channels inverted. */
static void dr_cmyk_row_to_rgb(const uint8_t *cmyk, uint8_t *rgb, int width, int inverted) {
    for (int x = 0; x < width; x++) {
        unsigned c = cmyk[0], m = cmyk[1], y = cmyk[2], k = cmyk[3];
        if (!inverted) { c = 255 - c; m = 255 - m; y = 255 - y; k = 255 - k; }
        rgb[0] = (uint8_t)((c * k + 127) / 255);
        rgb[1] = (uint8_t)((m * k + 127) / 255);
        rgb[2] = (uint8_t)((y * k + 127) / 255);
        cmyk += 4;
        rgb += 3;
    }
}

int dr_jpeg_decode(const uint8_t *data, size_t size, int scale_num, uint64_t pixel_limit,
                   int fast, int keep_cmyk, dr_jpeg_info *info, dr_jpeg_image *image, dr_jpeg_status *status) {
    uint8_t *volatile pixels = NULL;
    uint8_t *volatile cmyk_row = NULL;
    JOCTET *volatile icc = NULL;

    dr_status_reset(status);
    memset(info, 0, sizeof(*info));
    memset(image, 0, sizeof(*image));
    if (data == NULL || size == 0 || scale_num < 1 || scale_num > 8) {
        status->code = DR_JPEG_BAD_ARGUMENT;
        return status->code;
    }
    dr_session *const s = dr_decode_session(data, size, pixel_limit, info, status);
    if (s == NULL) return status->code;
    struct jpeg_decompress_struct *const cinfo = &s->object.decompress;
    if (setjmp(s->err.jump)) {
        status->code = dr_decode_failure(s, pixel_limit, info);
        free(pixels);
        free(cmyk_row);
        free(icc);
        dr_session_free(s);
        return status->code;
    }
    jpeg_create_decompress(cinfo);
    cinfo->mem->max_memory_to_use = dr_memory_bound(pixel_limit);
    struct jpeg_progress_mgr progress;
    memset(&progress, 0, sizeof(progress));
    progress.progress_monitor = dr_progress;
    cinfo->progress = &progress;
    if (dr_read_header(cinfo, data, size) != JPEG_HEADER_OK) {
        snprintf(status->message, DR_JPEG_MESSAGE_MAX, "JPEG datastream contains no image");
        status->code = DR_JPEG_CORRUPT;
        dr_session_free(s);
        return status->code;
    }
    dr_fill_info(cinfo, info);
    if (dr_over_limit(cinfo, pixel_limit)) {
        status->code = DR_JPEG_TOO_MANY_PIXELS;
        dr_session_free(s);
        return status->code;
    }
    {
        const uint64_t needed = dr_coefficient_bytes(cinfo);
        const uint64_t ceiling = pixel_limit * DR_JPEG_COEFFICIENT_BYTES_PER_PIXEL;
        if (pixel_limit != 0 && needed > ceiling) {
            snprintf(status->message, DR_JPEG_MESSAGE_MAX,
                     "a %ux%u multi-scan (progressive) JPEG needs %llu MB of coefficient memory, above the ceiling of %llu MB",
                     cinfo->image_width, cinfo->image_height, (unsigned long long)(needed >> 20),
                     (unsigned long long)(ceiling >> 20));
            status->code = DR_JPEG_OVER_MEMORY_CEILING;
            dr_session_free(s);
            return status->code;
        }
    }
    {
        JOCTET *profile = NULL;
        unsigned int length = 0;
        if (jpeg_read_icc_profile(cinfo, &profile, &length)) {
            icc = profile;
            info->has_icc = 1;
            image->icc_length = length;
        }
    }

    const int is_cmyk = cinfo->jpeg_color_space == JCS_CMYK || cinfo->jpeg_color_space == JCS_YCCK;
    cinfo->out_color_space = is_cmyk ? JCS_CMYK : JCS_RGB;
    cinfo->scale_num = (unsigned int)scale_num;
    cinfo->scale_denom = 8;
    if (fast) {
        cinfo->dct_method = JDCT_IFAST;
        cinfo->do_fancy_upsampling = FALSE;
    }
    jpeg_start_decompress(cinfo);
    dr_jpeg_use_avx2_idct(cinfo);

    const size_t width = cinfo->output_width, height = cinfo->output_height;
    pixels = malloc(width * height * 3);
    if (pixels == NULL) {
        snprintf(status->message, DR_JPEG_MESSAGE_MAX, "out of memory for %zux%zu pixels", width, height);
        status->code = DR_JPEG_NO_MEMORY;
        free(icc);
        dr_session_free(s);
        return status->code;
    }
    if (is_cmyk) {
        /* With keep_cmyk, the whole picture's samples: each row is read straight into its place. */
        cmyk_row = malloc(keep_cmyk ? width * height * 4 : width * 4);
        if (cmyk_row == NULL) {
            status->code = DR_JPEG_NO_MEMORY;
            free(pixels);
            free(icc);
            dr_session_free(s);
            return status->code;
        }
    }
    while (cinfo->output_scanline < cinfo->output_height) {
        JSAMPROW rows[16];
        const JDIMENSION first = cinfo->output_scanline;
        if (is_cmyk) {
            rows[0] = keep_cmyk ? cmyk_row + (size_t)first * width * 4 : cmyk_row;
            if (jpeg_read_scanlines(cinfo, rows, 1) != 1) break;
            dr_cmyk_row_to_rgb(rows[0], pixels + (size_t)first * width * 3, (int)width,
                               cinfo->saw_Adobe_marker);
        } else {
            JDIMENSION count = cinfo->output_height - first;
            if (count > 16) count = 16;
            for (JDIMENSION i = 0; i < count; i++) rows[i] = pixels + (size_t)(first + i) * width * 3;
            if (jpeg_read_scanlines(cinfo, rows, count) == 0) break;
        }
    }
    if (cinfo->output_scanline < cinfo->output_height) {
        /* A memory source never suspends, so this is unreachable; never hand out unwritten rows. */
        snprintf(status->message, DR_JPEG_MESSAGE_MAX, "decoding stopped early");
        status->code = DR_JPEG_TRUNCATED;
        free(pixels);
        free(cmyk_row);
        free(icc);
        dr_session_free(s);
        return status->code;
    }
    /* jpeg_finish_decompress would read on to EOI; trailing garbage there is harmless. */
    if (is_cmyk && keep_cmyk) {
        image->cmyk = cmyk_row;
        image->cmyk_inverted = cinfo->saw_Adobe_marker ? 1 : 0;
    } else {
        free(cmyk_row);
    }
    jpeg_abort_decompress(cinfo);
    dr_session_free(s);
    image->pixels = pixels;
    image->width = (int)width;
    image->height = (int)height;
    image->icc = icc;
    return DR_JPEG_OK;
}

static void dr_destination_init(j_compress_ptr cinfo) {
    dr_memory_destination *dest = (dr_memory_destination *)cinfo->dest;
    dest->pub.next_output_byte = dest->buffer;
    dest->pub.free_in_buffer = dest->capacity;
}

static boolean dr_destination_grow(j_compress_ptr cinfo) {
    dr_memory_destination *dest = (dr_memory_destination *)cinfo->dest;
    const size_t grown = dest->capacity * 2;
    uint8_t *bigger = realloc(dest->buffer, grown);
    if (bigger == NULL) ERREXIT1(cinfo, JERR_OUT_OF_MEMORY, 0);
    dest->buffer = bigger;
    dest->pub.next_output_byte = bigger + dest->capacity;
    dest->pub.free_in_buffer = grown - dest->capacity;
    dest->capacity = grown;
    return TRUE;
}

static void dr_destination_term(j_compress_ptr cinfo) {
    dr_memory_destination *dest = (dr_memory_destination *)cinfo->dest;
    dest->length = dest->capacity - dest->pub.free_in_buffer;
}

int dr_jpeg_encode(const uint8_t *rgb, int width, int height, size_t stride, int quality,
                   int progressive, int optimize, const uint8_t *icc, unsigned int icc_length,
                   uint8_t **out, unsigned long *out_length, dr_jpeg_status *status) {
    dr_status_reset(status);
    *out = NULL;
    *out_length = 0;
    if (rgb == NULL || width <= 0 || height <= 0 || stride < (size_t)width * 3 || quality < 1 || quality > 100) {
        status->code = DR_JPEG_BAD_ARGUMENT;
        return status->code;
    }
    dr_session *const s = dr_session_new(status);
    if (s == NULL) {
        status->code = DR_JPEG_NO_MEMORY;
        return status->code;
    }
    dr_memory_destination *const dest = &s->destination;
    /* A first guess of the compressed size: a tenth of the raw pixels, at least 64 KiB. */
    dest->capacity = (size_t)width * (size_t)height * 3 / 10;
    if (dest->capacity < 65536) dest->capacity = 65536;
    dest->buffer = malloc(dest->capacity);
    if (dest->buffer == NULL) {
        dr_session_free(s);
        status->code = DR_JPEG_NO_MEMORY;
        return status->code;
    }
    dest->pub.init_destination = dr_destination_init;
    dest->pub.empty_output_buffer = dr_destination_grow;
    dest->pub.term_destination = dr_destination_term;

    struct jpeg_compress_struct *const cinfo = &s->object.compress;
    if (setjmp(s->err.jump)) {
        status->code = s->err.base.msg_code == JERR_OUT_OF_MEMORY ? DR_JPEG_NO_MEMORY : DR_JPEG_CORRUPT;
        free(dest->buffer);
        dr_session_free(s);
        return status->code;
    }
    jpeg_create_compress(cinfo);
    cinfo->dest = &dest->pub;
    cinfo->image_width = (JDIMENSION)width;
    cinfo->image_height = (JDIMENSION)height;
    cinfo->input_components = 3;
    cinfo->in_color_space = JCS_RGB;
    jpeg_set_defaults(cinfo);
    jpeg_set_quality(cinfo, quality, TRUE);
    cinfo->optimize_coding = optimize ? TRUE : FALSE;
    if (progressive) jpeg_simple_progression(cinfo);
    jpeg_start_compress(cinfo, TRUE);
    dr_jpeg_use_avx2_fdct(cinfo);
    if (icc != NULL && icc_length > 0) jpeg_write_icc_profile(cinfo, icc, icc_length);
    while (cinfo->next_scanline < cinfo->image_height) {
        JSAMPROW rows[16];
        JDIMENSION count = cinfo->image_height - cinfo->next_scanline;
        if (count > 16) count = 16;
        for (JDIMENSION i = 0; i < count; i++)
            rows[i] = (JSAMPROW)(rgb + (size_t)(cinfo->next_scanline + i) * stride);
        jpeg_write_scanlines(cinfo, rows, count);
    }
    jpeg_finish_compress(cinfo);
    *out = dest->buffer;
    *out_length = (unsigned long)dest->length;
    dr_session_free(s);
    return DR_JPEG_OK;
}

void dr_jpeg_free(void *pointer) { free(pointer); }

long dr_jpeg_idct_mismatches(const uint8_t *data, size_t size, int scale_num, uint32_t seed, long blocks,
                             int *components, dr_jpeg_status *status) {
    dr_status_reset(status);
    *components = 0;
    if (data == NULL || size == 0 || scale_num < 1 || scale_num > 8 || blocks < 0) {
        status->code = DR_JPEG_BAD_ARGUMENT;
        return -1;
    }
    dr_session *const s = dr_session_new(status);
    if (s == NULL) {
        status->code = DR_JPEG_NO_MEMORY;
        return -1;
    }
    struct jpeg_decompress_struct *const cinfo = &s->object.decompress;
    if (setjmp(s->err.jump)) {
        status->code = dr_failure_code(&s->err, cinfo);
        dr_session_free(s);
        return -1;
    }
    jpeg_create_decompress(cinfo);
    if (dr_read_header(cinfo, data, size) != JPEG_HEADER_OK) {
        status->code = DR_JPEG_CORRUPT;
        dr_session_free(s);
        return -1;
    }
    cinfo->out_color_space = (cinfo->jpeg_color_space == JCS_CMYK || cinfo->jpeg_color_space == JCS_YCCK) ? JCS_CMYK : JCS_RGB;
    cinfo->scale_num = (unsigned int)scale_num;
    cinfo->scale_denom = 8;
    jpeg_start_decompress(cinfo);
    long mismatches = 0;
    for (int ci = 0; ci < cinfo->num_components; ci++) {
        const long differing = dr_idct_compare(cinfo, ci, seed + (uint32_t)ci, blocks, 1);
        if (differing < 0) continue;
        *components += 1;
        mismatches += differing;
    }
    jpeg_abort_decompress(cinfo);
    dr_session_free(s);
    return *components > 0 ? mismatches : -1;
}

long dr_jpeg_fdct_mismatches(int quality, uint32_t seed, long blocks, int random_tables, dr_jpeg_status *status) {
    dr_status_reset(status);
    if (quality < 1 || quality > 100 || blocks < 0) {
        status->code = DR_JPEG_BAD_ARGUMENT;
        return -1;
    }
    dr_session *const s = dr_session_new(status);
    if (s == NULL) {
        status->code = DR_JPEG_NO_MEMORY;
        return -1;
    }
    struct jpeg_compress_struct *const cinfo = &s->object.compress;
    if (setjmp(s->err.jump)) {
        status->code = DR_JPEG_CORRUPT;
        dr_session_free(s);
        return -1;
    }
    jpeg_create_compress(cinfo);
    jpeg_mem_dest(cinfo, &s->memory, &s->memory_length);
    cinfo->image_width = 16;
    cinfo->image_height = 16;
    cinfo->input_components = 3;
    cinfo->in_color_space = JCS_RGB;
    jpeg_set_defaults(cinfo);
    jpeg_set_quality(cinfo, quality, TRUE);
    if (random_tables) {
        uint32_t state = seed ^ 0x5bd1e995u;
        for (int t = 0; t < 2; t++) {
            unsigned int table[DCTSIZE2];
            for (int i = 0; i < DCTSIZE2; i++) {
                state = state * 1664525u + 1013904223u;
                table[i] = 1 + (state >> 8) % (t == 0 ? 255 : 40);
            }
            jpeg_add_quant_table(cinfo, t, table, 100, TRUE);
        }
    }
    jpeg_start_compress(cinfo, TRUE);
    const long mismatches = dr_fdct_compare(cinfo, seed, blocks);
    jpeg_abort_compress(cinfo);
    dr_session_free(s);
    return mismatches;
}
