/* api_misc.c - unauthenticated meta routes: version, health, metrics,
 * OpenAPI. */
#include "common/compat.h"

#include <ctype.h>
#include <inttypes.h>

#include "common/buf.h"
#include "common/log.h"
#include "common/sign.h"
#include "common/version.h"
#include "manager/admin/admin.h"
#include "manager/api/api.h"
#include "manager/core/events.h"
#include "manager/core/manager.h"
#include "manager/core/metrics.h"
#include "manager/db/db.h"
#include "manager/http/http.h"
#include "manager/main.h"

/* The API versions of the Backend.AI client releases run against Tessera
 * (docs/backendai-compat.md), oldest first; the last is
 * API_VERSION_SERVED. */
static const struct {
        int year, month;
        const char *version;
} client_releases[] = {
        { 22, 3, "v6.20220315" },
        { 23, 9, "v7.20230615" },
        { 24, 3, API_VERSION_SERVED },
};

/* What GET / tells a client: its release's own API version when its
 * User-Agent names the release ("Backend.AI Client for Python 22.03.2"),
 * that is the newest of the table not newer than the release, so that a
 * client neither warns that the server is newer than itself nor that it
 * is too old; anyone else gets the newest served.  Every version from
 * API_VERSION_OLDEST on is accepted whatever this says. */
static const char *version_for(const char *user_agent)
{
        static const char prefix[] = "Backend.AI Client for Python ";
        int year, month;

        if (!user_agent || strncmp(user_agent, prefix, strlen(prefix)) != 0 ||
            sscanf(user_agent + strlen(prefix), "%d.%d", &year, &month) != 2)
                return API_VERSION_SERVED;
        const char *v = client_releases[0].version;
        for (size_t i = 0; i < ARRAY_SIZE(client_releases); i++)
                if (year * 100 + month >= client_releases[i].year * 100 + client_releases[i].month)
                        v = client_releases[i].version;
        return v;
}

void api_root_version(struct api_ctx *c)
{
        if (web_static_index(c)) /* a browser: the web UI */
                return;
        api_json(c, 200,
                 json_pack("{s:s, s:s}", "version", version_for(http_header(c->req, "User-Agent")), "manager",
                           TESSERA_VERSION));
}

/* GET /health: can this manager serve?  200 when its database answers,
 * 503 (with Retry-After) when it does not: what a load balancer in front of
 * several managers checks (deploy/haproxy.cfg).  `events` says whether
 * the events of the other managers reach this one: "listening",
 * "reconnecting" (for a moment after the database came back), or "local"
 * (SQLite: one manager). */
void api_health(struct api_ctx *c)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        struct tess_error *err = NULL;

        http_add_header(c->req, "Cache-Control", "no-store");
        if (db_query(c->m->db, "SELECT 1 AS ok", NULL, 0, &rows, &err) < 0) {
                /* the reason is for the log: this route answers anyone */
                log_debug("health: the database does not answer: %s", err->msg);
                tess_error_free(err);
                http_add_header(c->req, "Retry-After", "5");
                return api_problem(c, 503, "service-unavailable", "the database is unreachable");
        }
        api_json(c, 200,
                 json_pack("{s:s, s:s, s:s}", "status", "ok", "database", db_kind_name(c->m->db), "events",
                           cluster_events_state(c->m)));
}

void api_metrics(struct api_ctx *c)
{
        struct buf b = BUF_INIT;
        _cleanup_rows_ struct db_rows *rows = NULL;
        struct tess_error *err = NULL;
        uint64_t nq;
        double secs;

        metrics_render(c->m->metrics, &b);
        buf_puts(&b, "# HELP tessera_sessions Sessions by status.\n# TYPE tessera_sessions gauge\n");
        if (db_query(c->m->db, "SELECT status, COUNT(*) AS n FROM sessions GROUP BY status", NULL, 0, &rows, &err) >=
            0) {
                for (int i = 0; i < rows->nrows; i++)
                        buf_printf(&b, "tessera_sessions{status=\"%s\"} %s\n", db_get(rows, i, 0), db_get(rows, i, 1));
        } else {
                tess_error_free(err);
        }
        db_stats(c->m->db, &nq, &secs);
        buf_printf(&b,
                   "# HELP tessera_db_queries_total Database queries run.\n# TYPE tessera_db_queries_total counter\n"
                   "tessera_db_queries_total{driver=\"%s\"} %" PRIu64 "\n"
                   "# HELP tessera_db_query_seconds_total Time spent in database queries.\n"
                   "# TYPE tessera_db_query_seconds_total counter\n"
                   "tessera_db_query_seconds_total{driver=\"%s\"} %.6f\n"
                   "# HELP tessera_events_total Session and task events published.\n"
                   "# TYPE tessera_events_total counter\n"
                   "tessera_events_total %" PRIu64 "\n"
                   "# HELP tessera_events_received_total Events of the other managers received.\n"
                   "# TYPE tessera_events_received_total counter\n"
                   "tessera_events_received_total %" PRIu64 "\n",
                   db_kind_name(c->m->db), nq, db_kind_name(c->m->db), secs, events_published(c->m->events),
                   events_received(c->m->events));
        http_reply(c->req, 200, "text/plain; version=0.0.4", b.data, b.len);
        buf_release(&b);
}

/* OpenAPI path "/session/{name}" needs its parameters declared. */
static json_t *path_params(const char *pattern)
{
        json_t *a = json_array();
        for (const char *p = strchr(pattern, '{'); p; p = strchr(p + 1, '{')) {
                const char *e = strchr(p, '}');
                json_array_append_new(a, json_pack("{s:s%, s:s, s:b, s:{s:s}}", "name", p + 1, (size_t)(e - p - 1),
                                                   "in", "path", "required", 1, "schema", "type", "string"));
        }
        return a;
}

static void lower(char *s)
{
        for (; *s; s++)
                *s = (char)tolower((unsigned char)*s);
}

/* What a route does, for the authorization tests and readers of the
 * document: public (no signature), agent (agents' signature), read
 * (changes nothing: monitors may call), self (the caller's own account),
 * write. */
static const char *route_access(unsigned flags)
{
        if (flags & ROUTE_PUBLIC)
                return "public";
        if (flags & ROUTE_AGENT)
                return "agent";
        if (flags & ROUTE_READ)
                return "read";
        return flags & ROUTE_SELF ? "self" : "write";
}

json_t *api_openapi_document(const struct route *const *tables)
{
        json_t *paths = json_object();

        for (size_t t = 0; tables[t]; t++) {
                for (const struct route *r = tables[t]; r->method; r++) {
                        json_t *item = json_object_get(paths, r->pattern);
                        if (!item) {
                                item = json_object();
                                json_object_set_new(paths, r->pattern, item);
                        }
                        char method[16];
                        snprintf(method, sizeof(method), "%s", r->method);
                        lower(method);
                        if (json_object_get(item, method))
                                continue; /* aliases of one route */
                        json_t *op = json_pack(
                                "{s:s, s:[s], s:o, s:{s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}}}", "summary", r->summary,
                                "tags", r->tag ? r->tag : "admin", "parameters", path_params(r->pattern),
                                "responses", "200", "description", "success", "400", "description",
                                "invalid input (problem+json)", "401", "description",
                                "authentication failed (problem+json)", "404", "description",
                                "not found or not visible (problem+json)");
                        if (!(r->flags & ROUTE_PUBLIC))
                                json_object_set_new(op, "security", json_pack("[{s:[]}]", "BackendAISignature"));
                        json_object_set_new(op, "x-tessera-access", json_string(route_access(r->flags)));
                        if (r->flags & (ROUTE_ADMIN | ROUTE_SUPERADMIN))
                                json_object_set_new(op, "x-tessera-roles",
                                                    json_string(r->flags & ROUTE_SUPERADMIN
                                                                        ? "superadmin"
                                                                        : (r->flags & ROUTE_READ ? "admin, monitor (read)"
                                                                                                 : "admin")));
                        json_object_set_new(item, method, op);
                }
        }
        return json_pack(
                "{s:s, s:{s:s, s:s, s:s}, s:o, s:{s:{s:{s:s, s:s, s:s, s:s}}}}", "openapi", "3.0.3", "info", "title",
                "Tessera API", "version", TESSERA_VERSION, "description",
                "Backend.AI-compatible client API plus Tessera's own admin and listing routes. Requests are signed "
                "as Backend.AI does: Authorization: BackendAI signMethod=HMAC-SHA256, credential=AK:SIG with Date "
                "and X-BackendAI-Version headers. Errors are application/problem+json.",
                "paths", paths, "components", "securitySchemes", "BackendAISignature", "type", "apiKey", "in",
                "header", "name", "Authorization", "description", "BackendAI HMAC request signature");
}

void api_openapi(struct api_ctx *c)
{
        api_json(c, 200, api_openapi_document(c->m->routes));
}
