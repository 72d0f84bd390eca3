/* vfolder_mount.c - a kernel's virtual folders as bind mounts (see
 * vfolder_mount.h). */
#include "common/compat.h"

#include <fcntl.h>
#include <sys/stat.h>

#include "common/beneath.h"
#include "common/vfolder_hosts.h"
#include "agent/vfolder_mount.h"

int vfolder_host_path(const char *spec, const char *name, char *buf, size_t n, struct tess_error **err)
{
        struct vf_hosts hosts;
        int r = vf_hosts_parse(spec, &hosts, err);

        if (r < 0)
                return r;
        const struct vf_host *h = vf_hosts_find(&hosts, name);
        if (!h)
                r = tess_err(err, ENOENT, "storage host '%.64s' is not among this agent's vfolder_hosts", name);
        else if (snprintf(buf, n, "%s", h->path) >= (int)n)
                r = tess_err(err, EINVAL, "vfolder_hosts: the path of '%s' is too long", name);
        vf_hosts_release(&hosts);
        return r;
}

/* A relative path with nothing to clean: no "..", ".", empty component
 * or leading slash. */
static bool plain_relative(const char *path)
{
        _cleanup_free_ char *clean = NULL;

        return *path && beneath_clean(path, &clean) == 0 && streq(clean, path);
}

static const char *str(const json_t *o, const char *key)
{
        const char *s = json_string_value(json_object_get(o, key));
        return s ? s : "";
}

/* The directory of one folder, checked, as a host path in *ret. */
static int folder_source(const char *hosts_spec, const json_t *e, uint32_t uid, uint32_t gid, char **ret,
                         struct tess_error **err)
{
        const char *host = str(e, "host"), *path = str(e, "path");
        char root[4096];
        struct stat st;
        int r = vfolder_host_path(hosts_spec, host, root, sizeof(root), err);

        if (r < 0)
                return r;
        if (!plain_relative(path))
                return tess_err(err, EINVAL, "path '%.256s' is not a plain relative path", path);
        int rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (rootfd < 0)
                return tess_err(err, errno, "storage host '%s' at '%s': %s", host, root, strerror(errno));
        /* no symlink anywhere beneath the host's directory */
        int fd = beneath_open_nofollow(rootfd, path, O_RDONLY | O_DIRECTORY, 0);
        close(rootfd);
        if (fd < 0)
                return tess_err(err, -fd, "'%s/%s' is not a directory beneath storage host '%s' (%s)", root, path, host,
                                strerror(-fd));
        r = fstat(fd, &st) < 0 ? -errno : 0;
        /* made by the manager as root (mode 0750 under its umask): the
         * kernel's user gets it, or could not even read it; a read-only
         * mount stays read-only whoever owns the directory */
        if (r == 0 && st.st_uid == 0 && uid != 0 && fchown(fd, uid, gid) < 0)
                r = -errno;
        close(fd);
        if (r < 0)
                return tess_err(err, -r, "'%s/%s': %s", root, path, strerror(-r));
        *ret = xasprintf("%s/%s", root, path);
        return 0;
}

int vfolder_mounts_prepare(const char *hosts_spec, const json_t *list, uint32_t uid, uint32_t gid,
                           struct vfolder_mounts *ret, struct tess_error **err)
{
        size_t i;
        json_t *e;

        *ret = (struct vfolder_mounts){ 0 };
        if (!list)
                return 0;
        if (!json_is_array(list))
                return tess_err(err, EINVAL, "vfolder_mounts is not a list");
        ret->v = xcalloc(json_array_size(list) + 1, sizeof(*ret->v));
        json_array_foreach(list, i, e) {
                const char *name = str(e, "name"), *target = str(e, "target"), *perm = str(e, "perm");
                bool ro = streq(perm, "ro");
                char *source = NULL;
                int r = 0;

                if (!ro && !streq(perm, "rw") && !streq(perm, "wd"))
                        r = tess_err(err, EINVAL, "permission '%.8s' is not ro, rw or wd", perm);
                else if (target[0] != '/' || !plain_relative(target + 1))
                        r = tess_err(err, EINVAL, "target '%.256s' is not a plain absolute path", target);
                if (r >= 0)
                        r = folder_source(hosts_spec, e, uid, gid, &source, err);
                if (r < 0) {
                        vfolder_mounts_release(ret);
                        return tess_err_wrap(err, "mounting folder '%.72s'", name);
                }
                ret->v[ret->n++] = (struct container_mount){
                        .source = source,
                        .destination = xstrdup(target),
                        .readonly = ro,
                        .single = true,
                };
        }
        return 0;
}

void vfolder_mounts_release(struct vfolder_mounts *m)
{
        for (size_t i = 0; i < m->n; i++) {
                free((char *)m->v[i].source);
                free((char *)m->v[i].destination);
        }
        free(m->v);
        *m = (struct vfolder_mounts){ 0 };
}
