/* import_manifest.c - see import_manifest.h. */
#include "common/compat.h"

#include <ctype.h>

#include "manager/images/blob_store.h"
#include "manager/images/import_manifest.h"

#define NAME_MAX_LEN 255
#define TAG_MAX_LEN  128

static const char *const manifest_types[] = {
        "application/vnd.oci.image.manifest.v1+json",
        "application/vnd.docker.distribution.manifest.v2+json",
        NULL,
};

/* A name: components of [a-z0-9] joined by '.', '_', '__' or '-'s,
 * separated by '/'; the first may be a registry host with a port. */
static bool valid_name(const char *s)
{
        const char *first_slash = strchr(s, '/');
        size_t n = strlen(s);

        if (n == 0 || n > NAME_MAX_LEN || s[0] == '/' || s[n - 1] == '/' || strstr(s, "//"))
                return false;
        for (const char *p = s; *p; p++) {
                bool sep = *p == '.' || *p == '_' || *p == '-' || *p == '/';
                if (!islower((unsigned char)*p) && !isdigit((unsigned char)*p) && !sep && *p != ':')
                        return false;
                if (*p == ':' && (!first_slash || p > first_slash))
                        return false; /* a port belongs to the registry, the first component */
        }
        return isalnum((unsigned char)s[0]) && isalnum((unsigned char)s[n - 1]);
}

static bool valid_tag(const char *s)
{
        size_t n = strlen(s);

        if (n == 0 || n > TAG_MAX_LEN || !(isalnum((unsigned char)s[0]) || s[0] == '_'))
                return false;
        for (; *s; s++)
                if (!isalnum((unsigned char)*s) && *s != '_' && *s != '.' && *s != '-')
                        return false;
        return true;
}

int import_parse_reference(const char *ref, struct import_image *img, struct tess_error **err)
{
        const char *slash = strrchr(ref, '/'), *colon = strrchr(ref, ':');

        if (!*ref)
                return tess_err(err, EINVAL, "the image has no reference name: give one (NAME:TAG)");
        if (strchr(ref, '@'))
                return tess_err(err, EINVAL, "reference '%.300s' names a digest: give NAME:TAG", ref);
        /* Docker's familiar names: docker.io/library/x is x (skopeo writes
         * them out); repeated until none is left, so the result is stable */
        for (;;) {
                if (strncmp(ref, "docker.io/library/", 18) == 0 && strchr(ref + 18, '/') == NULL)
                        ref += 18;
                else if (strncmp(ref, "docker.io/", 10) == 0)
                        ref += 10;
                else
                        break;
        }
        slash = strrchr(ref, '/');
        colon = strrchr(ref, ':');
        free(img->name);
        free(img->tag);
        if (colon && (!slash || colon > slash)) {
                img->name = xstrndup(ref, (size_t)(colon - ref));
                img->tag = xstrdup(colon + 1);
        } else {
                img->name = xstrdup(ref);
                img->tag = xstrdup("latest");
        }
        if (!valid_name(img->name) || !valid_tag(img->tag))
                return tess_err(err, EINVAL, "'%.300s' is not an image reference (lowercase NAME, optional :TAG)", ref);
        return 0;
}

static int parse_blob(const json_t *d, const char *what, struct import_blob *ret, struct tess_error **err)
{
        const char *digest = json_string_value(json_object_get(d, "digest"));
        const json_t *size = json_object_get(d, "size");

        if (!json_is_object(d) || !blob_digest_valid(digest))
                return tess_err(err, EINVAL, "the manifest's %s has no sha256 digest", what);
        if (!json_is_integer(size) || json_integer_value(size) < 0 || json_integer_value(size) > BLOB_MAX_BYTES)
                return tess_err(err, EINVAL, "the manifest's %s %s has no valid size", what, digest);
        snprintf(ret->digest, sizeof(ret->digest), "%s", digest);
        ret->size = json_integer_value(size);
        return 0;
}

static int parse_manifest_json(const json_t *j, struct import_image *img, struct tess_error **err)
{
        const char *mt = json_string_value(json_object_get(j, "mediaType"));
        const json_t *layers = json_object_get(j, "layers");
        size_t i;
        json_t *l;
        int r;

        if (!json_is_object(j))
                return tess_err(err, EINVAL, "the manifest is not a JSON object");
        if (json_integer_value(json_object_get(j, "schemaVersion")) != 2)
                return tess_err(err, EINVAL, "the manifest is not of schemaVersion 2");
        if (json_object_get(j, "manifests"))
                return tess_err(err, EINVAL, "the manifest is an image index: send the platform's image manifest");
        if (mt) {
                bool known = false;
                for (const char *const *t = manifest_types; *t; t++)
                        known = known || streq(*t, mt);
                if (!known)
                        return tess_err(err, EINVAL, "the manifest's mediaType '%.100s' is not an image manifest", mt);
        }
        img->media_type = xstrdup(mt ? mt : manifest_types[0]);
        r = parse_blob(json_object_get(j, "config"), "config", &img->config, err);
        if (r < 0)
                return r;
        if (!json_is_array(layers) || json_array_size(layers) > IMPORT_LAYERS_MAX)
                return tess_err(err, EINVAL, "the manifest's layers must be a list of at most %d", IMPORT_LAYERS_MAX);
        img->layers = xcalloc(json_array_size(layers) + 1, sizeof(*img->layers));
        json_array_foreach(layers, i, l) {
                r = parse_blob(l, "layer", &img->layers[i], err);
                if (r < 0)
                        return r;
                img->n_layers++;
                img->size_bytes += img->layers[i].size;
        }
        return 0;
}

int import_parse_manifest(const char *p, size_t n, struct import_image *img, struct tess_error **err)
{
        json_error_t je;
        json_t *j;
        int r;

        if (n > IMPORT_MANIFEST_MAX)
                return tess_err(err, EINVAL, "the manifest is larger than %zu bytes", IMPORT_MANIFEST_MAX);
        j = json_loadb(p, n, JSON_REJECT_DUPLICATES, &je);
        if (!j)
                return tess_err(err, EINVAL, "the manifest is not JSON: %s", je.text);
        r = parse_manifest_json(j, img, err);
        json_decref(j);
        return r;
}

/* OCI's architecture names to Backend.AI's (uname -m). */
static const char *backend_arch(const char *oci)
{
        static const char *const map[][2] = {
                { "amd64", "x86_64" },    { "arm64", "aarch64" }, { "386", "i386" },
                { "ppc64le", "ppc64le" }, { "s390x", "s390x" },   { "riscv64", "riscv64" },
        };
        for (size_t i = 0; i < ARRAY_SIZE(map); i++)
                if (streq(map[i][0], oci))
                        return map[i][1];
        return oci;
}

static int parse_config_json(const json_t *j, struct import_image *img, struct tess_error **err)
{
        const char *arch = json_string_value(json_object_get(j, "architecture"));
        const json_t *cfg = json_object_get(j, "config"), *labels = json_object_get(cfg, "Labels");
        const json_t *diff_ids = json_object_get(json_object_get(j, "rootfs"), "diff_ids");
        const char *key;
        json_t *v;

        if (!json_is_object(j))
                return tess_err(err, EINVAL, "the image config is not a JSON object");
        if (!arch || !*arch || strlen(arch) > 32)
                return tess_err(err, EINVAL, "the image config names no architecture");
        if (!json_is_array(diff_ids) || json_array_size(diff_ids) != img->n_layers)
                return tess_err(err, EINVAL,
                                "the image config's rootfs.diff_ids do not match the manifest's %zu layers",
                                img->n_layers);
        img->architecture = xstrdup(backend_arch(arch));
        img->labels = json_object();
        if (labels && !json_is_null(labels) && !json_is_object(labels))
                return tess_err(err, EINVAL, "the image config's Labels must be an object");
        json_object_foreach((json_t *)labels, key, v) {
                if (!json_is_string(v))
                        return tess_err(err, EINVAL, "the image config's label '%.100s' is not a string", key);
                json_object_set(img->labels, key, v);
        }
        return 0;
}

int import_parse_config(const char *p, size_t n, struct import_image *img, struct tess_error **err)
{
        json_error_t je;
        json_t *j;
        int r;

        if (n > IMPORT_CONFIG_MAX)
                return tess_err(err, EINVAL, "the image config is larger than %zu bytes", IMPORT_CONFIG_MAX);
        j = json_loadb(p, n, JSON_REJECT_DUPLICATES, &je);
        if (!j)
                return tess_err(err, EINVAL, "the image config is not JSON: %s", je.text);
        free(img->architecture);
        img->architecture = NULL;
        json_decref(img->labels);
        img->labels = NULL;
        r = parse_config_json(j, img, err);
        json_decref(j);
        return r;
}

void import_image_release(struct import_image *img)
{
        free(img->name);
        free(img->tag);
        free(img->media_type);
        free(img->layers);
        free(img->architecture);
        json_decref(img->labels);
        *img = (struct import_image){ 0 };
}
