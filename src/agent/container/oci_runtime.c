/* oci_runtime.c - the agent's choice of OCI runtime (oci_runtime.h). */
#include "common/compat.h"

#include <sys/stat.h>

#include "agent/container/cgroup_stats.h"
#include "agent/container/oci_runtime.h"
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

bool oci_runtime_in_path(const char *name, const char *path)
{
        _cleanup_free_ char *dirs =
                xstrdup(path ? path : "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
        char *save = NULL;

        for (char *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
                _cleanup_free_ char *file = xasprintf("%s/%s", d, name);
                struct stat st;
                if (stat(file, &st) == 0 && S_ISREG(st.st_mode) && access(file, X_OK) == 0)
                        return true;
        }
        return false;
}

const char *oci_runtime_resolve(const char *option, const char *cgroup_root, const char *path)
{
        if (!streq(option, "auto"))
                return option;
        if (oci_runtime_in_path("crun", path) && oci_runtime_crun_fits(cgroup_root))
                return "crun";
        return "runc";
}
