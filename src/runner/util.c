/* util.c - the runner's small helpers: the clock, logging to stderr (the
 * container's log), pipes and fds.  (Its x-allocators are
 * src/common/xalloc.c, the one file of src/common it links: libc only.) */
#include "common/compat.h"

#include <fcntl.h>
#include <time.h>

#include "runner/runner.h"

int64_t now_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void rlog(const char *fmt, ...)
{
        char line[1024];
        va_list ap;
        int n = snprintf(line, sizeof(line), "tessera-runner: ");

        va_start(ap, fmt);
        vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
        va_end(ap);
        n = (int)strlen(line);
        line[n++] = '\n';
        ssize_t UNUSED w = write(STDERR_FILENO, line, (size_t)n);
}

int set_nonblock(int fd)
{
        int fl = fcntl(fd, F_GETFL);

        if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
                return -errno;
        return 0;
}

int make_pipe(int fds[2], int nonblock_end)
{
        if (pipe2(fds, O_CLOEXEC) < 0)
                return -errno;
        if (nonblock_end >= 0)
                set_nonblock(fds[nonblock_end]);
        return 0;
}

void close_fd(int *fd)
{
        if (*fd >= 0)
                close(*fd);
        *fd = -1;
}
