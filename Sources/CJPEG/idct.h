/* The AVX2 inverse DCTs (idct.c), as cjpeg.c uses them. */
#ifndef DR_CJPEG_IDCT_H
#define DR_CJPEG_IDCT_H

#include <stdint.h>
#include <stdio.h>
#include <jpeglib.h>

/* After jpeg_start_decompress: puts the AVX2 builds in place of libjpeg's 3x3, 5x5, 6x6 and 10x10
 * inverse DCTs for the components that use them, unless the processor lacks AVX2, the thread asked for the
 * library's (dr_jpeg_prefer_library_transforms), or a component's check blocks disagree. */
void dr_jpeg_use_avx2_idct(j_decompress_ptr cinfo);

/* Runs `blocks` generated blocks through the component's library IDCT and its AVX2 build and counts
 * the blocks whose output differs; -1 when the component has no AVX2 build here. With `vary_tables`,
 * every seventh block gets a random quantisation table (the original is put back). */
long dr_idct_compare(j_decompress_ptr cinfo, int component, uint32_t seed, long blocks, int vary_tables);

#endif
