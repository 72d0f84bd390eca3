/* kernels.c - the agent's kernels: what the manager wants (the desired
 * list from POST /agent/sync) against what runs here, and the work that
 * brings one to the other.
 *
 * Each kernel the agent has accepted has a record, state_dir/kernels/
 * <kernel id>.json: the manager's description and its local phase
 *
 *   starting -> running -> stopping -> ended
 *          \-> ended (creation failed)
 *
 * written atomically at every change, so a restarted agent finds its
 * kernels and their containers again (the containers never stopped: their
 * monitors own them).  Starting and stopping block (pulling an image,
 * creating a container, waiting for it to exit), so they are jobs for a
 * few worker threads (MAX_WORKERS, started on demand, gone when the queue
 * is empty; stops go before starts, so that room frees up first and a
 * burst of starts does not run hundreds of runc at once); the reconciler
 * never blocks holding the lock (the containers of kernels it forgets
 * are removed after it lets go).  Every outcome is
 * an event in the outbox: preparing, pulling, creating, running, exited
 * (code, oom), failed (message).  A kernel that left the desired list ended
 * on the manager's side: its container is removed and its record deleted
 * once it has ended here and that was reported. */
#include "common/compat.h"

#include <dirent.h>
#include <pthread.h>
#include <sys/statvfs.h>

#include "common/fs.h"
#include "common/log.h"
#include "common/slots.h"
#include "common/timeutil.h"
#include "common/utf8.h"
#include "agent/kernels.h"
#include "agent/kernel_runtime.h"

enum phase {
        PHASE_STARTING,
        PHASE_RUNNING,
        PHASE_STOPPING,
        PHASE_ENDED,
};

static const char *const phase_names[] = {
        [PHASE_STARTING] = "starting",
        [PHASE_RUNNING] = "running",
        [PHASE_STOPPING] = "stopping",
        [PHASE_ENDED] = "ended",
};

struct kernel {
        char id[64];
        json_t *spec; /* the manager's description */
        enum phase phase;
        bool busy;    /* a worker owns it */
        bool wanted;  /* in the last desired list */
        bool unsaved; /* its record could not be written (a full disk): tried again */
        uint64_t last_cpu_ns; /* the previous sample, for cpu_util */
        int64_t last_sample;  /* monotonic usec; 0: none yet */
};

#define MAX_WORKERS 4
#define FAILURE_TEXT_MAX 2048 /* bytes of a failed event's message */

struct job {
        struct job *next;
        struct kernels *ks;
        struct kernel *k;
        bool start;
};

struct kernels {
        pthread_mutex_t lock;
        struct agent_ctx *ctx;
        char *dir;
        struct kernel **k;
        int n, cap;
        struct job *queue, **queue_tail; /* jobs no worker took yet */
        int workers; /* running worker threads */
        json_t *desired; /* the last desired list, applied again after a job */
        bool reapply;    /* a job ended: what was skipped as busy may be due */
        pthread_cond_t idle;
        /* forgotten kernels whose containers and records are still to be
         * removed: done without the lock (remove_forgotten), as removing a
         * container blocks (runc, unmounts, its tree) and the reporter's
         * heartbeat needs the lock for the kernels' usage */
        char **forgotten;
        int nforgotten, forgotten_cap;
};

static bool valid_id(const char *id)
{
        size_t n = id ? strlen(id) : 0;
        return n > 0 && n < 64 && strspn(id, "0123456789abcdefABCDEF-") == n;
}

/* k's record, atomically: one that cannot be written (a full disk)
 * leaves the last one whole, and is written again by kernels_check()
 * until it can be (lock held). */
static void save(struct kernels *ks, struct kernel *k)
{
        _cleanup_free_ char *path = xasprintf("%s/%s.json", ks->dir, k->id);
        json_t *rec = json_pack("{s:s, s:O}", "phase", phase_names[k->phase], "spec", k->spec);
        _cleanup_free_ char *text = json_dumps(rec, JSON_COMPACT | JSON_SORT_KEYS);
        struct tess_error *err = NULL;
        int r = fs_write_file_atomic(path, text, strlen(text), 0600, &err);

        json_decref(rec);
        if (r < 0 && !k->unsaved)
                log_error("kernel %s: saving its record: %s; its previous record stays, this one is written "
                          "when it can be", k->id, err->msg);
        else if (r >= 0 && k->unsaved)
                log_info("kernel %s: record saved", k->id);
        k->unsaved = r < 0;
        tess_error_free(err);
}

static struct kernel *find(struct kernels *ks, const char *id)
{
        for (int i = 0; i < ks->n; i++)
                if (streq(ks->k[i]->id, id))
                        return ks->k[i];
        return NULL;
}

static struct kernel *add(struct kernels *ks, const char *id, json_t *spec, enum phase phase)
{
        struct kernel *k = xcalloc(1, sizeof(*k));

        snprintf(k->id, sizeof(k->id), "%s", id);
        k->spec = json_incref(spec);
        k->phase = phase;
        if (ks->n == ks->cap) {
                ks->cap = ks->cap ? 2 * ks->cap : 16;
                ks->k = xrealloc(ks->k, (size_t)ks->cap * sizeof(*ks->k));
        }
        ks->k[ks->n++] = k;
        return k;
}

/* (lock held) k is gone from the list; its container and record go in
 * remove_forgotten(). */
static void forget(struct kernels *ks, struct kernel *k)
{
        if (ks->nforgotten == ks->forgotten_cap) {
                ks->forgotten_cap = ks->forgotten_cap ? 2 * ks->forgotten_cap : 8;
                ks->forgotten = xrealloc(ks->forgotten, (size_t)ks->forgotten_cap * sizeof(char *));
        }
        ks->forgotten[ks->nforgotten++] = xstrdup(k->id);
        for (int i = 0; i < ks->n; i++) {
                if (ks->k[i] == k) {
                        ks->k[i] = ks->k[--ks->n];
                        break;
                }
        }
        json_decref(k->spec);
        free(k);
}

/* (lock not held) Remove what forget() left: the container first, then
 * the record, so that an agent that dies in between finds the record and
 * removes the container again. */
static void remove_forgotten(struct kernels *ks)
{
        pthread_mutex_lock(&ks->lock);
        char **ids = ks->forgotten;
        int n = ks->nforgotten;
        ks->forgotten = NULL;
        ks->nforgotten = ks->forgotten_cap = 0;
        pthread_mutex_unlock(&ks->lock);
        for (int i = 0; i < n; i++) {
                _cleanup_free_ char *path = xasprintf("%s/%s.json", ks->dir, ids[i]);
                kernel_runtime_remove(ks->ctx, ids[i]);
                unlink(path);
                free(ids[i]);
        }
        free(ids);
}

/* An event about kernel k into the outbox (durable before this returns,
 * or kept in memory while the disk is full). */
static void report(struct kernels *ks, const struct kernel *k, json_t *ev)
{
        json_object_set_new(ev, "kernel", json_string(k->id));
        outbox_add(ks->ctx->outbox, ev);
        json_decref(ev);
        agent_wake_reporter(ks->ctx);
}

static void report_kind(struct kernels *ks, const struct kernel *k, const char *kind)
{
        report(ks, k, json_pack("{s:s}", "kind", kind));
}

static json_t *stat_item(const char *current, const char *capacity, const char *unit)
{
        return json_pack("{s:s, s:s?, s:s}", "current", current, "capacity", capacity, "unit_hint", unit);
}

static char *u64_text(uint64_t v)
{
        return xasprintf("%llu", (unsigned long long)v);
}

/* The counters of a kernel as it ended, in lastStat's shape, cpu_used
 * written as kernel_stat() writes it: the same counter never reads lower
 * than in a heartbeat (which the manager would take for a restart). */
static json_t *exit_stat(const struct kernel_exit *x)
{
        _cleanup_free_ char *used_ms = xasprintf("%.1f", (double)x->cpu_ns / 1e6);
        _cleanup_free_ char *mem = u64_text(x->mem), *ior = u64_text(x->io_read), *iow = u64_text(x->io_write);

        return json_pack("{s:o, s:o, s:o, s:o}", "cpu_used", stat_item(used_ms, NULL, "msec"), "mem",
                         stat_item(mem, NULL, "bytes"), "io_read", stat_item(ior, NULL, "bytes"), "io_write",
                         stat_item(iow, NULL, "bytes"));
}

static void report_exit(struct kernels *ks, const struct kernel *k, struct kernel_exit *x)
{
        json_t *ev = json_pack("{s:s, s:I, s:b}", "kind", "exited", "exit_code", (json_int_t)x->code, "oom", x->oom);
        if (x->log)
                json_object_set_new(ev, "log", json_string(x->log));
        if (x->measured)
                json_object_set_new(ev, "stat", exit_stat(x));
        report(ks, k, ev);
        free(x->log);
        x->log = NULL;
}

#define STATE_DIR_FULL_BYTES (1 << 20) /* less free than this: full, for whatever failed there */

/* Whether the state_dir's file system is (about) full: what fails there
 * then (runc, which says only "runc run failed" when it cannot even write
 * its log) failed for that. */
static bool state_dir_full(const char *dir)
{
        struct statvfs st;

        return statvfs(dir, &st) == 0 && (uint64_t)st.f_bavail * st.f_frsize < STATE_DIR_FULL_BYTES;
}

/* Why a kernel could not start, for the session's status_data: a full
 * state_dir said first, in so many words; valid UTF-8 (invalid bytes
 * become '?') and short enough for the manager (agent_report.h takes 4096
 * bytes: a longer one would make it refuse every event sent with it). */
static json_t *failure_text(const struct kernels *ks, const struct tess_error *err)
{
        _cleanup_free_ char *text = NULL;
        const unsigned char *p;
        size_t n, i = 0, len = 0;

        if (err->code == ENOSPC || err->code == EDQUOT || state_dir_full(ks->ctx->conf->state_dir))
                text = xasprintf("no space left on device in the agent's state_dir '%s': %s", ks->ctx->conf->state_dir,
                                 err->msg);
        else
                text = xstrdup(err->msg);
        p = (const unsigned char *)text;
        n = strlen(text);
        while (i < n) {
                size_t l = utf8_seq_len(p + i, n - i);
                if (len + (l ? l : 1) > FAILURE_TEXT_MAX)
                        break;
                if (l == 0) {
                        text[len++] = '?';
                        i++;
                        continue;
                }
                memmove(text + len, p + i, l);
                len += l;
                i += l;
        }
        return json_stringn(text, len);
}

static void progress(void *data, const char *kind)
{
        struct job *j = data;
        report_kind(j->ks, j->k, kind);
}

static void run_job(struct job *j)
{
        struct kernels *ks = j->ks;
        struct kernel *k = j->k;
        struct tess_error *err = NULL;
        struct kernel_exit x = { .code = -1 };
        char container_id[128] = "";
        json_t *image = NULL;

        if (j->start) {
                int r = kernel_runtime_start(ks->ctx, k->id, k->spec, progress, j, container_id,
                                             sizeof(container_id), &image, &err);
                pthread_mutex_lock(&ks->lock);
                if (r < 0) {
                        log_warn("kernel %s: %s", k->id, err->msg);
                        report(ks, k, json_pack("{s:s, s:o}", "kind", "failed", "message", failure_text(ks, err)));
                        err = tess_error_free(err);
                        k->phase = PHASE_ENDED;
                } else {
                        report(ks, k, json_pack("{s:s, s:s, s:o?}", "kind", "running", "container_id", container_id,
                                                "image", image));
                        k->phase = PHASE_RUNNING;
                }
        } else {
                if (kernel_runtime_stop(ks->ctx, k->id, &x, &err) < 0) {
                        log_warn("kernel %s: stopping: %s", k->id, err->msg);
                        err = tess_error_free(err);
                }
                pthread_mutex_lock(&ks->lock);
                report_exit(ks, k, &x);
                k->phase = PHASE_ENDED;
        }
        save(ks, k);
        k->busy = false;
        ks->reapply = true;
        pthread_mutex_unlock(&ks->lock);
        free(j);
        agent_wake_reconciler(ks->ctx); /* it may have changed its mind meanwhile */
}

static void *worker(void *data)
{
        struct kernels *ks = data;

        pthread_mutex_lock(&ks->lock);
        for (struct job *j; (j = ks->queue);) {
                ks->queue = j->next;
                if (!ks->queue)
                        ks->queue_tail = &ks->queue;
                pthread_mutex_unlock(&ks->lock);
                run_job(j);
                pthread_mutex_lock(&ks->lock);
        }
        ks->workers--;
        pthread_cond_broadcast(&ks->idle);
        pthread_mutex_unlock(&ks->lock);
        return NULL;
}

/* Hand k to a worker (lock held). */
static void spawn(struct kernels *ks, struct kernel *k, bool start)
{
        struct job *j = xcalloc(1, sizeof(*j));

        j->ks = ks;
        j->k = k;
        j->start = start;
        k->busy = true;
        k->phase = start ? PHASE_STARTING : PHASE_STOPPING;
        save(ks, k);
        if (start) {
                *ks->queue_tail = j;
                ks->queue_tail = &j->next;
        } else {
                j->next = ks->queue;
                ks->queue = j;
                if (!j->next)
                        ks->queue_tail = &j->next;
        }
        if (ks->workers < MAX_WORKERS) {
                pthread_t t;
                pthread_attr_t attr;
                pthread_attr_init(&attr);
                pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
                if (pthread_create(&t, &attr, worker, ks) == 0)
                        ks->workers++;
                else if (ks->workers == 0)
                        log_error("kernel %s: cannot start a worker thread; it waits", k->id);
                pthread_attr_destroy(&attr);
        }
}

int kernels_open(struct agent_ctx *ctx, const char *dir, struct kernels **ret, struct tess_error **err)
{
        struct kernels *ks = xcalloc(1, sizeof(*ks));
        int r = fs_mkdir_p(dir, 0700, err);
        DIR *d;

        pthread_mutex_init(&ks->lock, NULL);
        pthread_cond_init(&ks->idle, NULL);
        ks->ctx = ctx;
        ks->dir = xstrdup(dir);
        ks->queue_tail = &ks->queue;
        if (r < 0 || !(d = opendir(dir))) {
                if (r >= 0)
                        r = tess_err(err, errno, "%s: %s", dir, strerror(errno));
                kernels_close(ks);
                return r;
        }
        for (struct dirent *e; (e = readdir(d));) {
                char id[64];
                size_t n = strlen(e->d_name);
                if (n < 6 || n - 5 >= sizeof(id) || strcmp(e->d_name + n - 5, ".json") != 0)
                        continue;
                memcpy(id, e->d_name, n - 5);
                id[n - 5] = '\0';
                _cleanup_free_ char *path = xasprintf("%s/%s", dir, e->d_name);
                json_t *rec = json_load_file(path, 0, NULL);
                const char *phase = json_string_value(json_object_get(rec, "phase"));
                if (!valid_id(id) || !phase || !json_is_object(json_object_get(rec, "spec"))) {
                        log_warn("kernel record %s is damaged; ignored", path);
                        json_decref(rec);
                        continue;
                }
                enum phase p = PHASE_ENDED;
                for (size_t i = 0; i < ARRAY_SIZE(phase_names); i++)
                        if (streq(phase, phase_names[i]))
                                p = (enum phase)i;
                struct kernel *k = add(ks, id, json_object_get(rec, "spec"), p);
                /* interrupted work: a start is checked against its container
                 * below (kernels_check), a stop is done again */
                if (k->phase == PHASE_STARTING && kernel_runtime_exists(ctx, id)) {
                        k->phase = PHASE_RUNNING; /* its report may have been lost: again (harmless) */
                        report(ks, k, json_pack("{s:s, s:s}", "kind", "running", "container_id", id));
                        save(ks, k);
                }
                log_info("kernel %s: found, %s", id, phase_names[k->phase]);
                json_decref(rec);
        }
        closedir(d);
        *ret = ks;
        return 0;
}

void kernels_close(struct kernels *ks)
{
        if (!ks)
                return;
        pthread_mutex_lock(&ks->lock);
        while (ks->workers > 0)
                pthread_cond_wait(&ks->idle, &ks->lock);
        pthread_mutex_unlock(&ks->lock);
        for (struct job *j = ks->queue, *next; j; j = next) { /* only when no worker could start */
                next = j->next;
                free(j);
        }
        for (int i = 0; i < ks->n; i++) {
                json_decref(ks->k[i]->spec);
                free(ks->k[i]);
        }
        free(ks->k);
        json_decref(ks->desired);
        for (int i = 0; i < ks->nforgotten; i++)
                free(ks->forgotten[i]); /* (their records are found again at the next start) */
        free(ks->forgotten);
        free(ks->dir);
        pthread_cond_destroy(&ks->idle);
        pthread_mutex_destroy(&ks->lock);
        free(ks);
}

/* (lock held) */
static void apply(struct kernels *ks, const json_t *desired)
{
        json_t *spec;
        size_t i;

        for (int j = 0; j < ks->n; j++)
                ks->k[j]->wanted = false;
        json_array_foreach(desired, i, spec) {
                const char *id = json_string_value(json_object_get(spec, "id"));
                const char *action = json_string_value(json_object_get(spec, "action"));
                if (!valid_id(id) || !action) {
                        log_warn("the manager described a kernel without a valid id or action; ignored");
                        continue;
                }
                struct kernel *k = find(ks, id);
                if (!k) {
                        /* a kernel to stop that never started here ends at once */
                        k = add(ks, id, spec, streq(action, "run") ? PHASE_STARTING : PHASE_ENDED);
                        if (streq(action, "run")) {
                                spawn(ks, k, true);
                        } else {
                                save(ks, k);
                                report_exit(ks, k, &(struct kernel_exit){ .code = -1 });
                        }
                }
                k->wanted = true;
                if (streq(action, "stop") && !k->busy && k->phase != PHASE_ENDED)
                        spawn(ks, k, false);
                else if (streq(action, "run") && !k->busy && k->phase == PHASE_STARTING)
                        spawn(ks, k, true); /* a start interrupted by a restart */
        }
        /* not wanted any more: the session ended on the manager's side */
        for (int j = ks->n - 1; j >= 0; j--) {
                struct kernel *k = ks->k[j];
                if (k->wanted || k->busy)
                        continue;
                if (k->phase == PHASE_ENDED)
                        forget(ks, k);
                else
                        spawn(ks, k, false);
        }
}

void kernels_apply(struct kernels *ks, const json_t *desired)
{
        pthread_mutex_lock(&ks->lock);
        json_decref(ks->desired);
        ks->desired = json_incref((json_t *)desired);
        ks->reapply = false;
        apply(ks, ks->desired);
        pthread_mutex_unlock(&ks->lock);
        remove_forgotten(ks);
}

void kernels_check(struct kernels *ks)
{
        pthread_mutex_lock(&ks->lock);
        if (ks->reapply && ks->desired) {
                /* a stop that came while the kernel was starting waited for it */
                ks->reapply = false;
                apply(ks, ks->desired);
        }
        for (int i = 0; i < ks->n; i++) {
                struct kernel *k = ks->k[i];
                struct kernel_exit x = { .code = -1 };
                if (k->unsaved)
                        save(ks, k); /* room again? */
                if (k->busy || k->phase != PHASE_RUNNING || !kernel_runtime_exited(ks->ctx, k->id, &x))
                        continue;
                log_info("kernel %s: exited with %d%s", k->id, x.code, x.oom ? " (out of memory)" : "");
                report_exit(ks, k, &x);
                k->phase = PHASE_ENDED;
                save(ks, k);
        }
        pthread_mutex_unlock(&ks->lock);
        remove_forgotten(ks); /* (what the reapply above forgot) */
}

/* What kernels_stats() needs of one running kernel, copied under the lock:
 * reading the usage of hundreds of containers takes a good part of a
 * second, which the reconciler and the workers must not wait for. */
struct stat_job {
        char id[64];
        json_t *slots;
        uint64_t last_cpu_ns;
        int64_t last_sample;
        struct kernel_usage u;
        bool ok;
};

/* One running kernel's usage in Backend.AI's lastStat shape. */
static json_t *kernel_stat(struct stat_job *k, int64_t now)
{
        const struct kernel_usage u = k->u;
        const json_t *slots = k->slots;
        const char *mem_limit = json_string_value(json_object_get(slots, "mem"));
        int64_t cpu_quanta = 0;

        slot_parse_value("cpu", json_object_get(slots, "cpu"), &cpu_quanta, NULL);
        double util = 0;
        if (k->last_sample > 0 && now > k->last_sample && u.cpu_ns >= k->last_cpu_ns)
                util = 100.0 * (double)(u.cpu_ns - k->last_cpu_ns) / (double)((now - k->last_sample) * 1000);
        _cleanup_free_ char *used_ms = xasprintf("%.1f", (double)u.cpu_ns / 1e6);
        _cleanup_free_ char *util_text = xasprintf("%.1f", util);
        _cleanup_free_ char *cap = xasprintf("%.1f", 100.0 * (double)cpu_quanta / 1000.0);
        _cleanup_free_ char *mem = u64_text(u.mem), *ior = u64_text(u.io_read), *iow = u64_text(u.io_write);
        _cleanup_free_ char *rx = u64_text(u.net_rx), *tx = u64_text(u.net_tx);
        json_t *stat = json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "cpu_used", stat_item(used_ms, NULL, "msec"),
                                 "cpu_util", stat_item(util_text, cap, "percent"), "mem",
                                 stat_item(mem, mem_limit, "bytes"), "io_read", stat_item(ior, NULL, "bytes"),
                                 "io_write", stat_item(iow, NULL, "bytes"), "net_rx", stat_item(rx, NULL, "bytes"),
                                 "net_tx", stat_item(tx, NULL, "bytes"));
        if (u.has_gpu_mem) { /* Backend.AI's name for GPU memory: a fraction's, or its whole GPUs' */
                _cleanup_free_ char *gm = u64_text(u.gpu_mem), *gl = u64_text(u.gpu_mem_limit);
                json_object_set_new(stat, "cuda_mem", stat_item(gm, gl, "bytes"));
                if (u.gpu_util >= 0) { /* and the share of its GPUs' time it used */
                        _cleanup_free_ char *gu = xasprintf("%d.0", u.gpu_util);
                        _cleanup_free_ char *gc = xasprintf("%d.0", 100 * u.gpu_devices);
                        json_object_set_new(stat, "cuda_util", stat_item(gu, gc, "percent"));
                }
        }
        return stat;
}

json_t *kernels_stats(struct kernels *ks)
{
        json_t *all = json_object();
        int64_t now = monotonic_usec();
        int n = 0;

        pthread_mutex_lock(&ks->lock);
        struct stat_job *jobs = xcalloc((size_t)ks->n + 1, sizeof(*jobs));
        for (int i = 0; i < ks->n; i++) {
                struct kernel *k = ks->k[i];
                if (k->phase != PHASE_RUNNING || k->busy)
                        continue;
                snprintf(jobs[n].id, sizeof(jobs[n].id), "%s", k->id);
                jobs[n].slots = json_deep_copy(json_object_get(k->spec, "slots")); /* not shared across threads */
                jobs[n].last_cpu_ns = k->last_cpu_ns;
                jobs[n].last_sample = k->last_sample;
                n++;
        }
        pthread_mutex_unlock(&ks->lock);
        for (int i = 0; i < n; i++)
                jobs[i].ok = kernel_runtime_usage(ks->ctx, jobs[i].id, &jobs[i].u);
        pthread_mutex_lock(&ks->lock);
        for (int i = 0; i < n; i++) {
                struct kernel *k = find(ks, jobs[i].id);
                if (jobs[i].ok && k) {
                        json_object_set_new(all, k->id, kernel_stat(&jobs[i], now));
                        k->last_cpu_ns = jobs[i].u.cpu_ns;
                        k->last_sample = now;
                }
                json_decref(jobs[i].slots);
        }
        pthread_mutex_unlock(&ks->lock);
        free(jobs);
        return all;
}

int kernels_count(struct kernels *ks, int *ret_running)
{
        pthread_mutex_lock(&ks->lock);
        int n = ks->n, running = 0;
        for (int i = 0; i < ks->n; i++)
                running += ks->k[i]->phase == PHASE_RUNNING;
        pthread_mutex_unlock(&ks->lock);
        if (ret_running)
                *ret_running = running;
        return n;
}
