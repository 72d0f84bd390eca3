/* api_config.c - Backend.AI's /config routes its clients read:
 *
 *   GET /config/resource-slots      {slot: "count"|"bytes"}: the slots
 *                                   sessions may ask for (cpu, mem, and
 *                                   what the agents that are not lost offer)
 *   GET /config/docker-registries   {name: url} of the registries images
 *                                   are scanned from (superadmins)
 *
 * (GET /config/vfolder-types is /folders/_/allowed-types.) */
#include "common/compat.h"

#include "common/slots.h"
#include "manager/api/api.h"
#include "manager/core/manager.h"
#include "manager/db/db.h"
#include "manager/main.h"

static void add_slot(json_t *out, const char *name)
{
        const struct slot_type *t = slot_type_find(name);
        json_object_set_new(out, name, json_string(t && t->unit == SLOT_UNIT_BYTES ? "bytes" : "count"));
}

void api_config_resource_slots(struct api_ctx *c)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        struct tess_error *err = NULL;
        json_t *out = json_object();
        const char *name;
        json_t *v;

        if (DBQ(c->m->db, "SELECT available_slots FROM agents WHERE status <> 'LOST'", &rows, &err) < 0) {
                json_decref(out);
                return api_fail(c, err);
        }
        add_slot(out, "cpu");
        add_slot(out, "mem");
        for (int i = 0; i < rows->nrows; i++) {
                json_t *slots = json_loads(db_get(rows, i, 0), 0, NULL);
                json_object_foreach(slots, name, v)
                        add_slot(out, name);
                json_decref(slots);
        }
        api_json(c, 200, out);
}

void api_config_docker_registries(struct api_ctx *c)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        struct tess_error *err = NULL;

        if (DBQ(c->m->db, "SELECT name, url FROM container_registries ORDER BY name", &rows, &err) < 0)
                return api_fail(c, err);
        json_t *out = json_object();
        for (int i = 0; i < rows->nrows; i++)
                json_object_set_new(out, db_get(rows, i, 0), json_string(db_get(rows, i, 1)));
        api_json(c, 200, out);
}
