/* api.c - route table and the dispatcher (see api.h). */
#include "common/compat.h"

#include <ctype.h>
#include <stdarg.h>

#include "common/buf.h"
#include "common/log.h"
#include "common/loop.h"
#include "common/timeutil.h"
#include "common/vfolder_hosts.h"
#include "manager/admin.h"
#include "manager/api.h"
#include "manager/api_vfolder.h"
#include "manager/audit.h"
#include "manager/auth.h"
#include "manager/events.h"
#include "manager/http.h"
#include "manager/manager.h"
#include "manager/web_session.h"
#include "manager/metrics.h"

/* The app proxy takes every method the apps use (HEAD goes with GET). */
#define APP_PROXY_ROUTE(method)                                                                                   \
        { method, "/apps/{session}/{path}", api_apps_proxy, ROUTE_PUBLIC | ROUTE_TAIL | ROUTE_STREAM | ROUTE_APP, \
          "App proxy: a request to an app in a session, with the app's cookie (HTTP and WebSocket)", "apps" }

const struct route api_routes[] = {
        { "GET", "/", api_root_version, ROUTE_PUBLIC | ROUTE_READ,
          "API and manager version (a browser asking for text/html gets the web UI)", "meta" },
        { "GET", "/ui/{path}", api_web_static, ROUTE_PUBLIC | ROUTE_READ | ROUTE_TAIL, "The web UI's files", "meta" },
        { "POST", "/server/login", api_web_login, ROUTE_PUBLIC,
          "Web UI: log in with email and password; a session cookie", "auth" },
        { "GET", "/server/session", api_web_session, ROUTE_PUBLIC | ROUTE_READ, "Web UI: the logged-in user",
          "auth" },
        { "POST", "/server/logout", api_web_logout, ROUTE_PUBLIC, "Web UI: log out", "auth" },
        { "GET", "/metrics", api_metrics, ROUTE_PUBLIC | ROUTE_READ, "Prometheus metrics", "meta" },
        { "GET", "/openapi.json", api_openapi, ROUTE_PUBLIC | ROUTE_READ, "This OpenAPI document", "meta" },
        { "POST", "/auth/authorize", api_auth_authorize, ROUTE_PUBLIC, "Log in with a password, get the keypair",
          "auth" },
        { "GET", "/auth/role", api_auth_role, ROUTE_READ, "The caller's role", "auth" },
        { "POST", "/auth/update-password", api_auth_update_password, ROUTE_SELF, "Change the caller's password",
          "auth" },
        { "POST", "/agent/heartbeat", api_agent_heartbeat, ROUTE_AGENT,
          "Agents: register and report liveness (signed with the cluster secret)", "agent" },
        { "POST", "/agent/sync", api_agent_sync, ROUTE_AGENT,
          "Agents: the kernels this agent should run or stop (a long poll)", "agent" },
        { "POST", "/agent/events", api_agent_events, ROUTE_AGENT,
          "Agents: report kernel events (running, exited, failed); answers the last sequence applied", "agent" },
        { "POST", "/session", api_session_create, 0, "Create (or get) a compute session", "session" },
        { "POST", "/session/_/create", api_session_create, 0, "Create (or get) a compute session", "session" },
        { "GET", "/sessions", api_session_list, ROUTE_READ, "List sessions with filters and paging", "session" },
        { "GET", "/session/{name}", api_session_info, ROUTE_READ, "Session information", "session" },
        { "DELETE", "/session/{name}", api_session_destroy, 0, "Destroy a session (PENDING: cancel)", "session" },
        { "GET", "/session/{name}/logs", api_session_logs, ROUTE_READ, "Container logs of a session", "session" },
        { "POST", "/session/{name}/commit", api_session_commit, 0,
          "Commit a running session to a private image (a background task)", "session" },
        { "GET", "/session/{name}/commit", api_session_commit_status, ROUTE_READ, "The last commit of a session",
          "session" },
        { "POST", "/session/{name}", api_session_execute, 0,
          "Execute code (query) or a command (batch) in a running session", "session" },
        { "POST", "/session/{name}/interrupt", api_session_interrupt, 0, "Interrupt what a session executes",
          "session" },
        { "POST", "/session/{name}/upload", api_session_upload, ROUTE_UPLOAD,
          "Upload files (multipart/form-data) into a session's home directory", "session" },
        { "POST", "/session/{name}/download_single", api_session_download_single, 0,
          "Download one file of a session", "session" },
        { "GET", "/session/{name}/download_single", api_session_download_single, 0,
          "Download one file of a session", "session" },
        { "GET", "/session/{name}/files", api_session_files, 0, "List a directory of a session", "session" },
        { "GET", "/stream/session/{name}/pty", api_stream_pty, 0, "A terminal in a running session (WebSocket)",
          "session" },
        { "POST", "/session/{name}/start-service", api_session_start_service, 0,
          "Start an app the session's image declares (ai.backend.service-ports): a short-lived token and the "
          "URL that opens it through the app proxy",
          "session" },
        { "POST", "/session/{name}/shutdown-service", api_session_shutdown_service, 0,
          "Stop an app of the session (service_name): its process ends, its links and cookies stop working",
          "session" },
        { "GET", "/apps/_/open", api_apps_open, ROUTE_PUBLIC | ROUTE_READ | ROUTE_APP,
          "App proxy: trade a start-service token (?token=) for the app's cookie, then go to the app", "apps" },
        APP_PROXY_ROUTE("GET"),
        APP_PROXY_ROUTE("POST"),
        APP_PROXY_ROUTE("PUT"),
        APP_PROXY_ROUTE("PATCH"),
        APP_PROXY_ROUTE("DELETE"),
        APP_PROXY_ROUTE("OPTIONS"),
        { "GET", "/events/session", api_events_session, ROUTE_READ, "Session events (server-sent events)",
          "session" },
        { "GET", "/events/background-task", api_events_bgtask, ROUTE_READ,
          "A background task's progress and end (server-sent events)", "session" },
        { "GET", "/background-tasks/{id}", api_bgtask_show, ROUTE_READ, "A background task (commit, rescan)",
          "session" },
        { "GET", "/images", api_images_list, ROUTE_READ,
          "The images the caller may use, grouped by name with their versions and aliases", "image" },
        { "GET", "/resource/presets", api_resource_presets, ROUTE_READ, "Resource presets", "resource" },
        { "GET", "/projects", api_projects_list, ROUTE_READ, "The projects the caller may start sessions in",
          "resource" },
        { "GET", "/scaling-groups", api_scaling_groups, ROUTE_READ,
          "The resource groups the caller may use in a project (?group=)", "resource" },
        { "POST", "/resource/check-presets", api_resource_check_presets, ROUTE_READ,
          "Limits, usage and remaining resources; which presets fit", "resource" },
        { "GET", "/resource/usage/period", api_usage_period, ROUTE_READ,
          "Usage per project and session over days, allocated and measured (start_date, end_date, project_id)", "resource" },
        { "GET", "/resource/stats/user/month", api_usage_user_month, ROUTE_READ,
          "The caller's usage on each of the last 30 days, allocated and measured", "resource" },
        { "GET", "/admin/image-blobs/{digest}", api_image_blob_show, ROUTE_SUPERADMIN | ROUTE_READ,
          "Image import: whether a blob is in the manager, or where its upload resumes", "admin" },
        { "PATCH", "/admin/image-blobs/{digest}", api_image_blob_append, ROUTE_SUPERADMIN | ROUTE_UPLOAD,
          "Image import: one chunk of a blob (raw bytes) at ?offset=", "admin" },
        { "PUT", "/admin/image-blobs/{digest}", api_image_blob_finish, ROUTE_SUPERADMIN | ROUTE_UPLOAD,
          "Image import: the last chunk of a blob at ?offset=; verified against the digest and kept", "admin" },
        { "POST", "/admin/image-imports", api_image_import, ROUTE_SUPERADMIN,
          "Image import: register an uploaded image {reference, manifest} for every agent", "admin" },
        { "GET", "/v2/{path}", api_registry_get, ROUTE_AGENT | ROUTE_READ | ROUTE_TAIL,
          "Agents: imported images as an OCI registry (manifests and blobs)", "agent" },
        { "POST", "/v2/{path}", api_registry_push, ROUTE_AGENT | ROUTE_TAIL,
          "Agents: start a blob upload (session commits)", "agent" },
        { "PATCH", "/v2/{path}", api_registry_push, ROUTE_AGENT | ROUTE_UPLOAD | ROUTE_TAIL,
          "Agents: a chunk of a blob upload", "agent" },
        { "PUT", "/v2/{path}", api_registry_push, ROUTE_AGENT | ROUTE_UPLOAD | ROUTE_TAIL,
          "Agents: finish a blob upload, or put a manifest", "agent" },
        { "GET", "/admin/usage", api_usage_admin, ROUTE_ADMIN | ROUTE_READ,
          "Usage per user, project or domain per day, allocated and measured (start_date, end_date, group_by)", "admin" },
        {},
};

static const char *const role_names[] = {
        [ROLE_MONITOR] = "monitor",
        [ROLE_USER] = "user",
        [ROLE_ADMIN] = "admin",
        [ROLE_SUPERADMIN] = "superadmin",
};

const char *role_to_string(enum role r)
{
        return r >= 0 && r < _ROLE_MAX ? role_names[r] : NULL;
}

enum role role_from_string(const char *s)
{
        for (int i = 0; s && i < _ROLE_MAX; i++)
                if (streq(role_names[i], s))
                        return (enum role)i;
        return _ROLE_INVALID;
}

/* ---- answers ---- */

static void reply_json_text(struct api_ctx *c, unsigned status, const char *ctype, json_t *body)
{
        char *text = json_dumps(body, JSON_COMPACT);
        if (!text)
                abort();
        http_reply_take(c->req, status, ctype, text, strlen(text));
        json_decref(body);
}

void api_json(struct api_ctx *c, unsigned status, json_t *body)
{
        reply_json_text(c, status, "application/json", body);
}

static json_t *problem_json(unsigned status, const char *kind, const char *title)
{
        return json_pack("{s:s+, s:s, s:i}", "type", "https://api.backend.ai/probs/", kind, "title", title, "status",
                         (int)status);
}

char *api_problem_text(unsigned status, const char *kind, const char *title)
{
        json_t *j = problem_json(status, kind, title);
        char *t = json_dumps(j, JSON_COMPACT);
        json_decref(j);
        return t;
}

void api_problem(struct api_ctx *c, unsigned status, const char *kind, const char *fmt, ...)
{
        _cleanup_free_ char *title = NULL;
        va_list ap;

        va_start(ap, fmt);
        title = xvasprintf(fmt, ap);
        va_end(ap);
        reply_json_text(c, status, "application/problem+json", problem_json(status, kind, title));
}

void api_fail(struct api_ctx *c, struct tess_error *err)
{
        unsigned status;
        const char *kind;

        switch (err ? err->code : EIO) {
        case EINVAL: status = 400, kind = "invalid-api-params"; break;
        case EACCES:
        case EPERM: status = 403, kind = "forbidden"; break;
        case ENOENT: status = 404, kind = "object-not-found"; break;
        case EEXIST: status = 409, kind = "already-exists"; break;
        case ETXTBSY: status = 409, kind = "in-use"; break;
        case EDQUOT: status = 412, kind = "quota-exceeded"; break;
        case EBUSY: status = 503, kind = "service-unavailable"; break;
        default: status = 500, kind = "internal-server-error";
        }
        if (status >= 500)
                log_error("%s %s: %s", http_method(c->req), http_path(c->req), err ? err->msg : "unknown error");
        if (status == 500)
                api_problem(c, status, kind, "internal server error");
        else
                api_problem(c, status, kind, "%s", err ? err->msg : "error");
        tess_error_free(err);
}

/* ---- body helpers ---- */

json_t *api_field(const json_t *obj, const char *const *names)
{
        if (!json_is_object(obj))
                return NULL;
        for (; *names; names++) {
                json_t *v = json_object_get(obj, *names);
                if (v && !json_is_null(v))
                        return v;
        }
        return NULL;
}

int api_get_string(const json_t *obj, const char *const *names, size_t maxlen, const char **ret,
                   struct tess_error **err)
{
        json_t *v = api_field(obj, names);
        if (!v)
                return 0;
        if (!json_is_string(v))
                return tess_err(err, EINVAL, "'%s' must be a string", names[0]);
        if (json_string_length(v) > maxlen)
                return tess_err(err, EINVAL, "'%s' is longer than %zu characters", names[0], maxlen);
        if (strlen(json_string_value(v)) != json_string_length(v))
                return tess_err(err, EINVAL, "'%s' contains a NUL character", names[0]);
        *ret = json_string_value(v);
        return 0;
}

int api_get_bool(const json_t *obj, const char *const *names, bool *ret, struct tess_error **err)
{
        json_t *v = api_field(obj, names);
        if (!v)
                return 0;
        if (json_is_boolean(v)) {
                *ret = json_is_true(v);
                return 0;
        }
        if (json_is_string(v)) {
                const char *s = json_string_value(v);
                if (!strcasecmp(s, "true") || streq(s, "1")) {
                        *ret = true;
                        return 0;
                }
                if (!strcasecmp(s, "false") || streq(s, "0")) {
                        *ret = false;
                        return 0;
                }
        }
        return tess_err(err, EINVAL, "'%s' must be a boolean", names[0]);
}

int api_get_int(const json_t *obj, const char *const *names, int64_t min, int64_t max, int64_t *ret,
                struct tess_error **err)
{
        json_t *v = api_field(obj, names);
        int64_t x;

        if (!v)
                return 0;
        if (json_is_integer(v)) {
                x = json_integer_value(v);
        } else if (json_is_real(v) && json_real_value(v) > -9e18 && json_real_value(v) < 9e18 &&
                   json_real_value(v) == (double)(int64_t)json_real_value(v)) {
                x = (int64_t)json_real_value(v);
        } else if (json_is_string(v)) {
                const char *s = json_string_value(v);
                char *end;
                errno = 0;
                x = strtoll(s, &end, 10);
                if (!*s || *end || errno)
                        return tess_err(err, EINVAL, "'%s' must be an integer", names[0]);
        } else {
                return tess_err(err, EINVAL, "'%s' must be an integer", names[0]);
        }
        if (x < min || x > max)
                return tess_err(err, EINVAL, "'%s' must be between %lld and %lld", names[0], (long long)min,
                                (long long)max);
        *ret = x;
        return 0;
}

int api_page(struct api_ctx *c, int64_t *ret_limit, int64_t *ret_offset, struct tess_error **err)
{
        const char *l = http_query(c->req, "limit"), *o = http_query(c->req, "offset");
        int64_t max = (int64_t)c->m->conf.max_page_size, limit = max < 100 ? max : 100, offset = 0;
        char *end;

        if (l) {
                errno = 0;
                limit = strtoll(l, &end, 10);
                if (!*l || *end || errno || limit < 1 || limit > max)
                        return tess_err(err, EINVAL, "'limit' must be an integer between 1 and %lld",
                                        (long long)max);
        }
        if (o) {
                errno = 0;
                offset = strtoll(o, &end, 10);
                if (!*o || *end || errno || offset < 0)
                        return tess_err(err, EINVAL, "'offset' must be a non-negative integer");
        }
        *ret_limit = limit;
        *ret_offset = offset;
        return 0;
}

bool api_is_admin(const struct api_ctx *c)
{
        return c->who.role == ROLE_ADMIN || c->who.role == ROLE_SUPERADMIN;
}

bool api_is_superadmin(const struct api_ctx *c)
{
        return c->who.role == ROLE_SUPERADMIN;
}

bool api_sees_domain(const struct api_ctx *c, const char *domain)
{
        if (c->who.role == ROLE_SUPERADMIN)
                return true;
        if (c->who.role == ROLE_ADMIN || c->who.role == ROLE_MONITOR)
                return domain && streq(domain, c->who.domain);
        return false;
}

void api_audit_target(struct api_ctx *c, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(c->audit_target, sizeof(c->audit_target), fmt, ap);
        va_end(ap);
}

bool api_valid_name(const char *s)
{
        return vf_host_name_valid(s);
}

bool api_valid_session_name(const char *s)
{
        size_t n = strlen(s);
        if (n < 4 || n > 64)
                return false;
        if (!(isalnum((unsigned char)s[0]) || s[0] == '_') || !(isalnum((unsigned char)s[n - 1]) || s[n - 1] == '_'))
                return false;
        for (; *s; s++)
                if (!isalnum((unsigned char)*s) && *s != '.' && *s != '_' && *s != '-')
                        return false;
        return true;
}

bool api_valid_email(const char *s)
{
        const char *at = strchr(s, '@');
        size_t n = strlen(s);
        if (n < 3 || n > 254 || !at || at == s || !at[1] || strchr(at + 1, '@'))
                return false;
        for (; *s; s++)
                if ((unsigned char)*s <= ' ' || *s == '"' || *s == '\\' || *s == '<' || *s == '>' || *s == ',')
                        return false;
        return true;
}

/* ---- routing ---- */

/* Match a raw path against a pattern; fills decoded params. */
static bool route_match(const char *pattern, bool tail, const char *path, char *params[API_MAX_PARAMS], int *nparams)
{
        const char *p = pattern, *s = path;

        *nparams = 0;
        while (*p && *s) {
                if (*p == '{') {
                        const char *pe = strchr(p, '}');
                        const char *se = tail && streq(pe + 1, "") ? NULL : strchr(s, '/');
                        if (!se)
                                se = s + strlen(s);
                        if (se == s || *nparams >= API_MAX_PARAMS)
                                goto fail;
                        params[(*nparams)++] = xstrndup(s, (size_t)(se - s));
                        p = pe + 1;
                        s = se;
                        continue;
                }
                if (*p != *s)
                        goto fail;
                p++;
                s++;
        }
        if (*p == '\0' && (*s == '\0' || (streq(s, "/") && s != path)))
                return true;
fail:
        for (int i = 0; i < *nparams; i++) {
                free(params[i]);
                params[i] = NULL;
        }
        *nparams = 0;
        return false;
}

const struct route *const api_route_tables[] = { api_routes, vfolder_routes, admin_routes, NULL };

static const struct route *find_route(const char *method, const char *path, char *params[API_MAX_PARAMS],
                                      bool *ret_path_known)
{
        int n;
        *ret_path_known = false;
        for (size_t t = 0; api_route_tables[t]; t++) {
                for (const struct route *r = api_route_tables[t]; r->method; r++) {
                        if (!route_match(r->pattern, r->flags & ROUTE_TAIL, path, params, &n))
                                continue;
                        /* a literal "_" segment beats a {param}: tables list literal routes first */
                        if (streq(r->method, method) || (streq(method, "HEAD") && streq(r->method, "GET")))
                                return r;
                        *ret_path_known = true;
                        for (int i = 0; i < n; i++) {
                                free(params[i]);
                                params[i] = NULL;
                        }
                }
        }
        return NULL;
}

/* The flags of the route a request goes to (0 when none). */
static unsigned route_flags(const char *method, const char *path)
{
        char *params[API_MAX_PARAMS] = { 0 };
        bool known;
        const struct route *r = find_route(method, path, params, &known);

        for (int i = 0; i < API_MAX_PARAMS; i++)
                free(params[i]);
        return r ? r->flags : 0;
}

size_t api_body_limit(const char *method, const char *path, void *data)
{
        const struct manager *m = data;
        return route_flags(method, path) & ROUTE_UPLOAD ? m->conf.max_upload : m->conf.max_body;
}

size_t api_body_limit_apps(const char *method, const char *path, void *data)
{
        const struct manager *m = data;
        return route_flags(method, path) & ROUTE_APP ? m->conf.max_body : 0; /* the rest is answered 404 */
}

bool api_stream_body(const char *method, const char *path, void *data UNUSED)
{
        return route_flags(method, path) & ROUTE_STREAM;
}

/* Walk a parsed JSON value enforcing depth and string-length limits. */
static int check_json_limits(const json_t *v, int depth, const struct manager_conf *conf, struct tess_error **err)
{
        const char *key;
        json_t *x;
        size_t i;

        if ((uint64_t)depth > conf->max_json_depth)
                return tess_err(err, EINVAL, "JSON body is nested deeper than %llu levels",
                                (unsigned long long)conf->max_json_depth);
        if (json_is_string(v) && json_string_length(v) > conf->max_string_len)
                return tess_err(err, EINVAL, "a JSON string is longer than %llu bytes",
                                (unsigned long long)conf->max_string_len);
        if (json_is_object(v)) {
                json_object_foreach((json_t *)v, key, x) {
                        if (strlen(key) > 256)
                                return tess_err(err, EINVAL, "a JSON key is longer than 256 bytes");
                        int r = check_json_limits(x, depth + 1, conf, err);
                        if (r < 0)
                                return r;
                }
        } else if (json_is_array(v)) {
                json_array_foreach(v, i, x) {
                        int r = check_json_limits(x, depth + 1, conf, err);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

static int parse_body(struct api_ctx *c, struct tess_error **err)
{
        const struct buf *b = http_body(c->req);
        json_error_t jerr;
        size_t i = 0;

        while (i < b->len && isspace((unsigned char)b->data[i]))
                i++;
        if (i == b->len)
                return 0;
        c->body = json_loadb(b->data, b->len, JSON_REJECT_DUPLICATES, &jerr);
        if (!c->body)
                return tess_err(err, EINVAL, "malformed JSON body: %s (line %d, column %d)", jerr.text, jerr.line,
                                jerr.column);
        if (!json_is_object(c->body)) {
                json_decref(c->body);
                c->body = NULL;
                return tess_err(err, EINVAL, "the JSON body must be an object");
        }
        return check_json_limits(c->body, 1, &c->m->conf, err);
}

static bool authorized_for_route(struct api_ctx *c)
{
        const struct route *r = c->route;

        if (c->who.role == ROLE_MONITOR && !(r->flags & (ROUTE_READ | ROUTE_SELF)))
                return false;
        if ((r->flags & ROUTE_SUPERADMIN) && c->who.role != ROLE_SUPERADMIN)
                return false;
        if ((r->flags & ROUTE_ADMIN) && !api_is_admin(c) && c->who.role != ROLE_MONITOR)
                return false;
        return true;
}

/* Whether a route is served on this listener: with an app listener, the
 * app proxy's routes there, every other one on the API's listener.  (The
 * apps' pages then run on an origin of their own: they cannot call the
 * API with the user's login cookie, docs/app-proxy.md.) */
static bool served_here(const struct manager *m, const struct route *r, bool app_listener)
{
        if (!m->conf.app_listen)
                return !app_listener;
        return !!(r->flags & ROUTE_APP) == app_listener;
}

static void dispatch(struct http_req *req, struct manager *m, bool app_listener)
{
        struct api_ctx *c = xcalloc(1, sizeof(*c));
        struct tess_error *err = NULL;
        bool path_known;

        c->m = m;
        c->req = req;
        http_set_user(req, c);
        c->route = find_route(http_method(req), http_path(req), c->param, &path_known);
        if (c->route && !served_here(m, c->route, app_listener)) {
                c->route = NULL;
                path_known = false;
        }
        if (!c->route) {
                if (path_known && !app_listener)
                        api_problem(c, 405, "method-not-allowed", "method %s is not allowed here",
                                    http_method(req));
                else
                        api_problem(c, 404, "not-found", "no such route");
                return;
        }
        for (int i = 0; i < API_MAX_PARAMS && c->param[i]; i++) {
                if (http_percent_decode(c->param[i], false) < 0) {
                        api_problem(c, 400, "invalid-api-params", "malformed percent-encoding in the path");
                        return;
                }
        }
        if (http_body_too_large(req)) {
                api_problem(c, 413, "request-too-large", "request body is larger than %llu bytes",
                            (unsigned long long)http_body_limit(req));
                return;
        }
        if (c->route->flags & ROUTE_AGENT) {
                if (api_agent_auth(c, &err) < 0) {
                        api_problem(c, 401, "auth-failed", "%s", err->msg);
                        tess_error_free(err);
                        return;
                }
        } else if (!(c->route->flags & ROUTE_PUBLIC)) {
                if (auth_request(c, &err) < 0) {
                        api_problem(c, err->code == EDQUOT ? 429 : 401,
                                    err->code == EDQUOT ? "too-many-requests" : "auth-failed", "%s", err->msg);
                        tess_error_free(err);
                        return;
                }
                c->authenticated = true;
                if (!authorized_for_route(c)) {
                        api_problem(c, 403, "forbidden", "your role (%s) may not use this route",
                                    role_to_string(c->who.role));
                        return;
                }
        }
        if (c->route->flags & ROUTE_AUDIT)
                audit_flush(m); /* callers see their own writes */
        if (!(c->route->flags & (ROUTE_RAW_BODY | ROUTE_UPLOAD | ROUTE_STREAM)) && parse_body(c, &err) < 0) {
                api_fail(c, err);
                return;
        }
        c->route->fn(c);
}

void api_dispatch(struct http_req *req, void *data)
{
        dispatch(req, data, false);
}

void api_dispatch_apps(struct http_req *req, void *data)
{
        dispatch(req, data, true);
}

void api_request_abort(struct http_req *req, void *data UNUSED)
{
        struct api_ctx *c = http_get_user(req);
        if (c && c->on_shutdown)
                c->on_shutdown(c);
}

void api_request_done(struct http_req *req, void *data)
{
        struct manager *m = data;
        struct api_ctx *c = http_get_user(req);
        double secs = (double)(monotonic_usec() - http_start_usec(req)) / 1e6;
        unsigned status = http_reply_status(req);

        metrics_observe_request(m->metrics, c && c->route ? c->route->pattern : "unmatched", http_method(req),
                                status, secs);
        if (c && c->route && c->authenticated && (!(c->route->flags & ROUTE_READ) || m->conf.audit_reads))
                audit_record(m, c, status);
        /* a change to users, keypairs, policies or domains may revoke access */
        if (c && c->route && !(c->route->flags & ROUTE_READ) && status < 400 &&
            (strncmp(c->route->pattern, "/admin/", 7) == 0 || strncmp(c->route->pattern, "/auth/", 6) == 0))
                auth_cache_clear(m->authcache);
        if (!c)
                return;
        if (c->listener_id)
                events_unlisten(m->events, c->listener_id);
        if (c->timer_id)
                loop_cancel_timer(m->loop, c->timer_id);
        if (c->state && c->state_free)
                c->state_free(c->state);
        for (int i = 0; i < API_MAX_PARAMS; i++)
                free(c->param[i]);
        json_decref(c->body);
        free(c);
}
