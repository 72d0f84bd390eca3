/* vfolder_quota.c - usage and quotas of virtual folders (vfolder.h,
 * docs/design/vfolders.md "Usage and quotas"):
 *
 *   GET /folders/_/usage?folder_name=       a folder's bytes and files (ro)
 *   GET /folders/_/quota?folder_name= | ?group_id= [&host=]
 *                                           its quota scope's limit and use
 *
 * Usage is allocated bytes (st_blocks * 512: what a filesystem quota
 * counts, sparse files at what they hold), each inode once, found by a
 * bounded walk with openat/fstatat that never follows a symlink.  A quota
 * scope is an owner (user or project) on one host: the directory
 * <host path>/<user|project>-<owner uuid>/ holds all its folders, ready and
 * trashed, so its use is that directory's walk.  The limit is the owner's
 * max_quota_scope_size (0: none): the keypair policy of a user (the caller's
 * own keypair when it asks about itself, else the user's main keypair's), a
 * project's own column.
 *
 * Enforcement: vf_quota_check() refuses what would go past the limit
 * (request-upload calls it; a clone measures its room off the loop, with
 * vf_quota_limit() and a walk of its own).  Where the host is XFS mounted
 * with prjquota, vf_quota_prepare() also gives the scope directory an XFS
 * project id (kept on the directory itself: FS_XFLAG_PROJINHERIT and
 * fsx_projid) and sets the project's hard block limit, so that sessions
 * writing into a mounted folder stop at the limit too; the check re-applies
 * a limit an admin changed.  Elsewhere it is accounting only.
 *
 * Scope walks are cached for a few seconds (SCOPE_TTL_USEC) so that checks
 * on scopes of many files stay cheap; what a check lets through is added to
 * the cached use until the next walk, and a check that would refuse walks
 * again first, so a deletion frees room at once. */
#include "common/compat.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/dqblk_xfs.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <sys/quota.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>

#include "common/disk_usage.h"
#include "common/log.h"
#include "common/timeutil.h"
#include "manager/core/manager.h"
#include "manager/db/db.h"
#include "manager/http/http.h"
#include "manager/vfolder/api_vfolder.h"
#include "manager/vfolder/vfolder.h"

#ifndef PRJQUOTA
#define PRJQUOTA 2
#endif
#ifndef XFS_SUPER_MAGIC
#define XFS_SUPER_MAGIC 0x58465342
#endif

#define SCOPE_TTL_USEC   (3 * 1000000) /* a scope's cached use */
#define SCOPE_CACHE_N    32
#define PROJID_MIN       65536u /* below: left to admins (/etc/projid) */

/* ---- the walk (common/disk_usage.c) ---- */

static int walk_path(const char *path, struct disk_usage_walk *w, struct tess_error **err)
{
        int r = disk_usage_walk_path(path, w, err);

        if (w->truncated)
                log_warn("usage of '%s': stopped counting at %d entries", path, DISK_USAGE_MAX_ENTRIES);
        disk_usage_walk_release(w);
        return r;
}

int vf_usage_dir(const char *path, struct vf_usage *ret, struct tess_error **err)
{
        struct disk_usage_walk w = { 0 };
        int r = walk_path(path, &w, err);

        *ret = r < 0 ? (struct vf_usage){ 0 } : (struct vf_usage){ .bytes = w.bytes, .files = w.files };
        return r;
}

int vf_usage_of(const struct vfolder *f, struct vf_usage *ret, struct tess_error **err)
{
        return vf_usage_dir(f->path, ret, err);
}

/* ---- scopes ---- */

struct scope {
        char type[8];
        char owner[37];
        char dir[PATH_MAX]; /* "" when the host is not configured here */
};

static void scope_of(struct manager *m, const char *type, const char *owner, const char *host, struct scope *s)
{
        const struct vf_host *h = vf_hosts_find(&m->vfolder_hosts, host);
        char rel[64];

        snprintf(s->type, sizeof(s->type), "%s", type);
        snprintf(s->owner, sizeof(s->owner), "%s", owner);
        vf_scope_dir(type, owner, rel, sizeof(rel));
        if (h)
                snprintf(s->dir, sizeof(s->dir), "%s/%s", h->path, rel);
        else
                s->dir[0] = '\0';
}

struct cached {
        char dir[PATH_MAX];
        bool used;
        int64_t touched;   /* monotonic: the least recent goes first */
        int64_t walked_at; /* monotonic; 0: not walked */
        struct vf_usage u;
        int64_t charged;       /* let through by checks since the walk */
        int64_t applied_limit; /* the XFS limit set last (-1: none) */
        uint32_t projid;
};

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cached cache[SCOPE_CACHE_N];

/* The slot of `dir`, or the least recently used one, reset for dir.
 * Under cache_lock. */
static struct cached *cache_slot(const char *dir)
{
        struct cached *old = &cache[0];
        int64_t now = monotonic_usec();

        for (int i = 0; i < SCOPE_CACHE_N; i++) {
                if (cache[i].used && streq(cache[i].dir, dir)) {
                        cache[i].touched = now;
                        return &cache[i];
                }
                if (!cache[i].used || (old->used && cache[i].touched < old->touched))
                        old = &cache[i];
        }
        *old = (struct cached){ .used = true, .touched = now, .applied_limit = -1 };
        snprintf(old->dir, sizeof(old->dir), "%s", dir);
        return old;
}

/* A scope's use: cached when `fresh` is false and the walk is recent. */
static int scope_usage(const struct scope *s, bool fresh, struct vf_usage *ret, struct tess_error **err)
{
        int64_t now = monotonic_usec();
        struct vf_usage u;

        if (!fresh) {
                pthread_mutex_lock(&cache_lock);
                struct cached *c = cache_slot(s->dir);
                bool hit = c->walked_at && now - c->walked_at < SCOPE_TTL_USEC;
                if (hit) {
                        *ret = c->u;
                        ret->bytes += c->charged;
                }
                pthread_mutex_unlock(&cache_lock);
                if (hit)
                        return 0;
        }
        int r = vf_usage_dir(s->dir, &u, err);
        if (r < 0)
                return r;
        pthread_mutex_lock(&cache_lock);
        struct cached *c = cache_slot(s->dir);
        c->walked_at = now ? now : 1;
        c->u = u;
        c->charged = 0;
        pthread_mutex_unlock(&cache_lock);
        *ret = u;
        return 0;
}

static void scope_charge(const struct scope *s, int64_t bytes)
{
        pthread_mutex_lock(&cache_lock);
        struct cached *c = cache_slot(s->dir);
        if (c->walked_at)
                c->charged += bytes;
        pthread_mutex_unlock(&cache_lock);
}

/* max_quota_scope_size of the scope's owner (0: unlimited).  policy: the
 * keypair policy to read for a user, or NULL for its main keypair's. */
static int scope_limit(struct manager *m, const struct scope *s, const char *policy, int64_t *ret,
                       struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        int r;

        *ret = 0;
        if (streq(s->type, "project"))
                r = DBQ(m->db, "SELECT max_quota_scope_size AS lim FROM projects WHERE id = ?", &rows, err,
                        DB_TEXT(s->owner));
        else if (policy)
                r = DBQ(m->db, "SELECT max_quota_scope_size AS lim FROM keypair_resource_policies WHERE name = ?",
                        &rows, err, DB_TEXT(policy));
        else
                r = DBQ(m->db,
                        "SELECT p.max_quota_scope_size AS lim FROM keypairs k"
                        " JOIN keypair_resource_policies p ON p.name = k.resource_policy WHERE k.user_id = ?"
                        " ORDER BY k.is_main DESC, k.is_active DESC, k.created_at LIMIT 1",
                        &rows, err, DB_TEXT(s->owner));
        if (r < 0)
                return r;
        if (rows->nrows > 0 && db_getn(rows, 0, "lim"))
                *ret = db_get_int(rows, 0, "lim");
        if (*ret < 0)
                *ret = 0;
        return 0;
}

/* ---- XFS project quotas ---- */

/* The block device of the filesystem holding `fd` (from mountinfo). */
static int device_of(int fd, char *buf, size_t n)
{
        struct stat st;
        char want[32], line[4096];
        FILE *f;
        int found = -ENOENT;

        if (fstat(fd, &st) < 0)
                return -errno;
        snprintf(want, sizeof(want), "%u:%u", major(st.st_dev), minor(st.st_dev));
        f = fopen("/proc/self/mountinfo", "re");
        if (!f)
                return -errno;
        while (fgets(line, sizeof(line), f)) {
                char *save = NULL, *tok = strtok_r(line, " ", &save);
                for (int field = 1; tok && field < 3; field++)
                        tok = strtok_r(NULL, " ", &save);
                if (!tok || !streq(tok, want))
                        continue;
                char *sep = strstr(save, " - ");
                if (!sep)
                        continue;
                char *fstype = strtok_r(sep + 3, " ", &save), *source = fstype ? strtok_r(NULL, " ", &save) : NULL;
                if (source && source[0] == '/') {
                        snprintf(buf, n, "%s", source);
                        found = 0;
                }
        }
        fclose(f);
        return found;
}

/* Does the filesystem under `fd` enforce XFS project quotas?  Fills dev. */
static bool xfs_prjquota(int fd, char *dev, size_t n)
{
        struct statfs sf;
        struct fs_quota_stat qs = { 0 };

        if (fstatfs(fd, &sf) < 0 || sf.f_type != XFS_SUPER_MAGIC || device_of(fd, dev, n) < 0)
                return false;
        if (quotactl(QCMD(Q_XGETQSTAT, PRJQUOTA), dev, 0, (caddr_t)&qs) < 0)
                return false;
        return (qs.qs_flags & FS_QUOTA_PDQ_ACCT) && (qs.qs_flags & FS_QUOTA_PDQ_ENFD);
}

static int get_projid(int dirfd, const char *name, uint32_t *ret, bool *inherit)
{
        struct fsxattr fx;
        int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);

        if (fd < 0)
                return -errno;
        int r = ioctl(fd, FS_IOC_FSGETXATTR, &fx) < 0 ? -errno : 0;
        close(fd);
        if (r == 0) {
                *ret = fx.fsx_projid;
                if (inherit)
                        *inherit = fx.fsx_xflags & FS_XFLAG_PROJINHERIT;
        }
        return r;
}

static int set_projid(int dirfd, const char *name, uint32_t projid, bool dir)
{
        struct fsxattr fx;
        int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
        int r = 0;

        if (fd < 0)
                return -errno;
        if (ioctl(fd, FS_IOC_FSGETXATTR, &fx) < 0) {
                r = -errno;
        } else {
                fx.fsx_projid = projid;
                if (dir)
                        fx.fsx_xflags |= FS_XFLAG_PROJINHERIT;
                if (ioctl(fd, FS_IOC_FSSETXATTR, &fx) < 0)
                        r = -errno;
        }
        close(fd);
        return r;
}

static void retag(int dirfd, const char *name, const struct stat *st, void *arg)
{
        set_projid(dirfd, name, *(uint32_t *)arg, S_ISDIR(st->st_mode));
}

/* A project id for the scope directory `name` under the host directory
 * `hostfd`: a hash of the name, moved on past ids other scopes there use. */
static uint32_t pick_projid(int hostfd, const char *name)
{
        uint32_t h = 2166136261u;
        for (const char *p = name; *p; p++)
                h = (h ^ (uint8_t)*p) * 16777619u;
        h = PROJID_MIN + h % (0x7fffffffu - PROJID_MIN);
        for (int tries = 0; tries < 64; tries++, h = h + 1 < 0x7fffffffu ? h + 1 : PROJID_MIN) {
                int fd = dup(hostfd);
                DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
                struct dirent *e;
                bool taken = false;
                if (!d) {
                        if (fd >= 0)
                                close(fd);
                        return h;
                }
                rewinddir(d);
                while (!taken && (e = readdir(d))) {
                        uint32_t other;
                        if (e->d_name[0] != '.' && !streq(e->d_name, name) &&
                            get_projid(dirfd(d), e->d_name, &other, NULL) == 0 && other == h)
                                taken = true;
                }
                closedir(d);
                if (!taken)
                        return h;
        }
        return h;
}

/* Put the scope directory under an XFS project quota of `limit` bytes (0:
 * none), where its filesystem enforces them; nothing elsewhere. */
static int quota_apply(const struct scope *s, int64_t limit, struct tess_error **err)
{
        char hostdir[PATH_MAX], dev[PATH_MAX];
        const char *name;
        uint32_t projid = 0;
        bool inherit = false;

        if (!s->dir[0])
                return 0;
        snprintf(hostdir, sizeof(hostdir), "%s", s->dir);
        char *slash = strrchr(hostdir, '/');
        if (!slash)
                return 0;
        *slash = '\0';
        name = slash + 1;
        _cleanup_close_ int hostfd = open(hostdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (hostfd < 0 || !xfs_prjquota(hostfd, dev, sizeof(dev)))
                return 0; /* accounting only */

        pthread_mutex_lock(&cache_lock);
        struct cached *c = cache_slot(s->dir);
        bool done = c->applied_limit == limit && c->projid;
        pthread_mutex_unlock(&cache_lock);
        if (done)
                return 0;

        int r = get_projid(hostfd, name, &projid, &inherit);
        if (r < 0)
                return tess_err(err, -r, "reading the project id of '%s': %s", s->dir, strerror(-r));
        if (!projid || !inherit) {
                struct disk_usage_walk w = { .visit = retag, .arg = &projid };
                struct tess_error *werr = NULL;
                if (!projid)
                        projid = pick_projid(hostfd, name);
                r = set_projid(hostfd, name, projid, true);
                if (r < 0)
                        return tess_err(err, -r, "setting XFS project id %u on '%s': %s", projid, s->dir, strerror(-r));
                /* what is there already joins the project too */
                if (walk_path(s->dir, &w, &werr) < 0)
                        tess_error_free(werr);
                log_info("vfolder quota scope %s:%s is XFS project %u on %s", s->type, s->owner, projid, dev);
        }
        struct fs_disk_quota q = {
                .d_version = FS_DQUOT_VERSION,
                .d_flags = FS_PROJ_QUOTA,
                .d_fieldmask = FS_DQ_BHARD | FS_DQ_BSOFT,
                .d_id = projid,
                .d_blk_hardlimit = (uint64_t)(limit + 511) / 512, /* basic blocks */
                .d_blk_softlimit = 0,
        };
        if (quotactl(QCMD(Q_XSETQLIM, PRJQUOTA), dev, (int)projid, (caddr_t)&q) < 0)
                return tess_err(err, errno, "setting the XFS quota of project %u on %s: %s", projid, dev,
                                strerror(errno));
        pthread_mutex_lock(&cache_lock);
        c = cache_slot(s->dir);
        c->applied_limit = limit;
        c->projid = projid;
        pthread_mutex_unlock(&cache_lock);
        return 0;
}

int vf_quota_prepare(struct manager *m, const struct vfolder *f, struct tess_error **err)
{
        struct scope s;
        int64_t limit;
        int r;

        scope_of(m, f->ownership_type, f->owner_id, f->host, &s);
        r = scope_limit(m, &s, NULL, &limit, err);
        if (r >= 0)
                r = quota_apply(&s, limit, err);
        return r;
}

int vf_quota_check(struct manager *m, const struct vfolder *f, int64_t add_bytes, struct tess_error **err)
{
        struct tess_error *qerr = NULL;
        struct vf_usage u;
        struct scope s;
        int64_t limit;
        int r;

        scope_of(m, f->ownership_type, f->owner_id, f->host, &s);
        r = scope_limit(m, &s, NULL, &limit, err);
        if (r < 0)
                return r;
        /* an admin's new limit reaches the filesystem here at the latest */
        if (quota_apply(&s, limit, &qerr) < 0) {
                log_warn("vfolder %s: %s", f->id, qerr->msg);
                tess_error_free(qerr);
        }
        if (limit == 0)
                return 0;
        if (add_bytes < 0)
                add_bytes = 0;
        r = scope_usage(&s, false, &u, err);
        if (r >= 0 && u.bytes + add_bytes > limit) /* sure?  walk again */
                r = scope_usage(&s, true, &u, err);
        if (r < 0)
                return r;
        if (u.bytes + add_bytes > limit)
                return tess_err(err, EDQUOT,
                                "quota scope %s:%s on host '%s' is limited to %lld bytes and uses %lld: %lld more "
                                "do not fit",
                                s.type, s.owner, f->host, (long long)limit, (long long)u.bytes, (long long)add_bytes);
        scope_charge(&s, add_bytes);
        return 0;
}

int vf_quota_limit(struct manager *m, const struct vfolder *f, int64_t *ret_limit, char *scope_dir, size_t n,
                   struct tess_error **err)
{
        struct scope s;

        scope_of(m, f->ownership_type, f->owner_id, f->host, &s);
        snprintf(scope_dir, n, "%s", s.dir);
        return scope_limit(m, &s, NULL, ret_limit, err);
}

void vf_quota_charge(struct manager *m, const struct vfolder *f, int64_t bytes)
{
        struct scope s;

        scope_of(m, f->ownership_type, f->owner_id, f->host, &s);
        scope_charge(&s, bytes > 0 ? bytes : 0);
}

/* ---- routes ---- */

static const char *query_any(struct api_ctx *c, const char *const *names)
{
        for (; *names; names++) {
                const char *v = http_query(c->req, *names);
                if (v && *v)
                        return v;
        }
        return NULL;
}

void api_vfolder_usage(struct api_ctx *c)
{
        struct tess_error *err = NULL;
        const char *ref = query_any(c, NAMES("folder_name", "vfolder_id", "id", "name"));
        struct vfolder f;
        struct vf_usage u;

        if (!ref) {
                api_problem(c, 400, "invalid-api-params", "'folder_name' (a folder's name or id) is required");
                return;
        }
        if (vf_find(c, ref, VF_STATUS_READY, VF_PERM_RO, &f, &err) < 0 || vf_usage_of(&f, &u, &err) < 0) {
                api_fail(c, err);
                return;
        }
        api_json(c, 200,
                 json_pack("{s:s, s:s, s:I, s:I}", "id", f.id, "name", f.name, "used_bytes", (json_int_t)u.bytes,
                           "file_count", (json_int_t)u.files));
}

/* The project `ref` (id or name) if the caller may see its scope. */
static int quota_project(struct api_ctx *c, const char *ref, char id[37], struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        int r = DBQ(c->m->db,
                    "SELECT id, domain_name, (SELECT 1 FROM project_members pm WHERE pm.project_id = projects.id"
                    " AND pm.user_id = ?) AS member FROM projects WHERE id = ? OR (name = ? AND domain_name = ?)",
                    &rows, err, DB_TEXT(c->who.user_id), DB_TEXT(ref), DB_TEXT(ref), DB_TEXT(c->who.domain));
        if (r < 0)
                return r;
        bool ok = rows->nrows == 1 && (api_is_superadmin(c) || db_getn(rows, 0, "member") ||
                                       ((c->who.role == ROLE_ADMIN || c->who.role == ROLE_MONITOR) &&
                                        streq(db_getn(rows, 0, "domain_name"), c->who.domain)));
        if (!ok)
                return tess_err(err, ENOENT, "no project '%.64s' of yours", ref);
        snprintf(id, 37, "%s", db_getn(rows, 0, "id"));
        return 0;
}

void api_vfolder_quota(struct api_ctx *c)
{
        struct tess_error *err = NULL;
        const char *ref = query_any(c, NAMES("folder_name", "vfolder_id", "id")),
                   *group = query_any(c, NAMES("group_id", "group", "project")), *host = query_any(c, NAMES("host"));
        const char *policy = NULL;
        char project[37];
        struct vfolder f;
        struct scope s;
        struct vf_usage u;
        int64_t limit;
        int r = 0;

        if (ref) {
                r = vf_find(c, ref, VF_STATUS_READY, VF_PERM_RO, &f, &err);
                if (r >= 0)
                        scope_of(c->m, f.ownership_type, f.owner_id, f.host, &s);
                host = f.host;
        } else {
                if (!host)
                        host = c->m->conf.vfolder_default_host;
                if (!vf_hosts_find(&c->m->vfolder_hosts, host))
                        r = tess_err(&err, EINVAL, "'host': no storage host '%.64s'", host);
                if (r >= 0 && group)
                        r = quota_project(c, group, project, &err);
                if (r >= 0)
                        scope_of(c->m, group ? "project" : "user", group ? project : c->who.user_id, host, &s);
        }
        if (r >= 0 && streq(s.type, "user") && streq(s.owner, c->who.user_id))
                policy = c->who.resource_policy;
        if (r >= 0)
                r = scope_limit(c->m, &s, policy, &limit, &err);
        if (r >= 0)
                r = scope_usage(&s, true, &u, &err);
        if (r < 0) {
                api_fail(c, err);
                return;
        }
        char id[56];
        snprintf(id, sizeof(id), "%s:%s", s.type, s.owner);
        api_json(c, 200,
                 json_pack("{s:s, s:s, s:I, s:I, s:I}", "quota_scope_id", id, "host", host, "limit_bytes",
                           (json_int_t)limit, "used_bytes", (json_int_t)u.bytes, "file_count", (json_int_t)u.files));
}
