/* session_environ.h - a session's environment as a user sends it
 * (config.environ), checked: names, values, and none of the names the
 * platform reserves (common/env_reserved.h). */
#ifndef TESS_SESSION_ENVIRON_H
#define TESS_SESSION_ENVIRON_H

#include <jansson.h>

#include "common/error.h"

/* 0, or -EINVAL with a message naming field.NAME: a name empty, with '=',
 * longer than 256 bytes or reserved (TESSERA_UID, BACKENDAI_KERNEL_ID,
 * ...), or a value that is not a string.  env: an object. */
int session_environ_check(const json_t *env, const char *field, struct tess_error **err);

#endif
