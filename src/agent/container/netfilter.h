/* netfilter.h - the isolation of containers on the agent's bridge, in
 * nftables tables of Tessera's own (never touching anyone else's rules;
 * nothing depends on iptables).
 *
 * Every container belongs to a network group (a session: the kernels of a
 * cluster session share one, every other session has its own) with a
 * number unique on its bridge (ipam.h hands them out).  Per bridge BR:
 *
 *   table bridge tessera-BR   a port speaks IPv4 and ARP with its own
 *                             address only; frames between two ports pass
 *                             only when both are in one group (any
 *                             protocol, ARP included); frames from a port
 *                             to the host only when ARP or IPv4 to the
 *                             bridge's address (nothing is routed through
 *                             the host)
 *   table inet tessera-BR     what reaches the host from BR: only answers
 *                             to connections the host opened; nothing is
 *                             routed into or out of BR
 *
 * Groups live in the bridge table's map `port_group` (veth -> group) and
 * set `group_port` (group . veth), addresses in its set `port_addr` (veth
 * . address): one element each per container, added when it is attached
 * and deleted when it is torn down.  The chains are rebuilt atomically
 * (flush and add in one transaction) while the sets keep their elements,
 * so an agent that restarts keeps its running containers' rules.  Issue
 * 25 (NAT, egress, published ports) extends the same tables. */
#ifndef TESSERA_AGENT_NETFILTER_H
#define TESSERA_AGENT_NETFILTER_H

#include "common/error.h"

/* Create or refresh both tables of `bridge`, whose address is gw_cidr
 * ("10.88.0.1/16").  Elements already there are kept. */
int netfilter_ensure(const char *bridge, const char *gw_cidr, struct tess_error **err);

/* Put the port `veth` of `bridge`, whose container has address `ip`, in
 * group `group` (> 0); the tables are made first when they are missing. */
int netfilter_port_add(const char *bridge, const char *gw_cidr, const char *veth, const char *ip, unsigned group,
                       struct tess_error **err);

/* Take the port out of its group; a missing element or table is fine, and
 * so is group 0 (a container recorded before groups). */
int netfilter_port_remove(const char *bridge, const char *veth, const char *ip, unsigned group,
                          struct tess_error **err);

/* Delete both tables of `bridge`; missing ones are fine. */
int netfilter_remove(const char *bridge, struct tess_error **err);

/* The tables' name: "tessera-" + bridge, into out. */
#define NETFILTER_TABLE_MAX 32
void netfilter_table_name(const char *bridge, char out[NETFILTER_TABLE_MAX]);

#endif
