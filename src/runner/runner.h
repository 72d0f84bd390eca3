/* runner.h - what the runner's files share (docs/design/runner.md).
 *
 * The runner is one thread around one poll() loop (loop.c).  main.c sets it
 * up and shuts it down; conn.c owns the socket and the connections and
 * dispatches requests to the op handlers: run.c (exec: runs and their
 * output), pyrepl.c (the persistent Python interpreter behind query runs),
 * pty.c, files.c, service.c.  proc.c spawns and reaps every child.
 *
 * It is static, libc only: it includes src/common/compat.h for the feature
 * macros, cleanup attributes and banned.h, and links only src/common/xalloc.c
 * (the x-allocators, libc only). */
#ifndef TESSERA_RUNNER_H
#define TESSERA_RUNNER_H

#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "runner/msg.h"

#define RUNNER_VERSION "1"
#define RUNNER_SOCKET  "runner.sock"

#define CONN_MAX          32
#define FETCH_MAX         (1u << 20)  /* output bytes in one exec answer */
#define RUN_BUF_MAX       (1u << 20)  /* buffered output per run before backpressure */
#define RUN_MAX           64          /* runs kept at once */
#define RUN_KEEP_MS       (10 * 60 * 1000)
#define WAIT_DEFAULT_MS   1000        /* exec wait when the request gives none */
#define HEADER_TIMEOUT_MS 30000
#define CHILD_MAX         256         /* tracked children: runs, ptys, services */

/* ---- configuration (main.c) ---- */

struct runner_conf {
        const char *socket_dir;
        const char *home;
        const char *python;      /* interpreter for query mode */
        bool batch;              /* batch session: exit with the startup command */
        char **batch_argv;       /* the startup command */
        bool auth_outside;       /* peers must be outside our pid namespace */
        uid_t agent_uid;         /* ... with this uid (auth_outside) */
        bool switch_user;        /* user processes run as uid/gid */
        uid_t uid;
        gid_t gid;
        const char *user_name;
        int grace_ms;            /* SIGTERM -> SIGKILL */
};
extern struct runner_conf rconf;

/* Start the shutdown (idempotent): stop listening, SIGTERM every child,
 * SIGKILL after the grace period, exit when none is left. */
void runner_shutdown(void);
bool runner_shutting_down(void);

/* ---- util.c ---- */

int64_t now_ms(void);
void rlog(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int set_nonblock(int fd);
/* A pipe, both ends O_CLOEXEC; `nonblock_end` (0 read, 1 write, -1 none)
 * made O_NONBLOCK.  0 or -errno. */
int make_pipe(int fds[2], int nonblock_end);
void close_fd(int *fd);

/* ---- loop.c: fd watches ---- */

typedef void (*watch_fn)(void *ptr, int fd, short revents);

void watch_add(int fd, short events, watch_fn fn, void *ptr);
void watch_set(int fd, short events);
/* A paused watch is left out of poll() (backpressure) until resumed. */
void watch_pause(int fd, bool paused);
void watch_del(int fd);
/* One poll() round of at most timeout_ms (-1: no limit). */
void loop_once(int timeout_ms);

/* ---- proc.c: children ---- */

typedef void (*child_fn)(void *ptr, pid_t pid, int status);

struct spawn {
        const char *const *argv;      /* argv[0] looked up in PATH */
        const char *const *env_extra; /* NULL-terminated KEY=value, override the inherited ones */
        int fds[5];                   /* become the child's 0..nfds-1; -1: /dev/null */
        int nfds;
        int ctty;                     /* 1: make fd 0 the controlling terminal */
        bool as_user;                 /* drop to rconf.uid/gid when rconf.switch_user */
};

/* Fork and exec in a new session (setsid), signals reset, other fds
 * closed, cwd the home directory.  The child's pid, or -errno. */
pid_t proc_spawn(const struct spawn *s);
/* Call fn when pid exits (after it is reaped).  hup: send SIGHUP too on
 * shutdown (terminal sessions). */
void proc_track(pid_t pid, child_fn fn, void *ptr, bool hup);
void proc_untrack(pid_t pid);
/* Reap every exited child (SIGCHLD). */
void proc_reap(void);
/* Signal everything we started: as PID 1 every process of the namespace,
 * otherwise every session we created and every child of ours. */
void proc_signal_all(int sig);
/* True when no child is left (reaped or not). */
bool proc_none_left(void);
int proc_count(void);
/* File-system identity of the user for file requests (setfsuid), and back. */
void proc_fs_user(void);
void proc_fs_root(void);

/* ---- conn.c: requests ---- */

struct conn;

/* Start listening on <socket_dir>/runner.sock.  0 or -errno. */
int conn_listen(void);
void conn_stop_listening(void);
/* The earliest deadline of any connection (ms, monotonic), or -1. */
int64_t conn_next_deadline(void);
void conn_run_timers(void);
/* Flush pending answers (blocking, bounded) before exit. */
void conn_flush_all(void);

/* Answers.  A handler ends its request with exactly one of conn_reply_*,
 * conn_wait (answered later) or a streaming state. */
/* The answer object so far ({"ok":true,"id":N); add ,"key":value members. */
struct rbuf *conn_reply_begin(struct conn *c);
void conn_reply_end(struct conn *c);
void conn_reply_err(struct conn *c, int errnum, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Pass fd (owned: closed after sending) with the answer (SCM_RIGHTS). */
void conn_pass_fd(struct conn *c, int fd);
/* Answer later: until then `on_timeout` is called at `deadline` and
 * `on_close` (also on a finished answer) releases what ctx holds. */
void conn_wait(struct conn *c, int64_t deadline, void (*on_timeout)(struct conn *c), void (*on_close)(struct conn *c),
               void *ctx);
void conn_set_deadline(struct conn *c, int64_t deadline);
void *conn_ctx(struct conn *c);
/* Read `size` payload bytes into fd (owned), then call done(c, 0) or
 * done(c, -errno); done answers. */
void conn_recv_file(struct conn *c, int fd, uint64_t size, void (*done)(struct conn *c, int r), void (*on_close)(struct conn *c),
                    void *ctx);
/* After the answer, send `size` bytes of fd (owned). */
void conn_send_file(struct conn *c, int fd, uint64_t size);

/* ---- op handlers ---- */

void op_exec(struct conn *c, const struct rmsg_req *r);      /* run.c */
void op_interrupt(struct conn *c, const struct rmsg_req *r); /* run.c */
void op_pty(struct conn *c, const struct rmsg_req *r);       /* pty.c */
void op_upload(struct conn *c, const struct rmsg_req *r);    /* files.c */
void op_download(struct conn *c, const struct rmsg_req *r);  /* files.c */
void op_list(struct conn *c, const struct rmsg_req *r);      /* files.c */
void op_start_service(struct conn *c, const struct rmsg_req *r); /* service.c */
void op_shutdown_service(struct conn *c, const struct rmsg_req *r);
void op_restart(struct conn *c, const struct rmsg_req *r);   /* main.c */

/* ---- run.c: runs and their output ---- */

struct run;

enum out_kind { OUT_STDOUT, OUT_STDERR, OUT_MARK_CLEAN, OUT_MARK_BUILD };

void run_output(struct run *r, enum out_kind kind, const char *p, size_t n);
/* Output pending reached RUN_BUF_MAX: stop reading the child. */
bool run_full(const struct run *r);
void run_finish(struct run *r, int exit_code);
void run_waiting_input(struct run *r);
/* Resume reading for runs whose output was fetched (from the loop only). */
void run_tick(void);
bool run_kicked(void);
int run_count(void);

/* ---- pyrepl.c: the query interpreter ---- */

/* Send code to the interpreter (started on first use) for run r.  0, or
 * -EBUSY when another query run is in progress, -errno. */
int pyrepl_start(struct run *r, const char *code, size_t len);
int pyrepl_input(struct run *r, const char *text, size_t len);
/* Answer c's exec of mode complete with the interpreter's completions of
 * text's last word (starting it if needed); -EBUSY while a query runs. */
int pyrepl_complete(struct conn *c, const char *text, size_t len);
int pyrepl_interrupt(struct run *r);
/* The run r may take more output (fetched): resume reading (run_tick). */
void pyrepl_resume(struct run *r);
/* Run r is being freed. */
void pyrepl_forget(struct run *r);
bool pyrepl_alive(void);

#endif
