/* env_reserved.h - the environment variables a session's user may not
 * set: the control variables of the runner (src/runner) and of the
 * agent's containers, and the names the agent sets for every kernel
 * (session and kernel ids, cluster roles, the GPU wiring).  The manager
 * refuses them in a session's environment (400); the agent drops them
 * from whatever environment it is sent and from the image's; both ask
 * this one list, so that they cannot disagree. */
#ifndef TESS_ENV_RESERVED_H
#define TESS_ENV_RESERVED_H

#include <stdbool.h>

/* NULL when a user may set NAME (the part before '=' of "NAME=value"
 * counts, so a whole KEY=VALUE string may be passed), else why not, as a
 * phrase: "TESSERA_* variables are the platform's own". */
const char *env_reserved_why(const char *name);

static inline bool env_reserved(const char *name)
{
        return env_reserved_why(name) != NULL;
}

#endif
