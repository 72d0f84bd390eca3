/* registry.c - registry_pull(): one image from a registry into the store.
 *
 *   manifest  GET /v2/<name>/manifests/<tag|digest>; an index or manifest
 *             list is followed to its linux/<arch> entry; the digest of the
 *             bytes is checked against the reference's (pull by digest),
 *             the index entry's and Docker-Content-Digest, and the bytes
 *             are stored as a blob
 *   blobs     GET /v2/<name>/blobs/<digest> for the config and each layer
 *             the store lacks, streamed into image_blob_write; a transfer
 *             that breaks off resumes with Range where the server allows;
 *             a layer's writer knows its diff_id (from the config) and
 *             unpacks it as it arrives (image_blob_begin_layer)
 *   tag       image_store_tag(<registry>/<name>:<tag> or @<digest>)
 *
 * See registry.h. */
#include "common/compat.h"

#include "common/crypto.h"
#include "common/fs.h"
#include "image/image.h"
#include "registry/registry-internal.h"

struct pull {
        struct registry_client client;
        struct image_store *st;
        const struct registry_opts *o;
};

/* ---- manifests ---- */

struct fetched_manifest {
        struct buf bytes;
        char digest[7 + 65];
        struct registry_manifest m;
};

static void fetched_manifest_release(struct fetched_manifest *f)
{
        buf_release(&f->bytes);
        registry_manifest_release(&f->m);
}

/* Fetch and parse the manifest `reference` (a tag or a digest); with
 * `expected` (a digest), its bytes must have that digest. */
static int fetch_manifest(struct pull *pl, const char *reference, const char *expected, struct fetched_manifest *ret,
                          struct tess_error **err)
{
        _cleanup_free_ char *path = xasprintf("/v2/%s/manifests/%s", pl->client.repository, reference);
        struct registry_response resp = { 0 };
        struct registry_buf_sink bs;
        struct registry_sink sink;
        char hex[65];
        int r;

        registry_buf_sink_init(&bs, REGISTRY_MANIFEST_MAX, "manifest", &sink);
        r = registry_get(&pl->client, path, MEDIA_MANIFESTS_ACCEPTED, pl->client.timeout_s * 4, &sink, &resp, err);
        if (r < 0)
                goto out;
        sha256_hex(bs.buf.data, bs.buf.len, hex);
        snprintf(ret->digest, sizeof(ret->digest), "sha256:%s", hex);
        if (expected && !streq(expected, ret->digest)) {
                r = tess_err(err, EBADMSG, "digest mismatch for manifest %s: got %s", expected, ret->digest);
                goto out;
        }
        if (resp.docker_digest && strncmp(resp.docker_digest, "sha256:", 7) == 0 &&
            !streq(resp.docker_digest, ret->digest)) {
                r = tess_err(err, EBADMSG, "digest mismatch for manifest %s: the registry says %.80s", ret->digest,
                             resp.docker_digest);
                goto out;
        }
        r = registry_manifest_parse(bs.buf.data, bs.buf.len, resp.content_type, &ret->m, err);
        if (r < 0)
                goto out;
        ret->bytes = bs.buf;
        bs.buf = (struct buf)BUF_INIT;
out:
        registry_response_release(&resp);
        buf_release(&bs.buf);
        return r;
}

/* The image manifest of the reference: itself, or its index's entry for
 * our platform. */
static int resolve_manifest(struct pull *pl, const struct image_ref *ref, struct fetched_manifest *ret,
                            struct tess_error **err)
{
        struct fetched_manifest top = { .bytes = BUF_INIT };
        const struct registry_descriptor *d;
        const char *platform = pl->o->arch ? pl->o->arch : image_host_arch();
        int r;

        r = fetch_manifest(pl, ref->digest ? ref->digest : ref->tag, ref->digest, &top, err);
        if (r < 0)
                return r;
        if (top.m.kind == MANIFEST_IMAGE) {
                *ret = top;
                return 0;
        }
        d = registry_manifest_pick(&top.m, platform);
        if (!d) {
                struct buf have = BUF_INIT;
                for (size_t i = 0; i < top.m.n_entries && i < 8; i++)
                        buf_printf(&have, "%s%.20s/%.20s", i ? ", " : "", top.m.entries[i].os ?: "?",
                                   top.m.entries[i].architecture ?: "?");
                r = tess_err(err, ENOENT, "no image for linux/%s in the index (it has: %s)", platform,
                             have.len ? have.data : "nothing");
                buf_release(&have);
        } else {
                *ret = (struct fetched_manifest){ .bytes = BUF_INIT };
                r = fetch_manifest(pl, d->digest, d->digest, ret, err);
                if (r == 0 && ret->m.kind != MANIFEST_IMAGE) {
                        fetched_manifest_release(ret);
                        r = tess_err(err, EINVAL, "the index entry for linux/%s is another index", platform);
                }
        }
        fetched_manifest_release(&top);
        return r;
}

/* Store bytes we hold (a manifest) as a blob. */
static int store_bytes(struct image_store *st, const char *digest, const struct buf *b, struct tess_error **err)
{
        struct image_blob_writer *w;
        int r;

        if (image_blob_exists(st, digest))
                return 0;
        r = image_blob_begin(st, digest, (int64_t)b->len, &w, err);
        if (r < 0)
                return r;
        r = image_blob_write(w, b->data, b->len, err);
        if (r < 0) {
                image_blob_abort(w);
                return r;
        }
        return image_blob_commit(w, err);
}

/* ---- blobs ---- */

struct blob_sink {
        struct pull *pl;
        const struct registry_descriptor *d;
        const char *what;
        struct image_blob_writer *w;
        int64_t done;
};

static int blob_restart(struct blob_sink *b, struct tess_error **err)
{
        if (b->w)
                image_blob_abort(b->w);
        b->w = NULL;
        b->done = 0;
        return image_blob_begin_layer(b->pl->st, b->d->digest, b->d->size, b->d->diff_id, &b->w, err);
}

static int blob_start(void *data, long status, int64_t range_start, struct tess_error **err)
{
        struct blob_sink *b = data;

        if (status == 206 && range_start == b->done)
                return 0; /* the rest of what we have */
        if (status == 206)
                return tess_err(err, EIO, "%s %s: the registry resumed at byte %lld, not %lld", b->what, b->d->digest,
                                (long long)range_start, (long long)b->done);
        return b->done > 0 ? blob_restart(b, err) : 0; /* the whole blob again */
}

static int blob_write(void *data, const void *p, size_t n, struct tess_error **err)
{
        struct blob_sink *b = data;
        const struct registry_opts *o = b->pl->o;
        int r;

        if ((int64_t)n > b->d->size - b->done)
                return tess_err(err, EBADMSG, "%s %s: more than the %lld bytes of its descriptor", b->what,
                                b->d->digest, (long long)b->d->size);
        r = image_blob_write(b->w, p, n, err);
        if (r < 0)
                return r;
        b->done += (int64_t)n;
        if (o->progress && b->done < b->d->size)
                o->progress(o->progress_data, b->d->digest, b->done, b->d->size);
        return 0;
}

static int64_t blob_offset(void *data)
{
        return ((struct blob_sink *)data)->done;
}

static int fetch_blob(struct pull *pl, const struct registry_descriptor *d, const char *what, struct tess_error **err)
{
        _cleanup_free_ char *path = xasprintf("/v2/%s/blobs/%s", pl->client.repository, d->digest);
        struct blob_sink b = { .pl = pl, .d = d, .what = what };
        struct registry_sink sink = { blob_start, blob_write, blob_offset, &b };
        struct registry_response resp = { 0 };
        int r;

        if (image_blob_exists(pl->st, d->digest))
                return 0;
        r = blob_restart(&b, err);
        if (r < 0)
                return r;
        r = registry_get(&pl->client, path, NULL, 0, &sink, &resp, err);
        registry_response_release(&resp);
        if (r == 0 && b.done != d->size)
                r = tess_err(err, EBADMSG, "%s %s: got %lld bytes, its descriptor says %lld", what, d->digest,
                             (long long)b.done, (long long)d->size);
        if (r < 0) {
                if (b.w) /* (a failed restart leaves none) */
                        image_blob_abort(b.w);
                return r;
        }
        r = image_blob_commit(b.w, err);
        if (r == -EBADMSG)
                return tess_err_wrap(err, "digest mismatch for %s %s", what, d->digest);
        if (r < 0)
                return tess_err_wrap(err, "storing %s %s", what, d->digest);
        if (pl->o->progress)
                pl->o->progress(pl->o->progress_data, d->digest, d->size, d->size);
        return 0;
}

/* The layers' diff_ids from the config blob: their writers unpack them as
 * they arrive.  Without (an unreadable config), layers are unpacked when
 * the image is tagged, which says what is wrong with the config. */
static void read_diff_ids(struct pull *pl, struct registry_manifest *m)
{
        _cleanup_free_ char *path = image_blob_path(pl->st, m->config.digest), *config = NULL;
        size_t len;

        if (path && fs_read_file(path, REGISTRY_CONFIG_MAX, &config, &len, NULL) >= 0)
                registry_manifest_set_diff_ids(m, config, len);
}

/* ---- the pull ---- */

static int pull(struct pull *pl, const struct image_ref *ref, const char *name, char **ret_digest,
                struct tess_error **err)
{
        struct fetched_manifest fm = { .bytes = BUF_INIT };
        int r;

        r = resolve_manifest(pl, ref, &fm, err);
        if (r < 0)
                return r;
        r = store_bytes(pl->st, fm.digest, &fm.bytes, err);
        if (r < 0)
                r = tess_err_wrap(err, "storing manifest %s", fm.digest);
        if (r == 0)
                r = fetch_blob(pl, &fm.m.config, "config", err);
        if (r == 0)
                read_diff_ids(pl, &fm.m);
        for (size_t i = 0; r == 0 && i < fm.m.n_entries; i++)
                r = fetch_blob(pl, &fm.m.entries[i], "layer", err);
        if (r == 0)
                r = image_store_tag(pl->st, name, fm.digest, err);
        if (r == 0 && ret_digest)
                *ret_digest = xstrdup(fm.digest);
        fetched_manifest_release(&fm);
        return r;
}

int registry_pull(struct image_store *st, const char *ref, const struct registry_opts *o, char **ret_manifest_digest,
                  struct tess_error **err)
{
        static const struct registry_opts defaults = { 0 };
        _cleanup_free_ char *name = NULL;
        struct image_ref r = { 0 };
        struct pull pl = { .st = st, .o = o ? o : &defaults };
        int rc;

        rc = image_ref_parse(ref, pl.o->default_registry, &r, err);
        if (rc < 0)
                return rc;
        name = pl.o->tag_as ? xstrdup(pl.o->tag_as) : image_ref_format(&r);
        rc = registry_client_init(&pl.client, &r, pl.o, err);
        if (rc == 0) {
                rc = pull(&pl, &r, name, ret_manifest_digest, err);
                registry_client_release(&pl.client);
        }
        image_ref_release(&r);
        if (rc < 0)
                return tess_err_wrap(err, "pulling %s", name);
        return 0;
}
