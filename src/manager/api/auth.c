/* auth.c - authenticating a request (auth.h): its signature or cookie,
 * or an agent's signature; the cache of verified keypairs. */
#include "common/compat.h"

#include "common/crypto.h"
#include "common/sign.h"
#include "common/timeutil.h"
#include "manager/api/auth.h"
#include "manager/api/public_hosts.h"
#include "manager/api/ratelimit.h"
#include "manager/api/web_session.h"
#include "manager/core/manager.h"
#include "manager/db/db.h"
#include "manager/http/http.h"

#define AUTH_CACHE_SLOTS 1024 /* power of two */

struct auth_entry {
        struct principal who;
        char secret[SIGN_SECRET_KEY_LEN + 1];
        int64_t expires;
        /* the derived signing key of the last day/host/hash seen */
        char key_ymd[9], key_hash[16], key_host[128];
        unsigned char key[SIGN_KEY_MAX];
        unsigned keylen;
};

struct auth_cache {
        struct auth_entry e[AUTH_CACHE_SLOTS];
};

struct auth_cache *auth_cache_new(void)
{
        return xcalloc(1, sizeof(struct auth_cache));
}

struct auth_cache *auth_cache_free(struct auth_cache *ac)
{
        if (ac) {
                explicit_bzero(ac, sizeof(*ac));
                free(ac);
        }
        return NULL;
}

void auth_cache_clear(struct auth_cache *ac)
{
        explicit_bzero(ac, sizeof(*ac));
}

static struct auth_entry *cache_slot(struct auth_cache *ac, const char *access_key)
{
        return &ac->e[hash_str(access_key) & (AUTH_CACHE_SLOTS - 1)];
}

/* Principal and secret of an access key, from the cache or the database;
 * *ret_entry is the cache entry now holding them (NULL when not cached). */
static int lookup_cached(struct manager *m, const char *access_key, struct principal *ret, char **ret_secret,
                         struct auth_entry **ret_entry, struct tess_error **err)
{
        struct auth_entry *e = cache_slot(m->authcache, access_key);
        int64_t now = monotonic_usec();

        *ret_entry = NULL;
        if (e->expires > now && streq(e->who.access_key, access_key)) {
                *ret = e->who;
                *ret_secret = xstrdup(e->secret);
                *ret_entry = e;
                return 0;
        }
        int r = auth_lookup_keypair(m, access_key, ret, ret_secret, err);
        if (r < 0 || strlen(*ret_secret) > SIGN_SECRET_KEY_LEN || m->conf.auth_cache_ttl <= 0)
                return r;
        memset(e, 0, sizeof(*e));
        e->who = *ret;
        memcpy(e->secret, *ret_secret, strlen(*ret_secret) + 1);
        e->expires = now + m->conf.auth_cache_ttl;
        *ret_entry = e;
        return 0;
}

/* The signing key for (hash, day, host), kept in the cache entry. */
static int signing_key(struct auth_entry *e, const char *hash, const char *secret, const char *ymd, const char *host,
                       unsigned char key[SIGN_KEY_MAX], unsigned *ret_len, struct tess_error **err)
{
        if (e && e->keylen && streq(e->key_ymd, ymd) && streq(e->key_hash, hash) && streq(e->key_host, host)) {
                memcpy(key, e->key, e->keylen);
                *ret_len = e->keylen;
                return 0;
        }
        int r = sign_derive_key(hash, secret, ymd, host, key, ret_len, err);
        if (r < 0 || !e || strlen(host) >= sizeof(e->key_host))
                return r;
        snprintf(e->key_ymd, sizeof(e->key_ymd), "%s", ymd);
        snprintf(e->key_hash, sizeof(e->key_hash), "%s", hash);
        snprintf(e->key_host, sizeof(e->key_host), "%s", host);
        memcpy(e->key, key, *ret_len);
        e->keylen = *ret_len;
        return 0;
}

int auth_check_body(struct api_ctx *c, struct tess_error **err)
{
        const char *claimed = http_header(c->req, SIGN_BODY_HASH_HEADER);
        const char *authz = http_header(c->req, "Authorization");
        const struct buf *body = http_body(c->req);
        char actual[SIGN_HEX_MAX];
        struct sign_auth a;

        if (!claimed || !authz) /* not signed so, or a web login's */
                return 0;
        if (sign_parse_authorization(authz, &a, err) < 0 ||
            sign_body_hash(a.hash, body ? body->data : "", body ? body->len : 0, actual, err) < 0)
                return tess_err(err, EACCES, "%s", (*err)->msg);
        if (!sign_equal(actual, claimed))
                return tess_err(err, EACCES, "the body does not match the signed %s", SIGN_BODY_HASH_HEADER);
        return 0;
}

int auth_request(struct api_ctx *c, struct tess_error **err)
{
        struct http_req *req = c->req;
        const char *authz = http_header(req, "Authorization");
        const char *date = http_header(req, "X-BackendAI-Date");
        const char *version = http_header(req, "X-BackendAI-Version");
        const char *host = http_header(req, "Host");
        const char *body_hash = http_header(req, SIGN_BODY_HASH_HEADER);
        struct sign_auth a;
        _cleanup_free_ char *secret = NULL;
        char ymd[9], mime[128], expect[SIGN_HEX_MAX];
        struct auth_entry *entry;
        unsigned char key[SIGN_KEY_MAX];
        unsigned keylen;
        int64_t when;
        int r;

        if (!date)
                date = http_header(req, "Date");
        if (!version)
                version = http_header(req, "X-Sorna-Version");
        if (c->func_prefix && authz)
                return tess_err(err, EACCES,
                                "requests under " FUNC_PREFIX "/ are authenticated by the login cookie "
                                "(POST /server/login), not signed");
        if (!authz) { /* a browser's session cookie (web_session.h) instead? */
                r = web_session_auth(c, err);
                if (r == 0)
                        return ratelimit_check(c, err);
                if (r == -ENOENT && c->func_prefix)
                        return tess_err(err, EACCES, "no login cookie: log in first (POST /server/login)");
                return r == -ENOENT ? tess_err(err, EACCES, "missing Authorization header") : r;
        }
        if (!date)
                return tess_err(err, EACCES, "missing Date or X-BackendAI-Date header");
        if (!version)
                return tess_err(err, EACCES, "missing X-BackendAI-Version header");
        r = sign_check_version(version, err);
        if (r < 0)
                return tess_err(err, EACCES, "%s", (*err)->msg);
        if (time_parse(date, &when, ymd) < 0)
                return tess_err(err, EACCES, "malformed date header '%.64s'", date);
        int64_t skew = when - now_usec();
        if (skew > AUTH_MAX_SKEW_USEC || skew < -AUTH_MAX_SKEW_USEC)
                return tess_err(err, EACCES, "request date is more than 15 minutes from the server's clock");
        r = sign_parse_authorization(authz, &a, err);
        if (r < 0)
                return tess_err(err, EACCES, "%s", (*err)->msg);
        r = lookup_cached(c->m, a.access_key, &c->who, &secret, &entry, err);
        if (r == -ENOENT)
                return tess_err(err, EACCES, "unknown or inactive access key");
        if (r < 0)
                return r == -EIO ? tess_err(err, EACCES, "authentication failed: %s", (*err)->msg) : r;
        if (!public_hosts_allow(c->m->public_hosts, host))
                return tess_err(err, EACCES, "the request was signed for host '%.100s', which is not this "
                                             "manager's (its public_hosts setting)", host ? host : "");
        if (!host)
                host = "";
        sign_mimetype(http_header(req, "Content-Type"), mime, sizeof(mime));
        r = signing_key(entry, a.hash, secret, ymd, host, key, &keylen, err);
        if (r >= 0)
                r = sign_with_key(a.hash, key, keylen, http_method(req), http_raw_target(req), date, host, mime,
                                  version, body_hash, expect, err);
        if (r < 0)
                return tess_err(err, EACCES, "%s", (*err)->msg);
        bool ok = sign_equal(expect, a.signature);
        /* Backend.AI's SDK (aiohttp) signs a request that carries no
         * Content-Type (its WebSockets and event streams) with the type
         * aiohttp reports for it, application/octet-stream, or (its app
         * tunnel, tcpproxy) with the JSON type it asked for but does not
         * send */
        static const char *const unsent_types[] = { "application/octet-stream", "application/json" };
        for (size_t i = 0; !ok && !http_header(req, "Content-Type") && i < ARRAY_SIZE(unsent_types); i++) {
                r = sign_with_key(a.hash, key, keylen, http_method(req), http_raw_target(req), date, host,
                                  unsent_types[i], version, body_hash, expect, err);
                if (r < 0)
                        return tess_err(err, EACCES, "%s", (*err)->msg);
                ok = sign_equal(expect, a.signature);
        }
        if (!ok)
                return tess_err(err, EACCES, "signature mismatch");
        return ratelimit_check(c, err);
}

int api_agent_auth(struct api_ctx *c, struct tess_error **err)
{
        const char *auth = http_header(c->req, "Authorization"), *ts_text = http_header(c->req, "X-Tessera-Agent-Time");
        char id[AGENT_ID_MAX + 1], sig[SIGN_HEX_MAX], want[SIGN_HEX_MAX];
        const struct buf *body = http_body(c->req);
        char *end;

        if (!auth || agent_auth_parse(auth, id, sig) < 0)
                return tess_err(err, EACCES, "agent requests need 'Authorization: TesseraAgent id=ID, signature=HEX'");
        if (!ts_text)
                return tess_err(err, EACCES, "agent requests need an X-Tessera-Agent-Time header");
        errno = 0;
        long long ts = strtoll(ts_text, &end, 10);
        if (errno || *end || end == ts_text)
                return tess_err(err, EACCES, "X-Tessera-Agent-Time must be a Unix time in seconds");
        long long now = now_usec() / USEC_PER_SEC;
        if (ts < now - SIGN_AGENT_SKEW || ts > now + SIGN_AGENT_SKEW)
                return tess_err(err, EACCES, "X-Tessera-Agent-Time is more than %d seconds off the manager's clock",
                                SIGN_AGENT_SKEW);
        if (sign_agent_request(c->m->cluster_secret, http_method(c->req), http_path(c->req), ts, id,
                               body ? body->data : "", body ? body->len : 0, want, err) < 0)
                return -EIO;
        if (!sign_equal(sig, want))
                return tess_err(err, EACCES, "agent signature mismatch (is this agent given the cluster secret?)");
        snprintf(c->who.access_key, sizeof(c->who.access_key), "agent");
        snprintf(c->who.user_id, sizeof(c->who.user_id), "%s", id);
        return 0;
}
