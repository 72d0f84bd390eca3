/* app_origin.c - see app_origin.h. */
#include "common/compat.h"

#include <strings.h>

#include "manager/api/api.h"
#include "manager/apps/app_origin.h"
#include "manager/core/manager.h"
#include "manager/http/http.h"

/* The request's Host when it is a plain host[:port], else NULL. */
static const char *request_host(struct api_ctx *c)
{
        const char *host = http_header(c->req, "Host");

        if (!host || !*host || strlen(host) >= 256 ||
            strspn(host, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-.:[]") != strlen(host))
                return NULL;
        return host;
}

/* The length of a Host's name without its port. */
static size_t host_name_len(const char *host)
{
        const char *close = host[0] == '[' ? strchr(host, ']') : NULL;
        return close ? (size_t)(close - host) + 1 : strcspn(host, ":");
}

static const char *scheme(struct api_ctx *c)
{
        const char *proto = http_header(c->req, "X-Forwarded-Proto");
        return proto && strcasecmp(proto, "https") == 0 ? "https" : "http";
}

/* url with its "*." host label replaced by session's id. */
static char *per_session(const char *url, const char *session)
{
        const char *star = strstr(url, "://*.");
        if (!star)
                return xstrdup(url);
        return xasprintf("%.*s://%s%s", (int)(star - url), url, session, star + 4);
}

/* The same host name as the request's (else listen's), with port. */
static char *same_host(struct api_ctx *c, unsigned port)
{
        const char *host = request_host(c);

        if (!host)
                host = c->m->conf.listen;
        return xasprintf("%s://%.*s:%u", scheme(c), (int)host_name_len(host), host, port);
}

char *app_origin(struct api_ctx *c, const char *session, const char *group_addr)
{
        if (group_addr && *group_addr)
                return per_session(group_addr, session);
        if (c->m->conf.app_url)
                return per_session(c->m->conf.app_url, session);
        return same_host(c, c->m->app_http ? http_server_port(c->m->app_http) : 0);
}

char *app_web_origin(struct api_ctx *c)
{
        if (c->m->conf.web_url)
                return xstrdup(c->m->conf.web_url);
        return same_host(c, http_server_port(c->m->http));
}

bool app_host_is_sessions(struct api_ctx *c, const char *session)
{
        const char *host = request_host(c), *star = c->m->conf.app_url ? strstr(c->m->conf.app_url, "://*.") : NULL;
        size_t n = strlen(session);

        if (!star)
                return true;
        /* the session's id, then app_url's domain: ".apps.example.org" */
        const char *domain = star + 4;
        size_t domain_len = strcspn(domain, ":/");
        return host && host_name_len(host) == n + domain_len && strncasecmp(host, session, n) == 0 &&
               strncasecmp(host + n, domain, domain_len) == 0;
}
