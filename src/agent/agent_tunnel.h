/* agent_tunnel.h - tunnels into a kernel's network namespace, for the
 * manager's app proxy (src/manager/apps/app_proxy*.c):
 *
 *   GET /v1/kernels/{id}/tunnel?port=N   Upgrade: tessera-tunnel
 *
 * (agent_http.c) opens a TCP connection to 127.0.0.1:N, else [::1]:N,
 * from inside the container's network namespace (that of its process 1:
 * bridged containers and those with network none alike; apps may listen
 * on the container's loopback only), answers 101, and then relays raw
 * bytes both ways until either side ends.  An app that does not listen is
 * ECONNREFUSED (503), before any upgrade. */
#ifndef TESS_AGENT_TUNNEL_H
#define TESS_AGENT_TUNNEL_H

#include <stddef.h>
#include <sys/types.h>

#include "common/error.h"

#define AGENT_TUNNEL_CONNECT_MS 5000

/* A connection to port inside the network namespace of pid (a blocking,
 * close-on-exec socket; the caller owns it), or -errno. */
int agent_tunnel_connect(pid_t pid, int port, struct tess_error **err);

/* Relay between the manager's upgraded socket sock (prefix: bytes read
 * from it already) and the app's connection app_fd until both directions
 * end; closes app_fd.  Blocks. */
void agent_tunnel_run(int app_fd, int sock, const void *prefix, size_t prefix_len);

#endif
