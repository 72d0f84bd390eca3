/* vfolder.c - the folder model: storage hosts, names, layout, permissions,
 * and finding the folders a caller may use (see vfolder.h). */
#include "common/compat.h"

#include "common/crypto.h"
#include "common/fs.h"
#include "manager/api/api.h"
#include "manager/core/manager.h"
#include "manager/db/db.h"
#include "manager/vfolder/vfolder.h"

static const char *const perm_names[] = { [VF_PERM_NONE] = "none", [VF_PERM_RO] = "ro", [VF_PERM_RW] = "rw",
                                          [VF_PERM_WD] = "wd" };

const char *vf_perm_name(enum vf_perm p)
{
        return p >= VF_PERM_NONE && p <= VF_PERM_WD ? perm_names[p] : "none";
}

int vf_perm_parse(const char *s)
{
        static const char *const long_names[] = { [VF_PERM_RO] = "read-only", [VF_PERM_RW] = "read-write",
                                                  [VF_PERM_WD] = "write-delete" };

        for (int p = VF_PERM_RO; s && p <= VF_PERM_WD; p++)
                if (streq(s, perm_names[p]) || streq(s, long_names[p]))
                        return p;
        return -EINVAL;
}

const char *const vf_host_perm_names[] = {
        "create-vfolder", "modify-vfolder", "delete-vfolder", "mount-in-session", "upload-file", "download-file",
        "invite-others",  "set-user-specific-permission",     NULL,
};

int vf_host_perms_parse(const json_t *list, unsigned *ret, struct tess_error **err)
{
        size_t i;
        json_t *v;

        *ret = 0;
        if (!json_is_array(list))
                return tess_err(err, EINVAL, "host permissions must be a list of names");
        json_array_foreach(list, i, v) {
                int b = -1;
                for (int k = 0; json_is_string(v) && vf_host_perm_names[k]; k++)
                        if (streq(json_string_value(v), vf_host_perm_names[k]))
                                b = k;
                if (b < 0)
                        return tess_err(err, EINVAL,
                                        "'%.64s' is not a host permission (create-vfolder, modify-vfolder, "
                                        "delete-vfolder, mount-in-session, upload-file, download-file, "
                                        "invite-others, set-user-specific-permission)",
                                        json_is_string(v) ? json_string_value(v) : "?");
                *ret |= 1u << b;
        }
        return 0;
}

json_t *vf_host_perms_json(unsigned bits)
{
        json_t *a = json_array();
        for (int k = 0; vf_host_perm_names[k]; k++)
                if (bits & (1u << k))
                        json_array_append_new(a, json_string(vf_host_perm_names[k]));
        return a;
}

int vf_allowed_hosts_check(const json_t *v, struct tess_error **err)
{
        const char *host;
        json_t *list;
        unsigned bits;

        if (!json_is_object(v))
                return tess_err(err, EINVAL, "'allowed_vfolder_hosts' must be an object of host -> permissions");
        json_object_foreach((json_t *)v, host, list) {
                if (!api_valid_name(host))
                        return tess_err(err, EINVAL, "'allowed_vfolder_hosts': '%.64s' is not a host name", host);
                int r = vf_host_perms_parse(list, &bits, err);
                if (r < 0)
                        return tess_err_wrap(err, "'allowed_vfolder_hosts.%.64s'", host);
        }
        return 0;
}

char *vf_host_perms_all_text(const char *host)
{
        json_t *o = json_pack("{s:o}", host, vf_host_perms_json(VFH_ALL));
        char *t = json_dumps(o, JSON_COMPACT);
        json_decref(o);
        return t;
}

/* ---- names and layout ---- */

bool vf_valid_name(const char *s)
{
        /* managed by the runner or the image, or route words */
        static const char *const reserved[] = { ".ssh", ".jupyter", ".terminfo", ".tmux.conf", "invitations",
                                                "purge", "restore-from-trash-bin", "delete-from-trash-bin", NULL };

        if (!s)
                return false;
        for (const char *const *r = reserved; *r; r++)
                if (streq(s, *r))
                        return false;
        return api_valid_name(s[0] == '.' ? s + 1 : s);
}

static void hex_id(const char *id, char out[33])
{
        size_t n = 0;
        for (; *id && n < 32; id++)
                if (*id != '-')
                        out[n++] = *id;
        out[n] = '\0';
}

void vf_scope_dir(const char *ownership_type, const char *owner_id, char *buf, size_t n)
{
        snprintf(buf, n, "%s-%s", ownership_type, owner_id);
}

void vf_relpath(const char *ownership_type, const char *owner_id, const char *id, char *buf, size_t n)
{
        char hex[33];

        hex_id(id, hex);
        snprintf(buf, n, "%s-%s/%.2s/%.2s/%s", ownership_type, owner_id, hex, hex + 2, hex + 4);
}

/* ---- finding folders ---- */

#define VF_COLUMNS                                                                                                 \
        "v.id, v.name, v.host, v.domain_name, v.ownership_type, v.owner_id, v.creator, v.usage_mode,"              \
        " v.permission, v.status, v.cloneable, v.created_at, v.modified_at, v.deleted_at,"                         \
        " p.permission AS user_perm,"                                                                              \
        " (SELECT 1 FROM project_members pm WHERE pm.project_id = v.owner_id AND pm.user_id = ?) AS member"

/* Rows a user may use: its own, those shared with it, its projects', and
 * (admins) every project folder of the domains it administers.  Binds:
 * user (member), user (join), user (own), user (projects), admin flag,
 * domain, superadmin flag. */
#define VF_FROM_VISIBLE                                                                                            \
        " FROM vfolders v LEFT JOIN vfolder_permissions p ON p.vfolder_id = v.id AND p.user_id = ?"              \
        " WHERE (v.ownership_type = 'user' AND (v.owner_id = ? OR p.user_id IS NOT NULL)"                          \
        "   OR v.ownership_type = 'project' AND (v.owner_id IN"                                                  \
        "     (SELECT project_id FROM project_members WHERE user_id = ?)"                                         \
        "     OR ? = 1 AND v.domain_name = ? OR ? = 1))"

struct viewer {
        const char *user_id;
        const char *domain;
        bool admin, superadmin;
};

static struct viewer viewer_of(const struct api_ctx *c)
{
        return (struct viewer){ c->who.user_id, c->who.domain, c->who.role == ROLE_ADMIN,
                                c->who.role == ROLE_SUPERADMIN };
}

static void copy_field(char *dst, size_t n, const char *s)
{
        snprintf(dst, n, "%s", s ? s : "");
}

static void row_to_folder(const struct manager *m, const struct viewer *who, const struct db_rows *rows, int i,
                          struct vfolder *f)
{
        const char *user_perm = db_getn(rows, i, "user_perm");

        memset(f, 0, sizeof(*f));
        copy_field(f->id, sizeof(f->id), db_getn(rows, i, "id"));
        copy_field(f->name, sizeof(f->name), db_getn(rows, i, "name"));
        copy_field(f->host, sizeof(f->host), db_getn(rows, i, "host"));
        copy_field(f->domain, sizeof(f->domain), db_getn(rows, i, "domain_name"));
        copy_field(f->ownership_type, sizeof(f->ownership_type), db_getn(rows, i, "ownership_type"));
        copy_field(f->owner_id, sizeof(f->owner_id), db_getn(rows, i, "owner_id"));
        copy_field(f->creator, sizeof(f->creator), db_getn(rows, i, "creator"));
        copy_field(f->usage_mode, sizeof(f->usage_mode), db_getn(rows, i, "usage_mode"));
        copy_field(f->permission, sizeof(f->permission), db_getn(rows, i, "permission"));
        copy_field(f->status, sizeof(f->status), db_getn(rows, i, "status"));
        f->cloneable = db_get_int(rows, i, "cloneable") != 0;
        f->created_at = db_get_int(rows, i, "created_at");
        f->modified_at = db_get_int(rows, i, "modified_at");
        f->deleted_at = db_getn(rows, i, "deleted_at") ? db_get_int(rows, i, "deleted_at") : 0;
        if (streq(f->ownership_type, "user")) {
                f->is_owner = streq(f->owner_id, who->user_id);
                f->perm = f->is_owner ? VF_PERM_WD : user_perm ? (enum vf_perm)vf_perm_parse(user_perm) : VF_PERM_NONE;
        } else {
                f->is_owner = who->superadmin || (who->admin && streq(f->domain, who->domain));
                if (f->is_owner)
                        f->perm = VF_PERM_WD;
                else if (db_getn(rows, i, "member"))
                        f->perm = (enum vf_perm)vf_perm_parse(user_perm ? user_perm : f->permission);
                else
                        f->perm = VF_PERM_NONE;
        }
        if ((int)f->perm < 0)
                f->perm = VF_PERM_NONE;
        const struct vf_host *h = vf_hosts_find(&m->vfolder_hosts, f->host);
        if (h) {
                char rel[256];
                vf_relpath(f->ownership_type, f->owner_id, f->id, rel, sizeof(rel));
                snprintf(f->path, sizeof(f->path), "%s/%s", h->path, rel);
        }
}

/* The tier a name resolves by: own user folder, then project, then shared. */
static int tier(const struct vfolder *f)
{
        if (streq(f->ownership_type, "user"))
                return f->is_owner ? 0 : 2;
        return 1;
}

static int find_as(struct manager *m, const struct viewer *who, const char *ref, const char *status,
                   enum vf_perm need, struct vfolder *ret, struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        bool by_id = uuid_valid(ref);
        int best = -1, best_tier = 99, ties = 0, r;
        struct vfolder f;

        r = DBQ(m->db,
                by_id ? "SELECT " VF_COLUMNS VF_FROM_VISIBLE " AND v.id = ? AND v.status = ?"
                      : "SELECT " VF_COLUMNS VF_FROM_VISIBLE " AND v.name = ? AND v.status = ?",
                &rows, err, DB_TEXT(who->user_id), DB_TEXT(who->user_id), DB_TEXT(who->user_id),
                DB_TEXT(who->user_id), DB_BOOL(who->admin), DB_TEXT(who->domain), DB_BOOL(who->superadmin),
                DB_TEXT(ref), DB_TEXT(status));
        if (r < 0)
                return r;
        for (int i = 0; i < rows->nrows; i++) {
                row_to_folder(m, who, rows, i, &f);
                if (f.perm == VF_PERM_NONE)
                        continue;
                int t = tier(&f);
                if (t < best_tier) {
                        best = i;
                        best_tier = t;
                        ties = 0;
                } else if (t == best_tier) {
                        ties++;
                }
        }
        if (best < 0)
                return tess_err(err, ENOENT, "folder '%.72s' not found%s", ref,
                                streq(status, VF_STATUS_TRASH) ? " in the trash" : "");
        if (ties)
                return tess_err(err, EEXIST, "several folders you may use are named '%.72s': give its id", ref);
        row_to_folder(m, who, rows, best, ret);
        if (ret->perm < need)
                return tess_err(err, EACCES, "folder '%.72s': this needs %s permission, you have %s", ref,
                                vf_perm_name(need), vf_perm_name(ret->perm));
        return 0;
}

int vf_find(struct api_ctx *c, const char *ref, const char *status, enum vf_perm need, struct vfolder *ret,
            struct tess_error **err)
{
        struct viewer who = viewer_of(c);
        return find_as(c->m, &who, ref, status, need, ret, err);
}

int vf_find_as(struct manager *m, const char *user_id, const char *domain, int role, const char *ref,
               enum vf_perm need, struct vfolder *ret, struct tess_error **err)
{
        struct viewer who = { user_id, domain, role == ROLE_ADMIN, role == ROLE_SUPERADMIN };
        return find_as(m, &who, ref, VF_STATUS_READY, need, ret, err);
}

json_t *vf_json(const struct vfolder *f)
{
        bool user = streq(f->ownership_type, "user");
        char scope[56];

        snprintf(scope, sizeof(scope), "%s:%s", f->ownership_type, f->owner_id);
        return json_pack("{s:s, s:s, s:s, s:s, s:s, s:b, s:s, s:s?, s:s?, s:s, s:s, s:s, s:s, s:s, s:b, s:I, s:I}",
                         "id", f->id, "name", f->name, "host", f->host, "quota_scope_id", scope, "usage_mode",
                         f->usage_mode, "is_owner", f->is_owner, "permission", vf_perm_name(f->perm), "user",
                         user ? f->owner_id : NULL, "group", user ? NULL : f->owner_id, "type",
                         user ? "user" : "group", "ownership_type", user ? "user" : "project", "creator", f->creator,
                         "status", f->status, "domain_name", f->domain, "cloneable", f->cloneable, "created_at",
                         (json_int_t)(f->created_at / 1000000), "modified_at", (json_int_t)(f->modified_at / 1000000));
}

int vf_list(struct api_ctx *c, const char *status, bool all, const char *project_id, json_t **ret,
            struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        struct viewer who = viewer_of(c);
        struct vfolder f;
        int r;

        /* folders being cloned are listed with the ready ones, as Backend.AI
         * lists them, and found by nothing else until their copy is done */
        r = DBQ(c->m->db,
                "SELECT " VF_COLUMNS VF_FROM_VISIBLE " AND (v.status = ? OR v.status = ?)"
                " AND (CAST(? AS TEXT) IS NULL OR v.owner_id = ?) ORDER BY v.name, v.created_at",
                &rows, err, DB_TEXT(who.user_id), DB_TEXT(who.user_id), DB_TEXT(who.user_id), DB_TEXT(who.user_id),
                DB_BOOL(who.admin), DB_TEXT(who.domain), DB_BOOL(who.superadmin), DB_TEXT(status),
                DB_TEXT(streq(status, VF_STATUS_READY) ? VF_STATUS_CLONING : status), DB_TEXT(project_id),
                DB_TEXT(project_id));
        if (r < 0)
                return r;
        *ret = json_array();
        for (int i = 0; i < rows->nrows; i++) {
                row_to_folder(c->m, &who, rows, i, &f);
                /* admins see their domain's project folders only when they ask for all */
                bool admin_only = streq(f.ownership_type, "project") && !db_getn(rows, i, "member");
                if (f.perm == VF_PERM_NONE || (admin_only && !all))
                        continue;
                json_array_append_new(*ret, vf_json(&f));
        }
        return 0;
}

/* ---- host permissions ---- */

static int merge_allowed(const char *text, const char *host, unsigned *bits, struct tess_error **err)
{
        json_t *o = text ? json_loads(text, 0, NULL) : NULL;
        unsigned b = 0;
        int r = 0;

        if (o && json_object_get(o, host))
                r = vf_host_perms_parse(json_object_get(o, host), &b, err);
        json_decref(o);
        *bits |= b;
        return r;
}

int vf_host_perms_of(struct manager *m, const char *domain, const char *policy, int role, const char *host,
                     const char *project_id, unsigned *ret, struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        int r;

        *ret = 0;
        if (!vf_hosts_find(&m->vfolder_hosts, host))
                return 0;
        if (role == ROLE_SUPERADMIN) {
                *ret = VFH_ALL;
                return 0;
        }
        r = DBQ(m->db,
                "SELECT (SELECT allowed_vfolder_hosts FROM domains WHERE name = ?) AS d,"
                " (SELECT allowed_vfolder_hosts FROM keypair_resource_policies WHERE name = ?) AS k,"
                " (SELECT allowed_vfolder_hosts FROM projects WHERE id = ?) AS p",
                &rows, err, DB_TEXT(domain), DB_TEXT(policy), DB_TEXT(project_id));
        if (r < 0)
                return r;
        for (const char *col = "d"; col; col = streq(col, "d") ? "k" : streq(col, "k") ? "p" : NULL) {
                r = merge_allowed(db_getn(rows, 0, col), host, ret, err);
                if (r < 0)
                        return r;
        }
        return 0;
}

int vf_host_perms(struct api_ctx *c, const char *host, const char *project_id, unsigned *ret,
                  struct tess_error **err)
{
        return vf_host_perms_of(c->m, c->who.domain, c->who.resource_policy, c->who.role, host, project_id, ret,
                                err);
}

int vf_need_host_perm(struct api_ctx *c, const struct vfolder *f, unsigned need, struct tess_error **err)
{
        unsigned have;
        int r = vf_host_perms(c, f->host, streq(f->ownership_type, "project") ? f->owner_id : NULL, &have, err);

        if (r < 0)
                return r;
        if ((have & need) == need)
                return 0;
        for (int k = 0; vf_host_perm_names[k]; k++)
                if ((need & (1u << k)) && !(have & (1u << k)))
                        return tess_err(err, EACCES, "you lack '%s' on storage host '%s'", vf_host_perm_names[k],
                                        f->host);
        return tess_err(err, EACCES, "not allowed on storage host '%s'", f->host);
}

int vf_mounted(struct manager *m, const char *id, struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        _cleanup_free_ char *pattern = xasprintf("%%\"%s\"%%", id);
        int r = DBQ(m->db,
                    "SELECT 1 FROM sessions WHERE status NOT IN ('TERMINATED', 'CANCELLED', 'ERROR')"
                    " AND vfolder_mounts LIKE ? LIMIT 1",
                    &rows, err, DB_TEXT(pattern));
        return r < 0 ? r : rows->nrows > 0;
}

int vfolder_hosts_open(struct manager *m, struct tess_error **err)
{
        /* the state dir may be given relative ("make run": ./tessera-data) */
        _cleanup_free_ char *state = realpath(m->conf.state_dir, NULL);
        _cleanup_free_ char *def = xasprintf("local=%s/vfolders", state ? state : m->conf.state_dir);
        const char *spec = m->conf.vfolder_hosts && *m->conf.vfolder_hosts ? m->conf.vfolder_hosts : def;
        int r = vf_hosts_parse(spec, &m->vfolder_hosts, err);

        for (size_t i = 0; r >= 0 && i < m->vfolder_hosts.n; i++)
                r = fs_mkdir_p(m->vfolder_hosts.v[i].path, 0711, err);
        if (r >= 0 && m->vfolder_hosts.n && !vf_hosts_find(&m->vfolder_hosts, m->conf.vfolder_default_host))
                r = tess_err(err, EINVAL, "vfolder_default_host '%s' is not among vfolder_hosts",
                             m->conf.vfolder_default_host);
        return r;
}
