/* container_record.c - a container's directory (named by its id, which is
 * checked) and its files: container.json and exit.json, written atomically
 * and durably (tmp, fsync, rename, fsync of the directory), and the pid
 * files (atomically, without fsync: a pid means nothing after a reboot). */
#include "common/compat.h"

#include <jansson.h>

#include "agent/container/container-internal.h"
#include "agent/container/container.h"
#include "agent/container/proc.h"
#include "common/fs.h"

#define RECORD_MAX (1 << 20)

bool container_id_valid(const char *id)
{
        size_t n = id ? strlen(id) : 0;

        if (n == 0 || n > CONTAINER_ID_MAX || streq(id, ".") || streq(id, ".."))
                return false;
        return strspn(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") == n;
}

char *container_dir(const struct container_config *cfg, const char *id)
{
        return xasprintf("%s/containers/%s", cfg->state_dir, id);
}

char *container_upper_dir(const struct container_config *cfg, const char *id)
{
        _cleanup_free_ char *dir = container_dir(cfg, id), *rw = container_file(dir, CT_RW);

        if (access(rw, F_OK) < 0)
                return container_file(dir, "upper"); /* made by an agent from before rw/ */
        return xasprintf("%s/upper", rw);
}

char *container_file(const char *dir, const char *name)
{
        return xasprintf("%s/%s", dir, name);
}

static int write_json(const char *dir, const char *name, json_t *doc, struct tess_error **err)
{
        _cleanup_free_ char *path = container_file(dir, name);
        char *text = json_dumps(doc, JSON_INDENT(2) | JSON_SORT_KEYS);
        int r;

        json_decref(doc);
        if (!text)
                return tess_err(err, ENOMEM, "encoding '%s'", path);
        r = fs_write_file_atomic(path, text, strlen(text), 0644, err);
        free(text);
        return r;
}

static int read_json(const char *dir, const char *name, json_t **ret, struct tess_error **err)
{
        _cleanup_free_ char *path = container_file(dir, name);
        _cleanup_free_ char *text = NULL;
        json_error_t je;
        size_t len;
        int r;

        r = fs_read_file(path, RECORD_MAX, &text, &len, err);
        if (r < 0)
                return r;
        *ret = json_loadb(text, len, 0, &je);
        if (!*ret || !json_is_object(*ret)) {
                json_decref(*ret);
                return tess_err(err, EBADMSG, "'%s': %s", path, je.text);
        }
        return 0;
}

static char *dup_field(const json_t *o, const char *key)
{
        const char *s = json_string_value(json_object_get(o, key));
        return s ? xstrdup(s) : NULL;
}

int container_record_write(const char *dir, const struct container_record *rec, struct tess_error **err)
{
        json_t *o = json_object(), *layers = json_array();

        for (char **l = rec->layers; l && *l; l++)
                json_array_append_new(layers, json_string(*l));
        json_object_set_new(o, "id", json_string(rec->id));
        json_object_set_new(o, "created_at", json_integer(rec->created_at));
        json_object_set_new(o, "runc", json_string(rec->runc));
        json_object_set_new(o, "runc_root", json_string(rec->runc_root));
        json_object_set_new(o, "cgroup_root", json_string(rec->cgroup_root));
        json_object_set_new(o, "cgroup_path", json_string(rec->cgroup_path));
        json_object_set_new(o, "log_max", json_integer(rec->log_max));
        json_object_set_new(o, "rootfs", json_string(rec->rootfs));
        json_object_set_new(o, "layers", layers);
        if (rec->netns) {
                json_object_set_new(o, "bridge", json_string(rec->bridge));
                json_object_set_new(o, "netns", json_string(rec->netns));
                json_object_set_new(o, "veth", json_string(rec->veth));
                json_object_set_new(o, "ip", json_string(rec->ip));
                json_object_set_new(o, "gateway", json_string(rec->gateway));
                json_object_set_new(o, "prefix", json_integer(rec->prefix));
                json_object_set_new(o, "ipam_dir", json_string(rec->ipam_dir));
                json_object_set_new(o, "owners_dir", json_string(rec->owners_dir));
                json_object_set_new(o, "netgroup", json_integer(rec->netgroup));
        }
        if (rec->userns_size) {
                json_object_set_new(o, "userns_base", json_integer(rec->userns_base));
                json_object_set_new(o, "userns_size", json_integer(rec->userns_size));
                json_object_set_new(o, "idmap_stage", json_string(rec->idmap_stage));
        }
        if (rec->layer_disk)
                json_object_set_new(o, "layer_disk", json_string(rec->layer_disk));
        return write_json(dir, CT_RECORD, o, err);
}

int container_record_read(const char *dir, struct container_record *ret, struct tess_error **err)
{
        json_t *o, *layers;
        size_t i;
        int r;

        r = read_json(dir, CT_RECORD, &o, err);
        if (r < 0)
                return r;
        *ret = (struct container_record){
                .id = dup_field(o, "id"),
                .created_at = json_integer_value(json_object_get(o, "created_at")),
                .runc = dup_field(o, "runc"),
                .runc_root = dup_field(o, "runc_root"),
                .cgroup_root = dup_field(o, "cgroup_root"),
                .cgroup_path = dup_field(o, "cgroup_path"),
                .log_max = json_integer_value(json_object_get(o, "log_max")),
                .rootfs = dup_field(o, "rootfs"),
                .bridge = dup_field(o, "bridge"),
                .netns = dup_field(o, "netns"),
                .veth = dup_field(o, "veth"),
                .ip = dup_field(o, "ip"),
                .gateway = dup_field(o, "gateway"),
                .prefix = (int)json_integer_value(json_object_get(o, "prefix")),
                .ipam_dir = dup_field(o, "ipam_dir"),
                .owners_dir = dup_field(o, "owners_dir"),
                .userns_base = (uint32_t)json_integer_value(json_object_get(o, "userns_base")),
                .userns_size = (uint32_t)json_integer_value(json_object_get(o, "userns_size")),
                .idmap_stage = dup_field(o, "idmap_stage"),
                .netgroup = (unsigned)json_integer_value(json_object_get(o, "netgroup")),
                .layer_disk = dup_field(o, "layer_disk"),
        };
        layers = json_object_get(o, "layers");
        ret->layers = xcalloc(json_array_size(layers) + 1, sizeof(char *));
        for (i = 0; i < json_array_size(layers); i++)
                ret->layers[i] = xstrdup(json_string_value(json_array_get(layers, i)) ?: "");
        json_decref(o);
        if (!ret->id || !ret->runc || !ret->runc_root || !ret->cgroup_root || !ret->cgroup_path || !ret->rootfs ||
            (ret->netns && (!ret->veth || !ret->ip || !ret->ipam_dir || !ret->owners_dir))) {
                container_record_release(ret);
                return tess_err(err, EBADMSG, "'%s/%s' lacks a field", dir, CT_RECORD);
        }
        return 0;
}

void container_record_release(struct container_record *rec)
{
        free(rec->id);
        free(rec->runc);
        free(rec->runc_root);
        free(rec->cgroup_root);
        free(rec->cgroup_path);
        free(rec->rootfs);
        for (char **l = rec->layers; l && *l; l++)
                free(*l);
        free(rec->layers);
        free(rec->bridge);
        free(rec->netns);
        free(rec->veth);
        free(rec->ip);
        free(rec->gateway);
        free(rec->ipam_dir);
        free(rec->owners_dir);
        free(rec->idmap_stage);
        free(rec->layer_disk);
        *rec = (struct container_record){ 0 };
}

void container_runc_argv(const struct container_record *rec, const char *log, const char *const *args,
                         const char *argv[RUNC_ARGV_MAX])
{
        size_t n = 0;

        argv[n++] = rec->runc;
        argv[n++] = "--root";
        argv[n++] = rec->runc_root;
        if (log) {
                argv[n++] = "--log";
                argv[n++] = log;
                argv[n++] = "--log-format";
                argv[n++] = "json";
        }
        for (; *args && n < RUNC_ARGV_MAX - 1; args++)
                argv[n++] = *args;
        argv[n] = NULL;
}

int container_exit_write(const char *dir, const struct container_exit *ex, struct tess_error **err)
{
        json_t *o = json_pack("{s:i, s:i, s:b, s:b, s:I}", "exit_code", ex->exit_code, "signal", ex->signal,
                              "oom_killed", ex->oom_killed, "monitor_lost", ex->monitor_lost, "finished_at",
                              (json_int_t)ex->finished_at);

        if (ex->has_usage) /* counters fit int64 for centuries */
                json_object_set_new(o, "usage",
                                    json_pack("{s:I, s:I, s:I, s:I}", "cpu_ns", (json_int_t)ex->cpu_ns, "mem",
                                              (json_int_t)ex->mem, "io_read", (json_int_t)ex->io_read, "io_write",
                                              (json_int_t)ex->io_write));
        json_t *again = json_deep_copy(o);
        _cleanup_free_ char *reserve = container_file(dir, CT_EXIT_RESERVE);
        int r = write_json(dir, CT_EXIT, o, err);

        if (r == -ENOSPC && unlink(reserve) == 0) {
                if (err)
                        *err = tess_error_free(*err);
                r = write_json(dir, CT_EXIT, again, err);
        } else {
                json_decref(again);
                unlink(reserve);
        }
        return r;
}

#define EXIT_RESERVE_SIZE (64 << 10) /* exit.json and its temporary copy, in any file system's blocks */

int container_exit_reserve(const char *dir, struct tess_error **err)
{
        _cleanup_free_ char *path = container_file(dir, CT_EXIT_RESERVE);
        _cleanup_free_ char *zeros = xcalloc(1, EXIT_RESERVE_SIZE);

        return fs_write_file_replace(path, zeros, EXIT_RESERVE_SIZE, 0600, err);
}

static uint64_t usage_of(const json_t *usage, const char *name)
{
        json_int_t v = json_integer_value(json_object_get(usage, name));
        return v > 0 ? (uint64_t)v : 0;
}

int container_exit_read(const char *dir, struct container_exit *ret, struct tess_error **err)
{
        json_t *o;
        int r;

        r = read_json(dir, CT_EXIT, &o, err);
        if (r < 0)
                return r;
        *ret = (struct container_exit){
                .exit_code = (int)json_integer_value(json_object_get(o, "exit_code")),
                .signal = (int)json_integer_value(json_object_get(o, "signal")),
                .oom_killed = json_is_true(json_object_get(o, "oom_killed")),
                .monitor_lost = json_is_true(json_object_get(o, "monitor_lost")),
                .finished_at = json_integer_value(json_object_get(o, "finished_at")),
        };
        const json_t *usage = json_object_get(o, "usage");
        if (json_is_object(usage)) {
                ret->has_usage = true;
                ret->cpu_ns = usage_of(usage, "cpu_ns");
                ret->mem = usage_of(usage, "mem");
                ret->io_read = usage_of(usage, "io_read");
                ret->io_write = usage_of(usage, "io_write");
        }
        json_decref(o);
        return 0;
}

int container_pidfile_write(const char *path, pid_t pid, struct tess_error **err)
{
        char line[64];
        uint64_t start = 0;

        proc_start_time(pid, &start);
        snprintf(line, sizeof(line), "%d %llu\n", (int)pid, (unsigned long long)start);
        /* a pid means nothing after a reboot: no fsync */
        return fs_write_file_replace(path, line, strlen(line), 0644, err);
}

int container_pidfile_read(const char *path, pid_t *ret_pid, uint64_t *ret_start)
{
        _cleanup_free_ char *text = NULL;
        unsigned long long start = 0;
        size_t len;
        int pid;

        if (fs_read_file(path, 256, &text, &len, NULL) < 0)
                return -ENOENT;
        int n = sscanf(text, "%d %llu", &pid, &start);
        if (n < 1 || pid <= 0)
                return -EBADMSG;
        *ret_pid = pid;
        *ret_start = n == 2 ? start : 0;
        return 0;
}
