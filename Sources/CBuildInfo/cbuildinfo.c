#include "cbuildinfo.h"

#include <stdio.h>
#include <jpeglib.h>
#include <png.h>
#include <sqlite3.h>
#include <libheif/heif.h>
#include <webp/decode.h>
#include <lcms2.h>

// Written by `make buildinfo` (git commit, date, libexif's version); absent in a plain
// `swift build`, when the defaults below stand.
#if __has_include("build_info.h")
#include "build_info.h"
#endif
#ifndef DARKROOM_BUILD_COMMIT
#define DARKROOM_BUILD_COMMIT "unknown"
#endif
#ifndef DARKROOM_BUILD_DATE
#define DARKROOM_BUILD_DATE "unknown"
#endif
#ifndef DARKROOM_LIBEXIF_VERSION
#define DARKROOM_LIBEXIF_VERSION "unknown"
#endif

const char *darkroom_build_commit(void) { return DARKROOM_BUILD_COMMIT; }
const char *darkroom_build_date(void) { return DARKROOM_BUILD_DATE; }
const char *darkroom_libexif_version(void) { return DARKROOM_LIBEXIF_VERSION; }

const char *darkroom_libjpeg_version(void) {
    // libjpeg-turbo has no run-time version call: the headers it was built against say it.
#ifdef LIBJPEG_TURBO_VERSION_NUMBER
    static char text[32];
    int number = LIBJPEG_TURBO_VERSION_NUMBER;
    snprintf(text, sizeof text, "%d.%d.%d", number / 1000000, number / 1000 % 1000, number % 1000);
    return text;
#else
    return "unknown";
#endif
}

const char *darkroom_libpng_version(void) { return png_get_libpng_ver(NULL); }
const char *darkroom_sqlite_version(void) { return sqlite3_libversion(); }
const char *darkroom_libheif_version(void) { return heif_get_version(); }

const char *darkroom_libwebp_version(void) {
    // 0xMMmmpp: major, minor and revision a byte each.
    static char text[32];
    int number = WebPGetDecoderVersion();
    snprintf(text, sizeof text, "%d.%d.%d", (number >> 16) & 0xff, (number >> 8) & 0xff, number & 0xff);
    return text;
}

const char *darkroom_lcms2_version(void) {
    // MAJOR * 1000 + MINOR * 10 (+ a patch digit in some releases): 2140 is 2.14.
    static char text[32];
    int number = cmsGetEncodedCMMversion();
    snprintf(text, sizeof text, "%d.%d", number / 1000, number % 1000 / 10);
    return text;
}
