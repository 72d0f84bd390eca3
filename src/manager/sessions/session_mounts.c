/* session_mounts.c - resolving the folders a session mounts, for its
 * owner (see session_mounts.h). */
#include "common/compat.h"

#include "manager/api/api.h"
#include "manager/core/manager.h"
#include "manager/db/db.h"
#include "manager/sessions/session_mounts.h"
#include "manager/vfolder/vfolder.h"

static bool under(const char *path, const char *root, bool root_itself)
{
        size_t n = strlen(root);

        if (strncmp(path, root, n) != 0)
                return false;
        return path[n] == '/' ? path[n + 1] != '\0' : path[n] == '\0' && root_itself;
}

int session_mount_target(const char *name, const char *mapped, char *buf, size_t n, struct tess_error **err)
{
        _cleanup_free_ char *raw = NULL;
        size_t len = 0;

        if (!mapped || !*mapped)
                raw = xasprintf("%s/%s", SESSION_MOUNT_HOME, name);
        else if (mapped[0] != '/')
                raw = xasprintf("%s/%s", SESSION_MOUNT_HOME, mapped);
        else
                raw = xstrdup(mapped);
        for (const char *p = raw; *p; p++)
                if ((unsigned char)*p < 0x20 || *p == 0x7f)
                        return tess_err(err, EINVAL, "folder '%s': the mount path has a control character", name);
        buf[0] = '\0';
        for (char *save = NULL, *c = strtok_r(raw, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
                if (streq(c, "."))
                        continue;
                if (streq(c, ".."))
                        return tess_err(err, EINVAL, "folder '%s': a mount path may not contain '..'", name);
                size_t cl = strlen(c);
                if (len + 1 + cl + 1 > n)
                        return tess_err(err, EINVAL, "folder '%s': the mount path is too long", name);
                buf[len++] = '/';
                memcpy(buf + len, c, cl + 1);
                len += cl;
        }
        if (!under(buf, SESSION_MOUNT_HOME, false) && !under(buf, "/data", true) && !under(buf, "/mnt", true))
                return tess_err(err, EINVAL, "folder '%s': mount path '%.256s' must be under /home/work, /data or /mnt",
                                name, mapped ? mapped : buf);
        return 0;
}

json_t *session_mount_entry(const char *id, const char *name, const char *host, const char *path, const char *target,
                            const char *perm)
{
        return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "id", id, "name", name, "host", host, "path", path, "target",
                         target, "perm", perm);
}

static const json_t *find_by(const json_t *list, const char *key, const char *value)
{
        size_t i;
        json_t *e;

        json_array_foreach(list, i, e)
                if (streq(json_string_value(json_object_get(e, key)), value))
                        return e;
        return NULL;
}

int session_mounts_add(json_t *list, json_t *entry, struct tess_error **err)
{
        const char *name = json_string_value(json_object_get(entry, "name"));
        const char *target = json_string_value(json_object_get(entry, "target"));
        const json_t *other;
        int r = 0;

        if (find_by(list, "id", json_string_value(json_object_get(entry, "id"))))
                r = tess_err(err, EINVAL, "folder '%s' is mounted twice", name);
        else if ((other = find_by(list, "target", target)))
                r = tess_err(err, EINVAL, "folders '%s' and '%s' are both mounted at '%s'",
                             json_string_value(json_object_get(other, "name")), name, target);
        if (r < 0) {
                json_decref(entry);
                return r;
        }
        json_array_append_new(list, entry);
        return 0;
}

int session_mounts_add_auto(json_t *list, json_t *entry)
{
        if (find_by(list, "id", json_string_value(json_object_get(entry, "id"))) ||
            find_by(list, "target", json_string_value(json_object_get(entry, "target")))) {
                json_decref(entry);
                return 0;
        }
        json_array_append_new(list, entry);
        return 1;
}

json_t *session_mounts_names(const json_t *list)
{
        json_t *names = json_array(), *e;
        size_t i;

        json_array_foreach(list, i, e)
                json_array_append(names, json_object_get(e, "name"));
        return names;
}

/* ---- resolving ---- */

static const char *mapped_path(const json_t *map, const char *ref, const struct vfolder *f)
{
        const json_t *v = json_object_get(map, ref);

        if (!v)
                v = json_object_get(map, f->name);
        if (!v)
                v = json_object_get(map, f->id);
        return json_string_value(v);
}

/* The owner's folder `ref` as a mount entry, at its path in `map` (by
 * the reference, its name or its id) or the default. */
static int resolve_one(struct manager *m, const struct principal *owner, const char *ref, const json_t *map,
                       struct vfolder *f, json_t **ret, struct tess_error **err)
{
        char rel[PATH_MAX], target[PATH_MAX];
        unsigned hp;
        int r = vf_find_as(m, owner->user_id, owner->domain, owner->role, ref, VF_PERM_RO, f, err);

        if (r < 0)
                return r;
        r = vf_host_perms_of(m, owner->domain, owner->resource_policy, owner->role, f->host,
                             streq(f->ownership_type, "project") ? f->owner_id : NULL, &hp, err);
        if (r < 0)
                return r;
        if (!(hp & VFH_MOUNT))
                return tess_err(err, EACCES,
                                "folder '%s': the session's owner lacks 'mount-in-session' on storage host '%s'",
                                f->name, f->host);
        r = session_mount_target(f->name, mapped_path(map, ref, f), target, sizeof(target), err);
        if (r < 0)
                return r;
        vf_relpath(f->ownership_type, f->owner_id, f->id, rel, sizeof(rel));
        *ret = session_mount_entry(f->id, f->name, f->host, rel, target, vf_perm_name(f->perm));
        return 0;
}

static bool in_mounts(const json_t *mounts, const char *ref)
{
        size_t i;
        json_t *v;

        json_array_foreach(mounts, i, v)
                if (streq(json_string_value(v), ref))
                        return true;
        return false;
}

/* Every ready dot-folder of the owner and of the session's project. */
static int add_dot_folders(struct manager *m, const struct principal *owner, const char *project_id, json_t *list,
                           struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        int r = DBQ(m->db,
                    "SELECT id FROM vfolders WHERE status = ? AND substr(name, 1, 1) = '.'"
                    " AND (ownership_type = 'user' AND owner_id = ? OR ownership_type = 'project' AND owner_id = ?)"
                    " ORDER BY name, created_at",
                    &rows, err, DB_TEXT(VF_STATUS_READY), DB_TEXT(owner->user_id), DB_TEXT(project_id));

        if (r < 0)
                return r;
        for (int i = 0; i < rows->nrows; i++) {
                struct tess_error *e = NULL;
                struct vfolder f;
                json_t *entry;
                /* one the owner may not mount is left out, not an error */
                if (resolve_one(m, owner, db_get(rows, i, 0), NULL, &f, &entry, &e) < 0) {
                        tess_error_free(e);
                        continue;
                }
                session_mounts_add_auto(list, entry);
        }
        return 0;
}

int session_mounts_resolve(struct manager *m, const struct principal *owner, const char *project_id,
                           const json_t *mounts, const json_t *mount_map, json_t **ret, struct tess_error **err)
{
        json_t *list = json_array(), *v;
        const char *key;
        struct vfolder f;
        size_t i;
        int r = 0;

        json_array_foreach(mounts, i, v) {
                const char *ref = json_string_value(v);
                json_t *entry;
                r = resolve_one(m, owner, ref, mount_map, &f, &entry, err);
                if (r >= 0)
                        r = session_mounts_add(list, entry, err);
                if (r < 0)
                        goto fail;
        }
        /* a mapped folder that mounts does not name is mounted too */
        json_object_foreach((json_t *)mount_map, key, v) {
                json_t *entry;
                if (in_mounts(mounts, key))
                        continue;
                r = resolve_one(m, owner, key, mount_map, &f, &entry, err);
                if (r >= 0 && find_by(list, "id", f.id)) {
                        json_decref(entry); /* named by its id in mounts and by its name here, or the reverse */
                        continue;
                }
                if (r >= 0)
                        r = session_mounts_add(list, entry, err);
                if (r < 0)
                        goto fail;
        }
        r = add_dot_folders(m, owner, project_id, list, err);
        if (r < 0)
                goto fail;
        *ret = list;
        return 0;
fail:
        json_decref(list);
        return r;
}
