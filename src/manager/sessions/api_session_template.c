/* api_session_template.c - Backend.AI's session templates
 * (session_template.h says what one holds):
 *
 *   POST   /template/session          {payload, group?, domain?, owner_access_key?}
 *                                     one template: {id, user}; several: [{id, user}]
 *   GET    /template/session[?all=1]  the caller's templates; with all, every one
 *                                     the caller may see (admins: their domain's)
 *   GET    /template/session/{id}     {template, name, user_uuid, group_id, domain_name}
 *   PUT    /template/session/{id}     {payload}: its new content (one template)
 *   DELETE /template/session/{id}
 *   POST   /session/_/create-from-template  {template_id, ...POST /session's fields}
 *
 * A template belongs to a user (the caller, or owner_access_key's for
 * admins) and a project of the user's domain (group, default "default"),
 * and is seen and changed under the rule of every owned object (authz.h):
 * others get 404.  Creating from a template makes a POST /session request
 * of the template (session_template_request) overlaid with what the
 * request gives, then creates it as POST /session does, for the caller:
 * whoever may read a template may start sessions from it as themselves.
 * GET answers JSON whatever format= asks (JSON text is YAML too). */
#include "common/compat.h"

#include "common/crypto.h"
#include "common/timeutil.h"
#include "manager/accounts/model.h"
#include "manager/api/api.h"
#include "manager/api/authz.h"
#include "manager/core/manager.h"
#include "manager/db/db.h"
#include "manager/sessions/api_session.h"
#include "manager/sessions/session_template.h"

static const char template_columns[] =
        "t.id, t.name, t.user_id, t.project_id, t.domain_name, t.template, t.created_at, u.email, u.role,"
        " p.name AS project_name";
static const char template_from[] = " FROM session_templates t LEFT JOIN users u ON u.id = t.user_id"
                                    " LEFT JOIN projects p ON p.id = t.project_id";

/* ---- who and where ---- */

/* The owner (the caller, or owner_access_key's) and the project named by
 * group in the owner's domain. */
static int template_owner(struct api_ctx *c, struct principal *owner, char *project_id, size_t len,
                          struct tess_error **err)
{
        const char *group = "default", *domain = NULL;
        int r;

        if ((r = authz_owner_keypair(c, api_owner_access_key(c), AUTHZ_WRITE, owner, err)) < 0 ||
            (r = api_get_string(c->body, NAMES("group", "groupName", "group_name"), 64, &group, err)) < 0 ||
            (r = api_get_string(c->body, NAMES("domain", "domainName", "domain_name"), 64, &domain, err)) < 0)
                return r;
        if (!group)
                group = "default";
        if (domain && !streq(domain, owner->domain))
                return tess_err(err, EINVAL, "domain '%s' is not the owner's domain", domain);
        char id[UUID_STR_LEN];
        r = model_active_project_id(c->m, owner->domain, group, id, err);
        if (r < 0)
                return r;
        if (r == 0)
                return tess_err(err, EINVAL, "project '%s' not found in domain '%s'", group, owner->domain);
        snprintf(project_id, len, "%s", id);
        return 0;
}

/* The active template of id c->param[0] (or id), if the caller may have
 * access to it; ENOENT otherwise. */
static int find_template(struct api_ctx *c, const char *id, enum authz_access access, struct db_rows **ret,
                         struct tess_error **err)
{
        _cleanup_free_ char *sql =
                xasprintf("SELECT %s%s WHERE t.id = ? AND t.is_active = 1", template_columns, template_from);
        int r;

        *ret = NULL;
        if (!id || !uuid_valid(id))
                return tess_err(err, ENOENT, "session template '%s' not found", id ? id : "");
        r = DBQ(c->m->db, sql, ret, err, DB_TEXT(id));
        if (r < 0)
                return r;
        if ((*ret)->nrows == 1) {
                struct authz_owner o = { db_getn(*ret, 0, "user_id"), db_getn(*ret, 0, "domain_name"),
                                         db_getn(*ret, 0, "role") };
                r = authz_check(c, &o, access, err);
                if (r == 0)
                        return 0;
                if (r != -ENOENT) {
                        *ret = db_rows_free(*ret);
                        return r;
                }
                *err = tess_error_free(*err);
        }
        *ret = db_rows_free(*ret);
        return tess_err(err, ENOENT, "session template '%s' not found", id);
}

/* ---- create, change, remove ---- */

static const char *payload_of(struct api_ctx *c, struct tess_error **err)
{
        const char *payload = NULL;

        if (!c->body)
                return tess_err(err, EINVAL, "a JSON body {payload} is required"), NULL;
        if (api_get_string(c->body, NAMES("payload"), SESSION_TEMPLATE_PAYLOAD_MAX, &payload, err) < 0)
                return NULL;
        if (!payload)
                return tess_err(err, EINVAL, "'payload': the template (YAML or JSON text) is required"), NULL;
        return payload;
}

void api_session_template_create(struct api_ctx *c)
{
        struct tess_error *err = NULL;
        struct principal owner;
        char project[64];
        json_t *list = NULL, *e;
        bool single;
        size_t i;

        const char *payload = payload_of(c, &err);
        if (!payload || session_templates_parse(payload, strlen(payload), &list, &single, &err) < 0 ||
            template_owner(c, &owner, project, sizeof(project), &err) < 0) {
                json_decref(list);
                return api_fail(c, err);
        }
        json_t *answer = json_array();
        int64_t now = now_usec();
        int r = db_begin(c->m->db, &err);
        json_array_foreach(list, i, e) {
                char id[UUID_STR_LEN];
                _cleanup_free_ char *text = NULL;
                if (r < 0)
                        break;
                uuid_generate_str(id);
                text = json_dumps(json_object_get(e, "template"), JSON_COMPACT);
                r = DBQ(c->m->db,
                        "INSERT INTO session_templates (id, name, user_id, project_id, domain_name, template,"
                        " created_at, modified_at, is_active) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1)",
                        NULL, &err, DB_TEXT(id), DB_TEXT(json_string_value(json_object_get(e, "name"))),
                        DB_TEXT(owner.user_id), DB_TEXT(project), DB_TEXT(owner.domain), DB_TEXT(text),
                        DB_INT(now + (int64_t)i), DB_INT(now)); /* listed in the payload's order */
                json_array_append_new(answer, json_pack("{s:s, s:s}", "id", id, "user", owner.user_id));
        }
        r = r < 0 ? (db_rollback(c->m->db), r) : db_commit(c->m->db, &err);
        json_decref(list);
        if (r < 0) {
                json_decref(answer);
                return api_fail(c, err);
        }
        api_audit_target(c, "session-template:%s", json_string_value(json_object_get(json_array_get(answer, 0), "id")));
        if (single) {
                json_t *one = json_incref(json_array_get(answer, 0));
                json_decref(answer);
                answer = one;
        }
        api_json(c, 200, answer);
}

void api_session_template_update(struct api_ctx *c)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        struct tess_error *err = NULL;
        json_t *list = NULL;
        bool single;

        if (find_template(c, c->param[0], AUTHZ_WRITE, &rows, &err) < 0)
                return api_fail(c, err);
        const char *payload = payload_of(c, &err);
        if (!payload || session_templates_parse(payload, strlen(payload), &list, &single, &err) < 0)
                return api_fail(c, err);
        if (json_array_size(list) != 1) {
                json_decref(list);
                return api_problem(c, 400, "invalid-api-params", "payload: one template replaces one template");
        }
        json_t *e = json_array_get(list, 0);
        _cleanup_free_ char *text = json_dumps(json_object_get(e, "template"), JSON_COMPACT);
        int r = DBQ(c->m->db, "UPDATE session_templates SET name = ?, template = ?, modified_at = ? WHERE id = ?",
                    NULL, &err, DB_TEXT(json_string_value(json_object_get(e, "name"))), DB_TEXT(text),
                    DB_INT(now_usec()), DB_TEXT(db_getn(rows, 0, "id")));
        json_decref(list);
        if (r < 0)
                return api_fail(c, err);
        api_audit_target(c, "session-template:%s", db_getn(rows, 0, "id"));
        api_json(c, 200, json_pack("{s:b}", "success", true));
}

void api_session_template_delete(struct api_ctx *c)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        struct tess_error *err = NULL;

        if (find_template(c, c->param[0], AUTHZ_WRITE, &rows, &err) < 0 ||
            DBQ(c->m->db, "UPDATE session_templates SET is_active = 0, modified_at = ? WHERE id = ?", NULL, &err,
                DB_INT(now_usec()), DB_TEXT(db_getn(rows, 0, "id"))) < 0)
                return api_fail(c, err);
        api_audit_target(c, "session-template:%s", db_getn(rows, 0, "id"));
        api_json(c, 200, json_pack("{s:b}", "success", true));
}

/* ---- reading ---- */

static json_t *template_json(const struct db_rows *rows, int i)
{
        json_t *t = json_loads(db_getn(rows, i, "template"), 0, NULL);
        return t ? t : json_object();
}

void api_session_template_get(struct api_ctx *c)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        struct tess_error *err = NULL;
        const char *format = api_param(c, "format");

        if (format && !streq(format, "json") && !streq(format, "yaml"))
                return api_problem(c, 400, "invalid-api-params", "format must be \"yaml\" or \"json\"");
        if (find_template(c, c->param[0], AUTHZ_READ, &rows, &err) < 0)
                return api_fail(c, err);
        api_json(c, 200,
                 json_pack("{s:o, s:s, s:s, s:s?, s:s}", "template", template_json(rows, 0), "name",
                           db_getn(rows, 0, "name"), "user_uuid", db_getn(rows, 0, "user_id"), "group_id",
                           db_getn(rows, 0, "project_id"), "domain_name", db_getn(rows, 0, "domain_name")));
}

#define LIST_MAX 1000

void api_session_template_list(struct api_ctx *c)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        struct tess_error *err = NULL;
        struct buf sql = BUF_INIT;
        struct db_arg args[AUTHZ_SCOPE_MAX_ARGS + 1];
        int nargs = 0;
        const char *all = api_param(c, "all");
        json_t *all_v = json_object_get(c->body, "all");
        bool every = json_is_true(all_v) || (all && (streq(all, "true") || streq(all, "1")));

        buf_printf(&sql, "SELECT %s%s WHERE t.is_active = 1", template_columns, template_from);
        if (every) {
                authz_scope_sql(&c->who, "t.user_id", "t.domain_name", "u.role", &sql, args, &nargs);
        } else {
                buf_puts(&sql, " AND t.user_id = ?");
                args[nargs++] = DB_TEXT(c->who.user_id);
        }
        buf_printf(&sql, " ORDER BY t.created_at, t.id LIMIT %d", LIST_MAX);
        int r = db_query(c->m->db, sql.data, args, nargs, &rows, &err);
        buf_release(&sql);
        if (r < 0)
                return api_fail(c, err);
        json_t *out = json_array();
        for (int i = 0; i < rows->nrows; i++) {
                char created[64];
                time_format_iso(db_get_int(rows, i, "created_at"), created, sizeof(created));
                json_array_append_new(
                        out,
                        json_pack("{s:s, s:s, s:s, s:b, s:s, s:s?, s:s?, s:s?, s:s, s:s, s:o}", "name",
                                  db_getn(rows, i, "name"), "id", db_getn(rows, i, "id"), "created_at", created,
                                  "is_owner", streq(db_getn(rows, i, "user_id"), c->who.user_id), "user",
                                  db_getn(rows, i, "user_id"), "group", db_getn(rows, i, "project_id"),
                                  "user_email", db_getn(rows, i, "email"), "group_name",
                                  db_getn(rows, i, "project_name"), "domain_name", db_getn(rows, i, "domain_name"),
                                  "type", "TASK", "template", template_json(rows, i)));
        }
        api_json(c, 200, out);
}

/* ---- sessions from templates ---- */

void api_session_create_from_template(struct api_ctx *c)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        struct tess_error *err = NULL;
        const char *id = NULL;

        if (!c->body)
                return api_problem(c, 400, "invalid-api-params", "a JSON body {template_id, ...} is required");
        if (api_get_string(c->body, NAMES("template_id", "templateId"), 64, &id, &err) < 0)
                return api_fail(c, err);
        if (!id)
                return api_problem(c, 400, "invalid-api-params", "'template_id' is required");
        if (find_template(c, id, AUTHZ_READ, &rows, &err) < 0)
                return api_fail(c, err);
        json_t *t = template_json(rows, 0);
        json_t *body = session_template_request(t);
        json_decref(t);
        session_template_overlay(body, c->body);
        json_decref(c->body);
        c->body = body; /* the request POST /session would have been */
        api_session_create(c);
}
