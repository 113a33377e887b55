#include <libexif/exif-data.h>
#include <libexif/exif-loader.h>
#include <libexif/exif-utils.h>
#include <libexif/exif-tag.h>
#include <libexif/exif-ifd.h>
#include <libexif/exif-log.h>

#include <stdarg.h>
#include <stdio.h>

/*
 * A sink for libexif's complaints about corrupt data.
 *
 * libexif reports problems through a log callback that receives a printf format and a
 * va_list; a va_list cannot be formatted from Swift, so the callback lives here and keeps
 * a bounded number of formatted messages that the Swift side turns into warnings.
 */
#define DARKROOM_EXIF_LOG_MAX_MESSAGES 8
#define DARKROOM_EXIF_LOG_MESSAGE_BYTES 160

typedef struct {
    char messages[DARKROOM_EXIF_LOG_MAX_MESSAGES][DARKROOM_EXIF_LOG_MESSAGE_BYTES];
    int count;
    int dropped;
} DarkroomExifLogSink;

static inline void darkroom_exif_log_func(ExifLog *log, ExifLogCode code, const char *domain,
                                          const char *format, va_list args, void *data) {
    (void)log;
    (void)domain;
    /* Debug chatter is not a problem with the file; only corruption and memory are. */
    if (code != EXIF_LOG_CODE_CORRUPT_DATA && code != EXIF_LOG_CODE_NO_MEMORY) {
        return;
    }
    DarkroomExifLogSink *sink = (DarkroomExifLogSink *)data;
    if (sink == NULL || format == NULL) {
        return;
    }
    if (sink->count >= DARKROOM_EXIF_LOG_MAX_MESSAGES) {
        sink->dropped++;
        return;
    }
    vsnprintf(sink->messages[sink->count], DARKROOM_EXIF_LOG_MESSAGE_BYTES, format, args);
    sink->count++;
}

/* A new log that writes into `sink`; release it with exif_log_unref. */
static inline ExifLog *darkroom_exif_log_new(DarkroomExifLogSink *sink) {
    ExifLog *log = exif_log_new();
    if (log != NULL) {
        exif_log_set_func(log, darkroom_exif_log_func, sink);
    }
    return log;
}

/* The message at `index` (0 ..< sink->count), NUL-terminated. */
static inline const char *darkroom_exif_log_message(const DarkroomExifLogSink *sink, int index) {
    if (sink == NULL || index < 0 || index >= sink->count) {
        return "";
    }
    return sink->messages[index];
}

/* The content of one IFD, or NULL; avoids indexing ExifData's C array as a Swift tuple. */
static inline ExifContent *darkroom_exif_ifd(ExifData *data, ExifIfd ifd) {
    if (data == NULL || (int)ifd < 0 || ifd >= EXIF_IFD_COUNT) {
        return NULL;
    }
    return data->ifd[ifd];
}
