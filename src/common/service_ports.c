/* service_ports.c - see service_ports.h. */
#include "common/compat.h"

#include <ctype.h>

#include "common/service_ports.h"

static const char *const protocol_names[_SERVICE_PROTOCOL_MAX] = {
        [SERVICE_TCP] = "tcp", [SERVICE_HTTP] = "http", [SERVICE_PREOPEN] = "preopen",
        [SERVICE_VNC] = "vnc", [SERVICE_RDP] = "rdp",
};

const char *service_protocol_to_string(enum service_protocol p)
{
        return p >= 0 && p < _SERVICE_PROTOCOL_MAX ? protocol_names[p] : NULL;
}

enum service_protocol service_protocol_from_string(const char *s, size_t len)
{
        for (int i = 0; i < _SERVICE_PROTOCOL_MAX; i++)
                if (strlen(protocol_names[i]) == len && memcmp(protocol_names[i], s, len) == 0)
                        return (enum service_protocol)i;
        return _SERVICE_PROTOCOL_INVALID;
}

static bool name_valid(const char *s, size_t len)
{
        if (len == 0 || len > SERVICE_PORT_NAME_MAX || !isalnum((unsigned char)s[0]))
                return false;
        for (size_t i = 0; i < len; i++)
                if (!isalnum((unsigned char)s[i]) && s[i] != '_' && s[i] != '-')
                        return false;
        return true;
}

bool service_port_name_valid(const char *name)
{
        return name && name_valid(name, strlen(name));
}

/* s[0..len) without blanks around it. */
static void trim(const char **s, size_t *len)
{
        while (*len > 0 && isblank((unsigned char)**s))
                (*s)++, (*len)--;
        while (*len > 0 && isblank((unsigned char)(*s)[*len - 1]))
                (*len)--;
}

/* A decimal port of 1025-65535, or -1. */
static int port_value(const char *s, size_t len)
{
        int v = 0;

        trim(&s, &len);
        if (len == 0 || len > 5)
                return -1;
        for (size_t i = 0; i < len; i++) {
                if (!isdigit((unsigned char)s[i]))
                        return -1;
                v = v * 10 + (s[i] - '0');
        }
        return v > 1024 && v <= 65535 ? v : -1;
}

static bool port_taken(const struct service_ports *sp, const struct service_port *cur, int port)
{
        for (int i = 0; i < sp->n; i++)
                for (int j = 0; j < sp->apps[i].nports; j++)
                        if (sp->apps[i].ports[j] == port)
                                return true;
        for (int j = 0; j < cur->nports; j++)
                if (cur->ports[j] == port)
                        return true;
        return false;
}

/* The ports of an item: "8888" or "[8888, 8889]". */
static int parse_ports(const struct service_ports *sp, struct service_port *app, const char *s, size_t len,
                       struct tess_error **err)
{
        trim(&s, &len);
        bool list = len >= 2 && s[0] == '[' && s[len - 1] == ']';
        if (list)
                s++, len -= 2;
        for (size_t start = 0; start <= len;) {
                const char *comma = memchr(s + start, ',', len - start);
                size_t end = comma ? (size_t)(comma - s) : len;
                int port = port_value(s + start, end - start);
                if (port < 0)
                        return tess_err(err, EINVAL, "app '%s': '%.*s' is not a port of 1025-65535", app->name,
                                        (int)(end - start > 16 ? 16 : end - start), s + start);
                if (app->nports == SERVICE_APP_PORTS_MAX)
                        return tess_err(err, EINVAL, "app '%s' has more than %d ports", app->name,
                                        SERVICE_APP_PORTS_MAX);
                if (port_taken(sp, app, port))
                        return tess_err(err, EINVAL, "port %d is declared twice", port);
                app->ports[app->nports++] = port;
                if (!comma)
                        break;
                if (!list)
                        return tess_err(err, EINVAL, "app '%s': several ports go in brackets, [P1,P2]", app->name);
                start = end + 1;
        }
        return 0;
}

/* One item "name:proto:ports"; pty items are skipped. */
static int parse_item(struct service_ports *sp, const char *s, size_t len, struct tess_error **err)
{
        const char *c1, *c2;

        trim(&s, &len);
        c1 = memchr(s, ':', len);
        c2 = c1 ? memchr(c1 + 1, ':', len - (size_t)(c1 + 1 - s)) : NULL;
        if (!c2)
                return tess_err(err, EINVAL, "'%.*s' is not NAME:PROTOCOL:PORT", (int)(len > 64 ? 64 : len), s);
        size_t nlen = (size_t)(c1 - s), plen = (size_t)(c2 - c1 - 1);
        if (!name_valid(s, nlen))
                return tess_err(err, EINVAL, "'%.*s' is not an app name (1-%d of A-Z a-z 0-9 _ -)",
                                (int)(nlen > 64 ? 64 : nlen), s, SERVICE_PORT_NAME_MAX);
        if (plen == 3 && memcmp(c1 + 1, "pty", 3) == 0)
                return 0;
        enum service_protocol proto = service_protocol_from_string(c1 + 1, plen);
        if (proto < 0)
                return tess_err(err, EINVAL, "app '%.*s': protocol '%.*s' is not tcp, http, preopen, vnc or rdp",
                                (int)nlen, s, (int)(plen > 16 ? 16 : plen), c1 + 1);
        if (sp->n == SERVICE_PORTS_MAX)
                return tess_err(err, EINVAL, "more than %d apps", SERVICE_PORTS_MAX);
        struct service_port *app = &sp->apps[sp->n];
        *app = (struct service_port){ .protocol = proto };
        memcpy(app->name, s, nlen);
        if (service_ports_find(sp, app->name))
                return tess_err(err, EINVAL, "app '%s' is declared twice", app->name);
        int r = parse_ports(sp, app, c2 + 1, len - (size_t)(c2 + 1 - s), err);
        if (r < 0)
                return r;
        sp->n++;
        return 0;
}

int service_ports_parse(const char *p, size_t len, struct service_ports *ret, struct tess_error **err)
{
        struct service_ports sp = { .n = 0 };
        int depth = 0;
        size_t start = 0;

        if (len > SERVICE_PORTS_TEXT_MAX)
                return tess_err(err, EINVAL, "%s is longer than %d bytes", SERVICE_PORTS_LABEL, SERVICE_PORTS_TEXT_MAX);
        if (memchr(p, '\0', len))
                return tess_err(err, EINVAL, "%s contains a NUL byte", SERVICE_PORTS_LABEL);
        for (size_t i = 0; i <= len; i++) {
                if (i < len && p[i] == '[')
                        depth++;
                else if (i < len && p[i] == ']')
                        depth--;
                if (depth < 0 || depth > 1)
                        return tess_err(err, EINVAL, "%s: unbalanced brackets", SERVICE_PORTS_LABEL);
                if (i < len && (p[i] != ',' || depth > 0))
                        continue;
                const char *item = p + start;
                size_t ilen = i - start;
                trim(&item, &ilen);
                if (ilen > 0) { /* empty items ("", "a,,b", "a,") declare nothing */
                        int r = parse_item(&sp, item, ilen, err);
                        if (r < 0)
                                return tess_err_wrap(err, "%s", SERVICE_PORTS_LABEL);
                }
                start = i + 1;
        }
        if (depth != 0)
                return tess_err(err, EINVAL, "%s: unbalanced brackets", SERVICE_PORTS_LABEL);
        *ret = sp;
        return 0;
}

const struct service_port *service_ports_find(const struct service_ports *sp, const char *name)
{
        for (int i = 0; i < sp->n; i++)
                if (streq(sp->apps[i].name, name))
                        return &sp->apps[i];
        return NULL;
}
