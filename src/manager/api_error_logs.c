/* api_error_logs.c - Backend.AI's error logs: errors that clients (the web
 * UI, programs on the SDK) report to the manager, kept with the reporter's
 * user and domain, for administrators to look at.
 *
 *   POST /logs/error               {severity, source, message, context_lang,
 *                                   context_env, request_url?, request_status?,
 *                                   traceback?} -> {success, log_id}
 *   GET  /logs/error?mark_read=&page_size=&page_no=
 *                                  -> {logs: [...], count}, newest first
 *   POST /logs/error/{id}/clear    -> {success}
 *
 * Who sees what, Backend.AI's rule on Tessera's scopes (api/authz.h): a
 * superadmin every log; an admin, and a monitor to read, those of its
 * domain's users but a superadmin's; a user its own, but those it has
 * cleared.  Clearing hides a log from its reporter; administrators still
 * see it, with is_cleared.  mark_read marks the logs of the page read
 * (the answer shows them as they were); a monitor's marks only its own.
 *
 * Each field is checked (api_error_logs.h has the limits), an unknown one
 * refused, as Backend.AI does.  A user keeps its ERROR_LOGS_PER_USER
 * newest logs: a client reporting in a loop fills no disk. */
#include "common/compat.h"

#include "common/buf.h"
#include "common/crypto.h"
#include "common/timeutil.h"
#include "manager/api/authz.h"
#include "manager/api_error_logs.h"
#include "manager/core/manager.h"
#include "manager/db/db.h"
#include "manager/http/http.h"

static const char *const severities[] = { "critical", "error", "warning", NULL };
static const char *const log_fields[] = { "severity",       "source",      "message",
                                          "context_lang",   "context_env", "request_url",
                                          "request_status", "traceback",   NULL };

struct error_log {
        const char *severity, *source, *message, *context_lang, *request_url, *traceback;
        char *context_env; /* compact JSON text */
        bool has_status;
        int64_t request_status;
};

/* A text field: a string of at most max bytes; a required one present and
 * not empty (Backend.AI's), an optional one may be absent or null. */
static int get_text(const json_t *body, const char *name, size_t max, bool required, const char **ret,
                    struct tess_error **err)
{
        const char *const names[] = { name, NULL };

        *ret = NULL;
        if (api_get_string(body, names, max, ret, err) < 0)
                return -EINVAL;
        if (required && !*ret)
                return tess_err(err, EINVAL, "'%s' is required", name);
        if (required && !**ret)
                return tess_err(err, EINVAL, "'%s' must not be empty", name);
        return 0;
}

static int get_severity(const json_t *body, const char **ret, struct tess_error **err)
{
        const char *s;

        if (get_text(body, "severity", 16, true, &s, err) < 0)
                return -EINVAL;
        for (const char *const *v = severities; *v; v++) {
                if (!strcasecmp(s, *v)) {
                        *ret = *v;
                        return 0;
                }
        }
        return tess_err(err, EINVAL, "'severity' must be critical, error or warning, not '%.16s'", s);
}

/* context_env: JSON text in a string (Backend.AI's JSONString), or the
 * object or array itself; kept compact. */
static int get_context_env(const json_t *body, char **ret, struct tess_error **err)
{
        json_t *v = api_field(body, NAMES("context_env"));
        json_t *parsed = NULL;

        if (!v)
                return tess_err(err, EINVAL, "'context_env' is required");
        if (json_is_string(v)) {
                if (json_string_length(v) > ERROR_LOG_ENV_MAX)
                        return tess_err(err, EINVAL, "'context_env' is longer than %d bytes", ERROR_LOG_ENV_MAX);
                parsed = json_loadb(json_string_value(v), json_string_length(v), JSON_DECODE_ANY, NULL);
                if (!parsed)
                        return tess_err(err, EINVAL, "'context_env' must hold JSON text");
        } else if (json_is_object(v) || json_is_array(v)) {
                parsed = json_incref(v);
        } else {
                return tess_err(err, EINVAL, "'context_env' must be JSON text (a string) or an object");
        }
        *ret = json_dumps(parsed, JSON_COMPACT | JSON_ENCODE_ANY);
        json_decref(parsed);
        if (!*ret)
                return tess_err(err, EINVAL, "'context_env' cannot be encoded");
        if (strlen(*ret) > ERROR_LOG_ENV_MAX) {
                free(*ret);
                *ret = NULL;
                return tess_err(err, EINVAL, "'context_env' is longer than %d bytes", ERROR_LOG_ENV_MAX);
        }
        return 0;
}

static int unknown_field(const json_t *body, struct tess_error **err)
{
        const char *key;
        json_t *v;

        json_object_foreach((json_t *)body, key, v) {
                bool known = false;
                for (const char *const *f = log_fields; *f && !known; f++)
                        known = streq(key, *f);
                if (!known)
                        return tess_err(err, EINVAL,
                                        "'%.64s' is not a field of an error log (severity, source, message, "
                                        "context_lang, context_env, request_url, request_status, traceback)",
                                        key);
        }
        return 0;
}

static int parse_log(const json_t *body, struct error_log *l, struct tess_error **err)
{
        *l = (struct error_log){ 0 };
        if (!json_is_object(body))
                return tess_err(err, EINVAL, "the body must be a JSON object");
        if (unknown_field(body, err) < 0 || get_severity(body, &l->severity, err) < 0 ||
            get_text(body, "source", ERROR_LOG_SOURCE_MAX, true, &l->source, err) < 0 ||
            get_text(body, "message", ERROR_LOG_MESSAGE_MAX, true, &l->message, err) < 0 ||
            get_text(body, "context_lang", ERROR_LOG_LANG_MAX, true, &l->context_lang, err) < 0 ||
            get_text(body, "request_url", ERROR_LOG_URL_MAX, false, &l->request_url, err) < 0 ||
            get_text(body, "traceback", ERROR_LOG_TRACEBACK_MAX, false, &l->traceback, err) < 0)
                return -EINVAL;
        l->request_status = -1;
        if (api_get_int(body, NAMES("request_status"), 0, 999, &l->request_status, err) < 0)
                return -EINVAL;
        l->has_status = l->request_status >= 0;
        return get_context_env(body, &l->context_env, err);
}

/* Keep the user's ERROR_LOGS_PER_USER newest logs. */
static int prune(struct manager *m, const char *user_id, struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        int r = DBQ(m->db,
                    "SELECT created_at FROM error_logs WHERE user_id = ? ORDER BY created_at DESC LIMIT 1 OFFSET ?",
                    &rows, err, DB_TEXT(user_id), DB_INT(ERROR_LOGS_PER_USER));

        if (r < 0 || rows->nrows == 0)
                return r < 0 ? r : 0;
        r = DBQ(m->db, "DELETE FROM error_logs WHERE user_id = ? AND created_at <= ?", NULL, err, DB_TEXT(user_id),
                DB_INT(db_get_int(rows, 0, "created_at")));
        return r < 0 ? r : 0;
}

void api_error_log_append(struct api_ctx *c)
{
        struct tess_error *err = NULL;
        struct error_log l;
        char id[UUID_STR_LEN];

        if (parse_log(c->body, &l, &err) < 0)
                return api_fail(c, err);
        uuid_generate_str(id);
        int r = DBQ(c->m->db,
                    "INSERT INTO error_logs(id, created_at, severity, source, user_id, domain_name, message,"
                    " context_lang, context_env, request_url, request_status, traceback)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    NULL, &err, DB_TEXT(id), DB_INT(now_usec()), DB_TEXT(l.severity), DB_TEXT(l.source),
                    DB_TEXT(c->who.user_id), DB_TEXT(c->who.domain), DB_TEXT(l.message), DB_TEXT(l.context_lang),
                    DB_TEXT(l.context_env), DB_TEXT(l.request_url),
                    l.has_status ? DB_INT(l.request_status) : DB_NULLARG, DB_TEXT(l.traceback));
        free(l.context_env);
        if (r < 0 || prune(c->m, c->who.user_id, &err) < 0)
                return api_fail(c, err);
        api_audit_target(c, "error-log:%s", id);
        api_json(c, 200, json_pack("{s:b, s:s}", "success", true, "log_id", id));
}

/* ---- the list ---- */

struct page {
        bool mark_read;
        int64_t size, no;
};

/* A parameter of the query (or of a JSON body, as some clients send GET
 * parameters), as the JSON value api_get_* read. */
static void copy_param(struct api_ctx *c, json_t *into, const char *name)
{
        const char *q = http_query(c->req, name);
        json_t *v = json_object_get(c->body, name);

        if (q)
                json_object_set_new(into, name, json_string(q));
        else if (v)
                json_object_set(into, name, v);
}

static int parse_page(struct api_ctx *c, struct page *p, struct tess_error **err)
{
        json_t *params = json_object();
        int r;

        *p = (struct page){ .mark_read = false, .size = 20, .no = 1 };
        copy_param(c, params, "mark_read");
        copy_param(c, params, "page_size");
        copy_param(c, params, "page_no");
        r = api_get_bool(params, NAMES("mark_read"), &p->mark_read, err);
        if (r >= 0)
                r = api_get_int(params, NAMES("page_size"), 1, ERROR_LOG_PAGE_MAX, &p->size, err);
        if (r >= 0)
                r = api_get_int(params, NAMES("page_no"), 1, 1000000000, &p->no, err);
        json_decref(params);
        return r;
}

/* The logs the caller sees: FROM and WHERE, with their arguments. */
static void scope_where(const struct principal *who, struct buf *sql, struct db_arg *args, int *nargs)
{
        buf_puts(sql, " FROM error_logs l JOIN users u ON u.id = l.user_id WHERE 1 = 1");
        authz_scope_sql(who, "l.user_id", "l.domain_name", "u.role", sql, args, nargs);
        if (who->role == ROLE_USER)
                buf_puts(sql, " AND l.is_cleared = 0");
}

static int count_logs(struct api_ctx *c, int64_t *ret, struct tess_error **err)
{
        _cleanup_(buf_release) struct buf sql = BUF_INIT;
        _cleanup_rows_ struct db_rows *rows = NULL;
        struct db_arg args[AUTHZ_SCOPE_MAX_ARGS];
        int nargs = 0;

        buf_puts(&sql, "SELECT COUNT(*) AS n");
        scope_where(&c->who, &sql, args, &nargs);
        if (db_query(c->m->db, sql.data, args, nargs, &rows, err) < 0)
                return -1;
        *ret = db_get_int(rows, 0, "n");
        return 0;
}

static json_t *text_or_null(const struct db_rows *rows, int i, const char *col)
{
        const char *v = db_getn(rows, i, col);
        return v ? json_string(v) : json_null();
}

/* A log as Backend.AI answers it (created_at in seconds), with is_cleared. */
static json_t *log_json(const struct db_rows *rows, int i)
{
        json_t *env = json_loads(db_getn(rows, i, "context_env"), JSON_DECODE_ANY, NULL);
        json_t *l = json_object();

        json_object_set_new(l, "log_id", json_string(db_getn(rows, i, "id")));
        json_object_set_new(l, "created_at", json_real((double)db_get_int(rows, i, "created_at") / USEC_PER_SEC));
        json_object_set_new(l, "severity", json_string(db_getn(rows, i, "severity")));
        json_object_set_new(l, "source", json_string(db_getn(rows, i, "source")));
        json_object_set_new(l, "user", json_string(db_getn(rows, i, "user_id")));
        json_object_set_new(l, "is_read", json_boolean(db_get_int(rows, i, "is_read")));
        json_object_set_new(l, "is_cleared", json_boolean(db_get_int(rows, i, "is_cleared")));
        json_object_set_new(l, "message", json_string(db_getn(rows, i, "message")));
        json_object_set_new(l, "context_lang", json_string(db_getn(rows, i, "context_lang")));
        json_object_set_new(l, "context_env", env ? env : json_null());
        json_object_set_new(l, "request_url", text_or_null(rows, i, "request_url"));
        json_object_set_new(l, "request_status",
                            db_getn(rows, i, "request_status") ? json_integer(db_get_int(rows, i, "request_status"))
                                                               : json_null());
        json_object_set_new(l, "traceback", text_or_null(rows, i, "traceback"));
        return l;
}

/* Mark the page's logs read: those the caller may change (a monitor's own). */
static int mark_read(struct api_ctx *c, const struct db_rows *rows, struct tess_error **err)
{
        _cleanup_(buf_release) struct buf sql = BUF_INIT;
        struct db_arg args[ERROR_LOG_PAGE_MAX + 1];
        int nargs = 0;

        if (rows->nrows == 0)
                return 0;
        buf_puts(&sql, "UPDATE error_logs SET is_read = 1 WHERE id IN (");
        for (int i = 0; i < rows->nrows && i < ERROR_LOG_PAGE_MAX; i++) {
                buf_puts(&sql, i ? ", ?" : "?");
                args[nargs++] = DB_TEXT(db_getn(rows, i, "id"));
        }
        buf_puts(&sql, ")");
        if (c->who.role == ROLE_MONITOR) {
                buf_puts(&sql, " AND user_id = ?");
                args[nargs++] = DB_TEXT(c->who.user_id);
        }
        return db_query(c->m->db, sql.data, args, nargs, NULL, err) < 0 ? -1 : 0;
}

void api_error_log_list(struct api_ctx *c)
{
        _cleanup_(buf_release) struct buf sql = BUF_INIT;
        _cleanup_rows_ struct db_rows *rows = NULL;
        struct tess_error *err = NULL;
        struct db_arg args[AUTHZ_SCOPE_MAX_ARGS + 2];
        int nargs = 0;
        struct page p;
        int64_t count;

        if (parse_page(c, &p, &err) < 0 || count_logs(c, &count, &err) < 0)
                return api_fail(c, err);
        buf_puts(&sql, "SELECT l.id, l.created_at, l.severity, l.source, l.user_id, l.is_read, l.is_cleared,"
                       " l.message, l.context_lang, l.context_env, l.request_url, l.request_status, l.traceback");
        scope_where(&c->who, &sql, args, &nargs);
        buf_puts(&sql, " ORDER BY l.created_at DESC, l.id DESC LIMIT ? OFFSET ?");
        args[nargs++] = DB_INT(p.size);
        args[nargs++] = DB_INT((p.no - 1) * p.size);
        if (db_query(c->m->db, sql.data, args, nargs, &rows, &err) < 0)
                return api_fail(c, err);
        json_t *logs = json_array();
        for (int i = 0; i < rows->nrows; i++)
                json_array_append_new(logs, log_json(rows, i));
        if (p.mark_read && mark_read(c, rows, &err) < 0) {
                json_decref(logs);
                return api_fail(c, err);
        }
        api_json(c, 200, json_pack("{s:o, s:I}", "logs", logs, "count", (json_int_t)count));
}

/* ---- clear ---- */

void api_error_log_clear(struct api_ctx *c)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        struct tess_error *err = NULL;
        const char *id = c->param[0];

        if (!uuid_valid(id))
                return api_problem(c, 400, "invalid-api-params", "log id '%.40s' is not a UUID", id);
        if (DBQ(c->m->db,
                "SELECT l.user_id, l.domain_name, u.role FROM error_logs l JOIN users u ON u.id = l.user_id"
                " WHERE l.id = ?",
                &rows, &err, DB_TEXT(id)) < 0)
                return api_fail(c, err);
        if (rows->nrows == 0)
                return api_problem(c, 404, "object-not-found", "error log '%s' not found", id);
        struct authz_owner o = { db_get(rows, 0, 0), db_get(rows, 0, 1), db_get(rows, 0, 2) };
        if (authz_check(c, &o, AUTHZ_WRITE, &err) < 0) {
                if (err->code != ENOENT)
                        return api_fail(c, err);
                tess_error_free(err);
                return api_problem(c, 404, "object-not-found", "error log '%s' not found", id);
        }
        if (DBQ(c->m->db, "UPDATE error_logs SET is_cleared = 1 WHERE id = ?", NULL, &err, DB_TEXT(id)) < 0)
                return api_fail(c, err);
        api_audit_target(c, "error-log:%s", id);
        api_json(c, 200, json_pack("{s:b}", "success", true));
}
