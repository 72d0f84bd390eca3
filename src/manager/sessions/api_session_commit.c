/* api_session_commit.c - committing a running session to a private image;
 * see session_commit.h. */
#include "common/compat.h"

#include <ctype.h>
#include <time.h>

#include "common/log.h"
#include "common/timeutil.h"
#include "manager/agent_link/agent_call.h"
#include "manager/agent_link/agent_report.h"
#include "manager/api/api.h"
#include "manager/core/manager.h"
#include "manager/db/db.h"
#include "manager/http/http.h"
#include "manager/sessions/api_session.h"
#include "manager/sessions/session_commit.h"
#include "manager/tasks/bgtask.h"

#define TASK_KIND       "session-commit"
#define AGENT_TIMEOUT_S 30
#define LABEL_PREFIX    "ai.backend.customized-image."

static bool tag_ok(const char *s)
{
        size_t n = strlen(s);
        if (n == 0 || n > 128 || (!isalnum((unsigned char)*s) && *s != '_'))
                return false;
        for (; *s; s++)
                if (!isalnum((unsigned char)*s) && !strchr("._-", *s))
                        return false;
        return true;
}

/* A user name as a repository path component: lower case [a-z0-9], runs
 * of anything else as one '-', no '-' at either end. */
static char *name_component(const char *s)
{
        size_t n = 0, cap = strlen(s) + 2;
        char *out = xmalloc(cap);

        for (; *s && n < 64; s++) {
                unsigned char ch = (unsigned char)tolower((unsigned char)*s);
                if (isalnum(ch) && ch < 128)
                        out[n++] = (char)ch;
                else if (n > 0 && out[n - 1] != '-')
                        out[n++] = '-';
        }
        while (n > 0 && out[n - 1] == '-')
                n--;
        if (n == 0)
                out[n++] = 'u';
        out[n] = '\0';
        return out;
}

/* The image row the session runs, and the reference its agent stores it under. */
static int base_image(struct api_ctx *c, const char *session_id, struct db_rows **ret, struct tess_error **err)
{
        int r = DBQ(c->m->db,
                    "SELECT s.image, s.architecture, s.user_id, s.access_key, s.domain_name, s.name AS session_name,"
                    " u.username, i.id AS image_id, i.name, i.tag, i.registry, i.labels, i.min_resources,"
                    " i.max_resources, p.max_customized_image_count AS lim,"
                    " (SELECT COUNT(*) FROM images WHERE owner_id = s.user_id) AS owned,"
                    " (SELECT COUNT(*) FROM background_tasks WHERE kind = '" TASK_KIND "' AND status = 'ongoing'"
                    "   AND user_id = s.user_id) AS ongoing"
                    " FROM sessions s JOIN users u ON u.id = s.user_id"
                    " JOIN keypairs k ON k.access_key = s.access_key"
                    " JOIN keypair_resource_policies p ON p.name = k.resource_policy"
                    " LEFT JOIN images i ON i.name || ':' || i.tag = s.image AND i.architecture = s.architecture"
                    " WHERE s.id = ?",
                    ret, err, DB_TEXT(session_id));
        if (r < 0)
                return r;
        if ((*ret)->nrows == 0)
                return tess_err(err, ENOENT, "session not found");
        if (!db_getn(*ret, 0, "image_id"))
                return tess_err(err, EINVAL, "the session's image '%s' is no longer registered",
                                db_getn(*ret, 0, "image"));
        return 0;
}

struct commit_call {
        char task[UUID_STR_LEN];
        char *image;
};

static void commit_call_free(void *p)
{
        struct commit_call *cc = p;
        free(cc->image);
        free(cc);
}

static void on_agent_answer(struct api_ctx *c, struct agent_call *call)
{
        struct commit_call *cc = call->user;
        struct tess_error *err = NULL;

        if (call->err) {
                if (bgtask_finish(c->m, cc->task, BGTASK_FAILED, call->err->msg, NULL, &err) < 0) {
                        log_warn("commit task %s: %s", cc->task, err->msg);
                        tess_error_free(err);
                }
                return agent_call_fail(c, call);
        }
        api_json(c, 202, json_pack("{s:s, s:s, s:s}", "task_id", cc->task, "image", cc->image, "status", "ongoing"));
}

void api_session_commit(struct api_ctx *c)
{
        _cleanup_rows_ struct db_rows *b = NULL;
        struct tess_error *err = NULL;
        struct session_target t;
        const char *tag = NULL, *owner = http_query(c->req, "owner_access_key");
        char stamp[32], task[UUID_STR_LEN];

        if (c->body && api_get_string(c->body, NAMES("tag"), 128, &tag, &err) < 0)
                return api_fail(c, err);
        if (tag && !tag_ok(tag))
                return api_problem(c, 400, "invalid-api-params",
                                   "tag '%s' must be letters, digits, '.', '_' or '-', not starting with '.' or '-'",
                                   tag);
        if (!api_session_target(c, owner, &t))
                return;
        if (base_image(c, t.session, &b, &err) < 0)
                return api_fail(c, err);
        int64_t lim = db_get_int(b, 0, "lim"), have = db_get_int(b, 0, "owned") + db_get_int(b, 0, "ongoing");
        if (lim > 0 && have >= lim)
                return api_problem(c, 412, "quota-exceeded",
                                   "the owner already has %lld private images (commits under way included), the"
                                   " limit of their resource policy",
                                   (long long)have);
        const char *base_name = db_getn(b, 0, "name"), *slash = strrchr(base_name, '/');
        _cleanup_free_ char *user = name_component(db_getn(b, 0, "username"));
        _cleanup_free_ char *name = xasprintf("custom/%s/%s", user, slash ? slash + 1 : base_name);
        if (!tag) {
                time_t now = time(NULL);
                struct tm tm;
                gmtime_r(&now, &tm);
                strftime(stamp, sizeof(stamp), "%Y%m%d%H%M%S", &tm);
        }
        _cleanup_free_ char *tag_text = tag ? xstrdup(tag) : xasprintf("%s-%s", db_getn(b, 0, "tag"), stamp);
        if (strlen(tag_text) > 128)
                tag_text[128] = '\0';
        _cleanup_rows_ struct db_rows *dup = NULL, *busy = NULL;
        if (DBQ(c->m->db, "SELECT 1 FROM images WHERE name = ? AND tag = ?", &dup, &err, DB_TEXT(name),
                DB_TEXT(tag_text)) < 0 ||
            DBQ(c->m->db, "SELECT id FROM background_tasks WHERE session_id = ? AND kind = '" TASK_KIND "'"
                          " AND status = 'ongoing'",
                &busy, &err, DB_TEXT(t.session)) < 0)
                return api_fail(c, err);
        if (dup->nrows > 0)
                return api_problem(c, 409, "image-exists", "image %s:%s exists already: choose another tag", name,
                                   tag_text);
        if (busy->nrows > 0)
                return api_problem(c, 409, "commit-under-way", "a commit of session '%s' is under way (task %s)",
                                   c->param[0], db_get(busy, 0, 0));
        const char *registry = db_getn(b, 0, "registry");
        _cleanup_free_ char *base_ref = registry && *registry ? xasprintf("%s/%s", registry, db_getn(b, 0, "image"))
                                                              : xstrdup(db_getn(b, 0, "image"));
        _cleanup_free_ char *owner_label = xasprintf("user:%s", db_getn(b, 0, "user_id"));
        json_t *labels = json_pack("{s:s, s:s, s:s, s:s}", LABEL_PREFIX "owner", owner_label, LABEL_PREFIX "name",
                                   tag_text, LABEL_PREFIX "base", db_getn(b, 0, "image"), LABEL_PREFIX "session",
                                   db_getn(b, 0, "session_name"));
        json_t *params = json_pack("{s:s, s:s, s:s, s:s, s:O}", "name", name, "tag", tag_text, "owner_id",
                                   db_getn(b, 0, "user_id"), "base_image_id", db_getn(b, 0, "image_id"), "labels",
                                   labels);
        int r = bgtask_create(c->m, TASK_KIND, db_getn(b, 0, "user_id"), db_getn(b, 0, "domain_name"), t.session,
                              params, task, &err);
        json_decref(params);
        if (r < 0) {
                json_decref(labels);
                return api_fail(c, err);
        }
        json_t *req = json_pack("{s:s, s:s, s:s, s:s, s:o}", "task_id", task, "base", base_ref, "name", name, "tag",
                                tag_text, "labels", labels);
        _cleanup_free_ char *text = json_dumps(req, JSON_COMPACT);
        _cleanup_free_ char *target = xasprintf("/v1/kernels/%s/commit", t.kernel);
        json_decref(req);
        snprintf(c->audit_target, sizeof(c->audit_target), "%s -> %s:%s", c->param[0], name, tag_text);
        struct agent_call *call = agent_call_one(c, t.agent, t.address, "POST", target, text, strlen(text),
                                                 "application/json", AGENT_TIMEOUT_S, on_agent_answer);
        struct commit_call *cc = xcalloc(1, sizeof(*cc));
        snprintf(cc->task, sizeof(cc->task), "%s", task);
        cc->image = xasprintf("%s:%s", name, tag_text);
        if (!call) {
                commit_call_free(cc);
                return;
        }
        call->user = cc;
        call->user_free = commit_call_free;
}

void api_session_commit_status(struct api_ctx *c)
{
        _cleanup_rows_ struct db_rows *s = NULL, *t = NULL;
        struct tess_error *err = NULL;

        if (api_find_session(c, c->param[0], http_query(c->req, "owner_access_key"), false, &s, &err) < 0)
                return api_fail(c, err);
        if (DBQ(c->m->db,
                "SELECT id FROM background_tasks WHERE session_id = ? AND kind = '" TASK_KIND "'"
                " ORDER BY created_at DESC LIMIT 1",
                &t, &err, DB_TEXT(db_getn(s, 0, "id"))) < 0)
                return api_fail(c, err);
        if (t->nrows == 0)
                return api_json(c, 200, json_pack("{s:s}", "status", "idle"));
        _cleanup_rows_ struct db_rows *task = NULL;
        if (bgtask_load(c->m, db_get(t, 0, 0), &task, &err) < 0)
                return api_fail(c, err);
        api_json(c, 200, bgtask_json(task, 0));
}

/* ---- the agent's events ---- */

/* Register the committed image and end the task, in one transaction. */
static int commit_done(struct manager *m, const char *task_id, const json_t *params, const struct agent_event *ev,
                       struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *base = NULL;
        const char *base_id = json_string_value(json_object_get(params, "base_image_id"));
        int r = DBQ(m->db, "SELECT architecture, labels, min_resources, max_resources FROM images WHERE id = ?",
                    &base, err, DB_TEXT(base_id));
        if (r < 0)
                return r;
        json_t *labels = base->nrows ? json_loads(db_getn(base, 0, "labels"), 0, NULL) : NULL;
        if (!json_is_object(labels)) {
                json_decref(labels);
                labels = json_object();
        }
        json_object_update(labels, json_object_get(params, "labels"));
        _cleanup_free_ char *labels_text = json_dumps(labels, JSON_COMPACT | JSON_SORT_KEYS);
        json_decref(labels);
        char id[UUID_STR_LEN];
        uuid_generate_str(id);
        const char *name = json_string_value(json_object_get(params, "name"));
        const char *tag = json_string_value(json_object_get(params, "tag"));
        const char *digest = json_string_value(json_object_get(ev->image, "digest"));
        json_int_t size = json_integer_value(json_object_get(ev->image, "size"));

        r = db_begin(m->db, err);
        if (r < 0)
                return r;
        _cleanup_rows_ struct db_rows *t = NULL;
        r = DBQ(m->db, "SELECT status FROM background_tasks WHERE id = ?", &t, err, DB_TEXT(task_id));
        if (r >= 0 && t->nrows > 0 && streq(db_get(t, 0, 0), BGTASK_ONGOING))
                r = DBQ(m->db,
                        "INSERT INTO images(id, name, tag, registry, architecture, digest, labels, min_resources,"
                        " max_resources, size_bytes, owner_id, created_at) VALUES (?, ?, ?, '', ?, ?, ?, ?, ?, ?, ?, ?)",
                        NULL, err, DB_TEXT(id), DB_TEXT(name), DB_TEXT(tag),
                        DB_TEXT(base->nrows ? db_getn(base, 0, "architecture") : "x86_64"), DB_TEXT(digest),
                        DB_TEXT(labels_text), DB_TEXT(base->nrows ? db_getn(base, 0, "min_resources") : "{}"),
                        DB_TEXT(base->nrows ? db_getn(base, 0, "max_resources") : "{}"), DB_INT(size),
                        DB_TEXT(json_string_value(json_object_get(params, "owner_id"))), DB_INT(now_usec()));
        if (r < 0) {
                db_rollback(m->db);
                return r;
        }
        r = db_commit(m->db, err);
        if (r < 0)
                return r;
        _cleanup_free_ char *image = xasprintf("%s:%s", name, tag);
        json_t *result = json_pack("{s:s, s:s, s:s, s:I}", "image", image, "image_id", id, "digest", digest ? digest : "",
                                   "size", size);
        r = bgtask_finish(m, task_id, BGTASK_DONE, image, result, err);
        json_decref(result);
        return r < 0 ? r : 0;
}

int session_commit_event(struct manager *m, const char *agent, const char *session, const struct agent_event *ev,
                         struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *t = NULL;
        int r = bgtask_load(m, ev->task, &t, err);

        if (r < 0)
                return r;
        if (t->nrows == 0 || !streq(db_getn(t, 0, "kind"), TASK_KIND) || !db_getn(t, 0, "session_id") ||
            !streq(db_getn(t, 0, "session_id"), session)) {
                log_info("agent %s: commit event about task %s ignored (not a commit of its session)", agent, ev->task);
                return 0;
        }
        switch (ev->kind) {
        case AGENT_EV_COMMIT_PROGRESS: return bgtask_update(m, ev->task, ev->current, ev->total, ev->message, err);
        case AGENT_EV_COMMIT_FAILED: {
                r = bgtask_finish(m, ev->task, BGTASK_FAILED, ev->message ? ev->message : "the commit failed", NULL, err);
                return r < 0 ? r : 0;
        }
        case AGENT_EV_COMMIT_DONE: {
                json_t *params = json_loads(db_getn(t, 0, "result"), 0, NULL);
                r = commit_done(m, ev->task, params, ev, err);
                json_decref(params);
                return r;
        }
        default: return 0;
        }
}
