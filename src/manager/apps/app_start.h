/* app_start.h - the command that starts an app of an image for
 * start-service (docs/app-proxy.md): the image's label
 * ai.backend.service-start.<app> (a JSON array of strings), else the
 * built-in template of a well-known app (jupyter, jupyterlab); in each
 * word {port} becomes the port and {prefix} the app's path prefix on the
 * proxy ("/apps/<session>/<app>/", which the app must serve under), then
 * the caller's arguments follow. */
#ifndef TESS_APP_START_H
#define TESS_APP_START_H

#include <jansson.h>

#include "common/error.h"

#define APP_START_LABEL_PREFIX "ai.backend.service-start."
#define APP_START_ARGS_MAX     64
#define APP_START_WAIT_MS      60000 /* for the app's port to listen */

/* labels: the image's labels (an object, or NULL).  arguments: NULL, or an
 * object {"--flag": "value" | number | true | null} (a flag alone for
 * true and null).  OUT ret_argv - NULL-terminated; caller frees each and
 * the array.  RET 0; -ENOENT when the app has neither label nor
 * template; -EINVAL for a malformed label or argument. */
int app_start_argv(const json_t *labels, const char *app, int port, const char *prefix, const json_t *arguments,
                   char ***ret_argv, struct tess_error **err);

/* The agent's start-service body (src/agent/agent_http.c) for app on
 * port, run under name: {name, port, argv (app_start_argv's), env (a JSON
 * array of KEY=value strings, or NULL for none), waitMs}.  RET as
 * app_start_argv; *ret: caller owns. */
int app_start_request(const json_t *labels, const char *app, const char *name, int port, const char *prefix,
                      const json_t *arguments, const json_t *env, json_t **ret, struct tess_error **err);

#endif
