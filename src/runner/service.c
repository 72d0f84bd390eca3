/* service.c - in-container apps (the image's ai.backend.service-ports):
 * `start-service NAME` runs the command the agent gives, as the session
 * user, its output going to the runner's (the container log), and answers
 * once the port accepts connections: a LISTEN socket on that port in
 * /proc/net/tcp or tcp6 (the runner's network namespace is the
 * container's), probed every PROBE_MS.  A service already running is not
 * started twice.  `shutdown-service NAME` sends SIGTERM to the service's
 * process group (proc_spawn made it a session of its own), SIGKILL after
 * STOP_GRACE_MS, and answers once the service exited; it may then be
 * started again. */
#include "common/compat.h"

#include <signal.h>
#include <sys/wait.h>

#include "runner/runner.h"

#define SERVICE_MAX     32
#define PROBE_MS        100
#define SERVICE_WAIT_MS 30000
#define STOP_GRACE_MS   5000 /* from SIGTERM to SIGKILL */
#define STOP_KILL_MS    2000 /* from SIGKILL to giving up */

struct service {
        char name[RMSG_NAME_MAX + 1];
        pid_t pid;
        int port;
        bool running;
        struct conn *waiter;
        int64_t give_up;
        struct conn *stopper; /* a shutdown-service waiting for the exit */
        bool killed;          /* SIGKILL sent */
};

static struct service services[SERVICE_MAX];

static bool listening_in(const char *file, int port)
{
        FILE *f = fopen(file, "re");
        char line[512];
        bool found = false;

        if (!f)
                return false;
        while (!found && fgets(line, sizeof(line), f)) {
                unsigned lport, st;
                if (sscanf(line, " %*u: %*[0-9A-Fa-f]:%x %*[0-9A-Fa-f]:%*x %x", &lport, &st) == 2)
                        found = st == 0x0a && (int)lport == port;
        }
        fclose(f);
        return found;
}

static bool port_listening(int port)
{
        return listening_in("/proc/net/tcp", port) || listening_in("/proc/net/tcp6", port);
}

static void reply_ok(struct conn *c, struct service *s, const char *status)
{
        rbuf_printf(conn_reply_begin(c), ",\"name\":\"%s\",\"pid\":%d,\"port\":%d,\"status\":\"%s\"", s->name,
                    (int)s->pid, s->port, status);
        conn_reply_end(c);
}

static void probe(struct conn *c)
{
        struct service *s = conn_ctx(c);

        if (port_listening(s->port))
                reply_ok(c, s, "listening");
        else if (now_ms() >= s->give_up)
                conn_reply_err(c, ETIMEDOUT, "service '%s' is not listening on port %d yet", s->name, s->port);
        else
                conn_set_deadline(c, now_ms() + PROBE_MS);
}

static void waiter_close(struct conn *c)
{
        struct service *s = conn_ctx(c);

        if (s->waiter == c)
                s->waiter = NULL;
}

static void reply_stopped(struct conn *c, struct service *s)
{
        rbuf_printf(conn_reply_begin(c), ",\"name\":\"%s\",\"pid\":%d,\"status\":\"stopped\"", s->name, (int)s->pid);
        conn_reply_end(c);
}

static void exited(void *ptr, pid_t pid UNUSED, int status)
{
        struct service *s = ptr;

        s->running = false;
        if (s->waiter)
                conn_reply_err(s->waiter, ECHILD, "service '%s' exited (%s %d)", s->name,
                               WIFEXITED(status) ? "status" : "signal",
                               WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
        if (s->stopper)
                reply_stopped(s->stopper, s);
}

void op_start_service(struct conn *c, const struct rmsg_req *q)
{
        struct service *s = NULL, *free_slot = NULL;

        for (int i = 0; i < SERVICE_MAX && !s; i++) {
                if (streq(services[i].name, q->name))
                        s = &services[i];
                else if (!services[i].running && !services[i].waiter && !services[i].stopper && !free_slot)
                        free_slot = &services[i];
        }
        if (s && s->waiter) {
                conn_reply_err(c, EBUSY, "service '%s' is starting", q->name);
                return;
        }
        if (s && s->stopper) {
                conn_reply_err(c, EBUSY, "service '%s' is stopping", q->name);
                return;
        }
        if (!s || !s->running) {
                struct spawn sp = { .argv = q->argv, .env_extra = q->env, .fds = { -1, 1, 2 }, .nfds = 3, .as_user = true };
                pid_t pid;
                if (!s)
                        s = free_slot;
                if (!s) {
                        conn_reply_err(c, EAGAIN, "too many services");
                        return;
                }
                pid = proc_spawn(&sp);
                if (pid < 0) {
                        conn_reply_err(c, (int)-pid, "starting service '%s': %s", q->name, strerror((int)-pid));
                        return;
                }
                *s = (struct service){ .pid = pid, .port = q->port, .running = true };
                snprintf(s->name, sizeof(s->name), "%s", q->name);
                proc_track(pid, exited, s, false);
        } else if (q->port > 0) {
                s->port = q->port;
        }
        if (s->port <= 0) {
                reply_ok(c, s, "started");
                return;
        }
        if (port_listening(s->port)) {
                reply_ok(c, s, "listening");
                return;
        }
        s->waiter = c;
        s->give_up = now_ms() + (q->wait_ms >= 0 ? q->wait_ms : SERVICE_WAIT_MS);
        conn_wait(c, now_ms() + PROBE_MS, probe, waiter_close, s);
}

/* ---- shutdown-service ---- */

static void stop_timeout(struct conn *c)
{
        struct service *s = conn_ctx(c);

        if (!s->killed) {
                s->killed = true;
                kill(-s->pid, SIGKILL);
                conn_set_deadline(c, now_ms() + STOP_KILL_MS);
        } else {
                conn_reply_err(c, ETIMEDOUT, "service '%s' did not exit", s->name);
        }
}

static void stopper_close(struct conn *c)
{
        struct service *s = conn_ctx(c);

        if (s->stopper == c)
                s->stopper = NULL;
}

void op_shutdown_service(struct conn *c, const struct rmsg_req *q)
{
        struct service *s = NULL;

        for (int i = 0; i < SERVICE_MAX && !s; i++)
                if (services[i].running && streq(services[i].name, q->name))
                        s = &services[i];
        if (!s) {
                conn_reply_err(c, ENOENT, "service '%s' is not running", q->name);
                return;
        }
        if (s->stopper) {
                conn_reply_err(c, EBUSY, "service '%s' is stopping", q->name);
                return;
        }
        /* its process group: the app and what it started (Jupyter's kernels
         * have sessions of their own; Jupyter ends them on SIGTERM) */
        if (kill(-s->pid, SIGTERM) < 0 && kill(s->pid, SIGTERM) < 0) {
                conn_reply_err(c, errno, "stopping service '%s': %s", q->name, strerror(errno));
                return;
        }
        s->stopper = c;
        s->killed = false;
        conn_wait(c, now_ms() + STOP_GRACE_MS, stop_timeout, stopper_close, s);
}
