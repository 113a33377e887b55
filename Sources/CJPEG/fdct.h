/* The AVX2 forward DCT with its quantisation (fdct.c), as cjpeg.c uses it. */
#ifndef DR_CJPEG_FDCT_H
#define DR_CJPEG_FDCT_H

#include <stdint.h>
#include <stdio.h>
#include <jpeglib.h>

/* After jpeg_start_compress: puts the AVX2 build in place of libjpeg-turbo's forward DCT method
 * (the islow transform, then its quantisation), unless the processor lacks AVX2, the thread
 * asked for the library's (dr_jpeg_prefer_library_transforms), a table is outside baseline
 * JPEG's 1...255, or the check blocks disagree with the library's own method. Uses
 * cinfo->client_data. */
void dr_jpeg_use_avx2_fdct(j_compress_ptr cinfo);

/* Makes `blocks` runs of generated samples for each component (one block, then two side by side,
 * in turn) through the library's forward DCT method and the AVX2 build and counts the runs
 * whose coefficients differ; -1 when the AVX2 build cannot serve this encoder (as
 * dr_jpeg_use_avx2_fdct decides). */
long dr_fdct_compare(j_compress_ptr cinfo, uint32_t seed, long blocks);

#endif
