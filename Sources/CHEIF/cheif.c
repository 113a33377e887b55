#include "cheif.h"
#include "cdeadline.h"

#include <libheif/heif.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* libheif's own guard on each side, far above any camera's, below what overflows int maths. */
static const int max_side = 65535;

static void set_status(dr_heif_status *status, int code, const char *message) {
    if (status == NULL) return;
    status->code = code;
    snprintf(status->message, DR_HEIF_MESSAGE_MAX, "%s", message ? message : "");
}

static int fail_from(struct heif_error error, dr_heif_status *status) {
    int code = DR_HEIF_CORRUPT;
    switch (error.code) {
    case heif_error_Memory_allocation_error: code = DR_HEIF_NO_MEMORY; break;
    case heif_error_Unsupported_feature:
    case heif_error_Unsupported_filetype: code = DR_HEIF_UNSUPPORTED; break;
    default: break;
    }
    if (error.code == heif_error_Invalid_input && error.subcode == heif_suberror_End_of_data) code = DR_HEIF_TRUNCATED;
    set_status(status, code, error.message);
    return code;
}

/* Opens the file and its primary image; on success the caller frees both. */
static int open_primary(const uint8_t *data, size_t size, struct heif_context **ctx_out,
                        struct heif_image_handle **handle_out, dr_heif_status *status) {
    *ctx_out = NULL;
    *handle_out = NULL;
    if (data == NULL || size == 0) {
        set_status(status, DR_HEIF_BAD_ARGUMENT, "no data");
        return DR_HEIF_BAD_ARGUMENT;
    }
    struct heif_context *ctx = heif_context_alloc();
    if (ctx == NULL) {
        set_status(status, DR_HEIF_NO_MEMORY, "cannot allocate a libheif context");
        return DR_HEIF_NO_MEMORY;
    }
    heif_context_set_maximum_image_size_limit(ctx, max_side);
    struct heif_error error = heif_context_read_from_memory_without_copy(ctx, data, size, NULL);
    if (error.code != heif_error_Ok) {
        int code = fail_from(error, status);
        heif_context_free(ctx);
        return code;
    }
    struct heif_image_handle *handle = NULL;
    error = heif_context_get_primary_image_handle(ctx, &handle);
    if (error.code != heif_error_Ok || handle == NULL) {
        int code = error.code != heif_error_Ok ? fail_from(error, status) : DR_HEIF_CORRUPT;
        if (error.code == heif_error_Ok) set_status(status, code, "no primary image");
        heif_context_free(ctx);
        return code;
    }
    *ctx_out = ctx;
    *handle_out = handle;
    return DR_HEIF_OK;
}

/* PQ or HLG with BT.2020 or P3 primaries, more than 8 bits, and no ICC profile (which would win). */
static int is_hdr(const dr_heif_info *info) {
    if (info->transfer != DR_HDR_PQ && info->transfer != DR_HDR_HLG) return 0;
    if (info->primaries != heif_color_primaries_ITU_R_BT_2020_2_and_2100_0
        && info->primaries != heif_color_primaries_SMPTE_RP_431_2 && info->primaries != heif_color_primaries_SMPTE_EG_432_1)
        return 0;
    return info->luma_bits > 8 && info->color_profile != 1;
}

static int read_info(struct heif_context *ctx, struct heif_image_handle *handle, uint64_t pixel_limit,
                     dr_heif_info *info, dr_heif_status *status) {
    info->width = heif_image_handle_get_width(handle);
    info->height = heif_image_handle_get_height(handle);
    info->luma_bits = heif_image_handle_get_luma_bits_per_pixel(handle);
    info->has_alpha = heif_image_handle_has_alpha_channel(handle);
    info->image_count = heif_context_get_number_of_top_level_images(ctx);
    switch (heif_image_handle_get_color_profile_type(handle)) {
    case heif_color_profile_type_prof:
    case heif_color_profile_type_rICC: info->color_profile = 1; break;
    case heif_color_profile_type_nclx: info->color_profile = 2; break;
    default: info->color_profile = 0; break;
    }
    struct heif_color_profile_nclx *nclx = NULL;
    if (heif_image_handle_get_nclx_color_profile(handle, &nclx).code == heif_error_Ok && nclx != NULL) {
        info->transfer = (int)nclx->transfer_characteristics;
        info->primaries = (int)nclx->color_primaries;
        heif_nclx_color_profile_free(nclx);
    }
    info->hdr = is_hdr(info) ? 1 : 0;
    if (info->width <= 0 || info->height <= 0) {
        set_status(status, DR_HEIF_ZERO_SIZE, "zero size");
        return DR_HEIF_ZERO_SIZE;
    }
    if (pixel_limit > 0 && (uint64_t)info->width * (uint64_t)info->height > pixel_limit) {
        set_status(status, DR_HEIF_TOO_MANY_PIXELS, "too many pixels");
        return DR_HEIF_TOO_MANY_PIXELS;
    }
    return DR_HEIF_OK;
}

int dr_heif_probe(const uint8_t *data, size_t size, uint64_t pixel_limit,
                  dr_heif_info *info, dr_heif_status *status) {
    if (info == NULL) return DR_HEIF_BAD_ARGUMENT;
    memset(info, 0, sizeof *info);
    set_status(status, DR_HEIF_OK, "");
    struct heif_context *ctx;
    struct heif_image_handle *handle;
    int code = open_primary(data, size, &ctx, &handle, status);
    if (code != DR_HEIF_OK) return code;
    code = read_info(ctx, handle, pixel_limit, info, status);
    heif_image_handle_release(handle);
    heif_context_free(ctx);
    return code;
}

static int copy_icc(struct heif_image_handle *handle, dr_heif_image *image) {
    enum heif_color_profile_type type = heif_image_handle_get_color_profile_type(handle);
    if (type != heif_color_profile_type_prof && type != heif_color_profile_type_rICC) return DR_HEIF_OK;
    size_t length = heif_image_handle_get_raw_color_profile_size(handle);
    if (length == 0 || length > (16u << 20)) return DR_HEIF_OK;
    uint8_t *icc = malloc(length);
    if (icc == NULL) return DR_HEIF_NO_MEMORY;
    if (heif_image_handle_get_raw_color_profile(handle, icc).code != heif_error_Ok) {
        free(icc);
        return DR_HEIF_OK;
    }
    image->icc = icc;
    image->icc_length = (unsigned int)length;
    return DR_HEIF_OK;
}

/* The HDR plane tone-mapped into `pixels`, with the primaries libheif decoded from the nclx box
 * and the peak from the image's clli or mdcv (see dr_hdr_source_peak). */
static int tone_map(struct heif_image_handle *handle, const struct heif_image *decoded, const uint8_t *plane,
                    size_t stride, int width, int height, int bits, const dr_heif_info *info, uint8_t *pixels) {
    struct heif_color_profile_nclx *nclx = NULL;
    if (heif_image_handle_get_nclx_color_profile(handle, &nclx).code != heif_error_Ok || nclx == NULL) return -1;
    double primaries[8] = {nclx->color_primary_red_x,   nclx->color_primary_red_y,  nclx->color_primary_green_x,
                           nclx->color_primary_green_y, nclx->color_primary_blue_x, nclx->color_primary_blue_y,
                           nclx->color_primary_white_x, nclx->color_primary_white_y};
    heif_nclx_color_profile_free(nclx);
    double content = 0, mastering = 0;
    if (heif_image_has_content_light_level(decoded)) {
        struct heif_content_light_level level;
        heif_image_get_content_light_level(decoded, &level);
        content = level.max_content_light_level;
    }
    if (heif_image_has_mastering_display_colour_volume(decoded)) {
        struct heif_mastering_display_colour_volume volume;
        heif_image_get_mastering_display_colour_volume(decoded, &volume);
        mastering = volume.max_display_mastering_luminance / 10000.0; /* stored in 0.0001 cd/m2 */
    }
    double peak = dr_hdr_source_peak(info->transfer, content, mastering);
    return dr_hdr_to_sdr(plane, stride, width, height, bits, info->transfer, primaries, peak, pixels);
}

int dr_heif_decode(const uint8_t *data, size_t size, uint64_t pixel_limit,
                   dr_heif_info *info, dr_heif_image *image, dr_heif_status *status) {
    if (info == NULL || image == NULL) return DR_HEIF_BAD_ARGUMENT;
    memset(info, 0, sizeof *info);
    memset(image, 0, sizeof *image);
    set_status(status, DR_HEIF_OK, "");
    struct heif_context *ctx;
    struct heif_image_handle *handle;
    int code = open_primary(data, size, &ctx, &handle, status);
    if (code != DR_HEIF_OK) return code;
    code = read_info(ctx, handle, pixel_limit, info, status);
    if (code != DR_HEIF_OK) {
        heif_image_handle_release(handle);
        heif_context_free(ctx);
        return code;
    }

    /* libheif 1.15 cannot be interrupted once decoding: the deadline is checked before it. */
    if (darkroom_past_deadline()) {
        heif_image_handle_release(handle);
        heif_context_free(ctx);
        set_status(status, DR_HEIF_PAST_DEADLINE, "decoding stopped at the photo's deadline");
        return DR_HEIF_PAST_DEADLINE;
    }
    struct heif_decoding_options *options = heif_decoding_options_alloc();
    if (options == NULL) {
        heif_image_handle_release(handle);
        heif_context_free(ctx);
        set_status(status, DR_HEIF_NO_MEMORY, "cannot allocate decoding options");
        return DR_HEIF_NO_MEMORY;
    }
    options->convert_hdr_to_8bit = info->hdr ? 0 : 1;
    struct heif_image *decoded = NULL;
    struct heif_error error = heif_decode_image(handle, &decoded, heif_colorspace_RGB,
                                                info->hdr ? heif_chroma_interleaved_RRGGBB_LE : heif_chroma_interleaved_RGB, options);
    heif_decoding_options_free(options);
    if (error.code != heif_error_Ok || decoded == NULL) {
        code = error.code != heif_error_Ok ? fail_from(error, status) : DR_HEIF_CORRUPT;
        if (error.code == heif_error_Ok) set_status(status, code, "decoder returned no image");
        heif_image_handle_release(handle);
        heif_context_free(ctx);
        return code;
    }

    int width = heif_image_get_width(decoded, heif_channel_interleaved);
    int height = heif_image_get_height(decoded, heif_channel_interleaved);
    int stride = 0;
    const uint8_t *plane = heif_image_get_plane_readonly(decoded, heif_channel_interleaved, &stride);
    code = DR_HEIF_OK;
    int bits = heif_image_get_bits_per_pixel_range(decoded, heif_channel_interleaved);
    if (plane == NULL || width <= 0 || height <= 0 || stride < width * (info->hdr ? 6 : 3)
        || (info->hdr ? bits <= 8 || bits > 16 : bits != 8)) {
        code = DR_HEIF_CORRUPT;
        set_status(status, code, info->hdr ? "decoder returned no 16-bit RGB plane" : "decoder returned no 8-bit RGB plane");
    } else if (pixel_limit > 0 && (uint64_t)width * (uint64_t)height > pixel_limit) {
        code = DR_HEIF_TOO_MANY_PIXELS;
        set_status(status, code, "too many pixels");
    } else {
        size_t row = (size_t)width * 3;
        uint8_t *pixels = malloc(row * (size_t)height);
        if (pixels == NULL) {
            code = DR_HEIF_NO_MEMORY;
            set_status(status, code, "cannot allocate the raster");
        } else if (info->hdr && tone_map(handle, decoded, plane, (size_t)stride, width, height, bits, info, pixels) != 0) {
            free(pixels);
            code = DR_HEIF_NO_MEMORY;
            set_status(status, code, "cannot allocate the tone mapping's tables");
        } else {
            if (!info->hdr)
                for (int y = 0; y < height; y++) memcpy(pixels + row * (size_t)y, plane + (size_t)stride * (size_t)y, row);
            image->pixels = pixels;
            image->width = width;
            image->height = height;
            if (copy_icc(handle, image) != DR_HEIF_OK) {
                free(pixels);
                image->pixels = NULL;
                code = DR_HEIF_NO_MEMORY;
                set_status(status, code, "cannot allocate the ICC profile");
            }
        }
    }
    heif_image_release(decoded);
    heif_image_handle_release(handle);
    heif_context_free(ctx);
    return code;
}

int dr_heif_exif(const uint8_t *data, size_t size, size_t max_bytes,
                 uint8_t **out, size_t *out_length, dr_heif_status *status) {
    if (out == NULL || out_length == NULL) return DR_HEIF_BAD_ARGUMENT;
    *out = NULL;
    *out_length = 0;
    set_status(status, DR_HEIF_OK, "");
    struct heif_context *ctx;
    struct heif_image_handle *handle;
    int code = open_primary(data, size, &ctx, &handle, status);
    if (code != DR_HEIF_OK) return code;
    heif_item_id id = 0;
    if (heif_image_handle_get_list_of_metadata_block_IDs(handle, "Exif", &id, 1) == 1) {
        size_t length = heif_image_handle_get_metadata_size(handle, id);
        uint8_t *item = length >= 4 ? malloc(length) : NULL;
        if (item != NULL && heif_image_handle_get_metadata(handle, id, item).code == heif_error_Ok) {
            /* The item starts with a big-endian offset from its 5th byte to the TIFF header. */
            size_t offset = 4 + (((size_t)item[0] << 24) | ((size_t)item[1] << 16) | ((size_t)item[2] << 8) | item[3]);
            if (offset < length) {
                size_t count = length - offset;
                if (max_bytes > 0 && count > max_bytes) count = max_bytes;
                uint8_t *tiff = malloc(count);
                if (tiff != NULL) {
                    memcpy(tiff, item + offset, count);
                    *out = tiff;
                    *out_length = count;
                } else {
                    code = DR_HEIF_NO_MEMORY;
                    set_status(status, code, "cannot allocate the EXIF item");
                }
            } else {
                code = DR_HEIF_CORRUPT;
                set_status(status, code, "the EXIF item's TIFF offset points past its end");
            }
        }
        free(item);
    }
    heif_image_handle_release(handle);
    heif_context_free(ctx);
    return code;
}

const char *dr_heif_mime_type(const uint8_t *data, size_t size) {
    if (data == NULL || size < 12) return NULL;
    static const char *const known[] = {"image/heic", "image/heif", "image/avif"};
    const char *type = heif_get_file_mime_type(data, (int)(size > 4096 ? 4096 : size));
    for (size_t i = 0; type != NULL && i < sizeof known / sizeof known[0]; i++) {
        if (strcmp(type, known[i]) == 0) return known[i];
    }
    return NULL;
}

void dr_heif_free(void *pointer) { free(pointer); }
