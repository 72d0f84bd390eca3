/* rootfs.c - see rootfs.h. */
#include "common/compat.h"

#include <libgen.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "agent/container/proc.h"
#include "agent/container/rootfs.h"

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
        const char *base, *target, *opts;
};

/* In a child: the layers in opts are relative to base. */
static int mount_in(void *arg)
{
        const struct relative_mount *m = arg;
        if (chdir(m->base) < 0 || mount("overlay", m->target, "overlay", 0, m->opts) < 0)
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
        struct relative_mount m = { base, target, opts.data };
        r = proc_in_child(mount_in, &m);
        if (r < 0)
                return tess_err(err, -r, "mounting the overlay on '%s' (layers under '%s'): %s", target, base,
                                strerror(-r));
        return 0;
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
