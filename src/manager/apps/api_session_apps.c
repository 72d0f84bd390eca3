/* api_session_apps.c - a session's apps (the image's
 * ai.backend.service-ports; Backend.AI's routes and answer keys;
 * docs/app-proxy.md):
 *
 *   POST /session/{name}/start-service {app, port?, envs?, arguments?}
 *   POST /session/{name}/shutdown-service {service_name}
 *   GET /stream/session/{name}/apps    the apps: [{name, protocol, ports}]
 *   (the servicePorts of the session's answers: session_apps.h)
 *
 * The session's owner only (or an admin naming the owner with
 * owner_access_key), RUNNING.  start-service: the app must be declared,
 * http or preopen (the proxy speaks HTTP), and port one of its ports
 * (default: its first).  Its command (app_start.h) runs through the
 * kernel's agent and runner, as the session's user, once: a running app
 * is not started again, and the answer comes when its port listens.
 * Then:
 *
 *   200 {"token": T, "wsproxy_addr": "http://HOST", "url": "http://HOST/apps/_/open?token=T",
 *        "path": "/apps/<session>/<app>/", "expires_in": SECONDS}
 *
 * wsproxy_addr is where browsers reach the app listener (app_origin.h:
 * the resource group's wsproxy_addr, conf.app_url, else the client's
 * Host name with the app listener's port); never the API's own origin.
 * The token is the caller's: only the caller's web login opens it
 * (api_apps.c, api_app_login.c).
 *
 * shutdown-service: the app's tokens and cookies end, then the runner
 * stops its process (every port it was opened on): 204; 404 when it does
 * not run, 400 for an app the image does not declare. */
#include "common/compat.h"

#include <strings.h>

#include "common/env_reserved.h"
#include "common/service_ports.h"
#include "common/timeutil.h"
#include "manager/agent_link/agent_call.h"
#include "manager/api/api.h"
#include "manager/apps/app_origin.h"
#include "manager/apps/app_proxy.h"
#include "manager/apps/app_start.h"
#include "manager/apps/app_token.h"
#include "manager/core/manager.h"
#include "manager/db/db.h"
#include "manager/http/http.h"
#include "manager/sessions/api_session.h"
#include "manager/sessions/session_apps.h"

#define START_TIMEOUT_S 90
#define ENVS_MAX        64

/* What the answer needs once the agent is done. */
struct started {
        struct app_grant g;
        char *wsproxy_addr;
};

static void started_free(void *data)
{
        struct started *s = data;
        free(s->wsproxy_addr);
        free(s);
}

/* envs and arguments: an object, or (Backend.AI's client) a JSON text of
 * one.  *ret: a new reference or NULL. */
static int object_field(const json_t *body, const char *name, json_t **ret, struct tess_error **err)
{
        json_t *v = api_field(body, NAMES(name));

        *ret = NULL;
        if (json_is_string(v))
                v = json_loads(json_string_value(v), 0, NULL);
        else
                json_incref(v);
        if (v && !json_is_object(v)) {
                json_decref(v);
                return tess_err(err, EINVAL, "'%s' must be an object (or its JSON text)", name);
        }
        *ret = v;
        return 0;
}

/* envs as KEY=value lines into a JSON array. */
static int env_lines(const json_t *envs, json_t **ret, struct tess_error **err)
{
        const char *key;
        json_t *v;

        *ret = json_array();
        if (json_object_size(envs) > ENVS_MAX)
                return tess_err(err, EINVAL, "'envs' has more than %d variables", ENVS_MAX);
        json_object_foreach((json_t *)envs, key, v) {
                bool ok = *key && !(key[0] >= '0' && key[0] <= '9');
                for (const char *p = key; ok && *p; p++)
                        ok = (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
                             *p == '_';
                if (!ok || !json_is_string(v))
                        return tess_err(err, EINVAL, "'envs.%.64s': names are [A-Za-z_][A-Za-z0-9_]*, values strings",
                                        key);
                if (env_reserved(key)) /* as in a session's environment (session_environ.c) */
                        return tess_err(err, EINVAL, "'envs.%.64s' is reserved (%s): an app may not set it", key,
                                        env_reserved_why(key));
                json_array_append_new(*ret, json_sprintf("%s=%s", key, json_string_value(v)));
        }
        return 0;
}

/* POST body (consumed) to /v1/kernels/<kernel>/<op> on the session's
 * agent; done answers the client. */
static struct agent_call *post_to_kernel(struct api_ctx *c, const struct session_target *t, const char *op,
                                         json_t *body, long timeout_s,
                                         void (*done)(struct api_ctx *, struct agent_call *))
{
        _cleanup_free_ char *text = json_dumps(body, JSON_COMPACT);
        _cleanup_free_ char *target = xasprintf("/v1/kernels/%s/%s", t->kernel, op);

        json_decref(body);
        return agent_call_one(c, t->agent, t->address, "POST", target, text, strlen(text), "application/json",
                              timeout_s, done);
}

static void on_started(struct api_ctx *c, struct agent_call *call)
{
        struct started *s = call->user;
        struct tess_error *err = NULL;
        char token[APP_TOKEN_LEN + 1], prefix[160];

        if (call->err)
                return agent_call_fail(c, call);
        if (app_token_issue(c->m, APP_TOKEN_OPEN, &s->g, c->m->conf.app_token_ttl, NULL, token, &err) < 0)
                return api_fail(c, err);
        app_prefix(s->g.session, s->g.app, prefix, sizeof(prefix));
        api_audit_target(c, "session %s app %s", s->g.session, s->g.app);
        api_json(c, 200,
                 json_pack("{s:s, s:s, s:s++, s:s, s:I}", "token", token, "wsproxy_addr", s->wsproxy_addr, "url",
                           s->wsproxy_addr, "/apps/_/open?token=", token, "path", prefix, "expires_in",
                           (json_int_t)(c->m->conf.app_token_ttl / USEC_PER_SEC)));
        explicit_bzero(token, sizeof(token));
}

/* The request's fields. */
struct start_request {
        const char *app;
        int64_t port;      /* 0: the app's first */
        json_t *arguments; /* object or NULL */
        json_t *env;       /* ["KEY=value", ...] */
};

static void start_request_release(struct start_request *q)
{
        json_decref(q->arguments);
        json_decref(q->env);
}

static int parse_request(const json_t *body, struct start_request *q, struct tess_error **err)
{
        json_t *envs = NULL;
        int r;

        if (api_get_string(body, NAMES("app", "service_name"), SERVICE_PORT_NAME_MAX, &q->app, err) < 0 ||
            api_get_int(body, NAMES("port"), 1, 65535, &q->port, err) < 0 ||
            object_field(body, "arguments", &q->arguments, err) < 0 || object_field(body, "envs", &envs, err) < 0)
                return -EINVAL;
        if (!q->app || !service_port_name_valid(q->app))
                r = tess_err(err, EINVAL, "'app' names the app to start: one of the image's service ports");
        else
                r = env_lines(envs, &q->env, err);
        json_decref(envs);
        return r;
}

/* The app q asks for in the session's image: into s (grant, wsproxy_addr)
 * and the agent's request *ret_fwd. */
static int plan(struct api_ctx *c, const struct session_target *t, const struct start_request *q, struct started *s,
                json_t **ret_fwd, struct tess_error **err)
{
        json_t *labels = NULL;
        struct service_ports sp;
        char user[40], prefix[160];
        int r;

        r = session_app_facts(c->m, t->session, &labels, &s->wsproxy_addr, user, sizeof(user), err);
        if (r < 0)
                return r;
        r = session_apps_of_labels(labels, &sp, err);
        if (r < 0) {
                json_decref(labels);
                return r;
        }
        const struct service_port *sport = service_ports_find(&sp, q->app);
        bool known = q->port == 0;
        for (int i = 0; sport && i < sport->nports && !known; i++)
                known = sport->ports[i] == q->port;
        if (!sport)
                r = tess_err(err, ENOENT, "the session's image declares no app '%s'", q->app);
        else if (sport->protocol != SERVICE_HTTP && sport->protocol != SERVICE_PREOPEN)
                r = tess_err(err, EINVAL, "app '%s' speaks %s: the app proxy forwards http apps only", q->app,
                             service_protocol_to_string(sport->protocol));
        else if (!known)
                r = tess_err(err, EINVAL, "app '%s' does not open port %lld", q->app, (long long)q->port);
        if (r < 0) {
                json_decref(labels);
                return r;
        }
        s->g.port = q->port ? (int)q->port : sport->ports[0];
        if (s->g.port == sport->ports[0])
                snprintf(s->g.app, sizeof(s->g.app), "%s", q->app);
        else
                snprintf(s->g.app, sizeof(s->g.app), "%s.%d", q->app, s->g.port);
        snprintf(s->g.session, sizeof(s->g.session), "%s", t->session);
        /* the link is the caller's: an admin opening a user's app gets one
         * that only the admin's web login opens */
        snprintf(s->g.user, sizeof(s->g.user), "%s", c->who.user_id);
        snprintf(s->g.access_key, sizeof(s->g.access_key), "%s", c->who.access_key);
        char *group_addr = s->wsproxy_addr;
        s->wsproxy_addr = app_origin(c, t->session, group_addr);
        free(group_addr);
        app_prefix(t->session, s->g.app, prefix, sizeof(prefix));
        r = app_start_request(labels, q->app, s->g.app, s->g.port, prefix, q->arguments, q->env, ret_fwd, err);
        json_decref(labels);
        if (r < 0 && (*err)->code == ENOENT) /* the image's fault, not a missing object */
                (*err)->code = EINVAL;
        return r;
}

void api_session_start_service(struct api_ctx *c)
{
        struct start_request q = { 0 };
        struct tess_error *err = NULL;
        struct session_target t;
        json_t *fwd = NULL;

        if (!c->m->app_http)
                return api_problem(c, 503, "app-proxy-off",
                                   "this manager serves no apps (app_listen = off): ask its administrator");
        if (parse_request(c->body, &q, &err) < 0) {
                start_request_release(&q);
                return api_fail(c, err);
        }
        if (!api_session_target(c, api_owner_access_key(c), &t))
                return start_request_release(&q);
        struct started *s = xcalloc(1, sizeof(*s));
        int r = plan(c, &t, &q, s, &fwd, &err);
        start_request_release(&q);
        if (r < 0) {
                started_free(s);
                return api_fail(c, err);
        }
        struct agent_call *call = post_to_kernel(c, &t, "start-service", fwd, START_TIMEOUT_S, on_started);
        if (!call)
                return started_free(s);
        call->user = s;
        call->user_free = started_free;
}

/* ---- shutdown-service ---- */

#define STOP_TIMEOUT_S 30

static void on_stopped(struct api_ctx *c, struct agent_call *call)
{
        if (call->err && call->status == 404) {
                call->err = tess_error_free(call->err);
                return api_problem(c, 404, "app-not-running", "app '%s' is not running in the session",
                                   (const char *)call->user);
        }
        if (call->err)
                return agent_call_fail(c, call);
        http_reply(c->req, 204, NULL, "", 0);
}

void api_session_shutdown_service(struct api_ctx *c)
{
        const char *app = NULL;
        struct tess_error *err = NULL;
        struct session_target t;
        struct service_ports sp;

        if (api_get_string(c->body, NAMES("service_name", "app"), SERVICE_PORT_NAME_MAX, &app, &err) < 0)
                return api_fail(c, err);
        if (!app || !service_port_name_valid(app))
                return api_problem(c, 400, "invalid-api-params",
                                   "'service_name' names the app to stop: one of the image's service ports");
        if (!api_session_target(c, api_owner_access_key(c), &t))
                return;
        if (session_apps(c->m, t.session, &sp, &err) < 0)
                return api_fail(c, err);
        const struct service_port *sport = service_ports_find(&sp, app);
        if (!sport)
                return api_problem(c, 400, "invalid-api-params", "the session's image declares no app '%s'", app);
        /* the runner's names of the app: one per port it was opened on
         * (plan()); their tokens and cookies end first */
        json_t *names = json_array();
        for (int i = 0; i < sport->nports; i++) {
                char name[APP_SEGMENT_MAX + 1];
                if (i == 0)
                        snprintf(name, sizeof(name), "%s", app);
                else
                        snprintf(name, sizeof(name), "%s.%d", app, sport->ports[i]);
                json_array_append_new(names, json_string(name));
                if (DBQ(c->m->db, "DELETE FROM app_tokens WHERE session_id = ? AND app = ?", NULL, &err,
                        DB_TEXT(t.session), DB_TEXT(name)) < 0) {
                        json_decref(names);
                        return api_fail(c, err);
                }
        }
        api_audit_target(c, "session %s app %s", t.session, app);
        struct agent_call *call = post_to_kernel(c, &t, "shutdown-service", json_pack("{s:o}", "names", names),
                                                 STOP_TIMEOUT_S, on_stopped);
        if (!call)
                return;
        call->user = xstrdup(app);
        call->user_free = free;
}

/* ---- the list ---- */

/* GET /stream/session/{name}/apps (Backend.AI's, under its stream prefix
 * though it is a plain request): the apps the session's image declares,
 * as its servicePorts, while it runs. */
void api_session_apps_list(struct api_ctx *c)
{
        struct session_target t;

        if (!api_session_target(c, api_owner_access_key(c), &t))
                return;
        api_json(c, 200, api_session_service_ports(c->m, t.session));
}
