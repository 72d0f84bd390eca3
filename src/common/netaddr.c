/* netaddr.c - see netaddr.h. */
#include "compat.h"

#include <arpa/inet.h>

#include "netaddr.h"

int netaddr_parse_listen(const char *listen, struct sockaddr_in *sa, struct tess_error **err)
{
        const char *colon = strrchr(listen, ':');
        char host[64];
        char *end;

        if (!colon || (size_t)(colon - listen) >= sizeof(host))
                return tess_err(err, EINVAL, "listen address '%s' is not HOST:PORT", listen);
        memcpy(host, listen, (size_t)(colon - listen));
        host[colon - listen] = '\0';
        unsigned long port = strtoul(colon + 1, &end, 10);
        if (*end || port > 65535 || end == colon + 1)
                return tess_err(err, EINVAL, "listen address '%s' has a bad port", listen);
        memset(sa, 0, sizeof(*sa));
        sa->sin_family = AF_INET;
        sa->sin_port = htons((uint16_t)port);
        if (streq(host, "") || streq(host, "*"))
                sa->sin_addr.s_addr = htonl(INADDR_ANY);
        else if (streq(host, "localhost"))
                sa->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        else if (inet_pton(AF_INET, host, &sa->sin_addr) != 1)
                return tess_err(err, EINVAL, "listen address '%s' has a bad IPv4 host", listen);
        return 0;
}
