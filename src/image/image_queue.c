/* image_queue.c - a bounded queue of bytes from one producer thread to one
 * consumer thread: a layer on its way from the download to the unpacker,
 * and from the decompressor to the tar reader.  The producer copies into
 * chunks of IMAGE_QUEUE_CHUNK bytes and waits while IMAGE_QUEUE_DEPTH are
 * queued; the consumer takes a chunk at a time and holds it until it asks
 * for the next (libarchive's read callback contract), then gives it back
 * for the producer to fill again.  Either side may
 * give up: the producer closes the queue as broken off, the consumer fails
 * it, after which writes only return false.  See image-internal.h. */
#include "common/compat.h"

#include "image/image-internal.h"

struct image_queue_chunk {
        struct image_queue_chunk *next;
        size_t len;
        char data[IMAGE_QUEUE_CHUNK];
};

void image_queue_init(struct image_queue *q)
{
        *q = (struct image_queue){ 0 };
        pthread_mutex_init(&q->lock, NULL);
        pthread_cond_init(&q->cond, NULL);
}

static void chunks_free(struct image_queue_chunk *c)
{
        while (c) {
                struct image_queue_chunk *next = c->next;
                free(c);
                c = next;
        }
}

void image_queue_release(struct image_queue *q)
{
        chunks_free(q->head);
        chunks_free(q->spare);
        free(q->fill);
        free(q->held);
        pthread_mutex_destroy(&q->lock);
        pthread_cond_destroy(&q->cond);
        *q = (struct image_queue){ 0 };
}

/* Queue the chunk being filled; false when the consumer gave up. */
static bool push(struct image_queue *q)
{
        struct image_queue_chunk *c = TAKE_PTR(q->fill);
        bool ok;

        pthread_mutex_lock(&q->lock);
        while (q->depth >= IMAGE_QUEUE_DEPTH && !q->failed)
                pthread_cond_wait(&q->cond, &q->lock);
        ok = !q->failed;
        if (ok) {
                if (q->tail)
                        q->tail->next = c;
                else
                        q->head = c;
                q->tail = c;
                q->depth++;
                pthread_cond_broadcast(&q->cond);
                if (q->spare) { /* the next to fill */
                        q->fill = q->spare;
                        q->spare = q->spare->next;
                        q->fill->len = 0;
                        q->fill->next = NULL;
                }
        }
        pthread_mutex_unlock(&q->lock);
        if (!ok)
                free(c);
        return ok;
}

bool image_queue_write(struct image_queue *q, const void *p, size_t n)
{
        const char *s = p;

        while (n > 0) {
                size_t k;
                if (!q->fill) {
                        q->fill = xmalloc(sizeof(*q->fill));
                        q->fill->len = 0;
                        q->fill->next = NULL;
                }
                k = IMAGE_QUEUE_CHUNK - q->fill->len < n ? IMAGE_QUEUE_CHUNK - q->fill->len : n;
                memcpy(q->fill->data + q->fill->len, s, k);
                q->fill->len += k;
                s += k;
                n -= k;
                if (q->fill->len == IMAGE_QUEUE_CHUNK && !push(q))
                        return false;
        }
        return true;
}

bool image_queue_close(struct image_queue *q, bool complete)
{
        bool ok = true;

        if (complete && q->fill && q->fill->len > 0)
                ok = push(q);
        pthread_mutex_lock(&q->lock);
        q->closed = true;
        q->broken = !complete;
        ok = ok && !q->failed;
        pthread_cond_broadcast(&q->cond);
        pthread_mutex_unlock(&q->lock);
        return ok;
}

ssize_t image_queue_read(struct image_queue *q, const void **ret)
{
        struct image_queue_chunk *c;
        ssize_t n;

        pthread_mutex_lock(&q->lock);
        if (q->held) { /* given back, to be filled again */
                q->held->next = q->spare;
                q->spare = TAKE_PTR(q->held);
        }
        while (!q->head && !q->closed)
                pthread_cond_wait(&q->cond, &q->lock);
        c = q->head;
        if (q->broken) {
                n = -1;
        } else if (!c) {
                n = 0; /* closed, and all read */
        } else {
                q->head = c->next;
                if (!q->head)
                        q->tail = NULL;
                q->depth--;
                pthread_cond_broadcast(&q->cond);
                q->held = c;
                *ret = c->data;
                n = (ssize_t)c->len;
        }
        pthread_mutex_unlock(&q->lock);
        return n;
}

void image_queue_fail(struct image_queue *q)
{
        struct image_queue_chunk *c;

        pthread_mutex_lock(&q->lock);
        q->failed = true;
        c = q->head;
        q->head = q->tail = NULL;
        q->depth = 0;
        pthread_cond_broadcast(&q->cond);
        pthread_mutex_unlock(&q->lock);
        chunks_free(c);
}
