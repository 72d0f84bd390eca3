/* registry_catalog.c - what a registry holds, for a scan rather than a
 * pull: its repositories (GET /v2/_catalog) and their tags (GET
 * /v2/<name>/tags/list), page by page (?n=, then the target of the
 * answer's Link: <...>; rel="next" header until there is none), and the
 * manifests and configs of tags, each checked against its digest.  The
 * HTTP, authentication and retries are the pull's (registry_http.c,
 * registry_auth.c).  See registry-internal.h. */
#include "common/compat.h"

#include <ctype.h>
#include <strings.h>

#include <jansson.h>

#include "common/crypto.h"
#include "registry/registry-internal.h"

#define LINK_TARGET_MAX 2048

int registry_client_init_url(struct registry_client *c, const char *url, const struct registry_opts *o,
                             struct tess_error **err)
{
        bool https = strncmp(url, "https://", 8) == 0;
        const char *host = url + (https ? 8 : 7);
        int r;

        if (!https && strncmp(url, "http://", 7) != 0)
                return tess_err(err, EINVAL, "'%.200s' is not an http:// or https:// URL", url);
        _cleanup_free_ char *registry = xstrndup(host, strcspn(host, "/"));
        struct image_ref ref = { .registry = registry, .repository = (char *)"" };
        r = registry_client_init(c, &ref, o, err);
        if (r < 0)
                return r;
        free(c->base);
        c->base = xasprintf("%s://%s", https ? "https" : "http", registry);
        c->https = https;
        return 0;
}

void registry_client_set_repository(struct registry_client *c, const char *repository)
{
        free(c->repository);
        c->repository = xstrdup(repository);
        free(c->bearer); /* a token is for one repository's scope */
        c->bearer = NULL;
}

/* ---- one page of a listing ---- */

/* A name from a registry in a message: printable ASCII, bounded. */
static char *quoted(const char *s)
{
        struct buf b = BUF_INIT;

        for (size_t i = 0; s[i] && i < 100; i++)
                buf_putc(&b, s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?');
        return buf_detach(&b, NULL);
}

/* Is s what image_ref_parse() reads back as the repository (or the tag)
 * of "localhost/<s>" ("localhost/x:<s>")? */
static bool name_valid(const char *s, bool tag)
{
        _cleanup_free_ char *ref = tag ? xasprintf("localhost/x:%s", s) : xasprintf("localhost/%s", s);
        struct image_ref r;
        bool ok;

        if (!*s || strpbrk(s, tag ? "@/:" : "@:") || image_ref_parse(ref, NULL, &r, NULL) < 0)
                return false;
        ok = streq_ptr(tag ? r.tag : r.repository, s);
        image_ref_release(&r);
        return ok;
}

int registry_list_parse(const char *p, size_t len, const char *key, json_t *names, struct tess_error **err)
{
        bool tags = streq(key, "tags");
        json_error_t jerr;
        json_t *j, *list, *v;
        size_t i;
        int r = 0;

        if (len > REGISTRY_LIST_PAGE_MAX)
                return tess_err(err, EINVAL, "a page of %s larger than %u bytes", key, REGISTRY_LIST_PAGE_MAX);
        j = json_loadb(p, len, JSON_REJECT_DUPLICATES, &jerr);
        if (!j)
                return tess_err(err, EINVAL, "a page of %s is not JSON: line %d: %s", key, jerr.line, jerr.text);
        list = json_object_get(j, key);
        if (!json_is_object(j))
                r = tess_err(err, EINVAL, "a page of %s is not a JSON object", key);
        else if (list && !json_is_null(list) && !json_is_array(list))
                r = tess_err(err, EINVAL, "\"%s\" is not a list", key);
        json_array_foreach(list, i, v) {
                const char *s = json_string_value(v);
                if (r < 0)
                        break;
                if (!s || strlen(s) != json_string_length(v) || !name_valid(s, tags)) {
                        _cleanup_free_ char *q = s ? quoted(s) : NULL;
                        r = tess_err(err, EINVAL, "%s[%zu] is not a %s: '%s'", key, i, tags ? "tag" : "repository name",
                                     q ? q : "(not a string)");
                        break;
                }
                json_array_append(names, v);
                r++;
        }
        json_decref(j);
        return r;
}

/* ---- the Link header (RFC 8288) ---- */

static const char *skip_ows(const char *p)
{
        while (*p == ' ' || *p == '\t')
                p++;
        return p;
}

/* A parameter value: a quoted-string (unescaped) or a token; *pp moves past it. */
static char *param_value(const char **pp)
{
        const char *p = *pp;
        struct buf b = BUF_INIT;

        if (*p == '"') {
                for (p++; *p && *p != '"'; p++) {
                        if (*p == '\\' && p[1])
                                p++;
                        buf_putc(&b, *p);
                }
                if (*p == '"')
                        p++;
        } else {
                while (*p && !strchr(";, \t", *p))
                        buf_putc(&b, *p++);
        }
        *pp = p;
        return buf_detach(&b, NULL);
}

/* Does a rel value (relation types separated by blanks) hold "next"? */
static bool rel_has_next(const char *rel)
{
        for (const char *p = rel; *p;) {
                size_t n = strcspn(p, " \t");
                if (n == 4 && strncasecmp(p, "next", 4) == 0)
                        return true;
                p += n;
                p += strspn(p, " \t");
        }
        return false;
}

/* The target of the first link with rel="next" in `link`, or NULL. */
static int find_next(const char *link, char **ret, struct tess_error **err)
{
        const char *p = link;

        *ret = NULL;
        for (;;) {
                while (*p == ',' || *p == ' ' || *p == '\t')
                        p++;
                if (!*p)
                        return 0;
                if (*p != '<')
                        return tess_err(err, EINVAL, "a Link header value does not start with '<'");
                const char *end = strchr(p, '>');
                if (!end)
                        return tess_err(err, EINVAL, "a Link header target has no '>'");
                _cleanup_free_ char *target = xstrndup(p + 1, (size_t)(end - p - 1));
                bool next = false;
                p = skip_ows(end + 1);
                while (*p == ';') {
                        p = skip_ows(p + 1);
                        size_t n = strcspn(p, "=;, \t");
                        bool is_rel = n == 3 && strncasecmp(p, "rel", 3) == 0;
                        p = skip_ows(p + n);
                        if (*p == '=') {
                                p = skip_ows(p + 1);
                                _cleanup_free_ char *v = param_value(&p);
                                next = next || (is_rel && rel_has_next(v));
                        }
                        p = skip_ows(p);
                }
                if (*p && *p != ',')
                        return tess_err(err, EINVAL, "a Link header has '%c' where ',' or ';' belongs",
                                        *p >= 0x20 && *p < 0x7f ? *p : '?');
                if (next) {
                        *ret = TAKE_PTR(target);
                        return 0;
                }
        }
}

int registry_link_next(const char *link, const char *base, char **ret_path, struct tess_error **err)
{
        _cleanup_free_ char *target = NULL;
        const char *path;
        int r;

        *ret_path = NULL;
        if (!link)
                return 0;
        r = find_next(link, &target, err);
        if (r < 0 || !target)
                return r;
        size_t blen = strlen(base);
        path = strncmp(target, base, blen) == 0 ? target + blen : target;
        if (strncmp(path, "/v2/", 4) != 0 || strlen(path) > LINK_TARGET_MAX) {
                _cleanup_free_ char *q = quoted(target);
                return tess_err(err, EINVAL, "the next page '%s' is not under %s/v2/", q, base);
        }
        for (const char *s = path; *s; s++)
                if (*s <= 0x20 || *s >= 0x7f || *s == '#') {
                        _cleanup_free_ char *q = quoted(path);
                        return tess_err(err, EINVAL, "the next page '%s' is not a plain URL path", q);
                }
        *ret_path = xstrdup(path);
        return 0;
}

/* ---- listings ---- */

/* The Link headers of the client's last answer, joined with ", "; NULL if none. */
static char *link_headers(CURL *h)
{
        struct curl_header *hd;
        struct buf b = BUF_INIT;

        for (size_t i = 0; curl_easy_header(h, "Link", i, CURLH_HEADER, -1, &hd) == CURLHE_OK; i++) {
                buf_printf(&b, "%s%s", b.len ? ", " : "", hd->value);
                if (i + 1 >= hd->amount)
                        break;
        }
        if (b.len)
                return buf_detach(&b, NULL);
        buf_release(&b);
        return NULL;
}

/* One page: its names appended; *next gets the next page's path or NULL. */
static int list_page(struct registry_client *c, const char *path, const char *key, json_t *names, char **next,
                     struct tess_error **err)
{
        struct registry_response resp = { 0 };
        struct registry_buf_sink bs;
        struct registry_sink sink;
        int r;

        registry_buf_sink_init(&bs, REGISTRY_LIST_PAGE_MAX, key, &sink);
        r = registry_get(c, path, "application/json", c->timeout_s * 4, &sink, &resp, err);
        registry_response_release(&resp);
        if (r >= 0)
                r = registry_list_parse(bs.buf.data, bs.buf.len, key, names, err);
        if (r >= 0) {
                _cleanup_free_ char *link = link_headers(c->curl);
                int rl = registry_link_next(link, c->base, next, err);
                if (rl < 0)
                        r = rl;
        }
        buf_release(&bs.buf);
        return r;
}

int registry_list(struct registry_client *c, const char *path, const char *key, json_t **ret, struct tess_error **err)
{
        _cleanup_free_ char *page = xasprintf("%s?n=%d", path, REGISTRY_LIST_PAGE);
        json_t *names = json_array();
        int r;

        for (;;) {
                char *next = NULL;
                r = list_page(c, page, key, names, &next, err);
                if (r < 0)
                        break;
                if (json_array_size(names) > REGISTRY_LIST_MAX) {
                        free(next);
                        r = tess_err(err, EFBIG, "more than %d %s", REGISTRY_LIST_MAX, key);
                        break;
                }
                /* no next page, or one that adds nothing or repeats itself: the end */
                if (!next || r == 0 || streq(next, page)) {
                        free(next);
                        break;
                }
                free(page);
                page = next;
        }
        if (r < 0) {
                json_decref(names);
                return tess_err_wrap(err, "listing %s", path);
        }
        *ret = names;
        return 0;
}

/* ---- manifests and configs ---- */

/* GET /v2/<repository>/<kind>/<reference> whole into *ret (at most max
 * bytes): its sha256 into ret_digest, checked against `expected` and the
 * answer's Docker-Content-Digest. */
static int get_checked(struct registry_client *c, const char *kind, const char *reference, const char *accept,
                       const char *expected, size_t max, struct buf *ret, char ret_digest[REGISTRY_DIGEST_LEN],
                       char **ret_content_type, struct tess_error **err)
{
        _cleanup_free_ char *path = xasprintf("/v2/%s/%s/%s", c->repository, kind, reference);
        struct registry_response resp = { 0 };
        struct registry_buf_sink bs;
        struct registry_sink sink;
        char hex[65];
        int r;

        registry_buf_sink_init(&bs, max, streq(kind, "blobs") ? "blob" : "manifest", &sink);
        r = registry_get(c, path, accept, c->timeout_s * 4, &sink, &resp, err);
        if (r >= 0) {
                sha256_hex(bs.buf.data, bs.buf.len, hex);
                snprintf(ret_digest, REGISTRY_DIGEST_LEN, "sha256:%s", hex);
                if (expected && !streq(expected, ret_digest))
                        r = tess_err(err, EBADMSG, "digest mismatch for %s: got %s", expected, ret_digest);
                else if (resp.docker_digest && strncmp(resp.docker_digest, "sha256:", 7) == 0 &&
                         !streq(resp.docker_digest, ret_digest))
                        r = tess_err(err, EBADMSG, "digest mismatch for %s: the registry says %.80s", ret_digest,
                                     resp.docker_digest);
        }
        if (r >= 0) {
                *ret = bs.buf;
                bs.buf = (struct buf)BUF_INIT;
                if (ret_content_type)
                        *ret_content_type = TAKE_PTR(resp.content_type);
        }
        registry_response_release(&resp);
        buf_release(&bs.buf);
        return r < 0 ? r : 0;
}

int registry_manifest_get(struct registry_client *c, const char *reference, const char *expected,
                          char ret_digest[REGISTRY_DIGEST_LEN], struct registry_manifest *ret, struct tess_error **err)
{
        _cleanup_(buf_release) struct buf bytes = BUF_INIT;
        _cleanup_free_ char *ctype = NULL;
        int r;

        r = get_checked(c, "manifests", reference, MEDIA_MANIFESTS_ACCEPTED, expected, REGISTRY_MANIFEST_MAX, &bytes,
                        ret_digest, &ctype, err);
        if (r < 0)
                return r;
        return registry_manifest_parse(bytes.data, bytes.len, ctype, ret, err);
}

int registry_blob_get(struct registry_client *c, const char *digest, size_t max, struct buf *ret,
                      struct tess_error **err)
{
        char got[REGISTRY_DIGEST_LEN];

        return get_checked(c, "blobs", digest, NULL, digest, max, ret, got, NULL, err);
}
