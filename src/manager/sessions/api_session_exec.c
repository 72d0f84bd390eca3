/* api_session_exec.c - what a session's owner does inside a running
 * session, relayed to the agent that runs its main kernel (agent_call.c,
 * the agent's side is src/agent/agent_http.c):
 *
 *   POST /session/{name}                  execute {mode, code, runId, options}
 *   POST /session/{name}/interrupt        {runId?}
 *   POST /session/{name}/complete         {code, options}: completions
 *   PATCH /session/{name}                 restart: every kernel's processes end
 *                                         and the session starts over (204)
 *   POST /session/{name}/upload           multipart/form-data: each file part
 *                                         (any field name, Backend.AI's is
 *                                         "src") lands at ~/<filename>
 *   GET|POST /session/{name}/download_single   {file} or ?file=: its bytes
 *   GET /session/{name}/files             {path} or ?path=: a directory listing
 *
 * The session must be RUNNING (409 otherwise).  Each of these counts as the
 * owner's activity for the idle timeout. */
#include "common/compat.h"

#include <sys/stat.h>

#include "common/buf.h"
#include "common/fs.h"
#include "manager/agent_link/agent_call.h"
#include "manager/api/api.h"
#include "manager/core/manager.h"
#include "manager/db/db.h"
#include "manager/http/http.h"
#include "manager/sessions/api_session.h"
#include "manager/sessions/session.h"

#define EXEC_TIMEOUT_S 60 /* the runner answers within its wait (at most 30 s) */
#define FILES_TIMEOUT_S \
        120 /* a file of AGENT_HTTP_FILE_MAX over a slow link  \
                             */
#define CODE_MAX      (1u << 20)
#define FILE_PATH_MAX 4096

static const char *const exec_modes[] = { "query", "batch", "input", "continue", "complete", NULL };

bool api_session_target(struct api_ctx *c, const char *owner_ak, struct session_target *t)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        struct tess_error *err = NULL;

        if (api_find_session(c, c->param[0], owner_ak, false, &rows, &err) < 0) {
                api_fail(c, err);
                return false;
        }
        api_owner_activity(c, rows);
        snprintf(t->session, sizeof(t->session), "%s", db_getn(rows, 0, "id"));
        const char *status = db_getn(rows, 0, "status");
        if (!streq(status, "RUNNING")) {
                api_problem(c, 409, "session-not-running", "session '%s' is %s, not RUNNING", c->param[0], status);
                return false;
        }
        int r = session_main_kernel(c->m, t, &err);
        if (r < 0 && err->code == ENOENT) {
                api_problem(c, 409, "session-not-running", "session '%s' has no reachable kernel yet", c->param[0]);
                tess_error_free(err);
                return false;
        }
        if (r < 0) {
                api_fail(c, err);
                return false;
        }
        return true;
}

int session_main_kernel(struct manager *m, struct session_target *t, struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *k = NULL;
        int r = DBQ(m->db,
                    "SELECT k.id, k.agent_id, a.address FROM kernels k JOIN agents a ON a.id = k.agent_id"
                    " WHERE k.session_id = ? ORDER BY k.cluster_idx LIMIT 1",
                    &k, err, DB_TEXT(t->session));

        if (r < 0)
                return r;
        if (k->nrows == 0 || !db_get(k, 0, 2) || !*db_get(k, 0, 2))
                return tess_err(err, ENOENT, "session %s has no reachable kernel", t->session);
        snprintf(t->kernel, sizeof(t->kernel), "%s", db_get(k, 0, 0));
        snprintf(t->agent, sizeof(t->agent), "%s", db_get(k, 0, 1));
        snprintf(t->address, sizeof(t->address), "%s", db_get(k, 0, 2));
        return 0;
}

const char *api_owner_access_key(struct api_ctx *c)
{
        return api_param(c, "owner_access_key");
}

char *session_kernel_target(const struct session_target *t, const char *action, const char *path)
{
        struct buf b = BUF_INIT;
        buf_printf(&b, "/v1/kernels/%s/%s", t->kernel, action);
        if (path) {
                buf_puts(&b, "?path=");
                buf_percent_encode(&b, path);
        }
        return buf_detach(&b, NULL);
}

/* The agent's JSON answer as the API's, or its failure. */
static void relay_json(struct api_ctx *c, struct agent_call *call)
{
        if (call->err)
                return agent_call_fail(c, call);
        json_t *j = json_loadb(call->answer.data, call->answer.len, 0, NULL);
        if (!j)
                return api_problem(c, 502, "agent-failed", "agent %s answered something that is not JSON",
                                   call->agent_id);
        api_json(c, 200, j);
}

/* The session's main kernel runs {mode, code, runId?, options?}; its
 * runner's answer is the API's. */
static void forward_execute(struct api_ctx *c, const char *mode, const char *code, const char *run_id,
                            json_t *options)
{
        struct session_target t;

        if (!api_session_target(c, api_owner_access_key(c), &t))
                return;
        json_t *fwd = json_pack("{s:s, s:s}", "mode", mode, "code", code ? code : "");
        if (run_id)
                json_object_set_new(fwd, "runId", json_string(run_id));
        if (json_is_object(options))
                json_object_set(fwd, "options", options);
        _cleanup_free_ char *text = json_dumps(fwd, JSON_COMPACT);
        _cleanup_free_ char *target = session_kernel_target(&t, "execute", NULL);
        json_decref(fwd);
        agent_call_one(c, t.agent, t.address, "POST", target, text, strlen(text), "application/json", EXEC_TIMEOUT_S,
                       relay_json);
}

void api_session_execute(struct api_ctx *c)
{
        struct tess_error *err = NULL;
        const char *mode = NULL, *code = NULL, *run_id = NULL;
        json_t *options = c->body ? json_object_get(c->body, "options") : NULL;

        if (!c->body)
                return api_problem(c, 400, "invalid-api-params", "execute needs a JSON body {mode, code, runId?}");
        if (api_get_string(c->body, NAMES("mode"), 16, &mode, &err) < 0 ||
            api_get_string(c->body, NAMES("code"), CODE_MAX, &code, &err) < 0 ||
            api_get_string(c->body, NAMES("runId", "run_id"), 64, &run_id, &err) < 0)
                return api_fail(c, err);
        if (!mode)
                return api_problem(c, 400, "invalid-api-params",
                                   "mode is required: query, batch, input, continue or "
                                   "complete");
        bool known = false;
        for (const char *const *m = exec_modes; *m; m++)
                known = known || streq(*m, mode);
        if (!known)
                return api_problem(c, 400, "invalid-api-params",
                                   "mode '%s' is not query, batch, input, continue or complete", mode);
        if ((streq(mode, "continue") || streq(mode, "input")) && (!run_id || !*run_id))
                return api_problem(c, 400, "invalid-api-params", "runId is required for mode '%s'", mode);
        if (options && !json_is_object(options) && !json_is_null(options))
                return api_problem(c, 400, "invalid-api-params", "options must be an object");
        forward_execute(c, mode, code, run_id, options);
}

/* POST /session/{name}/complete {code, options: {row, col, line, post}}
 * (Backend.AI's): completion candidates for code, as the runner finds
 * them: {"result": {"status": "finished", "completions": [...]}}. */
void api_session_complete(struct api_ctx *c)
{
        struct tess_error *err = NULL;
        const char *code = NULL;
        json_t *options = json_object_get(c->body, "options");

        if (!c->body)
                return api_problem(c, 400, "invalid-api-params", "complete needs a JSON body {code, options?}");
        if (api_get_string(c->body, NAMES("code"), CODE_MAX, &code, &err) < 0)
                return api_fail(c, err);
        if (options && !json_is_object(options) && !json_is_null(options))
                return api_problem(c, 400, "invalid-api-params", "options must be an object");
        forward_execute(c, "complete", code, NULL, options);
}

void api_session_interrupt(struct api_ctx *c)
{
        struct tess_error *err = NULL;
        const char *run_id = NULL;
        struct session_target t;

        if (c->body && api_get_string(c->body, NAMES("runId", "run_id"), 64, &run_id, &err) < 0)
                return api_fail(c, err);
        if (!api_session_target(c, api_owner_access_key(c), &t))
                return;
        json_t *fwd = run_id ? json_pack("{s:s}", "runId", run_id) : json_object();
        _cleanup_free_ char *text = json_dumps(fwd, JSON_COMPACT);
        _cleanup_free_ char *target = session_kernel_target(&t, "interrupt", NULL);
        json_decref(fwd);
        agent_call_one(c, t.agent, t.address, "POST", target, text, strlen(text), "application/json", EXEC_TIMEOUT_S,
                       relay_json);
}

/* ---- restart ---- */

#define RESTART_TIMEOUT_S 90 /* the runner's grace and the bootstrap's start */

struct restart_kernel {
        char id[64], agent[128], address[128];
};

struct restart {
        struct restart_kernel *k;
        size_t n;
};

static void restart_free(void *data)
{
        struct restart *r = data;
        free(r->k);
        free(r);
}

static void restart_work(struct agent_call *call)
{
        const struct restart *r = call->data;

        for (size_t i = 0; i < r->n; i++) {
                _cleanup_free_ char *target = xasprintf("/v1/kernels/%s/restart", r->k[i].id);
                agent_call_retarget(call, r->k[i].agent, r->k[i].address);
                if (agent_call_request(call, "POST", target, "{}", 2, "application/json", RESTART_TIMEOUT_S) < 0)
                        return;
        }
}

static void restart_done(struct api_ctx *c, struct agent_call *call)
{
        if (call->err)
                return agent_call_fail(c, call);
        http_reply(c->req, 204, NULL, "", 0);
}

/* PATCH /session/{name} (Backend.AI's session restart): each kernel, main
 * first, ends every process and starts over in its container (the
 * bootstrap script, a batch command again); files, addresses and
 * resources stay.  Answered when all have. */
void api_session_restart(struct api_ctx *c)
{
        _cleanup_rows_ struct db_rows *k = NULL;
        struct tess_error *err = NULL;
        struct session_target t;

        if (!api_session_target(c, api_owner_access_key(c), &t))
                return;
        if (DBQ(c->m->db,
                "SELECT k.id, k.agent_id, a.address FROM kernels k JOIN agents a ON a.id = k.agent_id"
                " WHERE k.session_id = ? ORDER BY k.cluster_idx",
                &k, &err, DB_TEXT(t.session)) < 0)
                return api_fail(c, err);
        struct restart *r = xcalloc(1, sizeof(*r));
        r->k = xcalloc((size_t)k->nrows, sizeof(*r->k));
        for (int i = 0; i < k->nrows; i++) {
                if (!db_get(k, i, 2) || !*db_get(k, i, 2))
                        continue;
                snprintf(r->k[r->n].id, sizeof(r->k[r->n].id), "%s", db_get(k, i, 0));
                snprintf(r->k[r->n].agent, sizeof(r->k[r->n].agent), "%s", db_get(k, i, 1));
                snprintf(r->k[r->n].address, sizeof(r->k[r->n].address), "%s", db_get(k, i, 2));
                r->n++;
        }
        api_audit_target(c, "session:%s", t.session);
        agent_call_start(c, t.agent, t.address, restart_work, restart_done, r, restart_free);
}

/* A path inside the session's home: relative, no "..", no NUL, not too
 * long.  The runner checks again (and refuses symlinks on the way). */
bool valid_session_path(const char *p)
{
        if (!p || !*p || *p == '/' || strlen(p) > FILE_PATH_MAX)
                return false;
        for (const char *s = p; *s;) {
                size_t n = strcspn(s, "/");
                if (n == 2 && s[0] == '.' && s[1] == '.')
                        return false;
                s += n;
                if (*s == '/')
                        s++;
        }
        return true;
}

/* ---- upload ---- */

struct upload_file {
        char *path;
        struct buf bytes;
};

struct upload {
        struct session_target t;
        struct upload_file *files;
        size_t n;
};

static void upload_free(void *data)
{
        struct upload *u = data;
        for (size_t i = 0; i < u->n; i++) {
                free(u->files[i].path);
                buf_release(&u->files[i].bytes);
        }
        free(u->files);
        free(u);
}

static int on_part(void *data, const char *field UNUSED, const char *filename, const char *bytes, size_t len,
                   struct tess_error **err)
{
        struct upload *u = data;

        if (!filename)
                return 0; /* a plain form field */
        if (!valid_session_path(filename))
                return tess_err(err, EINVAL, "file name '%s' must be a relative path without '..'", filename);
        u->files = xrealloc(u->files, (u->n + 1) * sizeof(*u->files));
        u->files[u->n].path = xstrdup(filename);
        u->files[u->n].bytes = (struct buf)BUF_INIT;
        buf_append(&u->files[u->n].bytes, bytes, len);
        u->n++;
        return 0;
}

static void upload_work(struct agent_call *call)
{
        struct upload *u = call->data;

        for (size_t i = 0; i < u->n; i++) {
                _cleanup_free_ char *target = session_kernel_target(&u->t, "files", u->files[i].path);
                if (agent_call_request(call, "PUT", target, u->files[i].bytes.data, u->files[i].bytes.len,
                                       "application/octet-stream", FILES_TIMEOUT_S) < 0)
                        return;
        }
}

static void upload_done(struct api_ctx *c, struct agent_call *call)
{
        struct upload *u = call->data;
        if (call->err)
                return agent_call_fail(c, call);
        json_t *names = json_array();
        for (size_t i = 0; i < u->n; i++)
                json_array_append_new(names, json_string(u->files[i].path));
        api_json(c, 200, json_pack("{s:o}", "files", names));
}

void api_session_upload(struct api_ctx *c)
{
        struct tess_error *err = NULL;
        struct upload *u = xcalloc(1, sizeof(*u));

        if (!api_session_target(c, http_query(c->req, "owner_access_key"), &u->t)) {
                upload_free(u);
                return;
        }
        if (http_form_parts(c->req, on_part, u, &err) < 0) {
                upload_free(u);
                api_problem(c, 400, "invalid-api-params", "%s", err ? err->msg : "bad upload");
                tess_error_free(err);
                return;
        }
        if (u->n == 0) {
                upload_free(u);
                return api_problem(c, 400, "invalid-api-params", "the upload holds no file part (with a filename)");
        }
        api_audit_target(c, "session:%s", c->param[0]);
        agent_call_start(c, u->t.agent, u->t.address, upload_work, upload_done, u, upload_free);
}

/* ---- download and listing ---- */

/* A string parameter from ?name= or the JSON body. */
static void download_done(struct api_ctx *c, struct agent_call *call)
{
        if (call->err)
                return agent_call_fail(c, call);
        size_t len;
        char *bytes = buf_detach(&call->answer, &len);
        http_reply_take(c->req, 200, "application/octet-stream", bytes, len);
}

void api_session_download_single(struct api_ctx *c)
{
        const char *file = api_param(c, "file");
        struct session_target t;

        if (!valid_session_path(file))
                return api_problem(c, 400, "invalid-api-params",
                                   "file must be a path relative to the home directory, without '..'");
        if (!api_session_target(c, api_owner_access_key(c), &t))
                return;
        _cleanup_free_ char *target = session_kernel_target(&t, "files", file);
        agent_call_one(c, t.agent, t.address, "GET", target, NULL, 0, NULL, FILES_TIMEOUT_S, download_done);
}

struct listing {
        struct session_target t;
        char *path; /* "" for the home directory */
};

static void listing_free(void *data)
{
        struct listing *l = data;
        free(l->path);
        free(l);
}

static void listing_work(struct agent_call *call)
{
        struct listing *l = call->data;
        _cleanup_free_ char *target = session_kernel_target(&l->t, "list", *l->path ? l->path : NULL);
        agent_call_request(call, "GET", target, NULL, 0, NULL, FILES_TIMEOUT_S);
}

/* The runner's entries as Backend.AI lists them: {"files": "<JSON text of
 * [{filename, size, mode, mtime, ctime, atime}]>", "errors", "abspath"}. */
static void listing_done(struct api_ctx *c, struct agent_call *call)
{
        const struct listing *l = call->data;
        size_t i;
        json_t *e;

        if (call->err)
                return agent_call_fail(c, call);
        json_t *j = json_loadb(call->answer.data, call->answer.len, 0, NULL);
        json_t *out = json_array();
        json_array_foreach(json_object_get(j, "entries"), i, e) {
                const char *type = json_string_value(json_object_get(e, "type"));
                mode_t kind = streq(type, "dir") ? S_IFDIR : streq(type, "link") ? S_IFLNK : streq(type, "file") ? S_IFREG : 0;
                char mode[11];
                fs_mode_string(kind | (json_integer_value(json_object_get(e, "perm")) & 0777), mode);
                json_t *mt = json_object_get(e, "mtime");
                json_array_append_new(out, json_pack("{s:O?, s:O?, s:s, s:O?, s:O?, s:O?}", "filename",
                                                     json_object_get(e, "name"), "size", json_object_get(e, "size"),
                                                     "mode", mode, "mtime", mt, "ctime", mt, "atime", mt));
        }
        json_decref(j);
        _cleanup_free_ char *text = json_dumps(out, JSON_COMPACT);
        json_decref(out);
        _cleanup_free_ char *abspath = xasprintf("/home/work%s%s", *l->path ? "/" : "", l->path);
        api_json(c, 200, json_pack("{s:s, s:s, s:s}", "files", text, "errors", "", "abspath", abspath));
}

const char *session_home_relative(const char *path)
{
        if (!path)
                return NULL;
        /* Backend.AI's CLI names the home directory absolutely (its default is /home/work) */
        if (strncmp(path, "/home/work", 10) == 0 && (path[10] == '\0' || path[10] == '/'))
                path += path[10] ? 11 : 10;
        if (streq(path, ".") || streq(path, ""))
                return "";
        return valid_session_path(path) ? path : NULL;
}

void api_session_files(struct api_ctx *c)
{
        const char *path = api_param(c, "path");
        struct listing *l;

        if (path && !(path = session_home_relative(path)))
                return api_problem(c, 400, "invalid-api-params",
                                   "path must be in the home directory (relative, or under /home/work), without '..'");
        if (path && !*path)
                path = NULL;
        l = xcalloc(1, sizeof(*l));
        if (!api_session_target(c, api_owner_access_key(c), &l->t)) {
                free(l);
                return;
        }
        l->path = xstrdup(path ? path : "");
        agent_call_start(c, l->t.agent, l->t.address, listing_work, listing_done, l, listing_free);
}
