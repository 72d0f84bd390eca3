/* public_hosts.c - see public_hosts.h. */
#include "common/compat.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <unistd.h>

#include "common/buf.h"
#include "manager/api/public_hosts.h"

struct public_hosts {
        bool any;
        struct buf names; /* ",name,*.suffix,...," lower case */
};

/* The name of a Host header or list entry, lower case, without port,
 * brackets or a final dot; false when it is empty or too long. */
static bool host_name(const char *s, char out[256])
{
        const char *end;
        size_t n;

        while (*s == ' ' || *s == '\t')
                s++;
        if (*s == '[') { /* [v6]:port */
                s++;
                end = strchr(s, ']');
                if (!end)
                        return false;
        } else {
                end = strchr(s, ':');
                if (end && strchr(end + 1, ':')) /* a bare IPv6 address */
                        end = NULL;
                if (!end)
                        end = s + strlen(s);
        }
        while (end > s && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '.'))
                end--;
        n = (size_t)(end - s);
        if (n == 0 || n >= 256)
                return false;
        for (size_t i = 0; i < n; i++)
                out[i] = (char)tolower((unsigned char)s[i]);
        out[n] = '\0';
        return true;
}

static void add_name(struct public_hosts *h, const char *name)
{
        char n[256];

        if (!host_name(name, n))
                return;
        if (streq(n, "*")) {
                h->any = true;
                return;
        }
        buf_printf(&h->names, "%s,", n);
}

/* localhost, the host name, every interface's address */
static void add_this_machine(struct public_hosts *h, const char *listen)
{
        char name[256], addr[INET6_ADDRSTRLEN];
        struct ifaddrs *ifs = NULL;

        add_name(h, "localhost");
        if (listen)
                add_name(h, listen);
        if (gethostname(name, sizeof(name)) == 0) {
                name[sizeof(name) - 1] = '\0';
                add_name(h, name);
        }
        if (getifaddrs(&ifs) < 0)
                return;
        for (struct ifaddrs *i = ifs; i; i = i->ifa_next) {
                const struct sockaddr *sa = i->ifa_addr;
                const void *a = NULL;
                if (sa && sa->sa_family == AF_INET)
                        a = &((const struct sockaddr_in *)(const void *)sa)->sin_addr;
                else if (sa && sa->sa_family == AF_INET6)
                        a = &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr;
                if (a && inet_ntop(sa->sa_family, a, addr, sizeof(addr)))
                        add_name(h, addr);
        }
        freeifaddrs(ifs);
}

struct public_hosts *public_hosts_new(const char *setting, const char *listen)
{
        struct public_hosts *h = xcalloc(1, sizeof(*h));

        buf_puts(&h->names, ",");
        if (!setting || !*setting) {
                add_this_machine(h, listen);
                return h;
        }
        _cleanup_free_ char *copy = xstrdup(setting);
        char *save = NULL;
        for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save))
                add_name(h, t);
        return h;
}

struct public_hosts *public_hosts_free(struct public_hosts *h)
{
        if (h) {
                buf_release(&h->names);
                free(h);
        }
        return NULL;
}

bool public_hosts_allow(const struct public_hosts *h, const char *host_header)
{
        char n[256], key[260];

        if (!h || h->any)
                return true;
        if (!host_header || !host_name(host_header, n))
                return false;
        snprintf(key, sizeof(key), ",%s,", n);
        if (strstr(h->names.data, key))
                return true;
        /* "*.example.org" names every subdomain of example.org */
        for (const char *dot = strchr(n, '.'); dot; dot = strchr(dot + 1, '.')) {
                snprintf(key, sizeof(key), ",*%s,", dot);
                if (strstr(h->names.data, key))
                        return true;
        }
        return false;
}

const char *public_hosts_describe(const struct public_hosts *h)
{
        return !h || h->any ? "*" : h->names.data;
}
