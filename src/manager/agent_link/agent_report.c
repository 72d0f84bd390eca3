/* agent_report.c - see agent_report.h. */
#include "common/compat.h"

#include "common/timeutil.h"
#include "manager/agent_link/agent_report.h"
#include "manager/api/api.h"
#include "sched/sched.h"

/* Check the devices and add their total to `slots`; the devices' stored
 * form is returned in *ret (caller frees). */
static int parse_devices(const json_t *devs, struct slots *slots, char **ret, struct tess_error **err)
{
        const char *slot = NULL;
        int64_t total = 0;
        size_t i;
        json_t *d;

        *ret = NULL;
        if (!devs || json_is_null(devs)) {
                *ret = xstrdup("[]");
                return 0;
        }
        if (!json_is_array(devs) || json_array_size(devs) > SCHED_MAX_DEVICES)
                return tess_err(err, EINVAL, "devices must be an array of at most %d GPUs", SCHED_MAX_DEVICES);
        json_t *out = json_array();
        json_array_foreach(devs, i, d) {
                const char *id = json_string_value(json_object_get(d, "id"));
                const char *s = json_string_value(json_object_get(d, "slot"));
                int64_t cap;
                int r;
                if (!json_is_object(d) || !id || !*id || strlen(id) > 64 || !s) {
                        json_decref(out);
                        return tess_err(err, EINVAL, "devices[%zu] needs a string id and slot", i);
                }
                if (!streq(s, "cuda.device") && !streq(s, "cuda.shares")) {
                        json_decref(out);
                        return tess_err(err, EINVAL, "devices[%zu].slot must be cuda.device or cuda.shares", i);
                }
                if (slot && !streq(slot, s)) {
                        json_decref(out);
                        return tess_err(err, EINVAL, "all devices of an agent must offer the same slot");
                }
                slot = s;
                r = slot_parse_value(s, json_object_get(d, "capacity"), &cap, err);
                if (r == 0 && (cap <= 0 || (streq(s, "cuda.device") && cap != 1)))
                        r = tess_err(err, EINVAL, "devices[%zu].capacity must be positive (1 for cuda.device)", i);
                if (r < 0) {
                        json_decref(out);
                        return r;
                }
                total += cap;
                char capbuf[48];
                json_t *o = json_pack("{s:s, s:s, s:s}", "id", id, "slot", s, "capacity",
                                      slot_format(s, cap, capbuf, sizeof(capbuf)));
                const char *keep[] = { "model", "memory", "sm_count", NULL };
                for (int k = 0; keep[k]; k++)
                        if (json_object_get(d, keep[k]))
                                json_object_set(o, keep[k], json_object_get(d, keep[k]));
                json_array_append_new(out, o);
        }
        if (slot) {
                if (slots_has(slots, slot) && slots_get(slots, slot) != total) {
                        json_decref(out);
                        return tess_err(err, EINVAL, "available_slots.%s differs from the sum of the devices", slot);
                }
                slots_set(slots, slot, total, NULL);
        } else if (slots_get(slots, "cuda.device") > 0 || slots_get(slots, "cuda.shares") > 0) {
                json_decref(out);
                return tess_err(err, EINVAL, "GPU slots need their devices listed");
        }
        *ret = json_dumps(out, JSON_COMPACT);
        json_decref(out);
        return 0;
}

/* The kernels' statistics: an object of at most AGENT_STATS_MAX kernel
 * ids, each an object (stored as the session's lastStat). */
static int parse_stats(const json_t *stats, struct agent_report *r, struct tess_error **err)
{
        const char *key;
        json_t *v;

        if (!stats || json_is_null(stats))
                return 0;
        if (!json_is_object(stats) || json_object_size(stats) > AGENT_STATS_MAX) {
                agent_report_release(r);
                return tess_err(err, EINVAL, "stats must be an object of at most %d kernels", AGENT_STATS_MAX);
        }
        json_object_foreach((json_t *)stats, key, v) {
                if (strlen(key) > 36 || !json_is_object(v)) {
                        agent_report_release(r);
                        return tess_err(err, EINVAL, "stats.%.40s must be an object named by a kernel id", key);
                }
        }
        r->stats = stats;
        return 0;
}

int agent_report_parse(const json_t *body, struct agent_report *r, struct tess_error **err)
{
        int64_t interval = 5;
        int ret;

        *r = (struct agent_report){ .address = "", .rg = "default", .arch = "x86_64", .version = "",
                                    .runtime = "none" };
        if (!json_is_object(body))
                return tess_err(err, EINVAL, "the body must be a JSON object");
        if ((ret = api_get_string(body, NAMES("id"), AGENT_ID_MAX, &r->id, err)) < 0 ||
            (ret = api_get_string(body, NAMES("address"), 256, &r->address, err)) < 0 ||
            (ret = api_get_string(body, NAMES("resource_group", "scaling_group"), 64, &r->rg, err)) < 0 ||
            (ret = api_get_string(body, NAMES("architecture"), 32, &r->arch, err)) < 0 ||
            (ret = api_get_string(body, NAMES("version"), 64, &r->version, err)) < 0 ||
            (ret = api_get_string(body, NAMES("runtime"), 4096, &r->runtime, err)) < 0 || /* a command may be a path */
            (ret = api_get_int(body, NAMES("heartbeat_interval"), 1, AGENT_HEARTBEAT_MAX_SEC, &interval, err)) < 0)
                return ret;
        r->heartbeat_interval = interval * USEC_PER_SEC;
        if (!r->id || !api_valid_name(r->id))
                return tess_err(err, EINVAL, "id must be 1-%d of [A-Za-z0-9._-]", AGENT_ID_MAX);
        json_t *avail = json_object_get(body, "available_slots");
        if (!json_is_object(avail))
                return tess_err(err, EINVAL, "available_slots must be an object of slots");
        if ((ret = slots_from_json(&r->slots, avail, false, err)) < 0 ||
            (ret = parse_devices(json_object_get(body, "devices"), &r->slots, &r->devices, err)) < 0)
                return ret;
        if (!slots_has(&r->slots, "cpu") || !slots_has(&r->slots, "mem")) {
                agent_report_release(r);
                return tess_err(err, EINVAL, "available_slots needs cpu and mem");
        }
        return parse_stats(json_object_get(body, "stats"), r, err);
}

void agent_report_release(struct agent_report *r)
{
        free(r->devices);
        r->devices = NULL;
}

#define IMAGE_LABELS_MAX 256
#define IMAGE_LABEL_LEN  4096

/* A running event's image: {"digest": "sha256:...", "size": N, "labels":
 * {"key": "value"}}, as the agent found it in its store. */
static int image_parse(const json_t *img, struct tess_error **err)
{
        const char *digest = NULL, *key;
        int64_t size = 0;
        json_t *labels, *v;

        if (!json_is_object(img))
                return tess_err(err, EINVAL, "image must be an object");
        if (api_get_string(img, NAMES("digest"), 128, &digest, err) < 0 ||
            api_get_int(img, NAMES("size"), 0, INT64_MAX, &size, err) < 0)
                return -EINVAL;
        if (digest && strncmp(digest, "sha256:", 7) != 0)
                return tess_err(err, EINVAL, "image.digest must be sha256:HEX");
        labels = json_object_get(img, "labels");
        if (labels && !json_is_object(labels))
                return tess_err(err, EINVAL, "image.labels must be an object");
        if (json_object_size(labels) > IMAGE_LABELS_MAX)
                return tess_err(err, EINVAL, "image.labels has more than %d labels", IMAGE_LABELS_MAX);
        json_object_foreach(labels, key, v) {
                if (!json_is_string(v) || strlen(key) > 256 || json_string_length(v) > IMAGE_LABEL_LEN)
                        return tess_err(err, EINVAL, "image.labels values must be strings (keys up to 256 bytes, "
                                                     "values up to %d)", IMAGE_LABEL_LEN);
        }
        return 0;
}

int agent_event_parse(const json_t *ev, struct agent_event *ret, struct tess_error **err)
{
        static const char *const kinds[] = {
                [AGENT_EV_PREPARING] = "preparing", [AGENT_EV_PULLING] = "pulling", [AGENT_EV_CREATING] = "creating",
                [AGENT_EV_RUNNING] = "running",     [AGENT_EV_EXITED] = "exited",   [AGENT_EV_FAILED] = "failed",
                [AGENT_EV_COMMIT_PROGRESS] = "commit-progress", [AGENT_EV_COMMIT_DONE] = "commit-done",
                [AGENT_EV_COMMIT_FAILED] = "commit-failed",
        };
        const char *kind = NULL;
        size_t k;
        int r;

        *ret = (struct agent_event){ .exit_code = -1 };
        if (!json_is_object(ev))
                return tess_err(err, EINVAL, "an event must be an object");
        r = api_get_int(ev, NAMES("seq"), 1, INT64_MAX, &ret->seq, err);
        if (r >= 0)
                r = api_get_string(ev, NAMES("kernel"), 36, &ret->kernel, err);
        if (r >= 0)
                r = api_get_string(ev, NAMES("kind"), 16, &kind, err);
        if (r >= 0)
                r = api_get_string(ev, NAMES("container_id"), 64, &ret->container_id, err);
        if (r >= 0)
                r = api_get_string(ev, NAMES("message"), 4096, &ret->message, err);
        if (r >= 0)
                r = api_get_string(ev, NAMES("log"), 64 * 1024, &ret->log, err);
        if (r >= 0)
                r = api_get_int(ev, NAMES("exit_code"), -1, 255, &ret->exit_code, err);
        if (r >= 0)
                r = api_get_bool(ev, NAMES("oom"), &ret->oom, err);
        if (r >= 0)
                r = api_get_string(ev, NAMES("task"), 36, &ret->task, err);
        if (r >= 0)
                r = api_get_int(ev, NAMES("current"), 0, INT64_MAX, &ret->current, err);
        if (r >= 0)
                r = api_get_int(ev, NAMES("total"), 0, INT64_MAX, &ret->total, err);
        ret->stat = json_object_get(ev, "stat");
        if (r >= 0 && ret->stat && !json_is_object(ret->stat))
                r = tess_err(err, EINVAL, "stat must be an object of the kernel's statistics");
        ret->image = json_object_get(ev, "image");
        if (r >= 0 && ret->image)
                r = image_parse(ret->image, err);
        if (r < 0)
                return r;
        if (ret->seq == 0 || !ret->kernel || !kind)
                return tess_err(err, EINVAL, "an event needs seq, kernel and kind");
        for (k = 0; k < ARRAY_SIZE(kinds); k++)
                if (streq(kind, kinds[k]))
                        break;
        if (k == ARRAY_SIZE(kinds))
                return tess_err(err, EINVAL, "unknown event kind '%.16s'", kind);
        ret->kind = (enum agent_event_kind)k;
        if (k >= AGENT_EV_COMMIT_PROGRESS && !ret->task)
                return tess_err(err, EINVAL, "a commit event needs its task");
        if (k == AGENT_EV_COMMIT_DONE && !ret->image)
                return tess_err(err, EINVAL, "commit-done needs the image");
        return 0;
}
