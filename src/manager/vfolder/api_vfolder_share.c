/* api_vfolder_share.c - who else may use a folder (docs/design/vfolders.md):
 *
 *   POST /folders/{name}/invite {perm, emails[]}    user folders, by the owner
 *   GET /folders/invitations/list                   the caller's pending ones
 *   POST /folders/invitations/accept {inv_id}       the invitee
 *   DELETE|POST /folders/invitations/delete {inv_id}  invitee rejects,
 *                                                   inviter cancels
 *   POST /folders/{name}/share {permission, emails[]}  project folders:
 *                                                   per-member overrides
 *   DELETE|POST /folders/{name}/unshare {emails[]}  user folders: the user's
 *                                                   access goes; project
 *                                                   folders: the override goes
 *   POST /folders/{name}/leave                      drop a folder shared with
 *                                                   the caller
 *
 * An accepted invitation (or a `share`) is a row of vfolder_permissions;
 * vf_find() reads it, so every folder and file route sees a change at once.
 * Invitations name users by id; answers show their emails. */
#include "common/compat.h"

#include "common/crypto.h"
#include "common/timeutil.h"
#include "manager/core/manager.h"
#include "manager/db/db.h"
#include "manager/http/http.h"
#include "manager/vfolder/api_vfolder.h"
#include "manager/vfolder/vfolder.h"

#define MAX_USERS 100

struct target {
        char id[40];
        char email[256];
};

/* The body's users (emails or ids; "emails" or "user_ids"), each an active
 * user of `domain`. */
static int parse_users(struct api_ctx *c, const char *domain, struct target **ret, size_t *ret_n,
                       struct tess_error **err)
{
        json_t *list = api_field(c->body, NAMES("emails", "user_ids", "users")), *v;
        size_t i;

        *ret = NULL;
        *ret_n = 0;
        if (!json_is_array(list) || json_array_size(list) == 0)
                return tess_err(err, EINVAL, "'emails' must be a list of users' emails (or ids)");
        if (json_array_size(list) > MAX_USERS)
                return tess_err(err, EINVAL, "'emails': at most %d users at once", MAX_USERS);
        struct target *t = xcalloc(json_array_size(list), sizeof(*t));
        json_array_foreach(list, i, v) {
                _cleanup_rows_ struct db_rows *rows = NULL;
                const char *s = json_string_value(v);
                int r;

                if (!s || !*s || strlen(s) > 255) {
                        free(t);
                        return tess_err(err, EINVAL, "'emails' must be a list of users' emails (or ids)");
                }
                r = DBQ(c->m->db,
                        "SELECT id, email FROM users WHERE (email = ? OR id = ?) AND domain_name = ?"
                        " AND status = 'active'",
                        &rows, err, DB_TEXT(s), DB_TEXT(s), DB_TEXT(domain));
                if (r >= 0 && rows->nrows != 1)
                        r = tess_err(err, ENOENT, "no active user '%.255s' in domain '%s'", s, domain);
                if (r < 0) {
                        free(t);
                        return r;
                }
                snprintf(t[i].id, sizeof(t[i].id), "%s", db_getn(rows, 0, "id"));
                snprintf(t[i].email, sizeof(t[i].email), "%s", db_getn(rows, 0, "email"));
        }
        *ret = t;
        *ret_n = json_array_size(list);
        return 0;
}

static json_t *emails_json(const struct target *t, size_t n)
{
        json_t *a = json_array();
        for (size_t i = 0; i < n; i++)
                json_array_append_new(a, json_string(t[i].email));
        return a;
}

/* The permission a body names under `names`; -EINVAL when absent or bad. */
static int parse_perm(struct api_ctx *c, const char *const *names, enum vf_perm *ret, struct tess_error **err)
{
        const char *s = NULL;
        int r = api_get_string(c->body, names, 16, &s, err);

        if (r < 0)
                return r;
        if (!s || vf_perm_parse(s) < 0)
                return tess_err(err, EINVAL, "'%s' must be ro, rw or wd", names[0]);
        *ret = (enum vf_perm)vf_perm_parse(s);
        return 0;
}

/* Does user `uid` have a vfolder_permissions row on the folder?  1, 0, <0. */
static int has_row(struct api_ctx *c, const char *vfid, const char *uid, struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        int r = DBQ(c->m->db, "SELECT 1 FROM vfolder_permissions WHERE vfolder_id = ? AND user_id = ?", &rows, err,
                    DB_TEXT(vfid), DB_TEXT(uid));
        return r < 0 ? r : rows->nrows > 0;
}

/* Write `n` statements' worth of changes in one transaction: fn(i) per user. */
static int in_tx(struct api_ctx *c,
                 int (*fn)(struct api_ctx *, const struct vfolder *, const struct target *, const char *,
                           struct tess_error **),
                 const struct vfolder *f, const struct target *t, size_t n, const char *arg, struct tess_error **err)
{
        int r = db_begin(c->m->db, err);

        for (size_t i = 0; r >= 0 && i < n; i++)
                r = fn(c, f, &t[i], arg, err);
        if (r >= 0)
                r = db_commit(c->m->db, err);
        if (r < 0)
                db_rollback(c->m->db);
        return r;
}

/* ---- invitations ---- */

static int invite_one(struct api_ctx *c, const struct vfolder *f, const struct target *t, const char *perm,
                      struct tess_error **err)
{
        char id[UUID_STR_LEN];
        int64_t now = now_usec();
        int r = DBQ(c->m->db,
                    "UPDATE vfolder_invitations SET permission = ?, inviter = ?, modified_at = ?"
                    " WHERE vfolder_id = ? AND invitee = ? AND state = 'pending'",
                    NULL, err, DB_TEXT(perm), DB_TEXT(c->who.user_id), DB_INT(now), DB_TEXT(f->id), DB_TEXT(t->id));
        if (r != 0) /* updated the pending one, or failed */
                return r < 0 ? r : 0;
        uuid_generate_str(id);
        return DBQ(c->m->db,
                   "INSERT INTO vfolder_invitations(id, vfolder_id, inviter, invitee, permission, state, created_at,"
                   " modified_at) VALUES (?, ?, ?, ?, ?, 'pending', ?, ?)",
                   NULL, err, DB_TEXT(id), DB_TEXT(f->id), DB_TEXT(c->who.user_id), DB_TEXT(t->id), DB_TEXT(perm),
                   DB_INT(now), DB_INT(now));
}

void api_vfolder_invite(struct api_ctx *c)
{
        struct tess_error *err = NULL;
        _cleanup_free_ struct target *t = NULL;
        size_t n = 0;
        enum vf_perm perm = VF_PERM_RW;
        struct vfolder f;
        int r;

        api_audit_target(c, "vfolder:%s", c->param[0]);
        r = vf_find(c, c->param[0], VF_STATUS_READY, VF_PERM_RO, &f, &err);
        if (r >= 0 && streq(f.ownership_type, "project"))
                r = tess_err(&err, EINVAL,
                             "folder '%s' belongs to a project: its members use it already (set one member's "
                             "permission with share)",
                             f.name);
        if (r >= 0 && !f.is_owner)
                r = tess_err(&err, EACCES, "only the owner of folder '%s' invites others to it", f.name);
        if (r >= 0)
                r = vf_need_host_perm(c, &f, VFH_INVITE, &err);
        if (r >= 0 && api_field(c->body, NAMES("perm", "permission", "mount_permission")))
                r = parse_perm(c, NAMES("perm", "permission", "mount_permission"), &perm, &err);
        if (r >= 0)
                r = parse_users(c, f.domain, &t, &n, &err);
        for (size_t i = 0; r >= 0 && i < n; i++) {
                if (streq(t[i].id, f.owner_id))
                        r = tess_err(&err, EINVAL, "'%s' owns folder '%s'", t[i].email, f.name);
                else if ((r = has_row(c, f.id, t[i].id, &err)) > 0)
                        r = tess_err(&err, EEXIST, "'%s' already uses folder '%s' (unshare first to change that)",
                                     t[i].email, f.name);
        }
        if (r >= 0)
                r = in_tx(c, invite_one, &f, t, n, vf_perm_name(perm), &err);
        if (r < 0) {
                api_fail(c, err);
                return;
        }
        api_json(c, 201, json_pack("{s:o}", "invited_ids", emails_json(t, n)));
}

/* The pending invitations to (`who` "invitee") or from ("inviter") the caller. */
static void list_invitations(struct api_ctx *c, const char *who)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        struct tess_error *err = NULL;
        _cleanup_free_ char *sql = xasprintf(
                "SELECT i.id, i.permission, i.state, i.created_at, i.modified_at, i.vfolder_id, v.name,"
                " ui.email AS inviter, ue.email AS invitee FROM vfolder_invitations i"
                " JOIN vfolders v ON v.id = i.vfolder_id LEFT JOIN users ui ON ui.id = i.inviter"
                " LEFT JOIN users ue ON ue.id = i.invitee"
                " WHERE i.%s = ? AND i.state = 'pending' AND v.status = ? ORDER BY i.created_at, i.id",
                streq(who, "inviter") ? "inviter" : "invitee");
        int r = DBQ(c->m->db, sql, &rows, &err, DB_TEXT(c->who.user_id), DB_TEXT(VF_STATUS_READY));
        if (r < 0) {
                api_fail(c, err);
                return;
        }
        json_t *list = json_array();
        for (int i = 0; i < rows->nrows; i++)
                json_array_append_new(
                        list, json_pack("{s:s, s:s?, s:s?, s:s, s:s, s:I, s:I, s:s, s:s}", "id", db_getn(rows, i, "id"),
                                        "inviter", db_getn(rows, i, "inviter"), "invitee", db_getn(rows, i, "invitee"),
                                        "perm", db_getn(rows, i, "permission"), "state", db_getn(rows, i, "state"),
                                        "created_at", (json_int_t)(db_get_int(rows, i, "created_at") / 1000000),
                                        "modified_at", (json_int_t)(db_get_int(rows, i, "modified_at") / 1000000),
                                        "vfolder_id", db_getn(rows, i, "vfolder_id"), "vfolder_name",
                                        db_getn(rows, i, "name")));
        api_json(c, 200, json_pack("{s:o}", "invitations", list));
}

void api_vfolder_invitations(struct api_ctx *c)
{
        list_invitations(c, "invitee");
}

void api_vfolder_invitations_sent(struct api_ctx *c)
{
        list_invitations(c, "inviter");
}

/* GET /folders/_/shared[?vfolder_id=]: who the caller's own folders are
 * shared with, one row per folder and user, as Backend.AI lists them. */
void api_vfolder_shared(struct api_ctx *c)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        struct tess_error *err = NULL;
        const char *id = http_query(c->req, "vfolder_id");
        int r = DBQ(c->m->db,
                    "SELECT v.id, v.name, v.status, v.ownership_type, p.permission, u.id AS uid, u.email"
                    " FROM vfolder_permissions p JOIN vfolders v ON v.id = p.vfolder_id JOIN users u ON u.id = p.user_id"
                    " WHERE v.ownership_type = 'user' AND v.owner_id = ? AND v.status = ? AND v.id = COALESCE(?, v.id)"
                    " ORDER BY v.name, u.email",
                    &rows, &err, DB_TEXT(c->who.user_id), DB_TEXT(VF_STATUS_READY), DB_TEXT(id));
        if (r < 0)
                return api_fail(c, err);
        json_t *list = json_array();
        for (int i = 0; i < rows->nrows; i++)
                json_array_append_new(list, json_pack("{s:s, s:s, s:s, s:s, s:s, s:{s:s, s:s}, s:s}", "vfolder_id",
                                                      db_getn(rows, i, "id"), "vfolder_name", db_getn(rows, i, "name"),
                                                      "status", db_getn(rows, i, "status"), "owner", c->who.email,
                                                      "type", db_getn(rows, i, "ownership_type"), "shared_to", "uuid",
                                                      db_getn(rows, i, "uid"), "email", db_getn(rows, i, "email"),
                                                      "perm", db_getn(rows, i, "permission")));
        api_json(c, 200, json_pack("{s:o}", "shared", list));
}

struct invitation {
        char id[40], vfolder_id[40], inviter[40], invitee[40], perm[8], state[16], name[72];
};

/* The pending invitation the body's inv_id names, to or from the caller. */
static int find_invitation(struct api_ctx *c, struct invitation *inv, struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        const char *id = NULL;
        int r = api_get_string(c->body, NAMES("inv_id", "invitation_id", "id"), 64, &id, err);

        if (r >= 0 && !id)
                r = tess_err(err, EINVAL, "'inv_id' is required");
        if (r < 0)
                return r;
        api_audit_target(c, "vfolder-invitation:%s", id);
        r = DBQ(c->m->db,
                "SELECT i.id, i.vfolder_id, i.inviter, i.invitee, i.permission, i.state, v.name"
                " FROM vfolder_invitations i JOIN vfolders v ON v.id = i.vfolder_id"
                " WHERE i.id = ? AND (i.invitee = ? OR i.inviter = ?) AND v.status = ?",
                &rows, err, DB_TEXT(id), DB_TEXT(c->who.user_id), DB_TEXT(c->who.user_id), DB_TEXT(VF_STATUS_READY));
        if (r < 0)
                return r;
        if (rows->nrows != 1)
                return tess_err(err, ENOENT, "no invitation '%.64s' to or from you", id);
        snprintf(inv->id, sizeof(inv->id), "%s", db_getn(rows, 0, "id"));
        snprintf(inv->vfolder_id, sizeof(inv->vfolder_id), "%s", db_getn(rows, 0, "vfolder_id"));
        snprintf(inv->inviter, sizeof(inv->inviter), "%s", db_getn(rows, 0, "inviter"));
        snprintf(inv->invitee, sizeof(inv->invitee), "%s", db_getn(rows, 0, "invitee"));
        snprintf(inv->perm, sizeof(inv->perm), "%s", db_getn(rows, 0, "permission"));
        snprintf(inv->state, sizeof(inv->state), "%s", db_getn(rows, 0, "state"));
        snprintf(inv->name, sizeof(inv->name), "%s", db_getn(rows, 0, "name"));
        if (!streq(inv->state, "pending"))
                return tess_err(err, EINVAL, "invitation '%s' is %s already", inv->id, inv->state);
        return 0;
}

static int set_state(struct api_ctx *c, const struct invitation *inv, const char *state, struct tess_error **err)
{
        int r = DBQ(c->m->db,
                    "UPDATE vfolder_invitations SET state = ?, modified_at = ? WHERE id = ? AND state = 'pending'",
                    NULL, err, DB_TEXT(state), DB_INT(now_usec()), DB_TEXT(inv->id));
        if (r == 0) /* answered meanwhile */
                return tess_err(err, EINVAL, "invitation '%s' is not pending any more", inv->id);
        return r;
}

void api_vfolder_invitation_accept(struct api_ctx *c)
{
        struct tess_error *err = NULL;
        struct invitation inv;
        int r = find_invitation(c, &inv, &err);

        if (r >= 0 && !streq(inv.invitee, c->who.user_id))
                r = tess_err(&err, EACCES, "only the invitee accepts invitation '%s'", inv.id);
        if (r >= 0)
                r = db_begin(c->m->db, &err);
        if (r >= 0) {
                r = set_state(c, &inv, "accepted", &err);
                /* a row left by an earlier share is replaced */
                if (r >= 0)
                        r = DBQ(c->m->db, "DELETE FROM vfolder_permissions WHERE vfolder_id = ? AND user_id = ?", NULL,
                                &err, DB_TEXT(inv.vfolder_id), DB_TEXT(inv.invitee));
                if (r >= 0)
                        r = DBQ(c->m->db,
                                "INSERT INTO vfolder_permissions(vfolder_id, user_id, permission) VALUES (?, ?, ?)",
                                NULL, &err, DB_TEXT(inv.vfolder_id), DB_TEXT(inv.invitee), DB_TEXT(inv.perm));
                if (r >= 0)
                        r = db_commit(c->m->db, &err);
                if (r < 0)
                        db_rollback(c->m->db);
        }
        if (r < 0) {
                api_fail(c, err);
                return;
        }
        api_json(c, 200,
                 json_pack("{s:s, s:s, s:s, s:s, s:s}", "id", inv.id, "state", "accepted", "vfolder_id", inv.vfolder_id,
                           "vfolder_name", inv.name, "perm", inv.perm));
}

void api_vfolder_invitation_delete(struct api_ctx *c)
{
        struct tess_error *err = NULL;
        struct invitation inv;
        int r = find_invitation(c, &inv, &err);
        const char *state = r >= 0 && streq(inv.invitee, c->who.user_id) ? "rejected" : "canceled";

        if (r >= 0)
                r = set_state(c, &inv, state, &err);
        if (r < 0) {
                api_fail(c, err);
                return;
        }
        api_json(c, 200, json_pack("{s:s, s:s}", "id", inv.id, "state", state));
}

/* ---- share, unshare, leave ---- */

/* The folder of a share/unshare, as its owner with `need` on its host. */
static int owned(struct api_ctx *c, unsigned need, struct vfolder *f, struct tess_error **err)
{
        api_audit_target(c, "vfolder:%s", c->param[0]);
        int r = vf_find(c, c->param[0], VF_STATUS_READY, VF_PERM_RO, f, err);
        if (r >= 0 && !f->is_owner)
                r = tess_err(err, EACCES, "only the owner of folder '%s' changes who uses it", f->name);
        if (r >= 0)
                r = vf_need_host_perm(c, f, need, err);
        return r;
}

static int share_one(struct api_ctx *c, const struct vfolder *f, const struct target *t, const char *perm,
                     struct tess_error **err)
{
        int r = DBQ(c->m->db, "DELETE FROM vfolder_permissions WHERE vfolder_id = ? AND user_id = ?", NULL, err,
                    DB_TEXT(f->id), DB_TEXT(t->id));
        if (r >= 0)
                r = DBQ(c->m->db, "INSERT INTO vfolder_permissions(vfolder_id, user_id, permission) VALUES (?, ?, ?)",
                        NULL, err, DB_TEXT(f->id), DB_TEXT(t->id), DB_TEXT(perm));
        return r;
}

static int is_member(struct api_ctx *c, const char *project, const char *uid, struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        int r = DBQ(c->m->db, "SELECT 1 FROM project_members WHERE project_id = ? AND user_id = ?", &rows, err,
                    DB_TEXT(project), DB_TEXT(uid));
        return r < 0 ? r : rows->nrows > 0;
}

void api_vfolder_share(struct api_ctx *c)
{
        struct tess_error *err = NULL;
        _cleanup_free_ struct target *t = NULL;
        size_t n = 0;
        enum vf_perm perm = VF_PERM_NONE;
        struct vfolder f;
        int r = owned(c, VFH_SET_USER_PERM, &f, &err);

        if (r >= 0 && !streq(f.ownership_type, "project"))
                r = tess_err(&err, EINVAL, "folder '%s' is a user's: invite users to it instead", f.name);
        if (r >= 0)
                r = parse_perm(c, NAMES("permission", "perm"), &perm, &err);
        if (r >= 0)
                r = parse_users(c, f.domain, &t, &n, &err);
        for (size_t i = 0; r >= 0 && i < n; i++)
                if ((r = is_member(c, f.owner_id, t[i].id, &err)) == 0)
                        r = tess_err(&err, EINVAL, "'%s' is not a member of the folder's project", t[i].email);
        if (r >= 0)
                r = in_tx(c, share_one, &f, t, n, vf_perm_name(perm), &err);
        if (r < 0) {
                api_fail(c, err);
                return;
        }
        api_json(c, 200, json_pack("{s:o, s:s}", "shared_emails", emails_json(t, n), "permission", vf_perm_name(perm)));
}

/* A user folder: the user's access goes, and any invitation still pending;
 * a project folder: only the override (the member keeps the folder's own
 * permission). */
static int unshare_one(struct api_ctx *c, const struct vfolder *f, const struct target *t, const char *unused,
                       struct tess_error **err)
{
        (void)unused;
        int r = DBQ(c->m->db, "DELETE FROM vfolder_permissions WHERE vfolder_id = ? AND user_id = ?", NULL, err,
                    DB_TEXT(f->id), DB_TEXT(t->id));
        if (r >= 0 && streq(f->ownership_type, "user"))
                r = DBQ(c->m->db,
                        "UPDATE vfolder_invitations SET state = 'canceled', modified_at = ?"
                        " WHERE vfolder_id = ? AND invitee = ? AND state = 'pending'",
                        NULL, err, DB_INT(now_usec()), DB_TEXT(f->id), DB_TEXT(t->id));
        return r;
}

void api_vfolder_unshare(struct api_ctx *c)
{
        struct tess_error *err = NULL;
        _cleanup_free_ struct target *t = NULL;
        size_t n = 0;
        struct vfolder f;
        int r = owned(c, 0, &f, &err);
        bool project = r >= 0 && streq(f.ownership_type, "project");

        if (r >= 0 && project)
                r = vf_need_host_perm(c, &f, VFH_SET_USER_PERM, &err);
        if (r >= 0)
                r = parse_users(c, f.domain, &t, &n, &err);
        for (size_t i = 0; r >= 0 && i < n; i++)
                if ((r = has_row(c, f.id, t[i].id, &err)) == 0)
                        r = tess_err(&err, EINVAL, "'%s' has %s on folder '%s'", t[i].email,
                                     project ? "no permission of its own" : "no access shared", f.name);
        if (r >= 0)
                r = in_tx(c, unshare_one, &f, t, n, NULL, &err);
        if (r < 0) {
                api_fail(c, err);
                return;
        }
        api_json(c, 200, json_pack("{s:o}", "unshared_emails", emails_json(t, n)));
}

void api_vfolder_leave(struct api_ctx *c)
{
        struct tess_error *err = NULL;
        struct vfolder f;
        int r;

        api_audit_target(c, "vfolder:%s", c->param[0]);
        r = vf_find(c, c->param[0], VF_STATUS_READY, VF_PERM_RO, &f, &err);
        if (r >= 0 && f.is_owner)
                r = tess_err(&err, EINVAL, "you own folder '%s': delete it instead of leaving it", f.name);
        if (r >= 0 && streq(f.ownership_type, "project"))
                r = tess_err(&err, EINVAL, "folder '%s' comes with your project's membership: it cannot be left",
                             f.name);
        if (r >= 0)
                r = DBQ(c->m->db, "DELETE FROM vfolder_permissions WHERE vfolder_id = ? AND user_id = ?", NULL, &err,
                        DB_TEXT(f.id), DB_TEXT(c->who.user_id));
        if (r < 0) {
                api_fail(c, err);
                return;
        }
        api_json(c, 200, json_pack("{s:s, s:s}", "id", f.id, "msg", "left"));
}
