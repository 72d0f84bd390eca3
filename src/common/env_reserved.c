/* env_reserved.c - see env_reserved.h.
 *
 * Reserved: every TESSERA_ name (the runner reads TESSERA_PYTHON and
 * TESSERA_STARTUP_COMMAND, once TESSERA_UID and TESSERA_GID; the agent
 * sets TESSERA_SESSION_ID and friends, the fake CUDA driver's and the
 * fGPU hook's TESSERA_FAKE_CUDA_* and TESSERA_FGPU_*), and the
 * BACKENDAI_ names the agent sets as Backend.AI's agent does.  Other
 * BACKENDAI_ names stay free (images read some a user may set), and so
 * do LD_PRELOAD and LD_LIBRARY_PATH: the agent puts the fGPU hook first
 * in them and in /etc/ld.so.preload, which a user cannot change, and a
 * user's own process may preload what it likes. */
#include "common/compat.h"

#include "common/env_reserved.h"

static const char *const agent_names[] = {
        "BACKENDAI_SESSION_ID",   "BACKENDAI_KERNEL_ID",   "BACKENDAI_CLUSTER_ROLE", "BACKENDAI_CLUSTER_IDX",
        "BACKENDAI_CLUSTER_HOST", "BACKENDAI_CLUSTER_SIZE",
};

static bool key_is(const char *name, size_t len, const char *key)
{
        return strlen(key) == len && strncmp(name, key, len) == 0;
}

const char *env_reserved_why(const char *name)
{
        size_t len = strcspn(name, "=");

        if (len >= 8 && strncmp(name, "TESSERA_", 8) == 0)
                return "TESSERA_* variables are the platform's own";
        for (size_t i = 0; i < ARRAY_SIZE(agent_names); i++)
                if (key_is(name, len, agent_names[i]))
                        return "the agent sets it for every kernel";
        return NULL;
}
