/* container.c - see container.h.  The life of a container directory:
 *
 *   (none) ──create──> CREATING ──monitor "ok"──> RUNNING ──init exits──> EXITED
 *                         │ fails: undone, directory removed     (monitor: exit.json,
 *                                                                 runc delete, teardown)
 *   RUNNING ──destroy──> SIGTERM, grace, SIGKILL ──> EXITED ──remove──> (none)
 *   RUNNING, monitor lost ──destroy──> runc kill + delete, exit.json "monitor_lost"
 *
 * Creation order (so that a crash at any point leaves something
 * container_destroy()/container_remove() can undo): directory, address
 * claim, container.json (names everything to undo), netns and veth,
 * overlay mount, config.json, monitor. */
#include "common/compat.h"

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <jansson.h>
#include <signal.h>
#include <linux/capability.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "agent/container/cgroup_stats.h"
#include "agent/container/container-internal.h"
#include "agent/container/container.h"
#include "agent/container/ipam.h"
#include "agent/container/layer_disk.h"
#include "agent/container/monitor.h"
#include "agent/container/netfilter.h"
#include "agent/container/netns.h"
#include "agent/container/oci_runtime.h"
#include "agent/container/oci_spec.h"
#include "agent/container/proc.h"
#include "agent/container/rootfs.h"
#include "agent/container/userns.h"
#include "common/fs.h"
#include "common/timeutil.h"

#define DEFAULT_LOG_MAX ((int64_t)10 << 20)
#define DEFAULT_START_TIMEOUT (60 * USEC_PER_SEC)
#define KILL_WAIT_USEC (10 * USEC_PER_SEC)
#define POLL_USEC (2 * USEC_PER_MSEC) /* waiting for a stop: part of destroy -> next session running */

/* cfg with every default filled in */
static struct container_config resolve(const struct container_config *cfg)
{
        struct container_config c = *cfg;

        c.runc_root = c.runc_root ?: "/run/tessera/runc";
        c.cgroup_parent = c.cgroup_parent ?: "tessera";
        c.cgroup_root = c.cgroup_root ?: "/sys/fs/cgroup";
        c.runc = c.runc ?: oci_runtime_resolve("auto", c.cgroup_root, getenv("PATH"));
        c.netns_dir = c.netns_dir ?: "/run/tessera/netns";
        c.bridge = c.bridge ?: "tessera0";
        c.bridge_cidr = c.bridge_cidr ?: "10.88.0.1/16";
        c.monitor_exe = c.monitor_exe ?: "/proc/self/exe";
        c.userns_base = c.userns_base ?: USERNS_DEFAULT_BASE;
        c.userns_size = c.userns_size ?: USERNS_DEFAULT_SIZE;
        c.idmap_dir = c.idmap_dir ?: "/run/tessera-idmap";
        c.log_max = c.log_max > 0 ? c.log_max : DEFAULT_LOG_MAX;
        c.start_timeout_usec = c.start_timeout_usec > 0 ? c.start_timeout_usec : DEFAULT_START_TIMEOUT;
        return c;
}

static char *owners_dir(const struct container_config *cfg)
{
        return xasprintf("%s/containers", cfg->state_dir);
}

static bool exists_in(const char *dir, const char *name)
{
        _cleanup_free_ char *p = container_file(dir, name);
        return access(p, F_OK) == 0;
}

/* A bundle input: read by runc right away, worthless after a reboot (the
 * container is gone with it), so not fsynced. */
static int write_text(const char *dir, const char *name, const char *text, struct tess_error **err)
{
        _cleanup_free_ char *p = container_file(dir, name);
        return fs_write_file_replace(p, text, strlen(text), 0644, err);
}

static int mkdir_in(const char *dir, const char *name, struct tess_error **err)
{
        _cleanup_free_ char *p = container_file(dir, name);
        if (mkdir(p, 0755) < 0 && errno != EEXIST)
                return tess_err(err, errno, "creating '%s': %s", p, strerror(errno));
        return 0;
}

/* ---- runc ---- */

/* Run `runc --root R ARGS...`; output captured in out (may be NULL). */
static int runc(const struct container_record *rec, const char *const *args, struct buf *out, int *ret_status,
                struct tess_error **err)
{
        const char *argv[RUNC_ARGV_MAX];

        container_runc_argv(rec, NULL, args, argv);
        return proc_run(argv, NULL, -1, out, ret_status, err);
}

/* Does runc report the container running? */
static bool runc_running(const struct container_record *rec)
{
        _cleanup_(buf_release) struct buf out = BUF_INIT;
        int status;
        json_t *o;
        bool running;

        if (runc(rec, (const char *[]){ "state", rec->id, NULL }, &out, &status, NULL) < 0 || status != 0)
                return false;
        o = json_loads(out.data, 0, NULL);
        running = streq_ptr(json_string_value(json_object_get(o, "status")), "running");
        json_decref(o);
        return running;
}

static int runc_signal(const struct container_record *rec, int sig, struct tess_error **err)
{
        char num[16];
        snprintf(num, sizeof(num), "%d", sig);
        return runc(rec, (const char *[]){ "kill", rec->id, num, NULL }, NULL, NULL, err);
}

/* ---- create ---- */

/* Fill type/major/minor of devices given by path only; OUT ret - caller frees. */
static int resolve_devices(const struct container_spec *spec, struct container_device **ret, struct tess_error **err)
{
        struct container_device *d = xcalloc(spec->n_devices + 1, sizeof(*d));

        for (size_t i = 0; i < spec->n_devices; i++) {
                struct stat st;
                d[i] = spec->devices[i];
                if (d[i].type)
                        continue;
                errno = 0;
                if (!d[i].path || stat(d[i].path, &st) < 0 || !(S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))) {
                        int e = errno;
                        free(d);
                        return tess_err(err, EINVAL, "device '%s' is not a device node%s%s", spec->devices[i].path,
                                        e ? ": " : "", e ? strerror(e) : "");
                }
                d[i].type = S_ISCHR(st.st_mode) ? 'c' : 'b';
                d[i].major = major(st.st_rdev);
                d[i].minor = minor(st.st_rdev);
        }
        *ret = d;
        return 0;
}

static int setup_network(const struct container_config *cfg, struct container_record *rec, struct tess_error **err)
{
        int r;

        r = netns_bridge_ensure(cfg->bridge, cfg->bridge_cidr, err);
        if (r < 0)
                return r;
        r = netns_create(rec->netns, err);
        if (r < 0)
                return r;
        r = netns_attach(rec->netns, cfg->bridge, rec->veth, rec->ip, rec->prefix, rec->gateway, err);
        if (r < 0)
                return r;
        return netfilter_port_add(cfg->bridge, cfg->bridge_cidr, rec->veth, rec->ip, rec->netgroup, err);
}

/* RLIMIT_NOFILE when the spec names none: 1048576 (Backend.AI's), unless
 * the agent cannot raise a hard limit (no CAP_SYS_RESOURCE, as in some
 * nested setups) and its own is lower: then its own. */
static uint64_t default_nofile(void)
{
        _cleanup_free_ char *status = NULL;
        unsigned long long eff = 0;
        struct rlimit rl;
        size_t len;

        if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_max >= OCI_DEFAULT_NOFILE)
                return OCI_DEFAULT_NOFILE;
        if (fs_read_file("/proc/self/status", 1 << 16, &status, &len, NULL) == 0) {
                const char *p = strstr(status, "\nCapEff:");
                if (p)
                        eff = strtoull(p + 9, NULL, 16);
        }
        return eff & (1ULL << CAP_SYS_RESOURCE) ? OCI_DEFAULT_NOFILE : rl.rlim_max;
}

static int write_etc(const struct container_spec *spec, const struct container_record *rec, const char *dir,
                     struct tess_error **err)
{
        char host[64];
        _cleanup_free_ char *hosts = NULL, *hostname = NULL;
        int r;

        snprintf(host, sizeof(host), "%s", spec->hostname ? spec->hostname : spec->id);
        hosts = xasprintf("127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n%s\t%s\n",
                          rec->ip ? rec->ip : "127.0.1.1", host);
        hostname = xasprintf("%s\n", host);
        r = write_text(dir, "hosts", hosts, err);
        if (r < 0)
                return r;
        return write_text(dir, "hostname", hostname, err);
}

/* In a user namespace the runtime opens what it binds as the container's
 * root, who may not pass the agent's 0700 state_dir: every source is a
 * copy under the stage (0711, userns.h), idmapped where the container
 * writes (folders, the agent's read-write files, the runner's socket
 * directory) so that their owners stay right inside.  A read-only mount on
 * a filesystem without idmapped mounts is copied as it is (its files then
 * show as nobody's, readable as their mode says); a read-write one is an
 * error, as the container could not write it.  OUT ret - the spec's mounts
 * with the copies as sources (strings into ret_paths); caller frees both. */
static int stage_mounts(const struct container_spec *spec, const char *stage, int userns_fd,
                        struct container_mount **ret, char ***ret_paths, struct tess_error **err)
{
        struct container_mount *m = xcalloc(spec->n_mounts + 1, sizeof(*m));
        char **paths = xcalloc(spec->n_mounts + 1, sizeof(*paths));
        int r = 0;

        for (size_t i = 0, k = 0; i < spec->n_mounts && r >= 0; i++) {
                m[i] = spec->mounts[i];
                if (!m[i].source || m[i].source[0] != '/')
                        continue; /* oci_spec_build() says what is wrong */
                char *path = paths[k++] = xasprintf("%s/m%zu", stage, i);
                r = userns_idmap_clone(m[i].source, path, userns_fd, !m[i].single, err);
                if (r == -EINVAL && m[i].readonly) {
                        *err = tess_error_free(*err);
                        r = userns_idmap_clone(m[i].source, path, -1, !m[i].single, err);
                }
                if (r < 0)
                        r = tess_err_wrap(err, "mount '%s' for a container in a user namespace (its filesystem "
                                          "needs idmapped mounts, or the agent userns = false)", m[i].destination);
                else
                        m[i].source = path;
        }
        *ret = m;
        *ret_paths = paths;
        return r;
}

static void free_paths(char **paths)
{
        for (char **p = paths; p && *p; p++)
                free(*p);
        free(paths);
}

/* *path replaced by a copy of it at stage/name (idmapped through
 * userns_fd, or as it is with -1). */
static int stage_one(const char *stage, const char *name, int userns_fd, char **path, struct tess_error **err)
{
        _cleanup_free_ char *dst = xasprintf("%s/%s", stage, name);
        int r = userns_idmap_clone(*path, dst, userns_fd, false, err);

        if (r < 0)
                return r;
        free(*path);
        *path = TAKE_PTR(dst);
        return 0;
}

static int write_bundle(const struct container_config *cfg, const struct container_spec *spec,
                        const struct container_record *rec, const char *dir, int userns_fd, struct tess_error **err)
{
        _cleanup_free_ char *cpu_file = container_file(dir, "cpus"), *runner = container_file(dir, "runner");
        _cleanup_free_ char *hosts = container_file(dir, "hosts"), *hostname = container_file(dir, "hostname");
        _cleanup_free_ char *bundle = container_file(dir, "bundle");
        _cleanup_free_ struct container_device *devices = NULL;
        _cleanup_free_ char *text = NULL;
        struct container_spec s = *spec;
        int n = oci_spec_cpu_count(spec), r;
        json_t *config;

        if (s.nofile == 0)
                s.nofile = default_nofile();
        if (n > 0) {
                char online[32];
                oci_spec_cpu_online_text(n, online, sizeof(online));
                r = write_text(dir, "cpus", online, err);
                if (r < 0)
                        return r;
        }
        r = write_etc(spec, rec, dir, err);
        if (r < 0)
                return r;
        r = resolve_devices(spec, &devices, err);
        if (r < 0)
                return r;
        s.devices = devices;
        _cleanup_free_ struct container_mount *mounts = NULL;
        _cleanup_free_ char *rootfs = xstrdup(rec->rootfs);
        _cleanup_free_ char *runner_bin = spec->runner_path ? xstrdup(spec->runner_path) : NULL;
        char **staged = NULL;
        if (rec->userns_size) {
                const char *stage = rec->idmap_stage;
                r = stage_mounts(spec, stage, userns_fd, &mounts, &staged, err);
                if (r >= 0)
                        r = stage_one(stage, "runner", userns_fd, &runner, err);
                if (r >= 0)
                        r = stage_one(stage, "rootfs", -1, &rootfs, err);
                if (r >= 0)
                        r = stage_one(stage, "hosts", -1, &hosts, err);
                if (r >= 0)
                        r = stage_one(stage, "hostname", -1, &hostname, err);
                if (r >= 0 && n > 0)
                        r = stage_one(stage, "cpus", -1, &cpu_file, err);
                if (r >= 0 && runner_bin)
                        r = stage_one(stage, "runner-bin", -1, &runner_bin, err);
                if (r < 0) {
                        free_paths(staged);
                        return r;
                }
                s.mounts = mounts;
                s.runner_path = runner_bin;
        }
        struct oci_spec_host host = {
                .rootfs = rootfs,
                .cgroups_path = rec->cgroup_path,
                .netns = rec->netns,
                .cpu_online = n > 0 ? cpu_file : NULL,
                .runner_dir = runner,
                .hosts = hosts,
                .hostname_file = hostname,
                .swap_limit = cgroup_swap_limit_supported(cfg->cgroup_root, cgroup_mode_detect(cfg->cgroup_root)),
                .userns_base = rec->userns_size ? rec->userns_base : 0,
                .userns_size = rec->userns_size,
        };
        r = oci_spec_build(&s, &host, &config, err);
        free_paths(staged);
        if (r < 0)
                return r;
        text = json_dumps(config, JSON_INDENT(2));
        json_decref(config);
        if (!text)
                return tess_err(err, ENOMEM, "encoding config.json");
        return write_text(bundle, "config.json", text, err);
}

/* Kill whatever a failed start left: the monitor, the container. */
static void kill_leftovers(const struct container_record *rec, const char *dir)
{
        _cleanup_free_ char *pidfile = container_file(dir, CT_MONITOR_PID);
        uint64_t start;
        pid_t pid;

        if (container_pidfile_read(pidfile, &pid, &start) == 0 && proc_alive(pid, start))
                kill(pid, SIGKILL);
        runc(rec, (const char *[]){ "delete", "--force", rec->id, NULL }, NULL, NULL, NULL);
}

/* Take an address on the bridge and name the network pieces in rec. */
static int claim_address(const struct container_config *cfg, const char *dir, const char *group,
                         struct container_record *rec, struct tess_error **err)
{
        char ip[IPAM_ADDR_LEN], gw_text[IPAM_ADDR_LEN], veth[NETNS_IFNAME_MAX];
        uint32_t gw;
        int r;

        r = ipam_parse_cidr(cfg->bridge_cidr, &gw, &rec->prefix, err);
        if (r < 0)
                return r;
        rec->owners_dir = owners_dir(cfg);
        rec->ipam_dir = xasprintf("%s/ipam/%s", cfg->state_dir, cfg->bridge);
        r = ipam_alloc(rec->ipam_dir, cfg->bridge_cidr, rec->id, group, rec->owners_dir, ip, &rec->netgroup, err);
        if (r < 0)
                return r;
        ipam_format(gw, gw_text);
        netns_veth_name(dir, veth);
        rec->ip = xstrdup(ip);
        rec->gateway = xstrdup(gw_text);
        rec->bridge = xstrdup(cfg->bridge);
        rec->veth = xstrdup(veth);
        rec->netns = xasprintf("%s/%s", cfg->netns_dir, rec->id);
        return 0;
}

static int create_in(const struct container_config *cfg, const struct container_spec *spec, const char *dir,
                     struct container_record *rec, struct tess_error **err)
{
        _cleanup_free_ char *rw = container_file(dir, CT_RW), *upper = xasprintf("%s/upper", rw),
                            *work = xasprintf("%s/work", rw), *image = container_file(dir, CT_RW_IMAGE);
        _cleanup_close_ int report = -1, userns_fd = -1;
        pid_t pid;
        int r;

        *rec = (struct container_record){
                .id = xstrdup(spec->id),
                .created_at = now_usec(),
                .runc = xstrdup(cfg->runc),
                .runc_root = xstrdup(cfg->runc_root),
                .cgroup_root = xstrdup(cfg->cgroup_root),
                .cgroup_path = xasprintf("/%s/%s", cfg->cgroup_parent, spec->id),
                .log_max = cfg->log_max,
                .rootfs = xasprintf("%s/bundle/rootfs", dir),
        };
        if (!cfg->no_userns) {
                rec->userns_base = cfg->userns_base;
                rec->userns_size = cfg->userns_size;
                /* the agent's pid: two agents on one host never share one */
                rec->idmap_stage = xasprintf("%s/%s-%d", cfg->idmap_dir, spec->id, (int)getpid());
        }
        size_t n = 0;
        while (spec->layers && spec->layers[n])
                n++;
        rec->layers = xcalloc(n + 1, sizeof(char *));
        for (size_t i = 0; i < n; i++)
                rec->layers[i] = xstrdup(spec->layers[i]);
        if (spec->disk_limit > 0)
                rec->layer_disk = xstrdup(rw);
        if (spec->network == CONTAINER_NET_BRIDGE) {
                r = claim_address(cfg, dir, spec->network_group ?: spec->id, rec, err);
                if (r < 0)
                        return r;
        }
        r = container_record_write(dir, rec, err);
        if (r < 0)
                return r;
        if (rec->netns) {
                r = setup_network(cfg, rec, err);
                if (r < 0)
                        return r;
        }
        if ((r = mkdir_in(dir, "bundle", err)) < 0 || (r = mkdir_in(dir, "bundle/rootfs", err)) < 0 ||
            (r = mkdir_in(dir, CT_RW, err)) < 0 || (r = mkdir_in(dir, "runner", err)) < 0)
                return r;
        if (rec->layer_disk)
                r = layer_disk_make(image, rw, spec->disk_limit, err);
        else if ((r = mkdir_in(dir, CT_RW "/upper", err)) >= 0)
                r = mkdir_in(dir, CT_RW "/work", err);
        if (r < 0)
                return r;
        if (rec->userns_size) {
                /* 0711, and not in the agent's 0700 dirs: the runtime binds
                 * from it as the container's root */
                r = fs_mkdir_p(cfg->idmap_dir, 0711, err);
                if (r >= 0 && mkdir(rec->idmap_stage, 0711) < 0 && errno != EEXIST)
                        r = tess_err(err, errno, "creating '%s': %s", rec->idmap_stage, strerror(errno));
                if (r >= 0)
                        r = userns_open(rec->userns_base, rec->userns_size, &userns_fd, err);
                if (r >= 0)
                        r = rootfs_mount_idmapped(spec->layers, rw, rec->rootfs, rec->idmap_stage, userns_fd,
                                                  rec->userns_base, err);
        } else {
                r = rootfs_mount(spec->layers, upper, work, rec->rootfs, err);
        }
        if (r < 0)
                return r;
        r = write_bundle(cfg, spec, rec, dir, userns_fd, err);
        if (r < 0)
                return r;
        r = monitor_spawn(cfg->monitor_exe, dir, &report, err);
        if (r < 0)
                return r;
        r = monitor_wait_started(report, cfg->start_timeout_usec, &pid, err);
        if (r < 0)
                kill_leftovers(rec, dir);
        /* runc has bound the copies into the container's own mount
         * namespace: the host's go, but the rootfs, which `runc exec`
         * changes into (its config's root.path) */
        if (rec->idmap_stage)
                userns_stage_remove(rec->idmap_stage, r < 0 ? NULL : "rootfs");
        return r;
}

int container_create(const struct container_config *config, const struct container_spec *spec,
                     struct tess_error **err)
{
        struct container_config cfg = resolve(config);
        _cleanup_free_ char *owners = owners_dir(&cfg), *dir = NULL;
        struct container_record rec = { 0 };
        int r;

        if (!container_id_valid(spec->id))
                return tess_err(err, EINVAL, "invalid container id '%s'", spec->id ? spec->id : "");
        r = fs_mkdir_p(owners, 0711, err);
        if (r < 0)
                return r;
        dir = container_dir(&cfg, spec->id);
        if (mkdir(dir, 0711) < 0) {
                if (errno == EEXIST)
                        return tess_err(err, EEXIST, "container '%s' exists", spec->id);
                return tess_err(err, errno, "creating '%s': %s", dir, strerror(errno));
        }
        r = create_in(&cfg, spec, dir, &rec, err);
        if (r < 0) {
                container_teardown(&rec, NULL);
                if (rec.layer_disk)
                        layer_disk_unmount(rec.layer_disk, NULL);
                if (!rootfs_is_mounted(rec.rootfs))
                        fs_remove_tree(dir, NULL);
                r = tess_err_wrap(err, "creating container '%s'", spec->id);
        }
        container_record_release(&rec);
        return r;
}

uint32_t container_agent_uid_inside(const struct container_config *cfg)
{
        return cfg->no_userns ? 0 : userns_overflow_uid();
}

/* ---- state ---- */

static int open_record(const struct container_config *cfg, const char *id, char **ret_dir,
                       struct container_record *rec, struct tess_error **err)
{
        _cleanup_free_ char *dir = NULL;
        int r;

        if (!container_id_valid(id))
                return tess_err(err, EINVAL, "invalid container id '%s'", id ? id : "");
        dir = container_dir(cfg, id);
        if (access(dir, F_OK) < 0)
                return tess_err(err, ENOENT, "no container '%s'", id);
        r = container_record_read(dir, rec, err);
        if (r < 0)
                return r;
        *ret_dir = TAKE_PTR(dir);
        return 0;
}

static bool monitor_alive(const char *dir, pid_t *ret_pid)
{
        _cleanup_free_ char *pidfile = container_file(dir, CT_MONITOR_PID);
        uint64_t start;
        pid_t pid;

        if (container_pidfile_read(pidfile, &pid, &start) < 0 || !proc_alive(pid, start))
                return false;
        if (ret_pid)
                *ret_pid = pid;
        return true;
}

static void fill_state(const char *dir, const struct container_record *rec, struct container_state *st)
{
        _cleanup_free_ char *pidfile = container_file(dir, CT_CONTAINER_PID);
        struct container_exit ex;
        uint64_t start;

        *st = (struct container_state){ .status = CONTAINER_UNKNOWN, .exit_code = -1 };
        if (rec) {
                st->created_at = rec->created_at;
                snprintf(st->ip, sizeof(st->ip), "%s", rec->ip ? rec->ip : "");
        }
        if (container_exit_read(dir, &ex, NULL) == 0) {
                st->status = CONTAINER_EXITED;
                st->exit_code = ex.exit_code;
                st->signal = ex.signal;
                st->oom_killed = ex.oom_killed;
                st->finished_at = ex.finished_at;
                st->has_usage = ex.has_usage;
                st->cpu_ns = ex.cpu_ns;
                st->mem = ex.mem;
                st->io_read = ex.io_read;
                st->io_write = ex.io_write;
                return;
        }
        if (monitor_alive(dir, &st->monitor_pid)) {
                st->status = CONTAINER_RUNNING;
        } else if (rec && runc_running(rec)) {
                st->status = CONTAINER_RUNNING;
                st->monitor_lost = true;
        }
        if (st->status == CONTAINER_RUNNING && container_pidfile_read(pidfile, &st->pid, &start) < 0)
                st->pid = 0;
}

int container_state(const struct container_config *config, const char *id, struct container_state *ret,
                    struct tess_error **err)
{
        struct container_config cfg = resolve(config);
        struct container_record rec = { 0 };
        _cleanup_free_ char *dir = NULL;
        struct tess_error *e = NULL;
        int r;

        r = open_record(&cfg, id, &dir, &rec, &e);
        if (r == -ENOENT || r == -EINVAL) {
                if (err)
                        *err = e;
                else
                        tess_error_free(e);
                return r;
        }
        if (r < 0) {
                /* a directory without its record: creation died half-way */
                tess_error_free(e);
                dir = container_dir(&cfg, id);
                fill_state(dir, NULL, ret);
                return 0;
        }
        fill_state(dir, &rec, ret);
        container_record_release(&rec);
        return 0;
}

bool container_exit_recorded(const struct container_config *cfg, const char *id)
{
        _cleanup_free_ char *dir = container_dir(cfg, id);
        return exists_in(dir, CT_EXIT);
}

bool container_monitor_alive(const struct container_config *cfg, const char *id)
{
        _cleanup_free_ char *dir = container_dir(cfg, id);
        return monitor_alive(dir, NULL);
}

/* ---- kill, destroy, remove ---- */

int container_kill(const struct container_config *config, const char *id, int sig, struct tess_error **err)
{
        struct container_config cfg = resolve(config);
        struct container_record rec = { 0 };
        _cleanup_free_ char *dir = NULL;
        int r;

        r = open_record(&cfg, id, &dir, &rec, err);
        if (r < 0)
                return r;
        if (exists_in(dir, CT_EXIT))
                r = tess_err(err, ESRCH, "container '%s' has exited", id);
        else
                r = runc_signal(&rec, sig, err);
        container_record_release(&rec);
        if (r < 0)
                return tess_err_wrap(err, "signalling container '%s'", id);
        return 0;
}

/* Wait until dir/name exists, or the time is up. */
static bool wait_for_file(const char *dir, const char *name, int64_t usec)
{
        int64_t deadline = monotonic_usec() + usec;

        for (;;) {
                if (exists_in(dir, name))
                        return true;
                if (monotonic_usec() >= deadline)
                        return false;
                usleep(POLL_USEC);
        }
}

static void wait_monitor_gone(const char *dir, int64_t usec)
{
        int64_t deadline = monotonic_usec() + usec;

        while (monitor_alive(dir, NULL) && monotonic_usec() < deadline)
                usleep(POLL_USEC);
}

static int stop(const struct container_record *rec, const char *dir, int64_t grace_usec, struct tess_error **err)
{
        struct container_state st;

        fill_state(dir, rec, &st);
        if (st.status == CONTAINER_EXITED)
                return 0;
        if (st.status == CONTAINER_RUNNING && !st.monitor_lost) {
                runc_signal(rec, SIGTERM, NULL);
                if (!wait_for_file(dir, CT_EXIT, grace_usec)) {
                        runc_signal(rec, SIGKILL, NULL);
                        if (!wait_for_file(dir, CT_EXIT, KILL_WAIT_USEC))
                                return tess_err(err, ETIMEDOUT, "the container did not stop");
                }
                /* its monitor deletes it from runc and tears it down */
                wait_monitor_gone(dir, KILL_WAIT_USEC);
                return 0;
        }
        /* nobody to record the end: do it here */
        runc_signal(rec, SIGKILL, NULL);
        runc(rec, (const char *[]){ "delete", "--force", rec->id, NULL }, NULL, NULL, NULL);
        struct container_exit ex = { .exit_code = -1, .monitor_lost = true, .finished_at = now_usec() };
        return container_exit_write(dir, &ex, err);
}

int container_destroy(const struct container_config *config, const char *id, int64_t grace_usec,
                      struct tess_error **err)
{
        struct container_config cfg = resolve(config);
        struct container_record rec = { 0 };
        _cleanup_free_ char *dir = NULL;
        int r;

        r = open_record(&cfg, id, &dir, &rec, err);
        if (r < 0)
                return tess_err_wrap(err, "destroying container '%s'", id ? id : "");
        r = stop(&rec, dir, grace_usec, err);
        if (r >= 0)
                r = container_teardown(&rec, err);
        container_record_release(&rec);
        if (r < 0)
                return tess_err_wrap(err, "destroying container '%s'", id);
        return 0;
}

int container_remove(const struct container_config *config, const char *id, struct tess_error **err)
{
        struct container_config cfg = resolve(config);
        struct container_record rec = { 0 };
        _cleanup_free_ char *dir = NULL;
        struct container_state st;
        struct tess_error *e = NULL;
        int r;

        if (!container_id_valid(id))
                return tess_err(err, EINVAL, "invalid container id '%s'", id ? id : "");
        r = container_state(&cfg, id, &st, err);
        if (r < 0)
                return r;
        if (st.status == CONTAINER_RUNNING)
                return tess_err(err, EBUSY, "container '%s' is running", id);
        if (open_record(&cfg, id, &dir, &rec, &e) == 0) {
                r = container_teardown(&rec, err);
                /* the writable layer stays mounted until now: a commit may
                 * read it after the container ended */
                if (r >= 0 && rec.layer_disk)
                        r = layer_disk_unmount(rec.layer_disk, err);
                if (r >= 0 && rootfs_is_mounted(rec.rootfs))
                        r = tess_err(err, EBUSY, "'%s' is still mounted", rec.rootfs);
                if (r >= 0 && rec.layer_disk && rootfs_is_mounted(rec.layer_disk))
                        r = tess_err(err, EBUSY, "'%s' is still mounted", rec.layer_disk);
                container_record_release(&rec);
                if (r < 0)
                        return tess_err_wrap(err, "removing container '%s'", id);
        } else {
                tess_error_free(e);
                dir = container_dir(&cfg, id);
        }
        return fs_remove_tree(dir, err);
}

/* ---- list, stats ---- */

static int cmp_str(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

int container_list(const struct container_config *config, char ***ret_ids, size_t *ret_n, struct tess_error **err)
{
        struct container_config cfg = resolve(config);
        _cleanup_free_ char *owners = owners_dir(&cfg);
        char **ids = NULL;
        size_t n = 0;
        struct dirent *de;
        DIR *d;

        d = opendir(owners);
        if (!d && errno != ENOENT)
                return tess_err(err, errno, "listing '%s': %s", owners, strerror(errno));
        while (d && (de = readdir(d))) {
                if (!container_id_valid(de->d_name) || de->d_type != DT_DIR)
                        continue;
                ids = xrealloc(ids, (n + 1) * sizeof(char *));
                ids[n++] = xstrdup(de->d_name);
        }
        if (d)
                closedir(d);
        if (n > 1)
                qsort(ids, n, sizeof(char *), cmp_str);
        *ret_ids = ids;
        *ret_n = n;
        return 0;
}

int container_pids(const struct container_config *config, const char *id, pid_t **ret, size_t *ret_n,
                   struct tess_error **err)
{
        struct container_config cfg = resolve(config);
        struct container_record rec = { 0 };
        _cleanup_free_ char *dir = NULL;
        int r;

        r = open_record(&cfg, id, &dir, &rec, err);
        if (r < 0)
                return r;
        r = cgroup_pids_read(rec.cgroup_root, cgroup_mode_detect(rec.cgroup_root), rec.cgroup_path, ret, ret_n, err);
        container_record_release(&rec);
        return r;
}

int container_stats(const struct container_config *config, const char *id, struct container_stats *ret,
                    struct tess_error **err)
{
        struct container_config cfg = resolve(config);
        struct container_record rec = { 0 };
        _cleanup_free_ char *dir = NULL, *pidfile = NULL, *netdev = NULL;
        uint64_t start;
        pid_t pid;
        int r;

        r = open_record(&cfg, id, &dir, &rec, err);
        if (r < 0)
                return r;
        r = cgroup_stats_read(rec.cgroup_root, cgroup_mode_detect(rec.cgroup_root), rec.cgroup_path, ret, err);
        container_record_release(&rec);
        if (r < 0)
                return tess_err_wrap(err, "reading the stats of container '%s'", id);
        ret->net_rx_bytes = ret->net_tx_bytes = 0;
        pidfile = container_file(dir, CT_CONTAINER_PID);
        if (container_pidfile_read(pidfile, &pid, &start) == 0) {
                netdev = xasprintf("/proc/%d/net/dev", (int)pid);
                net_dev_read(netdev, &ret->net_rx_bytes, &ret->net_tx_bytes, NULL);
        }
        return 0;
}
