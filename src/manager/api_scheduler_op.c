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
        struct api_ctx *c;
        json_t *ids, *change; /* the agents, and {schedulable} */
        size_t next;
        bool in_call, answered;
        unsigned refused; /* the status of the first refusal, or 0 */
        json_t *refusal;
};

static void op_free(void *data)
{
        struct scheduler_op *op = data;
        json_decref(op->ids);
        json_decref(op->change);
        json_decref(op->refusal);
        free(op);
}

static void run_next(struct scheduler_op *op);

static void agent_changed(struct api_ctx *c UNUSED, unsigned status, json_t *answer, void *data)
{
        struct scheduler_op *op = data;

        op->answered = true;
        if (status >= 400) {
                op->refused = status;
                op->refusal = json_incref(answer);
                op->next = json_array_size(op->ids); /* no further agent */
        } else {
                op->next++;
        }
        if (!op->in_call) /* answered later: go on from here */
                run_next(op);
}

static void run_next(struct scheduler_op *op)
{
        struct api_ctx *c = op->c;

        while (op->next < json_array_size(op->ids)) {
                const char *params[] = { json_string_value(json_array_get(op->ids, op->next)), NULL };
                op->in_call = true;
                op->answered = false;
                api_subcall(c, "PATCH", "/admin/agents/{id}", params, op->change, agent_changed, op_free, op);
                op->in_call = false;
                if (!op->answered)
                        return; /* agent_changed goes on */
        }
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
        op->c = c;
        op->ids = json_incref((json_t *)args);
        op->change = json_pack("{s:b}", "schedulable", streq(name, "include-agents"));
        run_next(op);
}
