/* What the AVX2 transforms (idct.c, fdct.c) both ask before they take the library's place;
 * cjpeg.c answers. */
#ifndef DR_CJPEG_TRANSFORMS_H
#define DR_CJPEG_TRANSFORMS_H

/* 1 where the processor runs AVX2 (asked once a process), else 0. */
int dr_jpeg_processor_has_avx2(void);

/* 1 where this thread asked for libjpeg-turbo's own transforms
 * (dr_jpeg_prefer_library_transforms), else 0. */
int dr_jpeg_library_transforms_only(void);

#endif
