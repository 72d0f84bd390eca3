/* image_from_manager.c - see image_from_manager.h. */
#include "../common/compat.h"

#include "../common/crypto.h"
#include "../common/sign.h"
#include "../common/timeutil.h"
#include "agent.h"
#include "image.h"
#include "image_from_manager.h"
#include "image_push.h"
#include "registry.h"

struct signer {
        const char *id, *secret;
};

/* The agent's signature of a request, as api_agent.c checks it. */
static int sign_request(void *data, const char *method, const char *path, const char *body_sha256,
                        char *ret_lines[REGISTRY_SIGN_LINES], struct tess_error **err)
{
        const struct signer *s = data;
        int64_t ts = now_usec() / USEC_PER_SEC;
        char sig[SIGN_HEX_MAX];

        if (sign_agent_request_hashed(s->secret, method, path, ts, s->id, body_sha256, sig, err) < 0)
                return -EIO;
        ret_lines[0] = xasprintf("Authorization: TesseraAgent id=%s, signature=%s", s->id, sig);
        ret_lines[1] = xasprintf("X-Tessera-Agent-Time: %lld", (long long)ts);
        return 0;
}

static int sign_get(void *data, const char *path, char *ret_lines[REGISTRY_SIGN_LINES], struct tess_error **err)
{
        char empty[65];

        sha256_hex("", 0, empty);
        return sign_request(data, "GET", path, empty, ret_lines, err);
}

/* "HOST:PORT" of the manager's URL (the port spelled out, so that the
 * registry client takes it for a registry), and whether it is https. */
static int manager_host(const char *url, char **ret, bool *ret_https, struct tess_error **err)
{
        bool https = strncmp(url, "https://", 8) == 0;
        const char *host = https ? url + 8 : strncmp(url, "http://", 7) == 0 ? url + 7 : NULL;
        size_t n;

        if (!host || !*host)
                return tess_err(err, EINVAL, "the manager's URL '%s' is not http:// or https://", url);
        n = strcspn(host, "/?#");
        _cleanup_free_ char *hp = xstrndup(host, n);
        const char *bracket = strrchr(hp, ']'), *colon = strrchr(hp, ':');
        bool has_port = colon && (!bracket || colon > bracket);
        *ret = has_port ? TAKE_PTR(hp) : xasprintf("%s:%s", hp, https ? "443" : "80");
        *ret_https = https;
        return 0;
}

int image_pull_from_manager(struct agent_ctx *ctx, const char *image, struct tess_error **err)
{
        _cleanup_free_ char *host = NULL, *ref = NULL;
        struct signer s = { .id = ctx->conf->id, .secret = ctx->secret };
        bool https = false;
        int r;

        r = manager_host(ctx->conf->manager, &host, &https, err);
        if (r < 0)
                return r;
        if (!host) /* (never: for the compiler's sake) */
                return tess_err(err, EINVAL, "the manager's URL names no host");
        const char *insecure[] = { host, NULL };
        ref = xasprintf("%s/%s", host, image);
        r = registry_pull(
                ctx->images, ref,
                &(struct registry_opts){
                        .insecure = https ? NULL : insecure, .tag_as = image, .sign = sign_get, .sign_data = &s },
                NULL, err);
        if (r == -ENOENT)
                return tess_err_wrap(err, "image '%s' is neither on this agent nor imported into the manager", image);
        return r;
}

int image_push_to_manager(struct agent_ctx *ctx, const char *image, const char *manifest,
                          void (*progress)(void *data, int64_t sent), void *data, struct tess_error **err)
{
        _cleanup_free_ char *host = NULL, *ref = NULL;
        struct signer s = { .id = ctx->conf->id, .secret = ctx->secret };
        struct image_push_result res;
        bool https = false;
        int r = manager_host(ctx->conf->manager, &host, &https, err);

        if (r < 0)
                return r;
        const char *insecure[] = { host, NULL };
        ref = xasprintf("%s/%s", host, image);
        return image_push(image_store_dir(ctx->images), ref,
                          &(struct image_push_opts){ .manifest = manifest,
                                                     .insecure = https ? NULL : insecure,
                                                     .sign = sign_request,
                                                     .sign_data = &s,
                                                     .progress = progress,
                                                     .progress_data = data },
                          &res, err);
}
