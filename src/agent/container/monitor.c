/* monitor.c - see monitor.h.
 *
 *   spawn ──> runc run --detach ──> report "ok <pid>"
 *                  │ fails
 *                  └──> runc delete, report "err <runc's message>", exit 1
 *   running: copy output to the log, reap children
 *   init reaped ──> drain the output (2 s at most) ──> read the OOM count
 *               ──> exit.json ──> runc delete ──> teardown ──> exit 0 */
#include "common/compat.h"

#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>

#include "agent/container/cgroup_stats.h"
#include "agent/container/container-internal.h"
#include "agent/container/container.h"
#include "agent/container/monitor.h"
#include "agent/container/proc.h"
#include "common/buf.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/timeutil.h"

#define DRAIN_USEC (2 * USEC_PER_SEC)

struct monitor {
        const char *dir;
        struct container_record rec;
        char *runc_log;
};

/* Run `runc --root R --log L --log-format json ARGS...` with its output on
 * out_fd; RET its status. */
static int run_runc(const struct monitor *m, const char *const *args, int out_fd, int *ret_status,
                    struct tess_error **err)
{
        const char *argv[RUNC_ARGV_MAX];
        pid_t pid;
        int r;

        container_runc_argv(&m->rec, m->runc_log, args, argv);
        r = proc_spawn(argv, -1, out_fd, out_fd, -1, &pid, err);
        if (r < 0)
                return r;
        return proc_wait(pid, ret_status, err);
}

/* The message of the last error runc logged, or NULL. */
static char *runc_error(const struct monitor *m)
{
        _cleanup_free_ char *text = NULL;
        char *msg = NULL;
        size_t len;

        if (fs_read_file(m->runc_log, 1 << 20, &text, &len, NULL) < 0)
                return NULL;
        for (char *line = text; line && *line;) {
                char *end = strchr(line, '\n');
                if (end)
                        *end = '\0';
                json_t *o = json_loads(line, 0, NULL);
                const char *s = json_string_value(json_object_get(o, "msg"));
                if (s && streq_ptr(json_string_value(json_object_get(o, "level")), "error")) {
                        free(msg);
                        msg = xstrdup(s);
                }
                json_decref(o);
                line = end ? end + 1 : NULL;
        }
        return msg;
}

/* Write the start report on stdout, then let stdout go. */
static void report(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void report(const char *fmt, ...)
{
        _cleanup_(buf_release) struct buf b = BUF_INIT;
        va_list ap;
        int null;

        va_start(ap, fmt);
        buf_vprintf(&b, fmt, ap);
        va_end(ap);
        for (char *p = b.data; *p; p++)
                if (*p == '\n')
                        *p = ' ';
        buf_putc(&b, '\n');
        if (write(STDOUT_FILENO, b.data, b.len) < 0)
                log_debug("the agent did not wait for the report");
        null = open("/dev/null", O_WRONLY | O_CLOEXEC);
        if (null >= 0) {
                dup2(null, STDOUT_FILENO);
                close(null);
        }
}

static void runc_delete(const struct monitor *m)
{
        struct tess_error *err = NULL;
        int status;

        if (run_runc(m, (const char *[]){ "delete", "--force", m->rec.id, NULL }, STDERR_FILENO, &status, &err) < 0) {
                log_error("id=%s runc delete: %s", m->rec.id, err->msg);
                tess_error_free(err);
        } else if (status != 0) {
                log_warn("id=%s runc delete exited with status %d", m->rec.id, status);
        }
}

/* `runc run --detach` (create and start in one runc process: a Go start-up
 * less than create + start); the init, orphaned when runc exits, becomes
 * our child.  RET the container's init. */
static int start_container(const struct monitor *m, int out_fd, pid_t *ret_pid, struct tess_error **err)
{
        _cleanup_free_ char *bundle = container_file(m->dir, "bundle");
        _cleanup_free_ char *pidfile = container_file(m->dir, CT_CONTAINER_PID);
        uint64_t start;
        int status, r;

        r = run_runc(m,
                     (const char *[]){ "run", "--detach", "--bundle", bundle, "--pid-file", pidfile, m->rec.id,
                                       NULL },
                     out_fd, &status, err);
        if (r < 0)
                return r;
        if (status != 0) {
                _cleanup_free_ char *msg = runc_error(m);
                return tess_err(err, EIO, "%s", msg ? msg : "runc run failed");
        }
        if (container_pidfile_read(pidfile, ret_pid, &start) < 0)
                return tess_err(err, EIO, "runc run wrote no pid file '%s'", pidfile);
        return 0;
}

/* Copy output until the init is reaped and its output drained. */
static int watch(const struct monitor *m, pid_t init, int out_fd, int sig_fd, int *ret_wstatus)
{
        _cleanup_(container_log_closep) struct container_log *log = NULL;
        struct tess_error *err = NULL;
        bool exited = false, log_failed = false;
        int64_t deadline = 0;
        char data[65536];

        if (container_log_open(m->dir, m->rec.log_max, &log, &err) < 0) {
                log_error("id=%s %s; the output is dropped", m->rec.id, err->msg);
                err = tess_error_free(err);
                log_failed = true;
        }
        for (;;) {
                struct pollfd p[2] = { { .fd = out_fd, .events = POLLIN }, { .fd = sig_fd, .events = POLLIN } };
                int timeout = -1;
                if (exited) {
                        int64_t left = deadline - monotonic_usec();
                        if (out_fd < 0 || left <= 0)
                                return 0;
                        timeout = (int)(left / USEC_PER_MSEC) + 1;
                }
                if (poll(p, 2, timeout) < 0) {
                        if (errno == EINTR)
                                continue;
                        return log_errno(LOG_LEVEL_ERROR, -errno, "id=%s poll", m->rec.id);
                }
                if (p[0].revents) {
                        ssize_t n = read(out_fd, data, sizeof(data));
                        if (n > 0 && !log_failed && container_log_write(log, data, (size_t)n, &err) < 0) {
                                log_error("id=%s %s; the output is dropped", m->rec.id, err->msg);
                                err = tess_error_free(err);
                                log_failed = true;
                        }
                        if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN))
                                out_fd = -1; /* every writer is gone */
                }
                if (p[1].revents) {
                        struct signalfd_siginfo si;
                        int st;
                        pid_t pid;
                        while (read(sig_fd, &si, sizeof(si)) == sizeof(si))
                                ;
                        while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
                                if (pid == init && !exited) {
                                        exited = true;
                                        *ret_wstatus = st;
                                        deadline = monotonic_usec() + DRAIN_USEC;
                                }
                        }
                }
        }
}

static void finish(const struct monitor *m, int wstatus)
{
        struct container_exit ex = {
                .exit_code = proc_status_code(wstatus),
                .signal = WIFSIGNALED(wstatus) ? WTERMSIG(wstatus) : 0,
                .finished_at = now_usec(),
        };
        enum cgroup_mode mode = cgroup_mode_detect(m->rec.cgroup_root);
        struct tess_error *err = NULL;
        uint64_t ooms = 0;

        /* before runc delete removes the cgroup */
        if (cgroup_oom_kills(m->rec.cgroup_root, mode, m->rec.cgroup_path, &ooms, &err) < 0) {
                log_warn("id=%s reading the OOM count: %s", m->rec.id, err->msg);
                err = tess_error_free(err);
        }
        ex.oom_killed = ooms > 0;
        /* and its last counters: what it used since the agent last looked */
        struct container_stats cs;
        if (cgroup_stats_read(m->rec.cgroup_root, mode, m->rec.cgroup_path, &cs, NULL) >= 0) {
                ex.has_usage = true;
                ex.cpu_ns = cs.cpu_usage_ns;
                ex.mem = cs.mem_usage_bytes;
                ex.io_read = cs.io_read_bytes;
                ex.io_write = cs.io_write_bytes;
        }
        if (container_exit_write(m->dir, &ex, &err) < 0) {
                log_error("id=%s %s", m->rec.id, err->msg);
                err = tess_error_free(err);
        }
        runc_delete(m);
        if (container_teardown(&m->rec, &err) < 0) {
                log_error("id=%s teardown: %s", m->rec.id, err->msg);
                tess_error_free(err);
        }
}

static int monitor_run(struct monitor *m, int sig_fd)
{
        _cleanup_free_ char *pidfile = container_file(m->dir, CT_MONITOR_PID);
        struct tess_error *err = NULL;
        int out[2], wstatus = 0, r;
        pid_t init;

        r = container_record_read(m->dir, &m->rec, &err);
        if (r < 0 || container_pidfile_write(pidfile, getpid(), &err) < 0) {
                report("err %s", err->msg);
                tess_error_free(err);
                return 1;
        }
        /* without room for its exit record a container would end unseen
         * on a full disk: it does not start */
        if (container_exit_reserve(m->dir, &err) < 0) {
                report("err no room for the container's exit record: %s", err->msg);
                tess_error_free(err);
                return 1;
        }
        m->runc_log = container_file(m->dir, CT_RUNC_LOG);
        if (pipe2(out, O_CLOEXEC) < 0) {
                report("err creating a pipe: %s", strerror(errno));
                return 1;
        }
        r = start_container(m, out[1], &init, &err);
        close(out[1]);
        if (r < 0) {
                /* delete first: once told, the agent removes the directory,
                 * where runc delete would write its log (t3020 saw runc.log
                 * left behind) */
                runc_delete(m);
                report("err %s", err->msg);
                tess_error_free(err);
                close(out[0]);
                return 1;
        }
        report("ok %d", (int)init);
        watch(m, init, out[0], sig_fd, &wstatus);
        close(out[0]);
        finish(m, wstatus);
        return 0;
}

int monitor_main(int argc, char **argv)
{
        struct monitor m = { 0 };
        _cleanup_close_ int sig_fd = -1;
        sigset_t chld;
        int r;

        if (argc != 2) {
                fprintf(stderr, "usage: tessera _monitor DIR (started by the agent)\n");
                return 2;
        }
        m.dir = argv[1];
        log_set_prefix("tessera-monitor");
        signal(SIGPIPE, SIG_IGN);
        signal(SIGTERM, SIG_IGN);
        signal(SIGINT, SIG_IGN);
        signal(SIGHUP, SIG_IGN);
        sigemptyset(&chld);
        sigaddset(&chld, SIGCHLD);
        sigprocmask(SIG_BLOCK, &chld, NULL);
        sig_fd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
        if (sig_fd < 0 || prctl(PR_SET_CHILD_SUBREAPER, 1) < 0) {
                report("err setting up the monitor: %s", strerror(errno));
                return 1;
        }
        r = monitor_run(&m, sig_fd);
        container_record_release(&m.rec);
        free(m.runc_log);
        return r;
}

struct spawn {
        const char *exe, *dir;
        int report_fd, log_fd;
};

/* The middle child: a new session, the monitor, then gone, so that the
 * monitor is nobody's child but init's. */
static int spawn_detached(void *arg)
{
        const struct spawn *sp = arg;
        const char *argv[] = { sp->exe, "_monitor", sp->dir, NULL };
        struct tess_error *e = NULL;
        pid_t mon;

        setsid();
        if (proc_spawn(argv, -1, sp->report_fd, sp->log_fd, -1, &mon, &e) < 0) {
                dprintf(sp->log_fd, "tessera: starting the monitor: %s\n", e->msg);
                return e->code;
        }
        return 0;
}

int monitor_spawn(const char *exe, const char *dir, int *ret_report_fd, struct tess_error **err)
{
        _cleanup_free_ char *log_path = container_file(dir, CT_MONITOR_LOG);
        _cleanup_close_ int log_fd = -1, rd = -1;
        int p[2], r;

        log_fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
        if (log_fd < 0)
                return tess_err(err, errno, "opening '%s': %s", log_path, strerror(errno));
        if (pipe2(p, O_CLOEXEC) < 0)
                return tess_err(err, errno, "creating a pipe: %s", strerror(errno));
        rd = p[0];
        struct spawn sp = { exe, dir, p[1], log_fd };
        r = proc_in_child(spawn_detached, &sp);
        close(p[1]);
        if (r < 0)
                return tess_err(err, -r, "starting the monitor '%s': %s (see '%s')", exe, strerror(-r), log_path);
        *ret_report_fd = TAKE_FD(rd);
        return 0;
}

int monitor_wait_started(int report_fd, int64_t timeout_usec, pid_t *ret_pid, struct tess_error **err)
{
        _cleanup_(buf_release) struct buf line = BUF_INIT;
        int64_t deadline = monotonic_usec() + timeout_usec;
        char tmp[1024];
        int pid;

        while (!memchr(line.data, '\n', line.len)) {
                struct pollfd p = { .fd = report_fd, .events = POLLIN };
                int64_t left = deadline - monotonic_usec();
                if (left <= 0)
                        return tess_err(err, ETIMEDOUT, "the container did not start in %lld s",
                                        (long long)(timeout_usec / USEC_PER_SEC));
                int n = poll(&p, 1, (int)(left / USEC_PER_MSEC) + 1);
                if (n < 0 && errno != EINTR)
                        return tess_err(err, errno, "waiting for the monitor: %s", strerror(errno));
                if (n <= 0)
                        continue;
                ssize_t got = read(report_fd, tmp, sizeof(tmp));
                if (got < 0 && errno == EINTR)
                        continue;
                if (got <= 0)
                        break;
                buf_append(&line, tmp, (size_t)got);
        }
        line.data[strcspn(line.data, "\n")] = '\0';
        if (strncmp(line.data, "ok ", 3) == 0 && sscanf(line.data + 3, "%d", &pid) == 1 && pid > 0) {
                *ret_pid = pid;
                return 0;
        }
        if (strncmp(line.data, "err ", 4) == 0)
                return tess_err(err, EIO, "%s", line.data + 4);
        return tess_err(err, EIO, "the monitor ended without a report (see its monitor.log)");
}
