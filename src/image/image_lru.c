/* image_lru.c - which images to untag so that the store fits its disk
 * budget (image_budget.c gathers the facts, this file decides; pure, so
 * that the unit test can feed it any store).
 *
 * Every object (a blob or an unpacked layer) counts while an image still
 * reaches it or a container pins it; the images are taken least recently
 * used first (ties by reference), those in use skipped, and each one taken
 * gives back the objects nothing else reaches, until what is still reached
 * fits the budget. */
#include "common/compat.h"

#include "image/image-internal.h"

static int cmp_lru(const void *a, const void *b)
{
        const struct image_lru_image *x = *(const struct image_lru_image *const *)a;
        const struct image_lru_image *y = *(const struct image_lru_image *const *)b;

        if (x->last_used != y->last_used)
                return x->last_used < y->last_used ? -1 : 1;
        return strcmp(x->ref, y->ref);
}

size_t image_lru_plan(const struct image_lru_image *images, size_t n, const int64_t *bytes, const bool *pinned,
                      size_t n_objects, int64_t budget, size_t *ret_chosen, int64_t *ret_freed, int64_t *ret_kept)
{
        _cleanup_free_ size_t *holders = xcalloc(n_objects + 1, sizeof(*holders));
        _cleanup_free_ const struct image_lru_image **order = xcalloc(n + 1, sizeof(*order));
        int64_t kept = 0;
        size_t chosen = 0;

        for (size_t i = 0; i < n; i++) {
                order[i] = &images[i];
                for (size_t k = 0; k < images[i].n_objects; k++)
                        holders[images[i].objects[k]]++;
        }
        for (size_t o = 0; o < n_objects; o++) {
                holders[o] += pinned && pinned[o];
                if (holders[o])
                        kept += bytes[o];
        }
        qsort(order, n, sizeof(*order), cmp_lru);
        for (size_t i = 0; i < n && kept > budget; i++) {
                const struct image_lru_image *img = order[i];
                int64_t freed = 0;
                if (img->in_use)
                        continue;
                for (size_t k = 0; k < img->n_objects; k++) {
                        if (--holders[img->objects[k]] == 0)
                                freed += bytes[img->objects[k]];
                }
                kept -= freed;
                ret_chosen[chosen] = (size_t)(img - images);
                ret_freed[chosen] = freed;
                chosen++;
        }
        *ret_kept = kept;
        return chosen;
}
