/* registry_manifest.c - image manifests and indexes as a registry sends them
 * (OCI image manifest and index, Docker v2 schema 2 manifest and manifest
 * list): parsed with jansson, every descriptor checked before a digest
 * reaches a URL or the store.  See registry-internal.h. */
#include "common/compat.h"

#include <jansson.h>

#include "registry/registry-internal.h"

#define MEDIA_OCI_CONFIG "application/vnd.oci.image.config.v1+json"
#define MEDIA_DOCKER_CONFIG "application/vnd.docker.container.image.v1+json"
#define MEDIA_DOCKER_V1 "application/vnd.docker.distribution.manifest.v1+" /* json, prettyjws */
#define BLOB_SIZE_MAX (1LL << 42) /* 4 TiB: more is a lie */

static char *opt_string(json_t *obj, const char *key)
{
        const char *s = json_string_value(json_object_get(obj, key));
        return s ? xstrdup(s) : NULL;
}

static void descriptor_release(struct registry_descriptor *d)
{
        free(d->media_type);
        free(d->digest);
        free(d->os);
        free(d->architecture);
        free(d->variant);
        free(d->diff_id);
}

static int descriptor_parse(json_t *j, const char *what, size_t i, struct registry_descriptor *ret,
                            struct tess_error **err)
{
        json_t *size = json_object_get(j, "size"), *platform = json_object_get(j, "platform");
        const char *digest = json_string_value(json_object_get(j, "digest"));

        if (!json_is_object(j))
                return tess_err(err, EINVAL, "%s %zu: not an object", what, i);
        if (!image_digest_valid(digest))
                return tess_err(err, EINVAL, "%s %zu: no sha256 digest", what, i);
        if (!json_is_integer(size) || json_integer_value(size) < 0 || json_integer_value(size) > BLOB_SIZE_MAX)
                return tess_err(err, EINVAL, "%s %zu (%s): no valid size", what, i, digest);
        *ret = (struct registry_descriptor){
                .media_type = opt_string(j, "mediaType"),
                .digest = xstrdup(digest),
                .size = (int64_t)json_integer_value(size),
        };
        if (json_is_object(platform)) {
                ret->os = opt_string(platform, "os");
                ret->architecture = opt_string(platform, "architecture");
                ret->variant = opt_string(platform, "variant");
        }
        return 0;
}

static int entries_parse(json_t *arr, const char *what, size_t max, struct registry_manifest *m,
                         struct tess_error **err)
{
        size_t n = json_array_size(arr);
        int r;

        if (!json_is_array(arr))
                return tess_err(err, EINVAL, "no \"%ss\" array", what);
        if (n > max)
                return tess_err(err, EINVAL, "%zu %ss, more than %zu", n, what, max);
        m->entries = xcalloc(n ? n : 1, sizeof(*m->entries));
        for (size_t i = 0; i < n; i++) {
                r = descriptor_parse(json_array_get(arr, i), what, i, &m->entries[i], err);
                if (r < 0)
                        return r;
                m->n_entries++;
        }
        return 0;
}

/* The kind from a media type; -1 when it names neither. */
static int kind_of(const char *t)
{
        if (!t)
                return -1;
        if (streq(t, MEDIA_OCI_INDEX) || streq(t, MEDIA_DOCKER_LIST))
                return MANIFEST_INDEX;
        if (streq(t, MEDIA_OCI_MANIFEST) || streq(t, MEDIA_DOCKER_MANIFEST))
                return MANIFEST_IMAGE;
        return -1;
}

static int parse(json_t *j, const char *content_type, struct registry_manifest *m, struct tess_error **err)
{
        const char *field = json_string_value(json_object_get(j, "mediaType"));
        json_t *version = json_object_get(j, "schemaVersion");
        int kind;

        if (!json_is_object(j))
                return tess_err(err, EINVAL, "not a JSON object");
        if (json_integer_value(version) == 1 || (content_type && strncmp(content_type, MEDIA_DOCKER_V1, strlen(MEDIA_DOCKER_V1)) == 0))
                return tess_err(err, EINVAL, "schema 1 manifests are not supported");
        if (!json_is_integer(version) || json_integer_value(version) != 2)
                return tess_err(err, EINVAL, "schemaVersion is not 2");
        kind = kind_of(field);
        if (field && kind < 0)
                return tess_err(err, EINVAL, "unsupported media type '%.100s'", field);
        if (kind < 0)
                kind = kind_of(content_type);
        if (kind < 0)
                kind = json_object_get(j, "manifests") ? MANIFEST_INDEX : MANIFEST_IMAGE;
        m->kind = kind;
        m->media_type = xstrdup(field                ? field
                                : kind_of(content_type) >= 0 ? content_type
                                : kind == MANIFEST_INDEX      ? MEDIA_OCI_INDEX
                                                              : MEDIA_OCI_MANIFEST);
        if (kind == MANIFEST_INDEX)
                return entries_parse(json_object_get(j, "manifests"), "manifest", REGISTRY_INDEX_MAX, m, err);

        json_t *config = json_object_get(j, "config");
        if (!json_is_object(config))
                return tess_err(err, EINVAL, "no config");
        int r = descriptor_parse(config, "config", 0, &m->config, err);
        if (r < 0)
                return r;
        if (!m->config.media_type || (!streq(m->config.media_type, MEDIA_OCI_CONFIG) &&
                                      !streq(m->config.media_type, MEDIA_DOCKER_CONFIG)))
                return tess_err(err, EINVAL, "not a container image: its config is '%.100s'",
                                m->config.media_type ? m->config.media_type : "(no media type)");
        return entries_parse(json_object_get(j, "layers"), "layer", REGISTRY_LAYERS_MAX, m, err);
}

int registry_manifest_parse(const char *p, size_t len, const char *content_type, struct registry_manifest *ret,
                            struct tess_error **err)
{
        struct registry_manifest m = { 0 };
        json_error_t jerr;
        json_t *j;
        int r;

        if (len > REGISTRY_MANIFEST_MAX)
                return tess_err(err, EINVAL, "manifest: larger than %u bytes", REGISTRY_MANIFEST_MAX);
        j = json_loadb(p, len, JSON_REJECT_DUPLICATES, &jerr);
        if (!j)
                return tess_err(err, EINVAL, "manifest: not JSON: line %d: %s", jerr.line, jerr.text);
        r = parse(j, content_type, &m, err);
        json_decref(j);
        if (r < 0) {
                registry_manifest_release(&m);
                return tess_err_wrap(err, "manifest");
        }
        *ret = m;
        return 0;
}

void registry_manifest_release(struct registry_manifest *m)
{
        descriptor_release(&m->config);
        for (size_t i = 0; i < m->n_entries; i++)
                descriptor_release(&m->entries[i]);
        free(m->entries);
        free(m->media_type);
        *m = (struct registry_manifest){ 0 };
}

bool registry_manifest_set_diff_ids(struct registry_manifest *m, const char *config, size_t len)
{
        json_t *j = json_loadb(config, len, 0, NULL);
        json_t *ids = json_object_get(json_object_get(j, "rootfs"), "diff_ids");
        bool ok = m->kind == MANIFEST_IMAGE && json_array_size(ids) == m->n_entries;

        for (size_t i = 0; ok && i < m->n_entries; i++)
                ok = image_digest_valid(json_string_value(json_array_get(ids, i)));
        for (size_t i = 0; ok && i < m->n_entries; i++) {
                free(m->entries[i].diff_id);
                m->entries[i].diff_id = xstrdup(json_string_value(json_array_get(ids, i)));
        }
        json_decref(j);
        return ok;
}

const struct registry_descriptor *registry_manifest_pick(const struct registry_manifest *index, const char *platform)
{
        const char *slash = strchr(platform, '/');
        _cleanup_free_ char *arch = slash ? xstrndup(platform, (size_t)(slash - platform)) : xstrdup(platform);
        const char *variant = slash ? slash + 1 : NULL;

        for (size_t i = 0; i < index->n_entries; i++) {
                const struct registry_descriptor *d = &index->entries[i];
                if (!streq_ptr(d->os, "linux") || !streq_ptr(d->architecture, arch))
                        continue;
                if (variant && d->variant && !streq(d->variant, variant))
                        continue;
                return d;
        }
        return NULL;
}
