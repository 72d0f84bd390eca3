/* registry_scan.c - see registry_scan.h.  The registry client is the
 * agent's (src/registry/registry_catalog.c lists and fetches); the config is
 * read as an image import reads it (import_manifest.c: architecture and
 * labels). */
#include "common/compat.h"

#include "manager/images/import_manifest.h"
#include "manager/images/registry_scan.h"
#include "registry/registry-internal.h"

struct scan {
        const struct registry_scan_opts *o;
        struct registry_client client;
        struct registry_scan *out;
};

/* Text from a registry as a JSON string: printable ASCII (jansson takes
 * only valid UTF-8, and messages may hold cut or raw bytes). */
static json_t *ascii_string(const char *s)
{
        _cleanup_(buf_release) struct buf b = BUF_INIT;

        for (; *s && b.len < 1000; s++)
                buf_putc(&b, *s >= 0x20 && *s < 0x7f ? *s : '?');
        return json_string(b.data);
}

/* Record what failed (consumes err): the repository, or one of its tags. */
static void record_error(struct scan *s, const char *repository, const char *tag, struct tess_error *err)
{
        _cleanup_free_ char *key = tag ? xasprintf("%s:%s", repository, tag) : xstrdup(repository);
        json_t *e = json_pack("{s:s}", "repository", repository);

        if (tag)
                json_object_set_new(e, "tag", json_string(tag));
        json_object_set_new(e, "error", ascii_string(err ? err->msg : "failed"));
        json_array_append_new(s->out->errors, e);
        json_object_set_new(s->out->failed, key, json_true());
        tess_error_free(err);
}

/* One image: the config of manifest m (digest) read for its architecture
 * and labels.  `seen` (optional) holds the architectures of the tag
 * already recorded: an index may name one twice (arm/v6, arm/v7). */
static int add_image(struct scan *s, const char *repository, const char *tag, const char *digest,
                     const struct registry_manifest *m, json_t *seen, struct tess_error **err)
{
        _cleanup_(buf_release) struct buf config = BUF_INIT;
        struct import_image img = { .n_layers = m->n_entries };
        int64_t size = 0;
        int r;

        r = registry_blob_get(&s->client, m->config.digest, IMPORT_CONFIG_MAX, &config, err);
        if (r >= 0)
                r = import_parse_config(config.data, config.len, &img, err);
        if (r < 0) {
                import_image_release(&img);
                return r;
        }
        if (!seen || !json_object_get(seen, img.architecture)) {
                _cleanup_free_ char *name = xasprintf("%s/%s", s->o->name, repository);
                for (size_t i = 0; i < m->n_entries; i++)
                        size += m->entries[i].size;
                json_array_append_new(s->out->images, json_pack("{s:s, s:s, s:s, s:s, s:O, s:I}", "name", name, "tag",
                                                                tag, "architecture", img.architecture, "digest", digest,
                                                                "labels", img.labels, "size_bytes", (json_int_t)size));
                if (seen)
                        json_object_set_new(seen, img.architecture, json_true());
        }
        import_image_release(&img);
        return 0;
}

/* Each linux platform of an index. */
static int scan_index(struct scan *s, const char *repository, const char *tag, const struct registry_manifest *index,
                      struct tess_error **err)
{
        json_t *seen = json_object();
        int r = 0;

        for (size_t i = 0; r == 0 && i < index->n_entries; i++) {
                const struct registry_descriptor *d = &index->entries[i];
                struct registry_manifest m = { 0 };
                char digest[REGISTRY_DIGEST_LEN];

                if (!streq_ptr(d->os, "linux") || !d->architecture)
                        continue; /* attestations ("unknown/unknown"), other systems */
                r = registry_manifest_get(&s->client, d->digest, d->digest, digest, &m, err);
                if (r == 0 && m.kind != MANIFEST_IMAGE)
                        r = tess_err(err, EINVAL, "the index entry %s is another index", d->digest);
                if (r == 0)
                        r = add_image(s, repository, tag, digest, &m, seen, err);
                registry_manifest_release(&m);
                if (r < 0)
                        r = tess_err_wrap(err, "linux/%.40s", d->architecture);
        }
        if (r == 0 && json_object_size(seen) == 0)
                r = tess_err(err, ENOENT, "the index has no linux image");
        json_decref(seen);
        return r;
}

static int scan_tag(struct scan *s, const char *repository, const char *tag, struct tess_error **err)
{
        struct registry_manifest top = { 0 };
        char digest[REGISTRY_DIGEST_LEN];
        int r;

        r = registry_manifest_get(&s->client, tag, NULL, digest, &top, err);
        if (r < 0)
                return r;
        if (top.kind == MANIFEST_IMAGE)
                r = add_image(s, repository, tag, digest, &top, NULL, err);
        else
                r = scan_index(s, repository, tag, &top, err);
        registry_manifest_release(&top);
        return r;
}

static void scan_repository(struct scan *s, const char *repository)
{
        _cleanup_free_ char *path = xasprintf("/v2/%s/tags/list", repository);
        struct tess_error *err = NULL;
        json_t *tags, *t;
        size_t i;

        registry_client_set_repository(&s->client, repository);
        if (registry_list(&s->client, path, "tags", &tags, &err) < 0)
                return record_error(s, repository, NULL, err);
        json_array_foreach(tags, i, t) {
                if (scan_tag(s, repository, json_string_value(t), &err) < 0)
                        record_error(s, repository, json_string_value(t), TAKE_PTR(err));
        }
        json_decref(tags);
}

bool registry_scan_in_project(const char *project, const char *repository)
{
        size_t n = strlen(project);

        return n == 0 || (strncmp(repository, project, n) == 0 && (repository[n] == '\0' || repository[n] == '/'));
}

int registry_scan_run(const struct registry_scan_opts *o, registry_scan_progress_fn progress, void *data,
                      struct registry_scan *ret, struct tess_error **err)
{
        struct registry_opts ro = {
                .username = o->username && *o->username ? o->username : NULL,
                .password = o->password,
        };
        struct scan s = { .o = o, .out = ret };
        json_t *repositories = NULL, *scope, *v;
        size_t i;
        int r;

        *ret = (struct registry_scan){ .images = json_array(), .errors = json_array(), .failed = json_object() };
        r = registry_client_init_url(&s.client, o->url, &ro, err);
        if (r < 0)
                return r;
        r = registry_list(&s.client, "/v2/_catalog", "repositories", &repositories, err);
        if (r < 0) {
                registry_client_release(&s.client);
                return r;
        }
        scope = json_array();
        json_array_foreach(repositories, i, v) {
                if (registry_scan_in_project(o->project, json_string_value(v)))
                        json_array_append(scope, v);
        }
        ret->repositories = json_array_size(scope);
        if (progress)
                progress(data, 0, ret->repositories, NULL);
        json_array_foreach(scope, i, v) {
                scan_repository(&s, json_string_value(v));
                if (progress)
                        progress(data, i + 1, ret->repositories, json_string_value(v));
        }
        json_decref(scope);
        json_decref(repositories);
        registry_client_release(&s.client);
        return 0;
}

void registry_scan_release(struct registry_scan *s)
{
        json_decref(s->images);
        json_decref(s->errors);
        json_decref(s->failed);
        *s = (struct registry_scan){ 0 };
}
