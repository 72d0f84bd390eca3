/* worker.h - blocking work off the manager's event loop (a registry
 * rescan; the agent calls an API request waits on, agent_call.c): a
 * detached thread runs work(w, data), may hand messages back with
 * worker_post() while it runs, and done(m, data, NULL) runs on the loop
 * thread after it returns.  Posts and the end reach the loop in the order
 * the thread made them, through one pipe the loop watches.
 *
 * The thread must touch neither the database nor the manager: what it
 * needs goes into `data` before the start, what it finds comes back as
 * messages or in `data` at the end.  A manager that stops does not wait
 * for its workers: their work is lost (their background tasks' lease
 * runs out, bgtask_fail_stale). */
#ifndef TESS_MANAGER_WORKER_H
#define TESS_MANAGER_WORKER_H

#include "common/error.h"

struct manager;
struct worker;

/* On the loop thread: a message of the worker (msg: what worker_post was
 * given, owned by fn), or its end (msg NULL). */
typedef void (*worker_loop_fn)(struct manager *m, void *data, void *msg);

/* Run work(w, data) in a new thread, then done(m, data, NULL) on the loop.
 * IN  data - owned by work and done together (done frees it)
 * RET 0, or -errno when no thread could start (done is not called then and
 *     data stays the caller's) */
int worker_start(struct manager *m, void (*work)(struct worker *w, void *data), worker_loop_fn done, void *data,
                 struct tess_error **err);

/* From the worker thread: call fn(m, data, msg) on the loop thread. */
void worker_post(struct worker *w, worker_loop_fn fn, void *msg);

#endif
