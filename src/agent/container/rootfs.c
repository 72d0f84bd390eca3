/* rootfs.c - see rootfs.h. */
#include "common/compat.h"

#include <grp.h>
#include <libgen.h>
#include <linux/capability.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "agent/container/proc.h"
#include "agent/container/rootfs.h"
#include "agent/container/userns.h"

/* mount(2) takes at most a page of options */
#define OPTIONS_MAX 4095

static bool path_ok(const char *p)
{
        return p && *p && !strpbrk(p, ":,");
}

int rootfs_overlay_options(const char *const *layers, const char *upper, const char *work, const char *rel_base,
                           struct buf *out, struct tess_error **err)
{
        size_t n = 0, base_len = rel_base ? strlen(rel_base) : 0;

        while (layers && layers[n])
                n++;
        if (n == 0)
                return tess_err(err, EINVAL, "an image needs at least one layer");
        if (!path_ok(upper) || !path_ok(work))
                return tess_err(err, EINVAL, "overlay dirs may not hold ':' or ','");
        buf_puts(out, "lowerdir=");
        for (size_t i = n; i-- > 0;) {
                const char *l = layers[i];
                if (!path_ok(l))
                        return tess_err(err, EINVAL, "layer '%s': a path may not hold ':' or ','", l ? l : "");
                if (rel_base) {
                        if (strncmp(l, rel_base, base_len) != 0 || l[base_len] != '/')
                                return tess_err(err, EINVAL, "layer '%s' is not under '%s'", l, rel_base);
                        l += base_len + 1;
                }
                buf_printf(out, "%s%s", i == n - 1 ? "" : ":", l);
        }
        buf_printf(out, ",upperdir=%s,workdir=%s", upper, work);
        return 0;
}

/* The deepest directory every layer is under ("/" at worst); caller frees. */
static char *common_dir(const char *const *layers)
{
        _cleanup_free_ char *first = xstrdup(layers[0]);
        char *base = xstrdup(dirname(first));

        for (;;) {
                size_t len = strlen(base);
                bool all = true;
                for (const char *const *l = layers; *l && all; l++)
                        all = strncmp(*l, base, len) == 0 && ((*l)[len] == '/' || len == 1);
                if (all || len <= 1)
                        return base;
                char *up = xstrdup(dirname(base));
                free(base);
                base = up;
        }
}

struct relative_mount {
        const char *base, *target, *opts; /* base NULL: paths are absolute */
        uid_t as;                         /* 0: as we are */
};

/* Become host uid and gid `as` keeping our capabilities: the overlay's
 * mounter, whose credentials it writes its work dir with, must be an id
 * the idmapped upper dir maps (the namespace's root), not host root. */
static int become(uid_t as)
{
        struct __user_cap_header_struct head = { .version = _LINUX_CAPABILITY_VERSION_3 };
        struct __user_cap_data_struct data[2];

        if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0 || setgroups(0, NULL) < 0 || setresgid(as, as, as) < 0 ||
            setresuid(as, as, as) < 0 || syscall(SYS_capget, &head, data) < 0)
                return -1;
        data[0].effective = data[0].permitted;
        data[1].effective = data[1].permitted;
        return (int)syscall(SYS_capset, &head, data);
}

/* In a child: as `as`, the layers in opts relative to base. */
static int mount_in(void *arg)
{
        const struct relative_mount *m = arg;
        if ((m->as && become(m->as) < 0) || (m->base && chdir(m->base) < 0) ||
            mount("overlay", m->target, "overlay", 0, m->opts) < 0)
                return errno;
        return 0;
}

int rootfs_mount(const char *const *layers, const char *upper, const char *work, const char *target,
                 struct tess_error **err)
{
        _cleanup_(buf_release) struct buf opts = BUF_INIT;
        _cleanup_free_ char *base = NULL;
        int r;

        r = rootfs_overlay_options(layers, upper, work, NULL, &opts, err);
        if (r < 0)
                return r;
        if (opts.len <= OPTIONS_MAX) {
                if (mount("overlay", target, "overlay", 0, opts.data) < 0)
                        return tess_err(err, errno, "mounting the overlay on '%s': %s", target, strerror(errno));
                return 0;
        }
        base = common_dir(layers);
        buf_reset(&opts);
        r = rootfs_overlay_options(layers, upper, work, streq(base, "/") ? NULL : base, &opts, err);
        if (r < 0)
                return r;
        if (opts.len > OPTIONS_MAX)
                return tess_err(err, E2BIG, "too many layers for one overlay mount (%zu bytes of options)", opts.len);
        struct relative_mount m = { .base = base, .target = target, .opts = opts.data };
        r = proc_in_child(mount_in, &m);
        if (r < 0)
                return tess_err(err, -r, "mounting the overlay on '%s' (layers under '%s'): %s", target, base,
                                strerror(-r));
        return 0;
}

/* layers[i] under stage (a mount of base): caller frees each and the array. */
static char **layers_under(const char *const *layers, const char *base, const char *stage)
{
        size_t n = 0, skip = streq(base, "/") ? 0 : strlen(base);

        while (layers[n])
                n++;
        char **v = xcalloc(n + 1, sizeof(*v));
        for (size_t i = 0; i < n; i++)
                v[i] = xasprintf("%s%s", stage, layers[i] + skip);
        return v;
}

static void detach(const char *path)
{
        umount2(path, MNT_DETACH | UMOUNT_NOFOLLOW);
        rmdir(path);
}

int rootfs_mount_idmapped(const char *const *layers, const char *dir, const char *target, const char *stage,
                          int userns_fd, uid_t root, struct tess_error **err)
{
        _cleanup_free_ char *base = NULL, *lower = xasprintf("%s/lower", stage), *rw = xasprintf("%s/rw", stage);
        _cleanup_free_ char *upper = xasprintf("%s/upper", rw), *work = xasprintf("%s/work", rw);
        _cleanup_(buf_release) struct buf opts = BUF_INIT;
        char **mapped = NULL;
        int r;

        if (!layers || !layers[0])
                return tess_err(err, EINVAL, "an image needs at least one layer");
        base = common_dir(layers);
        r = userns_idmap_clone(base, lower, userns_fd, false, err);
        if (r >= 0)
                r = userns_idmap_clone(dir, rw, userns_fd, false, err);
        if (r < 0)
                goto out;
        mapped = layers_under(layers, base, lower);
        struct relative_mount m = { .target = target, .as = root };
        r = rootfs_overlay_options((const char *const *)mapped, upper, work, NULL, &opts, err);
        if (r >= 0 && opts.len > OPTIONS_MAX) {
                buf_reset(&opts);
                m.base = lower;
                r = rootfs_overlay_options((const char *const *)mapped, upper, work, lower, &opts, err);
                if (r >= 0 && opts.len > OPTIONS_MAX)
                        r = tess_err(err, E2BIG, "too many layers for one overlay mount (%zu bytes of options)",
                                     opts.len);
        }
        if (r < 0)
                goto out;
        m.opts = opts.data;
        r = proc_in_child(mount_in, &m);
        if (r < 0)
                r = tess_err(err, -r, "mounting the overlay on '%s' as uid %u (idmapped layers under '%s'): %s",
                             target, (unsigned)root, base, strerror(-r));
out:
        /* the overlay holds its own references to its layers */
        detach(lower);
        detach(rw);
        for (char **l = mapped; l && *l; l++)
                free(*l);
        free(mapped);
        return r;
}

bool rootfs_is_mounted(const char *target)
{
        _cleanup_free_ char *parent = xasprintf("%s/..", target);
        struct stat a, b;

        return stat(target, &a) == 0 && stat(parent, &b) == 0 && a.st_dev != b.st_dev;
}

int rootfs_umount(const char *target, struct tess_error **err)
{
        if (umount2(target, 0) == 0 || errno == EINVAL || errno == ENOENT)
                return 0;
        if (errno == EBUSY && umount2(target, MNT_DETACH) == 0)
                return 0;
        return tess_err(err, errno, "unmounting '%s': %s", target, strerror(errno));
}
