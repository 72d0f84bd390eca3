/* session_image.c - resolve the image of a session create, and which
 * images a caller may see (session_image.h). */
#include "common/compat.h"

#include <jansson.h>

#include "manager/images/session_image.h"

/* The registry an image comes from: its registry column, else the first
 * component of its name when it looks like a host ("registry.local",
 * "host:5000", "localhost"); "" for the manager's own (imported) images. */
static char *image_registry(const char *registry, const char *name)
{
        const char *slash = strchr(name, '/');

        if (registry && *registry)
                return xstrdup(registry);
        if (!slash)
                return xstrdup("");
        char *first = xstrndup(name, (size_t)(slash - name));
        if (strchr(first, '.') || strchr(first, ':') || streq(first, "localhost"))
                return first;
        free(first);
        return xstrdup("");
}

int session_image_allowed(struct manager *m, const char *domain, const char *registry_col, const char *name,
                          struct tess_error **err)
{
        _cleanup_free_ char *registry = image_registry(registry_col, name);
        _cleanup_rows_ struct db_rows *d = NULL;
        int r = DBQ(m->db, "SELECT allowed_docker_registries FROM domains WHERE name = ?", &d, err, DB_TEXT(domain));
        if (r < 0)
                return r;
        if (d->nrows == 0 || !*registry)
                return 1;
        json_t *list = json_loads(db_get(d, 0, 0), 0, NULL);
        size_t i;
        json_t *v;
        int ok = !json_is_array(list) || json_array_size(list) == 0;
        json_array_foreach(list, i, v) {
                if (json_is_string(v) && streq(json_string_value(v), registry))
                        ok = 1;
        }
        json_decref(list);
        return ok;
}

int session_image_resolve(struct manager *m, const char *ref, const char *arch, const char *domain,
                          const struct image_viewer *viewer, struct db_rows **ret, struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *alias = NULL;
        _cleanup_free_ char *name = NULL, *tag = NULL;
        const char *slash = strrchr(ref, '/'), *colon = strrchr(ref, ':');
        int r;

        if (strchr(ref, '@'))
                return tess_err(err, EINVAL, "image '%s': refer to images by name and tag, not digest", ref);
        r = DBQ(m->db, "SELECT i.name, i.tag FROM image_aliases a JOIN images i ON i.id = a.image_id WHERE a.alias = ?",
                &alias, err, DB_TEXT(ref));
        if (r < 0)
                return r;
        if (alias->nrows > 0) {
                name = xstrdup(db_get(alias, 0, 0));
                tag = xstrdup(db_get(alias, 0, 1));
        } else if (colon && (!slash || colon > slash)) {
                name = xstrndup(ref, (size_t)(colon - ref));
                tag = xstrdup(colon + 1);
        } else {
                name = xstrdup(ref);
                tag = xstrdup("latest");
        }
        _cleanup_free_ char *suffix = xasprintf("%%/%s", name);
        r = DBQ(m->db,
                "SELECT id, name, tag, registry, hidden, min_resources, max_resources, labels FROM images"
                " WHERE (name = ? OR name LIKE ? OR (registry <> '' AND registry || '/' || name = ?))"
                " AND tag = ? AND architecture = ? AND" IMAGE_VISIBLE_SQL " ORDER BY length(name) LIMIT 2",
                ret, err, DB_TEXT(name), DB_TEXT(suffix), DB_TEXT(name), DB_TEXT(tag), DB_TEXT(arch),
                IMAGE_VIEWER_ARGS(viewer));
        if (r < 0)
                return r;
        if ((*ret)->nrows == 0) {
                *ret = db_rows_free(*ret);
                return tess_err(err, EINVAL, "image '%s' is not registered (for %s)", ref, arch);
        }
        if (db_get_int(*ret, 0, "hidden")) {
                *ret = db_rows_free(*ret);
                return tess_err(err, EINVAL, "image '%s' is hidden: it may not be used for new sessions", ref);
        }
        r = session_image_allowed(m, domain, db_getn(*ret, 0, "registry"), db_getn(*ret, 0, "name"), err);
        if (r <= 0) {
                _cleanup_free_ char *reg = image_registry(db_getn(*ret, 0, "registry"), db_getn(*ret, 0, "name"));
                *ret = db_rows_free(*ret);
                return r < 0 ? r
                             : tess_err(err, EINVAL, "image '%s': registry '%s' is not allowed in domain '%s'", ref,
                                        reg, domain);
        }
        return 0;
}
