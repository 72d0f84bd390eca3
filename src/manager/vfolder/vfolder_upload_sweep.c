/* vfolder_upload_sweep.c - partial uploads nobody finishes.  Each quota
 * scope's .uploads holds one file per tus upload under way, named by the
 * upload's id (api_vfolder_transfer.c); a file that has not grown for
 * `vfolder_upload_keep` is removed, and a new token for the same upload
 * then starts it again from byte 0.  The sweep runs on the loop thread, as
 * the uploads themselves do (so no PATCH writes a file while it is judged):
 * once at start, then every SWEEP_EVERY, or every quarter of the keep when
 * that is shorter.  A keep of 0 turns it off. */
#include "common/compat.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "common/log.h"
#include "common/loop.h"
#include "common/timeutil.h"
#include "manager/core/manager.h"
#include "manager/vfolder/vfolder.h"

#define SWEEP_EVERY (3600 * USEC_PER_SEC)

/* An upload's id: the hex SHA-256 api_vfolder_transfer.c names its file by. */
static bool upload_file_name(const char *s)
{
        return strlen(s) == 64 && strspn(s, "0123456789abcdef") == 64;
}

/* Remove the partial uploads in `path` last written before `before` (usec
 * since the epoch). */
static void sweep_dir(const struct vf_host *h, const char *path, int64_t before)
{
        DIR *d = opendir(path);
        struct dirent *e;

        if (!d) {
                if (errno != ENOENT)
                        log_warn("sweeping partial uploads of storage host %s: %s: %s", h->name, path, strerror(errno));
                return;
        }
        while ((e = readdir(d)) != NULL) {
                struct stat st;
                if (!upload_file_name(e->d_name) || fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
                    !S_ISREG(st.st_mode))
                        continue;
                int64_t written = (int64_t)st.st_mtim.tv_sec * USEC_PER_SEC + st.st_mtim.tv_nsec / 1000;
                if (written >= before)
                        continue;
                if (unlinkat(dirfd(d), e->d_name, 0) < 0) {
                        log_warn("sweeping partial uploads: %s/%s: %s", path, e->d_name, strerror(errno));
                        continue;
                }
                log_info("storage host %s: removed a partial upload of %lld bytes left alone since %lld s ago", h->name,
                         (long long)st.st_size, (long long)((now_usec() - written) / USEC_PER_SEC));
        }
        closedir(d);
}

/* Every quota scope's uploads of host h (<scope>/.uploads), and the
 * host's own .uploads where uploads went before they counted in their
 * scope. */
static void sweep_host(const struct vf_host *h, int64_t before)
{
        _cleanup_free_ char *old = xasprintf("%s/" VF_UPLOADS_DIR, h->path);
        DIR *d = opendir(h->path);
        struct dirent *e;

        sweep_dir(h, old, before);
        if (!d)
                return;
        while ((e = readdir(d)) != NULL) {
                if (e->d_name[0] == '.' || !strchr(e->d_name, '-'))
                        continue;
                _cleanup_free_ char *path = xasprintf("%s/%s/" VF_UPLOADS_DIR, h->path, e->d_name);
                sweep_dir(h, path, before);
        }
        closedir(d);
}

static void on_sweep(struct loop *l, void *data)
{
        struct manager *m = data;
        int64_t keep = m->conf.vfolder_upload_keep; /* SIGHUP may change it */
        int64_t every = keep > 0 && keep / 4 < SWEEP_EVERY ? keep / 4 : SWEEP_EVERY;

        for (size_t i = 0; keep > 0 && i < m->vfolder_hosts.n; i++)
                sweep_host(&m->vfolder_hosts.v[i], now_usec() - keep);
        loop_add_timer(l, every > 0 ? every : 1, on_sweep, m);
}

void vfolder_upload_sweep_start(struct manager *m)
{
        on_sweep(m->loop, m);
        vf_clone_sweep_start(m); /* the manager's one start for folders' timers */
}
