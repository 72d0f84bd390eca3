/* image_manifest.c - parsing the JSON documents of an image: OCI image
 * manifests and indexes, Docker v2 schema 2 manifests and manifest lists,
 * and image configs.  Pure: bytes in, structs out (plus two loaders that
 * read the bytes from a committed blob). */
#include "common/compat.h"

#include <jansson.h>

#include "image/image-internal.h"

/* The layer media types the store unpacks (layer_inflate.c tells the
 * compression apart by the blob's first bytes). */
static const char *const layer_media_types[] = {
        IMAGE_MEDIA_OCI_LAYER,
        IMAGE_MEDIA_OCI_LAYER "+gzip",
        IMAGE_MEDIA_OCI_LAYER "+zstd",
        "application/vnd.oci.image.layer.nondistributable.v1.tar",
        "application/vnd.oci.image.layer.nondistributable.v1.tar+gzip",
        "application/vnd.oci.image.layer.nondistributable.v1.tar+zstd",
        "application/vnd.docker.image.rootfs.diff.tar",
        "application/vnd.docker.image.rootfs.diff.tar.gzip",
        "application/vnd.docker.image.rootfs.foreign.diff.tar.gzip",
};

static const char *const config_media_types[] = {
        IMAGE_MEDIA_OCI_CONFIG,
        "application/vnd.docker.container.image.v1+json",
};

static bool in_list(const char *s, const char *const *list, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                if (streq(s, list[i]))
                        return true;
        }
        return false;
}

const char *image_host_arch(void)
{
#if defined(__x86_64__)
        return "amd64";
#elif defined(__aarch64__)
        return "arm64";
#elif defined(__powerpc64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        return "ppc64le";
#elif defined(__s390x__)
        return "s390x";
#elif defined(__riscv) && __riscv_xlen == 64
        return "riscv64";
#else
#error "unknown host architecture: add its OCI name"
#endif
}

void image_strv_free(char **v)
{
        if (!v)
                return;
        for (char **p = v; *p; p++)
                free(*p);
        free(v);
}

static char *str_dup_of(const json_t *obj, const char *key)
{
        const json_t *v = json_object_get(obj, key);
        return json_is_string(v) ? xstrdup(json_string_value(v)) : NULL;
}

/* An array of strings (or null / absent: *ret = NULL) as a strv. */
static int strv_of(const json_t *obj, const char *key, char ***ret, size_t *ret_n, struct tess_error **err)
{
        const json_t *a = json_object_get(obj, key), *v;
        char **strv;
        size_t i;

        *ret = NULL;
        if (!a || json_is_null(a))
                return 0;
        if (!json_is_array(a))
                return tess_err(err, EINVAL, "'%s' is not an array", key);
        strv = xcalloc(json_array_size(a) + 1, sizeof(char *));
        json_array_foreach (a, i, v) {
                if (!json_is_string(v)) {
                        image_strv_free(strv);
                        return tess_err(err, EINVAL, "'%s' holds a non-string", key);
                }
                strv[i] = xstrdup(json_string_value(v));
        }
        *ret = strv;
        if (ret_n)
                *ret_n = json_array_size(a);
        return 0;
}

static void descriptor_release(struct image_descriptor *d)
{
        free(d->media_type);
        free(d->digest);
        free(d->os);
        free(d->architecture);
        free(d->ref_name);
        free(d->image_name);
        *d = (struct image_descriptor){ 0 };
}

void image_descriptors_free(struct image_descriptor *d, size_t n)
{
        for (size_t i = 0; i < n; i++)
                descriptor_release(&d[i]);
        free(d);
}

static int descriptor_parse(const json_t *j, const char *what, struct image_descriptor *ret, struct tess_error **err)
{
        const json_t *size = json_object_get(j, "size"), *digest = json_object_get(j, "digest");
        const json_t *platform = json_object_get(j, "platform"), *annotations = json_object_get(j, "annotations");

        if (!json_is_object(j))
                return tess_err(err, EINVAL, "%s is not an object", what);
        if (!image_digest_valid(json_string_value(digest)))
                return tess_err(err, EINVAL, "%s has no sha256 digest", what);
        if (!json_is_integer(size) || json_integer_value(size) < 0)
                return tess_err(err, EINVAL, "%s has no size", what);
        *ret = (struct image_descriptor){
                .media_type = str_dup_of(j, "mediaType"),
                .digest = xstrdup(json_string_value(digest)),
                .size = json_integer_value(size),
                .os = str_dup_of(platform, "os"),
                .architecture = str_dup_of(platform, "architecture"),
                .ref_name = str_dup_of(annotations, IMAGE_ANNOTATION_REF),
                .image_name = str_dup_of(annotations, IMAGE_ANNOTATION_IMAGE_NAME),
        };
        return 0;
}

static int descriptors_parse(const json_t *a, const char *what, struct image_descriptor **ret, size_t *ret_n,
                             struct tess_error **err)
{
        struct image_descriptor *d;
        const json_t *v;
        size_t i;
        int r;

        if (!json_is_array(a))
                return tess_err(err, EINVAL, "'%s' is not an array", what);
        d = xcalloc(json_array_size(a) + 1, sizeof(*d));
        json_array_foreach (a, i, v) {
                _cleanup_free_ char *name = xasprintf("%s[%zu]", what, i);
                r = descriptor_parse(v, name, &d[i], err);
                if (r < 0) {
                        image_descriptors_free(d, i);
                        return r;
                }
        }
        *ret = d;
        *ret_n = json_array_size(a);
        return 0;
}

static int manifest_fill(const json_t *j, struct image_manifest *m, struct tess_error **err)
{
        const char *mt = m->media_type;
        int r;

        if (json_integer_value(json_object_get(j, "schemaVersion")) != 2)
                return tess_err(err, EINVAL, "schemaVersion is not 2");
        m->is_index = mt ? streq(mt, IMAGE_MEDIA_OCI_INDEX) || streq(mt, IMAGE_MEDIA_DOCKER_LIST)
                         : json_object_get(j, "manifests") != NULL;
        if (m->is_index)
                return descriptors_parse(json_object_get(j, "manifests"), "manifests", &m->manifests,
                                         &m->n_manifests, err);
        if (mt && !streq(mt, IMAGE_MEDIA_OCI_MANIFEST) && !streq(mt, IMAGE_MEDIA_DOCKER_MANIFEST))
                return tess_err(err, EINVAL, "unsupported manifest media type '%s'", mt);

        r = descriptor_parse(json_object_get(j, "config"), "config", &m->config, err);
        if (r < 0)
                return r;
        if (!m->config.media_type ||
            !in_list(m->config.media_type, config_media_types, ARRAY_SIZE(config_media_types)))
                return tess_err(err, EINVAL, "not a container image: config media type '%s'",
                                m->config.media_type ? m->config.media_type : "(none)");
        r = descriptors_parse(json_object_get(j, "layers"), "layers", &m->layers, &m->n_layers, err);
        if (r < 0)
                return r;
        for (size_t i = 0; i < m->n_layers; i++) {
                const char *lt = m->layers[i].media_type;
                if (!lt || !in_list(lt, layer_media_types, ARRAY_SIZE(layer_media_types)))
                        return tess_err(err, EINVAL, "layer %zu: unsupported media type '%s'", i,
                                        lt ? lt : "(none)");
        }
        return 0;
}

int image_manifest_parse(const char *p, size_t n, struct image_manifest *ret, struct tess_error **err)
{
        struct image_manifest m = { 0 };
        json_error_t jerr;
        json_t *j;
        int r;

        j = json_loadb(p, n, JSON_REJECT_DUPLICATES, &jerr);
        if (!j)
                return tess_err(err, EINVAL, "manifest: %s", jerr.text);
        if (!json_is_object(j)) {
                json_decref(j);
                return tess_err(err, EINVAL, "manifest: not an object");
        }
        m.media_type = str_dup_of(j, "mediaType");
        r = manifest_fill(j, &m, err);
        json_decref(j);
        if (r < 0) {
                image_manifest_release(&m);
                return tess_err_wrap(err, "manifest");
        }
        *ret = m;
        return 0;
}

void image_manifest_release(struct image_manifest *m)
{
        free(m->media_type);
        descriptor_release(&m->config);
        image_descriptors_free(m->layers, m->n_layers);
        image_descriptors_free(m->manifests, m->n_manifests);
        *m = (struct image_manifest){ 0 };
}

const struct image_descriptor *image_manifest_pick_platform(const struct image_manifest *index)
{
        for (size_t i = 0; i < index->n_manifests; i++) {
                const struct image_descriptor *d = &index->manifests[i];
                if (streq_ptr(d->os, "linux") && streq_ptr(d->architecture, image_host_arch()))
                        return d;
        }
        return NULL;
}

/* Labels {"k": "v"} as "k=v" strings. */
static int labels_of(const json_t *obj, char ***ret, struct tess_error **err)
{
        const json_t *labels = json_object_get(obj, "Labels"), *v;
        const char *key;
        size_t i = 0;

        *ret = NULL;
        if (!labels || json_is_null(labels))
                return 0;
        if (!json_is_object(labels))
                return tess_err(err, EINVAL, "'Labels' is not an object");
        *ret = xcalloc(json_object_size(labels) + 1, sizeof(char *));
        json_object_foreach ((json_t *)labels, key, v) {
                if (!json_is_string(v))
                        return tess_err(err, EINVAL, "label '%s' is not a string", key);
                (*ret)[i++] = xasprintf("%s=%s", key, json_string_value(v));
        }
        return 0;
}

static int config_fill(const json_t *j, struct image_config *c, struct tess_error **err)
{
        const json_t *cc = json_object_get(j, "config"), *rootfs = json_object_get(j, "rootfs");
        int r;

        c->architecture = str_dup_of(j, "architecture");
        c->os = str_dup_of(j, "os");
        c->created = str_dup_of(j, "created");
        c->working_dir = str_dup_of(cc, "WorkingDir");
        c->user = str_dup_of(cc, "User");
        r = labels_of(cc, &c->labels, err);
        if (r >= 0)
                r = strv_of(cc, "Env", &c->env, NULL, err);
        if (r >= 0)
                r = strv_of(cc, "Entrypoint", &c->entrypoint, NULL, err);
        if (r >= 0)
                r = strv_of(cc, "Cmd", &c->cmd, NULL, err);
        if (r < 0)
                return r;
        if (!json_is_object(rootfs) || !streq_ptr(json_string_value(json_object_get(rootfs, "type")), "layers"))
                return tess_err(err, EINVAL, "rootfs.type is not 'layers'");
        r = strv_of(rootfs, "diff_ids", &c->diff_ids, &c->n_diff_ids, err);
        if (r < 0)
                return r;
        if (!c->diff_ids)
                return tess_err(err, EINVAL, "rootfs.diff_ids is missing");
        for (size_t i = 0; i < c->n_diff_ids; i++) {
                if (!image_digest_valid(c->diff_ids[i]))
                        return tess_err(err, EINVAL, "rootfs.diff_ids[%zu] is not a sha256 digest", i);
        }
        return 0;
}

int image_config_parse(const char *p, size_t n, struct image_config *ret, struct tess_error **err)
{
        struct image_config c = { 0 };
        json_error_t jerr;
        json_t *j;
        int r;

        j = json_loadb(p, n, JSON_REJECT_DUPLICATES, &jerr);
        if (!j)
                return tess_err(err, EINVAL, "image config: %s", jerr.text);
        r = json_is_object(j) ? config_fill(j, &c, err) : tess_err(err, EINVAL, "not an object");
        json_decref(j);
        if (r < 0) {
                image_config_release(&c);
                return tess_err_wrap(err, "image config");
        }
        *ret = c;
        return 0;
}

void image_config_release(struct image_config *c)
{
        free(c->architecture);
        free(c->os);
        free(c->created);
        image_strv_free(c->labels);
        image_strv_free(c->env);
        image_strv_free(c->entrypoint);
        image_strv_free(c->cmd);
        free(c->working_dir);
        free(c->user);
        image_strv_free(c->diff_ids);
        *c = (struct image_config){ 0 };
}

int image_manifest_load(struct image_store *st, const char *digest, struct image_manifest *ret,
                        struct tess_error **err)
{
        _cleanup_free_ char *data = NULL;
        size_t len;
        int r;

        r = image_blob_read(st, digest, IMAGE_MANIFEST_MAX, &data, &len, err);
        if (r >= 0)
                r = image_manifest_parse(data, len, ret, err);
        if (r < 0)
                return tess_err_wrap(err, "reading manifest %s", digest);
        return 0;
}

int image_config_load(struct image_store *st, const char *digest, struct image_config *ret, struct tess_error **err)
{
        _cleanup_free_ char *data = NULL;
        size_t len;
        int r;

        r = image_blob_read(st, digest, IMAGE_CONFIG_MAX, &data, &len, err);
        if (r >= 0)
                r = image_config_parse(data, len, ret, err);
        if (r < 0)
                return tess_err_wrap(err, "reading image config %s", digest);
        return 0;
}
