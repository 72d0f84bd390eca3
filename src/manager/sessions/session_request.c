/* session_request.c - see session_request.h. */
#include "common/compat.h"

#include <ctype.h>

#include "common/container_disk.h"
#include "common/slots.h"
#include "common/timeutil.h"
#include "manager/api/api.h"
#include "manager/db/db.h"
#include "manager/sessions/session_environ.h"
#include "manager/sessions/session_request.h"

static int parse_environ(json_t *cfg, struct session_request *q, struct tess_error **err)
{
        json_t *env = api_field(cfg, NAMES("environ"));
        int r;

        if (!env)
                return 0;
        if (!json_is_object(env))
                return tess_err(err, EINVAL, "'config.environ' must be an object of strings");
        r = session_environ_check(env, "config.environ", err);
        if (r < 0)
                return r;
        q->environ = env;
        return 0;
}

static int parse_mounts(json_t *cfg, struct session_request *q, struct tess_error **err)
{
        json_t *mounts = api_field(cfg, NAMES("mounts")), *map = api_field(cfg, NAMES("mount_map", "mountMap"));
        size_t i;
        json_t *v;
        const char *k;

        if (mounts) {
                if (!json_is_array(mounts))
                        return tess_err(err, EINVAL, "'config.mounts' must be a list of folder names");
                json_array_foreach(mounts, i, v) {
                        if (!json_is_string(v) || !api_valid_name(json_string_value(v)) &&
                                                          !(json_string_value(v)[0] == '.' &&
                                                            api_valid_name(json_string_value(v) + 1)))
                                return tess_err(err, EINVAL, "'config.mounts[%zu]' is not a valid folder name", i);
                        for (size_t j = 0; j < i; j++)
                                if (streq(json_string_value(json_array_get(mounts, j)), json_string_value(v)))
                                        return tess_err(err, EINVAL, "folder '%s' is mounted twice",
                                                        json_string_value(v));
                }
                q->mounts = mounts;
        }
        if (map) {
                if (!json_is_object(map))
                        return tess_err(err, EINVAL, "'config.mount_map' must be an object of folder -> path");
                json_object_foreach(map, k, v) {
                        if (!json_is_string(v))
                                return tess_err(err, EINVAL, "'config.mount_map.%.64s' must be a path", k);
                        const char *path = json_string_value(v);
                        if (strstr(path, "..") || (path[0] == '/' && strncmp(path, "/home/work/", 11) != 0 &&
                                                   strncmp(path, "/data", 5) != 0 && strncmp(path, "/mnt", 4) != 0))
                                return tess_err(err, EINVAL,
                                                "'config.mount_map.%.64s': a mount path must stay under /home/work, "
                                                "/data or /mnt and not contain '..'",
                                                k);
                }
                q->mount_map = map;
        }
        return 0;
}

static int parse_config(json_t *body, struct session_request *q, struct tess_error **err)
{
        json_t *cfg = api_field(body, NAMES("config")), *res, *ports;
        size_t i;
        json_t *v;
        int r;

        slots_init(&q->resources);
        if (!cfg)
                return 0;
        if (!json_is_object(cfg))
                return tess_err(err, EINVAL, "'config' must be an object");
        res = api_field(cfg, NAMES("resources"));
        if (res) {
                r = slots_from_json(&q->resources, res, true, err);
                if (r < 0)
                        return tess_err_wrap(err, "'config.resources'");
        }
        if (slots_get(&q->resources, "cuda.device") > 0 && slots_get(&q->resources, "cuda.shares") > 0)
                return tess_err(err, EINVAL, "'cuda.device' and 'cuda.shares' cannot be requested together");
        for (int s = 0; s < q->resources.n; s++)
                if (q->resources.s[s].value == SLOT_INFINITY)
                        return tess_err(err, EINVAL, "'config.resources.%s' cannot be unlimited",
                                        q->resources.s[s].name);
        r = api_get_string(cfg, NAMES("scaling_group", "scalingGroup", "resource_group"), 64, &q->rg, err);
        if (r < 0)
                return r;
        r = parse_environ(cfg, q, err);
        if (r < 0)
                return r;
        r = parse_mounts(cfg, q, err);
        if (r < 0)
                return r;
        q->resource_opts = api_field(cfg, NAMES("resource_opts", "resourceOpts"));
        if (q->resource_opts && !json_is_object(q->resource_opts))
                return tess_err(err, EINVAL, "'config.resource_opts' must be an object");
        if (q->resource_opts && json_object_get(q->resource_opts, "shmem")) {
                int64_t shmem;
                r = slot_parse_value("mem", json_object_get(q->resource_opts, "shmem"), &shmem, err);
                if (r < 0)
                        return tess_err(err, EINVAL, "'config.resource_opts.shmem' must be a size like '64m'");
        }
        if (q->resource_opts && json_object_get(q->resource_opts, "disk")) {
                r = slot_parse_value("mem", json_object_get(q->resource_opts, "disk"), &q->disk, NULL);
                if (r < 0 || q->disk == SLOT_INFINITY || q->disk < CONTAINER_DISK_MIN)
                        return tess_err(err, EINVAL,
                                        "'config.resource_opts.disk' must be a size of at least 8m, like '20g'");
        }
        ports = api_field(cfg, NAMES("preopen_ports", "preopenPorts"));
        if (ports) {
                if (!json_is_array(ports) || json_array_size(ports) > 16)
                        return tess_err(err, EINVAL, "'config.preopen_ports' must be a list of at most 16 ports");
                json_array_foreach(ports, i, v) {
                        if (!json_is_integer(v) || json_integer_value(v) <= 1024 || json_integer_value(v) > 65535)
                                return tess_err(err, EINVAL, "'config.preopen_ports[%zu]' must be a port 1025-65535",
                                                i);
                }
                q->preopen_ports = ports;
        }
        q->agent_list = api_field(cfg, NAMES("agent_list", "agentList"));
        if (q->agent_list) {
                if (!json_is_array(q->agent_list))
                        return tess_err(err, EINVAL, "'config.agent_list' must be a list of agent ids");
                json_array_foreach(q->agent_list, i, v) if (!json_is_string(v)) return tess_err(
                        err, EINVAL, "'config.agent_list[%zu]' must be an agent id", i);
        }
        return 0;
}

int session_request_parse(json_t *body, struct session_request *q, struct tess_error **err)
{
        const char *starts_at = NULL;
        int r;

        memset(q, 0, sizeof(*q));
        q->type = "interactive";
        q->group = "default";
        q->cluster_mode = "single-node";
        q->cluster_size = 1;
        q->priority = 10;
        q->reuse = true;
        q->architecture = "x86_64";
        if (!body)
                return tess_err(err, EINVAL, "a JSON body is required");
        if ((r = api_get_string(body, NAMES("name", "session_name", "clientSessionToken", "sessionName"), 64,
                                &q->name, err)) < 0 ||
            (r = api_get_string(body, NAMES("image", "lang"), 512, &q->image, err)) < 0 ||
            (r = api_get_string(body, NAMES("type", "sessionType", "session_type"), 16, &q->type, err)) < 0 ||
            (r = api_get_string(body, NAMES("group", "groupName", "group_name"), 64, &q->group, err)) < 0 ||
            (r = api_get_string(body, NAMES("domain", "domainName", "domain_name"), 64, &q->domain, err)) < 0 ||
            (r = api_get_string(body, NAMES("clusterMode", "cluster_mode"), 16, &q->cluster_mode, err)) < 0 ||
            (r = api_get_string(body, NAMES("startupCommand", "startup_command"), 65536, &q->startup_command,
                                err)) < 0 ||
            (r = api_get_string(body, NAMES("bootstrap_script", "bootstrapScript"), 65536, &q->bootstrap_script,
                                err)) < 0 ||
            (r = api_get_string(body, NAMES("tag"), 256, &q->tag, err)) < 0 ||
            (r = api_get_string(body, NAMES("owner_access_key", "ownerAccessKey"), 20, &q->owner_access_key, err)) <
                    0 ||
            (r = api_get_string(body, NAMES("callback_url", "callbackUrl"), 2048, &q->callback_url, err)) < 0 ||
            (r = api_get_string(body, NAMES("architecture", "arch"), 32, &q->architecture, err)) < 0 ||
            (r = api_get_string(body, NAMES("starts_at", "startsAt"), 64, &starts_at, err)) < 0 ||
            (r = api_get_int(body, NAMES("clusterSize", "cluster_size"), 1, SESSION_MAX_CLUSTER_SIZE, &q->cluster_size,
                             err)) < 0 ||
            (r = api_get_int(body, NAMES("priority"), 0, 100, &q->priority, err)) < 0 ||
            (r = api_get_bool(body, NAMES("enqueueOnly", "enqueue_only"), &q->enqueue_only, err)) < 0 ||
            (r = api_get_bool(body, NAMES("reuseIfExists", "reuse_if_exists", "reuse"), &q->reuse, err)) < 0)
                return r;
        q->has_max_wait = api_field(body, NAMES("maxWaitSeconds", "max_wait_seconds")) != NULL;
        r = api_get_int(body, NAMES("maxWaitSeconds", "max_wait_seconds"), 0, SESSION_MAX_WAIT_SECONDS, &q->max_wait, err);
        if (r < 0)
                return r;
        if (!q->name)
                return tess_err(err, EINVAL, "'name' is required");
        if (!api_valid_session_name(q->name))
                return tess_err(err, EINVAL,
                                "'name' must be 4 to 64 letters, digits, '_', '-' or '.', not starting or ending "
                                "with '-' or '.'");
        if (!q->image || !*q->image)
                return tess_err(err, EINVAL, "'image' is required");
        for (const char *p = q->image; *p; p++)
                if (!isalnum((unsigned char)*p) && !strchr("._-/:@", *p))
                        return tess_err(err, EINVAL, "'image' contains an invalid character");
        if (!streq(q->type, "interactive") && !streq(q->type, "batch") && !streq(q->type, "inference"))
                return tess_err(err, EINVAL, "'type' must be interactive, batch or inference");
        if (!streq(q->cluster_mode, "single-node") && !streq(q->cluster_mode, "multi-node"))
                return tess_err(err, EINVAL, "'clusterMode' must be single-node or multi-node");
        if (streq(q->type, "batch") && (!q->startup_command || !*q->startup_command))
                return tess_err(err, EINVAL, "'startupCommand' is required for batch sessions");
        if (starts_at) {
                int64_t t, d;
                if (!streq(q->type, "batch"))
                        return tess_err(err, EINVAL, "'starts_at' is only allowed for batch sessions");
                if (time_parse(starts_at, &t, NULL) == 0)
                        q->starts_at = t;
                else if (duration_parse(starts_at, &d) == 0)
                        q->starts_at = now_usec() + d;
                else
                        return tess_err(err, EINVAL, "'starts_at' must be an ISO 8601 time or a delay like '1h'");
        }
        json_t *bt = api_field(body, NAMES("batch_timeout", "batchTimeout"));
        if (bt) {
                int64_t d;
                if (json_is_integer(bt) && json_integer_value(bt) > 0 && json_integer_value(bt) < 100LL * 365 * 86400)
                        d = json_integer_value(bt) * USEC_PER_SEC;
                else if (!json_is_string(bt) || duration_parse(json_string_value(bt), &d) < 0 || d <= 0)
                        return tess_err(err, EINVAL, "'batch_timeout' must be seconds or a duration like '30m'");
                q->batch_timeout = d;
        }
        q->dependencies = api_field(body, NAMES("dependencies"));
        if (q->dependencies) {
                size_t i;
                json_t *v;
                if (!json_is_array(q->dependencies) || json_array_size(q->dependencies) > 64)
                        return tess_err(err, EINVAL, "'dependencies' must be a list of at most 64 sessions");
                json_array_foreach(q->dependencies, i, v) if (!json_is_string(v)) return tess_err(
                        err, EINVAL, "'dependencies[%zu]' must be a session id or name", i);
        }
        return parse_config(body, q, err);
}

#define MIN_LABEL "ai.backend.resource.min."

/* Raise min by the image's ai.backend.resource.min.<slot> labels. */
static void label_minimums(struct slots *min, const char *labels_text)
{
        json_t *labels = labels_text ? json_loads(labels_text, 0, NULL) : NULL;
        const char *key;
        json_t *v;
        int64_t q;

        json_object_foreach(labels, key, v) {
                const char *slot = key + strlen(MIN_LABEL);
                if (strncmp(key, MIN_LABEL, strlen(MIN_LABEL)) != 0 || !json_is_string(v) || !slot_type_find(slot))
                        continue;
                if (slot_parse_string(slot, json_string_value(v), &q, NULL) == 0 && q > slots_get(min, slot))
                        slots_set(min, slot, q, NULL);
        }
        json_decref(labels);
}

int session_image_resources(struct session_request *q, const struct db_rows *img, struct tess_error **err)
{
        struct slots min, max;
        int r = slots_from_text(&min, db_getn(img, 0, "min_resources"), err);
        if (r < 0)
                return r;
        r = slots_from_text(&max, db_getn(img, 0, "max_resources"), err);
        if (r < 0)
                return r;
        label_minimums(&min, db_getn(img, 0, "labels"));
        if (!slots_has(&q->resources, "cpu"))
                slots_set(&q->resources, "cpu", 1000, NULL);
        if (!slots_has(&q->resources, "mem"))
                slots_set(&q->resources, "mem", 1LL << 30, NULL);
        for (int i = 0; i < min.n; i++)
                if (slots_get(&q->resources, min.s[i].name) < min.s[i].value && slot_type_find(min.s[i].name))
                        slots_set(&q->resources, min.s[i].name, min.s[i].value, NULL);
        const char *over;
        if (!slots_fit(&q->resources, &max, true, &over))
                return tess_err(err, EINVAL, "'%s' is more than image '%s' allows", over, db_getn(img, 0, "name"));
        return 0;
}

int session_request_check_disk(struct session_request *q, const struct principal *owner, struct tess_error **err)
{
        int64_t max = owner->max_container_disk;

        if (max > 0 && q->disk > max)
                return tess_err(err, EINVAL,
                                "'config.resource_opts.disk' %lld is above %lld, the max_container_disk of resource "
                                "policy '%s'",
                                (long long)q->disk, (long long)max, owner->resource_policy);
        if (q->disk == 0)
                q->disk = max;
        return 0;
}

int session_request_check_priority(const struct session_request *q, const struct principal *caller,
                                   struct tess_error **err)
{
        if (caller->role == ROLE_ADMIN || caller->role == ROLE_SUPERADMIN || q->priority <= caller->max_session_priority)
                return 0;
        return tess_err(err, EINVAL, "'priority' %lld is above %lld, the max_session_priority of resource policy '%s'",
                        (long long)q->priority, (long long)caller->max_session_priority, caller->resource_policy);
}
