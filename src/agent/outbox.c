/* outbox.c - kernel events on disk until the manager acknowledges them.
 *
 * One file per event, DIR/<seq, 20 digits>.json, written atomically before
 * outbox_add returns; the sequence numbers only grow (the highest one in
 * use is found again at open, and DIR/last-seq keeps it across an empty
 * outbox: written when events are acknowledged, before their files go, so
 * that adding one costs one atomic write).  outbox_pending() gives every unacknowledged event, oldest
 * first, so the manager sees them in order, again and again until it
 * acknowledges; applying one twice is harmless on its side.  Thread-safe:
 * kernels' workers add, the reporter thread sends and acknowledges. */
#include "common/compat.h"

#include <dirent.h>
#include <pthread.h>

#include "common/fs.h"
#include "common/log.h"
#include "agent/agent.h"

struct outbox {
        pthread_mutex_t lock;
        char *dir;
        int64_t last_seq;
        json_t *pending; /* array, oldest first */
};

static char *event_path(const struct outbox *o, int64_t seq)
{
        return xasprintf("%s/%020lld.json", o->dir, (long long)seq);
}

static int cmp_seq(const void *a, const void *b)
{
        int64_t x = json_integer_value(json_object_get(*(json_t *const *)a, "seq"));
        int64_t y = json_integer_value(json_object_get(*(json_t *const *)b, "seq"));
        return x < y ? -1 : x > y;
}

static int load(struct outbox *o, struct tess_error **err)
{
        _cleanup_free_ char *last_path = xasprintf("%s/last-seq", o->dir);
        char *text = NULL;
        size_t len;
        DIR *d = opendir(o->dir);

        if (!d)
                return tess_err(err, errno, "outbox %s: %s", o->dir, strerror(errno));
        if (fs_read_file(last_path, 64, &text, &len, NULL) >= 0) {
                o->last_seq = strtoll(text, NULL, 10);
                free(text);
        }
        size_t n = 0, cap = 16;
        json_t **evs = xmalloc(cap * sizeof(*evs));
        for (struct dirent *e; (e = readdir(d));) {
                if (strlen(e->d_name) != 25 || strcmp(e->d_name + 20, ".json") != 0)
                        continue;
                _cleanup_free_ char *path = xasprintf("%s/%s", o->dir, e->d_name);
                json_t *ev = json_load_file(path, 0, NULL);
                if (!json_is_object(ev) || !json_is_integer(json_object_get(ev, "seq"))) {
                        json_decref(ev); /* torn by a crash before the rename: never acknowledged */
                        continue;
                }
                if (n == cap)
                        evs = xrealloc(evs, (cap *= 2) * sizeof(*evs));
                evs[n++] = ev;
        }
        closedir(d);
        qsort(evs, n, sizeof(*evs), cmp_seq);
        for (size_t i = 0; i < n; i++) {
                int64_t seq = json_integer_value(json_object_get(evs[i], "seq"));
                if (seq > o->last_seq)
                        o->last_seq = seq;
                json_array_append_new(o->pending, evs[i]);
        }
        free(evs);
        return 0;
}

int outbox_open(const char *dir, struct outbox **ret, struct tess_error **err)
{
        struct outbox *o = xcalloc(1, sizeof(*o));
        int r = fs_mkdir_p(dir, 0700, err);

        pthread_mutex_init(&o->lock, NULL);
        o->dir = xstrdup(dir);
        o->pending = json_array();
        if (r >= 0)
                r = load(o, err);
        if (r < 0) {
                outbox_close(o);
                return r;
        }
        *ret = o;
        return 0;
}

struct outbox *outbox_close(struct outbox *o)
{
        if (!o)
                return NULL;
        json_decref(o->pending);
        pthread_mutex_destroy(&o->lock);
        free(o->dir);
        free(o);
        return NULL;
}

int outbox_add(struct outbox *o, json_t *event, struct tess_error **err)
{
        pthread_mutex_lock(&o->lock);
        int64_t seq = o->last_seq + 1;
        json_object_set_new(event, "seq", json_integer(seq));
        _cleanup_free_ char *text = json_dumps(event, JSON_COMPACT | JSON_SORT_KEYS);
        _cleanup_free_ char *path = event_path(o, seq);
        int r = fs_write_file_atomic(path, text, strlen(text), 0600, err);
        if (r >= 0) {
                o->last_seq = seq;
                json_array_append(o->pending, event);
        }
        pthread_mutex_unlock(&o->lock);
        return r;
}

json_t *outbox_pending(struct outbox *o)
{
        pthread_mutex_lock(&o->lock);
        json_t *copy = json_deep_copy(o->pending);
        pthread_mutex_unlock(&o->lock);
        return copy;
}

void outbox_ack(struct outbox *o, int64_t seq)
{
        pthread_mutex_lock(&o->lock);
        json_t *first = json_array_get(o->pending, 0);
        if (first && json_integer_value(json_object_get(first, "seq")) <= seq) {
                /* the files about to go may hold the highest number used */
                _cleanup_free_ char *last_path = xasprintf("%s/last-seq", o->dir);
                char last[32];
                int n = snprintf(last, sizeof(last), "%lld\n", (long long)o->last_seq);
                struct tess_error *err = NULL;
                if (fs_write_file_atomic(last_path, last, (size_t)n, 0600, &err) < 0) {
                        log_warn("outbox: %s; the acknowledged events stay", err->msg);
                        tess_error_free(err); /* their files tell the number */
                        pthread_mutex_unlock(&o->lock);
                        return;
                }
        }
        while (json_array_size(o->pending) > 0) {
                json_t *first = json_array_get(o->pending, 0);
                int64_t s = json_integer_value(json_object_get(first, "seq"));
                if (s > seq)
                        break;
                _cleanup_free_ char *path = event_path(o, s);
                unlink(path);
                json_array_remove(o->pending, 0);
        }
        pthread_mutex_unlock(&o->lock);
}

int outbox_count(struct outbox *o)
{
        pthread_mutex_lock(&o->lock);
        int n = (int)json_array_size(o->pending);
        pthread_mutex_unlock(&o->lock);
        return n;
}
