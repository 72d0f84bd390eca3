/* api_session.h - the session routes and what other parts of the manager
 * use of them: finding a caller's session, and the running session a
 * request targets (its main kernel and that kernel's agent).
 *
 *   api_session.c         create, info, destroy, logs, list, rename
 *   api_session_exec.c    execute, interrupt, upload, download, files
 *   api_stream_pty.c      a terminal (WebSocket)
 *   api_stream_execute.c  streamed execution (WebSocket)
 *   stream_ws.c           the thread behind each of those WebSockets
 *   api_events.c          session events (server-sent events)
 *   api_session_commit.c  commits (session_commit.h) */
#ifndef TESS_API_SESSION_H
#define TESS_API_SESSION_H

#include <stdbool.h>

#include "common/error.h"

struct api_ctx;
struct db_rows;
struct manager;

void api_session_create(struct api_ctx *c); /* api_session.c */
void api_session_info(struct api_ctx *c);
void api_session_destroy(struct api_ctx *c);
void api_session_logs(struct api_ctx *c);
void api_session_list(struct api_ctx *c);
void api_session_rename(struct api_ctx *c);
/* A session by id or name (of owner_ak's keypair, else the caller's),
 * live ones first, if the caller may see it and, on a route that is not
 * ROUTE_READ, act on it (the one rule, manager/api/authz.h); ENOENT (404)
 * when not, EACCES (403) for a user naming another keypair or a monitor
 * acting.  Every route that names a session finds it here.  Rows of
 * session_select(). */
int api_find_session(struct api_ctx *c, const char *ref, const char *owner_ak, bool live_only, struct db_rows **ret,
                     struct tess_error **err);
/* The owner's request keeps the session from the idle timeout. */
void api_owner_activity(struct api_ctx *c, const struct db_rows *rows);

void api_session_execute(struct api_ctx *c); /* api_session_exec.c */
void api_session_interrupt(struct api_ctx *c);
void api_session_complete(struct api_ctx *c);
void api_session_restart(struct api_ctx *c);
void api_session_upload(struct api_ctx *c);
void api_session_download_single(struct api_ctx *c);
void api_session_download(struct api_ctx *c); /* api_session_download.c */
void api_session_files(struct api_ctx *c);
void api_session_template_create(struct api_ctx *c); /* api_session_template.c */
void api_session_template_list(struct api_ctx *c);
void api_session_template_get(struct api_ctx *c);
void api_session_template_update(struct api_ctx *c);
void api_session_template_delete(struct api_ctx *c);
void api_session_create_from_template(struct api_ctx *c);
void api_session_apps_list(struct api_ctx *c);
void api_stream_tcpproxy(struct api_ctx *c); /* manager/apps/api_stream_tcpproxy.c */ /* manager/apps/api_session_apps.c */
void api_stream_pty(struct api_ctx *c);     /* api_stream_pty.c */
void api_stream_execute(struct api_ctx *c); /* api_stream_execute.c */
void api_events_session(struct api_ctx *c); /* api_events.c */

/* Where a running session's main kernel is. */
struct session_target {
        char session[40], kernel[64], agent[128], address[128];
};
/* The running session c->param[0] (of owner_ak, for admins) and its main
 * kernel's agent; counts as the owner's activity.  Answers c (404, 409)
 * and returns false when there is none.  (api_session_exec.c) */
bool api_session_target(struct api_ctx *c, const char *owner_ak, struct session_target *t);
/* The main kernel of session t->session and its agent into t; ENOENT when
 * it has none on an agent with an address. */
int session_main_kernel(struct manager *m, struct session_target *t, struct tess_error **err);
/* "/v1/kernels/<kernel>/<action>[?path=<path>]" on t's agent; caller frees. */
char *session_kernel_target(const struct session_target *t, const char *action, const char *path);
/* A path in the session's home directory as the runner takes it: path
 * relative to it ("" for the home directory itself), from a relative path
 * or one under /home/work; NULL for anything else or with "..". */
const char *session_home_relative(const char *path);
/* path is relative to the home directory, without "..", not too long. */
bool valid_session_path(const char *path);
/* owner_access_key of c's query or JSON body (admins acting for an owner). */
const char *api_owner_access_key(struct api_ctx *c);

#endif
