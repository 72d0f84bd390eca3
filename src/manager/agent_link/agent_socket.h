/* agent_socket.h - a connection to an agent that leaves HTTP: a GET signed
 * for the agent with the cluster secret (src/common/sign.h), upgraded to a
 * WebSocket (a kernel's terminal, api_stream_pty.c) or to a tunnel into a
 * kernel's network namespace, raw bytes to one of its ports (the app
 * proxy, app_proxy*.c; the agent's side is src/agent/agent_tunnel.c).
 * Blocking, with AGENT_SOCKET_TIMEOUT_MS for the connection and the
 * answer: for threads. */
#ifndef TESS_MANAGER_AGENT_SOCKET_H
#define TESS_MANAGER_AGENT_SOCKET_H

#include "common/buf.h"
#include "common/error.h"

#define AGENT_SOCKET_TIMEOUT_MS 5000

enum agent_socket_kind {
        AGENT_SOCKET_WEBSOCKET,
        AGENT_SOCKET_TUNNEL,
};

struct agent_endpoint {
        const char *secret;   /* the cluster secret */
        const char *agent_id; /* what the signature names */
        const char *address;  /* HOST:PORT */
};

/* Open target ("/v1/kernels/ID/pty?rows=..", "/v1/kernels/ID/tunnel?port=N")
 * at the agent.  RET the socket (blocking; the caller closes it), with the
 * bytes that came after the agent's answer in *leftover; -errno: the
 * agent unreachable (EHOSTUNREACH), or refusing, with its message: ENOENT
 * (no such kernel), ECONNREFUSED (nothing listens on the port), ETIMEDOUT,
 * EACCES, EIO. */
int agent_socket_open(const struct agent_endpoint *e, const char *target, enum agent_socket_kind kind,
                      struct buf *leftover, struct tess_error **err);

#endif
