/* vfolder_hosts.h - the storage hosts of virtual folders, as the manager
 * and the agents are configured with them (`vfolder_hosts = NAME=PATH,...`:
 * the same names everywhere, each an absolute directory: a local one, or
 * the same network mount on every node). */
#ifndef TESS_VFOLDER_HOSTS_H
#define TESS_VFOLDER_HOSTS_H

#include <stdbool.h>
#include <stddef.h>

#include "common/error.h"

struct vf_host {
        char *name;
        char *path; /* absolute, no trailing slash */
};

struct vf_hosts {
        struct vf_host *v;
        size_t n;
};

/* Parse "NAME=PATH,NAME=PATH" (spaces after commas allowed).  Names are
 * 1-64 of [A-Za-z0-9._-] starting with a letter or digit, unique.
 * -EINVAL with a message (and nothing in *ret) otherwise. */
int vf_hosts_parse(const char *spec, struct vf_hosts *ret, struct tess_error **err);
void vf_hosts_release(struct vf_hosts *h);
const struct vf_host *vf_hosts_find(const struct vf_hosts *h, const char *name);

/* The name rule above (also the manager's for domains, projects...). */
bool vf_host_name_valid(const char *s);

#endif
