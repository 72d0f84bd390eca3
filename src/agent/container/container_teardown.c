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

/* The first failure's error into *err; later ones are dropped.  (r and e
 * are the results of a call made before: as arguments of one call, the
 * order in which C evaluates them is unspecified, and reading e before the
 * call that sets it once handed back a failure without its error.) */
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
        int first = 0, r;

        r = rootfs_umount(rec->rootfs, &e);
        keep_first(&first, r, err, e);
        if (rec->idmap_stage) /* the rootfs the runtime knows, what a start left */
                userns_stage_remove(rec->idmap_stage, NULL);
        if (rec->netns) {
                e = NULL;
                r = netns_detach(rec->veth, &e);
                keep_first(&first, r, err, e);
                e = NULL;
                r = netfilter_port_remove(rec->bridge, rec->veth, rec->ip, rec->netgroup, &e);
                keep_first(&first, r, err, e);
                e = NULL;
                r = netns_remove(rec->netns, &e);
                keep_first(&first, r, err, e);
                ipam_release(rec->ipam_dir, rec->ip, rec->id);
        }
        return first;
}
