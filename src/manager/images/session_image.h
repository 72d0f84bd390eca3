/* session_image.h - the image of a session create: how a reference
 * (alias, name:tag, full reference) finds a registered image, whether the
 * caller may use it (its resource bounds apply through
 * session_image_resources(), session_request.h). */
#ifndef TESS_SESSION_IMAGE_H
#define TESS_SESSION_IMAGE_H

#include <stdbool.h>

#include "common/error.h"
#include "manager/core/manager.h"
#include "manager/db/db.h"

/* Who looks at private images (those of session commits, owner_id set):
 * their owner sees them, a superadmin all, an admin those of the users of
 * their domain but not a superadmin's (the rule of api/authz.h). */
struct image_viewer {
        const char *user_id;
        const char *domain;
        bool admin, superadmin;
};
/* A condition on a row of the images table, bound with IMAGE_VIEWER_ARGS. */
#define IMAGE_VISIBLE_SQL                                                                  \
        " (images.owner_id IS NULL OR images.owner_id = ? OR ? = 1 OR (? = 1 AND EXISTS (" \
        "SELECT 1 FROM users vu WHERE vu.id = images.owner_id AND vu.domain_name = ? AND vu.role <> 'superadmin')))"
#define IMAGE_VIEWER_ARGS(v) DB_TEXT((v)->user_id), DB_BOOL((v)->superadmin), DB_BOOL((v)->admin), DB_TEXT((v)->domain)
/* The caller's view (c->who), or the view of the owner `user_id` a caller acts for. */
#define IMAGE_VIEWER_OF(c, owner_user_id)                                                                     \
        ((struct image_viewer){ .user_id = (owner_user_id), .domain = (c)->who.domain,                        \
                                .admin = (c)->who.role == ROLE_ADMIN, .superadmin = (c)->who.role == ROLE_SUPERADMIN })

/* `ref` -> the registered image row (id, name, tag, registry, min_resources,
 * max_resources, labels) for `arch`, as Backend.AI resolves it: an alias;
 * else "name[:tag]" (no tag: latest), the whole name or its last path
 * components ("python:3.11" finds "registry.local/stable/python:3.11"),
 * or the canonical "registry/name:tag" of an image whose registry is a
 * column of its own ("cr.test/stable/python:3.11" finds name
 * "stable/python" of registry "cr.test").
 * -EINVAL naming the image when it is not registered, hidden, or its
 * registry is not among the domain's allowed_docker_registries (when that
 * list is not empty).  A private image (a session commit's, owner_id set)
 * is found only when `viewer` may see it. */
int session_image_resolve(struct manager *m, const char *ref, const char *arch, const char *domain,
                          const struct image_viewer *viewer, struct db_rows **ret, struct tess_error **err);

/* 1 when the domain's allowed_docker_registries (empty: all) allows the
 * registry of an image (its registry column, else the host-like first
 * component of its name; images without one, imported into the manager,
 * are always allowed), 0 if not. */
int session_image_allowed(struct manager *m, const char *domain, const char *registry_col, const char *name,
                          struct tess_error **err);

#endif
