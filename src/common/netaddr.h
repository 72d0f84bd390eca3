/* netaddr.h - "HOST:PORT" listen addresses (IPv4), shared by the
 * manager's and the agent's HTTP servers. */
#ifndef TESS_NETADDR_H
#define TESS_NETADDR_H

#include <netinet/in.h>

#include "error.h"

/* HOST may be empty or "*" (any), "localhost" or a dotted quad; PORT 0
 * asks the kernel for a free one. */
int netaddr_parse_listen(const char *listen, struct sockaddr_in *ret, struct tess_error **err);

#endif
