/* container_teardown.c - what a container leaves behind once runc has
 * deleted it: its rootfs mount, idmapped copies a start left, its veth,
 * its network group's rules and network namespace, its address
 * (container-internal.h).  The monitor calls it when the container
 * exits; container.c when a create fails or a container is destroyed or
 * removed. */
#include "common/compat.h"

#include "agent/container/container-internal.h"
#include "agent/container/ipam.h"
#include "agent/container/netfilter.h"
#include "agent/container/netns.h"
#include "agent/container/rootfs.h"
#include "agent/container/userns.h"

static void keep_first(int *first, int r, struct tess_error **err, struct tess_error *e)
{
        if (r >= 0)
                return;
        if (*first == 0 && err) {
                *err = e;
                *first = r;
                return;
        }
        tess_error_free(e);
}

int container_teardown(const struct container_record *rec, struct tess_error **err)
{
        struct tess_error *e = NULL;
        int first = 0;

        keep_first(&first, rootfs_umount(rec->rootfs, &e), err, e);
        if (rec->idmap_stage) /* the rootfs the runtime knows, what a start left */
                userns_stage_remove(rec->idmap_stage, NULL);
        if (rec->netns) {
                e = NULL;
                keep_first(&first, netns_detach(rec->veth, &e), err, e);
                e = NULL;
                keep_first(&first, netfilter_port_remove(rec->bridge, rec->veth, rec->ip, rec->netgroup, &e), err, e);
                e = NULL;
                keep_first(&first, netns_remove(rec->netns, &e), err, e);
                ipam_release(rec->ipam_dir, rec->ip, rec->id);
        }
        return first;
}
