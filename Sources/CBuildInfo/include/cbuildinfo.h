#ifndef DARKROOM_CBUILDINFO_H
#define DARKROOM_CBUILDINFO_H

/// The source commit this binary was built from ("unknown" outside a git checkout), as the
/// Makefile wrote it into build_info.h; "-dirty" when the work tree had uncommitted changes.
const char *darkroom_build_commit(void);
/// When that build_info.h was written (UTC, ISO 8601), or "unknown".
const char *darkroom_build_date(void);
/// The C libraries' versions: libpng, SQLite, libheif, libwebp and lcms2 as loaded at run time,
/// libjpeg-turbo as its headers say (it has no run-time call), libexif as pkg-config named it at
/// build time.
const char *darkroom_libjpeg_version(void);
const char *darkroom_libpng_version(void);
const char *darkroom_libexif_version(void);
const char *darkroom_sqlite_version(void);
const char *darkroom_libheif_version(void);
/// libwebp's decoder (the encoder and muxer come from the same release).
const char *darkroom_libwebp_version(void);
const char *darkroom_lcms2_version(void);

#endif
