/* container_layers.c - the image layers the containers on disk were
 * created on, for the image store's gc and disk budget: a layer a
 * container names must stay, whether it runs or has exited and is not yet
 * removed. */
#include "common/compat.h"

#include "agent/container/container-internal.h"
#include "agent/container/container.h"

/* Append rec's layers to *v (n used). */
static void append_layers(char ***v, size_t *n, char **layers)
{
        size_t k = 0;

        while (layers && layers[k])
                k++;
        *v = xrealloc(*v, (*n + k + 1) * sizeof(char *));
        for (size_t i = 0; i < k; i++)
                (*v)[(*n)++] = xstrdup(layers[i]);
        (*v)[*n] = NULL;
}

int container_layers_in_use(const struct container_config *cfg, char ***ret, struct tess_error **err)
{
        char **ids = NULL, **layers = xcalloc(1, sizeof(char *));
        size_t n_ids = 0, n = 0;
        int r;

        r = container_list(cfg, &ids, &n_ids, err);
        for (size_t i = 0; r >= 0 && i < n_ids; i++) {
                _cleanup_free_ char *dir = container_dir(cfg, ids[i]);
                struct container_record rec = { 0 };
                r = container_record_read(dir, &rec, err);
                if (r == -ENOENT) { /* created no further than its directory: never mounted */
                        if (err)
                                *err = tess_error_free(*err);
                        r = 0;
                        continue;
                }
                if (r < 0) {
                        r = tess_err_wrap(err, "reading the layers of container '%s'", ids[i]);
                        break;
                }
                append_layers(&layers, &n, rec.layers);
                container_record_release(&rec);
        }
        for (size_t i = 0; i < n_ids; i++)
                free(ids[i]);
        free(ids);
        if (r < 0) {
                for (size_t i = 0; i < n; i++)
                        free(layers[i]);
                free(layers);
                return r;
        }
        *ret = layers;
        return 0;
}
