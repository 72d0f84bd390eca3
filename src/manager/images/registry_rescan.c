/* registry_rescan.c - see registry_rescan.h.
 *
 *   start (loop)     load the registry, open its password, create the task,
 *                    start the worker
 *   work (thread)    registry_scan_run(); progress posted to the loop at
 *                    most every PROGRESS_USEC
 *   done (loop)      apply the images in one transaction, finish the task */
#include "common/compat.h"

#include "common/log.h"
#include "common/loop.h"
#include "common/timeutil.h"
#include "manager/core/manager.h"
#include "manager/core/worker.h"
#include "manager/db/db.h"
#include "manager/images/registry_rescan.h"
#include "manager/images/registry_scan.h"
#include "manager/tasks/bgtask.h"

#define PROGRESS_USEC     (250 * 1000)
#define RESULT_ERRORS_MAX 100

struct rescan {
        struct rescan *next; /* the running rescans of this manager */
        char task_id[UUID_STR_LEN];
        char *name, *url, *project, *username, *password;
        struct registry_scan_opts opts;
        struct worker *worker;
        int64_t last_progress;
        /* the scan's outcome, read on the loop once the thread is done */
        int r;
        struct tess_error *err;
        struct registry_scan result;
};

struct progress_msg {
        size_t done, total;
        char repository[256];
};

static struct rescan *running;

static void on_lease_timer(struct loop *l, void *data)
{
        struct manager *m = data;
        struct tess_error *err = NULL;

        for (struct rescan *j = running; j; j = j->next)
                if (bgtask_touch(m, j->task_id, &err) < 0)
                        err = tess_error_free(err);
        if (bgtask_fail_stale(m, REGISTRY_RESCAN_KIND, &err) < 0) {
                log_warn("background tasks: %s", err->msg);
                tess_error_free(err);
        }
        loop_add_timer(l, m->conf.task_lease / 4, on_lease_timer, m);
}

int registry_rescan_leases(struct manager *m, struct tess_error **err)
{
        int r = bgtask_fail_stale(m, REGISTRY_RESCAN_KIND, err);
        if (r < 0)
                return r;
        loop_add_timer(m->loop, m->conf.task_lease / 4, on_lease_timer, m);
        return 0;
}

bool registry_rescan_running(const char *name)
{
        for (struct rescan *j = running; j; j = j->next)
                if (streq(j->name, name))
                        return true;
        return false;
}

static void rescan_free(struct rescan *j)
{
        struct rescan **p = &running;

        while (*p && *p != j)
                p = &(*p)->next;
        if (*p)
                *p = j->next;
        free(j->name);
        free(j->url);
        free(j->project);
        free(j->username);
        if (j->password) {
                explicit_bzero(j->password, strlen(j->password));
                free(j->password);
        }
        tess_error_free(j->err);
        registry_scan_release(&j->result);
        free(j);
}

/* ---- the worker thread ---- */

static void on_progress(struct manager *m, void *data, void *msg)
{
        struct rescan *j = data;
        struct progress_msg *p = msg;
        _cleanup_free_ char *text =
                p->repository[0] ? xasprintf("scanned '%s' (%zu of %zu repositories)", p->repository, p->done, p->total)
                                 : xasprintf("%zu repositories to scan", p->total);
        struct tess_error *err = NULL;

        if (bgtask_update(m, j->task_id, (int64_t)p->done, (int64_t)p->total, text, &err) < 0) {
                log_warn("task=%s: recording progress: %s, ignoring", j->task_id, err->msg);
                tess_error_free(err);
        }
        free(p);
}

static void post_progress(void *data, size_t done, size_t total, const char *repository)
{
        struct rescan *j = data;
        int64_t now = now_usec();

        if (done > 0 && done < total && now - j->last_progress < PROGRESS_USEC)
                return;
        j->last_progress = now;
        struct progress_msg *p = xcalloc(1, sizeof(*p));
        *p = (struct progress_msg){ .done = done, .total = total };
        snprintf(p->repository, sizeof(p->repository), "%s", repository ? repository : "");
        worker_post(j->worker, on_progress, p);
}

static void rescan_work(struct worker *w, void *data)
{
        struct rescan *j = data;

        j->worker = w;
        j->r = registry_scan_run(&j->opts, post_progress, j, &j->result, &j->err);
}

/* ---- applying the result (loop) ---- */

struct apply_counts {
        int64_t added, updated, unchanged;
};

/* Add or update one found image. */
static int upsert_image(struct manager *m, const char *registry, const json_t *img, struct apply_counts *n,
                        struct tess_error **err)
{
        const char *name = json_string_value(json_object_get(img, "name"));
        const char *tag = json_string_value(json_object_get(img, "tag"));
        const char *arch = json_string_value(json_object_get(img, "architecture"));
        const char *digest = json_string_value(json_object_get(img, "digest"));
        const json_t *labels = json_object_get(img, "labels");
        int64_t size = json_integer_value(json_object_get(img, "size_bytes"));
        _cleanup_free_ char *labels_text = json_dumps(labels, JSON_COMPACT | JSON_SORT_KEYS);
        _cleanup_rows_ struct db_rows *rows = NULL;
        char id[UUID_STR_LEN];
        int r;

        r = DBQ(m->db,
                "SELECT id, registry, digest, labels, size_bytes FROM images WHERE name = ? AND tag = ? AND"
                " architecture = ?",
                &rows, err, DB_TEXT(name), DB_TEXT(tag), DB_TEXT(arch));
        if (r < 0)
                return r;
        if (rows->nrows == 0) {
                uuid_generate_str(id);
                n->added++;
                return DBQ(m->db,
                           "INSERT INTO images(id, name, tag, architecture, registry, digest, labels, size_bytes,"
                           " created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                           NULL, err, DB_TEXT(id), DB_TEXT(name), DB_TEXT(tag), DB_TEXT(arch), DB_TEXT(registry),
                           DB_TEXT(digest), DB_TEXT(labels_text), DB_INT(size), DB_INT(now_usec()));
        }
        json_t *stored = json_loads(db_getn(rows, 0, "labels"), 0, NULL);
        bool same = streq_ptr(db_getn(rows, 0, "registry"), registry) &&
                    streq_ptr(db_getn(rows, 0, "digest"), digest) && db_get_int(rows, 0, "size_bytes") == size &&
                    json_equal(stored, labels);
        json_decref(stored);
        if (same) {
                n->unchanged++;
                return 0;
        }
        n->updated++;
        return DBQ(m->db, "UPDATE images SET registry = ?, digest = ?, labels = ?, size_bytes = ? WHERE id = ?", NULL,
                   err, DB_TEXT(registry), DB_TEXT(digest), DB_TEXT(labels_text), DB_INT(size),
                   DB_TEXT(db_getn(rows, 0, "id")));
}

static char *image_key(const char *name, const char *tag, const char *arch)
{
        return xasprintf("%s:%s@%s", name, tag, arch);
}

/* The registry's images in the scan's scope that it did not find (and
 * whose repository and tag did not fail), as [{id, image, architecture}]. */
static int find_missing(struct manager *m, const struct rescan *j, json_t **ret, struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        _cleanup_free_ char *prefix = xasprintf("%s/", j->name);
        json_t *found = json_object(), *v;
        size_t i;
        int r;

        json_array_foreach(j->result.images, i, v) {
                _cleanup_free_ char *key = image_key(json_string_value(json_object_get(v, "name")),
                                                     json_string_value(json_object_get(v, "tag")),
                                                     json_string_value(json_object_get(v, "architecture")));
                json_object_set_new(found, key, json_true());
        }
        r = DBQ(m->db, "SELECT id, name, tag, architecture FROM images WHERE registry = ? ORDER BY name, tag", &rows,
                err, DB_TEXT(j->name));
        *ret = json_array();
        for (int row = 0; r >= 0 && row < rows->nrows; row++) {
                const char *name = db_getn(rows, row, "name"), *tag = db_getn(rows, row, "tag");
                const char *arch = db_getn(rows, row, "architecture");
                if (strncmp(name, prefix, strlen(prefix)) != 0)
                        continue; /* registered by hand under another name: not the scan's */
                const char *repository = name + strlen(prefix);
                _cleanup_free_ char *key = image_key(name, tag, arch);
                _cleanup_free_ char *repo_tag = xasprintf("%s:%s", repository, tag);
                if (!registry_scan_in_project(j->project, repository) || json_object_get(found, key) ||
                    json_object_get(j->result.failed, repository) || json_object_get(j->result.failed, repo_tag))
                        continue;
                _cleanup_free_ char *image = xasprintf("%s:%s", name, tag);
                json_array_append_new(*ret, json_pack("{s:s, s:s, s:s}", "id", db_getn(rows, row, "id"), "image", image,
                                                      "architecture", arch));
        }
        json_decref(found);
        return r < 0 ? r : 0;
}

static int apply_tx(struct manager *m, const struct rescan *j, struct apply_counts *n, json_t **ret_missing,
                    struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *reg = NULL;
        json_t *img;
        size_t i;
        int r;

        r = DBQ(m->db, "SELECT 1 FROM container_registries WHERE name = ?", &reg, err, DB_TEXT(j->name));
        if (r >= 0 && reg->nrows == 0)
                r = tess_err(err, ENOENT, "registry '%s' was deleted during the scan", j->name);
        json_array_foreach(j->result.images, i, img) {
                if (r < 0)
                        break;
                r = upsert_image(m, j->name, img, n, err);
        }
        if (r >= 0)
                r = find_missing(m, j, ret_missing, err);
        if (r >= 0)
                r = DBQ(m->db, "UPDATE container_registries SET last_scan_at = ? WHERE name = ?", NULL, err,
                        DB_INT(now_usec()), DB_TEXT(j->name));
        return r < 0 ? r : 0;
}

/* Apply the found images; the task's result into *ret. */
static int apply(struct manager *m, const struct rescan *j, json_t **ret, struct tess_error **err)
{
        struct apply_counts n = { 0 };
        json_t *missing = NULL, *errors = json_array();
        int r;

        r = db_begin(m->db, err);
        if (r < 0)
                return r;
        r = apply_tx(m, j, &n, &missing, err);
        if (r >= 0)
                r = db_commit(m->db, err);
        else
                db_rollback(m->db);
        if (r < 0) {
                json_decref(missing);
                json_decref(errors);
                return r;
        }
        for (size_t i = 0; i < json_array_size(j->result.errors) && i < RESULT_ERRORS_MAX; i++)
                json_array_append(errors, json_array_get(j->result.errors, i));
        *ret = json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:o, s:I, s:o}", "registry", j->name, "repositories",
                         (json_int_t)j->result.repositories, "images", (json_int_t)json_array_size(j->result.images),
                         "added", (json_int_t)n.added, "updated", (json_int_t)n.updated, "unchanged",
                         (json_int_t)n.unchanged, "errors", errors, "error_count",
                         (json_int_t)json_array_size(j->result.errors), "missing", missing);
        return 0;
}

static void finish(struct manager *m, const struct rescan *j, const char *status, const char *message,
                   const json_t *result)
{
        struct tess_error *err = NULL;

        if (bgtask_finish(m, j->task_id, status, message, result, &err) < 0) {
                log_warn("task=%s: finishing: %s, ignoring", j->task_id, err->msg);
                tess_error_free(err);
        }
}

static void rescan_done(struct manager *m, void *data, void *msg UNUSED)
{
        struct rescan *j = data;
        struct tess_error *err = NULL;
        json_t *result = NULL;

        if (j->r < 0) {
                json_t *r = json_pack("{s:s}", "registry", j->name);
                finish(m, j, BGTASK_FAILED, j->err ? j->err->msg : "the scan failed", r);
                json_decref(r);
        } else if (apply(m, j, &result, &err) < 0) {
                finish(m, j, BGTASK_FAILED, err->msg, NULL);
                tess_error_free(err);
        } else {
                size_t errors = json_array_size(j->result.errors),
                       missing = json_array_size(json_object_get(result, "missing"));
                _cleanup_free_ char *text =
                        xasprintf("%" JSON_INTEGER_FORMAT " added, %" JSON_INTEGER_FORMAT
                                  " updated, %" JSON_INTEGER_FORMAT " unchanged; %zu errors, %zu missing",
                                  json_integer_value(json_object_get(result, "added")),
                                  json_integer_value(json_object_get(result, "updated")),
                                  json_integer_value(json_object_get(result, "unchanged")), errors, missing);
                finish(m, j, BGTASK_DONE, text, result);
                json_decref(result);
        }
        log_info("task=%s registry='%s': rescan %s", j->task_id, j->name, j->r < 0 ? "failed" : "done");
        rescan_free(j);
}

/* ---- starting ---- */

static int load_registry(struct manager *m, const char *name, struct rescan *j, struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        const char *sealed;
        int r;

        r = DBQ(m->db, "SELECT name, url, project, username, password_sealed FROM container_registries WHERE name = ?",
                &rows, err, DB_TEXT(name));
        if (r < 0)
                return r;
        if (rows->nrows == 0)
                return tess_err(err, ENOENT, "container registry '%s' not found", name);
        j->name = xstrdup(db_getn(rows, 0, "name"));
        j->url = xstrdup(db_getn(rows, 0, "url"));
        j->project = xstrdup(db_getn(rows, 0, "project") ?: "");
        j->username = xstrdup(db_getn(rows, 0, "username") ?: "");
        sealed = db_getn(rows, 0, "password_sealed");
        if (sealed && *sealed) {
                r = secret_open(m->master_key, sealed, &j->password, err);
                if (r < 0)
                        return tess_err_wrap(err, "opening the password of registry '%s'", name);
        }
        j->opts = (struct registry_scan_opts){
                .name = j->name,
                .url = j->url,
                .project = j->project,
                .username = j->username,
                .password = j->password,
        };
        return 0;
}

int registry_rescan_start(struct manager *m, const char *name, const char *user_id, const char *domain,
                          char ret_task_id[UUID_STR_LEN], struct tess_error **err)
{
        struct rescan *j = xcalloc(1, sizeof(*j));
        int r;

        for (struct rescan *o = running; o; o = o->next)
                if (streq(o->name, name)) {
                        free(j);
                        return tess_err(err, EEXIST, "a rescan of registry '%s' is running: task %s", name, o->task_id);
                }
        r = load_registry(m, name, j, err);
        if (r >= 0)
                r = bgtask_create(m, REGISTRY_RESCAN_KIND, user_id, domain, NULL, NULL, j->task_id, err);
        if (r < 0) {
                rescan_free(j);
                return r;
        }
        j->next = running;
        running = j;
        r = worker_start(m, rescan_work, rescan_done, j, err);
        if (r < 0) {
                finish(m, j, BGTASK_FAILED, (*err)->msg, NULL);
                rescan_free(j);
                return r;
        }
        snprintf(ret_task_id, UUID_STR_LEN, "%s", j->task_id);
        log_info("task=%s registry='%s': rescan started", j->task_id, name);
        return 0;
}
