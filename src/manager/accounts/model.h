/* model.h - operations on the tenancy model shared by the bootstrap, the
 * admin API and the auth routes: creating users and keypairs, project
 * membership, and which resource groups a caller may use. */
#ifndef TESS_MODEL_H
#define TESS_MODEL_H

#include <stdbool.h>

#include "common/error.h"

struct manager;
struct db_rows;
struct api_ctx;

struct new_user {
        const char *email;
        const char *username;   /* defaults to the email */
        const char *password;
        const char *password_hash; /* password's, made already (off the loop), or NULL */
        const char *domain;
        const char *role;       /* "user" when NULL */
        const char *full_name;
        const char *status;     /* "active" when NULL */
        bool need_password_change;
};

/* Emails and usernames are one namespace (a login names one user): the
 * email and the username, when given, must not be another user's email
 * or username (case ignored; except_id: the user being changed, or
 * NULL), -EEXIST; a username with '@' must be the user's own email,
 * -EINVAL (so nobody takes an address before its owner's account). */
int model_check_login_names(struct manager *m, const char *email, const char *username, const char *except_id,
                            struct tess_error **err);

/* Insert a user; ret_id gets its UUID.  -EEXIST if email/username taken,
 * -ENOENT if the domain does not exist, -EINVAL on bad fields. */
int model_create_user(struct manager *m, const struct new_user *u, char ret_id[37], struct tess_error **err);

/* Insert a keypair for user_id.  access/secret may be NULL to generate.
 * The secret is stored sealed under the master key. */
int model_create_keypair(struct manager *m, const char *user_id, const char *policy, bool is_main,
                         const char *access_key, const char *secret_key, char ret_access[21], char ret_secret[41],
                         struct tess_error **err);

int model_add_member(struct manager *m, const char *project_id, const char *user_id, struct tess_error **err);

/* Is user a member of project? */
int model_is_member(struct manager *m, const char *project_id, const char *user_id, struct tess_error **err);

/* Resource groups the keypair may use in the project: the union of those
 * associated with the domain, the project and the keypair, active only.
 * Returns 1 if `rg` is among them, 0 if not. */
int model_rg_allowed(struct manager *m, const char *rg, const char *domain, const char *project_id,
                     const char *access_key, struct tess_error **err);
/* Their names, one row each, by name. */
int model_rg_list(struct manager *m, const char *domain, const char *project_id, const char *access_key,
                  struct db_rows **ret, struct tess_error **err);
/* First allowed resource group (by name) into ret (size n); -ENOENT if none. */
int model_rg_default(struct manager *m, const char *domain, const char *project_id, const char *access_key,
                     char *ret, size_t n, struct tess_error **err);

/* The id of project `name` (or id) in `domain` into ret_id.  1 found, 0 not. */
int model_project_id(struct manager *m, const char *domain, const char *name, char ret_id[37],
                     struct tess_error **err);

/* The same for an active project: where sessions start.  1 found, 0 not. */
int model_active_project_id(struct manager *m, const char *domain, const char *name, char ret_id[37],
                            struct tess_error **err);

/* Take user out of project (nothing if not a member). */
int model_remove_member(struct manager *m, const char *project_id, const char *user_id, struct tess_error **err);

/* The routes of accounts: api_auth.c (the caller's login, role, password)
 * and api_scopes.c (the projects and resource groups the caller may use). */
void api_auth_authorize(struct api_ctx *c);
void api_auth_role(struct api_ctx *c);
void api_auth_update_password(struct api_ctx *c);
void api_projects_list(struct api_ctx *c);
void api_scaling_groups(struct api_ctx *c);

#endif
