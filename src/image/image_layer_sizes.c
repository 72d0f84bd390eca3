/* image_layer_sizes.c - the disk space of unpacked layers, cached per
 * store handle (image-internal.h): a layer never changes once unpacked, so
 * the disk budget (image_budget.c) measures each one once. */
#include "common/compat.h"

#include <pthread.h>

#include "common/strmap.h"
#include "image/image-internal.h"

struct image_layer_sizes {
        pthread_mutex_t lock;
        struct strmap slot; /* diff_id hex -> index into bytes */
        int64_t *bytes;
        size_t n, cap;
};

struct image_layer_sizes *image_layer_sizes_new(void)
{
        struct image_layer_sizes *c = xcalloc(1, sizeof(*c));

        pthread_mutex_init(&c->lock, NULL);
        strmap_init(&c->slot);
        return c;
}

struct image_layer_sizes *image_layer_sizes_free(struct image_layer_sizes *c)
{
        if (c) {
                strmap_free(&c->slot);
                free(c->bytes);
                pthread_mutex_destroy(&c->lock);
                free(c);
        }
        return NULL;
}

bool image_layer_sizes_get(struct image_layer_sizes *c, const char *hex, int64_t *ret)
{
        pthread_mutex_lock(&c->lock);
        int i = strmap_get(&c->slot, hex);
        if (i >= 0)
                *ret = c->bytes[i];
        pthread_mutex_unlock(&c->lock);
        return i >= 0;
}

void image_layer_sizes_put(struct image_layer_sizes *c, const char *hex, int64_t bytes)
{
        pthread_mutex_lock(&c->lock);
        if (strmap_get(&c->slot, hex) < 0) {
                if (c->n == c->cap) {
                        c->cap = c->cap ? 2 * c->cap : 64;
                        c->bytes = xrealloc(c->bytes, c->cap * sizeof(*c->bytes));
                }
                c->bytes[c->n] = bytes;
                strmap_put(&c->slot, hex, (int)c->n++);
        }
        pthread_mutex_unlock(&c->lock);
}
