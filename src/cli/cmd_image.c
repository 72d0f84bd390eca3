/* cmd_image.c - `tessera image import [--ref NAME:TAG] PATH`: give the
 * cluster an image from files, through the manager (superadmins).
 *
 * PATH is an OCI image layout directory, or an archive (a `docker save`
 * tar, a tar of an OCI layout, compressed or not), which is first turned
 * into an OCI layout in a temporary directory by the agent's importer with
 * unpacking off (src/image/image_import.c: the one reader of those
 * archives, libarchive underneath).  Each image the layout's index.json
 * names (an index entry: its linux/<host arch> manifest) is uploaded blob
 * by blob, config and layers first, manifest last, in chunks of
 * --chunk-size (halved when the manager finds them too large): a blob the
 * manager has is skipped and an upload cut short resumes where the
 * manager's copy ends (GET /admin/image-blobs/{digest}).  Then POST
 * /admin/image-imports registers it under its reference (--ref, else
 * org.opencontainers.image.ref.name / io.containerd.image.name), and
 * sessions may name it at once; agents pull it from the manager.  See
 * src/manager/images/api_image_import.c. */
#include "common/compat.h"

#include <fcntl.h>
#include <sys/stat.h>

#include "cli/cli-internal.h"
#include "cli/client.h"
#include "cli/output.h"
#include "common/buf.h"
#include "common/fs.h"
#include "image/image.h"

#define CHUNK_DEFAULT     (16ll << 20)
#define CHUNK_MIN         (64ll << 10)
#define INDEX_MAX         ((size_t)64 << 20)
#define MANIFEST_MAX      ((size_t)4 << 20)
#define MEDIA_OCI_INDEX   "application/vnd.oci.image.index.v1+json"
#define MEDIA_DOCKER_LIST "application/vnd.docker.distribution.manifest.list.v2+json"

struct upload {
        const char *layout; /* the OCI layout directory */
        int64_t chunk;
        size_t nblobs, nsent; /* blobs looked at, blobs (partly) sent */
};

static char *blob_path(const struct upload *u, const char *digest)
{
        return xasprintf("%s/blobs/sha256/%s", u->layout, digest + 7);
}

static bool digest_ok(const char *d)
{
        if (!d || strncmp(d, "sha256:", 7) != 0 || strlen(d) != 71)
                return false;
        return strspn(d + 7, "0123456789abcdef") == 64;
}

static int read_json_file(const char *path, size_t max, json_t **ret, struct tess_error **err)
{
        _cleanup_free_ char *text = NULL;
        json_error_t je;
        size_t len;
        int r = fs_read_file(path, max, &text, &len, err);

        if (r < 0)
                return r;
        *ret = json_loadb(text, len, 0, &je);
        if (!json_is_object(*ret)) {
                json_decref(*ret);
                return tess_err(err, EINVAL, "%s: not a JSON object (%s)", path, je.text);
        }
        return 0;
}

/* Where the manager's copy of a blob stands: complete, or the offset to resume at. */
static int blob_state(const char *digest, bool *ret_complete, int64_t *ret_offset, struct tess_error **err)
{
        _cleanup_free_ char *path = xasprintf("/admin/image-blobs/%s", digest);
        json_t *ans = NULL;
        int r = client_json("GET", path, NULL, CLIENT_SIGNED, &ans, err);

        if (r < 0)
                return r;
        *ret_complete = json_is_true(json_object_get(ans, "complete"));
        *ret_offset = json_integer_value(json_object_get(ans, "offset"));
        json_decref(ans);
        return 0;
}

/* Send the blob's bytes from `offset` on, in chunks, the last with PUT. */
static int send_blob(struct upload *u, const char *digest, int fd, int64_t size, int64_t offset,
                     struct tess_error **err)
{
        _cleanup_free_ char *chunk = NULL;
        int retries = 0;
        bool done = false;

        while (!done) {
                int64_t n = size - offset < u->chunk ? size - offset : u->chunk;
                bool last = offset + n == size;
                struct client_response resp = CLIENT_RESPONSE_INIT;
                _cleanup_free_ char *path = xasprintf("/admin/image-blobs/%s?offset=%lld", digest, (long long)offset);
                int r;

                chunk = xrealloc(chunk, (size_t)n + 1);
                for (int64_t done = 0; done < n;) {
                        ssize_t got = pread(fd, chunk + done, (size_t)(n - done), offset + done);
                        if (got <= 0)
                                return tess_err(err, EIO, "reading blob %s: %s", digest,
                                                got < 0 ? strerror(errno) : "it is shorter than the manifest says");
                        done += got;
                }
                r = client_send(last ? "PUT" : "PATCH", path, chunk, (size_t)n, CLIENT_SIGNED, &resp, err);
                if (r == 0 && resp.status == 413 && u->chunk > CHUNK_MIN) {
                        u->chunk /= 2; /* the manager's max_upload is smaller */
                } else if (r == 0 && resp.status == 416 && retries++ < 3) {
                        bool complete; /* another upload of the same blob moved it on */
                        r = blob_state(digest, &complete, &offset, err);
                        done = r == 0 && complete;
                } else if (r == 0 && resp.status / 100 != 2) {
                        r = client_status_error(&resp, err);
                } else if (r == 0) {
                        offset += n;
                        done = last;
                }
                client_response_release(&resp);
                if (r < 0)
                        return tess_err_wrap(err, "uploading blob %s", digest);
        }
        return 0;
}

static int upload_blob(struct upload *u, const char *digest, struct tess_error **err)
{
        _cleanup_free_ char *path = NULL;
        _cleanup_close_ int fd = -1;
        int64_t offset;
        bool complete;
        struct stat st;
        int r;

        if (!digest_ok(digest))
                return tess_err(err, EINVAL, "'%s' is not a sha256 digest", digest ? digest : "(none)");
        u->nblobs++;
        r = blob_state(digest, &complete, &offset, err);
        if (r < 0 || complete)
                return r;
        path = blob_path(u, digest);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0 || fstat(fd, &st) < 0)
                return tess_err(err, errno, "%s: %s", path, strerror(errno));
        if (offset > st.st_size)
                return tess_err(err, EINVAL, "the manager holds %lld bytes of %s, more than %s has", (long long)offset,
                                digest, path);
        if (offset > 0 && !arg_json)
                printf("resuming %s at byte %lld of %lld\n", digest, (long long)offset, (long long)st.st_size);
        u->nsent++;
        return send_blob(u, digest, fd, st.st_size, offset, err);
}

/* The image manifest an index.json entry names: itself, or its linux/<arch> entry. */
static int platform_manifest(struct upload *u, const json_t *entry, char **ret, struct tess_error **err)
{
        const char *mt = json_string_value(json_object_get(entry, "mediaType"));
        const char *digest = json_string_value(json_object_get(entry, "digest"));
        _cleanup_free_ char *path = NULL;
        json_t *index = NULL, *m;
        size_t i;

        if (!digest_ok(digest))
                return tess_err(err, EINVAL, "index.json names a manifest without a sha256 digest");
        if (!mt || (!streq(mt, MEDIA_OCI_INDEX) && !streq(mt, MEDIA_DOCKER_LIST))) {
                *ret = xstrdup(digest);
                return 0;
        }
        path = blob_path(u, digest);
        if (read_json_file(path, MANIFEST_MAX, &index, err) < 0)
                return -EINVAL;
        json_array_foreach(json_object_get(index, "manifests"), i, m) {
                const json_t *p = json_object_get(m, "platform");
                const char *os = json_string_value(json_object_get(p, "os"));
                const char *arch = json_string_value(json_object_get(p, "architecture"));
                if (os && arch && streq(os, "linux") && streq(arch, image_host_arch()) &&
                    digest_ok(json_string_value(json_object_get(m, "digest")))) {
                        *ret = xstrdup(json_string_value(json_object_get(m, "digest")));
                        json_decref(index);
                        return 0;
                }
        }
        json_decref(index);
        return tess_err(err, ENOENT, "index %s has no image for linux/%s", digest, image_host_arch());
}

/* Upload one image's blobs and register it. */
static int import_one(struct upload *u, const char *manifest, const char *reference, struct tess_error **err)
{
        _cleanup_free_ char *path = blob_path(u, manifest);
        json_t *m = NULL, *l, *ans = NULL;
        size_t i;
        int r;

        r = read_json_file(path, MANIFEST_MAX, &m, err);
        if (r < 0)
                return r;
        r = upload_blob(u, json_string_value(json_object_get(json_object_get(m, "config"), "digest")), err);
        json_array_foreach(json_object_get(m, "layers"), i, l) {
                if (r < 0)
                        break;
                r = upload_blob(u, json_string_value(json_object_get(l, "digest")), err);
        }
        json_decref(m);
        if (r == 0)
                r = upload_blob(u, manifest, err);
        if (r < 0)
                return r;
        json_t *body = json_pack("{s:s, s:s}", "reference", reference, "manifest", manifest);
        r = client_json("POST", "/admin/image-imports", body, CLIENT_SIGNED, &ans, err);
        json_decref(body);
        if (r < 0)
                return tess_err_wrap(err, "registering %s", reference);
        if (arg_json)
                out_json(ans);
        else
                printf("imported %s:%s (%s, %s, %lld bytes; %zu of %zu blobs sent)\n",
                       json_string_value(json_object_get(ans, "name")), json_string_value(json_object_get(ans, "tag")),
                       json_string_value(json_object_get(ans, "architecture")), manifest,
                       (long long)json_integer_value(json_object_get(ans, "size_bytes")), u->nsent, u->nblobs);
        json_decref(ans);
        return 0;
}

static int import_layout(struct upload *u, const char *ref_override, struct tess_error **err)
{
        _cleanup_free_ char *index_path = xasprintf("%s/index.json", u->layout);
        json_t *index = NULL, *entry;
        size_t i, n = 0;
        int r = read_json_file(index_path, INDEX_MAX, &index, err);

        if (r < 0)
                return r;
        const json_t *entries = json_object_get(index, "manifests");
        if (ref_override && json_array_size(entries) > 1)
                r = tess_err(err, EINVAL, "%s names %zu images: --ref names one", index_path, json_array_size(entries));
        json_array_foreach(entries, i, entry) {
                const json_t *ann = json_object_get(entry, "annotations");
                const char *ref = ref_override;
                _cleanup_free_ char *manifest = NULL;

                if (r < 0)
                        break;
                if (!ref)
                        ref = json_string_value(json_object_get(ann, "io.containerd.image.name"));
                if (!ref)
                        ref = json_string_value(json_object_get(ann, "org.opencontainers.image.ref.name"));
                if (!ref || !*ref) {
                        r = tess_err(err, EINVAL,
                                     "image %zu of %s has no reference name (org.opencontainers.image.ref.name):"
                                     " name it with --ref NAME:TAG",
                                     i + 1, index_path);
                        break;
                }
                r = platform_manifest(u, entry, &manifest, err);
                if (r == 0)
                        r = import_one(u, manifest, ref, err);
                n++;
        }
        if (r == 0 && n == 0)
                r = tess_err(err, EINVAL, "%s names no image", index_path);
        json_decref(index);
        return r;
}

/* An archive into an OCI layout under a fresh directory of $TMPDIR. */
static int convert_archive(const char *path, const char *ref, char **ret_dir, struct tess_error **err)
{
        const char *tmp = getenv("TMPDIR");
        _cleanup_free_ char *dir = xasprintf("%s/tessera-import-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        struct image_store *st = NULL;
        char **refs = NULL;
        int r;

        if (!mkdtemp(dir))
                return tess_err(err, errno, "creating a directory in %s: %s", tmp && *tmp ? tmp : "/tmp",
                                strerror(errno));
        r = image_store_open(dir, &st, err);
        if (r == 0) {
                image_store_set_unpack_layers(st, false);
                r = image_import(st, path, ref, &refs, err);
                image_store_close(st);
        }
        for (char **p = refs; p && *p; p++)
                free(*p);
        free(refs);
        if (r < 0) {
                fs_remove_tree(dir, NULL);
                return r;
        }
        *ret_dir = TAKE_PTR(dir);
        return 0;
}

static int image_import_run(struct cli_call *call)
{
        const char *path = call->args.pos[0], *ref = cli_local_str(&call->args, "ref");
        struct upload u = { .layout = path, .chunk = cli_local_int(&call->args, "chunk-size", CHUNK_DEFAULT) };
        _cleanup_free_ char *tmpdir = NULL;
        struct tess_error *err = NULL;
        struct stat st;
        int r;

        if (u.chunk < 1)
                return cli_usage_error(call->prefix, "--chunk-size must be positive");
        if (stat(path, &st) < 0)
                return cli_error("%s: %s", path, strerror(errno));
        if (!S_ISDIR(st.st_mode)) {
                if (convert_archive(path, ref, &tmpdir, &err) < 0)
                        return cli_fail(err);
                u.layout = tmpdir;
                ref = NULL; /* the conversion named the image already */
        }
        r = import_layout(&u, ref, &err);
        if (tmpdir)
                fs_remove_tree(tmpdir, NULL);
        return r < 0 ? cli_fail(err) : CLI_EXIT_OK;
}

static const struct cli_opt import_opts[] = {
        { "ref", 'r', OPT_STR, DEST_LOCAL, "ref", 0, 0, "NAME:TAG",
          "the image's name (default: the one the layout or archive records)" },
        { "chunk-size", 0, OPT_INT, DEST_LOCAL, "chunk-size", 0, 0, "BYTES",
          "bytes per upload request (default 16 MiB; halved when the manager's max_upload is smaller)" },
        {},
};

static const struct cli_leaf image_leaves[] = {
        { "ls", "list", image_list_cmd, { NULL }, 0, 0, 0, NULL,
          "the images you may start sessions from: names, tags and aliases" },
        { "import",
          NULL,
          image_import_run,
          { import_opts },
          0,
          1,
          1,
          "PATH",
          "give every agent an image: an OCI layout directory or a docker save archive (superadmins)" },
        { "build",
          NULL,
          image_build_cmd,
          { image_build_opts },
          0,
          1,
          1,
          "RECIPE",
          "build an OCI image layout from a recipe (images/*.recipe) with debootstrap; cached (root)" },
        { "push",
          NULL,
          image_push_cmd,
          { image_push_opts },
          0,
          2,
          2,
          "LAYOUT REF",
          "push an OCI image layout to a registry: REF is HOST[:PORT]/NAME[:TAG]" },
        {},
};

int cmd_image(int argc, char **argv)
{
        return cli_run_group("tessera image",
                             "Images: build them from recipes, push them to registries, import them from files through the manager\n"
                             "(see them with 'tessera admin image list').",
                             image_leaves, argc, argv);
}
