/* ipam.h - IPv4 addresses for containers on the agent's bridge.
 *
 * One claim file per address taken, <dir>/<a.b.c.d>, holding the owner (a
 * container id); claims are made under an flock on <dir>/lock.  They live
 * on disk, so allocations survive agent restarts and are shared by agents
 * using the same directory.  A claim whose owner no longer has a directory
 * (<owners_dir>/<owner>: the container was removed, or its creation died
 * half-way) is stale and handed out again.  The lowest free address is
 * taken; the gateway (the bridge's own address), the network and the
 * broadcast addresses never are.
 *
 * A claim also names the container's network group (netfilter.h: who it
 * may reach on the bridge) and that group's number on the bridge, unique
 * among the groups of live claims: "owner\ngroup\nnumber\n".  A group
 * keeps its number while one of its containers lives. */
#ifndef TESSERA_AGENT_IPAM_H
#define TESSERA_AGENT_IPAM_H

#include <stdint.h>

#include "common/error.h"

#define IPAM_ADDR_LEN 16

/* "10.88.0.1/16" -> address (host byte order) and prefix (8..30). */
int ipam_parse_cidr(const char *cidr, uint32_t *ret_addr, int *ret_prefix, struct tess_error **err);
void ipam_format(uint32_t addr, char out[IPAM_ADDR_LEN]);

/* Claim an address of the subnet of `cidr` (the gateway's address) for
 * `owner`, a member of network group `group`, whose number (> 0) is
 * returned in ret_group.  ENOSPC when the subnet is full. */
int ipam_alloc(const char *dir, const char *cidr, const char *owner, const char *group, const char *owners_dir,
               char ret_ip[IPAM_ADDR_LEN], unsigned *ret_group, struct tess_error **err);

/* Drop the claim on ip if `owner` holds it. */
void ipam_release(const char *dir, const char *ip, const char *owner);

#endif
