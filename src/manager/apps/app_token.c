/* app_token.c - see app_token.h. */
#include "common/compat.h"

#include "common/crypto.h"
#include "common/timeutil.h"
#include "manager/apps/app_token.h"
#include "manager/core/manager.h"
#include "manager/db/db.h"

static const char *const kind_names[] = { [APP_TOKEN_OPEN] = "open",
                                          [APP_TOKEN_CODE] = "code",
                                          [APP_TOKEN_COOKIE] = "cookie" };

int app_token_random(char out[APP_TOKEN_LEN + 1], struct tess_error **err)
{
        unsigned char raw[APP_TOKEN_LEN / 2];
        int r = random_bytes(raw, sizeof(raw), err);

        if (r < 0)
                return r;
        for (size_t i = 0; i < sizeof(raw); i++)
                snprintf(out + 2 * i, 3, "%02x", raw[i]);
        explicit_bzero(raw, sizeof(raw));
        return 0;
}

bool app_token_well_formed(const char *token)
{
        if (!token || strlen(token) != APP_TOKEN_LEN)
                return false;
        for (const char *p = token; *p; p++)
                if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
                        return false;
        return true;
}

/* The row's name: SHA-256 of the token, or of "token:bound_to". */
static void row_name(const char *token, const char *bound_to, char hash[65])
{
        if (!bound_to)
                return sha256_hex(token, APP_TOKEN_LEN, hash);
        _cleanup_free_ char *both = xasprintf("%s:%s", token, bound_to);
        sha256_hex(both, strlen(both), hash);
        explicit_bzero(both, strlen(both));
}

int app_token_issue(struct manager *m, enum app_token_kind kind, const struct app_grant *g, int64_t ttl_usec,
                    const char *bound_to, char ret_token[APP_TOKEN_LEN + 1], struct tess_error **err)
{
        char token[APP_TOKEN_LEN + 1], hash[65];
        int64_t now = now_usec();
        int r;

        r = app_token_random(token, err);
        if (r < 0)
                return r;
        row_name(token, bound_to, hash);
        r = DBQ(m->db, "DELETE FROM app_tokens WHERE expires_at < ?", NULL, err, DB_INT(now));
        if (r >= 0)
                r = DBQ(m->db,
                        "INSERT INTO app_tokens(token_hash, kind, session_id, app, port, user_id, access_key,"
                        " created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        NULL, err, DB_TEXT(hash), DB_TEXT(kind_names[kind]), DB_TEXT(g->session), DB_TEXT(g->app),
                        DB_INT(g->port), DB_TEXT(g->user), DB_TEXT(g->access_key), DB_INT(now),
                        DB_INT(now + ttl_usec));
        if (r < 0)
                return tess_err_wrap(err, "recording an app token");
        memcpy(ret_token, token, sizeof(token));
        explicit_bzero(token, sizeof(token));
        return 0;
}

static const char *kind_title(enum app_token_kind kind)
{
        return kind == APP_TOKEN_OPEN ? "link" : kind == APP_TOKEN_CODE ? "code" : "cookie";
}

int app_token_check(struct manager *m, enum app_token_kind kind, const char *token, const char *bound_to,
                    struct app_grant *ret, struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        char hash[65];

        if (!app_token_well_formed(token))
                return tess_err(err, EACCES, "not an app %s", kind_title(kind));
        row_name(token, bound_to, hash);
        int r = DBQ(m->db,
                    "SELECT session_id, app, port, user_id, access_key FROM app_tokens"
                    " WHERE token_hash = ? AND kind = ? AND expires_at > ?",
                    &rows, err, DB_TEXT(hash), DB_TEXT(kind_names[kind]), DB_INT(now_usec()));
        if (r < 0)
                return r;
        if (rows->nrows != 1)
                return tess_err(err, EACCES, "the app %s is unknown or has expired", kind_title(kind));
        if (kind == APP_TOKEN_CODE) {
                /* used up: of two requests with it (two managers), one wins */
                _cleanup_rows_ struct db_rows *del = NULL;
                r = DBQ(m->db, "DELETE FROM app_tokens WHERE token_hash = ? AND kind = 'code'", &del, err,
                        DB_TEXT(hash));
                if (r < 0)
                        return r;
                if (del->changes != 1)
                        return tess_err(err, EACCES, "the app code was used already");
        }
        *ret = (struct app_grant){ .port = (int)db_get_int(rows, 0, "port") };
        snprintf(ret->session, sizeof(ret->session), "%s", db_getn(rows, 0, "session_id"));
        snprintf(ret->app, sizeof(ret->app), "%s", db_getn(rows, 0, "app"));
        snprintf(ret->user, sizeof(ret->user), "%s", db_getn(rows, 0, "user_id"));
        snprintf(ret->access_key, sizeof(ret->access_key), "%s", db_getn(rows, 0, "access_key"));
        return 0;
}

void app_token_row(const char *token, char ret_row[65])
{
        row_name(token, NULL, ret_row);
}

int app_cookie_alive(struct manager *m, const char *row, struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        int r = DBQ(m->db, "SELECT 1 FROM app_tokens WHERE token_hash = ? AND kind = 'cookie' AND expires_at > ?",
                    &rows, err, DB_TEXT(row), DB_INT(now_usec()));
        return r < 0 ? r : rows->nrows > 0;
}

void app_prefix(const char *session, const char *app, char *out, size_t len)
{
        snprintf(out, len, "/apps/%s/%s/", session, app);
}
