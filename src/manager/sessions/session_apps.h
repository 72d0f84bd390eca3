/* session_apps.h - the apps a session's image declares (its
 * ai.backend.service-ports label, common/service_ports.h) and where they
 * are reached: what the session routes show as servicePorts and what
 * start-service and shutdown-service (api_session_apps.c) act on. */
#ifndef TESS_SESSION_APPS_H
#define TESS_SESSION_APPS_H

#include <stddef.h>

#include <jansson.h>

#include "common/error.h"
#include "common/service_ports.h"

struct manager;

/* The session's image's labels (*ret_labels, NULL when the image is not
 * known), its resource group's wsproxy_addr (*ret_wsproxy, NULL when
 * unset) and its owner's user id.  ENOENT when the session is gone. */
int session_app_facts(struct manager *m, const char *session, json_t **ret_labels, char **ret_wsproxy,
                      char *ret_user, size_t user_len, struct tess_error **err);

/* The apps an image's labels declare (none without the label); -EINVAL
 * naming the session's image when the label does not parse. */
int session_apps_of_labels(const json_t *labels, struct service_ports *ret, struct tess_error **err);

/* The image's apps of a session (an image without the label has none). */
int session_apps(struct manager *m, const char *session, struct service_ports *ret, struct tess_error **err);

/* A session's servicePorts: the apps of its image's ai.backend.service-ports
 * label, [{name, protocol, ports: [PORT...], container_ports: the same}]
 * (empty without the label or the session); caller owns. */
json_t *api_session_service_ports(struct manager *m, const char *session);

#endif
