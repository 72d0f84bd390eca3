/* session_request.h - the body of POST /session, parsed and validated.
 *
 * session_request_parse() checks every field of a create request (with
 * Backend.AI's camelCase and snake_case aliases) and fills struct
 * session_request, or fails with -EINVAL and a message naming the field.
 * It touches no database: resolving the project, image and resource group
 * is the handler's job (api_session.c).  Pointers in the result borrow from
 * the JSON body. */
#ifndef TESS_SESSION_REQUEST_H
#define TESS_SESSION_REQUEST_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "common/error.h"
#include "common/slots.h"

struct db_rows;
struct principal;

#define SESSION_MAX_CLUSTER_SIZE 64
#define SESSION_MAX_WAIT_SECONDS 3600

struct session_request {
        const char *name, *image, *type, *group, *domain, *cluster_mode, *startup_command, *bootstrap_script;
        const char *tag, *owner_access_key, *rg, *callback_url, *architecture;
        int64_t cluster_size, priority, max_wait, starts_at, batch_timeout;
        int64_t disk; /* resource_opts.disk: bytes of each container's writable layer; 0: the policy's */
        bool enqueue_only, reuse, has_max_wait;
        struct slots resources;
        json_t *environ, *mounts, *mount_map, *resource_opts, *preopen_ports, *agent_list, *dependencies;
};

int session_request_parse(json_t *body, struct session_request *q, struct tess_error **err);
/* A plain user (not an admin) may ask for a priority up to its keypair
 * resource policy's max_session_priority (default 10, the default
 * priority): above it, -EINVAL (400) naming the limit. */
int session_request_check_priority(const struct session_request *q, const struct principal *caller,
                                   struct tess_error **err);

/* The size of the session's writable layers (q->disk): what it asked for
 * (resource_opts.disk), at most its owner's keypair resource policy's
 * max_container_disk (above it, -EINVAL naming the limit), or that limit
 * when it asked for none; 0: the agents' own limit. */
int session_request_check_disk(struct session_request *q, const struct principal *owner, struct tess_error **err);

/* Fill default cpu and mem; raise what is less than the image's minimum
 * (min_resources and ai.backend.resource.min.* labels); -EINVAL when more
 * than its max_resources. */
int session_image_resources(struct session_request *q, const struct db_rows *img, struct tess_error **err);

#endif
