/* vfolder.h - virtual folders: storage hosts, the folder model, and what
 * a caller may do with a folder (docs/design/vfolders.md).
 *
 * A storage host is a name and a directory (conf `vfolder_hosts`, the
 * same names on the manager and every agent).  A folder is a row of
 * `vfolders` owned by a user or a project, and a directory on its host at
 *   <host path>/<user|project>-<owner uuid>/<id 0-1>/<id 2-3>/<id 4-31>
 * (the first component is the quota scope).  The caller's permission on a
 * folder is ro, rw or wd (rw plus delete): the owner of a user folder has
 * wd, an invitee what it accepted; members of a project get the folder's
 * own permission unless `share` set theirs; domain admins wd on their
 * domain's project folders. */
#ifndef TESS_VFOLDER_H
#define TESS_VFOLDER_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "common/error.h"
#include "common/vfolder_hosts.h"

struct api_ctx;
struct manager;

/* Under each host's path: the partial tus uploads, one file per upload
 * named by its id (api_vfolder_transfer.c, vfolder_upload_sweep.c). */
#define VF_UPLOADS_DIR ".uploads"

enum vf_perm {
        VF_PERM_NONE,
        VF_PERM_RO,
        VF_PERM_RW,
        VF_PERM_WD,
};

const char *vf_perm_name(enum vf_perm p);
/* "ro", "rw", "wd" (also Backend.AI's "read-only", "read-write",
 * "write-delete"); -EINVAL otherwise. */
int vf_perm_parse(const char *s);

/* Per-host permissions, granted by the union of the caller's domain,
 * keypair resource policy and (for project folders) project. */
enum vf_host_perm {
        VFH_CREATE = 1 << 0,   /* create-vfolder */
        VFH_MODIFY = 1 << 1,   /* modify-vfolder: rename, share */
        VFH_DELETE = 1 << 2,   /* delete-vfolder */
        VFH_MOUNT = 1 << 3,    /* mount-in-session */
        VFH_UPLOAD = 1 << 4,   /* upload-file */
        VFH_DOWNLOAD = 1 << 5, /* download-file */
        VFH_INVITE = 1 << 6,   /* invite-others */
        VFH_SET_USER_PERM = 1 << 7, /* set-user-specific-permission */
        VFH_ALL = (1 << 8) - 1,
};

/* The names, NULL-terminated, in bit order. */
extern const char *const vf_host_perm_names[];
/* A JSON list of permission names -> bits; -EINVAL names a bad one. */
int vf_host_perms_parse(const json_t *list, unsigned *ret, struct tess_error **err);
json_t *vf_host_perms_json(unsigned bits);
/* admin field check: an object of host name -> list of permission names. */
int vf_allowed_hosts_check(const json_t *v, struct tess_error **err);
/* The whole set, as stored in allowed_vfolder_hosts for the default host. */
char *vf_host_perms_all_text(const char *host);

/* Storage hosts: common/vfolder_hosts.h. */

/* Folder names: 1-64 of [A-Za-z0-9._-] starting with a letter or digit,
 * or a dot and such a name (auto-mounted); not a reserved name. */
bool vf_valid_name(const char *s);

#define VF_STATUS_READY   "ready"
#define VF_STATUS_TRASH   "delete-pending"
#define VF_STATUS_CLONING "cloning" /* being filled by its clone's task: listed, used by nothing */

/* A folder as the caller sees it. */
struct vfolder {
        char id[37];
        char name[72];
        char host[72];
        char domain[128];
        char ownership_type[8]; /* "user" or "project" */
        char owner_id[37];
        char creator[256];
        char usage_mode[16];
        char permission[4]; /* the folder's own: project members' default */
        char status[24];
        bool cloneable; /* others who may read it may clone it (update-options) */
        int64_t created_at, modified_at, deleted_at;
        enum vf_perm perm; /* the caller's */
        bool is_owner;     /* the caller owns it (its user, or an admin of its project's domain) */
        char path[PATH_MAX]; /* the directory on this manager ("" if its host is not configured) */
};

/* "<user|project>-<owner uuid>/<id[0:2]>/<id[2:4]>/<id[4:]>" (dashes dropped). */
void vf_relpath(const char *ownership_type, const char *owner_id, const char *id, char *buf, size_t n);
/* "<user|project>-<owner uuid>": the quota scope's directory under a host. */
void vf_scope_dir(const char *ownership_type, const char *owner_id, char *buf, size_t n);

/* The folder `ref` (a name, or an id) among those the caller may use, in
 * `status` (VF_STATUS_*).  A name several folders share picks the caller's
 * own, then a project's, then one shared with it; a tie is -EEXIST (409)
 * asking for the id.  -ENOENT (404) when none; -EACCES (403) when the
 * caller's permission is below `need`. */
int vf_find(struct api_ctx *c, const char *ref, const char *status, enum vf_perm need, struct vfolder *ret,
            struct tess_error **err);
/* The same for a given user of `domain` with `role` (enum role): a
 * session's owner, whose folders it mounts. */
int vf_find_as(struct manager *m, const char *user_id, const char *domain, int role, const char *ref,
               enum vf_perm need, struct vfolder *ret, struct tess_error **err);
/* Every folder in `status` the caller may use; json objects as GET
 * /folders lists them (with VF_STATUS_READY, the folders being cloned
 * too).  all: admins see every folder of their domain(s). */
int vf_list(struct api_ctx *c, const char *status, bool all, const char *project_id, json_t **ret,
            struct tess_error **err);
json_t *vf_json(const struct vfolder *f);

/* The caller's permissions on host (bits of enum vf_host_perm), from its
 * domain, keypair policy and, when project_id is not NULL, that project.
 * Superadmins have all on every configured host. */
int vf_host_perms(struct api_ctx *c, const char *host, const char *project_id, unsigned *ret,
                  struct tess_error **err);
/* The same for a principal that is not the caller (a session's owner):
 * its domain, keypair policy and role (enum role). */
int vf_host_perms_of(struct manager *m, const char *domain, const char *policy, int role, const char *host,
                     const char *project_id, unsigned *ret, struct tess_error **err);
/* -EACCES unless the caller has `need` on the folder's host. */
int vf_need_host_perm(struct api_ctx *c, const struct vfolder *f, unsigned need, struct tess_error **err);

/* Is the folder mounted by a session that is not over?  1 yes, 0 no. */
int vf_mounted(struct manager *m, const char *id, struct tess_error **err);

/* ---- usage and quotas (vfolder_quota.c) ---- */

struct vf_usage {
        int64_t bytes; /* allocated bytes of every file (what a quota counts) */
        int64_t files; /* files and directories, the folder itself excluded */
};

/* What the directory `path` holds (0 when it does not exist): allocated
 * bytes, each inode once, symlinks not followed, the walk bounded. */
int vf_usage_dir(const char *path, struct vf_usage *ret, struct tess_error **err);
/* What the folder holds now. */
int vf_usage_of(const struct vfolder *f, struct vf_usage *ret, struct tess_error **err);
/* After the folder's directory is made: put it under its quota scope's
 * filesystem quota where the host's filesystem has one (XFS project
 * quotas); nothing elsewhere. */
int vf_quota_prepare(struct manager *m, const struct vfolder *f, struct tess_error **err);
/* May `add_bytes` more go into the folder?  -EDQUOT (412) naming the
 * scope's limit and use when the owner's quota scope would exceed it. */
int vf_quota_check(struct manager *m, const struct vfolder *f, int64_t add_bytes, struct tess_error **err);
/* The limit of the folder's quota scope (0: none) and that scope's
 * directory (for a walk off the loop; "" when its host is not here). */
int vf_quota_limit(struct manager *m, const struct vfolder *f, int64_t *ret_limit, char *scope_dir, size_t n,
                   struct tess_error **err);
/* `bytes` went into the folder without a check (a clone's copy): count
 * them in its scope's cached use until the next walk. */
void vf_quota_charge(struct manager *m, const struct vfolder *f, int64_t bytes);

/* Parse conf.vfolder_hosts (default local=state_dir/vfolders) and create
 * each host's directory (vfolder.c). */
int vfolder_hosts_open(struct manager *m, struct tess_error **err);

/* Remove partial folder uploads idle for conf.vfolder_upload_keep, now
 * and from time to time (vfolder_upload_sweep.c); start the clones'
 * leases and their sweep too (vf_clone_sweep_start). */
void vfolder_upload_sweep_start(struct manager *m);
/* Keep the leases of this manager's clones, and remove the folders of
 * clones that ended without finishing (api_vfolder_clone.c): now and
 * every conf.task_lease / 4. */
void vf_clone_sweep_start(struct manager *m);

#endif
