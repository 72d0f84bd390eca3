/* image_budget.c - the store's disk budget: when its blobs and unpacked
 * layers take more than the budget, untag the least recently used images
 * no container uses and collect the garbage, until it fits.
 *
 * A run takes the gc lock (so no container is being started from the
 * store and no pull is writing into it: image_hold.c) and the store lock,
 * and measures every blob and layer (allocated bytes, each file once: a
 * layer's hard links count once).  Within the budget, that is all.  Over
 * it, it asks which layers containers use (the containers on disk), finds
 * what each tagged image reaches (image_reach), lets image_lru.c choose,
 * untags the chosen in one rewrite of index.json and runs gc.  Layers never
 * change once unpacked, so their sizes are cached for the life of the
 * store handle, and new ones are measured before the locks are taken: the
 * locks are held for directory listings and small reads. */
#include "common/compat.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "common/disk_usage.h"
#include "common/strmap.h"
#include "image/image-internal.h"

/* ---- layer sizes ---- */

/* What layers/sha256/<hex> takes, the directory itself included; -1 when
 * it is not there. */
static int64_t layer_bytes(struct image_store *st, const char *hex)
{
        struct disk_usage_walk w = { 0 };
        struct stat s;
        int64_t bytes;
        int fd;

        if (image_layer_sizes_get(st->layer_sizes, hex, &bytes))
                return bytes;
        fd = openat(st->layersfd, hex, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 || fstat(fd, &s) < 0) {
                if (fd >= 0)
                        close(fd);
                return -1;
        }
        disk_usage_walk_fd(fd, &w);
        disk_usage_walk_release(&w);
        bytes = (int64_t)s.st_blocks * 512 + w.bytes;
        image_layer_sizes_put(st->layer_sizes, hex, bytes);
        return bytes;
}

/* Call fn for each entry of the store's directory `rel` (not . and ..);
 * opened anew, so that no other reader shares its offset. */
static int each_entry(struct image_store *st, const char *rel, void (*fn)(void *data, int dirfd, const char *name),
                      void *data, struct tess_error **err)
{
        int fd = openat(st->dirfd, rel, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        struct dirent *de;
        DIR *d;

        if (fd < 0 || !(d = fdopendir(fd))) {
                int r = tess_err(err, errno, "reading '%s/%s': %s", st->dir, rel, strerror(errno));
                if (fd >= 0)
                        close(fd);
                return r;
        }
        while ((de = readdir(d))) {
                if (!streq(de->d_name, ".") && !streq(de->d_name, ".."))
                        fn(data, dirfd(d), de->d_name);
        }
        closedir(d);
        return 0;
}

static void measure_layer(void *data, int dirfd UNUSED, const char *name)
{
        layer_bytes(data, name);
}

/* ---- the objects (blobs and layers) and the images reaching them ---- */

struct objects {
        struct strmap slot; /* "sha256:<hex>" (blobs), "<hex>" (layers) -> index */
        int64_t *bytes;
        bool *pinned; /* a layer a container uses */
        size_t n, cap;
        int64_t total;
};

static void object_add(struct objects *o, const char *key, int64_t bytes)
{
        if (bytes < 0 || strmap_get(&o->slot, key) >= 0)
                return;
        if (o->n == o->cap) {
                o->cap = o->cap ? 2 * o->cap : 64;
                o->bytes = xrealloc(o->bytes, o->cap * sizeof(*o->bytes));
                o->pinned = xrealloc(o->pinned, o->cap * sizeof(*o->pinned));
        }
        o->bytes[o->n] = bytes;
        o->pinned[o->n] = false;
        strmap_put(&o->slot, key, (int)o->n++);
        o->total += bytes;
}

static void objects_release(struct objects *o)
{
        strmap_free(&o->slot);
        free(o->bytes);
        free(o->pinned);
}

static void add_blob(void *data, int dirfd, const char *name)
{
        struct objects *o = data;
        _cleanup_free_ char *key = xasprintf("sha256:%s", name);
        struct stat s;

        if (fstatat(dirfd, name, &s, AT_SYMLINK_NOFOLLOW) == 0)
                object_add(o, key, (int64_t)s.st_blocks * 512);
}

struct layer_ctx {
        struct image_store *st;
        struct objects *o;
};

static void add_layer(void *data, int dirfd UNUSED, const char *name)
{
        struct layer_ctx *c = data;
        object_add(c->o, name, layer_bytes(c->st, name));
}

static int measure(struct image_store *st, struct objects *o, struct tess_error **err)
{
        struct layer_ctx lc = { st, o };
        int r = each_entry(st, "blobs/sha256", add_blob, o, err);

        if (r >= 0)
                r = each_entry(st, "layers/sha256", add_layer, &lc, err);
        return r;
}

/* One tagged image: the objects it reaches, and whether every layer of it
 * is in use. */
struct image_facts {
        const struct objects *o;
        const struct strmap *in_use;
        size_t *objects;
        size_t n_objects, cap;
        size_t n_layers, n_layers_in_use;
};

static void reached(void *data, bool layer, const char *key)
{
        struct image_facts *f = data;
        int i = strmap_get(&f->o->slot, key);

        if (layer) {
                f->n_layers++;
                f->n_layers_in_use += strmap_get(f->in_use, key) >= 0;
        }
        if (i < 0)
                return; /* not in the store */
        if (f->n_objects == f->cap) {
                f->cap = f->cap ? 2 * f->cap : 8;
                f->objects = xrealloc(f->objects, f->cap * sizeof(*f->objects));
        }
        f->objects[f->n_objects++] = (size_t)i;
}

/* ---- a run ---- */

struct budget_run {
        struct image_store *st;
        int64_t budget;
        image_in_use_fn list_in_use;
        void *in_use_data;
        char **in_use_dirs;   /* the containers' layer dirs */
        struct strmap in_use; /* their diff_id hexes */
        struct objects o;
        struct image_descriptor *index;
        size_t n_index;
        struct image_lru_image *images;
        struct image_facts *facts;
        size_t n_images;
};

/* The layers containers use: in_use_dirs, b->in_use and the pinned objects. */
static int gather_in_use(struct budget_run *b, struct tess_error **err)
{
        int r = b->list_in_use ? b->list_in_use(b->in_use_data, &b->in_use_dirs, err) : 0;

        if (r < 0)
                return r;
        for (char **p = b->in_use_dirs; p && *p; p++) {
                const char *key = image_layer_dir_key(b->st, *p);
                int i = key ? strmap_get(&b->o.slot, key) : -1;
                if (key)
                        strmap_put(&b->in_use, key, 1);
                if (i >= 0)
                        b->o.pinned[i] = true;
        }
        return 0;
}

static int gather_images(struct budget_run *b, struct tess_error **err)
{
        int r = image_index_load(b->st, &b->index, &b->n_index, err);

        if (r < 0)
                return r;
        b->images = xcalloc(b->n_index + 1, sizeof(*b->images));
        b->facts = xcalloc(b->n_index + 1, sizeof(*b->facts));
        for (size_t i = 0; i < b->n_index; i++) {
                const struct image_descriptor *d = &b->index[i];
                struct image_facts *f = &b->facts[i];
                *f = (struct image_facts){ .o = &b->o, .in_use = &b->in_use };
                r = image_reach(b->st, d->digest, reached, f, err);
                if (r < 0)
                        return r;
                b->images[i] = (struct image_lru_image){
                        .ref = d->ref_name ? d->ref_name : "",
                        .last_used = image_last_used(b->st, d->digest),
                        /* an entry without a name cannot be untagged by name: kept */
                        .in_use = !d->ref_name || (f->n_layers > 0 && f->n_layers_in_use == f->n_layers),
                        .objects = f->objects,
                        .n_objects = f->n_objects,
                };
        }
        b->n_images = b->n_index;
        return 0;
}

/* Untag what image_lru_plan() chose, then gc. */
static int untag_and_collect(struct budget_run *b, struct image_budget_report *ret, struct tess_error **err)
{
        _cleanup_free_ size_t *chosen = xcalloc(b->n_images + 1, sizeof(*chosen));
        _cleanup_free_ int64_t *gives = xcalloc(b->n_images + 1, sizeof(*gives));
        int64_t freed = 0, kept;
        size_t n = image_lru_plan(b->images, b->n_images, b->o.bytes, b->o.pinned, b->o.n, b->budget, chosen, gives,
                                  &kept);
        _cleanup_free_ char **refs = xcalloc(n + 1, sizeof(*refs));
        int r;

        for (size_t i = 0; i < n; i++)
                refs[i] = b->index[chosen[i]].ref_name;
        if (n > 0) {
                r = image_index_untag_locked(b->st, refs, err);
                if (r < 0)
                        return r;
        }
        ret->removed = xcalloc(n + 1, sizeof(*ret->removed));
        for (size_t i = 0; i < n; i++)
                ret->removed[i] = (struct image_removal){ .ref = xstrdup(refs[i]),
                                                          .last_used = b->images[chosen[i]].last_used,
                                                          .bytes = gives[i] };
        ret->n_removed = n;
        r = image_gc_locked(b->st, (const char *const *)b->in_use_dirs, &freed, err);
        ret->after = ret->before - freed;
        return r;
}

/* (gc lock and store lock held) */
static int apply_locked(struct budget_run *b, struct image_budget_report *ret, struct tess_error **err)
{
        int r = measure(b->st, &b->o, err);

        if (r < 0)
                return r;
        ret->before = ret->after = b->o.total;
        if (b->o.total <= b->budget)
                return 0;
        r = gather_in_use(b, err);
        if (r >= 0)
                r = gather_images(b, err);
        if (r >= 0)
                r = untag_and_collect(b, ret, err);
        return r;
}

static void budget_run_release(struct budget_run *b)
{
        image_strv_free(b->in_use_dirs);
        strmap_free(&b->in_use);
        objects_release(&b->o);
        for (size_t i = 0; i < b->n_index && b->facts; i++)
                free(b->facts[i].objects);
        free(b->facts);
        free(b->images);
        if (b->index)
                image_descriptors_free(b->index, b->n_index);
}

int image_store_apply_budget(struct image_store *st, int64_t budget, bool wait, image_in_use_fn in_use,
                             void *in_use_data, struct image_budget_report *ret, struct tess_error **err)
{
        struct budget_run b = { .st = st, .budget = budget, .list_in_use = in_use, .in_use_data = in_use_data };
        int gc_fd = -1, r;

        *ret = (struct image_budget_report){ 0 };
        strmap_init(&b.in_use);
        strmap_init(&b.o.slot);
        /* new layers measured before the locks are taken */
        (void)each_entry(st, "layers/sha256", measure_layer, st, NULL);
        r = image_gc_lock(st, wait, &gc_fd, err);
        if (r >= 0) {
                r = image_store_lock(st, err);
                if (r >= 0) {
                        r = apply_locked(&b, ret, err);
                        image_store_unlock(st);
                }
                image_gc_unlock(gc_fd);
        }
        budget_run_release(&b);
        if (r < 0) {
                image_budget_report_release(ret);
                if (r == -EBUSY)
                        return r;
                return tess_err_wrap(err, "applying the disk budget of '%s'", st->dir);
        }
        return 0;
}

void image_budget_report_release(struct image_budget_report *r)
{
        for (size_t i = 0; i < r->n_removed; i++)
                free(r->removed[i].ref);
        free(r->removed);
        *r = (struct image_budget_report){ 0 };
}
