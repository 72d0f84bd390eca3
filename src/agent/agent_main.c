/* agent_main.c - `tessera agent --config FILE`: start-up and the three
 * threads of the agent.
 *
 *   sync      asks the manager what to run (POST /agent/sync, a long poll
 *             of up to one heartbeat interval) and hands each new desired
 *             list to the reconciler;
 *   reporter  heartbeats every heartbeat_interval (slots, GPU devices) and
 *             sends the outbox's events as soon as there are any, until
 *             acknowledged;
 *   main      reconciles: applies desired lists (kernels.c, whose workers
 *             start and stop containers) and notices exited containers.
 *
 * SIGTERM or SIGINT stop the agent; its containers keep running, owned by
 * their monitors, and the next start finds them again. */
#include "common/compat.h"

#include <ctype.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/agent_http.h"
#include "agent/commit.h"
#include "agent/container/cgroup_tune.h"
#include "agent/container/layer_disk.h"
#include "agent/container/bridge.h"
#include "agent/container/oci_runtime.h"
#include "agent/gpu_stats.h"
#include "agent/gpu_util.h"
#include "agent/gpu_wiring.h"
#include "agent/image_budget_loop.h"
#include "agent/kernels.h"
#include "agent/pty_keep.h"
#include "agent/retry.h"
#include "common/conf.h"
#include "common/container_disk.h"
#include "common/cond_wait.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/timeutil.h"
#include "common/version.h"
#include "image/image.h"

#define SYNC_WAIT_MAX_SEC 30
#define AGENT_EVENTS_PER_POST 500 /* the manager takes 1000 (AGENT_EVENTS_MAX) */
#define AGENT_BRIDGE_LOCK_DIR "/run/tessera/bridges"

struct agent {
        struct agent_ctx ctx;
        struct agent_conf conf;
        struct agent_devices devices;
        struct kernels *kernels;
        struct agent_http *http;
        char *address; /* where the manager reaches agent_http */
        char secret[128];
        char arch[sizeof(((struct utsname *)0)->machine)];
        pthread_mutex_t lock;
        pthread_cond_t reporter_cond, reconcile_cond;
        bool reporter_wake, reconcile_wake;
        json_t *desired; /* a new desired list for the reconciler, or NULL */
        int lock_fd;     /* state_dir/agent.lock, flock()ed while the agent runs */
        struct bridge_choice bridge; /* its bridge, claimed (bridge.h) */
};

static volatile sig_atomic_t stopping;

static void on_signal(int sig UNUSED)
{
        stopping = 1;
}

static void wake(struct agent *a, pthread_cond_t *cond, bool *flag)
{
        pthread_mutex_lock(&a->lock);
        *flag = true;
        pthread_cond_signal(cond);
        pthread_mutex_unlock(&a->lock);
}

static void wake_reporter(struct agent_ctx *ctx)
{
        struct agent *a = ctx->loop_data;
        wake(a, &a->reporter_cond, &a->reporter_wake);
}

static void wake_reconciler(struct agent_ctx *ctx)
{
        struct agent *a = ctx->loop_data;
        wake(a, &a->reconcile_cond, &a->reconcile_wake);
}

/* Wait on cond until woken, stopping, or `usec` passed (lock held). */
static void wait_for(struct agent *a, pthread_cond_t *cond, bool *flag, int64_t usec)
{
        struct timespec ts = cond_deadline(usec);
        while (!*flag && !stopping)
                if (pthread_cond_timedwait(cond, &a->lock, &ts) == ETIMEDOUT)
                        break;
        *flag = false;
}

static int load_secret(struct agent *a, struct tess_error **err)
{
        _cleanup_free_ char *text = NULL;
        size_t len;
        int r = fs_read_file(a->conf.cluster_secret_file, 4096, &text, &len, err);

        if (r < 0)
                return tess_err_wrap(err, "reading the cluster secret (copy the manager's cluster.secret here)");
        while (len > 0 && strchr(" \t\r\n", text[len - 1]))
                len--;
        if (len != 64 || strspn(text, "0123456789abcdefABCDEF") < len)
                return tess_err(err, EINVAL, "cluster secret '%s' must hold 64 hex characters",
                                a->conf.cluster_secret_file);
        for (size_t i = 0; i < len; i++)
                a->secret[i] = (char)tolower((unsigned char)text[i]);
        a->secret[len] = '\0';
        return 0;
}

static json_t *heartbeat_body(struct agent *a)
{
        int64_t interval = (a->conf.heartbeat_interval + USEC_PER_SEC - 1) / USEC_PER_SEC;

        return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:O, s:O, s:o, s:I}", "id", a->conf.id, "address",
                         a->address, "resource_group", a->conf.resource_group, "architecture", a->arch, "version",
                         TESSERA_VERSION, "runtime", a->conf.runc, "available_slots", a->devices.slots, "devices",
                         a->devices.gpus, "stats", kernels_stats(a->kernels), "heartbeat_interval",
                         (json_int_t)(interval > 0 ? interval : 1));
}

/* One thread's view of the manager: its retry policy (retry.h) and, for
 * the reporter, the log's two lines: once when the manager starts failing,
 * once when it answers again (never one per try). */
struct manager_health {
        struct retry retry;
        int64_t next_try; /* monotonic usec; before it, the manager is left alone */
        bool tell;        /* this thread speaks for the agent in the log */
};

/* The outcome of a try: r < 0 failed (err consumed). */
static void manager_tried(struct manager_health *h, const struct manager_link *link, int r, struct tess_error *err)
{
        int64_t now = monotonic_usec();

        if (r >= 0) {
                int64_t since = h->retry.since;
                unsigned failures = retry_succeeded(&h->retry);
                if (failures > 0 && h->tell)
                        log_notice("manager: answering again after %u failed tries in %.1f s", failures,
                                   (double)(now - since) / USEC_PER_SEC);
                h->next_try = 0;
                return;
        }
        long status = manager_link_status(link);
        int64_t delay = retry_failed(&h->retry, status, manager_link_retry_after(link));
        if (h->retry.failures == 1 && h->tell)
                log_warn("manager: %s; %s", err->msg,
                         status == 0 ? "trying again about every second"
                                     : "trying again with backoff (up to 30 s apart) until it answers");
        else
                log_debug("manager: %s; next try in %.1f s", err->msg, (double)delay / USEC_PER_SEC);
        tess_error_free(err);
        h->next_try = now + delay;
}

/* Send the oldest pending events (at most AGENT_EVENTS_PER_POST); the
 * manager answers the last one it applied.  An answer that applied none
 * is a failure too: the same events are not sent again at once. */
static int send_events(struct agent *a, struct manager_link *link, struct tess_error **err)
{
        json_t *evs = outbox_pending(a->ctx.outbox, AGENT_EVENTS_PER_POST);
        int64_t first = json_integer_value(json_object_get(json_array_get(evs, 0), "seq"));
        size_t n = json_array_size(evs);
        json_t *body = json_pack("{s:s, s:o}", "id", a->conf.id, "events", evs);
        json_t *ans = NULL;
        int r = manager_link_post(link, "/agent/events", body, 30, &ans, err);

        json_decref(body);
        if (r >= 0) {
                int64_t acked = json_integer_value(json_object_get(ans, "acked"));
                outbox_ack(a->ctx.outbox, acked);
                if (acked < first)
                        r = tess_err(err, EAGAIN, "the manager applied none of %zu events (from %lld)", n,
                                     (long long)first);
        }
        json_decref(ans);
        return r;
}

static void *reporter_thread(void *data)
{
        struct agent *a = data;
        struct manager_link *link = NULL;
        struct tess_error *err = NULL;
        struct manager_health health = { .tell = true };
        int64_t next_beat = 0;

        retry_init(&health.retry, retry_seed());
        if (manager_link_new(a->conf.manager, a->conf.id, a->secret, &stopping, &link, &err) < 0) {
                log_error("reporter: %s", err->msg);
                tess_error_free(err);
                stopping = 1;
                return NULL;
        }
        while (!stopping) {
                int r = 0;
                int64_t now = monotonic_usec();
                outbox_flush(a->ctx.outbox); /* events kept in memory, if the disk has room again */
                if (now >= health.next_try) {
                        if (now >= next_beat) {
                                json_t *ans = NULL;
                                json_t *body = heartbeat_body(a);
                                r = manager_link_post(link, "/agent/heartbeat", body, 10, &ans, &err);
                                json_decref(body);
                                json_decref(ans);
                                /* counted from this beat's start: gathering hundreds of
                                 * kernels' usage must not make beats late; a failed
                                 * one is due again at the next try */
                                if (r >= 0)
                                        next_beat = now + a->conf.heartbeat_interval;
                        }
                        if (r >= 0 && outbox_count(a->ctx.outbox) > 0)
                                r = send_events(a, link, &err);
                        manager_tried(&health, link, r, err);
                        err = NULL;
                }
                pthread_mutex_lock(&a->lock);
                int64_t wake_at = health.next_try > 0 ? health.next_try : next_beat;
                int64_t until = wake_at - monotonic_usec();
                /* new events wake it, but not before the next try is due */
                if (until > 0 && (health.next_try > 0 || outbox_count(a->ctx.outbox) == 0))
                        wait_for(a, &a->reporter_cond, &a->reporter_wake, until);
                pthread_mutex_unlock(&a->lock);
        }
        manager_link_free(link);
        return NULL;
}

/* The NVML whose per-process samples gpu_util.c reads: the node's, or for
 * mock GPUs the fake one that gpu_wiring.c binds into their containers. */
static char *util_nvml_library(const struct agent *a)
{
        if (streq(a->devices.gpu_plugin, "mock"))
                return gpu_wiring_mock_nvml(&a->conf);
        return xstrdup(a->conf.nvml_library);
}

/* Each fGPU container's measured GPU use into its region, once a second
 * (only with GPU fractions, and an NVML that samples per process: a real
 * one, or the mock GPUs' fake, whose samples are the fake driver's
 * launches in the containers). */
static void *gpu_util_thread(void *data)
{
        struct agent *a = data;
        _cleanup_free_ char *nvml = util_nvml_library(a);
        struct gpu_util *u = gpu_util_open(nvml);

        while (u && !stopping) {
                gpu_util_round(u, &a->ctx);
                for (int i = 0; i < 10 && !stopping; i++)
                        usleep(100 * 1000);
        }
        gpu_util_close(u);
        return NULL;
}

static void *sync_thread(void *data)
{
        struct agent *a = data;
        struct manager_link *link = NULL;
        struct tess_error *err = NULL;
        char digest[65] = "";
        int64_t wait = a->conf.heartbeat_interval / USEC_PER_SEC;
        struct manager_health health = { .tell = false }; /* the reporter tells the log */

        if (wait < 1)
                wait = 1;
        if (wait > SYNC_WAIT_MAX_SEC)
                wait = SYNC_WAIT_MAX_SEC;
        if (manager_link_new(a->conf.manager, a->conf.id, a->secret, &stopping, &link, &err) < 0) {
                log_error("sync: %s", err->msg);
                tess_error_free(err);
                stopping = 1;
                return NULL;
        }
        retry_init(&health.retry, retry_seed());
        while (!stopping) {
                json_t *ans = NULL;
                json_t *body = json_pack("{s:s, s:s, s:I}", "id", a->conf.id, "digest", digest, "wait",
                                         (json_int_t)wait);
                int r = manager_link_post(link, "/agent/sync", body, (long)wait + 15, &ans, &err);
                json_decref(body);
                manager_tried(&health, link, r, err);
                err = NULL;
                if (r < 0) {
                        while (!stopping && monotonic_usec() < health.next_try)
                                usleep(50 * 1000);
                        continue;
                }
                const char *d = json_string_value(json_object_get(ans, "digest"));
                json_t *kernels = json_object_get(ans, "kernels");
                if (d && json_is_array(kernels) && !streq(d, digest)) {
                        snprintf(digest, sizeof(digest), "%s", d);
                        pthread_mutex_lock(&a->lock);
                        json_decref(a->desired);
                        a->desired = json_incref(kernels);
                        a->reconcile_wake = true;
                        pthread_cond_signal(&a->reconcile_cond);
                        pthread_mutex_unlock(&a->lock);
                }
                json_decref(ans);
        }
        manager_link_free(link);
        return NULL;
}

static void reconcile_loop(struct agent *a)
{
        while (!stopping) {
                pthread_mutex_lock(&a->lock);
                wait_for(a, &a->reconcile_cond, &a->reconcile_wake, 500 * USEC_PER_MSEC);
                json_t *desired = a->desired;
                a->desired = NULL;
                pthread_mutex_unlock(&a->lock);
                if (desired)
                        kernels_apply(a->kernels, desired);
                json_decref(desired);
                kernels_check(a->kernels);
        }
}

/* One agent per state_dir: a second one (the child of a restarted `tessera
 * dev` while the old one still stops, a unit started twice) would adopt
 * and report the same kernels and race on their files.  It waits until the
 * first has exited. */
static int lock_state_dir(struct agent *a, struct tess_error **err)
{
        _cleanup_free_ char *path = xasprintf("%s/agent.lock", a->conf.state_dir);
        char pid[32];
        bool told = false;
        int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);

        if (fd < 0)
                return tess_err(err, errno, "opening '%s': %s", path, strerror(errno));
        while (flock(fd, LOCK_EX | LOCK_NB) < 0) {
                if ((errno != EWOULDBLOCK && errno != EINTR) || stopping) {
                        int e = stopping ? EINTR : errno;
                        close(fd);
                        return tess_err(err, e, "locking '%s': %s", path, strerror(e));
                }
                if (!told) {
                        ssize_t n = pread(fd, pid, sizeof(pid) - 1, 0);
                        pid[n > 0 ? n : 0] = '\0';
                        pid[strcspn(pid, "\n")] = '\0';
                        log_warn("state_dir %s is another agent's (pid %s); waiting for it to exit", a->conf.state_dir,
                                 *pid ? pid : "?");
                        told = true;
                }
                usleep(200 * 1000);
        }
        int n = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
        if (ftruncate(fd, 0) < 0 || pwrite(fd, pid, (size_t)n, 0) != n)
                log_warn("writing %s: %s", path, strerror(errno));
        a->lock_fd = fd;
        return 0;
}

/* cgroup_tune.h: a host that will not take it still runs containers. */
static void tune_cgroups(void)
{
        struct tess_error *err = NULL;
        int r = cgroup_favordynmods_set("/proc/self/mountinfo", "/sys/kernel/cgroup/features", &err);

        if (r > 0)
                log_notice("cgroup2 remounted with favordynmods: container starts no longer wait for the kernel "
                           "(agent option cgroup_favordynmods)");
        if (r < 0) {
                log_warn("%s; containers start 10-20 ms slower (agent option cgroup_favordynmods)", err->msg);
                tess_error_free(err);
        }
}

static int agent_start(struct agent *a, struct tess_error **err)
{
        struct utsname u;
        char host[256];
        int r;

        if (!a->conf.id) {
                if (gethostname(host, sizeof(host)) < 0)
                        return tess_err(err, errno, "gethostname: %s", strerror(errno));
                host[sizeof(host) - 1] = '\0';
                a->conf.id = xstrdup(host);
        }
        if (!a->conf.cluster_secret_file)
                a->conf.cluster_secret_file = xasprintf("%s/cluster.secret", a->conf.state_dir);
        uname(&u);
        snprintf(a->arch, sizeof(a->arch), "%s", u.machine);
        r = load_secret(a, err);
        if (r >= 0)
                r = agent_devices_probe(&a->conf, &a->devices, err);
        if (r >= 0 && (r = gpu_wiring_check(&a->conf, &a->devices, err)) < 0)
                return tess_err_wrap(err, "no kernel could use this node's %zu %s GPU(s): install Tessera's "
                                          "GPU libraries beside tessera (`make` builds them)",
                                     a->devices.ngpu, a->devices.gpu_plugin);
        if (r >= 0)
                r = fs_mkdir_p(a->conf.state_dir, 0700, err);
        if (r < 0)
                return r;
        /* absolute: container bundles and runc name paths under it */
        char *abs = realpath(a->conf.state_dir, NULL);
        if (!abs)
                return tess_err(err, errno, "state_dir '%s': %s", a->conf.state_dir, strerror(errno));
        free(a->conf.state_dir);
        a->conf.state_dir = abs;
        r = lock_state_dir(a, err);
        if (r < 0)
                return r;
        if (a->conf.container_disk > 0 && (r = layer_disk_check(err)) < 0)
                return tess_err_wrap(err, "container_disk = %llu needs a filesystem of its own for each container's "
                                          "writable layer, which this node cannot make (container_disk = 0: "
                                          "containers write to the node's disk, unlimited)",
                                     (unsigned long long)a->conf.container_disk);
        if (a->conf.cgroup_favordynmods)
                tune_cgroups();
        if (!streq(a->conf.network, "none")) {
                r = bridge_choose(AGENT_BRIDGE_LOCK_DIR, a->conf.state_dir, a->conf.bridge, a->conf.bridge_cidr,
                                  &a->bridge, err);
                if (r >= 0)
                        r = bridge_up(&a->bridge, a->conf.state_dir, err);
                if (r < 0)
                        return r;
                free(a->conf.bridge);
                free(a->conf.bridge_cidr);
                a->conf.bridge = xstrdup(a->bridge.name);
                a->conf.bridge_cidr = xstrdup(a->bridge.cidr);
        }
        _cleanup_free_ char *outbox_dir = xasprintf("%s/outbox", a->conf.state_dir);
        _cleanup_free_ char *kernels_dir = xasprintf("%s/kernels", a->conf.state_dir);
        _cleanup_free_ char *images_dir = xasprintf("%s/images", a->conf.state_dir);
        a->ctx.conf = &a->conf;
        a->ctx.secret = a->secret;
        a->ctx.devices = &a->devices;
        if (streq(a->devices.gpu_plugin, "mock")) {
                /* the fake NVML the sampler loads shows the node's mock GPUs
                 * (it reads its environment, src/fakecuda/fake.h); set before
                 * any other thread runs */
                char n[24];
                snprintf(n, sizeof(n), "%zu", a->devices.ngpu);
                setenv("TESSERA_FAKE_CUDA_DEVICES", n, 1);
        }
        if (streq(a->devices.gpu_plugin, "cuda") && streq(a->devices.gpu_slot, "cuda.device") && a->devices.ngpu > 0)
                a->ctx.gpu_stats = gpu_stats_open(a->conf.nvml_library); /* whole GPUs' usage for lastStat */
        a->ctx.wake_reporter = wake_reporter;
        a->ctx.wake_reconciler = wake_reconciler;
        a->ctx.loop_data = a;
        r = outbox_open(outbox_dir, &a->ctx.outbox, err);
        if (r >= 0)
                r = image_store_open(images_dir, &a->ctx.images, err);
        if (r >= 0)
                r = kernels_open(&a->ctx, kernels_dir, &a->kernels, err);
        if (r >= 0)
                commit_recover(&a->ctx);
        if (r >= 0) {
                struct pty_keep_conf kc = { .keep_usec = a->conf.terminal_keep,
                                            .max_detached = (unsigned)a->conf.terminal_keep_max };
                a->ctx.terminals = pty_keep_new(&kc);
                if (!a->ctx.terminals)
                        r = tess_err(err, errno, "starting the keeper of terminals: %s", strerror(errno));
        }
        if (r >= 0)
                r = agent_http_start(&a->ctx, a->secret, &a->http, err);
        if (r >= 0)
                a->address = agent_http_address(a->http, &a->conf);
        return r;
}

static void agent_release(struct agent *a)
{
        a->http = agent_http_stop(a->http);
        free(a->address);
        kernels_close(a->kernels);
        a->ctx.terminals = pty_keep_free(a->ctx.terminals); /* after every socket and kernel thread */
        gpu_stats_close(a->ctx.gpu_stats);
        a->ctx.gpu_stats = NULL;
        a->ctx.images = image_store_close(a->ctx.images);
        a->ctx.outbox = outbox_close(a->ctx.outbox);
        json_decref(a->desired);
        agent_devices_release(&a->devices);
        conf_release(agent_conf_opts, &a->conf);
        if (a->lock_fd >= 0)
                close(a->lock_fd);
        if (a->bridge.name) {
                struct tess_error *e = NULL;
                if (bridge_down_if_unused(&a->bridge, &e) < 0) {
                        log_warn("%s", e->msg);
                        tess_error_free(e);
                }
        }
        bridge_choice_release(&a->bridge);
}

static void usage(FILE *f)
{
        fputs("usage: tessera agent --config FILE\n"
              "       tessera agent --print-config [--config FILE]\n"
              "       tessera agent --print-devices [--config FILE]\n"
              "\nRuns this node's agent: registers with the manager, runs the kernels it\n"
              "places here as containers, and reports them.  See docs/agent.md.\n",
              f);
}

int agent_main(int argc, char **argv)
{
        struct agent a = { .lock_fd = -1, .bridge = { .claim_fd = -1 } };
        struct tess_error *err = NULL;
        const char *config = NULL;
        bool print = false, print_devices = false;
        pthread_t sync_t, reporter_t, gpu_util_t;
        int r;

        for (int i = 1; i < argc; i++) {
                if (streq(argv[i], "--config") && i + 1 < argc)
                        config = argv[++i];
                else if (streq(argv[i], "--print-config"))
                        print = true;
                else if (streq(argv[i], "--print-devices"))
                        print_devices = true;
                else if (streq(argv[i], "--help") || streq(argv[i], "-h")) {
                        usage(stdout);
                        return 0;
                } else {
                        usage(stderr);
                        return 2;
                }
        }
        r = conf_defaults(agent_conf_opts, &a.conf, &err);
        if (r >= 0 && config)
                r = conf_load_file(agent_conf_opts, &a.conf, config, &err);
        if (r >= 0 && a.conf.container_disk > 0 && a.conf.container_disk < (uint64_t)CONTAINER_DISK_MIN)
                r = tess_err(&err, EINVAL, "container_disk: %llu bytes is less than a writable layer needs (8m); "
                                           "0 for no limit", (unsigned long long)a.conf.container_disk);
        if (r < 0) {
                fprintf(stderr, "tessera agent: %s\n", err->msg);
                tess_error_free(err);
                conf_release(agent_conf_opts, &a.conf);
                return 1;
        }
        if (r >= 0) {
                char *runtime = xstrdup(oci_runtime_resolve(a.conf.runc, "/sys/fs/cgroup", getenv("PATH")));
                free(a.conf.runc);
                a.conf.runc = runtime; /* "auto" resolved: --print-config shows the choice */
        }
        if (print) {
                struct buf b = BUF_INIT;
                conf_print(agent_conf_opts, &a.conf, &b);
                fwrite(b.data, 1, b.len, stdout);
                buf_release(&b);
                conf_release(agent_conf_opts, &a.conf);
                return 0;
        }
        if (print_devices) {
                r = agent_devices_probe(&a.conf, &a.devices, &err);
                if (r < 0) {
                        fprintf(stderr, "tessera agent: %s\n", err->msg);
                        tess_error_free(err);
                } else {
                        json_t *j = json_pack("{s:O, s:O}", "slots", a.devices.slots, "gpus", a.devices.gpus);
                        json_dumpf(j, stdout, JSON_INDENT(2));
                        fputc('\n', stdout);
                        json_decref(j);
                }
                agent_devices_release(&a.devices);
                conf_release(agent_conf_opts, &a.conf);
                return r < 0 ? 1 : 0;
        }
        int level = log_level_from_string(a.conf.log_level);
        if (level < 0) {
                fprintf(stderr, "tessera agent: log_level: '%s' is not a log level\n", a.conf.log_level);
                conf_release(agent_conf_opts, &a.conf);
                return 1;
        }
        log_max_level = (enum log_level)level;
        log_set_prefix("tessera-agent");
        pthread_mutex_init(&a.lock, NULL);
        cond_init_monotonic(&a.reporter_cond);
        cond_init_monotonic(&a.reconcile_cond);
        umask(022); /* image and container trees must be readable inside containers */
        signal(SIGPIPE, SIG_IGN);
        signal(SIGTERM, on_signal);
        signal(SIGINT, on_signal);
        r = agent_start(&a, &err);
        if (r < 0) {
                log_error("agent: %s", err->msg);
                tess_error_free(err);
                agent_release(&a);
                return 1;
        }
        log_notice("agent %s: %s of CPU, %llu bytes of memory, %zu GPU(s); containers through %s; manager %s; "
                   "serving at %s",
                   a.conf.id, json_string_value(json_object_get(a.devices.slots, "cpu")),
                   (unsigned long long)a.devices.mem, json_array_size(a.devices.gpus), a.conf.runc, a.conf.manager,
                   a.address);
        pthread_create(&reporter_t, NULL, reporter_thread, &a);
        pthread_create(&sync_t, NULL, sync_thread, &a);
        bool sample_gpus = (streq(a.devices.gpu_plugin, "cuda") || streq(a.devices.gpu_plugin, "mock")) &&
                           streq(a.devices.gpu_slot, "cuda.shares") && a.devices.ngpu > 0;
        if (sample_gpus)
                pthread_create(&gpu_util_t, NULL, gpu_util_thread, &a);
        struct image_budget_loop *image_budget = image_budget_loop_start(&a.ctx);
        reconcile_loop(&a);
        image_budget_loop_stop(image_budget);
        log_notice("agent %s stopping; its containers keep running", a.conf.id);
        wake_reporter(&a.ctx);
        pthread_join(reporter_t, NULL);
        pthread_join(sync_t, NULL); /* its long poll aborts within a second */
        if (sample_gpus)
                pthread_join(gpu_util_t, NULL);
        agent_release(&a);
        return 0;
}
