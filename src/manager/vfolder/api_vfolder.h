/* api_vfolder.h - the /folders routes (Backend.AI's vfolder API; see
 * docs/design/vfolders.md), by file:
 *
 *   api_vfolder.c           folders: create, list, info, rename, trash,
 *                           restore, purge; storage hosts
 *   api_vfolder_clone.c     clones: a new folder, filled by a background task
 *   api_vfolder_files.c     files inside a folder: list, mkdir, rename,
 *                           move, delete
 *   api_vfolder_transfer.c  request-upload / request-download tokens, tus
 *                           1.0 uploads, downloads with Range, archives
 *   api_vfolder_share.c     invitations, share / unshare, leave
 *   vfolder_quota.c         usage and quotas (GET /folders/_/usage, _/quota)
 *
 * The table is searched after api_routes and before admin_routes; literal
 * paths come before {name} patterns. */
#ifndef TESS_API_VFOLDER_H
#define TESS_API_VFOLDER_H

#include "manager/api/api.h"

extern const struct route vfolder_routes[];

void api_vfolder_create(struct api_ctx *c); /* api_vfolder.c */
void api_vfolder_list(struct api_ctx *c);
void api_vfolder_info(struct api_ctx *c);
void api_vfolder_rename(struct api_ctx *c);
void api_vfolder_update_options(struct api_ctx *c);
void api_vfolder_delete(struct api_ctx *c);
void api_vfolder_restore(struct api_ctx *c);
void api_vfolder_purge(struct api_ctx *c);
void api_vfolder_hosts(struct api_ctx *c);
void api_vfolder_all_hosts(struct api_ctx *c);
void api_vfolder_mounts(struct api_ctx *c);
void api_vfolder_allowed_types(struct api_ctx *c);

void api_vfolder_clone(struct api_ctx *c); /* api_vfolder_clone.c */

void api_vfolder_files(struct api_ctx *c); /* api_vfolder_files.c */
void api_vfolder_mkdir(struct api_ctx *c);
void api_vfolder_rename_file(struct api_ctx *c);
void api_vfolder_move_file(struct api_ctx *c);
void api_vfolder_delete_files(struct api_ctx *c);

void api_vfolder_request_upload(struct api_ctx *c); /* api_vfolder_transfer.c */
void api_vfolder_request_download(struct api_ctx *c);
void api_vfolder_tus_options(struct api_ctx *c);
void api_vfolder_tus_create(struct api_ctx *c);
void api_vfolder_tus_head(struct api_ctx *c); /* GET and HEAD of the upload URL */
/* route.admit of the tus POST and PATCH: their token, on the headers */
void api_vfolder_tus_admit(struct api_ctx *c);
void api_vfolder_tus_patch(struct api_ctx *c);
void api_vfolder_download(struct api_ctx *c);

void api_vfolder_invite(struct api_ctx *c); /* api_vfolder_share.c */
void api_vfolder_invitations(struct api_ctx *c);
void api_vfolder_invitations_sent(struct api_ctx *c);
void api_vfolder_shared(struct api_ctx *c);
void api_vfolder_invitation_accept(struct api_ctx *c);
void api_vfolder_invitation_delete(struct api_ctx *c);
void api_vfolder_share(struct api_ctx *c);
void api_vfolder_unshare(struct api_ctx *c);
void api_vfolder_leave(struct api_ctx *c);

void api_vfolder_usage(struct api_ctx *c); /* vfolder_quota.c */
void api_vfolder_quota(struct api_ctx *c);

/* ---- for the files of this folder ---- */

struct vfolder;

/* A new folder of the caller, as POST /folders makes one and a clone
 * does (api_vfolder.c). */
struct vf_new {
        const char *name, *host, *mode, *perm, *group;
        bool cloneable;
        const char *status;                 /* VF_STATUS_READY, or VF_STATUS_CLONING */
        const char *name_field, *host_field; /* the body's names for them, in messages */
};
/* Check and complete q as a create does: the name; the host (NULL: the
 * default host), usage_mode (NULL: general) and permission (NULL: rw; then
 * its short name).  -EINVAL naming the field. */
int vf_new_check(struct api_ctx *c, struct vf_new *q, struct tess_error **err);
/* Make the checked folder q: the caller's create-vfolder on its host, the
 * owner's max_vfolder_count (-EDQUOT), its name free among the owner's
 * (-EEXIST), its row, its directory, its quota scope prepared.  *ret: the
 * folder as the caller sees it. */
int vf_new_create(struct api_ctx *c, const struct vf_new *q, struct vfolder *ret, struct tess_error **err);

#endif
