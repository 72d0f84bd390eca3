/* dispatch.c - the dispatcher (api.h): finds a request's route in the
 * manager's tables (m->routes), checks its size, authenticates it (an
 * agent's signature, a keypair's or a web login's), parses its JSON body
 * within the limits, calls the handler, and when the request ends records
 * its metrics and its audit entry and releases what the handler held. */
#include "common/compat.h"

#include <ctype.h>

#include "common/loop.h"
#include "common/timeutil.h"
#include "manager/api/api.h"
#include "manager/api/audit.h"
#include "manager/api/auth.h"
#include "manager/api/held_conn.h"
#include "manager/api/server_state.h"
#include "manager/api/subcall.h"
#include "manager/api/web_session.h"
#include "manager/core/events.h"
#include "manager/core/manager.h"
#include "manager/core/metrics.h"
#include "manager/http/http.h"

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

static const struct route *find_route(const struct manager *m, const char *method, const char *path,
                                      char *params[API_MAX_PARAMS], bool *ret_path_known)
{
        int n;
        *ret_path_known = false;
        for (size_t t = 0; m->routes[t]; t++) {
                for (const struct route *r = m->routes[t]; r->method; r++) {
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
static unsigned route_flags(const struct manager *m, const char *method, const char *path)
{
        char *params[API_MAX_PARAMS] = { 0 };
        bool known;
        const struct route *r = find_route(m, method, path, params, &known);

        for (int i = 0; i < API_MAX_PARAMS; i++)
                free(params[i]);
        return r ? r->flags : 0;
}

size_t api_body_limit(const char *method, const char *path, void *data)
{
        const struct manager *m = data;
        return route_flags(m, method, path) & ROUTE_UPLOAD ? m->conf.max_upload : m->conf.max_body;
}

size_t api_body_limit_apps(const char *method, const char *path, void *data)
{
        const struct manager *m = data;
        return route_flags(m, method, path) & ROUTE_APP ? m->conf.max_body : 0; /* the rest is answered 404 */
}

bool api_stream_body(const char *method, const char *path, void *data)
{
        return route_flags(data, method, path) & ROUTE_STREAM;
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

bool api_role_may_use(const struct api_ctx *c, const struct route *r)
{
        if (c->who.role == ROLE_MONITOR && !(r->flags & (ROUTE_READ | ROUTE_SELF)))
                return false;
        if ((r->flags & ROUTE_SUPERADMIN) && c->who.role != ROLE_SUPERADMIN)
                return false;
        if ((r->flags & ROUTE_ADMIN) && !api_is_admin(c) && c->who.role != ROLE_MONITOR)
                return false;
        return true;
}

/* Whether a route is served on this listener: the app proxy's routes on
 * the app listener, every other one on the API's listener, never both.
 * (The apps' pages run on an origin of their own: they cannot call the
 * API with the user's login cookie, docs/app-proxy.md.) */
static bool served_here(const struct route *r, bool app_listener)
{
        return !!(r->flags & ROUTE_APP) == app_listener;
}

/* What the headers settle: the route, its parameters, the size, and (but
 * for agents', whose signature covers the body) the caller and its right
 * to the route.  Answers on the first failure; the context stays on req. */
static void dispatch_headers(struct http_req *req, struct manager *m, bool app_listener)
{
        struct api_ctx *c = xcalloc(1, sizeof(*c));
        struct tess_error *err = NULL;
        bool path_known;

        c->m = m;
        c->req = req;
        http_set_user(req, c);
        const char *path = http_path(req);
        /* Backend.AI's clients in webserver mode put /func before every
         * route but those under /server (web_session.h) */
        if (!app_listener && strncmp(path, FUNC_PREFIX "/", strlen(FUNC_PREFIX) + 1) == 0) {
                c->func_prefix = true;
                path += strlen(FUNC_PREFIX);
        }
        c->route = find_route(m, http_method(req), path, c->param, &path_known);
        if (c->route && c->func_prefix && (c->route->flags & (ROUTE_AGENT | ROUTE_PUBLIC))) {
                c->route = NULL; /* agents' routes and public ones are not the login's */
                path_known = false;
        }
        if (c->route && (c->route->flags & ROUTE_APP) && !app_listener) {
                api_problem(c, 421, "misdirected-request",
                            "apps are never served on the API's origin: open the app's link, on the app "
                            "listener (app_listen)");
                return;
        }
        if (c->route && !served_here(c->route, app_listener)) {
                c->route = NULL;
                path_known = false;
        }
        if (!c->route) {
                if (path_known && !app_listener)
                        api_problem(c, 405, "method-not-allowed", "method %s is not allowed here", http_method(req));
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
        if (c->route->flags & (ROUTE_AGENT | ROUTE_PUBLIC)) {
                if (c->route->admit) /* a public route's own check (a token) */
                        c->route->admit(c);
                return;
        }
        if (auth_request(c, &err) < 0) {
                /* the database failed, not the caller: 503 or 507 */
                if (err->code == EBUSY || err->code == ENOSPC)
                        return api_fail(c, err);
                if (err->code == EKEYEXPIRED) { /* web_session_password_gate() */
                        c->authenticated = true;
                        api_problem(c, 403, "password-change-required", "%s", err->msg);
                        tess_error_free(err);
                        return;
                }
                api_problem(c, err->code == EDQUOT ? 429 : 401,
                            err->code == EDQUOT ? "too-many-requests" : "auth-failed", "%s", err->msg);
                tess_error_free(err);
                return;
        }
        c->authenticated = true;
        if (!api_role_may_use(c, c->route)) {
                api_problem(c, 403, "forbidden", "your role (%s) may not use this route", role_to_string(c->who.role));
                return;
        }
        if ((c->route->flags & ROUTE_CREATES) && server_frozen(m)) {
                http_add_header(req, "Retry-After", "60");
                api_problem(c, 503, "server-frozen",
                            "the service is frozen for maintenance: nothing new can be created until an "
                            "administrator unfreezes it; please try again later");
                return;
        }
}

/* The body is in: agents' signature, the JSON body, the handler. */
static void dispatch(struct http_req *req, struct manager *m, bool app_listener)
{
        struct api_ctx *c = http_get_user(req);
        struct tess_error *err = NULL;

        if (!c) { /* not admitted on its headers (a listener without admit) */
                dispatch_headers(req, m, app_listener);
                c = http_get_user(req);
        }
        if (http_reply_status(req))
                return;
        if (http_body_too_large(req)) { /* chunked: found too large while it came */
                api_problem(c, 413, "request-too-large", "request body is larger than %llu bytes",
                            (unsigned long long)http_body_limit(req));
                return;
        }
        if ((c->route->flags & ROUTE_AGENT) && api_agent_auth(c, &err) < 0) {
                api_problem(c, 401, "auth-failed", "%s", err->msg);
                tess_error_free(err);
                return;
        }
        if (c->authenticated && auth_check_body(c, &err) < 0) { /* a signature that binds the body */
                api_problem(c, 401, "auth-failed", "%s", err->msg);
                tess_error_free(err);
                return;
        }
        if (c->route->flags & ROUTE_AUDIT)
                audit_flush(m); /* callers see their own writes */
        if (!(c->route->flags & (ROUTE_RAW_BODY | ROUTE_UPLOAD | ROUTE_STREAM)) && parse_body(c, &err) < 0) {
                api_fail(c, err);
                return;
        }
        c->route->fn(c);
}

void api_admit(struct http_req *req, void *data)
{
        dispatch_headers(req, data, false);
}

void api_admit_apps(struct http_req *req, void *data)
{
        dispatch_headers(req, data, true);
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

void api_record_outcome(struct manager *m, struct api_ctx *c, unsigned status)
{
        if (c->route && c->authenticated && (!(c->route->flags & ROUTE_READ) || m->conf.audit_reads))
                audit_record(m, c, status);
        /* a change to users, keypairs, policies or domains may revoke access */
        if (c->route && !(c->route->flags & ROUTE_READ) && status < 400 &&
            (strncmp(c->route->pattern, "/admin/", 7) == 0 || strncmp(c->route->pattern, "/auth/", 6) == 0 ||
             strncmp(c->route->pattern, "/server/logout", 14) == 0)) {
                auth_cache_clear(m->authcache);
                held_conns_check_soon(m);
        }
}

void api_ctx_release(struct manager *m, struct api_ctx *c)
{
        if (c->subcall_child) /* the client left while a subcall waited */
                api_ctx_release(m, c->subcall_child);
        if (c->listener_id)
                events_unlisten(m->events, c->listener_id);
        if (c->timer_id)
                loop_cancel_timer(m->loop, c->timer_id);
        if (c->state && c->state_free)
                c->state_free(c->state);
        for (int i = 0; i < API_MAX_PARAMS; i++)
                free(c->param[i]);
        json_decref(c->body);
        free(c->password_hash);
        if (c->sub)
                api_subcall_forget(c);
        free(c);
}

void api_request_done(struct http_req *req, void *data)
{
        struct manager *m = data;
        struct api_ctx *c = http_get_user(req);
        double secs = (double)(monotonic_usec() - http_start_usec(req)) / 1e6;
        unsigned status = http_reply_status(req);

        metrics_observe_request(m->metrics, c && c->route ? c->route->pattern : "unmatched", http_method(req), status,
                                secs);
        if (!c)
                return;
        api_record_outcome(m, c, status);
        api_ctx_release(m, c);
}
