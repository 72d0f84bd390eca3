/* bridge.h - which bridge an agent's containers go on, and its life.
 *
 * An agent names its bridge and subnet in its configuration, or leaves
 * both out: then it takes the first of tessera0 (10.88.0.1/16), tessera1
 * (10.89.0.1/16), ... tessera<N> (10.<88+N>.0.1/16) that no other agent in
 * its network namespace has claimed (netns_bridge_claim: the choice is
 * made under that lock) and whose subnet overlaps no address or route of
 * another interface of the host.  The choice is remembered in
 * <state_dir>/bridge and tried first on the next start, so that an agent
 * that restarts finds its running containers' bridge again.  A configured
 * bridge is claimed and checked the same way; a clash is an error.
 *
 * The agent makes the bridge (named as Tessera's by its alias) and its
 * nftables tables (netfilter.h) when it starts, and removes both when it
 * stops with no container left on the bridge. */
#ifndef TESSERA_AGENT_BRIDGE_H
#define TESSERA_AGENT_BRIDGE_H

#include <stdbool.h>

#include "common/error.h"

#define BRIDGE_AUTO_MAX 64 /* tessera0 .. tessera63 */

struct bridge_choice {
        char *name, *cidr; /* the bridge and its address, "10.88.0.1/16" */
        bool automatic;    /* chosen here, not configured */
        int claim_fd;      /* the claim, held while open */
};

/* Choose and claim the bridge: conf_name and conf_cidr as configured
 * (NULL or "": not set; both unset: automatic; one unset: tessera0 or
 * 10.88.0.1/16 for it).  `lock_dir` holds the claims. */
int bridge_choose(const char *lock_dir, const char *state_dir, const char *conf_name, const char *conf_cidr,
                  struct bridge_choice *ret, struct tess_error **err);

/* Make the bridge (unless it exists) and its tables; refresh the tables'
 * rules, keeping the elements of running containers, and put every
 * container of state_dir still on the bridge (back) in its group. */
int bridge_up(const struct bridge_choice *b, const char *state_dir, struct tess_error **err);

/* When no container is left on the bridge: delete its tables, and the
 * bridge itself if Tessera made it.  RET 1 removed, 0 kept (in use). */
int bridge_down_if_unused(const struct bridge_choice *b, struct tess_error **err);

/* Drop the claim and free the strings. */
void bridge_choice_release(struct bridge_choice *b);

/* Does `net/prefix` overlap an IPv4 address or route of an interface
 * other than `except`?  Names the first clash in ret_what (caller frees). */
bool bridge_subnet_taken(uint32_t net, int prefix, const char *except, char **ret_what);

#endif
