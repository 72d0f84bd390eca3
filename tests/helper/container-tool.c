/* container-tool.c - drives src/agent/container/container.c from shell tests and
 * benchmarks, as the agent will (it is also its own monitor executable:
 * `_monitor DIR` runs monitor_main()).
 *
 *   container-tool [GLOBAL...] create ID [OPTION...] -- ARGS...
 *       --layer DIR (repeat; lowest first)  --cpu CORES ("0.5")  --cores 0,1
 *       --memory BYTES  --pids N  --shm BYTES  --net bridge|none
 *       --disk BYTES (the writable layer's own filesystem; default none)
 *       --env K=V  --bind SRC:DST[:ro]  --device PATH  --runner FILE
 *       --user UID:GID[:GID...]  --hostname NAME  --group NAME (network group; default: ID)
 *       --hold: stay alive after the container runs (an agent to kill -9)
 *       prints "created in N us": the time container_create() took
 *   container-tool [GLOBAL...] state|wait [SECS]|kill SIG|destroy [GRACE_SECS]|remove|stats|log [OFFSET] ID
 *   container-tool [GLOBAL...] list
 *
 * GLOBAL: --state DIR (required)  --runc-root DIR  --cgroup-parent NAME
 *         --netns-dir DIR  --bridge NAME  --cidr GW/PREFIX  --log-max BYTES
 *         --userns on|off (default on)  --idmap-dir DIR  --runtime runc|crun|PATH
 *
 * state prints one line: "running pid=P monitor=M ip=A", "running
 * monitor-lost pid=P", "exited code=C signal=S oom=0|1" or "unknown".
 * Exit status 0, 1 on an error (printed as "error: ..."), 2 on misuse. */
#include "common/compat.h"

#include <inttypes.h>
#include <signal.h>

#include "agent/container/container.h"
#include "agent/container/monitor.h"
#include "common/buf.h"
#include "common/slots.h"
#include "common/timeutil.h"

#define MAX_ITEMS 64

static struct container_config cfg;

static int usage(void)
{
        fprintf(stderr, "usage: container-tool --state DIR [...] create|state|wait|kill|destroy|remove|list|"
                        "stats|log ... (see tests/helper/container-tool.c)\n");
        return 2;
}

static int fail(struct tess_error *err)
{
        printf("error: %s\n", err->msg);
        tess_error_free(err);
        return 1;
}

static int64_t num(const char *s)
{
        char *end;
        long long v = strtoll(s, &end, 10);
        return *end ? -1 : v;
}

static void print_state(const struct container_state *st)
{
        switch (st->status) {
        case CONTAINER_RUNNING:
                printf("running%s pid=%d monitor=%d ip=%s\n", st->monitor_lost ? " monitor-lost" : "", (int)st->pid,
                       (int)st->monitor_pid, st->ip);
                break;
        case CONTAINER_EXITED:
                printf("exited code=%d signal=%d oom=%d\n", st->exit_code, st->signal, st->oom_killed);
                break;
        default:
                printf("unknown\n");
        }
}

struct create_args {
        struct container_spec spec;
        const char *layers[MAX_ITEMS + 1], *env[MAX_ITEMS + 1];
        struct container_mount mounts[MAX_ITEMS];
        struct container_device devices[MAX_ITEMS];
        int cores[MAX_ITEMS];
        uint32_t gids[MAX_ITEMS];
        size_t n_layers, n_env;
        bool hold;
};

static int parse_list(const char *s, int *out)
{
        int n = 0;
        for (const char *p = s; *p && n < MAX_ITEMS; n++) {
                char *end;
                out[n] = (int)strtol(p, &end, 10);
                if (end == p)
                        return -1;
                p = *end == ',' ? end + 1 : end;
        }
        return n;
}

/* one option of create; returns how many argv entries it used, -1 on error */
static int create_option(struct create_args *a, int argc, char **argv)
{
        struct container_spec *s = &a->spec;
        const char *o = argv[0], *v = argc > 1 ? argv[1] : NULL;
        struct tess_error *err = NULL;

        if (streq(o, "--hold")) {
                a->hold = true;
                return 1;
        }
        if (!v)
                return -1;
        if (streq(o, "--layer") && a->n_layers < MAX_ITEMS) {
                a->layers[a->n_layers++] = v;
        } else if (streq(o, "--env") && a->n_env < MAX_ITEMS) {
                a->env[a->n_env++] = v;
        } else if (streq(o, "--cpu")) {
                if (slot_parse_string("cpu", v, &s->cpu, &err) < 0) {
                        tess_error_free(err);
                        return -1;
                }
        } else if (streq(o, "--cores")) {
                int n = parse_list(v, a->cores);
                if (n < 0)
                        return -1;
                s->cores = a->cores;
                s->n_cores = (size_t)n;
        } else if (streq(o, "--memory")) {
                s->memory = num(v);
        } else if (streq(o, "--disk")) {
                s->disk_limit = num(v);
        } else if (streq(o, "--pids")) {
                s->pids_limit = num(v);
        } else if (streq(o, "--shm")) {
                s->shm_size = num(v);
        } else if (streq(o, "--group")) {
                s->network_group = v;
        } else if (streq(o, "--net")) {
                s->network = streq(v, "none") ? CONTAINER_NET_NONE : CONTAINER_NET_BRIDGE;
        } else if (streq(o, "--bind") && s->n_mounts < MAX_ITEMS) {
                struct container_mount *m = &a->mounts[s->n_mounts++];
                char *copy = xstrdup(v), *dst = strchr(copy, ':'), *ro;
                if (!dst) {
                        free(copy);
                        return -1;
                }
                *dst++ = '\0';
                ro = strchr(dst, ':');
                if (ro)
                        *ro++ = '\0';
                m->source = copy; /* leaked on purpose: lives as long as the tool */
                m->destination = dst;
                m->readonly = ro && streq(ro, "ro");
                s->mounts = a->mounts;
        } else if (streq(o, "--device") && s->n_devices < MAX_ITEMS) {
                a->devices[s->n_devices++] = (struct container_device){ .path = v };
                s->devices = a->devices;
        } else if (streq(o, "--runner")) {
                s->runner_path = v;
        } else if (streq(o, "--hostname")) {
                s->hostname = v;
        } else if (streq(o, "--user")) {
                int ids[MAX_ITEMS];
                char *norm = xstrdup(v);
                for (char *p = norm; *p; p++)
                        if (*p == ':')
                                *p = ',';
                int n = parse_list(norm, ids);
                free(norm);
                if (n < 2)
                        return -1;
                s->uid = (uint32_t)ids[0];
                s->gid = (uint32_t)ids[1];
                for (int i = 2; i < n; i++)
                        a->gids[i - 2] = (uint32_t)ids[i];
                s->extra_gids = a->gids;
                s->n_extra_gids = (size_t)(n - 2);
        } else {
                return -1;
        }
        return 2;
}

static int cmd_create(int argc, char **argv)
{
        struct create_args *a = xcalloc(1, sizeof(*a));
        struct tess_error *err = NULL;
        int i, r;

        if (argc < 2) {
                free(a);
                return usage();
        }
        a->spec.id = argv[1];
        for (i = 2; i < argc && !streq(argv[i], "--");) {
                int used = create_option(a, argc - i, argv + i);
                if (used < 0) {
                        fprintf(stderr, "container-tool: bad option '%s'\n", argv[i]);
                        free(a);
                        return 2;
                }
                i += used;
        }
        if (i >= argc - 1) {
                free(a);
                return usage();
        }
        a->spec.layers = a->layers;
        a->spec.env = a->env;
        a->spec.args = (const char *const *)argv + i + 1;
        int64_t t0 = monotonic_usec();
        r = container_create(&cfg, &a->spec, &err);
        int64_t took = monotonic_usec() - t0;
        for (size_t m = 0; m < a->spec.n_mounts; m++)
                free((char *)a->mounts[m].source);
        bool hold = a->hold;
        free(a);
        if (r < 0)
                return fail(err);
        printf("created in %" PRId64 " us\n", took);
        fflush(stdout);
        while (hold)
                pause();
        return 0;
}

static int cmd_wait(const char *id, int64_t secs)
{
        int64_t deadline = monotonic_usec() + secs * USEC_PER_SEC;
        struct tess_error *err = NULL;
        struct container_state st;

        for (;;) {
                if (container_state(&cfg, id, &st, &err) < 0)
                        return fail(err);
                if (st.status != CONTAINER_RUNNING || monotonic_usec() > deadline)
                        break;
                usleep(20000);
        }
        print_state(&st);
        return st.status == CONTAINER_EXITED ? 0 : 1;
}

static int cmd_stats(const char *id)
{
        struct tess_error *err = NULL;
        struct container_stats s;

        if (container_stats(&cfg, id, &s, &err) < 0)
                return fail(err);
        printf("cpu_usage_ns=%" PRIu64 "\nmem_usage_bytes=%" PRIu64 "\nmem_peak_bytes=%" PRIu64
               "\nmem_cache_bytes=%" PRIu64 "\npids=%" PRIu64 "\nio_read_bytes=%" PRIu64 "\nio_write_bytes=%" PRIu64
               "\nnet_rx_bytes=%" PRIu64 "\nnet_tx_bytes=%" PRIu64 "\n",
               s.cpu_usage_ns, s.mem_usage_bytes, s.mem_peak_bytes, s.mem_cache_bytes, s.pids, s.io_read_bytes,
               s.io_write_bytes, s.net_rx_bytes, s.net_tx_bytes);
        return 0;
}

static int cmd_log(const char *id, int64_t offset)
{
        _cleanup_(buf_release) struct buf out = BUF_INIT;
        struct tess_error *err = NULL;
        int64_t next;

        for (;;) {
                buf_reset(&out);
                if (container_log_read(&cfg, id, offset, 65536, &out, &next, &err) < 0)
                        return fail(err);
                fwrite(out.data, 1, out.len, stdout);
                if (out.len == 0)
                        break;
                offset = next;
        }
        fprintf(stderr, "next=%" PRId64 "\n", next);
        return 0;
}

static int cmd_list(void)
{
        struct tess_error *err = NULL;
        char **ids;
        size_t n;

        if (container_list(&cfg, &ids, &n, &err) < 0)
                return fail(err);
        for (size_t i = 0; i < n; i++) {
                struct container_state st;
                printf("%s ", ids[i]);
                if (container_state(&cfg, ids[i], &st, &err) < 0) {
                        printf("error\n");
                        err = tess_error_free(err);
                } else {
                        print_state(&st);
                }
                free(ids[i]);
        }
        free(ids);
        return 0;
}

static int cmd_id(const char *cmd, int argc, char **argv)
{
        struct tess_error *err = NULL;
        struct container_state st;
        const char *id = argv[0];
        int r;

        if (streq(cmd, "state")) {
                if (container_state(&cfg, id, &st, &err) < 0)
                        return fail(err);
                print_state(&st);
                return 0;
        }
        if (streq(cmd, "wait"))
                return cmd_wait(id, argc > 1 ? num(argv[1]) : 30);
        if (streq(cmd, "stats"))
                return cmd_stats(id);
        if (streq(cmd, "log"))
                return cmd_log(id, argc > 1 ? num(argv[1]) : 0);
        if (streq(cmd, "kill")) {
                if (argc < 2)
                        return usage();
                r = container_kill(&cfg, id, (int)num(argv[1]), &err);
        } else if (streq(cmd, "destroy")) {
                r = container_destroy(&cfg, id, (argc > 1 ? num(argv[1]) : 10) * USEC_PER_SEC, &err);
        } else if (streq(cmd, "remove")) {
                r = container_remove(&cfg, id, &err);
        } else {
                return usage();
        }
        return r < 0 ? fail(err) : 0;
}

int main(int argc, char **argv)
{
        int i;

        if (argc >= 2 && streq(argv[1], "_monitor"))
                return monitor_main(argc - 1, argv + 1);
        for (i = 1; i + 1 < argc && strncmp(argv[i], "--", 2) == 0; i += 2) {
                const char *o = argv[i], *v = argv[i + 1];
                if (streq(o, "--state"))
                        cfg.state_dir = v;
                else if (streq(o, "--runc-root"))
                        cfg.runc_root = v;
                else if (streq(o, "--cgroup-parent"))
                        cfg.cgroup_parent = v;
                else if (streq(o, "--netns-dir"))
                        cfg.netns_dir = v;
                else if (streq(o, "--bridge"))
                        cfg.bridge = v;
                else if (streq(o, "--cidr"))
                        cfg.bridge_cidr = v;
                else if (streq(o, "--log-max"))
                        cfg.log_max = num(v);
                else if (streq(o, "--runtime"))
                        cfg.runc = v;
                else if (streq(o, "--userns"))
                        cfg.no_userns = streq(v, "off");
                else if (streq(o, "--idmap-dir"))
                        cfg.idmap_dir = v;
                else
                        return usage();
        }
        if (!cfg.state_dir || i >= argc)
                return usage();
        if (streq(argv[i], "create"))
                return cmd_create(argc - i, argv + i);
        if (streq(argv[i], "list"))
                return cmd_list();
        if (i + 1 >= argc)
                return usage();
        return cmd_id(argv[i], argc - i - 1, argv + i + 1);
}
