/* outbox.c - kernel events on disk until the manager acknowledges them.
 *
 * One file per event, DIR/<seq, 20 digits>.json, written atomically when
 * the event is added; the sequence numbers only grow (the highest one in
 * use is found again at open, and DIR/last-seq keeps it across an empty
 * outbox: written when events are acknowledged, before their files go, so
 * that adding one costs one atomic write).  outbox_pending() gives the
 * unacknowledged events, oldest first, so the manager sees them in order,
 * again and again until it acknowledges; applying one twice is harmless
 * on its side.  Thread-safe: kernels' workers add, the reporter thread
 * flushes, sends and acknowledges.
 *
 * A full disk (or any failing write) loses no event: an event whose file
 * cannot be written is kept in memory, sent like the others, and written
 * by outbox_flush() once there is room (if it is not acknowledged first).
 * Its number is not used again even if the agent restarts before then:
 * last-seq is a fixed-width number that is rewritten in place, which
 * needs no free space once the file exists (it is made at open).  A
 * restart while events are only in memory loses those events, as a crash
 * before outbox_add would. */
#include "common/compat.h"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>

#include "common/fs.h"
#include "common/log.h"
#include "agent/agent.h"

#define LAST_SEQ_WIDTH 20 /* digits of last-seq, then a newline */

struct event {
        json_t *ev;
        int64_t seq;
        bool on_disk;
};

struct outbox {
        pthread_mutex_t lock;
        char *dir, *last_path;
        int64_t last_seq;
        struct event *v; /* pending, oldest first */
        size_t n, cap;
        size_t unwritten;  /* of them, kept only in memory */
        bool disk_failing; /* told the log that writes fail */
};

static char *event_path(const struct outbox *o, int64_t seq)
{
        return xasprintf("%s/%020lld.json", o->dir, (long long)seq);
}

static int cmp_seq(const void *a, const void *b)
{
        int64_t x = ((const struct event *)a)->seq, y = ((const struct event *)b)->seq;
        return x < y ? -1 : x > y;
}

static void push(struct outbox *o, json_t *ev, int64_t seq, bool on_disk)
{
        if (o->n == o->cap) {
                o->cap = o->cap ? 2 * o->cap : 16;
                o->v = xrealloc(o->v, o->cap * sizeof(*o->v));
        }
        o->v[o->n++] = (struct event){ .ev = ev, .seq = seq, .on_disk = on_disk };
        o->unwritten += !on_disk;
}

/* last-seq = o->last_seq: in place when the file is there (no free space
 * needed: a write torn by a crash still reads at least the old number, as
 * both have the same width and the new one is larger), else made anew. */
static int store_last_seq(struct outbox *o, struct tess_error **err)
{
        char text[LAST_SEQ_WIDTH + 2];
        int n = snprintf(text, sizeof(text), "%0*lld\n", LAST_SEQ_WIDTH, (long long)o->last_seq);
        _cleanup_close_ int fd = open(o->last_path, O_WRONLY | O_CLOEXEC);

        if (fd < 0)
                return fs_write_file_atomic(o->last_path, text, (size_t)n, 0600, err);
        if (pwrite(fd, text, (size_t)n, 0) != n || fdatasync(fd) < 0)
                return tess_err(err, errno ? errno : EIO, "writing '%s': %s", o->last_path,
                                strerror(errno ? errno : EIO));
        return 0;
}

static int load(struct outbox *o, struct tess_error **err)
{
        char *text = NULL;
        size_t len;
        DIR *d = opendir(o->dir);

        if (!d)
                return tess_err(err, errno, "outbox %s: %s", o->dir, strerror(errno));
        if (fs_read_file(o->last_path, 64, &text, &len, NULL) >= 0) {
                o->last_seq = strtoll(text, NULL, 10);
                free(text);
        }
        for (struct dirent *e; (e = readdir(d));) {
                if (strlen(e->d_name) != 25 || strcmp(e->d_name + 20, ".json") != 0)
                        continue;
                _cleanup_free_ char *path = xasprintf("%s/%s", o->dir, e->d_name);
                json_t *ev = json_load_file(path, 0, NULL);
                if (!json_is_object(ev) || !json_is_integer(json_object_get(ev, "seq"))) {
                        json_decref(ev); /* torn by a crash before the rename: never acknowledged */
                        continue;
                }
                push(o, ev, json_integer_value(json_object_get(ev, "seq")), true);
        }
        closedir(d);
        if (o->n > 1)
                qsort(o->v, o->n, sizeof(*o->v), cmp_seq);
        if (o->n > 0 && o->v[o->n - 1].seq > o->last_seq)
                o->last_seq = o->v[o->n - 1].seq;
        return 0;
}

int outbox_open(const char *dir, struct outbox **ret, struct tess_error **err)
{
        struct outbox *o = xcalloc(1, sizeof(*o));
        int r = fs_mkdir_p(dir, 0700, err);

        pthread_mutex_init(&o->lock, NULL);
        o->dir = xstrdup(dir);
        o->last_path = xasprintf("%s/last-seq", dir);
        if (r >= 0)
                r = load(o, err);
        if (r < 0) {
                outbox_close(o);
                return r;
        }
        struct tess_error *e = NULL;
        if (store_last_seq(o, &e) < 0) { /* so that it can be rewritten in place on a full disk */
                log_warn("outbox: %s; tried again when events are acknowledged", e->msg);
                tess_error_free(e);
        }
        *ret = o;
        return 0;
}

struct outbox *outbox_close(struct outbox *o)
{
        if (!o)
                return NULL;
        for (size_t i = 0; i < o->n; i++)
                json_decref(o->v[i].ev);
        free(o->v);
        pthread_mutex_destroy(&o->lock);
        free(o->dir);
        free(o->last_path);
        free(o);
        return NULL;
}

static int write_event(const struct outbox *o, const struct event *e, struct tess_error **err)
{
        _cleanup_free_ char *text = json_dumps(e->ev, JSON_COMPACT | JSON_SORT_KEYS);
        _cleanup_free_ char *path = event_path(o, e->seq);

        return fs_write_file_atomic(path, text, strlen(text), 0600, err);
}

/* A write failed (lock held): said once until writes work again. */
static void disk_failed(struct outbox *o, struct tess_error *err)
{
        if (!o->disk_failing)
                log_warn("outbox: %s; events are kept in memory, sent as usual, and written when there is room",
                         err->msg);
        o->disk_failing = true;
        tess_error_free(err);
}

void outbox_add(struct outbox *o, json_t *event)
{
        struct tess_error *err = NULL;

        pthread_mutex_lock(&o->lock);
        int64_t seq = ++o->last_seq;
        json_object_set_new(event, "seq", json_integer(seq));
        json_t *ev = json_deep_copy(event); /* the caller may go on using its own */
        push(o, ev, seq, true);
        if (write_event(o, &o->v[o->n - 1], &err) < 0) {
                o->v[o->n - 1].on_disk = false;
                o->unwritten++;
                disk_failed(o, err);
                err = NULL;
                /* its number must stay used across a restart */
                if (store_last_seq(o, &err) < 0)
                        tess_error_free(err);
        }
        pthread_mutex_unlock(&o->lock);
}

void outbox_flush(struct outbox *o)
{
        struct tess_error *err = NULL;

        pthread_mutex_lock(&o->lock);
        for (size_t i = 0; i < o->n && o->unwritten > 0; i++) {
                struct event *e = &o->v[i];
                if (e->on_disk)
                        continue;
                if (write_event(o, e, &err) < 0) {
                        disk_failed(o, err);
                        err = NULL;
                        break;
                }
                e->on_disk = true;
                o->unwritten--;
        }
        if (o->unwritten == 0 && o->disk_failing) {
                log_notice("outbox: events are written to disk again");
                o->disk_failing = false;
        }
        pthread_mutex_unlock(&o->lock);
}

json_t *outbox_pending(struct outbox *o, size_t max)
{
        json_t *evs = json_array();

        pthread_mutex_lock(&o->lock);
        for (size_t i = 0; i < o->n && i < max; i++)
                json_array_append_new(evs, json_deep_copy(o->v[i].ev));
        pthread_mutex_unlock(&o->lock);
        return evs;
}

void outbox_ack(struct outbox *o, int64_t seq)
{
        struct tess_error *err = NULL;
        size_t done = 0;

        pthread_mutex_lock(&o->lock);
        while (done < o->n && o->v[done].seq <= seq)
                done++;
        if (done == 0) {
                pthread_mutex_unlock(&o->lock);
                return;
        }
        /* the files about to go may hold the highest number used */
        bool keep_files = store_last_seq(o, &err) < 0;
        if (keep_files) /* they tell the number: sent again only after a restart (harmless) */
                disk_failed(o, err);
        for (size_t i = 0; i < done; i++) {
                if (o->v[i].on_disk && !keep_files) {
                        _cleanup_free_ char *path = event_path(o, o->v[i].seq);
                        unlink(path);
                }
                o->unwritten -= !o->v[i].on_disk;
                json_decref(o->v[i].ev);
        }
        memmove(o->v, o->v + done, (o->n - done) * sizeof(*o->v));
        o->n -= done;
        pthread_mutex_unlock(&o->lock);
}

size_t outbox_count(struct outbox *o)
{
        pthread_mutex_lock(&o->lock);
        size_t n = o->n;
        pthread_mutex_unlock(&o->lock);
        return n;
}
