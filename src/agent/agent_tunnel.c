/* agent_tunnel.c - see agent_tunnel.h.  The connection is made by a
 * short-lived thread that enters the container's network namespace
 * (setns only changes the calling thread's); the socket it makes stays
 * in that namespace and is relayed from the HTTP server's thread. */
#include "common/compat.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>

#include "common/log.h"
#include "common/netaddr.h"
#include "common/relay.h"
#include "agent/agent_tunnel.h"

struct inside {
        pid_t pid;
        int port;
        int fd;
        struct tess_error *err;
};

static void *connect_inside(void *data)
{
        struct inside *in = data;
        char path[64], addr[32];
        _cleanup_close_ int ns = -1;

        snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)in->pid);
        ns = open(path, O_RDONLY | O_CLOEXEC);
        if (ns < 0) {
                in->fd = tess_err(&in->err, errno == ENOENT ? ESRCH : errno, "opening %s: %s", path, strerror(errno));
                return NULL;
        }
        if (setns(ns, CLONE_NEWNET) < 0) {
                in->fd = tess_err(&in->err, errno, "entering the network namespace of %d: %s", (int)in->pid,
                                  strerror(errno));
                return NULL;
        }
        snprintf(addr, sizeof(addr), "127.0.0.1:%d", in->port);
        in->fd = netaddr_connect(addr, AGENT_TUNNEL_CONNECT_MS, NULL);
        if (in->fd == -ECONNREFUSED || in->fd == -EADDRNOTAVAIL) {
                snprintf(addr, sizeof(addr), "[::1]:%d", in->port);
                int fd6 = netaddr_connect(addr, AGENT_TUNNEL_CONNECT_MS, NULL);
                if (fd6 >= 0)
                        in->fd = fd6;
        }
        if (in->fd < 0)
                tess_err(&in->err, -in->fd, "port %d of the kernel: %s", in->port, strerror(-in->fd));
        return NULL;
}

int agent_tunnel_connect(pid_t pid, int port, struct tess_error **err)
{
        struct inside in = { .pid = pid, .port = port, .fd = -EIO };
        pthread_t t;
        int r;

        if (port < 1 || port > 65535)
                return tess_err(err, EINVAL, "port %d is not a port", port);
        r = pthread_create(&t, NULL, connect_inside, &in);
        if (r != 0)
                return tess_err(err, r, "cannot start a thread: %s", strerror(r));
        pthread_join(t, NULL);
        if (in.fd < 0) {
                if (err)
                        *err = in.err;
                else
                        tess_error_free(in.err);
                return in.fd;
        }
        return in.fd;
}

void agent_tunnel_run(int app_fd, int sock, const void *prefix, size_t prefix_len)
{
        struct relay_side manager = { .fd = sock, .pending = prefix, .pending_len = prefix_len };
        struct relay_side app = { .fd = app_fd };
        int r = relay_run(&manager, &app, NULL, NULL);

        if (r < 0 && r != -ECONNRESET && r != -EPIPE)
                log_info("tunnel: %s", strerror(-r));
        close(app_fd);
}
