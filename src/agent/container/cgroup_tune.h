/* cgroup_tune.h - the host's cgroup2 mount tuned for container starts.
 *
 * Moving a process into a cgroup, which runc does for every container it
 * starts, takes the kernel's global cgroup_threadgroup_rwsem for writing;
 * by default that waits for an RCU grace period, 10-20 ms a start on this
 * project's machines.  The cgroup2 mount option favordynmods (Linux 6.0+)
 * makes those moves cheap, host-wide, at a small cost to every fork and
 * exit.  The agent sets it when it starts (agent option cgroup_favordynmods,
 * on by default) if the kernel offers it and the host's cgroup2 mount
 * lacks it; it never takes it away. */
#ifndef TESSERA_AGENT_CGROUP_TUNE_H
#define TESSERA_AGENT_CGROUP_TUNE_H

#include <stdbool.h>

#include "common/error.h"

/* The remount that adds favordynmods to the mount of one line of
 * /proc/self/mountinfo, keeping its other options: *ret_target (the mount
 * point), *ret_flags (MS_REMOUNT and the mount's own flags), *ret_data (its
 * cgroup2 options and favordynmods); the caller frees the strings.  1: a
 * cgroup2 mount without the option; 0: another mount, or one that has it. */
int cgroup_favordynmods_remount(const char *mountinfo_line, char **ret_target, unsigned long *ret_flags,
                                char **ret_data);

/* Does the kernel offer the option (its name in FEATURES, normally
 * /sys/kernel/cgroup/features)? */
bool cgroup_favordynmods_offered(const char *features);

/* Set favordynmods on the first cgroup2 mount of MOUNTINFO (normally
 * /proc/self/mountinfo) when FEATURES offers it.  1: set now; 0: nothing to
 * do (set already, not offered, or no cgroup2 mount); < 0: the remount
 * failed (EPERM without CAP_SYS_ADMIN). */
int cgroup_favordynmods_set(const char *mountinfo, const char *features, struct tess_error **err);

#endif
