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

#include <fcntl.h>
#include <signal.h>
#include <pthread.h>

static pthread_once_t dr_lease_once = PTHREAD_ONCE_INIT;

/* A writer that opens the file while the lease is held makes the kernel signal the holder, with
   SIGIO unless told otherwise, whose default action ends the process: ignored, once. */
static void dr_ignore_lease_breaks(void) { signal(SIGIO, SIG_IGN); }

int darkroom_is_open_for_writing(const char *path) {
    pthread_once(&dr_lease_once, dr_ignore_lease_breaks);
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
    if (fd < 0) return -1;
    int answer;
    if (fcntl(fd, F_SETLEASE, F_RDLCK) == 0) {
        fcntl(fd, F_SETLEASE, F_UNLCK);
        answer = 0;
    } else {
        answer = errno == EAGAIN ? 1 : -1;
    }
    close(fd);
    return answer;
}
