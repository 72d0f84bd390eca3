/* server_state.h - what a superadmin sets for the whole service, kept in
 * the database (manager_settings) so that every manager sees it:
 *
 *   the announcement   a message every client shows (Backend.AI's CLI
 *                      prints it before each command; the web UI on top)
 *   the frozen state   maintenance: sessions and folders already there go
 *                      on, nothing new is created (routes flagged
 *                      ROUTE_CREATES answer 503 server-frozen) until a
 *                      superadmin unfreezes
 *
 * A manager reads the frozen state again at most once a second, so a
 * freeze made through another manager holds everywhere within a second. */
#ifndef TESS_MANAGER_SERVER_STATE_H
#define TESS_MANAGER_SERVER_STATE_H

#include <stdbool.h>

#include "common/error.h"

struct manager;

#define ANNOUNCEMENT_MAX 16384 /* bytes of an announcement's message */

/* The announcement: *message is "" when none (free it). */
int server_announcement_get(struct manager *m, bool *enabled, char **message, struct tess_error **err);
/* Post (enabled, with a message) or take down (not enabled) the announcement. */
int server_announcement_set(struct manager *m, bool enabled, const char *message, struct tess_error **err);

/* Is the service frozen?  (When the database cannot say, the state last
 * read stands: the freeze is an administrator's convenience, not a
 * security boundary.) */
bool server_frozen(struct manager *m);
int server_set_frozen(struct manager *m, bool frozen, struct tess_error **err);

#endif
