/* runner_client.h - the agent's side of the runner protocol
 * (docs/design/runner.md): one connection to <run dir>/runner.sock per
 * request, a JSON line each way, then raw bytes for uploads and downloads
 * and an fd (SCM_RIGHTS) for terminals.
 *
 * Every call blocks, with a deadline: the client's timeout_ms plus the
 * wait the request itself asks the runner for (exec, start-service).  The
 * agent may move these onto its event loop later; the wire format does not
 * change for that.  The runner's answers are checked (types, sizes, the
 * passed fd is a terminal) before anything is returned: whoever can write
 * in the container's run directory could answer in the runner's place,
 * which `runner_pid` guards against as well. */
#ifndef TESSERA_AGENT_RUNNER_CLIENT_H
#define TESSERA_AGENT_RUNNER_CLIENT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/buf.h"
#include "common/error.h"

#define RUNNER_CLIENT_TIMEOUT_MS 10000
#define RUNNER_ANSWER_MAX        (16u << 20) /* one answer line */

struct runner_client {
        const char *socket_path; /* <host run dir>/runner.sock */
        int timeout_ms;          /* per call, on top of any wait asked for; 0: RUNNER_CLIENT_TIMEOUT_MS */
        pid_t runner_pid;        /* > 0: the listening process must be this pid (SO_PEERCRED), e.g.
                                    the container's init as the agent sees it */
};

/* One request (a JSON object; "id" is added) and its answer.  A runner
 * error ({"ok":false,...}) becomes *err with the runner's errno.
 * IN wait_ms    - what the request asks the runner to wait, added to the deadline
 * OUT ret       - the answer object; caller owns (json_decref)
 * OUT ret_fd    - optional: an fd passed with the answer, or -1; caller owns */
int runner_request(const struct runner_client *rc, json_t *req, int64_t wait_ms, json_t **ret, int *ret_fd,
                   struct tess_error **err);

/* {version, pid, mode, runs, children, python}; caller owns *ret. */
int runner_ping(const struct runner_client *rc, json_t **ret, struct tess_error **err);

/* Backend.AI's execute: mode "query" (Python, state kept per session),
 * "batch" (shell; options.clean/build/exec stages), "continue", "input"
 * (code is the text), "complete".  run_id may be NULL for query/batch (the
 * runner names the run).  The runner answers when the run finishes, waits
 * for input, ends a stage, has 1 MiB of output, or after wait_ms (< 0: the
 * runner's default, 1 s).
 * OUT ret_result - {runId, status, console[[kind, text]...], exitCode,
 *                  options, files} as Backend.AI returns it; caller owns */
int runner_execute(const struct runner_client *rc, const char *mode, const char *run_id, const char *code,
                   json_t *options, int wait_ms, json_t **ret_result, struct tess_error **err);
/* SIGINT to a batch run's processes, or KeyboardInterrupt in the query
 * interpreter (run_id NULL: whatever query runs). */
int runner_interrupt(const struct runner_client *rc, const char *run_id, struct tess_error **err);

struct runner_pty_opts {
        unsigned rows, cols;      /* 0: 24x80 */
        const char *const *argv;  /* NULL: /bin/bash, else /bin/sh */
        const char *const *env;   /* extra KEY=value, NULL-terminated, or NULL */
};
/* A terminal: *ret_fd is its master (caller owns; closing it hangs the
 * shell up), *ret_pid the shell's pid inside the container (optional). */
int runner_open_pty(const struct runner_client *rc, const struct runner_pty_opts *o, int *ret_fd, pid_t *ret_pid,
                    struct tess_error **err);
/* TIOCSWINSZ on a terminal's master fd. */
int runner_pty_resize(int fd, unsigned rows, unsigned cols, struct tess_error **err);

/* Write `size` bytes read from fd (or data) to path, relative to the home
 * directory; perm < 0: 0644.  Missing directories are created; the file
 * appears complete or not at all.  ".." components, absolute paths and
 * symlinks on the way are refused by the runner (EINVAL, ELOOP). */
int runner_upload(const struct runner_client *rc, const char *path, int fd, int64_t size, int perm,
                  struct tess_error **err);
int runner_upload_buf(const struct runner_client *rc, const char *path, const void *data, size_t len, int perm,
                      struct tess_error **err);
/* Stream a regular file to fd (at most max bytes, else EFBIG), or into
 * out (appended). */
int runner_download(const struct runner_client *rc, const char *path, int fd, int64_t max, int64_t *ret_size,
                    struct tess_error **err);
int runner_download_buf(const struct runner_client *rc, const char *path, size_t max, struct buf *out,
                        struct tess_error **err);
/* A directory's entries [{name, type file|dir|link|other, size, perm,
 * mtime}] (path NULL or "": the home directory); caller owns. */
int runner_list(const struct runner_client *rc, const char *path, json_t **ret_entries, struct tess_error **err);

/* Start an app (once per name) and wait until it listens on port (0: do
 * not wait), at most wait_ms (< 0: 30 s).  *ret {name, pid, port, status
 * listening|started} (optional; caller owns). */
int runner_start_service(const struct runner_client *rc, const char *name, const char *const *argv,
                         const char *const *env, int port, int wait_ms, json_t **ret, struct tess_error **err);

/* Stop the app started under name: SIGTERM to its process group, SIGKILL
 * after a grace period; answered once it exited, within
 * RUNNER_SERVICE_STOP_MS.  -ENOENT when it does not run.  *ret {name,
 * pid, status stopped} (optional; caller owns). */
#define RUNNER_SERVICE_STOP_MS 10000
int runner_shutdown_service(const struct runner_client *rc, const char *name, json_t **ret, struct tess_error **err);

/* End every process of the session and start it over (its bootstrap
 * script, a batch session's command): answered once they are gone. */
#define RUNNER_RESTART_WAIT_MS 70000
int runner_restart(const struct runner_client *rc, struct tess_error **err);

/* Ask the runner to end the session (as SIGTERM does). */
int runner_shutdown(const struct runner_client *rc, struct tess_error **err);

#endif
