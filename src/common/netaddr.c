/* netaddr.c - see netaddr.h. */
#include "common/compat.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>

#include "common/netaddr.h"

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

/* Connect fd to sa, waiting at most timeout_ms; 0 or -errno. */
static int connect_within(int fd, const struct sockaddr *sa, socklen_t len, int timeout_ms)
{
        int flags = fcntl(fd, F_GETFL);

        fcntl(fd, F_SETFL, flags | O_NONBLOCK);
        int r = connect(fd, sa, len) < 0 ? -errno : 0;
        if (r == -EINPROGRESS) {
                struct pollfd p = { .fd = fd, .events = POLLOUT };
                int soerr = ETIMEDOUT;
                socklen_t slen = sizeof(soerr);
                if (poll(&p, 1, timeout_ms) == 1)
                        getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &slen);
                r = -soerr;
        }
        fcntl(fd, F_SETFL, flags);
        return r;
}

int netaddr_connect(const char *address, int timeout_ms, struct tess_error **err)
{
        const char *colon = strrchr(address, ':');
        char host[256];
        struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *ai = NULL;
        size_t hlen = colon ? (size_t)(colon - address) : 0;

        if (hlen >= 2 && address[0] == '[' && address[hlen - 1] == ']')
                address++, hlen -= 2;
        if (!colon || hlen == 0 || hlen >= sizeof(host) || !colon[1])
                return tess_err(err, EINVAL, "'%s' is not HOST:PORT", address);
        memcpy(host, address, hlen);
        host[hlen] = '\0';
        if (getaddrinfo(host, colon + 1, &hints, &ai) != 0 || !ai)
                return tess_err(err, EHOSTUNREACH, "cannot resolve '%s'", host);
        int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
        int r = fd < 0 ? -errno : connect_within(fd, ai->ai_addr, ai->ai_addrlen, timeout_ms);
        freeaddrinfo(ai);
        if (r < 0) {
                if (fd >= 0)
                        close(fd);
                return tess_err(err, -r, "connecting to %s:%s: %s", host, colon + 1, strerror(-r));
        }
        return fd;
}
