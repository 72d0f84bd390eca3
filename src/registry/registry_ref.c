/* registry_ref.c - image references, parsed as Docker parses them
 * (distribution/reference: ParseNormalizedNamed), see registry.h.
 *
 *     reference  := name [ ":" tag ] [ "@" digest ]
 *     name       := [ domain "/" ] path-component *( "/" path-component )
 *     domain     := ( domain-component *( "." domain-component ) / "[" ipv6 "]" ) [ ":" port ]
 *     domain-component := [a-zA-Z0-9] | [a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]
 *     path-component   := [a-z0-9]+ *( separator [a-z0-9]+ ),  separator := "." | "_" | "__" | "-"+
 *     tag        := [A-Za-z0-9_][A-Za-z0-9_.-]{0,127}
 *     digest     := "sha256:" [a-f0-9]{64}
 *
 * The first component of a name is its domain when it holds a '.' or a
 * ':', is "localhost", or has an upper-case letter; otherwise the name is a
 * path on the default registry. */
#include "common/compat.h"

#include <ctype.h>

#include "common/buf.h"
#include "registry/registry.h"

#define NAME_MAX_LEN 255
#define TAG_MAX_LEN 128
#define REF_MAX_LEN 1024

static bool is_lower_alnum(char c)
{
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static bool is_word(char c)
{
        return isascii((unsigned char)c) && (isalnum((unsigned char)c) || c == '_');
}

/* A printable, bounded copy of untrusted text for a message (caller frees). */
static char *printable(const char *s, size_t n)
{
        struct buf b = BUF_INIT;

        for (size_t i = 0; i < n && b.len < 200; i++) {
                unsigned char c = (unsigned char)s[i];
                if (c >= 0x20 && c < 0x7f && c != '\\')
                        buf_putc(&b, (char)c);
                else
                        buf_printf(&b, "\\x%02x", c);
        }
        if (b.len >= 200)
                buf_puts(&b, "...");
        return buf_detach(&b, NULL);
}

static bool valid_path_component(const char *p, size_t n)
{
        size_t i = 0;

        if (n == 0 || !is_lower_alnum(p[0]) || !is_lower_alnum(p[n - 1]))
                return false;
        while (i < n) {
                if (is_lower_alnum(p[i])) {
                        i++;
                } else if (p[i] == '.') {
                        i++;
                        if (!is_lower_alnum(p[i]))
                                return false;
                } else if (p[i] == '_') {
                        i += p[i + 1] == '_' ? 2 : 1;
                        if (!is_lower_alnum(p[i]))
                                return false;
                } else if (p[i] == '-') {
                        while (p[i] == '-')
                                i++;
                        if (!is_lower_alnum(p[i]))
                                return false;
                } else {
                        return false;
                }
        }
        return true;
}

static bool valid_port(const char *p, size_t n)
{
        unsigned v = 0;

        if (n == 0 || n > 5)
                return false;
        for (size_t i = 0; i < n; i++) {
                if (p[i] < '0' || p[i] > '9')
                        return false;
                v = v * 10 + (unsigned)(p[i] - '0');
        }
        return v >= 1 && v <= 65535;
}

static bool valid_domain(const char *p, size_t n)
{
        const char *end = p + n, *host_end;

        if (n > 0 && p[0] == '[') {
                host_end = memchr(p, ']', n);
                if (!host_end || host_end == p + 1)
                        return false;
                for (const char *q = p + 1; q < host_end; q++)
                        if (!isxdigit((unsigned char)*q) && *q != ':')
                                return false;
                host_end++;
        } else {
                host_end = memchr(p, ':', n);
                if (!host_end)
                        host_end = end;
                /* domain-component *( "." domain-component ) */
                const char *c = p;
                for (;;) {
                        const char *dot = memchr(c, '.', (size_t)(host_end - c));
                        const char *cend = dot ? dot : host_end;
                        if (cend == c || !isalnum((unsigned char)c[0]) || !isalnum((unsigned char)cend[-1]))
                                return false;
                        for (const char *q = c; q < cend; q++)
                                if (!isascii((unsigned char)*q) || (!isalnum((unsigned char)*q) && *q != '-'))
                                        return false;
                        if (!dot)
                                break;
                        c = dot + 1;
                }
        }
        if (host_end == end)
                return true;
        return *host_end == ':' && valid_port(host_end + 1, (size_t)(end - host_end - 1));
}

static bool valid_tag(const char *p, size_t n)
{
        if (n == 0 || n > TAG_MAX_LEN || !is_word(p[0]))
                return false;
        for (size_t i = 1; i < n; i++)
                if (!is_word(p[i]) && p[i] != '.' && p[i] != '-')
                        return false;
        return true;
}

static bool is_hex64(const char *p, size_t n)
{
        if (n != 64)
                return false;
        for (size_t i = 0; i < n; i++)
                if (!((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'f')))
                        return false;
        return true;
}

/* digest := "sha256:" [a-f0-9]{64}; other well-formed algorithms are
 * named as unsupported. */
static int check_digest(const char *p, size_t n, struct tess_error **err)
{
        const char *colon = memchr(p, ':', n);
        _cleanup_free_ char *q = NULL;

        if (colon && colon - p == 6 && memcmp(p, "sha256", 6) == 0 && is_hex64(colon + 1, n - 7))
                return 0;
        q = printable(p, n);
        if (colon && colon > p && !(colon - p == 6 && memcmp(p, "sha256", 6) == 0)) {
                bool alg = true;
                for (const char *c = p; c < colon; c++)
                        alg = alg && (is_lower_alnum(*c) || strchr("+._-", *c));
                if (alg)
                        return tess_err(err, EINVAL, "unsupported digest algorithm in '%s' (only sha256)", q);
        }
        return tess_err(err, EINVAL, "invalid digest '%s' (sha256: and 64 lowercase hex digits)", q);
}

/* The path: components joined by '/', each valid. */
static int check_path(const char *p, size_t n, struct tess_error **err)
{
        const char *c = p, *end = p + n;

        if (n == 0)
                return tess_err(err, EINVAL, "repository name must have at least one component");
        for (const char *q = p; q < end; q++)
                if (*q >= 'A' && *q <= 'Z')
                        return tess_err(err, EINVAL, "repository name must be lowercase");
        for (;;) {
                const char *slash = memchr(c, '/', (size_t)(end - c));
                const char *cend = slash ? slash : end;
                if (!valid_path_component(c, (size_t)(cend - c))) {
                        _cleanup_free_ char *q = printable(c, (size_t)(cend - c));
                        return tess_err(err, EINVAL, "invalid repository name component '%s'", q);
                }
                if (!slash)
                        return 0;
                c = slash + 1;
        }
}

static int parse(const char *s, const char *default_registry, struct image_ref *ret, struct tess_error **err)
{
        size_t len = strlen(s), name_len, domain_len = 0;
        const char *at, *slash, *colon, *path;
        struct image_ref r = { 0 };
        bool has_domain;
        int rc;

        if (len == 0)
                return tess_err(err, EINVAL, "empty reference");
        if (len > REF_MAX_LEN)
                return tess_err(err, EINVAL, "longer than %d characters", REF_MAX_LEN);
        at = strchr(s, '@');
        name_len = at ? (size_t)(at - s) : len;
        if (at) {
                rc = check_digest(at + 1, len - name_len - 1, err);
                if (rc < 0)
                        return rc;
        }
        /* a tag is after the last ':' that follows the last '/' */
        slash = memrchr(s, '/', name_len);
        colon = memrchr(slash ? slash : s, ':', name_len - (size_t)(slash ? slash - s : 0));
        if (colon) {
                size_t tag_len = name_len - (size_t)(colon - s) - 1;
                if (!valid_tag(colon + 1, tag_len)) {
                        _cleanup_free_ char *q = printable(colon + 1, tag_len);
                        return tess_err(err, EINVAL, "invalid tag '%s'", q);
                }
                name_len = (size_t)(colon - s);
        }
        if (name_len == 0)
                return tess_err(err, EINVAL, "repository name must have at least one component");
        if (name_len > NAME_MAX_LEN)
                return tess_err(err, EINVAL, "repository name must not be more than %d characters", NAME_MAX_LEN);
        if (!at && !colon && is_hex64(s, name_len))
                return tess_err(err, EINVAL, "a 64-digit hexadecimal string is an image id, not a repository name");

        slash = memchr(s, '/', name_len);
        has_domain = false;
        if (slash) {
                domain_len = (size_t)(slash - s);
                has_domain = memchr(s, '.', domain_len) || memchr(s, ':', domain_len) ||
                             (domain_len == 9 && memcmp(s, "localhost", 9) == 0) || s[0] == '[';
                for (size_t i = 0; i < domain_len && !has_domain; i++)
                        has_domain = s[i] >= 'A' && s[i] <= 'Z';
        }
        if (has_domain && !valid_domain(s, domain_len)) {
                _cleanup_free_ char *q = printable(s, domain_len);
                return tess_err(err, EINVAL, "invalid registry '%s'", q);
        }
        path = has_domain ? slash + 1 : s;
        rc = check_path(path, name_len - (size_t)(path - s), err);
        if (rc < 0)
                return rc;
        if (!has_domain && !default_registry)
                return tess_err(err, EINVAL, "no registry in the reference and no default registry configured");

        r.registry = has_domain ? xstrndup(s, domain_len) : xstrdup(default_registry);
        if (streq(r.registry, "index.docker.io")) {
                free(r.registry);
                r.registry = xstrdup("docker.io");
        }
        r.repository = xstrndup(path, name_len - (size_t)(path - s));
        if (streq(r.registry, "docker.io") && !strchr(r.repository, '/')) {
                char *full = xasprintf("library/%s", r.repository);
                free(r.repository);
                r.repository = full;
        }
        if (colon)
                r.tag = xstrndup(colon + 1, (size_t)((at ? at : s + len) - colon - 1));
        else if (!at)
                r.tag = xstrdup("latest");
        if (at)
                r.digest = xstrdup(at + 1);
        *ret = r;
        return 0;
}

int image_ref_parse(const char *s, const char *default_registry, struct image_ref *ret, struct tess_error **err)
{
        int r = parse(s, default_registry, ret, err);
        if (r < 0) {
                _cleanup_free_ char *q = printable(s, strlen(s));
                return tess_err_wrap(err, "invalid reference '%s'", q);
        }
        return 0;
}

void image_ref_release(struct image_ref *r)
{
        free(r->registry);
        free(r->repository);
        free(r->tag);
        free(r->digest);
        *r = (struct image_ref){ 0 };
}

char *image_ref_format(const struct image_ref *r)
{
        if (r->digest)
                return xasprintf("%s/%s@%s", r->registry, r->repository, r->digest);
        return xasprintf("%s/%s:%s", r->registry, r->repository, r->tag);
}
