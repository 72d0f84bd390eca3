/* netns.c - see netns.h.  The namespace files are made here (unshare and
 * a bind mount in a short-lived child); links and addresses by `ip`. */
#include "common/compat.h"

#include <fcntl.h>
#include <libgen.h>
#include <net/if.h>
#include <sched.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "agent/container/netns.h"
#include "agent/container/proc.h"
#include "common/buf.h"
#include "common/fs.h"

static const char *const ip_batch[] = { "ip", "-batch", "-", NULL };

/* In a child: a new network namespace, bound on the file `path`. */
static int bind_new_netns(void *path)
{
        if (unshare(CLONE_NEWNET) < 0 || mount("/proc/self/ns/net", path, "none", MS_BIND, NULL) < 0)
                return errno;
        return 0;
}

int netns_create(const char *path, struct tess_error **err)
{
        _cleanup_free_ char *dir = xstrdup(path);
        int fd, r;

        r = fs_mkdir_p(dirname(dir), 0755, err);
        if (r < 0)
                return r;
        fd = open(path, O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0444);
        if (fd < 0)
                return tess_err(err, errno, "creating '%s': %s", path, strerror(errno));
        close(fd);
        r = proc_in_child(bind_new_netns, (void *)path);
        if (r < 0) {
                unlink(path);
                return tess_err(err, -r, "making the network namespace '%s': %s", path, strerror(-r));
        }
        return 0;
}

int netns_remove(const char *path, struct tess_error **err)
{
        if (umount2(path, MNT_DETACH) < 0 && errno != EINVAL && errno != ENOENT)
                return tess_err(err, errno, "unmounting '%s': %s", path, strerror(errno));
        if (unlink(path) < 0 && errno != ENOENT)
                return tess_err(err, errno, "removing '%s': %s", path, strerror(errno));
        return 0;
}

int netns_bridge_ensure(const char *bridge, const char *gw_cidr, struct tess_error **err)
{
        _cleanup_free_ char *cmds = NULL;
        int r;

        if (if_nametoindex(bridge) != 0)
                return 0;
        cmds = xasprintf(
                "link add %1$s type bridge\nlink set %1$s alias %2$s\naddr add %3$s dev %1$s\nlink set %1$s up\n",
                bridge, NETNS_BRIDGE_ALIAS, gw_cidr);
        r = proc_run(ip_batch, cmds, -1, NULL, NULL, err);
        /* another agent made it in the meantime */
        if (r < 0 && if_nametoindex(bridge) != 0) {
                if (err) {
                        tess_error_free(*err);
                        *err = NULL;
                }
                return 0;
        }
        if (r < 0)
                return tess_err_wrap(err, "creating the bridge '%s'", bridge);
        return 0;
}

/* Not /sys/class/net: an agent started by `nsenter --net` sees the
 * host's sysfs there; `ip` asks the kernel of its own namespace. */
bool netns_bridge_ours(const char *bridge)
{
        const char *argv[] = { "ip", "-o", "link", "show", "dev", bridge, NULL };
        _cleanup_(buf_release) struct buf out = BUF_INIT;

        if (proc_run(argv, NULL, -1, &out, NULL, NULL) < 0)
                return false;
        return strstr(out.data, "alias " NETNS_BRIDGE_ALIAS) != NULL;
}

int netns_bridge_ports(const char *bridge)
{
        const char *argv[] = { "ip", "-o", "link", "show", "master", bridge, NULL };
        _cleanup_(buf_release) struct buf out = BUF_INIT;

        if (if_nametoindex(bridge) == 0)
                return 0;
        if (proc_run(argv, NULL, -1, &out, NULL, NULL) < 0)
                return -1;
        return out.len > 0;
}

int netns_bridge_claim(const char *dir, const char *bridge, const char *owner, struct tess_error **err)
{
        _cleanup_free_ char *path = NULL, *line = xasprintf("%s\n", owner);
        char other[4096];
        struct stat st;
        int fd, r;

        if (stat("/proc/self/ns/net", &st) < 0)
                return tess_err(err, errno, "/proc/self/ns/net: %s", strerror(errno));
        r = fs_mkdir_p(dir, 0755, err);
        if (r < 0)
                return r;
        path = xasprintf("%s/%llu-%s.lock", dir, (unsigned long long)st.st_ino, bridge);
        fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        if (fd < 0)
                return tess_err(err, errno, "opening '%s': %s", path, strerror(errno));
        while (flock(fd, LOCK_EX | LOCK_NB) < 0) {
                if (errno == EINTR)
                        continue;
                int e = errno;
                ssize_t n = e == EWOULDBLOCK ? pread(fd, other, sizeof(other) - 1, 0) : -1;
                close(fd);
                if (e != EWOULDBLOCK)
                        return tess_err(err, e, "locking '%s': %s", path, strerror(e));
                other[n > 0 ? n : 0] = '\0';
                other[strcspn(other, "\n")] = '\0';
                return tess_err(err, EBUSY,
                                "the bridge '%s' of this network namespace is the agent's of state_dir '%s': give "
                                "each agent on a host its own bridge and bridge_cidr",
                                bridge, *other ? other : "?");
        }
        if (ftruncate(fd, 0) < 0 || pwrite(fd, line, strlen(line), 0) != (ssize_t)strlen(line)) {
                r = tess_err(err, errno, "writing '%s': %s", path, strerror(errno));
                close(fd);
                return r;
        }
        return fd;
}

int netns_attach(const char *path, const char *bridge, const char *host_if, const char *ip, int prefix, const char *gw,
                 struct tess_error **err)
{
        _cleanup_free_ char *host = NULL, *inside = NULL;
        _cleanup_close_ int nsfd = -1;
        int r;

        host = xasprintf("link add %s type veth peer name eth0 netns %s\nlink set %s master %s\nlink set %s up\n",
                         host_if, path, host_if, bridge, host_if);
        r = proc_run(ip_batch, host, -1, NULL, NULL, err);
        if (r < 0)
                return tess_err_wrap(err, "connecting '%s' to the bridge '%s'", host_if, bridge);
        nsfd = open(path, O_RDONLY | O_CLOEXEC);
        if (nsfd < 0)
                return tess_err(err, errno, "opening '%s': %s", path, strerror(errno));
        inside = xasprintf("link set lo up\naddr add %s/%d dev eth0\nlink set eth0 up\nroute add default via %s\n", ip,
                           prefix, gw);
        r = proc_run(ip_batch, inside, nsfd, NULL, NULL, err);
        if (r < 0)
                return tess_err_wrap(err, "configuring eth0 in '%s'", path);
        return 0;
}

int netns_detach(const char *host_if, struct tess_error **err)
{
        const char *argv[] = { "ip", "link", "del", host_if, NULL };

        if (if_nametoindex(host_if) == 0)
                return 0;
        return proc_run(argv, NULL, -1, NULL, NULL, err);
}

void netns_veth_name(const char *key, char out[NETNS_IFNAME_MAX])
{
        snprintf(out, NETNS_IFNAME_MAX, "tv%012llx", (unsigned long long)(hash_str(key) & 0xffffffffffffULL));
}
