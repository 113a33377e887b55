#ifndef DARKROOM_CPIXELS_H
#define DARKROOM_CPIXELS_H

#include <stddef.h>

/*
 * Large buffers (rasters, decoder output, resampling scratch) kept per thread between photos.
 * A worker renders photo after photo of similar sizes; allocating each raster anew costs the
 * kernel's zeroing of fresh pages and a page fault per 4 KiB. A buffer given back here stays
 * with its thread (up to a limit in bytes) and is handed out again for a request it fits, its
 * pages already in place. Buffers under 256 KiB are plain malloc. Each thread's buffers are
 * freed when it exits.
 */

/* At least `bytes` bytes (64-byte aligned), from the calling thread's kept buffers when one
 * fits, else newly allocated; NULL when memory cannot be had. */
void *dr_pixels_alloc(size_t bytes);

/* Gives back a buffer from dr_pixels_alloc (any thread's): kept by the calling thread while
 * its kept bytes stay within the limit, else freed. NULL is ignored. */
void dr_pixels_free(void *pointer);

/* The most bytes each thread keeps (default 160 MiB; 0 keeps nothing). The environment variable
 * DARKROOM_PIXEL_POOL_MB sets it at start. */
void dr_pixels_set_limit(size_t bytes);
size_t dr_pixels_limit(void);

/* Bytes the calling thread keeps now, and how many requests it served from them and anew. */
size_t dr_pixels_kept(void);
size_t dr_pixels_reused(void);
size_t dr_pixels_allocated(void);

#endif
