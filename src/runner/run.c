/* run.c - the execute API: runs, their buffered output, and batch runs.
 *
 * A run is one execution, named by its runId: a batch run is a shell
 * command line (up to three stages: options.clean, options.build, then
 * options.exec or code), a query run is one code block given to the
 * persistent interpreter (pyrepl.c).  Its output waits here, in order, as
 * segments of stdout and stderr bytes (and stage marks), until an exec
 * request fetches it.  A run's states:
 *
 *   RUNNING <-> WAITING_INPUT        (query: the code called input())
 *   RUNNING -> DONE                  (exit code known, output all read)
 *   DONE -> freed                    (its last output was fetched, or kept
 *                                     RUN_KEEP_MS without a fetch)
 *
 * A fetch (exec with any mode) waits up to `wait` ms until the run is
 * ready: done, waiting for input, past a stage mark, or FETCH_MAX bytes
 * pending.  Then it answers with Backend.AI's result object and what output
 * fits in FETCH_MAX.  While RUN_BUF_MAX bytes are pending the runner stops
 * reading the run's pipes: the child blocks (backpressure). */
#include "common/compat.h"

#include <signal.h>
#include <sys/wait.h>

#include "runner/runner.h"

#define READ_CHUNK 65536

enum run_state { RUN_RUNNING, RUN_INPUT, RUN_DONE };

struct seg {
        enum out_kind kind;
        size_t len; /* 0 for marks */
};

struct run {
        struct run *next;
        char id[RMSG_RUNID_MAX + 1];
        bool query;
        enum run_state state;
        int exit_code;
        int64_t done_ms;
        struct rbuf out; /* pending output, the segments' bytes in order */
        struct seg *segs;
        size_t nseg, segcap;
        struct conn *waiter;
        bool kicked; /* output was fetched: resume reading (run_tick) */
        /* batch runs */
        char *cmds[3];
        enum out_kind marks[3]; /* what finishing each stage reports */
        int ncmds, stage;
        pid_t pid;
        bool exited;
        int status;
        int out_fd, err_fd, in_fd;
        struct rbuf in; /* stdin not yet written */
};

static struct run *runs;
static int nruns;
static unsigned run_counter;
static bool any_kicked;

int run_count(void)
{
        return nruns;
}

static struct run *run_find(const char *id)
{
        for (struct run *r = runs; r; r = r->next)
                if (streq(r->id, id))
                        return r;
        return NULL;
}

static void close_watched(int *fd)
{
        if (*fd >= 0)
                watch_del(*fd);
        close_fd(fd);
}

static void run_free(struct run *r)
{
        for (struct run **p = &runs; *p; p = &(*p)->next)
                if (*p == r) {
                        *p = r->next;
                        nruns--;
                        break;
                }
        if (r->waiter)
                conn_reply_err(r->waiter, ECANCELED, "run '%s' was dropped", r->id);
        if (r->query)
                pyrepl_forget(r);
        if (r->pid > 0 && !r->exited) {
                proc_untrack(r->pid);
                kill(-r->pid, SIGKILL);
        }
        close_watched(&r->out_fd);
        close_watched(&r->err_fd);
        close_watched(&r->in_fd);
        for (int i = 0; i < r->ncmds; i++)
                free(r->cmds[i]);
        rbuf_release(&r->out);
        rbuf_release(&r->in);
        free(r->segs);
        free(r);
}

/* Drop runs finished long ago; make room for one more.  0 or -EAGAIN. */
static int run_gc(void)
{
        int64_t now = now_ms();
        struct run *oldest = NULL;

        for (struct run *r = runs, *next; r; r = next) {
                next = r->next;
                if (r->state == RUN_DONE && !r->waiter && now - r->done_ms > RUN_KEEP_MS)
                        run_free(r);
        }
        if (nruns < RUN_MAX)
                return 0;
        for (struct run *r = runs; r; r = r->next)
                if (r->state == RUN_DONE && !r->waiter && (!oldest || r->done_ms < oldest->done_ms))
                        oldest = r;
        if (!oldest)
                return -EAGAIN;
        run_free(oldest);
        return 0;
}

static struct run *run_new(const char *id, bool query)
{
        struct run *r;

        if (run_gc() < 0)
                return NULL;
        r = xcalloc(1, sizeof(*r));
        r->query = query;
        r->out_fd = r->err_fd = r->in_fd = -1;
        if (id)
                snprintf(r->id, sizeof(r->id), "%s", id);
        else
                snprintf(r->id, sizeof(r->id), "run-%lld-%u", (long long)now_ms(), ++run_counter);
        r->next = runs;
        runs = r;
        nruns++;
        return r;
}

/* ---- output ---- */

static void run_push(struct run *r, enum out_kind kind, const char *p, size_t n)
{
        if (kind < OUT_MARK_CLEAN && n == 0)
                return;
        if (kind < OUT_MARK_CLEAN && r->nseg > 0 && r->segs[r->nseg - 1].kind == kind) {
                r->segs[r->nseg - 1].len += n;
        } else {
                if (r->nseg == r->segcap) {
                        r->segcap = r->segcap ? r->segcap * 2 : 8;
                        r->segs = xrealloc(r->segs, r->segcap * sizeof(*r->segs));
                }
                r->segs[r->nseg++] = (struct seg){ kind, n };
        }
        rbuf_append(&r->out, p, n);
}

static bool run_ready(const struct run *r)
{
        if (r->state != RUN_RUNNING || r->out.len >= FETCH_MAX)
                return true;
        for (size_t i = 0; i < r->nseg; i++)
                if (r->segs[i].kind >= OUT_MARK_CLEAN)
                        return true;
        return false;
}

static void batch_resume(struct run *r);

/* Answer c with what r has: Backend.AI's result object. */
static void run_respond(struct conn *c, struct run *r)
{
        static const char *const kinds[] = { "stdout", "stderr" };
        struct rbuf *b;
        const char *status = NULL;
        size_t budget = FETCH_MAX, off = 0, drop = 0;
        bool first = true, finished;

        if (r->waiter == c)
                r->waiter = NULL;
        b = conn_reply_begin(c);
        rbuf_puts(b, ",\"result\":{\"runId\":");
        rbuf_json_str(b, r->id, strlen(r->id));
        rbuf_puts(b, ",\"console\":[");
        for (size_t i = 0; i < r->nseg; i++) {
                struct seg *s = &r->segs[i];
                size_t take;
                if (s->kind >= OUT_MARK_CLEAN) {
                        status = s->kind == OUT_MARK_CLEAN ? "clean-finished" : "build-finished";
                        drop = i + 1;
                        break;
                }
                take = s->len < budget ? s->len : budget;
                /* keep a cut UTF-8 sequence for the next fetch */
                if (take < s->len || (i + 1 == r->nseg && r->state != RUN_DONE))
                        take = rmsg_utf8_prefix(r->out.data + off, take);
                if (take > 0) {
                        rbuf_printf(b, "%s[\"%s\",", first ? "" : ",", kinds[s->kind]);
                        rbuf_json_str(b, r->out.data + off, take);
                        rbuf_puts(b, "]");
                        first = false;
                }
                off += take;
                budget -= take;
                if (take < s->len) {
                        s->len -= take;
                        drop = i;
                        break;
                }
                drop = i + 1;
        }
        rbuf_consume(&r->out, off);
        memmove(r->segs, r->segs + drop, (r->nseg - drop) * sizeof(*r->segs));
        r->nseg -= drop;
        finished = !status && r->nseg == 0 && r->state == RUN_DONE;
        if (!status)
                status = finished ? "finished" : r->nseg == 0 && r->state == RUN_INPUT ? "waiting-input" : "continued";
        rbuf_printf(b, "],\"status\":\"%s\"", status);
        if (finished)
                rbuf_printf(b, ",\"exitCode\":%d", r->exit_code);
        else
                rbuf_puts(b, ",\"exitCode\":null");
        rbuf_printf(b, ",\"options\":{%s},\"files\":[]}",
                    streq(status, "waiting-input") ? "\"is_password\":false" : "");
        conn_reply_end(c);
        if (finished) {
                run_free(r);
        } else {
                /* not from here: we may be inside this run's reader */
                r->kicked = true;
                any_kicked = true;
        }
}

bool run_kicked(void)
{
        return any_kicked;
}

void run_tick(void)
{
        any_kicked = false;
        for (struct run *r = runs, *next; r; r = next) {
                next = r->next;
                if (!r->kicked)
                        continue;
                r->kicked = false;
                /* may answer a waiter and free r (never another run) */
                if (r->query)
                        pyrepl_resume(r);
                else
                        batch_resume(r);
        }
}

static void run_wake(struct run *r)
{
        if (r->waiter && run_ready(r))
                run_respond(r->waiter, r);
}

void run_output(struct run *r, enum out_kind kind, const char *p, size_t n)
{
        run_push(r, kind, p, n);
        run_wake(r);
}

bool run_full(const struct run *r)
{
        return r->out.len >= RUN_BUF_MAX;
}

void run_finish(struct run *r, int exit_code)
{
        r->state = RUN_DONE;
        r->exit_code = exit_code;
        r->done_ms = now_ms();
        run_wake(r);
}

void run_waiting_input(struct run *r)
{
        r->state = RUN_INPUT;
        run_wake(r);
}

static void wait_timeout(struct conn *c)
{
        run_respond(c, conn_ctx(c));
}

static void wait_close(struct conn *c)
{
        struct run *r = conn_ctx(c);

        if (r && r->waiter == c)
                r->waiter = NULL;
}

/* ---- batch runs ---- */

static void batch_pump(struct run *r);
static void batch_exited(void *ptr, pid_t pid, int status);

static void batch_readable(void *ptr, int fd UNUSED, short revents UNUSED)
{
        batch_pump(ptr);
}

static int batch_start_stage(struct run *r)
{
        int o[2] = { -1, -1 }, e[2] = { -1, -1 }, i[2] = { -1, -1 };
        const char *argv[] = { "/bin/sh", "-c", r->cmds[r->stage], NULL };
        struct spawn s = { .argv = argv, .nfds = 3, .as_user = true };
        pid_t pid;
        int err;

        if ((err = make_pipe(o, 0)) < 0 || (err = make_pipe(e, 0)) < 0 || (err = make_pipe(i, 1)) < 0)
                goto out_close;
        s.fds[0] = i[0];
        s.fds[1] = o[1];
        s.fds[2] = e[1];
        pid = proc_spawn(&s);
        if (pid < 0) {
                err = (int)pid;
                goto out_close;
        }
        close(i[0]);
        close(o[1]);
        close(e[1]);
        r->pid = pid;
        r->exited = false;
        r->out_fd = o[0];
        r->err_fd = e[0];
        r->in_fd = i[1];
        watch_add(r->out_fd, POLLIN, batch_readable, r);
        watch_add(r->err_fd, POLLIN, batch_readable, r);
        proc_track(pid, batch_exited, r, false);
        return 0;

out_close:
        for (int k = 0; k < 2; k++) {
                close_fd(&o[k]);
                close_fd(&e[k]);
                close_fd(&i[k]);
        }
        return err;
}

static void batch_stage_end(struct run *r)
{
        int code = WIFEXITED(r->status) ? WEXITSTATUS(r->status) : 128 + WTERMSIG(r->status);

        close_watched(&r->in_fd);
        r->in.len = 0;
        r->pid = 0;
        if (code == 0 && r->stage + 1 < r->ncmds) {
                run_push(r, r->marks[r->stage], NULL, 0);
                r->stage++;
                int err = batch_start_stage(r);
                if (err < 0) {
                        char msg[256];
                        int n = snprintf(msg, sizeof(msg), "tessera-runner: cannot start: %s\n", strerror(-err));
                        run_push(r, OUT_STDERR, msg, (size_t)n);
                        run_finish(r, 127);
                        return;
                }
                run_wake(r);
                return;
        }
        run_finish(r, code);
}

/* Read what the pipes hold (one chunk each while the command runs; all of
 * it once it exited, then close them: a background process keeping them
 * open does not keep the run going). */
static void batch_pump(struct run *r)
{
        int *fds[2] = { &r->out_fd, &r->err_fd };
        char buf[READ_CHUNK];

        for (int k = 0; k < 2; k++) {
                while (*fds[k] >= 0) {
                        ssize_t n;
                        if (run_full(r)) {
                                watch_pause(r->out_fd, true);
                                watch_pause(r->err_fd, true);
                                return;
                        }
                        n = read(*fds[k], buf, sizeof(buf));
                        if (n > 0) {
                                run_output(r, k == 0 ? OUT_STDOUT : OUT_STDERR, buf, (size_t)n);
                                if (!r->exited)
                                        break;
                                continue;
                        }
                        if (n < 0 && errno == EINTR)
                                continue;
                        if (n < 0 && errno == EAGAIN && !r->exited)
                                break;
                        close_watched(fds[k]);
                }
        }
        if (r->exited && r->out_fd < 0 && r->err_fd < 0 && r->state != RUN_DONE)
                batch_stage_end(r);
}

static void batch_resume(struct run *r)
{
        if (r->state == RUN_DONE)
                return;
        watch_pause(r->out_fd, false);
        watch_pause(r->err_fd, false);
        if (r->exited)
                batch_pump(r);
}

static void batch_exited(void *ptr, pid_t pid UNUSED, int status)
{
        struct run *r = ptr;

        r->exited = true;
        r->status = status;
        batch_pump(r);
}

static void batch_writable(void *ptr, int fd UNUSED, short revents UNUSED)
{
        struct run *r = ptr;
        ssize_t w = write(r->in_fd, r->in.data, r->in.len);

        if (w < 0 && (errno == EAGAIN || errno == EINTR))
                return;
        if (w < 0) {
                /* the command closed its stdin */
                close_watched(&r->in_fd);
                r->in.len = 0;
                return;
        }
        rbuf_consume(&r->in, (size_t)w);
        if (r->in.len == 0)
                watch_set(r->in_fd, 0);
}

static int batch_start(struct run *r, const struct rmsg_req *q)
{
        const char *stages[3] = { q->opt_clean, q->opt_build, q->opt_exec && *q->opt_exec ? q->opt_exec : q->code };
        const enum out_kind marks[3] = { OUT_MARK_CLEAN, OUT_MARK_BUILD, OUT_STDOUT };

        for (int i = 0; i < 3; i++) {
                if (!stages[i] || !*stages[i])
                        continue;
                r->cmds[r->ncmds] = xstrdup(stages[i]);
                r->marks[r->ncmds++] = marks[i];
        }
        return batch_start_stage(r);
}

/* ---- requests ---- */

void op_exec(struct conn *c, const struct rmsg_req *q)
{
        struct run *r = NULL;
        int64_t wait = q->wait_ms >= 0 ? q->wait_ms : WAIT_DEFAULT_MS;
        int err;

        switch (q->mode) {
        case RMSG_MODE_QUERY:
        case RMSG_MODE_BATCH:
                if (q->run_id && (r = run_find(q->run_id))) {
                        if (r->state != RUN_DONE || r->waiter) {
                                conn_reply_err(c, EBUSY, "run '%s' is still in progress", q->run_id);
                                return;
                        }
                        run_free(r);
                }
                r = run_new(q->run_id, q->mode == RMSG_MODE_QUERY);
                if (!r) {
                        conn_reply_err(c, EAGAIN, "too many runs in progress");
                        return;
                }
                err = r->query ? pyrepl_start(r, q->code, q->code_len) : batch_start(r, q);
                if (err < 0) {
                        run_free(r);
                        conn_reply_err(c, -err, "cannot start the run: %s", strerror(-err));
                        return;
                }
                break;
        case RMSG_MODE_CONTINUE:
        case RMSG_MODE_INPUT:
                r = run_find(q->run_id);
                if (!r) {
                        conn_reply_err(c, ENOENT, "no run '%s'", q->run_id);
                        return;
                }
                if (q->mode == RMSG_MODE_CONTINUE)
                        break;
                if (r->query) {
                        err = pyrepl_input(r, q->code, q->code_len);
                        if (err < 0) {
                                conn_reply_err(c, -err, "run '%s' is not waiting for input", r->id);
                                return;
                        }
                        r->state = RUN_RUNNING;
                } else if (r->in_fd >= 0) {
                        rbuf_append(&r->in, q->code, q->code_len);
                        rbuf_append(&r->in, "\n", 1);
                        watch_add(r->in_fd, POLLOUT, batch_writable, r);
                } else {
                        conn_reply_err(c, EPIPE, "run '%s' takes no more input", r->id);
                        return;
                }
                break;
        case RMSG_MODE_COMPLETE: {
                if (pyrepl_complete(c, q->code ? q->code : "", q->code ? q->code_len : 0) == 0)
                        return; /* answered when the interpreter is */
                /* busy with a query, or no interpreter: no candidates */
                struct rbuf *b = conn_reply_begin(c);
                rbuf_puts(b, ",\"result\":{\"status\":\"finished\",\"completions\":[]}");
                conn_reply_end(c);
                return;
        }
        case RMSG_MODE_NONE:
                conn_reply_err(c, EINVAL, "exec needs a mode");
                return;
        }
        if (r->waiter) {
                conn_reply_err(c, EBUSY, "another request is waiting on run '%s'", r->id);
                return;
        }
        if (wait == 0 || run_ready(r)) {
                run_respond(c, r);
                return;
        }
        r->waiter = c;
        conn_wait(c, now_ms() + wait, wait_timeout, wait_close, r);
}

void op_interrupt(struct conn *c, const struct rmsg_req *q)
{
        struct run *r = q->run_id ? run_find(q->run_id) : NULL;

        if (q->run_id && !r) {
                conn_reply_err(c, ENOENT, "no run '%s'", q->run_id);
                return;
        }
        if (r && !r->query) {
                if (r->pid > 0 && !r->exited)
                        kill(-r->pid, SIGINT);
        } else {
                pyrepl_interrupt(r);
        }
        conn_reply_begin(c);
        conn_reply_end(c);
}
