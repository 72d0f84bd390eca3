/* netns.h - container networking: a network namespace kept alive by a bind
 * mount on a file (like `ip netns add`, but in a directory of ours, so that
 * runc is given the namespace by path), the agent's bridge, and one veth
 * pair per container (host end on the bridge, eth0 inside).
 *
 * Links and addresses are set with iproute2's `ip` (in batch mode, two runs
 * per container): simpler and better tested than our own netlink code, and
 * kept in this one file so that netlink can replace it.  Who reaches whom
 * on the bridge is netfilter.h's (nftables); there is no NAT yet. */
#ifndef TESSERA_AGENT_NETNS_H
#define TESSERA_AGENT_NETNS_H

#include <stdbool.h>

#include "common/error.h"

#define NETNS_IFNAME_MAX 16

/* A new, empty network namespace bound on `path` (a new file; its
 * directory is created). */
int netns_create(const char *path, struct tess_error **err);

/* Unmount and delete a namespace file; a missing one is fine. */
int netns_remove(const char *path, struct tess_error **err);

/* Create the bridge with address `gw_cidr` ("10.88.0.1/16") and bring it
 * up, unless a link of that name exists (which is then used as it is).
 * A bridge made here carries the alias NETNS_BRIDGE_ALIAS. */
#define NETNS_BRIDGE_ALIAS "tessera-bridge"
int netns_bridge_ensure(const char *bridge, const char *gw_cidr, struct tess_error **err);

/* Was the bridge made by netns_bridge_ensure() (its alias)? */
bool netns_bridge_ours(const char *bridge);

/* Has the bridge ports (veths)?  1 yes, 0 none (or no such bridge), -1
 * unknown. */
int netns_bridge_ports(const char *bridge);

/* An agent's claim on `bridge` in the network namespace it runs in, held
 * while the returned fd (close-on-exec) stays open: flock on
 * <dir>/<namespace inode>-<bridge>.lock, the agent's state_dir written in.
 * Two agents on one bridge would hand out the same addresses (each has its
 * own address claims, in its state_dir): EBUSY names the other one's
 * state_dir. */
int netns_bridge_claim(const char *dir, const char *bridge, const char *owner, struct tess_error **err);

/* Connect the namespace at `path` to the bridge: veth `host_if` on the
 * bridge, eth0 inside with ip/prefix, a default route via gw, lo up. */
int netns_attach(const char *path, const char *bridge, const char *host_if, const char *ip, int prefix, const char *gw,
                 struct tess_error **err);

/* Delete the veth pair (both ends go together); a missing one is fine. */
int netns_detach(const char *host_if, struct tess_error **err);

/* The host-side interface name for a container: "tv" + 12 hex digits of
 * a hash of key (the container's directory), into out. */
void netns_veth_name(const char *key, char out[NETNS_IFNAME_MAX]);

#endif
