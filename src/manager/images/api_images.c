/* api_images.c - GET /images: the images a user may start sessions from,
 * grouped by name with their versions and aliases (what a launcher
 * shows).  Hidden images, those of registries the caller's domain does
 * not allow and the private images (session commits) the caller may not
 * see (session_image.h: struct image_viewer) are left out. */
#include "common/compat.h"

#include "manager/api/api.h"
#include "manager/core/manager.h"
#include "manager/db/db.h"
#include "manager/images/api_images.h"
#include "manager/images/session_image.h"

/* The aliases of image `id` as a JSON array of strings. */
static json_t *aliases_of(const struct db_rows *al, const char *id)
{
        json_t *a = json_array();
        for (int i = 0; i < al->nrows; i++)
                if (streq(db_get(al, i, 1), id))
                        json_array_append_new(a, json_string(db_get(al, i, 0)));
        return a;
}

int images_visible(struct api_ctx *c, json_t **ret, struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *rows = NULL, *al = NULL;
        json_t *items = json_array();

        int r = DBQ(c->m->db,
                    "SELECT id, name, tag, architecture, registry, digest, labels, owner_id, size_bytes FROM images"
                    " WHERE hidden = 0 AND" IMAGE_VISIBLE_SQL " ORDER BY name, tag, architecture",
                    &rows, err, IMAGE_VIEWER_ARGS(&IMAGE_VIEWER_OF(c, c->who.user_id)));
        if (r >= 0)
                r = DBQ(c->m->db, "SELECT alias, image_id FROM image_aliases ORDER BY alias", &al, err);
        for (int i = 0; r >= 0 && i < rows->nrows; i++) {
                const char *name = db_getn(rows, i, "name"), *id = db_getn(rows, i, "id");
                r = session_image_allowed(c->m, c->who.domain, db_getn(rows, i, "registry"), name, err);
                if (r <= 0)
                        continue;
                json_t *labels = json_loads(db_getn(rows, i, "labels"), 0, NULL);
                json_array_append_new(
                        items, json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:o, s:o, s:b, s:I}", "id", id, "name", name,
                                         "registry", db_getn(rows, i, "registry"), "tag", db_getn(rows, i, "tag"),
                                         "architecture", db_getn(rows, i, "architecture"), "digest",
                                         db_getn(rows, i, "digest"), "labels", labels ? labels : json_object(),
                                         "aliases", aliases_of(al, id), "private", db_getn(rows, i, "owner_id") != NULL,
                                         "size_bytes", (json_int_t)db_get_int(rows, i, "size_bytes")));
        }
        if (r < 0) {
                json_decref(items);
                return r;
        }
        *ret = items;
        return 0;
}

void api_images_list(struct api_ctx *c)
{
        struct tess_error *err = NULL;
        json_t *flat, *items = json_array(), *group = NULL, *v;
        const char *last = NULL;
        size_t i;

        if (images_visible(c, &flat, &err) < 0) {
                json_decref(items);
                return api_fail(c, err);
        }
        json_array_foreach(flat, i, v) {
                const char *name = json_string_value(json_object_get(v, "name"));
                if (!last || !streq(last, name)) {
                        group = json_pack("{s:s, s:[], s:[]}", "name", name, "versions", "aliases");
                        json_array_append_new(items, group);
                        last = name;
                }
                json_array_extend(json_object_get(group, "aliases"), json_object_get(v, "aliases"));
                json_t *version = json_deep_copy(v);
                json_object_del(version, "name");
                json_object_del(version, "registry");
                json_array_append_new(json_object_get(group, "versions"), version);
        }
        api_json(c, 200, json_pack("{s:o}", "images", items));
        json_decref(flat);
}
