/* container_disk.h - the size of a container's writable layer, which the
 * manager takes from a session's resource policy (max_container_disk) or
 * request (resource_opts.disk) and the agent makes (agent/container/
 * layer_disk.h): both refuse less than this. */
#ifndef TESS_CONTAINER_DISK_H
#define TESS_CONTAINER_DISK_H

#define CONTAINER_DISK_MIN (8LL << 20) /* the smallest ext4 worth making: 8 MiB */

#endif
