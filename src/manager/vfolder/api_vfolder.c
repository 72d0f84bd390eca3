/* api_vfolder.c - the /folders route table, and folders themselves:
 *
 *   POST /folders {name, host?, usage_mode?, permission?, group?, cloneable?}
 *                                                                   create
 *   GET /folders[?all=true&group_id=&status=delete-pending]         list
 *   GET /folders/{name}                                             info (num_files, and
 *                                           numFiles as Backend.AI's client reads it)
 *   POST /folders/{name}/rename {new_name}
 *   POST /folders/{name}/update-options {permission, cloneable}
 *   POST /folders/{name}/clone {target_name, ...}   api_vfolder_clone.c
 *   DELETE /folders/{name}                  to the trash (owner; DELETE /folders {id}
 *                                           too, as Backend.AI's SDK sends it)
 *   POST /folders/{name}/restore            out of the trash (owner)
 *   POST /folders/{name}/purge              gone for good, files too (owner)
 *   POST /folders/restore-from-trash-bin, POST /folders/purge,
 *   DELETE /folders/delete-from-trash-bin   the same by {vfolder_id}
 *   GET /folders/_/hosts, _/all-hosts, _/allowed-types (also _/all_hosts,
 *       _/allowed_types: Backend.AI's SDK spells them so)
 *
 * A user folder belongs to its creator; a project folder (`group` names a
 * project) to the project, and only admins of its domain create one.  A
 * folder mounted by a live session can be neither trashed nor purged. */
#include "common/compat.h"

#include <sys/statvfs.h>

#include "common/crypto.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/timeutil.h"
#include "common/work_user.h"
#include "manager/accounts/model.h"
#include "manager/core/manager.h"
#include "manager/db/db.h"
#include "manager/http/http.h"
#include "manager/vfolder/api_vfolder.h"
#include "manager/vfolder/vfolder.h"
#include "manager/vfolder/vfolder_fs.h"

/* clang-format off */
const struct route vfolder_routes[] = {
        { "GET", "/folders/_/hosts", api_vfolder_hosts, ROUTE_READ, "Storage hosts the caller may use, with its permissions", "vfolder" },
        { "GET", "/folders/_/all-hosts", api_vfolder_all_hosts, ROUTE_SUPERADMIN | ROUTE_READ, "Every configured storage host", "vfolder" },
        { "GET", "/folders/_/mounts", api_vfolder_mounts, ROUTE_SUPERADMIN | ROUTE_READ, "The storage hosts' directories (Backend.AI's list-mounts)", "vfolder" },
        { "GET", "/folders/_/allowed-types", api_vfolder_allowed_types, ROUTE_READ, "Folder ownership types", "vfolder" },
        /* the spellings of Backend.AI's SDK 22.03 (func/vfolder.py) */
        { "GET", "/folders/_/all_hosts", api_vfolder_all_hosts, ROUTE_SUPERADMIN | ROUTE_READ, "Every configured storage host (Backend.AI's spelling)", "vfolder" },
        { "GET", "/folders/_/allowed_types", api_vfolder_allowed_types, ROUTE_READ, "Folder ownership types (Backend.AI's spelling)", "vfolder" },
        { "GET", "/folders/_/usage", api_vfolder_usage, ROUTE_READ, "Bytes and files of a folder (?folder_name=) or quota scope", "vfolder" },
        { "GET", "/folders/_/quota", api_vfolder_quota, ROUTE_READ, "A quota scope's limit and use (?folder_name= or ?group_id=)", "vfolder" },
        { "OPTIONS", "/folders/_/upload", api_vfolder_tus_options, ROUTE_PUBLIC | ROUTE_READ, "tus 1.0: what the upload endpoint supports", "vfolder" },
        { "POST", "/folders/_/upload", api_vfolder_tus_create, ROUTE_PUBLIC | ROUTE_RAW_BODY, "tus 1.0 creation of the upload a token names (?token=)", "vfolder", api_vfolder_tus_admit },
        { "GET", "/folders/_/upload", api_vfolder_tus_head, ROUTE_PUBLIC | ROUTE_READ, "tus 1.0: an upload's offset (HEAD, ?token=)", "vfolder" },
        { "PATCH", "/folders/_/upload", api_vfolder_tus_patch, ROUTE_PUBLIC | ROUTE_UPLOAD, "tus 1.0: bytes at Upload-Offset (?token=)", "vfolder", api_vfolder_tus_admit },
        { "GET", "/folders/_/download", api_vfolder_download, ROUTE_PUBLIC | ROUTE_READ, "A file (Range honoured) or a directory as an archive (?token=)", "vfolder" },
        { "GET", "/folders/invitations/list", api_vfolder_invitations, ROUTE_READ, "Invitations to the caller, pending", "vfolder" },
        { "GET", "/folders/invitations/list-sent", api_vfolder_invitations_sent, ROUTE_READ, "Invitations the caller sent, pending", "vfolder" },
        { "GET", "/folders/invitations/list_sent", api_vfolder_invitations_sent, ROUTE_READ, "Invitations the caller sent, pending (Backend.AI's spelling)", "vfolder" },
        { "GET", "/folders/_/shared", api_vfolder_shared, ROUTE_READ, "Who the caller's folders are shared with (?vfolder_id=)", "vfolder" },
        { "POST", "/folders/invitations/accept", api_vfolder_invitation_accept, 0, "Accept an invitation {inv_id}", "vfolder" },
        { "DELETE", "/folders/invitations/delete", api_vfolder_invitation_delete, 0, "Reject (invitee) or cancel (inviter) an invitation {inv_id}", "vfolder" },
        { "POST", "/folders/invitations/delete", api_vfolder_invitation_delete, 0, "Reject or cancel an invitation {inv_id}", "vfolder" },
        { "POST", "/folders/purge", api_vfolder_purge, 0, "Purge a trashed folder {vfolder_id}", "vfolder" },
        { "DELETE", "/folders/delete-from-trash-bin", api_vfolder_purge, 0, "Purge a trashed folder {vfolder_id}", "vfolder" },
        { "POST", "/folders/restore-from-trash-bin", api_vfolder_restore, 0, "Restore a trashed folder {vfolder_id}", "vfolder" },
        { "POST", "/folders", api_vfolder_create, ROUTE_CREATES, "Create a folder", "vfolder" },
        { "DELETE", "/folders", api_vfolder_delete, 0, "Move a folder to the trash by {id} (Backend.AI's SDK)", "vfolder" },
        { "GET", "/folders", api_vfolder_list, ROUTE_READ, "Folders the caller may use", "vfolder" },
        { "GET", "/folders/{name}", api_vfolder_info, ROUTE_READ, "A folder", "vfolder" },
        { "DELETE", "/folders/{name}", api_vfolder_delete, 0, "Move a folder to the trash", "vfolder" },
        { "POST", "/folders/{name}/rename", api_vfolder_rename, 0, "Rename a folder {new_name}", "vfolder" },
        { "POST", "/folders/{name}/update-options", api_vfolder_update_options, 0, "Set a folder's default permission and whether it may be cloned {permission, cloneable}", "vfolder" },
        { "POST", "/folders/{name}/clone", api_vfolder_clone, ROUTE_CREATES, "Copy a cloneable folder into a new folder of the caller {target_name, target_host, usage_mode, permission, cloneable}; a background task copies", "vfolder" },
        { "POST", "/folders/{name}/restore", api_vfolder_restore, 0, "Restore a folder from the trash", "vfolder" },
        { "POST", "/folders/{name}/purge", api_vfolder_purge, 0, "Purge a trashed folder and its files", "vfolder" },
        { "GET", "/folders/{name}/files", api_vfolder_files, ROUTE_READ, "List a directory (?path=)", "vfolder" },
        { "POST", "/folders/{name}/mkdir", api_vfolder_mkdir, 0, "Make directories {path, parents, exist_ok}", "vfolder" },
        { "POST", "/folders/{name}/rename-file", api_vfolder_rename_file, 0, "Rename a file {target_path, new_name}", "vfolder" },
        { "POST", "/folders/{name}/rename_file", api_vfolder_rename_file, 0, "Rename a file (Backend.AI's spelling)", "vfolder" },
        { "POST", "/folders/{name}/move-file", api_vfolder_move_file, 0, "Move a file {src, dst}", "vfolder" },
        { "DELETE", "/folders/{name}/delete-files", api_vfolder_delete_files, 0, "Delete files {files[], recursive}", "vfolder" },
        { "POST", "/folders/{name}/delete-files", api_vfolder_delete_files, 0, "Delete files {files[], recursive}", "vfolder" },
        { "DELETE", "/folders/{name}/delete_files", api_vfolder_delete_files, 0, "Delete files (Backend.AI's spelling)", "vfolder" },
        { "POST", "/folders/{name}/delete_files", api_vfolder_delete_files, 0, "Delete files (Backend.AI's spelling)", "vfolder" },
        { "POST", "/folders/{name}/request-upload", api_vfolder_request_upload, 0, "A token to upload one file {path, size}", "vfolder" },
        { "POST", "/folders/{name}/request-download", api_vfolder_request_download, 0, "A token to download a file or directory {path, archive}", "vfolder" },
        { "POST", "/folders/{name}/invite", api_vfolder_invite, 0, "Invite users {perm, emails[]}", "vfolder" },
        { "POST", "/folders/{name}/share", api_vfolder_share, 0, "Set project members' permission {permission, emails[]}", "vfolder" },
        { "DELETE", "/folders/{name}/unshare", api_vfolder_unshare, 0, "Take users' access away {emails[]}", "vfolder" },
        { "POST", "/folders/{name}/unshare", api_vfolder_unshare, 0, "Take users' access away {emails[]}", "vfolder" },
        { "POST", "/folders/{name}/leave", api_vfolder_leave, 0, "Stop using a folder shared with the caller", "vfolder" },
        {},
};
/* clang-format on */

static const char *const usage_modes[] = { "general", "model", "data", NULL };

static bool one_of(const char *s, const char *const *list)
{
        for (; s && *list; list++)
                if (streq(s, *list))
                        return true;
        return false;
}

/* The project a create names (`group`: name or id in the caller's domain). */
static int create_project(struct api_ctx *c, const char *group, char project_id[37], struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        int r = DBQ(c->m->db, "SELECT id, domain_name FROM projects WHERE (id = ? OR name = ?) AND domain_name = ?",
                    &rows, err, DB_TEXT(group), DB_TEXT(group), DB_TEXT(c->who.domain));

        if (r < 0)
                return r;
        if (rows->nrows != 1)
                return tess_err(err, EINVAL, "'group': no project '%.64s' in domain '%s'", group, c->who.domain);
        if (!api_is_admin(c))
                return tess_err(err, EACCES, "only admins create project folders");
        snprintf(project_id, 37, "%s", db_getn(rows, 0, "id"));
        return 0;
}

/* max_vfolder_count of the owner (0: unlimited), against what it owns. */
static int check_count(struct api_ctx *c, const char *type, const char *owner, struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        bool user = streq(type, "user");
        int r = DBQ(c->m->db,
                    user ? "SELECT (SELECT max_vfolder_count FROM keypair_resource_policies WHERE name = ?) AS lim,"
                           " (SELECT COUNT(*) FROM vfolders WHERE ownership_type = 'user' AND owner_id = ?) AS n"
                         : "SELECT (SELECT max_vfolder_count FROM projects WHERE id = ?) AS lim,"
                           " (SELECT COUNT(*) FROM vfolders WHERE ownership_type = 'project' AND owner_id = ?) AS n",
                    &rows, err, DB_TEXT(user ? c->who.resource_policy : owner), DB_TEXT(owner));
        if (r < 0)
                return r;
        int64_t lim = db_get_int(rows, 0, "lim"), n = db_get_int(rows, 0, "n");
        if (lim > 0 && n >= lim)
                return tess_err(err, EDQUOT, "the %s already has %lld folders (trash included), its limit", type,
                                (long long)n);
        return 0;
}

int vf_new_check(struct api_ctx *c, struct vf_new *q, struct tess_error **err)
{
        if (!q->name)
                return tess_err(err, EINVAL, "'%s' is required", q->name_field);
        if (!vf_valid_name(q->name))
                return tess_err(err, EINVAL,
                                "'%s': '%.80s' is not a folder name (1 to 64 letters, digits, '.', '_' or '-', "
                                "starting with a letter or digit, or with a dot for one mounted in every session; "
                                "not .ssh, .jupyter, .terminfo)",
                                q->name_field, q->name);
        if (!q->host || !*q->host)
                q->host = c->m->conf.vfolder_default_host;
        if (!vf_hosts_find(&c->m->vfolder_hosts, q->host))
                return tess_err(err, EINVAL, "'%s': no storage host '%.64s'", q->host_field, q->host);
        if (!q->mode)
                q->mode = "general";
        if (!one_of(q->mode, usage_modes))
                return tess_err(err, EINVAL, "'usage_mode' must be general, model or data");
        if (!q->perm)
                q->perm = "rw";
        if (vf_perm_parse(q->perm) < 0)
                return tess_err(err, EINVAL, "'permission' must be ro, rw or wd");
        q->perm = vf_perm_name((enum vf_perm)vf_perm_parse(q->perm));
        return 0;
}

static int parse_create(struct api_ctx *c, struct vf_new *q, struct tess_error **err)
{
        int r = api_get_string(c->body, NAMES("name"), 80, &q->name, err);
        if (r >= 0)
                r = api_get_string(c->body, NAMES("host", "folder_host"), 64, &q->host, err);
        if (r >= 0)
                r = api_get_string(c->body, NAMES("usage_mode", "usageMode"), 16, &q->mode, err);
        if (r >= 0)
                r = api_get_string(c->body, NAMES("permission", "mount_permission"), 16, &q->perm, err);
        if (r >= 0)
                r = api_get_string(c->body, NAMES("group", "group_id", "project"), 64, &q->group, err);
        if (r >= 0)
                r = api_get_bool(c->body, NAMES("cloneable"), &q->cloneable, err);
        return r < 0 ? r : vf_new_check(c, q, err);
}

/* The row of q, its directory made and given to the sessions' user, its
 * quota scope prepared; in the caller's transaction. */
static int insert_folder(struct api_ctx *c, const struct vf_new *q, const char *type, const char *owner,
                         struct vfolder *f, struct tess_error **err)
{
        char id[UUID_STR_LEN];
        int64_t now = now_usec();
        int r;

        uuid_generate_str(id);
        r = DBQ(c->m->db,
                "INSERT INTO vfolders(id, name, host, domain_name, ownership_type, owner_id, creator, usage_mode,"
                " permission, status, cloneable, created_at, modified_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                NULL, err, DB_TEXT(id), DB_TEXT(q->name), DB_TEXT(q->host), DB_TEXT(c->who.domain), DB_TEXT(type),
                DB_TEXT(owner), DB_TEXT(c->who.email), DB_TEXT(q->mode), DB_TEXT(q->group ? q->perm : "wd"),
                DB_TEXT(q->status), DB_BOOL(q->cloneable), DB_INT(now), DB_INT(now));
        if (r == -EEXIST) {
                *err = tess_error_free(*err);
                return tess_err(err, EEXIST, "a folder named '%s' already exists", q->name);
        }
        if (r >= 0)
                r = vf_find(c, id, q->status, VF_PERM_RO, f, err);
        if (r >= 0)
                r = fs_mkdir_p(f->path, 0755, err);
        if (r >= 0 && chown(f->path, TESSERA_WORK_UID, TESSERA_WORK_GID) < 0)
                log_debug("vfolder %s: cannot give it to uid %d: %s", f->id, TESSERA_WORK_UID, strerror(errno));
        if (r >= 0)
                r = vf_quota_prepare(c->m, f, err);
        return r;
}

int vf_new_create(struct api_ctx *c, const struct vf_new *q, struct vfolder *ret, struct tess_error **err)
{
        char project_id[37] = "";
        unsigned hp = 0;
        int r = 0;

        if (q->group)
                r = create_project(c, q->group, project_id, err);
        if (r >= 0)
                r = vf_host_perms(c, q->host, q->group ? project_id : NULL, &hp, err);
        if (r >= 0 && !(hp & VFH_CREATE))
                r = tess_err(err, EACCES, "you lack 'create-vfolder' on storage host '%s'", q->host);
        const char *type = q->group ? "project" : "user", *owner = q->group ? project_id : c->who.user_id;
        if (r >= 0)
                r = check_count(c, type, owner, err);
        if (r < 0)
                return r;
        ret->path[0] = '\0';
        r = db_begin(c->m->db, err);
        if (r >= 0)
                r = insert_folder(c, q, type, owner, ret, err);
        if (r >= 0)
                r = db_commit(c->m->db, err);
        if (r < 0) {
                db_rollback(c->m->db);
                if (ret->path[0] && r != -EEXIST)
                        rmdir(ret->path);
        }
        return r;
}

void api_vfolder_create(struct api_ctx *c)
{
        struct tess_error *err = NULL;
        struct vf_new q = { .status = VF_STATUS_READY, .name_field = "name", .host_field = "host" };
        struct vfolder f;
        int r = parse_create(c, &q, &err);

        if (r >= 0) {
                api_audit_target(c, "vfolder:%s", q.name);
                r = vf_new_create(c, &q, &f, &err);
        }
        if (r < 0) {
                api_fail(c, err);
                return;
        }
        api_json(c, 201, vf_json(&f));
}

void api_vfolder_list(struct api_ctx *c)
{
        struct tess_error *err = NULL;
        const char *all = http_query(c->req, "all"), *group = http_query(c->req, "group_id"),
                   *status = http_query(c->req, "status");
        bool want_all = (all && (streq(all, "true") || streq(all, "1"))) ||
                        json_is_true(json_object_get(c->body, "all"));
        json_t *list = NULL;

        if (!status || !*status)
                status = VF_STATUS_READY;
        if (!streq(status, VF_STATUS_READY) && !streq(status, VF_STATUS_TRASH)) {
                api_problem(c, 400, "invalid-api-params", "'status' must be ready or delete-pending");
                return;
        }
        if (group && !uuid_valid(group)) {
                api_problem(c, 400, "invalid-api-params", "'group_id' must be a project id");
                return;
        }
        if (vf_list(c, status, want_all && api_is_admin(c), group, &list, &err) < 0) {
                api_fail(c, err);
                return;
        }
        api_json(c, 200, list);
}

void api_vfolder_info(struct api_ctx *c)
{
        struct tess_error *err = NULL;
        struct vfolder f;
        struct vf_usage u = { 0 };

        if (vf_find(c, c->param[0], VF_STATUS_READY, VF_PERM_RO, &f, &err) < 0 || vf_usage_of(&f, &u, &err) < 0) {
                api_fail(c, err);
                return;
        }
        json_t *o = vf_json(&f);
        json_object_set_new(o, "num_files", json_integer((json_int_t)u.files));
        json_object_set_new(o, "numFiles", json_integer((json_int_t)u.files)); /* Backend.AI's spelling */
        json_object_set_new(o, "used_bytes", json_integer((json_int_t)u.bytes));
        api_json(c, 200, o);
}

/* The ready folder c->param[0] names, for its owner to change (the host's
 * modify-vfolder needed); `what` says the change in the refusal. */
static int folder_to_modify(struct api_ctx *c, const char *what, struct vfolder *f, struct tess_error **err)
{
        int r = vf_find(c, c->param[0], VF_STATUS_READY, VF_PERM_RO, f, err);
        if (r >= 0 && !f->is_owner)
                r = tess_err(err, EACCES, "only the owner %s folder '%s'", what, f->name);
        if (r >= 0)
                r = vf_need_host_perm(c, f, VFH_MODIFY, err);
        return r;
}

/* POST /folders/{name}/update-options {permission, cloneable} (Backend.AI's):
 * the owner sets the permission project members get by default, and
 * whether those who may read the folder may clone it; a field left out
 * (or null) stays as it is. */
void api_vfolder_update_options(struct api_ctx *c)
{
        struct tess_error *err = NULL;
        const char *perm = NULL;
        bool cloneable = false, set_cloneable = api_field(c->body, NAMES("cloneable")) != NULL; /* null: as is */
        struct vfolder f;

        api_audit_target(c, "vfolder:%s", c->param[0]);
        int r = api_get_string(c->body, NAMES("permission"), 16, &perm, &err);
        if (r >= 0 && set_cloneable)
                r = api_get_bool(c->body, NAMES("cloneable"), &cloneable, &err);
        if (r >= 0 && perm && vf_perm_parse(perm) < 0)
                r = tess_err(&err, EINVAL, "'permission' must be ro, rw or wd");
        if (r >= 0)
                r = folder_to_modify(c, "changes", &f, &err);
        if (r >= 0 && perm) {
                perm = vf_perm_name((enum vf_perm)vf_perm_parse(perm));
                r = DBQ(c->m->db, "UPDATE vfolders SET permission = ?, modified_at = ? WHERE id = ?", NULL, &err,
                        DB_TEXT(perm), DB_INT(now_usec()), DB_TEXT(f.id));
                snprintf(f.permission, sizeof(f.permission), "%s", perm);
        }
        if (r >= 0 && set_cloneable) {
                r = DBQ(c->m->db, "UPDATE vfolders SET cloneable = ?, modified_at = ? WHERE id = ?", NULL, &err,
                        DB_BOOL(cloneable), DB_INT(now_usec()), DB_TEXT(f.id));
                f.cloneable = cloneable;
        }
        if (r < 0)
                return api_fail(c, err);
        api_json(c, 200, vf_json(&f));
}

void api_vfolder_rename(struct api_ctx *c)
{
        struct tess_error *err = NULL;
        const char *new_name = NULL;
        struct vfolder f;
        int r;

        api_audit_target(c, "vfolder:%s", c->param[0]);
        r = api_get_string(c->body, NAMES("new_name", "newName", "name"), 80, &new_name, &err);
        if (r >= 0 && !new_name)
                r = tess_err(&err, EINVAL, "'new_name' is required");
        if (r >= 0 && !vf_valid_name(new_name))
                r = tess_err(&err, EINVAL, "'new_name': '%.80s' is not a folder name", new_name);
        if (r >= 0)
                r = folder_to_modify(c, "renames", &f, &err);
        if (r >= 0 && streq(f.name, new_name)) {
                api_json(c, 200, vf_json(&f));
                return;
        }
        if (r >= 0 && vf_mounted(c->m, f.id, &err) > 0)
                r = tess_err(&err, ETXTBSY, "folder '%s' is mounted by a session: rename it when none does", f.name);
        if (r >= 0)
                r = DBQ(c->m->db, "UPDATE vfolders SET name = ?, modified_at = ? WHERE id = ?", NULL, &err,
                        DB_TEXT(new_name), DB_INT(now_usec()), DB_TEXT(f.id));
        if (r == -EEXIST) {
                err = tess_error_free(err);
                r = tess_err(&err, EEXIST, "a folder named '%s' already exists", new_name);
        }
        if (r < 0) {
                api_fail(c, err);
                return;
        }
        snprintf(f.name, sizeof(f.name), "%s", new_name);
        api_json(c, 200, vf_json(&f));
}

/* The owner's folder `ref` (path parameter, or the body's vfolder_id) in `status`. */
static int owned_folder(struct api_ctx *c, const char *status, struct vfolder *f, struct tess_error **err)
{
        const char *ref = c->param[0];
        int r = 0;

        if (!ref) {
                r = api_get_string(c->body, NAMES("vfolder_id", "vfolderId", "id"), 64, &ref, err);
                if (r >= 0 && !ref)
                        r = tess_err(err, EINVAL, "'vfolder_id' is required");
                if (r < 0)
                        return r;
        }
        api_audit_target(c, "vfolder:%s", ref);
        r = vf_find(c, ref, status, VF_PERM_RO, f, err);
        if (r >= 0 && !f->is_owner)
                r = tess_err(err, EACCES, "only the owner of folder '%s' may do this", f->name);
        if (r >= 0)
                r = vf_need_host_perm(c, f, VFH_DELETE, err);
        if (r >= 0 && vf_mounted(c->m, f->id, err) > 0)
                r = tess_err(err, ETXTBSY, "folder '%s' is mounted by a session that is not over", f->name);
        return r;
}

static void set_status(struct api_ctx *c, const char *from, const char *to)
{
        struct tess_error *err = NULL;
        struct vfolder f;
        int64_t now = now_usec();
        int r = owned_folder(c, from, &f, &err);

        if (r >= 0)
                r = DBQ(c->m->db, "UPDATE vfolders SET status = ?, deleted_at = ?, modified_at = ? WHERE id = ?", NULL,
                        &err, DB_TEXT(to), streq(to, VF_STATUS_TRASH) ? DB_INT(now) : DB_NULLARG, DB_INT(now),
                        DB_TEXT(f.id));
        if (r == -EEXIST) {
                err = tess_error_free(err);
                r = tess_err(&err, EEXIST, "a folder named '%s' exists: rename it before restoring this one", f.name);
        }
        if (r < 0) {
                api_fail(c, err);
                return;
        }
        snprintf(f.status, sizeof(f.status), "%s", to);
        api_json(c, 200, vf_json(&f));
}

void api_vfolder_delete(struct api_ctx *c)
{
        set_status(c, VF_STATUS_READY, VF_STATUS_TRASH);
}

void api_vfolder_restore(struct api_ctx *c)
{
        set_status(c, VF_STATUS_TRASH, VF_STATUS_READY);
}

void api_vfolder_purge(struct api_ctx *c)
{
        struct tess_error *err = NULL;
        struct vfolder f;
        int r = owned_folder(c, VF_STATUS_TRASH, &f, &err);

        /* the row goes first: a crash leaves an orphan directory, never a
         * folder whose files are half gone */
        if (r >= 0)
                r = DBQ(c->m->db, "DELETE FROM vfolders WHERE id = ?", NULL, &err, DB_TEXT(f.id));
        if (r >= 0 && f.path[0]) {
                struct tess_error *rm_err = NULL;
                if (vf_remove_dir(f.path, &rm_err) < 0 && rm_err) {
                        log_warn("vfolder %s: purged, but its files stay: %s", f.id, rm_err->msg);
                        tess_error_free(rm_err);
                }
        }
        if (r < 0) {
                api_fail(c, err);
                return;
        }
        api_json(c, 200, json_pack("{s:s, s:s}", "id", f.id, "status", "purged"));
}

/* ---- hosts ---- */

static json_t *volume_info(const struct vf_host *h)
{
        struct statvfs st;
        json_t *usage = json_object();

        if (statvfs(h->path, &st) == 0 && st.f_blocks) {
                uint64_t total = (uint64_t)st.f_blocks * st.f_frsize, avail = (uint64_t)st.f_bavail * st.f_frsize;
                json_object_set_new(usage, "capacity_bytes", json_integer((json_int_t)total));
                json_object_set_new(usage, "used_bytes", json_integer((json_int_t)(total - avail)));
                json_object_set_new(usage, "percentage", json_real(100.0 * (double)(total - avail) / (double)total));
        }
        return json_pack("{s:s, s:[s, s], s:o}", "backend", "vfs", "capabilities", "vfolder", "quota", "usage", usage);
}

void api_vfolder_hosts(struct api_ctx *c)
{
        struct tess_error *err = NULL;
        const char *group = http_query(c->req, "group_id");
        json_t *allowed = json_array(), *info = json_object(), *perms = json_object();

        if (group && !uuid_valid(group)) {
                api_problem(c, 400, "invalid-api-params", "'group_id' must be a project id");
                goto out;
        }
        for (size_t i = 0; i < c->m->vfolder_hosts.n; i++) {
                const struct vf_host *h = &c->m->vfolder_hosts.v[i];
                unsigned bits;
                if (vf_host_perms(c, h->name, group, &bits, &err) < 0) {
                        api_fail(c, err);
                        goto out;
                }
                if (!bits)
                        continue;
                json_array_append_new(allowed, json_string(h->name));
                json_object_set_new(info, h->name, volume_info(h));
                json_object_set_new(perms, h->name, vf_host_perms_json(bits));
        }
        api_json(c, 200,
                 json_pack("{s:s, s:O, s:O, s:O}", "default", c->m->conf.vfolder_default_host, "allowed", allowed,
                           "volume_info", info, "permissions", perms));
out:
        json_decref(allowed);
        json_decref(info);
        json_decref(perms);
}

void api_vfolder_all_hosts(struct api_ctx *c)
{
        json_t *all = json_array(), *info = json_object();

        for (size_t i = 0; i < c->m->vfolder_hosts.n; i++) {
                json_array_append_new(all, json_string(c->m->vfolder_hosts.v[i].name));
                json_object_set_new(info, c->m->vfolder_hosts.v[i].name, volume_info(&c->m->vfolder_hosts.v[i]));
        }
        api_json(c, 200,
                 json_pack("{s:s, s:o, s:o}", "default", c->m->conf.vfolder_default_host, "allowed", all,
                           "volume_info", info));
}

/* GET /folders/_/mounts: Backend.AI's `admin vfolder list-mounts`, whose
 * manager, storage proxy and agents each mount folder hosts.  Tessera's
 * hosts are the directories of the config's vfolder_hosts, the same on
 * the manager (which serves the files) and on every agent (which mounts
 * them into sessions): one list, "NAME: PATH", under "manager"; there is
 * no storage proxy, and agents have no mounts of their own to list. */
void api_vfolder_mounts(struct api_ctx *c)
{
        json_t *mounts = json_array();

        for (size_t i = 0; i < c->m->vfolder_hosts.n; i++)
                json_array_append_new(mounts, json_sprintf("%s: %s", c->m->vfolder_hosts.v[i].name,
                                                           c->m->vfolder_hosts.v[i].path));
        api_json(c, 200,
                 json_pack("{s:{s:b, s:o, s:s}, s:{}}", "manager", "success", 1, "mounts", mounts, "message", "",
                           "agents"));
}

void api_vfolder_allowed_types(struct api_ctx *c)
{
        api_json(c, 200, json_pack("[s, s]", "user", "group"));
}
