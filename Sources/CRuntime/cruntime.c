#define _GNU_SOURCE
#include "cruntime.h"
#include <malloc.h>

int darkroom_keep_large_allocations(size_t mmap_threshold_bytes, size_t trim_threshold_bytes) {
    int ok = mallopt(M_MMAP_THRESHOLD, (int)mmap_threshold_bytes);
    ok &= mallopt(M_TRIM_THRESHOLD, (int)trim_threshold_bytes);
    return ok;
}

#include <errno.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

int darkroom_lower_thread_priority(int steps) {
    /* On Linux, PRIO_PROCESS with a thread id reaches that thread alone. */
    pid_t thread = (pid_t)syscall(SYS_gettid);
    errno = 0;
    int current = getpriority(PRIO_PROCESS, (id_t)thread);
    if (current == -1 && errno != 0) return errno;
    int wanted = current + steps > 19 ? 19 : current + steps;
    return setpriority(PRIO_PROCESS, (id_t)thread, wanted) == 0 ? 0 : errno;
}

#include <sys/prctl.h>

void darkroom_name_thread(const char *name) {
    /* The kernel keeps 15 bytes of it (and cuts the rest). */
    prctl(PR_SET_NAME, name, 0, 0, 0);
}

#include <fcntl.h>

int darkroom_start_writeback(int fd) {
    return sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE) == 0 ? 0 : errno;
}
