/* app_access.c - see app_access.h. */
#include "common/compat.h"

#include "manager/api/api.h"
#include "manager/api/auth.h"
#include "manager/apps/app_access.h"
#include "manager/db/db.h"
#include "manager/http/http.h"
#include "manager/sessions/api_session.h"

void app_own_answer_headers(struct api_ctx *c)
{
        http_add_header(c->req, "Content-Security-Policy", "default-src 'none'; sandbox; frame-ancestors 'none'");
        http_add_header(c->req, "X-Content-Type-Options", "nosniff");
        http_add_header(c->req, "Cache-Control", "no-store");
        http_add_header(c->req, "Referrer-Policy", "no-referrer");
}

static bool refuse(struct api_ctx *c, bool own_headers, unsigned status, const char *kind, const char *title,
                   struct tess_error *err)
{
        if (own_headers)
                app_own_answer_headers(c);
        if (err)
                api_fail(c, err);
        else
                api_problem(c, status, kind ? kind : "forbidden", "%s", title ? title : "refused");
        return false;
}

bool app_access(struct api_ctx *c, const struct app_grant *g, struct app_target *t, bool own_headers)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        struct tess_error *err = NULL;
        int r;

        r = *g->access_key ? auth_lookup_keypair(c->m, g->access_key, &c->who, NULL, &err) : -ENOENT;
        if (r == -ENOENT || (r == 0 && (!streq(c->who.user_id, g->user) || c->who.role == ROLE_MONITOR))) {
                tess_error_free(err);
                memset(&c->who, 0, sizeof(c->who));
                return refuse(c, own_headers, 403, "forbidden", "the app's user or keypair is no longer active",
                              NULL);
        }
        if (r < 0)
                return refuse(c, own_headers, 0, NULL, NULL, err);
        r = api_find_session(c, g->session, NULL, false, &rows, &err);
        if (r == -ENOENT || r == -EACCES) {
                tess_error_free(err);
                return refuse(c, own_headers, 403, "forbidden", "the app's user may no longer use its session",
                              NULL);
        }
        if (r < 0)
                return refuse(c, own_headers, 0, NULL, NULL, err);
        if (!streq(db_getn(rows, 0, "status"), "RUNNING"))
                return refuse(c, own_headers, 409, "session-not-running", "the app's session is not RUNNING", NULL);
        *t = (struct app_target){ .port = g->port };
        snprintf(t->s.session, sizeof(t->s.session), "%s", g->session);
        if (session_main_kernel(c->m, &t->s, &err) < 0) {
                if (err->code != ENOENT)
                        return refuse(c, own_headers, 0, NULL, NULL, err);
                tess_error_free(err);
                return refuse(c, own_headers, 409, "session-not-running", "the app's session has no reachable kernel",
                              NULL);
        }
        return true;
}
