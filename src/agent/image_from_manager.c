/* image_from_manager.c - see image_from_manager.h. */
#include "common/compat.h"

#include "agent/agent.h"
#include "agent/image_from_manager.h"
#include "common/crypto.h"
#include "common/sign.h"
#include "common/timeutil.h"
#include "image/image.h"
#include "registry/image_push.h"
#include "registry/registry.h"

/* a streamed blob's chunks: smaller than a whole push's, so that less is
 * left to send once the writer ends */
#define STREAM_CHUNK ((int64_t)4 << 20)

/* The agent's signature of a request, as api_agent_auth() checks it
 * (src/manager/api/auth.c). */
static int sign_request(void *data, const char *method, const char *path, const char *body_sha256,
                        char *ret_lines[REGISTRY_SIGN_LINES], struct tess_error **err)
{
        const struct agent_ctx *ctx = data;
        const char *id = ctx->conf->id;
        int64_t ts = now_usec() / USEC_PER_SEC;
        char sig[SIGN_HEX_MAX];

        if (sign_agent_request_hashed(ctx->secret, method, path, ts, id, body_sha256, sig, err) < 0)
                return -EIO;
        ret_lines[0] = xasprintf("Authorization: TesseraAgent id=%s, signature=%s", id, sig);
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
                        .insecure = https ? NULL : insecure, .tag_as = image, .sign = sign_get, .sign_data = ctx },
                NULL, err);
        if (r == -ENOENT)
                return tess_err_wrap(err, "image '%s' is neither on this agent nor imported into the manager", image);
        return r;
}

/* Push options and reference for `image` on the manager; the options
 * point into *host and *insecure, which must outlive them. */
static int push_setup(struct agent_ctx *ctx, const char *image, char **host,
                      const char *insecure[2], char **ret_ref, struct image_push_opts *ret, struct tess_error **err)
{
        bool https = false;
        int r = manager_host(ctx->conf->manager, host, &https, err);

        if (r < 0)
                return r;
        insecure[0] = *host;
        insecure[1] = NULL;
        *ret_ref = xasprintf("%s/%s", *host, image);
        *ret = (struct image_push_opts){ .insecure = https ? NULL : insecure, .sign = sign_request, .sign_data = ctx };
        return 0;
}

int image_push_to_manager(struct agent_ctx *ctx, const char *image, const char *manifest,
                          void (*progress)(void *data, int64_t sent), void *data, struct tess_error **err)
{
        _cleanup_free_ char *host = NULL, *ref = NULL;
        const char *insecure[2];
        struct image_push_opts o;
        struct image_push_result res;
        int r = push_setup(ctx, image, &host, insecure, &ref, &o, err);

        if (r < 0)
                return r;
        o.manifest = manifest;
        o.progress = progress;
        o.progress_data = data;
        return image_push(image_store_dir(ctx->images), ref, &o, &res, err);
}

int image_push_stream_to_manager(struct agent_ctx *ctx, const char *image, const char *path,
                                 struct image_push_stream **ret, struct tess_error **err)
{
        _cleanup_free_ char *host = NULL, *ref = NULL;
        const char *insecure[2];
        struct image_push_opts o;
        int r = push_setup(ctx, image, &host, insecure, &ref, &o, err);
        if (r < 0)
                return r;
        o.chunk = STREAM_CHUNK;
        return image_push_stream_start(ref, &o, path, ret, err);
}
