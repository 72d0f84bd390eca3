/* image_budget_loop.c - the agent keeps its image store within
 * image_disk_budget: a thread of its own applies the budget
 * (image_store_apply_budget) at start, soon after every pull or import
 * (it notices index.json change), and every CHECK_EVERY_USEC, so neither
 * the reconciler nor the workers ever wait for it.
 *
 * A run never waits: while a container is being started or a pull writes
 * into the store (their image_holds), it is put off and tried again at the
 * next poll.  The images in use are those of every container on disk
 * (container_layers_in_use), listed under the gc lock, when no container is
 * half created.  What it removes is logged (notice), with what it freed. */
#include "common/compat.h"

#include <pthread.h>
#include <sys/stat.h>

#include "agent/image_budget_loop.h"
#include "agent/kernel_runtime.h"
#include "common/cond_wait.h"
#include "common/log.h"
#include "common/slots.h"
#include "common/timeutil.h"
#include "image/image.h"

#define CHECK_EVERY_USEC (5 * 60 * USEC_PER_SEC)
#define POLL_USEC        (2 * USEC_PER_SEC) /* index.json looked at; a run put off tried again */

struct image_budget_loop {
        struct agent_ctx *ctx;
        int64_t budget;
        pthread_t thread;
        pthread_mutex_t lock;
        pthread_cond_t cond;
        bool stop;
        bool told_over; /* warned that what is in use exceeds the budget */
};

static int containers_in_use(void *data, char ***ret, struct tess_error **err)
{
        struct container_config cfg = kernel_runtime_config(data);
        return container_layers_in_use(&cfg, ret, err);
}

static const char *size_text(int64_t bytes, char buf[32])
{
        return slot_format_human("mem", bytes, buf, 32);
}

static void log_report(struct image_budget_loop *l, const struct image_budget_report *rep)
{
        char a[32], b[32], c[32];

        for (size_t i = 0; i < rep->n_removed; i++) {
                char when[40];
                log_notice("image gc: removed %s (last used %s), %s freed", rep->removed[i].ref,
                           time_format_iso(rep->removed[i].last_used, when, sizeof(when)),
                           size_text(rep->removed[i].bytes, a));
        }
        if (rep->before > l->budget)
                log_notice("image gc: the image store took %s of its %s budget, now %s (%zu image(s) removed)",
                           size_text(rep->before, a), size_text(l->budget, b), size_text(rep->after, c),
                           rep->n_removed);
        if (rep->after > l->budget && !l->told_over)
                log_warn("image gc: the images in use take %s, more than the budget of %s", size_text(rep->after, a),
                         size_text(l->budget, b));
        l->told_over = rep->after > l->budget;
}

/* One run; false when it was put off (the store was held). */
static bool run_once(struct image_budget_loop *l)
{
        struct image_budget_report rep;
        struct tess_error *err = NULL;
        int r = image_store_apply_budget(l->ctx->images, l->budget, false, containers_in_use, l->ctx, &rep, &err);

        if (r == -EBUSY) {
                tess_error_free(err);
                return false;
        }
        if (r < 0) {
                log_warn("image gc: %s", err->msg);
                tess_error_free(err);
                return true;
        }
        log_report(l, &rep);
        image_budget_report_release(&rep);
        return true;
}

/* index.json's identity: a tag or an untag replaces it (rename). */
static int64_t index_stamp(struct image_store *st)
{
        _cleanup_free_ char *path = xasprintf("%s/index.json", image_store_dir(st));
        struct stat s;

        if (stat(path, &s) < 0)
                return 0;
        return (int64_t)s.st_ino * 1000003 + s.st_mtim.tv_sec * 1000000000 + s.st_mtim.tv_nsec;
}

static void *loop_thread(void *data)
{
        struct image_budget_loop *l = data;
        int64_t next_check = 0, seen = 0;
        bool put_off = false;

        pthread_mutex_lock(&l->lock);
        while (!l->stop) {
                pthread_mutex_unlock(&l->lock);
                int64_t now = monotonic_usec(), stamp = index_stamp(l->ctx->images);
                if (put_off || stamp != seen || now >= next_check) {
                        seen = stamp;
                        put_off = !run_once(l);
                        if (!put_off)
                                next_check = monotonic_usec() + CHECK_EVERY_USEC;
                }
                pthread_mutex_lock(&l->lock);
                if (!l->stop) {
                        struct timespec ts = cond_deadline(POLL_USEC);
                        pthread_cond_timedwait(&l->cond, &l->lock, &ts);
                }
        }
        pthread_mutex_unlock(&l->lock);
        return NULL;
}

struct image_budget_loop *image_budget_loop_start(struct agent_ctx *ctx)
{
        struct image_budget_loop *l;
        char buf[32];

        if (ctx->conf->image_disk_budget == 0)
                return NULL;
        l = xcalloc(1, sizeof(*l));
        l->ctx = ctx;
        l->budget = ctx->conf->image_disk_budget > INT64_MAX ? INT64_MAX : (int64_t)ctx->conf->image_disk_budget;
        pthread_mutex_init(&l->lock, NULL);
        cond_init_monotonic(&l->cond);
        if (pthread_create(&l->thread, NULL, loop_thread, l) != 0) {
                log_error("image gc: cannot start its thread; the image store has no budget");
                pthread_cond_destroy(&l->cond);
                pthread_mutex_destroy(&l->lock);
                free(l);
                return NULL;
        }
        log_info("image gc: the image store's budget is %s", size_text(l->budget, buf));
        return l;
}

void image_budget_loop_stop(struct image_budget_loop *l)
{
        if (!l)
                return;
        pthread_mutex_lock(&l->lock);
        l->stop = true;
        pthread_cond_signal(&l->cond);
        pthread_mutex_unlock(&l->lock);
        pthread_join(l->thread, NULL);
        pthread_cond_destroy(&l->cond);
        pthread_mutex_destroy(&l->lock);
        free(l);
}
