/* relay.h - bytes both ways between two connected sockets, in the calling
 * thread, until both directions have ended: the app proxy's tunnels (the
 * agent's end, src/agent/agent_tunnel.c) and WebSockets (the manager's
 * end, src/manager/apps/app_proxy_ws.c).  The end of one side's input is passed
 * on as shutdown(SHUT_WR) of the other; an error on either ends both. */
#ifndef TESS_RELAY_H
#define TESS_RELAY_H

#include <stddef.h>

#include "common/error.h"

#define RELAY_BUF (64u << 10) /* bytes in flight per direction */

/* The Upgrade token of the agents' tunnels into kernels, raw bytes relayed
 * both ways after the 101 (src/agent/agent_tunnel.h, src/manager/agent_link/agent_socket.h). */
#define RELAY_TUNNEL_PROTOCOL "tessera-tunnel"

struct relay_side {
        int fd;
        const void *pending; /* bytes already read for the other side, sent first */
        size_t pending_len;
};

/* Relay between a and b; moved(data), if set, runs whenever bytes went
 * from a to b.  RET 0 when both directions ended; -errno when one failed
 * (a reset peer). */
int relay_run(const struct relay_side *a, const struct relay_side *b, void (*moved)(void *data), void *data);

/* Write all of p to a socket (blocking).  RET 0; -errno. */
int relay_send_all(int fd, const void *p, size_t n, struct tess_error **err);

#endif
