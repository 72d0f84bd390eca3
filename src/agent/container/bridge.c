/* bridge.c - see bridge.h. */
#include "common/compat.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <ifaddrs.h>
#include <net/if.h>

#include "agent/container/bridge.h"
#include "agent/container/container-internal.h"
#include "agent/container/ipam.h"
#include "agent/container/netfilter.h"
#include "agent/container/netns.h"
#include "agent/container/proc.h"
#include "common/fs.h"
#include "common/log.h"

#define DEFAULT_BRIDGE "tessera0"
#define DEFAULT_CIDR   "10.88.0.1/16"
#define CHOICE_FILE    "bridge" /* in state_dir: "NAME CIDR\n" */

static uint32_t mask_of(int prefix)
{
        return prefix ? ~0U << (32 - prefix) : 0;
}

/* Do a/pa and b/pb share an address? */
static bool overlap(uint32_t a, int pa, uint32_t b, int pb)
{
        uint32_t m = mask_of(pa < pb ? pa : pb);
        return (a & m) == (b & m);
}

static int prefix_of(uint32_t mask)
{
        int n = 0;
        while (mask & 0x80000000U) {
                n++;
                mask <<= 1;
        }
        return n;
}

static char *describe(const char *what, const char *ifname, uint32_t addr, int prefix)
{
        char text[IPAM_ADDR_LEN];
        ipam_format(addr, text);
        return xasprintf("%s %s/%d on %s", what, text, prefix, ifname);
}

bool bridge_subnet_taken(uint32_t net, int prefix, const char *except, char **ret_what)
{
        _cleanup_free_ char *routes = NULL;
        struct ifaddrs *ifs = NULL;
        size_t len;

        *ret_what = NULL;
        if (getifaddrs(&ifs) == 0) {
                for (struct ifaddrs *i = ifs; i && !*ret_what; i = i->ifa_next) {
                        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || streq(i->ifa_name, except))
                                continue;
                        uint32_t a = ntohl(((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr);
                        int p = i->ifa_netmask
                                        ? prefix_of(ntohl(((struct sockaddr_in *)i->ifa_netmask)->sin_addr.s_addr))
                                        : 32;
                        if (overlap(a, p, net, prefix))
                                *ret_what = describe("the address", i->ifa_name, a, p);
                }
                freeifaddrs(ifs);
        }
        if (*ret_what || fs_read_file("/proc/net/route", 1 << 20, &routes, &len, NULL) < 0)
                return *ret_what != NULL;
        /* Iface Destination Gateway Flags RefCnt Use Metric Mask ...: hex in
         * network byte order; the default route (mask 0) clashes with nothing */
        for (char *line = strchr(routes, '\n'); line && !*ret_what; line = strchr(line, '\n')) {
                char ifname[IF_NAMESIZE + 1];
                unsigned dest, gateway, flags, refcnt, use, metric, mask;
                line++;
                if (sscanf(line, "%16s %x %x %x %u %u %u %x", ifname, &dest, &gateway, &flags, &refcnt, &use, &metric,
                           &mask) != 8 ||
                    mask == 0 || streq(ifname, except))
                        continue;
                uint32_t d = ntohl(dest);
                int p = prefix_of(ntohl(mask));
                if (overlap(d, p, net, prefix))
                        *ret_what = describe("the route to", ifname, d, p);
        }
        return *ret_what != NULL;
}

/* Claim name/cidr: the fd, -EBUSY when another agent has the bridge or
 * -EADDRINUSE when the subnet clashes (err says which), < 0 otherwise. */
static int claim(const char *lock_dir, const char *state_dir, const char *name, const char *cidr,
                 struct tess_error **err)
{
        _cleanup_free_ char *what = NULL;
        uint32_t gw;
        int prefix, fd, r;

        /* the name becomes a path, an interface and part of nft scripts */
        if (!*name || strlen(name) >= IF_NAMESIZE ||
            strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-") != strlen(name) ||
            streq(name, ".") || streq(name, ".."))
                return tess_err(err, EINVAL, "bridge '%s': 1 to 15 of A-Z a-z 0-9 _ . -", name);
        r = ipam_parse_cidr(cidr, &gw, &prefix, err);
        if (r < 0)
                return r;
        fd = netns_bridge_claim(lock_dir, name, state_dir, err);
        if (fd < 0)
                return fd;
        if (bridge_subnet_taken(gw & mask_of(prefix), prefix, name, &what)) {
                close(fd);
                return tess_err(err, EADDRINUSE, "the subnet %s of the bridge '%s' overlaps %s", cidr, name, what);
        }
        return fd;
}

static void remember(const char *state_dir, const char *name, const char *cidr)
{
        _cleanup_free_ char *path = xasprintf("%s/%s", state_dir, CHOICE_FILE);
        _cleanup_free_ char *line = xasprintf("%s %s\n", name, cidr);
        struct tess_error *e = NULL;

        if (fs_write_file_replace(path, line, strlen(line), 0644, &e) < 0) {
                log_warn("remembering the bridge: %s", e->msg);
                tess_error_free(e);
        }
}

/* The choice of a previous start, if any: 0 and the strings, or -1. */
static int remembered(const char *state_dir, char **ret_name, char **ret_cidr)
{
        _cleanup_free_ char *path = xasprintf("%s/%s", state_dir, CHOICE_FILE), *data = NULL;
        char name[IF_NAMESIZE + 1], cidr[IPAM_ADDR_LEN + 4];
        size_t len;

        if (fs_read_file(path, 256, &data, &len, NULL) < 0 || sscanf(data, "%16s %19s", name, cidr) != 2)
                return -1;
        *ret_name = xstrdup(name);
        *ret_cidr = xstrdup(cidr);
        return 0;
}

static int choose_auto(const char *lock_dir, const char *state_dir, struct bridge_choice *ret, struct tess_error **err)
{
        _cleanup_free_ char *old_name = NULL, *old_cidr = NULL;
        int fd;

        if (remembered(state_dir, &old_name, &old_cidr) == 0) {
                struct tess_error *e = NULL;
                fd = claim(lock_dir, state_dir, old_name, old_cidr, &e);
                if (fd >= 0) {
                        *ret = (struct bridge_choice){ .name = TAKE_PTR(old_name),
                                                       .cidr = TAKE_PTR(old_cidr),
                                                       .automatic = true,
                                                       .claim_fd = fd };
                        return 0;
                }
                log_warn("the bridge of the last start is not to be had (%s): choosing another", e->msg);
                tess_error_free(e);
        }
        for (int n = 0; n < BRIDGE_AUTO_MAX; n++) {
                _cleanup_free_ char *name = xasprintf("tessera%d", n), *cidr = xasprintf("10.%d.0.1/16", 88 + n);
                struct tess_error *e = NULL;
                fd = claim(lock_dir, state_dir, name, cidr, &e);
                if (fd >= 0) {
                        log_info("bridge %s with %s chosen (no bridge configured)", name, cidr);
                        remember(state_dir, name, cidr);
                        *ret = (struct bridge_choice){
                                .name = TAKE_PTR(name), .cidr = TAKE_PTR(cidr), .automatic = true, .claim_fd = fd
                        };
                        return 0;
                }
                if (fd != -EBUSY && fd != -EADDRINUSE) {
                        *err = e;
                        return fd;
                }
                log_debug("bridge %s not chosen: %s", name, e->msg);
                tess_error_free(e);
        }
        return tess_err(err, EADDRINUSE,
                        "no free bridge among tessera0..tessera%d (10.88.0.0/16..10.%d.0.0/16): set bridge and "
                        "bridge_cidr",
                        BRIDGE_AUTO_MAX - 1, 88 + BRIDGE_AUTO_MAX - 1);
}

int bridge_choose(const char *lock_dir, const char *state_dir, const char *conf_name, const char *conf_cidr,
                  struct bridge_choice *ret, struct tess_error **err)
{
        const char *name, *cidr;
        int fd;

        *ret = (struct bridge_choice){ .claim_fd = -1 };
        /* "" as --print-config shows an unset key */
        conf_name = conf_name && *conf_name ? conf_name : NULL;
        conf_cidr = conf_cidr && *conf_cidr ? conf_cidr : NULL;
        name = conf_name ?: DEFAULT_BRIDGE;
        cidr = conf_cidr ?: DEFAULT_CIDR;
        if (!conf_name && !conf_cidr)
                return choose_auto(lock_dir, state_dir, ret, err);
        fd = claim(lock_dir, state_dir, name, cidr, err);
        if (fd < 0)
                return fd;
        *ret = (struct bridge_choice){ .name = xstrdup(name), .cidr = xstrdup(cidr), .claim_fd = fd };
        return 0;
}

/* Put every container of state_dir still on the bridge back in its group:
 * the tables may have been deleted (`nft flush ruleset`) while the agent
 * was away, and a port in no group would be in no rule's reach. */
static void regroup(const struct bridge_choice *b, const char *state_dir)
{
        _cleanup_free_ char *dir = xasprintf("%s/containers", state_dir);
        struct dirent *de;
        DIR *d = opendir(dir);

        if (!d)
                return;
        while ((de = readdir(d))) {
                _cleanup_free_ char *cdir = xasprintf("%s/%s", dir, de->d_name);
                struct container_record rec;
                struct tess_error *e = NULL;
                if (de->d_name[0] == '.' || container_record_read(cdir, &rec, NULL) < 0)
                        continue;
                if (rec.netns && rec.netgroup && streq(rec.bridge, b->name) && if_nametoindex(rec.veth) != 0 &&
                    netfilter_port_add(b->name, b->cidr, rec.veth, rec.ip, rec.netgroup, &e) < 0) {
                        log_warn("container %s: %s", rec.id, e->msg);
                        tess_error_free(e);
                }
                container_record_release(&rec);
        }
        closedir(d);
}

int bridge_up(const struct bridge_choice *b, const char *state_dir, struct tess_error **err)
{
        int r = netns_bridge_ensure(b->name, b->cidr, err);
        if (r >= 0)
                r = netfilter_ensure(b->name, b->cidr, err);
        if (r >= 0)
                regroup(b, state_dir);
        return r;
}

int bridge_down_if_unused(const struct bridge_choice *b, struct tess_error **err)
{
        int r;

        if (netns_bridge_ports(b->name) != 0)
                return 0;
        r = netfilter_remove(b->name, err);
        if (r < 0)
                return r;
        if (if_nametoindex(b->name) != 0 && netns_bridge_ours(b->name)) {
                const char *argv[] = { "ip", "link", "del", b->name, NULL };
                r = proc_run(argv, NULL, -1, NULL, NULL, err);
                if (r < 0)
                        return tess_err_wrap(err, "removing the bridge '%s'", b->name);
        }
        return 1;
}

void bridge_choice_release(struct bridge_choice *b)
{
        if (b->claim_fd >= 0)
                close(b->claim_fd);
        free(b->name);
        free(b->cidr);
        *b = (struct bridge_choice){ .claim_fd = -1 };
}
