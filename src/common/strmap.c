/* strmap.c - see strmap.h. */
#include "common/compat.h"

#include "common/strmap.h"

static size_t hash(const char *s)
{
        size_t h = 14695981039346656037ULL;
        for (; *s; s++)
                h = (h ^ (unsigned char)*s) * 1099511628211ULL;
        return h;
}

void strmap_init(struct strmap *m)
{
        *m = (struct strmap){ 0 };
}

void strmap_free(struct strmap *m)
{
        for (size_t i = 0; i < m->cap; i++)
                free(m->keys[i]);
        free(m->keys);
        free(m->vals);
        strmap_init(m);
}

static size_t slot_of(const struct strmap *m, const char *key)
{
        size_t i = hash(key) & (m->cap - 1);
        while (m->keys[i] && !streq(m->keys[i], key))
                i = (i + 1) & (m->cap - 1);
        return i;
}

int strmap_get(const struct strmap *m, const char *key)
{
        if (m->cap == 0)
                return -1;
        size_t i = slot_of(m, key);
        return m->keys[i] ? m->vals[i] : -1;
}

static void grow(struct strmap *m)
{
        struct strmap bigger = { .cap = m->cap ? 2 * m->cap : 64 };

        bigger.keys = xcalloc(bigger.cap, sizeof(char *));
        bigger.vals = xcalloc(bigger.cap, sizeof(int));
        for (size_t i = 0; i < m->cap; i++) {
                if (!m->keys[i])
                        continue;
                size_t j = slot_of(&bigger, m->keys[i]);
                bigger.keys[j] = m->keys[i];
                bigger.vals[j] = m->vals[i];
                bigger.n++;
        }
        free(m->keys);
        free(m->vals);
        *m = bigger;
}

void strmap_put(struct strmap *m, const char *key, int val)
{
        if (2 * (m->n + 1) > m->cap)
                grow(m);
        size_t i = slot_of(m, key);
        if (!m->keys[i]) {
                m->keys[i] = xstrdup(key);
                m->n++;
        }
        m->vals[i] = val;
}
