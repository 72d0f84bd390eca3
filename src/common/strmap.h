/* strmap.h - a map from strings to ints (open addressing, FNV-1a), for
 * building indexes over query results.  Keys are copied. */
#ifndef TESS_STRMAP_H
#define TESS_STRMAP_H

#include <stddef.h>

struct strmap {
        size_t cap, n;
        char **keys;
        int *vals;
};

void strmap_init(struct strmap *m);
void strmap_free(struct strmap *m);
/* The value of key, or -1 when absent. */
int strmap_get(const struct strmap *m, const char *key);
/* Set key to val (val >= 0). */
void strmap_put(struct strmap *m, const char *key, int val);

#endif
