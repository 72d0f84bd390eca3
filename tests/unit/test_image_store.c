/* test_image_store.c - the agent's image store (src/image/): the
 * OCI layout it creates, the verifying blob writer, tag/get/list/remove,
 * indexes, diff_id checks, gc, last use and the disk budget (whose choice
 * itself is test_image_lru.c), tmp/ cleaning, and the importers (OCI
 * layout directory and tar, docker save old and new).  Images are built
 * here with libarchive's writer.  Needs root (layers keep their owners);
 * skips otherwise. */
#include "common/compat.h"

#include <dirent.h>
#include <jansson.h>

#include "../lib/test.h"
#include "common/fs.h"
#include "common/timeutil.h"
#include "image_fixtures.h"

#define NEED_ROOT()                         \
        do {                                \
                if (geteuid() != 0)         \
                        SKIP("needs root"); \
        } while (0)

/* ---- fixtures ---- */

struct blob {
        char *data;
        size_t len;
        char digest[IMAGE_DIGEST_SIZE];
};

/* An image in memory: one layer per file name (content: the name). */
struct image_fx {
        struct blob layers[4];
        char diff_ids[4][IMAGE_DIGEST_SIZE];
        size_t n_layers;
        struct blob config, manifest;
};

static void blob_set(struct blob *b, char *data, size_t len)
{
        b->data = data;
        b->len = len;
        digest_of(data, len, b->digest);
}

static char *layer_tar(const char *file, int filter, size_t *len)
{
        struct tarb t;

        tarb_begin(&t, filter);
        tarb_dir(&t, "./");
        tarb_file(&t, file, file);
        return tarb_end(&t, len);
}

/* Config and manifest for fx's layers and diff_ids. */
static void image_fx_finish(struct image_fx *fx, int filter, const char *manifest_type, const char *label)
{
        struct buf config = BUF_INIT, manifest = BUF_INIT;
        bool docker = streq(manifest_type, IMAGE_MEDIA_DOCKER_MANIFEST);
        char *data;
        size_t len;

        buf_printf(&config,
                   "{\"architecture\":\"amd64\",\"os\":\"linux\",\"created\":\"2024-01-02T03:04:05Z\","
                   "\"config\":{\"Env\":[\"PATH=/bin\"],\"Entrypoint\":[\"/bin/sh\"],\"Cmd\":[\"-c\",\"true\"],"
                   "\"WorkingDir\":\"/w\",\"User\":\"1000\",\"Labels\":{\"which\":\"%s\"}},"
                   "\"rootfs\":{\"type\":\"layers\",\"diff_ids\":[",
                   label);
        for (size_t i = 0; i < fx->n_layers; i++)
                buf_printf(&config, "%s\"%s\"", i ? "," : "", fx->diff_ids[i]);
        buf_puts(&config, "]}}");
        data = buf_detach(&config, &len);
        blob_set(&fx->config, data, len);

        buf_printf(&manifest, "{\"schemaVersion\":2,\"mediaType\":\"%s\",\"config\":{\"mediaType\":\"%s\",",
                   manifest_type,
                   docker ? "application/vnd.docker.container.image.v1+json" : IMAGE_MEDIA_OCI_CONFIG);
        buf_printf(&manifest, "\"digest\":\"%s\",\"size\":%zu},\"layers\":[", fx->config.digest, fx->config.len);
        for (size_t i = 0; i < fx->n_layers; i++)
                buf_printf(&manifest, "%s{\"mediaType\":\"%s\",\"digest\":\"%s\",\"size\":%zu}", i ? "," : "",
                           docker ? "application/vnd.docker.image.rootfs.diff.tar.gzip"
                                  : filter == ARCHIVE_FILTER_GZIP ? IMAGE_MEDIA_OCI_LAYER "+gzip"
                                                                  : IMAGE_MEDIA_OCI_LAYER,
                           fx->layers[i].digest, fx->layers[i].len);
        buf_puts(&manifest, "]}");
        data = buf_detach(&manifest, &len);
        blob_set(&fx->manifest, data, len);
}

static void image_fx_build(struct image_fx *fx, const char *const *files, int filter, const char *manifest_type,
                           const char *label)
{
        size_t len;

        *fx = (struct image_fx){ 0 };
        for (; *files; files++, fx->n_layers++) {
                _cleanup_free_ char *tar = layer_tar(*files, ARCHIVE_FILTER_NONE, &len);
                digest_of(tar, len, fx->diff_ids[fx->n_layers]);
                char *blob = layer_tar(*files, filter, &len);
                blob_set(&fx->layers[fx->n_layers], blob, len);
        }
        image_fx_finish(fx, filter, manifest_type, label);
}

static void image_fx_release(struct image_fx *fx)
{
        for (size_t i = 0; i < fx->n_layers; i++)
                free(fx->layers[i].data);
        free(fx->config.data);
        free(fx->manifest.data);
}

static int put_blob(struct image_store *st, const struct blob *b)
{
        struct image_blob_writer *w;
        struct tess_error *err = NULL;
        int r = image_blob_begin(st, b->digest, (int64_t)b->len, &w, &err);

        if (r >= 0)
                r = image_blob_write(w, b->data, b->len, &err);
        if (r >= 0)
                r = image_blob_commit(w, &err);
        else
                image_blob_abort(w);
        tess_error_free(err);
        return r;
}

static void image_fx_put(struct image_store *st, const struct image_fx *fx)
{
        for (size_t i = 0; i < fx->n_layers; i++)
                CHECK_INTEQ(put_blob(st, &fx->layers[i]), 0);
        CHECK_INTEQ(put_blob(st, &fx->config), 0);
        CHECK_INTEQ(put_blob(st, &fx->manifest), 0);
}

/* The error code of a store call (0 on success), its message printed;
 * frees and clears the error. */
static int code_of(int r, struct tess_error **err)
{
        if (r < 0) {
                CHECK(*err && (*err)->code == -r);
                printf("# error: %s\n", *err ? (*err)->msg : "(none)");
        }
        *err = tess_error_free(*err);
        return r < 0 ? -r : 0;
}

static int tag(struct image_store *st, const char *ref, const char *digest)
{
        struct tess_error *err = NULL;
        return code_of(image_store_tag(st, ref, digest, &err), &err);
}

static struct image_store *store_open(const char *dir)
{
        struct image_store *st = NULL;
        struct tess_error *err = NULL;

        CHECK_INTEQ(code_of(image_store_open(dir, &st, &err), &err), 0);
        return st;
}

/* index.json is an OCI image index whose every entry is a described,
 * named manifest; returns the number of entries (-1 when invalid). */
static int index_entries(const char *store)
{
        _cleanup_free_ char *path = xasprintf("%s/index.json", store), *layout = xasprintf("%s/oci-layout", store);
        json_t *idx = json_load_file(path, 0, NULL), *lay = json_load_file(layout, 0, NULL), *m;
        size_t i;
        int n = -1;

        if (json_integer_value(json_object_get(idx, "schemaVersion")) == 2 &&
            streq_ptr(json_string_value(json_object_get(idx, "mediaType")), IMAGE_MEDIA_OCI_INDEX) &&
            streq_ptr(json_string_value(json_object_get(lay, "imageLayoutVersion")), "1.0.0") &&
            json_is_array(json_object_get(idx, "manifests"))) {
                n = (int)json_array_size(json_object_get(idx, "manifests"));
                json_array_foreach (json_object_get(idx, "manifests"), i, m) {
                        if (!image_digest_valid(json_string_value(json_object_get(m, "digest"))) ||
                            !json_is_integer(json_object_get(m, "size")) ||
                            !json_is_string(json_object_get(m, "mediaType")) ||
                            !json_is_string(json_object_get(json_object_get(m, "annotations"), IMAGE_ANNOTATION_REF)))
                                n = -1;
                }
        }
        json_decref(idx);
        json_decref(lay);
        return n;
}

/* ---- the layout ---- */

static void test_open_creates_layout(void)
{
        char *dir = scratch_dir("store");
        _cleanup_free_ char *sub = xasprintf("%s/deeper/store", dir);
        struct image_store *st = store_open(sub);

        CHECK(st != NULL);
        CHECK_INTEQ(index_entries(sub), 0);
        CHECK_INTEQ(count_in(sub, "blobs/sha256"), 0);
        CHECK_INTEQ(count_in(sub, "layers/sha256"), 0);
        CHECK_INTEQ(count_in(sub, "tmp"), 0);
        CHECK_STREQ(image_store_dir(st), sub);
        image_store_close(st);
        st = store_open(sub); /* again: nothing changes */
        CHECK_INTEQ(index_entries(sub), 0);
        image_store_close(st);
        scratch_remove(dir);
}

static void test_open_cleans_dead_tmp_entries(void)
{
        char *dir = scratch_dir("store");
        struct image_store *st = store_open(dir);
        _cleanup_free_ char *dead = xasprintf("%s/tmp/999999999-layer-abc/sub", dir);
        _cleanup_free_ char *junk = xasprintf("%s/tmp/junk", dir);
        _cleanup_free_ char *live = image_store_tmp_template(st, "blob");

        image_store_close(st);
        CHECK_INTEQ(fs_mkdir_p(dead, 0755, NULL), 0);
        write_file(junk, "x", 1);
        CHECK(mkdtemp(live) != NULL);
        st = store_open(dir);
        CHECK_INTEQ(count_in(dir, "tmp"), 1); /* only this (live) process's entry */
        CHECK(path_exists(live));
        image_store_close(st);
        scratch_remove(dir);
}

/* ---- blobs ---- */

static void test_blob_writer_commits_verified_blobs(void)
{
        char *dir;
        struct image_store *st;
        struct image_blob_writer *w = NULL;
        struct tess_error *err = NULL;
        const char text[] = "hello, blob";
        char digest[IMAGE_DIGEST_SIZE], got[IMAGE_DIGEST_SIZE];
        _cleanup_free_ char *path = NULL, *data = NULL;
        size_t len;

        dir = scratch_dir("store");
        st = store_open(dir);
        digest_of(text, strlen(text), digest);
        CHECK(!image_blob_exists(st, digest));
        CHECK_INTEQ(image_blob_begin(st, digest, (int64_t)strlen(text), &w, &err), 0);
        CHECK_INTEQ(count_in(dir, "tmp"), 1);
        CHECK_INTEQ(image_blob_write(w, text, 5, &err), 0);
        CHECK_INTEQ(image_blob_write(w, text + 5, strlen(text) - 5, &err), 0);
        CHECK_INTEQ(image_blob_commit(w, &err), 0);
        CHECK(image_blob_exists(st, digest));
        path = image_blob_path(st, digest);
        CHECK(path && fs_read_file(path, 100, &data, &len, NULL) == 0);
        CHECK_STREQ(data, text);
        CHECK_INTEQ(count_in(dir, "tmp"), 0);

        /* digest unknown in advance: named after the bytes */
        CHECK_INTEQ(image_blob_begin(st, NULL, -1, &w, &err), 0);
        CHECK_INTEQ(image_blob_write(w, text, strlen(text), &err), 0);
        CHECK_INTEQ(image_blob_commit_digest(w, got, &err), 0);
        CHECK_STREQ(got, digest);
        CHECK(err == NULL);
        image_store_close(st);
        scratch_remove(dir);
}

static void test_blob_writer_refuses_wrong_digest(void)
{
        char *dir;
        struct image_store *st;
        struct image_blob_writer *w = NULL;
        struct tess_error *err = NULL;
        char digest[IMAGE_DIGEST_SIZE], other[IMAGE_DIGEST_SIZE];

        dir = scratch_dir("store");
        st = store_open(dir);
        digest_of("expected", 8, digest);
        CHECK_INTEQ(image_blob_begin(st, digest, -1, &w, &err), 0);
        CHECK_INTEQ(image_blob_write(w, "tampered", 8, &err), 0);
        CHECK_INTEQ(code_of(image_blob_commit(w, &err), &err), EBADMSG);
        CHECK(!image_blob_exists(st, digest));
        digest_of("tampered", 8, other);
        CHECK(!image_blob_exists(st, other));
        CHECK_INTEQ(count_in(dir, "blobs/sha256"), 0);
        CHECK_INTEQ(count_in(dir, "tmp"), 0);
        image_store_close(st);
        scratch_remove(dir);
}

static void test_blob_writer_refuses_wrong_size(void)
{
        char *dir;
        struct image_store *st;
        struct image_blob_writer *w = NULL;
        struct tess_error *err = NULL;
        char digest[IMAGE_DIGEST_SIZE];

        dir = scratch_dir("store");
        st = store_open(dir);
        digest_of("0123456789", 10, digest);
        /* more than announced: the write fails, commit too */
        CHECK_INTEQ(image_blob_begin(st, digest, 5, &w, &err), 0);
        CHECK_INTEQ(code_of(image_blob_write(w, "0123456789", 10, &err), &err), EBADMSG);
        CHECK(code_of(image_blob_commit(w, &err), &err) != 0);
        /* less than announced */
        CHECK_INTEQ(image_blob_begin(st, digest, 20, &w, &err), 0);
        CHECK_INTEQ(image_blob_write(w, "0123456789", 10, &err), 0);
        CHECK_INTEQ(code_of(image_blob_commit(w, &err), &err), EBADMSG);
        /* aborted */
        CHECK_INTEQ(image_blob_begin(st, digest, 10, &w, &err), 0);
        CHECK_INTEQ(image_blob_write(w, "0123456789", 10, &err), 0);
        image_blob_abort(w);
        CHECK(!image_blob_exists(st, digest));
        CHECK_INTEQ(count_in(dir, "blobs/sha256"), 0);
        CHECK_INTEQ(count_in(dir, "tmp"), 0);
        image_store_close(st);
        scratch_remove(dir);
}

static void test_blob_digests_are_checked(void)
{
        static const char *const bad[] = {
                "sha256:../../../../etc/passwd",
                "sha512:0000000000000000000000000000000000000000000000000000000000000000",
                "sha256:ABCDEF0000000000000000000000000000000000000000000000000000000000",
                "sha256:00",
                "",
        };
        char *dir;
        struct image_store *st;
        struct image_blob_writer *w = NULL;

        dir = scratch_dir("store");
        st = store_open(dir);
        for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
                struct tess_error *err = NULL;
                CHECK_INTEQ(code_of(image_blob_begin(st, bad[i], -1, &w, &err), &err), EINVAL);
                CHECK(image_blob_path(st, bad[i]) == NULL);
                CHECK(!image_blob_exists(st, bad[i]));
        }
        image_store_close(st);
        scratch_remove(dir);
}

/* ---- images ---- */

static void test_tag_get_list_remove(void)
{
        static const char *const files[] = { "base", "app", NULL };
        char *dir;
        struct image_store *st;
        struct image_fx fx;
        struct image_info info, *infos = NULL;
        struct tess_error *err = NULL;
        int n = 0;

        NEED_ROOT();
        dir = scratch_dir("store");
        st = store_open(dir);
        image_fx_build(&fx, files, ARCHIVE_FILTER_GZIP, IMAGE_MEDIA_OCI_MANIFEST, "one");
        image_fx_put(st, &fx);
        CHECK_INTEQ(tag(st, "example.com/team/app:1.0", fx.manifest.digest), 0);
        CHECK_INTEQ(tag(st, "app", fx.manifest.digest), 0);
        CHECK_INTEQ(tag(st, "app", fx.manifest.digest), 0); /* replaces */
        CHECK_INTEQ(index_entries(dir), 2);
        CHECK_INTEQ(tag(st, "bad ref", fx.manifest.digest), EINVAL);

        CHECK_INTEQ(code_of(image_store_get(st, "example.com/team/app:1.0", &info, &err), &err), 0);
        CHECK_STREQ(info.ref, "example.com/team/app:1.0");
        CHECK_STREQ(info.manifest_digest, fx.manifest.digest);
        CHECK_STREQ(info.config_digest, fx.config.digest);
        CHECK_STREQ(info.architecture, "amd64");
        CHECK_STREQ(info.created, "2024-01-02T03:04:05Z");
        CHECK_INTEQ(info.size, fx.layers[0].len + fx.layers[1].len);
        CHECK(info.labels && streq(info.labels[0], "which=one") && !info.labels[1]);
        CHECK(info.env && streq(info.env[0], "PATH=/bin") && !info.env[1]);
        CHECK(info.entrypoint && streq(info.entrypoint[0], "/bin/sh"));
        CHECK(info.cmd && streq(info.cmd[0], "-c") && streq(info.cmd[1], "true") && !info.cmd[2]);
        CHECK_STREQ(info.working_dir, "/w");
        CHECK_STREQ(info.user, "1000");
        CHECK(info.layer_dirs && info.layer_dirs[0] && info.layer_dirs[1] && !info.layer_dirs[2]);
        if (info.layer_dirs && info.layer_dirs[1]) {
                _cleanup_free_ char *want = xasprintf("%s/layers/sha256/%s", dir, fx.diff_ids[1] + 7);
                _cleanup_free_ char *file = xasprintf("%s/app", info.layer_dirs[1]);
                CHECK_STREQ(info.layer_dirs[1], want);
                CHECK(path_exists(file));
        }
        image_info_free(&info);

        /* "app" is "app:latest" too, not the other way round */
        CHECK_INTEQ(code_of(image_store_get(st, "app:latest", &info, &err), &err), ENOENT);
        CHECK_INTEQ(code_of(image_store_get(st, "app", &info, &err), &err), 0);
        image_info_free(&info);

        CHECK_INTEQ(code_of(image_store_list(st, &infos, &n, &err), &err), 0);
        CHECK_INTEQ(n, 2);
        for (int i = 0; i < n; i++) {
                CHECK_STREQ(infos[i].manifest_digest, fx.manifest.digest);
                image_info_free(&infos[i]);
        }
        free(infos);

        CHECK_INTEQ(code_of(image_store_remove(st, "app", &err), &err), 0);
        CHECK_INTEQ(code_of(image_store_remove(st, "app", &err), &err), ENOENT);
        CHECK_INTEQ(code_of(image_store_get(st, "app", &info, &err), &err), ENOENT);
        CHECK_INTEQ(index_entries(dir), 1);
        image_fx_release(&fx);
        image_store_close(st);
        scratch_remove(dir);
}

static void test_tag_takes_docker_manifests_and_indexes(void)
{
        static const char *const files[] = { "docker-layer", NULL };
        char *dir;
        struct image_store *st;
        struct image_fx fx;
        struct image_info info;
        struct tess_error *err = NULL;
        struct blob index;
        char other[IMAGE_DIGEST_SIZE];

        NEED_ROOT();
        dir = scratch_dir("store");
        st = store_open(dir);
        image_fx_build(&fx, files, ARCHIVE_FILTER_GZIP, IMAGE_MEDIA_DOCKER_MANIFEST, "docker");
        image_fx_put(st, &fx);
        /* an index whose arm64 entry is not even in the store */
        digest_of("arm64", 5, other);
        index.data = xasprintf("{\"schemaVersion\":2,\"mediaType\":\"%s\",\"manifests\":["
                           "{\"mediaType\":\"%s\",\"digest\":\"%s\",\"size\":1,"
                           "\"platform\":{\"os\":\"linux\",\"architecture\":\"arm64\"}},"
                           "{\"mediaType\":\"%s\",\"digest\":\"%s\",\"size\":%zu,"
                           "\"platform\":{\"os\":\"linux\",\"architecture\":\"%s\"}}]}",
                           IMAGE_MEDIA_DOCKER_LIST, IMAGE_MEDIA_DOCKER_MANIFEST, other, IMAGE_MEDIA_DOCKER_MANIFEST,
                           fx.manifest.digest, fx.manifest.len, image_host_arch());
        blob_set(&index, index.data, strlen(index.data));
        CHECK_INTEQ(put_blob(st, &index), 0);
        CHECK_INTEQ(tag(st, "multi:1", index.digest), 0);
        CHECK_INTEQ(code_of(image_store_get(st, "multi:1", &info, &err), &err), 0);
        CHECK_STREQ(info.manifest_digest, fx.manifest.digest); /* resolved to this host's */
        CHECK_STREQ(info.config_digest, fx.config.digest);
        image_info_free(&info);
        CHECK_INTEQ(index_entries(dir), 1);
        free(index.data);
        image_fx_release(&fx);
        image_store_close(st);
        scratch_remove(dir);
}

static void test_tag_refuses_diff_id_mismatch(void)
{
        char *dir;
        struct image_store *st;
        struct image_fx fx;

        NEED_ROOT();
        dir = scratch_dir("store");
        st = store_open(dir);
        /* the config names another diff_id than its layer's */
        image_fx_build(&fx, (const char *const[]){ "real", NULL }, ARCHIVE_FILTER_GZIP, IMAGE_MEDIA_OCI_MANIFEST, "x");
        free(fx.config.data);
        free(fx.manifest.data);
        digest_of("not this layer", 14, fx.diff_ids[0]);
        image_fx_finish(&fx, ARCHIVE_FILTER_GZIP, IMAGE_MEDIA_OCI_MANIFEST, "x");
        image_fx_put(st, &fx);
        CHECK_INTEQ(tag(st, "liar:1", fx.manifest.digest), EBADMSG);
        CHECK_INTEQ(count_in(dir, "layers/sha256"), 0);
        CHECK_INTEQ(count_in(dir, "tmp"), 0);
        CHECK_INTEQ(index_entries(dir), 0);
        image_fx_release(&fx);
        image_store_close(st);
        scratch_remove(dir);
}

static void test_tag_unpacks_each_layer_once(void)
{
        char *dir;
        struct image_store *st;
        struct image_fx a, b;
        struct stat before, after;
        _cleanup_free_ char *shared = NULL;

        NEED_ROOT();
        dir = scratch_dir("store");
        st = store_open(dir);
        image_fx_build(&a, (const char *const[]){ "shared", "a", NULL }, ARCHIVE_FILTER_GZIP,
                       IMAGE_MEDIA_OCI_MANIFEST, "a");
        image_fx_build(&b, (const char *const[]){ "shared", "b", NULL }, ARCHIVE_FILTER_GZIP,
                       IMAGE_MEDIA_OCI_MANIFEST, "b");
        image_fx_put(st, &a);
        image_fx_put(st, &b);
        CHECK_INTEQ(tag(st, "a:1", a.manifest.digest), 0);
        shared = xasprintf("%s/layers/sha256/%s", dir, a.diff_ids[0] + 7);
        CHECK(stat(shared, &before) == 0);
        CHECK_INTEQ(tag(st, "b:1", b.manifest.digest), 0);
        CHECK(stat(shared, &after) == 0);
        CHECK(before.st_ino == after.st_ino);
        CHECK_INTEQ(count_in(dir, "layers/sha256"), 3);
        image_fx_release(&a);
        image_fx_release(&b);
        image_store_close(st);
        scratch_remove(dir);
}

static void test_gc(void)
{
        char *dir;
        struct image_store *st;
        struct image_fx a, b;
        struct tess_error *err = NULL;
        struct image_info info;
        int64_t freed = -1;
        char orphan[IMAGE_DIGEST_SIZE];
        struct blob junk;

        NEED_ROOT();
        dir = scratch_dir("store");
        st = store_open(dir);
        image_fx_build(&a, (const char *const[]){ "shared", "a", NULL }, ARCHIVE_FILTER_GZIP,
                       IMAGE_MEDIA_OCI_MANIFEST, "a");
        image_fx_build(&b, (const char *const[]){ "shared", "b", NULL }, ARCHIVE_FILTER_NONE,
                       IMAGE_MEDIA_OCI_MANIFEST, "b");
        image_fx_put(st, &a);
        image_fx_put(st, &b);
        blob_set(&junk, xstrdup("an orphan blob"), 14);
        memcpy(orphan, junk.digest, sizeof(orphan));
        CHECK_INTEQ(put_blob(st, &junk), 0);
        CHECK_INTEQ(tag(st, "a:1", a.manifest.digest), 0);
        CHECK_INTEQ(tag(st, "b:1", b.manifest.digest), 0);

        /* only the orphan goes */
        CHECK_INTEQ(code_of(image_store_gc(st, NULL, &freed, &err), &err), 0);
        CHECK(freed > 0);
        CHECK(!image_blob_exists(st, orphan));
        CHECK_INTEQ(count_in(dir, "blobs/sha256"), 8);
        CHECK_INTEQ(count_in(dir, "layers/sha256"), 3); /* "shared" is two blobs (gzip, plain), one diff_id */

        /* a is removed while a container still runs on its layers */
        CHECK_INTEQ(code_of(image_store_get(st, "a:1", &info, &err), &err), 0);
        CHECK_INTEQ(code_of(image_store_remove(st, "a:1", &err), &err), 0);
        CHECK_INTEQ(code_of(image_store_gc(st, (const char *const *)info.layer_dirs, &freed, &err), &err), 0);
        CHECK(path_exists(info.layer_dirs[1]));
        CHECK(!image_blob_exists(st, a.manifest.digest) && !image_blob_exists(st, a.layers[1].digest));
        CHECK(!image_blob_exists(st, a.layers[0].digest)); /* gzip "shared": only a had it */
        CHECK(image_blob_exists(st, b.layers[0].digest) && image_blob_exists(st, b.config.digest));
        CHECK_INTEQ(count_in(dir, "layers/sha256"), 3);
        /* the container is gone */
        CHECK_INTEQ(code_of(image_store_gc(st, NULL, &freed, &err), &err), 0);
        CHECK(freed > 0);
        CHECK(!path_exists(info.layer_dirs[1]));
        CHECK(path_exists(info.layer_dirs[0])); /* "shared": b uses it */
        image_info_free(&info);

        CHECK_INTEQ(code_of(image_store_remove(st, "b:1", &err), &err), 0);
        CHECK_INTEQ(code_of(image_store_gc(st, NULL, NULL, &err), &err), 0);
        CHECK_INTEQ(count_in(dir, "blobs/sha256"), 0);
        CHECK_INTEQ(count_in(dir, "layers/sha256"), 0);
        CHECK_INTEQ(index_entries(dir), 0);
        free(junk.data);
        image_fx_release(&a);
        image_fx_release(&b);
        image_store_close(st);
        scratch_remove(dir);
}

/* ---- last use and the disk budget ---- */

/* The layer dirs of a pretend container (data: NULL-terminated), as the
 * agent's containers_in_use() gives them. */
static int in_use_of(void *data, char ***ret, struct tess_error **err UNUSED)
{
        char *const *dirs = data;
        size_t n = 0;

        while (dirs && dirs[n])
                n++;
        *ret = xcalloc(n + 1, sizeof(char *));
        for (size_t i = 0; i < n; i++)
                (*ret)[i] = xstrdup(dirs[i]);
        return 0;
}

static int64_t last_used_of(struct image_store *st, const char *ref)
{
        struct tess_error *err = NULL;
        struct image_info info;
        int64_t t = -1;

        if (code_of(image_store_get(st, ref, &info, &err), &err) == 0) {
                t = info.last_used;
                image_info_free(&info);
        }
        return t;
}

static void test_last_used_is_recorded_and_kept(void)
{
        char *dir;
        struct image_store *st;
        struct image_fx fx;
        struct image_info info, *infos = NULL;
        struct tess_error *err = NULL;
        int64_t before = now_usec(), tagged, used;
        int n = 0;

        NEED_ROOT();
        dir = scratch_dir("store");
        st = store_open(dir);
        image_fx_build(&fx, (const char *const[]){ "one", NULL }, ARCHIVE_FILTER_GZIP, IMAGE_MEDIA_OCI_MANIFEST, "1");
        image_fx_put(st, &fx);
        CHECK_INTEQ(tag(st, "one:1", fx.manifest.digest), 0);
        tagged = last_used_of(st, "one:1");
        CHECK(tagged >= before - USEC_PER_SEC && tagged <= now_usec() + USEC_PER_SEC); /* coarse file times */
        CHECK_INTEQ(count_in(dir, "used"), 1);

        usleep(50 * 1000);
        CHECK_INTEQ(last_used_of(st, "one:1"), tagged); /* looking is not using */
        CHECK_INTEQ(code_of(image_store_use(st, "one:1", &info, &err), &err), 0);
        used = info.last_used;
        CHECK(used > tagged);
        image_info_free(&info);
        CHECK_INTEQ(last_used_of(st, "one:1"), used);

        /* another handle (an agent restart) sees the same time */
        image_store_close(st);
        st = store_open(dir);
        CHECK_INTEQ(code_of(image_store_list(st, &infos, &n, &err), &err), 0);
        CHECK_INTEQ(n, 1);
        CHECK(n == 1 && infos[0].last_used == used);
        for (int i = 0; i < n; i++)
                image_info_free(&infos[i]);
        free(infos);

        /* the record goes with the image */
        CHECK_INTEQ(code_of(image_store_remove(st, "one:1", &err), &err), 0);
        CHECK_INTEQ(code_of(image_store_gc(st, NULL, NULL, &err), &err), 0);
        CHECK_INTEQ(count_in(dir, "used"), 0);
        image_fx_release(&fx);
        image_store_close(st);
        scratch_remove(dir);
}

/* Apply `budget` with a pretend container on `in_use`; the refs removed,
 * space-separated, into removed (or "EBUSY", "error"). */
static void budget(struct image_store *st, int64_t budget, char **in_use, struct image_budget_report *ret,
                   char removed[256])
{
        struct tess_error *err = NULL;
        int r = image_store_apply_budget(st, budget, false, in_use_of, in_use, ret, &err);

        removed[0] = '\0';
        if (r < 0) {
                snprintf(removed, 256, "%s", r == -EBUSY ? "EBUSY" : "error");
                code_of(r, &err);
                return;
        }
        for (size_t i = 0; i < ret->n_removed; i++)
                snprintf(removed + strlen(removed), 256 - strlen(removed), "%s%s", i ? " " : "", ret->removed[i].ref);
}

static void test_budget_removes_least_recently_used_images_not_in_use(void)
{
        char *dir, removed[256];
        struct image_store *st;
        struct image_fx fx[3];
        struct image_info a;
        struct image_hold *hold = NULL;
        struct image_budget_report rep;
        struct tess_error *err = NULL;
        static const char *const names[] = { "a", "b", "c" };
        int64_t total;

        NEED_ROOT();
        dir = scratch_dir("store");
        st = store_open(dir);
        for (int i = 0; i < 3; i++) {
                _cleanup_free_ char *ref = xasprintf("%s:1", names[i]);
                image_fx_build(&fx[i], (const char *const[]){ names[i], NULL }, ARCHIVE_FILTER_GZIP,
                               IMAGE_MEDIA_OCI_MANIFEST, names[i]);
                image_fx_put(st, &fx[i]);
                CHECK_INTEQ(tag(st, ref, fx[i].manifest.digest), 0);
        }
        /* used in the order a, c, b; a container runs on a, the oldest */
        for (const char *const *ref = (const char *const[]){ "a:1", "c:1", "b:1", NULL }; *ref; ref++) {
                usleep(20 * 1000);
                struct image_info info;
                CHECK_INTEQ(code_of(image_store_use(st, *ref, &info, &err), &err), 0);
                image_info_free(&info);
        }
        CHECK_INTEQ(code_of(image_store_get(st, "a:1", &a, &err), &err), 0);

        /* within the budget: nothing changes */
        budget(st, INT64_MAX, a.layer_dirs, &rep, removed);
        CHECK_STREQ(removed, "");
        total = rep.before;
        CHECK(total > 0 && rep.after == total);
        image_budget_report_release(&rep);
        CHECK_INTEQ(index_entries(dir), 3);

        /* while a container starts (a hold), the budget waits */
        CHECK_INTEQ(code_of(image_hold_begin(st, &hold, &err), &err), 0);
        budget(st, 0, a.layer_dirs, &rep, removed);
        CHECK_STREQ(removed, "EBUSY");
        hold = image_hold_end(hold);
        CHECK_INTEQ(index_entries(dir), 3);

        /* one byte over: c, the least recently used image not in use, is enough */
        budget(st, total - 1, a.layer_dirs, &rep, removed);
        CHECK_STREQ(removed, "c:1");
        CHECK(rep.before == total && rep.after < total && rep.after <= total - 1);
        CHECK(rep.n_removed == 1 && rep.removed[0].bytes > 0 && rep.removed[0].bytes == total - rep.after);
        image_budget_report_release(&rep);
        CHECK_INTEQ(last_used_of(st, "c:1"), -1);
        CHECK(last_used_of(st, "b:1") > 0);
        CHECK(!image_blob_exists(st, fx[2].manifest.digest) && !image_blob_exists(st, fx[2].layers[0].digest));
        CHECK(path_exists(a.layer_dirs[0]));
        CHECK_INTEQ(count_in(dir, "layers/sha256"), 2);
        CHECK_INTEQ(count_in(dir, "used"), 2);

        /* no room at all: every image not in use goes, a stays */
        budget(st, 0, a.layer_dirs, &rep, removed);
        CHECK_STREQ(removed, "b:1");
        CHECK(rep.after > 0);
        image_budget_report_release(&rep);
        CHECK(last_used_of(st, "a:1") > 0);
        CHECK(path_exists(a.layer_dirs[0]) && image_blob_exists(st, fx[0].layers[0].digest));
        CHECK_INTEQ(count_in(dir, "layers/sha256"), 1);

        /* the container gone, a goes too */
        budget(st, 0, NULL, &rep, removed);
        CHECK_STREQ(removed, "a:1");
        CHECK_INTEQ(rep.after, 0);
        image_budget_report_release(&rep);
        CHECK_INTEQ(count_in(dir, "blobs/sha256"), 0);
        CHECK_INTEQ(count_in(dir, "layers/sha256"), 0);
        image_info_free(&a);
        for (int i = 0; i < 3; i++)
                image_fx_release(&fx[i]);
        image_store_close(st);
        scratch_remove(dir);
}

/* ---- importers ---- */

static void write_blob_file(const char *layout, const struct blob *b)
{
        _cleanup_free_ char *path = xasprintf("%s/blobs/sha256/%s", layout, b->digest + 7);
        write_file(path, b->data, b->len);
}

static char *oci_index_json(const struct image_fx *fx, const char *annotations)
{
        return xasprintf("{\"schemaVersion\":2,\"mediaType\":\"%s\",\"manifests\":[{\"mediaType\":\"%s\","
                         "\"digest\":\"%s\",\"size\":%zu,\"annotations\":{%s}}]}",
                         IMAGE_MEDIA_OCI_INDEX, IMAGE_MEDIA_OCI_MANIFEST, fx->manifest.digest, fx->manifest.len,
                         annotations);
}

/* An OCI image layout directory holding fx. */
static char *make_oci_layout(const struct image_fx *fx, const char *annotations)
{
        char *dir = scratch_dir("layout");
        _cleanup_free_ char *blobs = xasprintf("%s/blobs/sha256", dir), *index = xasprintf("%s/index.json", dir);
        _cleanup_free_ char *layout = xasprintf("%s/oci-layout", dir), *text = oci_index_json(fx, annotations);

        CHECK_INTEQ(fs_mkdir_p(blobs, 0755, NULL), 0);
        write_file(layout, "{\"imageLayoutVersion\":\"1.0.0\"}", 30);
        write_file(index, text, strlen(text));
        for (size_t i = 0; i < fx->n_layers; i++)
                write_blob_file(dir, &fx->layers[i]);
        write_blob_file(dir, &fx->config);
        write_blob_file(dir, &fx->manifest);
        return dir;
}

static void tar_blob(struct tarb *t, const char *prefix, const struct blob *b)
{
        _cleanup_free_ char *path = xasprintf("%s%s", prefix, b->digest + 7);
        tarb_add(t, tarb_entry(path, AE_IFREG, 0644), b->data, b->len);
}

/* The same layout as work/NAME, a tar compressed with filter. */
static char *make_oci_tar(const char *work, const char *name, const struct image_fx *fx, const char *annotations,
                          int filter, const char *manifest_json)
{
        char *file = xasprintf("%s/%s", work, name);
        _cleanup_free_ char *text = oci_index_json(fx, annotations), *data = NULL;
        struct tarb t;
        size_t len;

        tarb_begin(&t, filter);
        tarb_file(&t, "oci-layout", "{\"imageLayoutVersion\":\"1.0.0\"}");
        tarb_dir(&t, "blobs/");
        for (size_t i = 0; i < fx->n_layers; i++)
                tar_blob(&t, "blobs/sha256/", &fx->layers[i]);
        tar_blob(&t, "blobs/sha256/", &fx->config);
        tar_blob(&t, "blobs/sha256/", &fx->manifest);
        tarb_file(&t, "index.json", text);
        if (manifest_json)
                tarb_file(&t, "manifest.json", manifest_json);
        data = tarb_end(&t, &len);
        write_file(file, data, len);
        return file;
}

/* work/NAME, a `docker save` from before Docker 25: <id>/layer.tar
 * (uncompressed), the config as <hex>.json, manifest.json last; the
 * second layer is a symlink to the first's tar, as docker writes a layer
 * that repeats. */
static char *make_docker_save(const char *work, const char *name, const struct image_fx *fx, const char *repo_tags,
                              int filter)
{
        char *file = xasprintf("%s/%s", work, name);
        _cleanup_free_ char *config = xasprintf("%s.json", fx->config.digest + 7);
        _cleanup_free_ char *manifest = xasprintf("[{\"Config\":\"%s\",\"RepoTags\":%s,\"Layers\":"
                                                  "[\"l0/layer.tar\",\"l1/layer.tar\"]}]",
                                                  config, repo_tags);
        _cleanup_free_ char *data = NULL;
        struct tarb t;
        size_t len;

        tarb_begin(&t, filter);
        tarb_dir(&t, "l0/");
        tarb_file(&t, "l0/VERSION", "1.0");
        tarb_file(&t, "l0/json", "{}");
        tarb_add(&t, tarb_entry("l0/layer.tar", AE_IFREG, 0644), fx->layers[0].data, fx->layers[0].len);
        tarb_dir(&t, "l1/");
        tarb_symlink(&t, "l1/layer.tar", "../l0/layer.tar");
        tarb_add(&t, tarb_entry(config, AE_IFREG, 0644), fx->config.data, fx->config.len);
        tarb_file(&t, "repositories", "{}");
        tarb_file(&t, "manifest.json", manifest);
        data = tarb_end(&t, &len);
        write_file(file, data, len);
        return file;
}

static int import(struct image_store *st, const char *path, const char *ref, char ***refs)
{
        struct tess_error *err = NULL;
        return code_of(image_import(st, path, ref, refs, &err), &err);
}

static bool refs_are(char **refs, const char *a, const char *b)
{
        bool ok = refs && streq_ptr(refs[0], a) && (b ? refs[1] && streq(refs[1], b) && !refs[2] : !refs[1]);
        image_strv_free(refs);
        return ok;
}

static void test_import_oci_layout_dir_and_tar(void)
{
        char *dir, *work, *layout;
        struct image_store *st;
        struct image_fx fx;
        struct image_info info;
        struct tess_error *err = NULL;
        char **refs = NULL;
        _cleanup_free_ char *tar = NULL, *unnamed = NULL;

        NEED_ROOT();
        dir = scratch_dir("store");
        work = scratch_dir("work");
        st = store_open(dir);
        image_fx_build(&fx, (const char *const[]){ "oci-a", "oci-b", NULL }, ARCHIVE_FILTER_GZIP,
                       IMAGE_MEDIA_OCI_MANIFEST, "oci");
        layout = make_oci_layout(&fx, "\"" IMAGE_ANNOTATION_REF "\":\"registry.local/oci:1\"");
        CHECK_INTEQ(import(st, layout, NULL, &refs), 0);
        CHECK(refs_are(refs, "registry.local/oci:1", NULL));
        CHECK_INTEQ(code_of(image_store_get(st, "registry.local/oci:1", &info, &err), &err), 0);
        CHECK_STREQ(info.manifest_digest, fx.manifest.digest);
        image_info_free(&info);

        tar = make_oci_tar(work, "oci.tar.zst", &fx, "\"" IMAGE_ANNOTATION_REF "\":\"registry.local/oci:2\"",
                           ARCHIVE_FILTER_ZSTD, NULL);
        CHECK_INTEQ(import(st, tar, NULL, &refs), 0);
        CHECK(refs_are(refs, "registry.local/oci:2", NULL));
        /* the reference given wins over the layout's */
        CHECK_INTEQ(import(st, tar, "renamed:3", &refs), 0);
        CHECK(refs_are(refs, "renamed:3", NULL));
        CHECK_INTEQ(index_entries(dir), 3);

        /* no name anywhere */
        unnamed = make_oci_tar(work, "unnamed.tar", &fx, "", ARCHIVE_FILTER_NONE, NULL);
        CHECK_INTEQ(import(st, unnamed, NULL, &refs), EINVAL);
        scratch_remove(layout);
        scratch_remove(work);
        image_fx_release(&fx);
        image_store_close(st);
        scratch_remove(dir);
}

static void test_import_docker_save(void)
{
        char *dir, *work;
        struct image_store *st;
        struct image_fx fx;
        struct image_info info;
        struct image_manifest m;
        struct tess_error *err = NULL;
        char **refs = NULL;
        _cleanup_free_ char *tar = NULL;

        NEED_ROOT();
        dir = scratch_dir("store");
        work = scratch_dir("work");
        st = store_open(dir);
        /* two layers with the same content (the second a symlink in the archive) */
        image_fx_build(&fx, (const char *const[]){ "same", "same", NULL }, ARCHIVE_FILTER_NONE,
                       IMAGE_MEDIA_OCI_MANIFEST, "docker");
        tar = make_docker_save(work, "save.tar.gz", &fx, "[\"busybox:latest\",\"localhost/busybox:1\"]",
                               ARCHIVE_FILTER_GZIP);
        CHECK_INTEQ(import(st, tar, NULL, &refs), 0);
        CHECK(refs_are(refs, "busybox:latest", "localhost/busybox:1"));
        CHECK_INTEQ(code_of(image_store_get(st, "busybox", &info, &err), &err), 0);
        CHECK_STREQ(info.config_digest, fx.config.digest);
        CHECK(info.layer_dirs && info.layer_dirs[1] && streq(info.layer_dirs[0], info.layer_dirs[1]));
        /* the manifest written for it is an OCI one, layers as they are */
        CHECK_INTEQ(code_of(image_manifest_load(st, info.manifest_digest, &m, &err), &err), 0);
        CHECK_STREQ(m.media_type, IMAGE_MEDIA_OCI_MANIFEST);
        CHECK_INTEQ(m.n_layers, 2);
        if (m.n_layers == 2) {
                CHECK_STREQ(m.layers[0].media_type, IMAGE_MEDIA_OCI_LAYER);
                CHECK_STREQ(m.layers[0].digest, fx.diff_ids[0]);
        }
        image_manifest_release(&m);
        image_info_free(&info);
        CHECK_INTEQ(count_in(dir, "layers/sha256"), 1);
        /* one image, one name given */
        CHECK_INTEQ(import(st, tar, "other:2", &refs), 0);
        CHECK(refs_are(refs, "other:2", NULL));
        scratch_remove(work);
        image_fx_release(&fx);
        image_store_close(st);
        scratch_remove(dir);
}

static void test_import_docker_save_oci(void)
{
        char *dir, *work;
        struct image_store *st;
        struct image_fx fx;
        char **refs = NULL;
        _cleanup_free_ char *manifest = NULL, *named = NULL, *unnamed = NULL;

        NEED_ROOT();
        dir = scratch_dir("store");
        work = scratch_dir("work");
        st = store_open(dir);
        /* Docker 25+: an OCI layout with containerd's full name, and manifest.json */
        image_fx_build(&fx, (const char *const[]){ "new", NULL }, ARCHIVE_FILTER_NONE, IMAGE_MEDIA_OCI_MANIFEST,
                       "docker25");
        manifest = xasprintf("[{\"Config\":\"blobs/sha256/%s\",\"RepoTags\":[\"new:1\"],"
                             "\"Layers\":[\"blobs/sha256/%s\"]}]",
                             fx.config.digest + 7, fx.layers[0].digest + 7);
        named = make_oci_tar(work, "named.tar", &fx,
                             "\"" IMAGE_ANNOTATION_IMAGE_NAME "\":\"docker.io/library/new:1\",\"" IMAGE_ANNOTATION_REF
                             "\":\"1\"",
                             ARCHIVE_FILTER_NONE, manifest);
        CHECK_INTEQ(import(st, named, NULL, &refs), 0);
        CHECK(refs_are(refs, "docker.io/library/new:1", NULL));
        /* the same without names in index.json: manifest.json's RepoTags */
        unnamed = make_oci_tar(work, "unnamed.tar", &fx, "", ARCHIVE_FILTER_NONE, manifest);
        CHECK_INTEQ(import(st, unnamed, NULL, &refs), 0);
        CHECK(refs_are(refs, "new:1", NULL));
        scratch_remove(work);
        image_fx_release(&fx);
        image_store_close(st);
        scratch_remove(dir);
}

static void test_import_refuses_bad_archives(void)
{
        char *dir, *layout;
        struct image_store *st;
        struct image_fx fx;
        char **refs = NULL;
        _cleanup_free_ char *blob = NULL, *not_archive = NULL, *two = NULL, *two_manifest = NULL;
        static const char two_images[] = "[{\"Config\":\"a.json\",\"RepoTags\":[\"a:1\"],\"Layers\":[]},"
                                         "{\"Config\":\"b.json\",\"RepoTags\":[\"b:1\"],\"Layers\":[]}]";

        NEED_ROOT();
        dir = scratch_dir("store");
        st = store_open(dir);
        image_fx_build(&fx, (const char *const[]){ "x", NULL }, ARCHIVE_FILTER_GZIP, IMAGE_MEDIA_OCI_MANIFEST, "bad");
        layout = make_oci_layout(&fx, "\"" IMAGE_ANNOTATION_REF "\":\"bad:1\"");

        /* a blob whose content is not what its name says, then missing */
        blob = xasprintf("%s/blobs/sha256/%s", layout, fx.config.digest + 7);
        write_file(blob, "{}", 2);
        CHECK_INTEQ(import(st, layout, NULL, &refs), EBADMSG);
        unlink(blob);
        CHECK_INTEQ(import(st, layout, NULL, &refs), ENOENT);
        CHECK_INTEQ(index_entries(dir), 0);

        /* neither a layout nor an archive */
        not_archive = xasprintf("%s/oci-layout", layout);
        CHECK_INTEQ(import(st, not_archive, NULL, &refs), EBADMSG);

        /* one reference for two images */
        two = xasprintf("%s/two", dir);
        two_manifest = xasprintf("%s/manifest.json", two);
        CHECK_INTEQ(fs_mkdir_p(two, 0755, NULL), 0);
        write_file(two_manifest, two_images, strlen(two_images));
        CHECK_INTEQ(import(st, two, "one:1", &refs), EINVAL);
        scratch_remove(layout);
        image_fx_release(&fx);
        image_store_close(st);
        scratch_remove(dir);
}

static const struct test tests[] = {
        TEST(test_open_creates_layout),
        TEST(test_open_cleans_dead_tmp_entries),
        TEST(test_blob_writer_commits_verified_blobs),
        TEST(test_blob_writer_refuses_wrong_digest),
        TEST(test_blob_writer_refuses_wrong_size),
        TEST(test_blob_digests_are_checked),
        TEST(test_tag_get_list_remove),
        TEST(test_tag_takes_docker_manifests_and_indexes),
        TEST(test_tag_refuses_diff_id_mismatch),
        TEST(test_tag_unpacks_each_layer_once),
        TEST(test_gc),
        TEST(test_last_used_is_recorded_and_kept),
        TEST(test_budget_removes_least_recently_used_images_not_in_use),
        TEST(test_import_oci_layout_dir_and_tar),
        TEST(test_import_docker_save),
        TEST(test_import_docker_save_oci),
        TEST(test_import_refuses_bad_archives),
        {},
};

int main(void)
{
        return test_main(tests);
}
