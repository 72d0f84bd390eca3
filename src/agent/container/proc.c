/* proc.c - see proc.h: fork/exec with clean signals and fds, run and
 * capture, process identity by start time. */
#include "common/compat.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "agent/container/proc.h"
#include "common/fs.h"

#define PROC_INPUT_MAX 65536

/* The kernel's struct sigaction (x86_64, arm64 and the generic layout). */
struct kernel_sigaction {
        void (*handler)(int);
        unsigned long flags;
        void (*restorer)(void);
        uint64_t mask;
};

/* Default disposition for sig.  Through the system call: glibc refuses
 * the real-time signals it reserves (32, 33), which a parent such as
 * make may have left ignored, and ignored dispositions survive exec. */
static void reset_signal(int sig)
{
        struct kernel_sigaction ka = { .handler = SIG_DFL };
        syscall(SYS_rt_sigaction, sig, &ka, NULL, sizeof(ka.mask));
}

/* In the child: never returns.  Any failure is reported as an errno on
 * errfd (close-on-exec, so a successful exec says nothing). */
static void child_exec(const char *const *argv, const int fds[3], int netns_fd, int errfd)
{
        int high[3], e;
        sigset_t none;

        /* park every fd we need above 10 first: a source may be 0, 1 or 2 */
        errfd = fcntl(errfd, F_DUPFD_CLOEXEC, 10);
        if (errfd < 0)
                _exit(127);
        if (netns_fd >= 0 && setns(netns_fd, CLONE_NEWNET) < 0)
                goto fail;
        for (int i = 0; i < 3; i++) {
                int src = fds[i] >= 0 ? fds[i] : open("/dev/null", (i == 0 ? O_RDONLY : O_WRONLY) | O_CLOEXEC);
                if (src < 0)
                        goto fail;
                high[i] = fcntl(src, F_DUPFD_CLOEXEC, errfd + 1);
                if (high[i] < 0)
                        goto fail;
        }
        for (int i = 0; i < 3; i++)
                if (dup2(high[i], i) < 0)
                        goto fail;
        close_range(3, (unsigned)errfd - 1, 0);
        close_range((unsigned)errfd + 1, ~0U, 0);
        for (int sig = 1; sig < NSIG; sig++)
                reset_signal(sig);
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        execvp(argv[0], (char *const *)argv);
fail:
        e = errno;
        if (write(errfd, &e, sizeof(e)) < 0)
                _exit(127);
        _exit(127);
}

int proc_spawn(const char *const *argv, int stdin_fd, int stdout_fd, int stderr_fd, int netns_fd, pid_t *ret_pid,
               struct tess_error **err)
{
        const int fds[3] = { stdin_fd, stdout_fd, stderr_fd };
        _cleanup_close_ int rd = -1;
        int ep[2], e = 0;
        pid_t pid;
        ssize_t n;

        if (pipe2(ep, O_CLOEXEC) < 0)
                return tess_err(err, errno, "creating a pipe: %s", strerror(errno));
        rd = ep[0];
        pid = fork();
        if (pid < 0) {
                e = errno;
                close(ep[1]);
                return tess_err(err, e, "forking for '%s': %s", argv[0], strerror(e));
        }
        if (pid == 0)
                child_exec(argv, fds, netns_fd, ep[1]);
        close(ep[1]);
        do
                n = read(rd, &e, sizeof(e));
        while (n < 0 && errno == EINTR);
        if (n == sizeof(e)) {
                waitpid(pid, NULL, 0);
                return tess_err(err, e, "starting '%s': %s", argv[0], strerror(e));
        }
        *ret_pid = pid;
        return 0;
}

int proc_status_code(int wstatus)
{
        if (WIFEXITED(wstatus))
                return WEXITSTATUS(wstatus);
        if (WIFSIGNALED(wstatus))
                return 128 + WTERMSIG(wstatus);
        return 255;
}

int proc_wait(pid_t pid, int *ret_status, struct tess_error **err)
{
        int st;

        while (waitpid(pid, &st, 0) < 0) {
                if (errno != EINTR)
                        return tess_err(err, errno, "waiting for process %d: %s", (int)pid, strerror(errno));
        }
        *ret_status = proc_status_code(st);
        return 0;
}

int proc_run(const char *const *argv, const char *input, int netns_fd, struct buf *out, int *ret_status,
             struct tess_error **err)
{
        _cleanup_(buf_release) struct buf local = BUF_INIT;
        _cleanup_close_ int in_rd = -1, out_rd = -1;
        int in[2] = { -1, -1 }, op[2], status, r;
        size_t len = input ? strlen(input) : 0;
        char tmp[4096];
        pid_t pid;

        if (len >= PROC_INPUT_MAX)
                return tess_err(err, EINVAL, "input for '%s' is too long (%zu bytes)", argv[0], len);
        if (!out)
                out = &local;
        if (input) {
                if (pipe2(in, O_CLOEXEC) < 0)
                        return tess_err(err, errno, "creating a pipe: %s", strerror(errno));
                in_rd = in[0];
                /* fits in the pipe's buffer: no reader needed yet */
                ssize_t w = write(in[1], input, len);
                int e = errno;
                close(in[1]);
                if (w != (ssize_t)len)
                        return tess_err(err, w < 0 ? e : EIO, "writing the input of '%s'", argv[0]);
        }
        if (pipe2(op, O_CLOEXEC) < 0)
                return tess_err(err, errno, "creating a pipe: %s", strerror(errno));
        out_rd = op[0];
        r = proc_spawn(argv, in_rd, op[1], op[1], netns_fd, &pid, err);
        close(op[1]);
        if (r < 0)
                return r;
        for (;;) {
                ssize_t n = read(out_rd, tmp, sizeof(tmp));
                if (n == 0)
                        break;
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        break;
                }
                buf_append(out, tmp, (size_t)n);
        }
        r = proc_wait(pid, &status, err);
        if (r < 0)
                return r;
        if (ret_status) {
                *ret_status = status;
                return 0;
        }
        if (status != 0) {
                while (out->len > 0 && out->data[out->len - 1] == '\n')
                        out->data[--out->len] = '\0';
                return tess_err(err, EIO, "'%s' exited with status %d: %s", argv[0], status, out->data);
        }
        return 0;
}

int proc_in_child(int (*fn)(void *arg), void *arg)
{
        pid_t pid = fork();
        int st;

        if (pid < 0)
                return -errno;
        if (pid == 0)
                _exit(fn(arg) & 0xff);
        while (waitpid(pid, &st, 0) < 0)
                if (errno != EINTR)
                        return -errno;
        if (!WIFEXITED(st))
                return -EIO;
        return -WEXITSTATUS(st);
}

int proc_start_time(pid_t pid, uint64_t *ret)
{
        _cleanup_free_ char *path = xasprintf("/proc/%d/stat", (int)pid);
        _cleanup_free_ char *data = NULL;
        unsigned long long start;
        char state;
        size_t len;

        if (pid <= 0 || fs_read_file(path, 4096, &data, &len, NULL) < 0)
                return -ESRCH;
        /* "pid (comm) S ppid ...": comm may hold spaces and parentheses */
        const char *p = strrchr(data, ')');
        if (!p || sscanf(p + 1, " %c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
                         &state, &start) != 2)
                return -EIO;
        if (state == 'Z' || state == 'X')
                return -ESRCH;
        *ret = start;
        return 0;
}

bool proc_alive(pid_t pid, uint64_t start_time)
{
        uint64_t st;

        if (proc_start_time(pid, &st) < 0)
                return false;
        return start_time == 0 || st == start_time;
}

bool proc_in_path(const char *name, const char *path)
{
        _cleanup_free_ char *dirs =
                xstrdup(path ? path : "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
        char *save = NULL;

        for (char *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
                _cleanup_free_ char *file = xasprintf("%s/%s", d, name);
                struct stat st;
                if (stat(file, &st) == 0 && S_ISREG(st.st_mode) && access(file, X_OK) == 0)
                        return true;
        }
        return false;
}
