/* oci_runtime.c - the agent's choice of OCI runtime (oci_runtime.h). */
#include "common/compat.h"

#include "agent/container/cgroup_stats.h"
#include "agent/container/oci_runtime.h"
#include "agent/container/proc.h"
#include "common/fs.h"

bool oci_runtime_crun_fits(const char *cgroup_root)
{
        _cleanup_free_ char *path = xasprintf("%s/unified/cgroup.controllers", cgroup_root), *text = NULL;
        size_t len;

        if (cgroup_mode_detect(cgroup_root) == CGROUP_V2)
                return true;
        if (fs_read_file(path, 4096, &text, &len, NULL) < 0)
                return true; /* v1 alone */
        return len == 0 || strspn(text, " \n") == len;
}

const char *oci_runtime_resolve(const char *option, const char *cgroup_root, const char *path)
{
        if (!streq(option, "auto"))
                return option;
        if (proc_in_path("crun", path) && oci_runtime_crun_fits(cgroup_root))
                return "crun";
        return "runc";
}
