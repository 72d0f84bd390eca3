/* api_scheduler_op.c - POST /manager/scheduler/operation {op, args}:
 * Backend.AI's scheduler operations (`backend.ai admin manager scheduler
 * include-agents / exclude-agents ID...`).  Both set agents' schedulable
 * flag, which the scheduler reads: an excluded agent keeps what it runs
 * and starts nothing new until it is included again, across its restarts.
 * Each agent is changed by PATCH /admin/agents/{id} run for the caller
 * (api_subcall), with that route's checks and audit entry; the answer is
 * 204 once all are, or the first refusal (those before it stay done). */
#include "common/compat.h"

#include "manager/api/api.h"
#include "manager/api/subcall.h"
#include "manager/http/http.h"
#include "manager/main.h"

#define OP_MAX_AGENTS 1000

struct scheduler_op {
        json_t *ids, *change;   /* the agents, and {schedulable} */
        struct api_step *steps; /* a PATCH /admin/agents/{id} each */
        unsigned refused;       /* the status of the first refusal, or 0 */
        json_t *refusal;
};

static void op_free(void *data)
{
        struct scheduler_op *op = data;
        json_decref(op->ids);
        json_decref(op->change);
        json_decref(op->refusal);
        free(op->steps);
        free(op);
}

static bool agent_changed(struct api_ctx *c UNUSED, size_t i UNUSED, unsigned status, json_t *answer, void *data)
{
        struct scheduler_op *op = data;

        if (status < 400)
                return true;
        op->refused = status; /* no further agent */
        op->refusal = json_incref(answer);
        return false;
}

static void answer(struct api_ctx *c, void *data)
{
        struct scheduler_op *op = data;

        if (op->refused)
                api_json(c, op->refused, json_incref(op->refusal));
        else
                http_reply(c->req, 204, NULL, "", 0);
        api_resume(c);
        op_free(op);
}

void api_scheduler_operation(struct api_ctx *c)
{
        const json_t *op_name = json_object_get(c->body, "op"), *args = json_object_get(c->body, "args"), *v;
        const char *name = json_string_value(op_name);
        size_t i;

        if (!name || (!streq(name, "include-agents") && !streq(name, "exclude-agents")))
                return api_problem(c, 400, "invalid-api-params",
                                   "op: one of include-agents and exclude-agents is required");
        if (!json_is_array(args) || json_array_size(args) > OP_MAX_AGENTS)
                return api_problem(c, 400, "invalid-api-params", "args: a list of at most %d agent ids is required",
                                   OP_MAX_AGENTS);
        json_array_foreach(args, i, v)
                if (!json_is_string(v) || !json_string_length(v))
                        return api_problem(c, 400, "invalid-api-params", "args[%zu]: an agent id (string)", i);
        struct scheduler_op *op = xcalloc(1, sizeof(*op));
        op->ids = json_incref((json_t *)args);
        op->change = json_pack("{s:b}", "schedulable", streq(name, "include-agents"));
        op->steps = xcalloc(json_array_size(args) + 1, sizeof(*op->steps));
        json_array_foreach(args, i, v)
                op->steps[i] = (struct api_step){ "PATCH", "/admin/agents/{id}", json_string_value(v), op->change };
        api_subcall_steps(c, op->steps, json_array_size(args), agent_changed, answer, op_free, op);
}
