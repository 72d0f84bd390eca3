/* session_environ.c - see session_environ.h.  A reserved name is refused
 * rather than dropped: a user who sets TESSERA_UID expects it to do
 * something, and the 400 says it does not (the agent drops such names
 * too, for sessions stored before this check and for images). */
#include "common/compat.h"

#include "common/env_reserved.h"
#include "manager/sessions/session_environ.h"

#define ENV_NAME_MAX 256

int session_environ_check(const json_t *env, const char *field, struct tess_error **err)
{
        const char *k, *why;
        json_t *v;

        json_object_foreach((json_t *)env, k, v) {
                if (!*k || strchr(k, '=') || strlen(k) > ENV_NAME_MAX)
                        return tess_err(err, EINVAL, "'%s' has an invalid variable name '%.64s'", field, k);
                if ((why = env_reserved_why(k)))
                        return tess_err(err, EINVAL, "'%s.%.64s' is reserved (%s): a session may not set it",
                                        field, k, why);
                if (!json_is_string(v))
                        return tess_err(err, EINVAL, "'%s.%.64s' must be a string", field, k);
        }
        return 0;
}
