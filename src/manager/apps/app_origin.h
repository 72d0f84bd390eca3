/* app_origin.h - where browsers reach the apps and the web UI
 * (docs/app-proxy.md, "An origin of its own").
 *
 * Apps are never served on the API's and web UI's origin: the app
 * listener (conf.app_listen) serves them and nothing else.  Its URL for
 * browsers is, first found:
 *
 *   the resource group's wsproxy_addr     (a proxy in front of it)
 *   conf.app_url                          *.apps.example.org (https): the
 *                                         "*" becomes the session's id, an
 *                                         origin per session
 *   the API's host name, app port         http://HOST:APP_PORT
 *
 * The web UI's URL (where an app link checks the user's login) is
 * conf.web_url, else the host name the browser used with the API's port. */
#ifndef TESS_APP_ORIGIN_H
#define TESS_APP_ORIGIN_H

#include <stdbool.h>

struct api_ctx;

/* The apps' URL for session (no trailing slash); group_addr: the session's
 * resource group's wsproxy_addr or NULL.  Caller frees. */
char *app_origin(struct api_ctx *c, const char *session, const char *group_addr);

/* The web UI's URL (no trailing slash), as seen from c's request on the
 * app listener.  Caller frees. */
char *app_web_origin(struct api_ctx *c);

/* With a host name per session (conf.app_url with "*"): whether c's Host
 * is session's own.  Always true otherwise. */
bool app_host_is_sessions(struct api_ctx *c, const char *session);

#endif
