/* api_vfolder_clone.c - folder clones, as Backend.AI's SDK 22.03 and CLI
 * use them:
 *
 *   POST /folders/{name}/clone {target_name, target_host?, usage_mode?,
 *                               permission?, cloneable?}
 *
 * The caller must be able to read the source (vf_find, ro: a 404 for a
 * folder it may not use) and the source must be cloneable (update-options
 * {cloneable: true}); as in Backend.AI that holds for its owner too (403).
 * The clone is a new user folder of the caller made as POST /folders makes
 * one (vf_new_create: name rules, the host and its create-vfolder,
 * max_vfolder_count, the name free: 400, 403, 412, 409) on target_host, or
 * the source's host, in status `cloning`: listed, but used by nothing.
 * The answer (201, at once) is its info with `bgtask_id`, the background
 * task (kind vfolder-clone) whose worker thread copies the files
 * (vfolder_copy.h: never following a symlink, holes kept) and reports its
 * progress in bytes; clients follow it with GET /background-tasks/{id} or
 * GET /events/background-task?taskId=, as Backend.AI's CLI does.
 *
 * Quota: the task first measures the source and the target's quota scope
 * (walks, on its thread) and fails at once when the copy does not fit;
 * the copy then stops past the room the scope had (the source may grow
 * meanwhile).  Where the host's filesystem enforces quotas, its EDQUOT
 * ends the copy too.
 *
 * The end: when the copy is done the folder becomes ready, then the task
 * is done.  When it fails, what was copied is removed (on the thread),
 * then the folder's row, then the task fails with the reason as its
 * message: no half copy is ever a ready folder.  A manager that stops
 * mid-copy leaves a task whose lease runs out: any manager's sweep
 * (every task_lease / 4) fails it and removes each `cloning` folder whose
 * task is no longer ongoing. */
#include "common/compat.h"

#include <fcntl.h>
#include <limits.h>

#include "common/log.h"
#include "common/loop.h"
#include "common/timeutil.h"
#include "manager/core/manager.h"
#include "manager/core/worker.h"
#include "manager/db/db.h"
#include "manager/tasks/bgtask.h"
#include "manager/vfolder/api_vfolder.h"
#include "manager/vfolder/vfolder.h"
#include "manager/vfolder/vfolder_copy.h"
#include "manager/vfolder/vfolder_fs.h"

#define CLONE_KIND    "vfolder-clone"
#define PROGRESS_USEC (250 * 1000)

struct clone {
        struct clone *next; /* the clones this manager runs */
        char task_id[UUID_STR_LEN];
        struct vfolder src, dst;  /* not changed once the thread runs */
        char scope_dir[PATH_MAX]; /* the target's quota scope */
        int64_t limit;            /* its limit (0: none) */
        /* the thread's; read on the loop once it is done */
        struct worker *w;
        int64_t total; /* allocated bytes of the source */
        int64_t last_post;
        struct vf_copy copy;
        int r;
        struct tess_error *err;
};

struct progress_msg {
        int64_t done, total, files;
};

static struct clone *running;

static void clone_free(struct clone *j)
{
        struct clone **p = &running;

        while (*p && *p != j)
                p = &(*p)->next;
        if (*p)
                *p = j->next;
        tess_error_free(j->err);
        free(j);
}

/* Remove a folder that is still being cloned: its row, then its files.
 * A row another manager removed already is fine. */
static void drop_folder(struct manager *m, const struct vfolder *f)
{
        struct tess_error *err = NULL;
        int r = DBQ(m->db, "DELETE FROM vfolders WHERE id = ? AND status = ?", NULL, &err, DB_TEXT(f->id),
                    DB_TEXT(VF_STATUS_CLONING));

        if (r < 0) {
                log_warn("vfolder %s: removing the unfinished clone: %s; the sweep tries again", f->id, err->msg);
                tess_error_free(err);
                return;
        }
        if (f->path[0] && vf_remove_dir(f->path, &err) < 0) {
                log_warn("vfolder %s: an unfinished clone's files stay: %s", f->id, err ? err->msg : "?");
                tess_error_free(err);
        }
}

static void finish_task(struct manager *m, const struct clone *j, const char *status, const char *message)
{
        struct tess_error *err = NULL;
        json_t *result = json_pack("{s:s, s:s, s:s, s:s, s:I, s:I, s:I}", "vfolder_id", j->dst.id, "name", j->dst.name,
                                   "host", j->dst.host, "source_id", j->src.id, "files", (json_int_t)j->copy.files,
                                   "bytes", (json_int_t)j->copy.bytes, "skipped", (json_int_t)j->copy.skipped);

        if (bgtask_finish(m, j->task_id, status, message, result, &err) < 0) {
                log_warn("task=%s: finishing: %s, ignoring", j->task_id, err->msg);
                tess_error_free(err);
        }
        json_decref(result);
}

/* ---- the thread ---- */

static void on_progress(struct manager *m, void *data, void *msg)
{
        struct clone *j = data;
        struct progress_msg *p = msg;
        struct tess_error *err = NULL;
        int64_t done = p->done < p->total ? p->done : p->total;
        _cleanup_free_ char *text = xasprintf("copied %lld of %lld bytes, %lld files", (long long)done,
                                              (long long)p->total, (long long)p->files);

        if (bgtask_update(m, j->task_id, done, p->total, text, &err) < 0) {
                log_debug("task=%s: progress: %s", j->task_id, err->msg);
                tess_error_free(err);
        }
        free(p);
}

static void post_progress(const struct vf_copy *cp, void *arg)
{
        struct clone *j = arg;
        int64_t now = monotonic_usec();

        if (now - j->last_post < PROGRESS_USEC)
                return;
        j->last_post = now;
        struct progress_msg *p = xmalloc(sizeof(*p));
        *p = (struct progress_msg){ cp->bytes + cp->current, j->total, cp->files };
        worker_post(j->w, on_progress, p);
}

/* The source's size and the room the target's quota scope has for it. */
static int measure(struct clone *j, struct tess_error **err)
{
        struct vf_usage need, used = { 0 };
        int r = vf_usage_dir(j->src.path, &need, err);

        if (r >= 0 && j->limit > 0)
                r = vf_usage_dir(j->scope_dir, &used, err);
        if (r < 0)
                return r;
        j->total = need.bytes;
        j->copy.budget = j->limit > 0 ? j->limit - used.bytes : INT64_MAX;
        if (need.bytes > j->copy.budget)
                return tess_err(err, EDQUOT,
                                "quota scope %s:%s on host '%s' is limited to %lld bytes and uses %lld: the %lld "
                                "bytes of folder '%s' do not fit",
                                j->dst.ownership_type, j->dst.owner_id, j->dst.host, (long long)j->limit,
                                (long long)used.bytes, (long long)need.bytes, j->src.name);
        return 0;
}

static int copy_files(struct clone *j, struct tess_error **err)
{
        int r = measure(j, err);
        if (r < 0)
                return r;
        _cleanup_close_ int src = vf_root_open(&j->src, err);
        if (src < 0)
                return src;
        _cleanup_close_ int dst = vf_root_open(&j->dst, err);
        if (dst < 0)
                return dst;
        return vf_copy_tree(src, dst, &j->copy, err);
}

/* What a failed copy made goes here, off the loop: the folder's own
 * directory and all below it (the spreading levels above are the loop's). */
static void remove_copy(const struct vfolder *f)
{
        char parent[PATH_MAX];
        char *slash;

        snprintf(parent, sizeof(parent), "%s", f->path);
        slash = strrchr(parent, '/');
        if (!slash)
                return;
        *slash = '\0';
        _cleanup_close_ int fd = open(parent, O_PATH | O_DIRECTORY | O_CLOEXEC);
        int r = fd < 0 ? -errno : vf_remove_tree_at(fd, slash + 1);
        if (r < 0 && r != -ENOENT)
                log_warn("vfolder %s: removing a failed clone's copy: %s", f->id, strerror(-r));
}

static void clone_work(struct worker *w, void *data)
{
        struct clone *j = data;

        j->w = w;
        j->copy.progress = post_progress;
        j->copy.arg = j;
        j->r = copy_files(j, &j->err);
        if (j->r < 0)
                remove_copy(&j->dst);
}

/* ---- the end, on the loop ---- */

static int mark_ready(struct manager *m, const struct clone *j, struct tess_error **err)
{
        int r = DBQ(m->db, "UPDATE vfolders SET status = ?, modified_at = ? WHERE id = ? AND status = ?", NULL, err,
                    DB_TEXT(VF_STATUS_READY), DB_INT(now_usec()), DB_TEXT(j->dst.id), DB_TEXT(VF_STATUS_CLONING));

        if (r == 0)
                return tess_err(err, ENOENT, "folder '%s' was removed while it was copied", j->dst.name);
        return r < 0 ? r : 0;
}

static void clone_done(struct manager *m, void *data, void *msg UNUSED)
{
        struct clone *j = data;
        struct tess_error *err = NULL;
        int r = j->r < 0 ? j->r : mark_ready(m, j, &err);

        if (r >= 0) {
                _cleanup_free_ char *text = xasprintf(
                        "cloned folder '%s' into '%s': %lld files, %lld bytes; %lld left out (fifos, sockets, "
                        "devices, other filesystems)",
                        j->src.name, j->dst.name, (long long)j->copy.files, (long long)j->copy.bytes,
                        (long long)j->copy.skipped);
                vf_quota_charge(m, &j->dst, j->copy.bytes);
                finish_task(m, j, BGTASK_DONE, text);
                log_info("task=%s vfolder=%s: %s", j->task_id, j->dst.id, text);
        } else {
                const struct tess_error *why = j->err ? j->err : err;
                const char *text = why ? why->msg : "the copy failed";
                drop_folder(m, &j->dst);
                finish_task(m, j, BGTASK_FAILED, text);
                log_info("task=%s vfolder=%s: clone failed: %s", j->task_id, j->dst.id, text);
        }
        tess_error_free(err);
        clone_free(j);
}

/* ---- leases and the sweep ---- */

/* Folders in `cloning` whose task is no longer ongoing (or which never
 * got one, for longer than a lease): their clone will never finish. */
static int sweep(struct manager *m, struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        int r = DBQ(m->db,
                    "SELECT v.id, v.host, v.ownership_type, v.owner_id FROM vfolders v WHERE v.status = ? AND"
                    " ((v.clone_task IS NULL AND v.modified_at < ?) OR (v.clone_task IS NOT NULL AND NOT EXISTS"
                    " (SELECT 1 FROM background_tasks t WHERE t.id = v.clone_task AND t.status = ?)))",
                    &rows, err, DB_TEXT(VF_STATUS_CLONING), DB_INT(now_usec() - m->conf.task_lease),
                    DB_TEXT(BGTASK_ONGOING));

        for (int i = 0; r >= 0 && i < rows->nrows; i++) {
                struct vfolder f = { 0 };
                const struct vf_host *h = vf_hosts_find(&m->vfolder_hosts, db_getn(rows, i, "host"));
                char rel[256];
                snprintf(f.id, sizeof(f.id), "%s", db_getn(rows, i, "id"));
                if (h) {
                        vf_relpath(db_getn(rows, i, "ownership_type"), db_getn(rows, i, "owner_id"), f.id, rel,
                                   sizeof(rel));
                        snprintf(f.path, sizeof(f.path), "%s/%s", h->path, rel);
                }
                log_warn("vfolder %s: its clone did not finish (its manager stopped): removing it", f.id);
                drop_folder(m, &f);
        }
        return r < 0 ? r : 0;
}

static void on_lease_timer(struct loop *l, void *data)
{
        struct manager *m = data;
        struct tess_error *err = NULL;

        for (struct clone *j = running; j; j = j->next)
                if (bgtask_touch(m, j->task_id, &err) < 0)
                        err = tess_error_free(err);
        if (bgtask_fail_stale(m, CLONE_KIND, &err) < 0 || sweep(m, &err) < 0) {
                log_warn("folder clones: %s", err->msg);
                tess_error_free(err);
        }
        loop_add_timer(l, m->conf.task_lease / 4, on_lease_timer, m);
}

void vf_clone_sweep_start(struct manager *m)
{
        on_lease_timer(m->loop, m);
}

/* ---- the route ---- */

static int parse_clone(struct api_ctx *c, struct vf_new *q, const struct vfolder *src, struct tess_error **err)
{
        int r = api_get_string(c->body, NAMES("target_name", "targetName"), 80, &q->name, err);
        if (r >= 0)
                r = api_get_string(c->body, NAMES("target_host", "targetHost", "folder_host"), 64, &q->host, err);
        if (r >= 0)
                r = api_get_string(c->body, NAMES("usage_mode", "usageMode"), 16, &q->mode, err);
        if (r >= 0)
                r = api_get_string(c->body, NAMES("permission"), 16, &q->perm, err);
        if (r >= 0)
                r = api_get_bool(c->body, NAMES("cloneable"), &q->cloneable, err);
        if (r < 0)
                return r;
        if (!q->host || !*q->host)
                q->host = src->host;
        return vf_new_check(c, q, err);
}

/* The task, then the thread, for the folder just made. */
static int start(struct api_ctx *c, struct clone *j, struct tess_error **err)
{
        json_t *params =
                json_pack("{s:s, s:s, s:s}", "vfolder_id", j->dst.id, "name", j->dst.name, "source_id", j->src.id);
        int r = vf_quota_limit(c->m, &j->dst, &j->limit, j->scope_dir, sizeof(j->scope_dir), err);

        if (r >= 0)
                r = bgtask_create(c->m, CLONE_KIND, c->who.user_id, c->who.domain, NULL, params, j->task_id, err);
        json_decref(params);
        if (r >= 0)
                r = DBQ(c->m->db, "UPDATE vfolders SET clone_task = ? WHERE id = ?", NULL, err, DB_TEXT(j->task_id),
                        DB_TEXT(j->dst.id));
        if (r >= 0) {
                j->next = running;
                running = j;
                r = worker_start(c->m, clone_work, clone_done, j, err);
        }
        if (r < 0 && j->task_id[0])
                finish_task(c->m, j, BGTASK_FAILED, (*err)->msg);
        return r;
}

void api_vfolder_clone(struct api_ctx *c)
{
        struct tess_error *err = NULL;
        struct vf_new q = { .status = VF_STATUS_CLONING, .name_field = "target_name", .host_field = "target_host" };
        struct clone *j = xcalloc(1, sizeof(*j));
        bool made = false;
        int r;

        api_audit_target(c, "vfolder:%s", c->param[0]);
        r = vf_find(c, c->param[0], VF_STATUS_READY, VF_PERM_RO, &j->src, &err);
        if (r >= 0)
                r = parse_clone(c, &q, &j->src, &err);
        if (r >= 0 && !j->src.cloneable)
                r = tess_err(&err, EACCES,
                             "folder '%s' may not be cloned: its owner allows it with update-options "
                             "{\"cloneable\": true}",
                             j->src.name);
        if (r >= 0 && !j->src.path[0])
                r = tess_err(&err, ENOENT, "folder '%s': its storage host '%s' is not on this manager", j->src.name,
                             j->src.host);
        if (r >= 0) {
                r = vf_new_create(c, &q, &j->dst, &err);
                made = r >= 0;
        }
        json_t *answer = r >= 0 ? vf_json(&j->dst) : NULL;
        if (r >= 0)
                r = start(c, j, &err);
        if (r < 0) {
                if (made)
                        drop_folder(c->m, &j->dst);
                json_decref(answer);
                clone_free(j);
                api_fail(c, err);
                return;
        }
        json_object_set_new(answer, "bgtask_id", json_string(j->task_id));
        log_info("task=%s: cloning folder %s into %s (%s)", j->task_id, j->src.id, j->dst.id, j->dst.name);
        api_json(c, 201, answer);
}
