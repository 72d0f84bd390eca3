/* netfilter.c - see netfilter.h.  Rules are written as nft scripts and run
 * by `nft -f -`, each script one transaction. */
#include "common/compat.h"

#include <arpa/inet.h>

#include "agent/container/ipam.h"
#include "agent/container/netfilter.h"
#include "agent/container/proc.h"
#include "common/buf.h"

static const char *const nft_script[] = { "nft", "-f", "-", NULL };

/* Names end up in nft scripts: letters, digits, '_', '.', '-' only. */
static int check_name(const char *what, const char *name, struct tess_error **err)
{
        size_t n = strlen(name);

        if (n == 0 || n > 15 || strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-") != n)
                return tess_err(err, EINVAL, "%s '%s': 1 to 15 of A-Z a-z 0-9 _ . -", what, name);
        return 0;
}

void netfilter_table_name(const char *bridge, char out[NETFILTER_TABLE_MAX])
{
        snprintf(out, NETFILTER_TABLE_MAX, "tessera-%s", bridge);
}

static int run_script(const char *script, struct tess_error **err)
{
        int r = proc_run(nft_script, script, -1, NULL, NULL, err);

        if (r < 0)
                return tess_err_wrap(err, "nft (Debian package nftables)");
        return 0;
}

/* The rules of both tables (see netfilter.h), chains flushed and refilled
 * in one transaction; sets and their elements stay.  %1$s the table, %2$s
 * the bridge, %3$s its address.  Ports are ours when they are in the map
 * (`meta ibrname` would need nft_meta_bridge, which not every kernel has).
 * In each chain a port first speaks IPv4 and ARP with its own address
 * only; then, port to port: within a group only; port to host: ARP, and
 * IPv4 to the bridge's address, which the inet table judges.  The inet
 * forward chain lets bridged frames through (br_netfilter shows them to
 * IP's hooks too; the bridge table judged them) and routes nothing. */
#define RULESET_FMT                                                                                                   \
        "add table bridge %1$s\n"                                                                                     \
        "add map bridge %1$s port_group { type ifname : mark; }\n"                                                    \
        "add set bridge %1$s group_port { type mark . ifname; }\n"                                                    \
        "add set bridge %1$s port_addr { type ifname . ipv4_addr; }\n"                                                \
        "add chain bridge %1$s forward { type filter hook forward priority 0; policy accept; }\n"                     \
        "add chain bridge %1$s input { type filter hook input priority 0; policy accept; }\n"                         \
        "flush chain bridge %1$s forward\n"                                                                           \
        "flush chain bridge %1$s input\n"                                                                             \
        "add rule bridge %1$s forward iifname @port_group ether type ip iifname . ip saddr != @port_addr drop\n"      \
        "add rule bridge %1$s forward iifname @port_group ether type arp iifname . arp saddr ip != @port_addr drop\n" \
        "add rule bridge %1$s forward meta mark set iifname map @port_group\n"                                        \
        "add rule bridge %1$s forward meta mark . oifname @group_port accept\n"                                       \
        "add rule bridge %1$s forward iifname @port_group drop\n"                                                     \
        "add rule bridge %1$s forward oifname @port_group drop\n"                                                     \
        "add rule bridge %1$s input iifname @port_group ether type ip iifname . ip saddr != @port_addr drop\n"        \
        "add rule bridge %1$s input iifname @port_group ether type arp iifname . arp saddr ip != @port_addr drop\n"   \
        "add rule bridge %1$s input iifname @port_group ether type arp accept\n"                                      \
        "add rule bridge %1$s input iifname @port_group ip daddr %3$s accept\n"                                       \
        "add rule bridge %1$s input iifname @port_group drop\n"                                                       \
        "add table inet %1$s\n"                                                                                       \
        "add chain inet %1$s input { type filter hook input priority 0; policy accept; }\n"                           \
        "add chain inet %1$s forward { type filter hook forward priority 0; policy accept; }\n"                       \
        "flush chain inet %1$s input\n"                                                                               \
        "flush chain inet %1$s forward\n"                                                                             \
        "add rule inet %1$s input iifname \"%2$s\" ct state established,related accept\n"                             \
        "add rule inet %1$s input iifname \"%2$s\" drop\n"                                                            \
        "add rule inet %1$s forward iifname \"%2$s\" oifname \"%2$s\" accept\n"                                       \
        "add rule inet %1$s forward iifname \"%2$s\" drop\n"                                                          \
        "add rule inet %1$s forward oifname \"%2$s\" drop\n"

int netfilter_ensure(const char *bridge, const char *gw_cidr, struct tess_error **err)
{
        char table[NETFILTER_TABLE_MAX], gw[IPAM_ADDR_LEN];
        _cleanup_free_ char *script = NULL;
        uint32_t addr;
        int prefix, r;

        r = check_name("bridge", bridge, err);
        if (r >= 0)
                r = ipam_parse_cidr(gw_cidr, &addr, &prefix, err);
        if (r < 0)
                return r;
        ipam_format(addr, gw);
        netfilter_table_name(bridge, table);
        script = xasprintf(RULESET_FMT, table, bridge, gw);
        r = run_script(script, err);
        if (r < 0)
                return tess_err_wrap(err, "isolating the containers of the bridge '%s'", bridge);
        return 0;
}

static bool table_exists(const char *table)
{
        const char *argv[] = { "nft", "list", "table", "bridge", table, NULL };
        int status;

        return proc_run(argv, NULL, -1, NULL, &status, NULL) == 0 && status == 0;
}

static char *elements(const char *op, const char *table, const char *veth, const char *ip, unsigned group)
{
        return xasprintf("%1$s element bridge %2$s port_group { \"%3$s\" : %4$u }\n"
                         "%1$s element bridge %2$s group_port { %4$u . \"%3$s\" }\n"
                         "%1$s element bridge %2$s port_addr { \"%3$s\" . %5$s }\n",
                         op, table, veth, group, ip);
}

/* The address goes into a script too: a dotted quad. */
static int check_ip(const char *ip, struct tess_error **err)
{
        struct in_addr in;

        if (!ip || inet_pton(AF_INET, ip, &in) != 1)
                return tess_err(err, EINVAL, "'%s' is not an IPv4 address", ip ?: "");
        return 0;
}

/* What names a container's port in a script: its bridge, veth, address. */
static int check_port(const char *bridge, const char *veth, const char *ip, struct tess_error **err)
{
        int r = check_name("bridge", bridge, err);

        if (r >= 0)
                r = check_name("interface", veth, err);
        if (r >= 0)
                r = check_ip(ip, err);
        return r;
}

int netfilter_port_add(const char *bridge, const char *gw_cidr, const char *veth, const char *ip, unsigned group,
                       struct tess_error **err)
{
        char table[NETFILTER_TABLE_MAX];
        _cleanup_free_ char *script = NULL;
        int r;

        r = check_port(bridge, veth, ip, err);
        if (r < 0)
                return r;
        if (group == 0)
                return tess_err(err, EINVAL, "no network group for '%s'", veth);
        netfilter_table_name(bridge, table);
        script = elements("add", table, veth, ip, group);
        if (run_script(script, NULL) == 0)
                return 0;
        /* the tables are missing (a first container without an agent, or
         * someone deleted them): make them, then try again */
        r = netfilter_ensure(bridge, gw_cidr, err);
        if (r >= 0)
                r = run_script(script, err);
        if (r < 0)
                return tess_err_wrap(err, "putting '%s' in network group %u", veth, group);
        return 0;
}

int netfilter_port_remove(const char *bridge, const char *veth, const char *ip, unsigned group, struct tess_error **err)
{
        char table[NETFILTER_TABLE_MAX];
        _cleanup_free_ char *script = NULL, *add = NULL, *del = NULL;
        int r;

        if (group == 0) /* a record made before groups */
                return 0;
        r = check_port(bridge, veth, ip, err);
        if (r < 0)
                return r;
        netfilter_table_name(bridge, table);
        /* nft 1.0.6 has no `destroy`: adding first makes the delete succeed
         * whether or not the elements were there */
        add = elements("add", table, veth, ip, group);
        del = elements("delete", table, veth, ip, group);
        script = xasprintf("%s%s", add, del);
        if (run_script(script, NULL) == 0 || !table_exists(table))
                return 0;
        r = run_script(script, err);
        if (r < 0)
                return tess_err_wrap(err, "taking '%s' out of network group %u", veth, group);
        return 0;
}

int netfilter_remove(const char *bridge, struct tess_error **err)
{
        char table[NETFILTER_TABLE_MAX];
        _cleanup_free_ char *script = NULL;
        int r;

        r = check_name("bridge", bridge, err);
        if (r < 0)
                return r;
        netfilter_table_name(bridge, table);
        script = xasprintf("add table bridge %1$s\ndelete table bridge %1$s\n"
                           "add table inet %1$s\ndelete table inet %1$s\n",
                           table);
        r = run_script(script, err);
        if (r < 0)
                return tess_err_wrap(err, "removing the tables of the bridge '%s'", bridge);
        return 0;
}
