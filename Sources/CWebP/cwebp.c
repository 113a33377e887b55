#include "cwebp.h"

#include <string.h>
#include <webp/encode.h>
#include <webp/decode.h>
#include <webp/mux.h>

/* Wraps an encoded bitstream and a profile into one file (VP8X with an ICCP chunk). */
static int dr_webp_with_profile(const uint8_t *bitstream, size_t length, const uint8_t *icc, size_t icc_length,
                                uint8_t **out, size_t *out_length) {
    WebPMux *mux = WebPMuxNew();
    if (mux == NULL) return DR_WEBP_MUX_FAILED;
    const WebPData image = {bitstream, length};
    const WebPData profile = {icc, icc_length};
    WebPData assembled = {NULL, 0};
    int code = DR_WEBP_MUX_FAILED;
    if (WebPMuxSetImage(mux, &image, 1) == WEBP_MUX_OK && WebPMuxSetChunk(mux, "ICCP", &profile, 1) == WEBP_MUX_OK
        && WebPMuxAssemble(mux, &assembled) == WEBP_MUX_OK) {
        *out = (uint8_t *)assembled.bytes;
        *out_length = assembled.size;
        code = DR_WEBP_OK;
    }
    WebPMuxDelete(mux);
    return code;
}

int dr_webp_encode(const uint8_t *rgb, int width, int height, int quality,
                   const uint8_t *icc, size_t icc_length, uint8_t **out, size_t *out_length) {
    if (rgb == NULL || out == NULL || out_length == NULL || width <= 0 || height <= 0 || quality < 1 || quality > 100)
        return DR_WEBP_BAD_ARGUMENT;
    *out = NULL;
    *out_length = 0;
    uint8_t *bitstream = NULL;
    const size_t length = WebPEncodeRGB(rgb, width, height, width * 3, (float)quality, &bitstream);
    if (length == 0 || bitstream == NULL) {
        WebPFree(bitstream);
        return DR_WEBP_ENCODE_FAILED;
    }
    if (icc == NULL || icc_length == 0) {
        *out = bitstream;
        *out_length = length;
        return DR_WEBP_OK;
    }
    const int code = dr_webp_with_profile(bitstream, length, icc, icc_length, out, out_length);
    WebPFree(bitstream);
    return code;
}

int dr_webp_size(const uint8_t *data, size_t size, int *width, int *height) {
    if (data == NULL || width == NULL || height == NULL) return 0;
    return WebPGetInfo(data, size, width, height);
}

void dr_webp_free(void *pointer) { WebPFree(pointer); }
