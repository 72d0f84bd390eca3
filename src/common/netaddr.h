/* netaddr.h - "HOST:PORT" addresses: listen addresses (IPv4) of the
 * manager's and the agent's HTTP servers, and TCP connections to agents
 * and to apps in containers. */
#ifndef TESS_NETADDR_H
#define TESS_NETADDR_H

#include <netinet/in.h>

#include "common/error.h"

/* HOST may be empty or "*" (any), "localhost" or a dotted quad; PORT 0
 * asks the kernel for a free one. */
int netaddr_parse_listen(const char *listen, struct sockaddr_in *ret, struct tess_error **err);

/* A TCP connection to "HOST:PORT" (a name, IPv4, or [IPv6]) within
 * timeout_ms: a blocking, close-on-exec socket, or -errno (ECONNREFUSED,
 * ETIMEDOUT, EHOSTUNREACH when the name does not resolve, EINVAL). */
int netaddr_connect(const char *address, int timeout_ms, struct tess_error **err);

#endif
