/* cmd_image_build.c - `tessera image build RECIPE [--output DIR] [--push REF]`:
 * an OCI image layout from a recipe (image_recipe.h, docs/images.md), with
 * debootstrap and no container engine.
 *
 * Steps: debootstrap the recipe's suite into a fresh directory, then
 * apt-get install --no-install-recommends the recipe's packages in it (their
 * output condensed to one line per phase; the whole log kept beside the
 * cache when the build fails), clean what differs between builds or belongs to
 * the runtime (/dev, /proc, apt lists, logs, ldconfig's aux-cache ...),
 * add the `work` user (uid 1000, home /home/work) as Backend.AI's images
 * have, write the tree as one reproducible layer (src/image/layer_writer.c:
 * sorted entries, numeric owners, mtimes SOURCE_DATE_EPOCH, gzip without a
 * timestamp), then the config, manifest and index with sorted keys.
 *
 * Cache: ${TESSERA_IMAGE_CACHE:-/var/cache/tessera/images} (not root:
 * ~/.cache/tessera/images) holds each layout as NAME-TAG-<key>, where <key>
 * hashes the canonical recipe, the mirror, SOURCE_DATE_EPOCH, the
 * architecture, debootstrap's version and BUILDER_VERSION; a layout
 * present is reused (--rebuild makes it again), and debootstrap's
 * downloaded packages are kept in debs/<suite>-<arch>/.  Builds of one
 * image hold a lock (sibling checkouts share the cache).  The last line of
 * stdout is the layout's directory. */
#include "common/compat.h"

#include <fcntl.h>
#include <glob.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include <jansson.h>

#include "cli/cli-internal.h"
#include "cli/image_recipe.h"
#include "common/buf.h"
#include "common/crypto.h"
#include "common/fs.h"
#include "image/image.h"
#include "image/layer_writer.h"
#include "registry/image_push.h"

#define BUILDER_VERSION "tessera-image-build 2"
#define RECIPE_MAX      ((size_t)1 << 20)
#define EPOCH_DEFAULT   "1700000000"
#define MIRROR_DEFAULT  "http://deb.debian.org/debian"
#define STEPS           5

struct build {
        struct recipe r;
        const char *recipe_path;
        char *cache, *mirror, *key, *image_dir, *work;
        int64_t epoch;
        bool tty;
        time_t started;
};

static void step(struct build *b, int n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void step(struct build *b, int n, const char *fmt, ...)
{
        va_list ap;

        fprintf(stderr, "[%d/%d %3lds] ", n, STEPS, (long)(time(NULL) - b->started));
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
}

static char *cache_root(struct tess_error **err)
{
        const char *env = getenv("TESSERA_IMAGE_CACHE");
        const char *home = getenv("HOME");
        char *d;

        if (env && *env)
                d = xstrdup(env);
        else if (fs_mkdir_p("/var/cache/tessera/images", 0755, NULL) == 0 &&
                 access("/var/cache/tessera/images", W_OK) == 0)
                d = xstrdup("/var/cache/tessera/images");
        else if (getenv("XDG_CACHE_HOME") && *getenv("XDG_CACHE_HOME"))
                d = xasprintf("%s/tessera/images", getenv("XDG_CACHE_HOME"));
        else
                d = xasprintf("%s/.cache/tessera/images", home && *home ? home : "/tmp");
        if (fs_mkdir_p(d, 0755, err) < 0) {
                free(d);
                return NULL;
        }
        return d;
}

/* The first http(s) URI ending in "/debian" in the apt sources. */
static char *apt_mirror(void)
{
        static const char *const files[] = { "/etc/apt/sources.list.d/debian.sources", "/etc/apt/sources.list", NULL };

        for (const char *const *f = files; *f; f++) {
                _cleanup_free_ char *text = NULL;
                size_t len;
                if (fs_read_file(*f, 1 << 20, &text, &len, NULL) < 0)
                        continue;
                for (char *p = text; (p = strstr(p, "http")); p++) {
                        size_t n = strcspn(p, " \t\r\n");
                        while (n > 0 && p[n - 1] == '/')
                                n--;
                        if ((strncmp(p, "http://", 7) == 0 || strncmp(p, "https://", 8) == 0) && n > 7 &&
                            strncmp(p + n - 7, "/debian", 7) == 0)
                                return xstrndup(p, n);
                }
        }
        return NULL;
}

static char *pick_mirror(const struct recipe *r)
{
        const char *env = getenv("TESSERA_DEBIAN_MIRROR");
        char *m;

        if (r->mirror)
                return xstrdup(r->mirror);
        if (env && *env)
                return xstrdup(env);
        m = apt_mirror();
        return m ? m : xstrdup(MIRROR_DEFAULT);
}

/* The first line of a command's output ("" when it fails). */
static char *command_line(const char *cmd)
{
        _cleanup_free_ char *line = NULL;
        size_t cap = 0;
        FILE *f = popen(cmd, "re");
        ssize_t n = f ? getline(&line, &cap, f) : -1;

        if (f)
                pclose(f);
        if (n <= 0)
                return xstrdup("");
        line[strcspn(line, "\n")] = '\0';
        return TAKE_PTR(line);
}

static char *cache_key(struct build *b)
{
        _cleanup_(buf_release) struct buf in = BUF_INIT;
        _cleanup_free_ char *deboot = command_line("dpkg-query -W -f='${Version}' debootstrap 2>/dev/null");
        char hex[65];

        buf_printf(&in, "%s\narch=%s\nepoch=%lld\nmirror=%s\ndebootstrap=%s\n", BUILDER_VERSION, image_host_arch(),
                   (long long)b->epoch, b->mirror, deboot);
        recipe_print(&b->r, &in);
        sha256_hex(in.data, in.len, hex);
        return xstrndup(hex, 16);
}

/* ---- debootstrap, its output condensed ---- */

struct phase {
        char verb[32];
        unsigned count;
};

static void phase_end(struct build *b, struct phase *ph)
{
        if (ph->count == 0)
                return;
        if (b->tty)
                fputs("\r\033[K", stderr);
        fprintf(stderr, "        %s: %u packages\n", ph->verb, ph->count);
        ph->count = 0;
}

/* apt-get's lines in debootstrap's words: "Get:3 http://... libc6 ..." is
 * "I: Retrieving ...", "Unpacking x", "Setting up x" are "I: Unpacking x",
 * "I: Configuring x"; the rest is dropped but for E: and W: lines. */
static const char *apt_as_debootstrap(const char *line, char *tmp, size_t n)
{
        if (strncmp(line, "Get:", 4) == 0)
                snprintf(tmp, n, "I: Retrieving %s", line + 4 + strcspn(line + 4, " "));
        else if (strncmp(line, "Unpacking ", 10) == 0)
                snprintf(tmp, n, "I: Unpacking %s", line + 10);
        else if (strncmp(line, "Setting up ", 11) == 0)
                snprintf(tmp, n, "I: Configuring %s", line + 11);
        else if ((strncmp(line, "E: ", 3) == 0 || strncmp(line, "W: ", 3) == 0) && !strstr(line, "posix_openpt"))
                return line; /* (apt's pty for its log: there is no /dev/pts in the chroot, harmless) */
        else
                return NULL;
        return tmp;
}

/* One line of debootstrap's output: "I: Retrieving libc6 2.36-9" counts
 * towards the phase "Retrieving"; W: and E: lines pass through. */
static void condense(struct build *b, struct phase *ph, const char *line)
{
        char verb[32] = "";
        const char *what;

        if (strncmp(line, "W: ", 3) == 0 || strncmp(line, "E: ", 3) == 0) {
                phase_end(b, ph);
                fprintf(stderr, "        %s\n", line);
                return;
        }
        if (strncmp(line, "I: ", 3) != 0 || sscanf(line + 3, "%31s", verb) != 1)
                return;
        what = line + 3 + strlen(verb);
        bool per_package = streq(verb, "Retrieving") || streq(verb, "Validating") || streq(verb, "Extracting") ||
                           streq(verb, "Unpacking") || streq(verb, "Configuring");
        if (!per_package) {
                phase_end(b, ph);
                fprintf(stderr, "        %s\n", line + 3);
                return;
        }
        if (streq(verb, "Validating"))
                return; /* each Retrieving is followed by its Validating */
        if (!streq(verb, ph->verb)) {
                phase_end(b, ph);
                snprintf(ph->verb, sizeof(ph->verb), "%s", verb);
        }
        ph->count++;
        if (b->tty)
                fprintf(stderr, "\r\033[K        %s %u:%.60s", verb, ph->count, what);
}

/* Run argv with its output condensed, the whole of it appended to
 * WORK/debootstrap.log; `apt` translates apt-get's lines first. */
static int run_condensed(struct build *b, const char *const *argv, bool apt, struct tess_error **err)
{
        _cleanup_free_ char *log_path = xasprintf("%s/debootstrap.log", b->work);
        _cleanup_fclose_ FILE *log = fopen(log_path, "ae");
        struct phase ph = { .count = 0 };
        int pipefd[2], status;
        char *line = NULL, tmp[512];
        size_t cap = 0;
        pid_t pid;

        if (!log || pipe2(pipefd, O_CLOEXEC) < 0)
                return tess_err(err, errno, "starting %s: %s", argv[0], strerror(errno));
        pid = fork();
        if (pid < 0)
                return tess_err(err, errno, "fork: %s", strerror(errno));
        if (pid == 0) {
                dup2(pipefd[1], 1);
                dup2(pipefd[1], 2);
                setenv("LC_ALL", "C", 1);
                setenv("DEBIAN_FRONTEND", "noninteractive", 1);
                execvp(argv[0], (char **)argv);
                fprintf(stderr, "E: cannot run %s: %s\n", argv[0], strerror(errno));
                _exit(127);
        }
        close(pipefd[1]);
        FILE *out = fdopen(pipefd[0], "re");
        while (out && getline(&line, &cap, out) > 0) {
                fputs(line, log);
                line[strcspn(line, "\n")] = '\0';
                const char *l = apt ? apt_as_debootstrap(line, tmp, sizeof(tmp)) : line;
                if (l)
                        condense(b, &ph, l);
        }
        phase_end(b, &ph);
        free(line);
        if (out)
                fclose(out);
        else
                close(pipefd[0]);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                return tess_err(err, EIO, "%s failed (exit %d)", argv[0], WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        return 0;
}

static char *debs_dir(const struct build *b)
{
        return xasprintf("%s/debs/%s-%s", b->cache, b->r.suite, image_host_arch());
}

/* The base system: debootstrap with its downloads kept in the cache. */
static int run_debootstrap(struct build *b, const char *rootfs, struct tess_error **err)
{
        _cleanup_free_ char *variant = xasprintf("--variant=%s", b->r.variant), *debs = debs_dir(b);
        _cleanup_free_ char *cache_opt = xasprintf("--cache-dir=%s", debs);
        const char *argv[] = { "debootstrap", variant, cache_opt, b->r.suite, rootfs, b->mirror, NULL };

        if (fs_mkdir_p(debs, 0755, err) < 0)
                return -EIO;
        return run_condensed(b, argv, false, err);
}

/* The recipe's packages: apt-get in the new system (debootstrap's own
 * --include resolves no virtual packages), its archive the cache's debs
 * directory bind-mounted, /proc mounted for the maintainer scripts. */
static int install_packages(struct build *b, const char *rootfs, struct tess_error **err)
{
        _cleanup_free_ char *debs = debs_dir(b), *archives = xasprintf("%s/var/cache/apt/archives", rootfs);
        _cleanup_free_ char *partial = xasprintf("%s/partial", debs), *proc = xasprintf("%s/proc", rootfs);
        const char *update[] = { "chroot", rootfs, "apt-get", "-q", "-o", "APT::Sandbox::User=root", "update", NULL };
        const char *install[8 + RECIPE_LINES_MAX] = { "chroot",
                                                      rootfs,
                                                      "apt-get",
                                                      "-q",
                                                      "-y",
                                                      "-o",
                                                      "APT::Sandbox::User=root",
                                                      "install",
                                                      "--no-install-recommends" };
        size_t n = 9;
        int r;

        for (char **p = b->r.packages; *p && n < sizeof(install) / sizeof(install[0]) - 1; p++)
                install[n++] = *p;
        install[n] = NULL;
        if (fs_mkdir_p(partial, 0755, err) < 0 || fs_mkdir_p(archives, 0755, err) < 0)
                return -EIO;
        if (mount(debs, archives, NULL, MS_BIND, NULL) < 0)
                return tess_err(err, errno, "binding '%s' to '%s': %s", debs, archives, strerror(errno));
        if (mount("proc", proc, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0) {
                r = tess_err(err, errno, "mounting /proc in '%s': %s", rootfs, strerror(errno));
                umount2(archives, MNT_DETACH);
                return r;
        }
        r = run_condensed(b, update, true, err);
        if (r == 0)
                r = run_condensed(b, install, true, err);
        umount2(proc, MNT_DETACH);
        umount2(archives, MNT_DETACH);
        return r;
}

/* ---- the root filesystem ---- */

/* What the runtime provides, or what differs from one build to the next. */
static const char *const scrub[] = {
        "dev/*",
        "proc/*",
        "sys/*",
        "run/*",
        "tmp/*",
        "var/tmp/*",
        "var/log/*",
        "var/cache/apt/*.bin",
        "var/cache/apt/archives/*.deb",
        "var/cache/apt/archives/partial",
        "var/lib/apt/lists/*",
        "var/cache/ldconfig/aux-cache",
        "var/cache/debconf/*-old",
        "var/lib/dpkg/*-old",
        "root/.bash_history",
        "debootstrap",
        NULL,
};

static int append_file(const char *path, const char *text, struct tess_error **err)
{
        _cleanup_close_ int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);

        if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
                return tess_err(err, errno ? errno : EIO, "appending to '%s': %s", path, strerror(errno));
        return 0;
}

static int finish_rootfs(struct build *b, const char *rootfs, struct tess_error **err)
{
        _cleanup_free_ char *home = NULL, *passwd = xasprintf("%s/etc/passwd", rootfs);
        _cleanup_free_ char *group = xasprintf("%s/etc/group", rootfs), *shadow = xasprintf("%s/etc/shadow", rootfs);
        _cleanup_free_ char *hostname = xasprintf("%s\n", b->r.name);
        _cleanup_free_ char *existing = NULL;
        size_t len;
        int r;

        for (const char *const *s = scrub; *s; s++) {
                _cleanup_free_ char *pattern = xasprintf("%s/%s", rootfs, *s);
                glob_t g;
                if (glob(pattern, GLOB_NOSORT | GLOB_PERIOD, NULL, &g) != 0)
                        continue;
                for (size_t i = 0; i < g.gl_pathc; i++) {
                        const char *base = strrchr(g.gl_pathv[i], '/');
                        struct stat st;
                        if (base && (streq(base, "/.") || streq(base, "/..")))
                                continue;
                        if (lstat(g.gl_pathv[i], &st) == 0 && S_ISDIR(st.st_mode))
                                r = fs_remove_tree(g.gl_pathv[i], err);
                        else
                                r = unlink(g.gl_pathv[i]) < 0 && errno != ENOENT
                                            ? tess_err(err, errno, "removing '%s': %s", g.gl_pathv[i], strerror(errno))
                                            : 0;
                        if (r < 0) {
                                globfree(&g);
                                return r;
                        }
                }
                globfree(&g);
        }
        static const char *const empty[] = { "etc/resolv.conf", "etc/machine-id", NULL };
        for (const char *const *e = empty; *e; e++) {
                _cleanup_free_ char *p = xasprintf("%s/%s", rootfs, *e);
                unlink(p); /* resolv.conf may be a link to the host's */
                if (fs_write_file_replace(p, "", 0, 0644, err) < 0)
                        return -EIO;
        }
        _cleanup_free_ char *hn = xasprintf("%s/etc/hostname", rootfs);
        if (fs_write_file_replace(hn, hostname, strlen(hostname), 0644, err) < 0)
                return -EIO;
        /* the user Backend.AI's kernels run as */
        if (fs_read_file(passwd, 4 << 20, &existing, &len, err) < 0)
                return -EIO;
        if (!strstr(existing, "\nwork:")) {
                if (append_file(passwd, "work:x:1000:1000:work:/home/work:/bin/bash\n", err) < 0 ||
                    append_file(group, "work:x:1000:\n", err) < 0 ||
                    append_file(shadow, "work:*:19000:0:99999:7:::\n", err) < 0)
                        return -EIO;
        }
        home = xasprintf("%s/home/work", rootfs);
        if (fs_mkdir_p(home, 0755, err) < 0 || chown(home, 1000, 1000) < 0)
                return tess_err(err, errno ? errno : EIO, "preparing '%s'", home);
        return 0;
}

/* ---- the layout ---- */

static json_t *string_array(char **w)
{
        json_t *a = json_array();
        for (; w && *w; w++)
                json_array_append_new(a, json_string(*w));
        return a;
}

/* Dump j (sorted keys, compact) into LAYOUT/blobs/sha256/<hex>; steals j. */
static int put_json_blob(const char *layout, json_t *j, char ret_digest[72], int64_t *ret_size, struct tess_error **err)
{
        _cleanup_free_ char *text = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
        char hex[65];

        json_decref(j);
        if (!text)
                return tess_err(err, ENOMEM, "encoding JSON");
        sha256_hex(text, strlen(text), hex);
        _cleanup_free_ char *path = xasprintf("%s/blobs/sha256/%s", layout, hex);
        snprintf(ret_digest, 72, "sha256:%s", hex);
        *ret_size = (int64_t)strlen(text);
        return fs_write_file_replace(path, text, strlen(text), 0644, err);
}

static int write_layout(struct build *b, const char *layout, const struct layer_info *li, char ret_manifest[72],
                        struct tess_error **err)
{
        char created[32], config_digest[72];
        int64_t config_size, manifest_size;
        time_t t = (time_t)b->epoch;
        struct tm tm;
        json_t *env = json_array(), *labels = json_object(), *conf, *config, *manifest, *index;

        gmtime_r(&t, &tm);
        strftime(created, sizeof(created), "%Y-%m-%dT%H:%M:%SZ", &tm);
        json_array_append_new(env, json_string("PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"));
        for (size_t i = 0; i < b->r.n_env; i++)
                json_array_append_new(env, json_sprintf("%s=%s", b->r.env[i].key, b->r.env[i].value));
        for (size_t i = 0; i < b->r.n_labels; i++)
                json_object_set_new(labels, b->r.labels[i].key, json_string(b->r.labels[i].value));
        conf = json_pack("{s:o, s:s, s:o}", "Env", env, "WorkingDir", b->r.workdir, "Labels", labels);
        if (b->r.cmd[0])
                json_object_set_new(conf, "Cmd", string_array(b->r.cmd));
        if (b->r.entrypoint[0])
                json_object_set_new(conf, "Entrypoint", string_array(b->r.entrypoint));
        config = json_pack("{s:s, s:s, s:s, s:o, s:{s:s, s:[s]}, s:[{s:s, s:s}]}", "architecture", image_host_arch(),
                           "os", "linux", "created", created, "config", conf, "rootfs", "type", "layers", "diff_ids",
                           li->diff_id, "history", "created", created, "created_by",
                           "tessera image build " BUILDER_VERSION);
        if (put_json_blob(layout, config, config_digest, &config_size, err) < 0)
                return -EIO;
        manifest =
                json_pack("{s:i, s:s, s:{s:s, s:s, s:I}, s:[{s:s, s:s, s:I}]}", "schemaVersion", 2, "mediaType",
                          "application/vnd.oci.image.manifest.v1+json", "config", "mediaType",
                          "application/vnd.oci.image.config.v1+json", "digest", config_digest, "size",
                          (json_int_t)config_size, "layers", "mediaType", "application/vnd.oci.image.layer.v1.tar+gzip",
                          "digest", li->digest, "size", (json_int_t)li->size);
        if (put_json_blob(layout, manifest, ret_manifest, &manifest_size, err) < 0)
                return -EIO;
        _cleanup_free_ char *ref = xasprintf("%s:%s", b->r.name, b->r.tag);
        index = json_pack("{s:i, s:s, s:[{s:s, s:s, s:I, s:{s:s, s:s}, s:{s:s}}]}", "schemaVersion", 2, "mediaType",
                          "application/vnd.oci.image.index.v1+json", "manifests", "mediaType",
                          "application/vnd.oci.image.manifest.v1+json", "digest", ret_manifest, "size",
                          (json_int_t)manifest_size, "platform", "architecture", image_host_arch(), "os", "linux",
                          "annotations", "org.opencontainers.image.ref.name", ref);
        _cleanup_free_ char *text = json_dumps(index, JSON_SORT_KEYS | JSON_INDENT(2));
        json_decref(index);
        _cleanup_free_ char *ipath = xasprintf("%s/index.json", layout), *lpath = xasprintf("%s/oci-layout", layout);
        static const char layout_text[] = "{\"imageLayoutVersion\":\"1.0.0\"}";
        if (fs_write_file_replace(lpath, layout_text, sizeof(layout_text) - 1, 0644, err) < 0)
                return -EIO;
        return fs_write_file_replace(ipath, text, strlen(text), 0644, err);
}

/* ---- the build ---- */

static size_t count_words(char **w)
{
        size_t n = 0;
        while (w[n])
                n++;
        return n;
}

static int build_image(struct build *b, struct tess_error **err)
{
        _cleanup_free_ char *rootfs = xasprintf("%s/rootfs", b->work), *layout = xasprintf("%s/image", b->work);
        _cleanup_free_ char *blobs = xasprintf("%s/blobs/sha256", layout),
                            *layer_tmp = xasprintf("%s/layer.tmp", b->work);
        struct layer_info li;
        char manifest[72];
        int r;

        if (geteuid() != 0)
                return tess_err(err, EPERM, "building an image needs root (debootstrap)");
        if (mkdir(rootfs, 0755) < 0 || fs_mkdir_p(blobs, 0755, err) < 0)
                return tess_err(err, errno ? errno : EIO, "creating '%s'", rootfs);
        step(b, 1, "debootstrap %s (%s) from %s", b->r.suite, b->r.variant, b->mirror);
        r = run_debootstrap(b, rootfs, err);
        if (r < 0)
                return r;
        step(b, 2, "apt-get install --no-install-recommends of %zu packages", count_words(b->r.packages));
        r = b->r.packages[0] ? install_packages(b, rootfs, err) : 0;
        if (r < 0)
                return r;
        step(b, 3, "cleaning the root filesystem, adding the work user");
        r = finish_rootfs(b, rootfs, err);
        if (r < 0)
                return tess_err_wrap(err, "finishing the root filesystem");
        step(b, 4, "writing the layer (mtimes @%lld, sorted, numeric owners, gzip -n)", (long long)b->epoch);
        r = layer_write(rootfs, layer_tmp, b->epoch, &li, err);
        if (r < 0)
                return r;
        _cleanup_free_ char *layer_path = xasprintf("%s/%s", blobs, li.digest + 7);
        if (rename(layer_tmp, layer_path) < 0)
                return tess_err(err, errno, "renaming the layer: %s", strerror(errno));
        fprintf(stderr, "        %s: %.1f MiB (tar %.1f MiB, %llu entries)\n", li.digest, li.size / 1048576.0,
                li.tar_size / 1048576.0, (unsigned long long)li.entries);
        step(b, 5, "writing the config, manifest and index");
        r = write_layout(b, layout, &li, manifest, err);
        if (r < 0)
                return r;
        fs_remove_tree(b->image_dir, NULL);
        if (rename(layout, b->image_dir) < 0)
                return tess_err(err, errno, "renaming into '%s': %s", b->image_dir, strerror(errno));
        fprintf(stderr, "built %s:%s in %ld s: manifest %s\n", b->r.name, b->r.tag, (long)(time(NULL) - b->started),
                manifest);
        return 0;
}

static int build_cached(struct build *b, bool rebuild, struct tess_error **err)
{
        _cleanup_free_ char *index = xasprintf("%s/index.json", b->image_dir);
        _cleanup_free_ char *lock = xasprintf("%s/.%s-%s.lock", b->cache, b->r.name, b->r.tag);
        _cleanup_free_ char *tmpl = xasprintf("%s/.build-%s-XXXXXX", b->cache, b->r.name);
        _cleanup_close_ int lockfd = -1;
        int r;

        if (!rebuild && access(index, F_OK) == 0) {
                fprintf(stderr, "using the cached build of %s:%s (%s)\n", b->r.name, b->r.tag, b->key);
                return 0;
        }
        lockfd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        if (lockfd < 0 || flock(lockfd, LOCK_EX) < 0)
                return tess_err(err, errno, "locking '%s': %s", lock, strerror(errno));
        if (!rebuild && access(index, F_OK) == 0)
                return 0; /* a sibling built it meanwhile */
        if (!mkdtemp(tmpl))
                return tess_err(err, errno, "creating a build directory in '%s': %s", b->cache, strerror(errno));
        b->work = xstrdup(tmpl);
        fprintf(stderr, "building %s:%s from %s into %s\n", b->r.name, b->r.tag, b->recipe_path, b->image_dir);
        r = build_image(b, err);
        if (r < 0) {
                /* keep debootstrap's log where the next look finds it */
                _cleanup_free_ char *from = xasprintf("%s/debootstrap.log", b->work);
                _cleanup_free_ char *to = xasprintf("%s/%s-%s.failed.log", b->cache, b->r.name, b->r.tag);
                _cleanup_free_ char *inner = xasprintf("%s/rootfs/debootstrap/debootstrap.log", b->work);
                _cleanup_free_ char *inner_to = xasprintf("%s/%s-%s.failed-inner.log", b->cache, b->r.name, b->r.tag);
                if (rename(from, to) == 0)
                        fprintf(stderr, "debootstrap's log: %s\n", to);
                if (rename(inner, inner_to) == 0)
                        fprintf(stderr, "debootstrap's own log (dpkg's messages): %s\n", inner_to);
        }
        fs_remove_tree(b->work, NULL);
        return r;
}

static int copy_layout(const char *from, const char *to, struct tess_error **err)
{
        _cleanup_free_ char *cmd = NULL;
        pid_t pid;
        int status;

        if (fs_mkdir_p(to, 0755, err) < 0)
                return -EIO;
        cmd = xasprintf("%s/.", from);
        pid = fork();
        if (pid == 0) {
                execlp("cp", "cp", "-a", "--", cmd, to, (char *)NULL);
                _exit(127);
        }
        if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
                return tess_err(err, EIO, "copying '%s' to '%s' failed", from, to);
        return 0;
}

static int image_build_run(struct cli_call *call)
{
        const char *output = cli_local_str(&call->args, "output"), *push = cli_local_str(&call->args, "push");
        const char *epoch = getenv("SOURCE_DATE_EPOCH");
        struct build b = { .recipe_path = call->args.pos[0], .started = time(NULL), .tty = isatty(2) };
        _cleanup_free_ char *text = NULL;
        struct tess_error *err = NULL;
        size_t len;
        char *end;
        int r;

        if (fs_read_file(b.recipe_path, RECIPE_MAX, &text, &len, &err) < 0 ||
            recipe_parse(text, len, b.recipe_path, &b.r, &err) < 0)
                return cli_fail(err);
        errno = 0;
        b.epoch = strtoll(epoch && *epoch ? epoch : EPOCH_DEFAULT, &end, 10);
        if (errno || *end || b.epoch < 0) {
                recipe_release(&b.r);
                return cli_error("SOURCE_DATE_EPOCH='%s' is not a number of seconds", epoch);
        }
        setenv("SOURCE_DATE_EPOCH", epoch && *epoch ? epoch : EPOCH_DEFAULT, 1); /* for dpkg and friends */
        b.mirror = pick_mirror(&b.r);
        b.cache = cache_root(&err);
        r = b.cache ? 0 : -EIO;
        if (r == 0) {
                b.key = cache_key(&b);
                b.image_dir = xasprintf("%s/%s-%s-%s", b.cache, b.r.name, b.r.tag, b.key);
                r = build_cached(&b, cli_local_flag(&call->args, "rebuild"), &err);
        }
        if (r == 0 && output)
                r = copy_layout(b.image_dir, output, &err);
        if (r == 0 && push) {
                struct image_push_result res;
                r = image_push(output ? output : b.image_dir, push, &(struct image_push_opts){ .verbose = !arg_json }, &res,
                               &err);
                if (r == 0)
                        fprintf(stderr, "pushed %s (%s; %zu of %zu blobs sent)\n", push, res.manifest, res.sent,
                                res.blobs);
        }
        if (r == 0)
                printf("%s\n", output ? output : b.image_dir);
        recipe_release(&b.r);
        free(b.cache);
        free(b.mirror);
        free(b.key);
        free(b.image_dir);
        free(b.work);
        return r < 0 ? cli_fail(err) : CLI_EXIT_OK;
}

const struct cli_opt image_build_opts[] = {
        { "output", 'o', OPT_STR, DEST_LOCAL, "output", 0, 0, "DIR", "copy the image layout to DIR too" },
        { "push", 0, OPT_STR, DEST_LOCAL, "push", 0, 0, "REF", "push the image to a registry: HOST[:PORT]/NAME[:TAG]" },
        { "rebuild", 0, OPT_FLAG, DEST_LOCAL, "rebuild", 0, 0, NULL, "build again even when the cache has the image" },
        {},
};

int image_build_cmd(struct cli_call *call)
{
        return image_build_run(call);
}
