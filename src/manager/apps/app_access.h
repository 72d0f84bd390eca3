/* app_access.h - whether the holder of an app link, code or cookie may
 * still use it, checked at every use (docs/app-proxy.md): the keypair it
 * was given to is active, its user active and the same, not a monitor,
 * and that keypair may still use the session (api_find_session, as the
 * session routes decide), which is RUNNING with a reachable main kernel. */
#ifndef TESS_APP_ACCESS_H
#define TESS_APP_ACCESS_H

#include <stdbool.h>

#include "manager/apps/app_proxy.h"
#include "manager/apps/app_token.h"

/* c->who becomes g's holder and t the app's target.  Answers c (403, 409)
 * and returns false when the grant is no good any more; with
 * own_headers, app_own_answer_headers() first. */
bool app_access(struct api_ctx *c, const struct app_grant *g, struct app_target *t, bool own_headers);

/* Headers of the manager's own answers on the app origin (not the apps'):
 * nothing of them runs, is framed, sniffed or cached, nor says where it
 * came from. */
void app_own_answer_headers(struct api_ctx *c);

#endif
