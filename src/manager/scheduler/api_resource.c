/* api_resource.c - /resource/presets, /resource/check-presets and
 * /resource/recalculate-usage.
 *
 * check-presets answers, for the caller's keypair, the given project and
 * resource group: limits, what is in use and what remains (unlimited is
 * the string "Infinity"), and for each preset whether it fits now.  The
 * keypair's "using" is its user's, all the user's keypairs together, as
 * the scheduler counts it. */
#include "common/compat.h"

#include "common/slots.h"
#include "manager/accounts/model.h"
#include "manager/api/api.h"
#include "manager/core/manager.h"
#include "manager/db/db.h"
#include "manager/http/http.h"
#include "manager/scheduler/scheduler.h"

static const char *const base_slots[] = { "cpu", "mem", "cuda.device", "cuda.shares" };

/* Statuses that hold resources. */
#define OCCUPYING "('SCHEDULED', 'PREPARING', 'PULLING', 'CREATING', 'RUNNING', 'TERMINATING')"

static json_t *presets_json(struct api_ctx *c, const char *rg, struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        int r = DBQ(c->m->db,
                    "SELECT name, resource_slots, shared_memory, resource_group FROM resource_presets"
                    " WHERE resource_group IS NULL OR resource_group = ? ORDER BY name",
                    &rows, err, DB_TEXT(rg ? rg : ""));
        if (r < 0)
                return NULL;
        json_t *a = json_array();
        for (int i = 0; i < rows->nrows; i++) {
                json_t *slots = json_loads(db_get(rows, i, 1), 0, NULL);
                const char *shm = db_get(rows, i, 2), *g = db_get(rows, i, 3);
                json_array_append_new(a, json_pack("{s:s, s:o, s:o, s:o}", "name", db_get(rows, i, 0),
                                                   "resource_slots", slots ? slots : json_object(), "shared_memory",
                                                   shm ? json_string(shm) : json_null(), "scaling_group_name",
                                                   g ? json_string(g) : json_null()));
        }
        return a;
}

void api_resource_presets(struct api_ctx *c)
{
        struct tess_error *err = NULL;
        json_t *a = presets_json(c, http_query(c->req, "scaling_group"), &err);
        if (!a)
                return api_fail(c, err);
        api_json(c, 200, json_pack("{s:o}", "presets", a));
}

static int sum_sessions(struct api_ctx *c, const char *where, const char *arg, struct slots *ret,
                        struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        _cleanup_free_ char *q =
                xasprintf("SELECT occupying_slots, requested_slots FROM sessions WHERE %s AND status IN " OCCUPYING,
                          where);
        int r = DBQ(c->m->db, q, &rows, err, DB_TEXT(arg));
        if (r < 0)
                return r;
        slots_init(ret);
        for (int i = 0; i < rows->nrows; i++) {
                struct slots one;
                const char *occ = db_get(rows, i, 0);
                if (slots_from_text(&one, occ && strcmp(occ, "{}") ? occ : db_get(rows, i, 1), NULL) == 0)
                        slots_add(ret, &one, NULL);
        }
        return 0;
}

/* Every base slot present: absent ones get `value` (Infinity for limits,
 * 0 for usage and capacity). */
static void fill_missing(struct slots *s, int64_t value)
{
        for (size_t i = 0; i < ARRAY_SIZE(base_slots); i++)
                if (!slots_has(s, base_slots[i]))
                        slots_set(s, base_slots[i], value, NULL);
}

static void remaining(const struct slots *limit, const struct slots *used, struct slots *ret)
{
        slots_init(ret);
        for (int i = 0; i < limit->n; i++) {
                int64_t l = limit->s[i].value, u = slots_get(used, limit->s[i].name);
                slots_set(ret, limit->s[i].name, l == SLOT_INFINITY ? SLOT_INFINITY : (l > u ? l - u : 0), NULL);
        }
}

void api_resource_check_presets(struct api_ctx *c)
{
        const char *group = "default", *rg = NULL;
        struct tess_error *err = NULL;
        _cleanup_rows_ struct db_rows *proj = NULL, *pol = NULL, *agents = NULL;
        struct slots kp_limit, kp_used, kp_rem, g_limit, g_used, g_rem, rg_cap, rg_used, rg_rem;
        char rgbuf[128];
        int r;

        if (api_get_string(c->body, NAMES("group"), 64, &group, &err) < 0 ||
            api_get_string(c->body, NAMES("scaling_group", "resource_group"), 64, &rg, &err) < 0)
                return api_fail(c, err);
        r = DBQ(c->m->db, "SELECT id, total_resource_slots FROM projects WHERE domain_name = ? AND name = ?", &proj,
                &err, DB_TEXT(c->who.domain), DB_TEXT(group));
        if (r < 0)
                return api_fail(c, err);
        if (proj->nrows == 0)
                return api_problem(c, 404, "object-not-found", "project '%s' not found", group);
        const char *pid = db_get(proj, 0, 0);
        if (c->who.role == ROLE_USER && model_is_member(c->m, pid, c->who.user_id, NULL) != 1)
                return api_problem(c, 404, "object-not-found", "project '%s' not found", group);
        if (rg) {
                if (model_rg_allowed(c->m, rg, c->who.domain, pid, c->who.access_key, NULL) != 1)
                        return api_problem(c, 404, "object-not-found", "resource group '%s' not found", rg);
        } else if (model_rg_default(c->m, c->who.domain, pid, c->who.access_key, rgbuf, sizeof(rgbuf), NULL) == 0) {
                rg = rgbuf;
        }
        r = DBQ(c->m->db, "SELECT total_resource_slots FROM keypair_resource_policies WHERE name = ?", &pol, &err,
                DB_TEXT(c->who.resource_policy));
        if (r < 0)
                return api_fail(c, err);
        if (slots_from_text(&kp_limit, pol->nrows ? db_get(pol, 0, 0) : "{}", &err) < 0 ||
            slots_from_text(&g_limit, db_get(proj, 0, 1), &err) < 0 ||
            /* a keypair's limits count its user's sessions on all its keypairs */
            sum_sessions(c, "user_id = ?", c->who.user_id, &kp_used, &err) < 0 ||
            sum_sessions(c, "project_id = ?", pid, &g_used, &err) < 0 ||
            sum_sessions(c, "resource_group = ?", rg ? rg : "", &rg_used, &err) < 0)
                return api_fail(c, err);
        fill_missing(&kp_limit, SLOT_INFINITY);
        fill_missing(&g_limit, SLOT_INFINITY);
        fill_missing(&kp_used, 0);
        fill_missing(&g_used, 0);
        remaining(&kp_limit, &kp_used, &kp_rem);
        remaining(&g_limit, &g_used, &g_rem);

        /* resource group capacity: the free slots of its ALIVE agents */
        r = DBQ(c->m->db, "SELECT available_slots, occupied_slots FROM agents WHERE resource_group = ? AND"
                          " status = 'ALIVE' AND schedulable = 1",
                &agents, &err, DB_TEXT(rg ? rg : ""));
        if (r < 0)
                return api_fail(c, err);
        slots_init(&rg_cap);
        for (int i = 0; i < agents->nrows; i++) {
                struct slots a;
                if (slots_from_text(&a, db_get(agents, i, 0), NULL) == 0)
                        slots_add(&rg_cap, &a, NULL);
        }
        fill_missing(&rg_cap, 0);
        fill_missing(&rg_used, 0);
        remaining(&rg_cap, &rg_used, &rg_rem);

        json_t *presets = presets_json(c, rg, &err);
        if (!presets)
                return api_fail(c, err);
        size_t i;
        json_t *p;
        json_array_foreach(presets, i, p) {
                struct slots want;
                bool fits = slots_from_json(&want, json_object_get(p, "resource_slots"), false, NULL) == 0 &&
                            slots_fit(&want, &kp_rem, true, NULL) && slots_fit(&want, &g_rem, true, NULL) &&
                            slots_fit(&want, &rg_rem, false, NULL);
                json_object_set_new(p, "allocatable", json_boolean(fits));
        }
        json_t *sgs = json_object();
        if (rg)
                json_object_set_new(sgs, rg,
                                    json_pack("{s:o, s:o}", "using", slots_to_json(&rg_used), "remaining",
                                              slots_to_json(&rg_rem)));
        api_json(c, 200,
                 json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "presets", presets, "keypair_limits",
                           slots_to_json(&kp_limit), "keypair_using", slots_to_json(&kp_used), "keypair_remaining",
                           slots_to_json(&kp_rem), "group_limits", slots_to_json(&g_limit), "group_using",
                           slots_to_json(&g_used), "group_remaining", slots_to_json(&g_rem),
                           "scaling_group_remaining", slots_to_json(&rg_rem), "scaling_groups", sgs));
}

/* POST /resource/recalculate-usage: superadmins.  Backend.AI keeps counters
 * of what agents and keypairs hold and this recounts them; Tessera's
 * scheduler counts from the kernels at every pass and stores each agent's
 * occupied_slots when they differ, so this asks for a pass now, which
 * sets what GET /admin/agents shows right within moments. */
void api_resource_recalculate(struct api_ctx *c)
{
        scheduler_kick(c->m);
        api_json(c, 200, json_object());
}
