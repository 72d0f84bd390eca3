/* main.h - the manager program: its entry points, the steps of its
 * start-up, its route table, and the routes of this folder's own files.
 *
 *   main.c        start-up, signals, reload, shutdown
 *   routes.c      the route table the dispatcher searches (api.h)
 *   bootstrap.c   the first start on an empty database
 *   keys.c        the master key and the cluster secret
 *   dev_agent.c   `tessera dev`'s agent beside the manager
 *   cluster_events.c  the event bus shared by the managers of one PostgreSQL
 *   api_misc.c    /, /health, /metrics, /openapi.json
 *   web_static.c  the web UI's files */
#ifndef TESS_MANAGER_MAIN_H
#define TESS_MANAGER_MAIN_H

#include <jansson.h>
#include <stdbool.h>

#include "common/conf.h"
#include "common/error.h"
#include "manager/api/api.h"

struct manager;

/* Entry points (main.c). */
int manager_main(int argc, char **argv);
int dev_main(int argc, char **argv);

/* The configuration keys of the manager (main.c). */
extern const struct conf_opt manager_conf_opts[];

/* The route table (routes.c), terminated by a zero row, and every table
 * the dispatcher searches, in order (api_routes, the vfolder routes, the
 * admin routes), NULL-terminated: struct manager's `routes`. */
extern const struct route api_routes[];
extern const struct route *const api_route_tables[];

/* First start on an empty database: default domain, project, resource
 * group, keypair policy and superadmin (bootstrap.c). */
int manager_bootstrap(struct manager *m, struct tess_error **err);

/* Load or create the master key that seals keypair secrets (keys.c). */
int manager_load_master_key(struct manager *m, struct tess_error **err);
int manager_load_cluster_secret(struct manager *m, struct tess_error **err);

/* tessera dev: run / stop `tessera agent` beside the manager (dev_agent.c). */
int dev_agent_start(struct manager *m, struct tess_error **err);
void dev_agent_stop(struct manager *m);

/* Several managers on one PostgreSQL: each event published here goes to
 * the others (NOTIFY) and theirs come here (LISTEN on a connection of its
 * own); nothing on SQLite (cluster_events.c).  The state, for /health:
 * "local" (SQLite), "listening" or "reconnecting". */
int cluster_events_start(struct manager *m, struct tess_error **err);
void cluster_events_stop(struct manager *m);
const char *cluster_events_state(const struct manager *m);

void api_root_version(struct api_ctx *c); /* api_misc.c */
void api_health(struct api_ctx *c);
void api_metrics(struct api_ctx *c);
void api_openapi(struct api_ctx *c);
/* The OpenAPI document of the routes of `tables` (also written to
 * docs/openapi.json). */
json_t *api_openapi_document(const struct route *const *tables);
/* api_manager_state.c: the announcement, the service's status (freeze) */
void api_manager_announcement_get(struct api_ctx *c);
void api_manager_announcement_set(struct api_ctx *c);
void api_manager_status_get(struct api_ctx *c);
void api_manager_status_set(struct api_ctx *c);
void api_admin_gql(struct api_ctx *c); /* api_gql.c: POST /admin/gql */
void api_scheduler_operation(struct api_ctx *c); /* api_scheduler_op.c */
void api_not_served(struct api_ctx *c);          /* api_not_served.c: 501 with what to use instead */
void api_config_resource_slots(struct api_ctx *c); /* api_config.c */
void api_config_docker_registries(struct api_ctx *c);
void api_web_static(struct api_ctx *c);   /* web_static.c */
bool web_static_index(struct api_ctx *c); /* answered GET / with index.html */

#endif
