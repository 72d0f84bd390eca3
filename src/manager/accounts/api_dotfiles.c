/* api_dotfiles.c - Backend.AI's user dotfiles, as its SDK's Dotfile class
 * calls them (dotfiles.h says what they are and their limits):
 *
 *   POST   /user-config/dotfiles  {path, data, permission, owner_access_key?} -> {}
 *   GET    /user-config/dotfiles  ?owner_access_key=        -> [{path, permission, data}]
 *   GET    /user-config/dotfiles  ?path=&owner_access_key=  -> {path, permission, data}
 *   PATCH  /user-config/dotfiles  {path, data?, permission?, owner_access_key?} -> {}
 *   DELETE /user-config/dotfiles  ?path=&owner_access_key=  -> {success: true}
 *
 * The caller's own dotfiles; an admin names another user's by one of its
 * keypairs (owner_access_key), under the rule of api/authz.h.  Paths are
 * kept as dotfile_path() makes them (".vimrc" for "/home/work/.vimrc"),
 * and a dotfile may not be the directory of another ("a" and "a/b").
 * Errors: 400 for a bad field or a limit, 404 for a path not there, 409
 * for one taken. */
#include "common/compat.h"

#include "common/timeutil.h"
#include "manager/accounts/dotfiles.h"
#include "manager/api/api.h"
#include "manager/api/authz.h"
#include "manager/core/manager.h"
#include "manager/db/db.h"
#include "manager/http/http.h"

static const char *const body_fields[] = { "path", "data", "permission", "owner_access_key", NULL };

struct dotfile_req {
        char *path; /* dotfile_path()'s */
        const char *data, *permission;
};

static void req_release(struct dotfile_req *q)
{
        free(q->path);
        q->path = NULL;
}

/* The user the request is for: the caller, or owner_access_key's. */
static int owner_of(struct api_ctx *c, struct principal *ret, struct tess_error **err)
{
        return authz_owner_keypair(c, api_param(c, "owner_access_key"), authz_access_of(c), ret, err);
}

static int unknown_field(const json_t *body, struct tess_error **err)
{
        const char *key;
        json_t *v;

        json_object_foreach((json_t *)body, key, v) {
                bool known = false;
                for (const char *const *f = body_fields; *f && !known; f++)
                        known = streq(key, *f);
                if (!known)
                        return tess_err(err, EINVAL,
                                        "'%.64s' is not a field of a dotfile (path, data, permission, "
                                        "owner_access_key)",
                                        key);
        }
        return 0;
}

/* A path given (query or body), as it is kept. */
static int get_path(struct api_ctx *c, char **ret, struct tess_error **err)
{
        const char *path = http_query(c->req, "path");

        if (!path && api_get_string(c->body, NAMES("path"), 4096, &path, err) < 0)
                return -EINVAL;
        if (!path)
                return tess_err(err, EINVAL, "'path' is required");
        return dotfile_path(path, ret, err);
}

/* POST's and PATCH's body: every field checked; data and permission
 * required when `create`, else at least one of them. */
static int parse_body(struct api_ctx *c, bool create, struct dotfile_req *q, struct tess_error **err)
{
        const char *owner = NULL;

        *q = (struct dotfile_req){ 0 };
        if (!json_is_object(c->body))
                return tess_err(err, EINVAL, "the body must be a JSON object");
        if (unknown_field(c->body, err) < 0 ||
            api_get_string(c->body, NAMES("owner_access_key"), 64, &owner, err) < 0 ||
            api_get_string(c->body, NAMES("data"), DOTFILES_DATA_MAX, &q->data, err) < 0 ||
            api_get_string(c->body, NAMES("permission"), 8, &q->permission, err) < 0)
                return -EINVAL;
        if (create && !q->data)
                return tess_err(err, EINVAL, "'data' is required");
        if (create && !q->permission)
                return tess_err(err, EINVAL, "'permission' is required (three octal digits, e.g. \"644\")");
        if (!create && !q->data && !q->permission)
                return tess_err(err, EINVAL, "nothing to change: give 'data', 'permission' or both");
        if (q->permission && !dotfile_permission_valid(q->permission))
                return tess_err(err, EINVAL, "'permission' must be three octal digits (e.g. \"644\"), not '%.8s'",
                                q->permission);
        return get_path(c, &q->path, err);
}

/* The user's dotfiles' paths and sizes, for the checks below. */
static int load(struct api_ctx *c, const char *user_id, struct db_rows **ret, struct tess_error **err)
{
        return DBQ(c->m->db, "SELECT path, data FROM user_dotfiles WHERE user_id = ?", ret, err, DB_TEXT(user_id));
}

/* A new dotfile at path: not one there, nor one that is its directory or
 * has it as a directory, within the count. */
static int check_new_path(const struct db_rows *rows, const char *path, struct tess_error **err)
{
        size_t n = strlen(path);

        for (int i = 0; i < rows->nrows; i++) {
                const char *p = db_get(rows, i, 0);
                size_t pn = strlen(p);
                if (streq(p, path))
                        return tess_err(err, EEXIST, "dotfile '%s' exists (PATCH changes it)", path);
                if (pn < n && strncmp(path, p, pn) == 0 && path[pn] == '/')
                        return tess_err(err, EEXIST, "dotfile '%s' is a file: it cannot be a directory of '%s'", p,
                                        path);
                if (n < pn && strncmp(p, path, n) == 0 && p[n] == '/')
                        return tess_err(err, EEXIST, "'%s' is the directory of dotfile '%s': it cannot be a file", path,
                                        p);
        }
        if (rows->nrows >= DOTFILES_MAX)
                return tess_err(err, EINVAL, "a user has at most %d dotfiles", DOTFILES_MAX);
        return 0;
}

/* The dotfiles' text with `path`'s replaced by `data` within the limit. */
static int check_total(const struct db_rows *rows, const char *path, const char *data, struct tess_error **err)
{
        size_t total = strlen(data);

        for (int i = 0; i < rows->nrows; i++)
                if (!streq(db_get(rows, i, 0), path))
                        total += strlen(db_get(rows, i, 1));
        if (total > DOTFILES_DATA_MAX)
                return tess_err(err, EINVAL, "the dotfiles would hold %zu bytes, more than the %d a user may keep",
                                total, DOTFILES_DATA_MAX);
        return 0;
}

static int find_row(const struct db_rows *rows, const char *path)
{
        for (int i = 0; i < rows->nrows; i++)
                if (streq(db_get(rows, i, 0), path))
                        return i;
        return -1;
}

static int create(struct api_ctx *c, const struct principal *owner, const struct dotfile_req *q,
                  struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        int64_t now = now_usec();

        if (load(c, owner->user_id, &rows, err) < 0 || check_new_path(rows, q->path, err) < 0 ||
            check_total(rows, q->path, q->data, err) < 0)
                return -1;
        return DBQ(c->m->db,
                   "INSERT INTO user_dotfiles(user_id, path, permission, data, created_at, modified_at)"
                   " VALUES (?, ?, ?, ?, ?, ?)",
                   NULL, err, DB_TEXT(owner->user_id), DB_TEXT(q->path), DB_TEXT(q->permission), DB_TEXT(q->data),
                   DB_INT(now), DB_INT(now));
}

void api_dotfile_create(struct api_ctx *c)
{
        struct tess_error *err = NULL;
        struct principal owner;
        struct dotfile_req q;

        if (parse_body(c, true, &q, &err) < 0 || owner_of(c, &owner, &err) < 0 || create(c, &owner, &q, &err) < 0) {
                req_release(&q);
                return api_fail(c, err);
        }
        api_audit_target(c, "dotfile:%s:%.200s", owner.user_id, q.path);
        req_release(&q);
        api_json(c, 200, json_object());
}

static int update(struct api_ctx *c, const struct principal *owner, const struct dotfile_req *q,
                  struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        int i;

        if (load(c, owner->user_id, &rows, err) < 0)
                return -1;
        if ((i = find_row(rows, q->path)) < 0)
                return tess_err(err, ENOENT, "dotfile '%s' not found", q->path);
        const char *data = q->data ? q->data : db_get(rows, i, 1);
        if (check_total(rows, q->path, data, err) < 0)
                return -1;
        return DBQ(c->m->db,
                   "UPDATE user_dotfiles SET data = ?, permission = COALESCE(?, permission), modified_at = ?"
                   " WHERE user_id = ? AND path = ?",
                   NULL, err, DB_TEXT(data), DB_TEXT(q->permission), DB_INT(now_usec()), DB_TEXT(owner->user_id),
                   DB_TEXT(q->path));
}

void api_dotfile_update(struct api_ctx *c)
{
        struct tess_error *err = NULL;
        struct principal owner;
        struct dotfile_req q;

        if (parse_body(c, false, &q, &err) < 0 || owner_of(c, &owner, &err) < 0 || update(c, &owner, &q, &err) < 0) {
                req_release(&q);
                return api_fail(c, err);
        }
        api_audit_target(c, "dotfile:%s:%.200s", owner.user_id, q.path);
        req_release(&q);
        api_json(c, 200, json_object());
}

static void get_one(struct api_ctx *c, const struct principal *owner, const char *path)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        struct tess_error *err = NULL;

        if (DBQ(c->m->db, "SELECT permission, data FROM user_dotfiles WHERE user_id = ? AND path = ?", &rows, &err,
                DB_TEXT(owner->user_id), DB_TEXT(path)) < 0)
                return api_fail(c, err);
        if (rows->nrows == 0)
                return api_problem(c, 404, "object-not-found", "dotfile '%s' not found", path);
        api_json(c, 200,
                 json_pack("{s:s, s:s, s:s}", "path", path, "permission", db_get(rows, 0, 0), "data",
                           db_get(rows, 0, 1)));
}

void api_dotfile_get(struct api_ctx *c)
{
        struct tess_error *err = NULL;
        _cleanup_free_ char *path = NULL;
        struct principal owner;
        json_t *list;

        if (owner_of(c, &owner, &err) < 0)
                return api_fail(c, err);
        if (http_query(c->req, "path") || api_field(c->body, NAMES("path"))) {
                if (get_path(c, &path, &err) < 0)
                        return api_fail(c, err);
                return get_one(c, &owner, path);
        }
        if (dotfiles_list(c->m, owner.user_id, &list, &err) < 0)
                return api_fail(c, err);
        api_json(c, 200, list);
}

void api_dotfile_delete(struct api_ctx *c)
{
        struct tess_error *err = NULL;
        _cleanup_free_ char *path = NULL;
        struct principal owner;
        int r;

        if (get_path(c, &path, &err) < 0 || owner_of(c, &owner, &err) < 0)
                return api_fail(c, err);
        r = DBQ(c->m->db, "DELETE FROM user_dotfiles WHERE user_id = ? AND path = ?", NULL, &err,
                DB_TEXT(owner.user_id), DB_TEXT(path));
        if (r < 0)
                return api_fail(c, err);
        if (r == 0)
                return api_problem(c, 404, "object-not-found", "dotfile '%s' not found", path);
        api_audit_target(c, "dotfile:%s:%.200s", owner.user_id, path);
        api_json(c, 200, json_pack("{s:b}", "success", true));
}
