/* oci_runtime.h - which OCI runtime the agent runs containers with.
 *
 * The agent option `runc` names a command, or "auto" (the default): crun
 * where it can run on this host's cgroups, else runc.  crun starts a
 * container in about half of runc's time (10 against 20-25 ms on this
 * project's machines); it takes cgroup v2 alone, or v1 controllers, but not
 * a hybrid host whose cgroup2 mount holds a controller too.  Both take the
 * same command line (run, state, kill, delete, --root, --log). */
#ifndef TESSERA_AGENT_OCI_RUNTIME_H
#define TESSERA_AGENT_OCI_RUNTIME_H

#include <stdbool.h>

/* Can crun manage containers' cgroups under ROOT (normally /sys/fs/cgroup):
 * ROOT a cgroup2 mount, or no controller in ROOT/unified/cgroup.controllers? */
bool oci_runtime_crun_fits(const char *cgroup_root);

/* The runtime for the option's value: "auto" resolves as above (crun when
 * it is installed and fits, else runc), anything else is kept. */
const char *oci_runtime_resolve(const char *option, const char *cgroup_root, const char *path);

#endif
