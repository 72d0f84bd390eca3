/* oci_spec.c - builds a container's config.json (OCI runtime spec 1.0)
 * from its container_spec; no I/O.
 *
 * Capabilities: Docker's default set less CAP_MKNOD (device nodes are the
 * agent's business) and CAP_NET_RAW (raw sockets allow spoofing on the
 * shared bridge; ping is the price): CHOWN, DAC_OVERRIDE, FSETID, FOWNER,
 * SETGID, SETUID, SETFCAP, SETPCAP, NET_BIND_SERVICE, SYS_CHROOT, KILL,
 * AUDIT_WRITE, in the bounding, effective and permitted sets (never
 * inheritable or ambient: a non-root user gets none of them).  The rest of
 * the settings follow Docker's defaults; docs/design/containers.md says why. */
#include "common/compat.h"

#include <inttypes.h>

#include "agent/container/container.h"
#include "agent/container/oci_spec.h"
#include "common/buf.h"

static const char *const capabilities[] = {
        "CAP_CHOWN",  "CAP_DAC_OVERRIDE",     "CAP_FSETID",     "CAP_FOWNER", "CAP_SETGID",      "CAP_SETUID",
        "CAP_SETFCAP", "CAP_SETPCAP", "CAP_NET_BIND_SERVICE", "CAP_SYS_CHROOT", "CAP_KILL",   "CAP_AUDIT_WRITE",
};

/* Docker's: kernel information a container has no business reading... */
static const char *const masked_paths[] = {
        "/proc/asound",      "/proc/acpi",  "/proc/kcore",    "/proc/keys",
        "/proc/latency_stats", "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug",
        "/proc/scsi",        "/sys/firmware", "/sys/devices/virtual/powercap",
};
/* ...and host settings it must not change. */
static const char *const readonly_paths[] = {
        "/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger",
};

/* The character devices every container may use; anything else is denied
 * unless the spec lists it.  (runc adds its own defaults on top, among
 * them mknod of any node, which CAP_MKNOD's absence makes moot.) */
static const struct {
        int64_t major, minor; /* -1: any */
} std_devices[] = {
        { 1, 3 }, /* null */   { 1, 5 }, /* zero */ { 1, 7 }, /* full */ { 1, 8 }, /* random */
        { 1, 9 }, /* urandom */ { 5, 0 }, /* tty */  { 5, 2 }, /* ptmx */ { 136, -1 }, /* pts */
};

static const char *const cpu_files[] = {
        "/sys/devices/system/cpu/online",
        "/sys/devices/system/cpu/possible",
        "/sys/devices/system/cpu/present",
};

static const char *const thread_env[] = { "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                                          "NUMEXPR_NUM_THREADS" };

#define DEFAULT_PATH "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

int oci_spec_cpu_count(const struct container_spec *spec)
{
        if (spec->n_cores > 0)
                return (int)spec->n_cores;
        if (spec->cpu > 0)
                return (int)((spec->cpu + 999) / 1000);
        return 0;
}

void oci_spec_cpu_online_text(int n, char *buf, size_t len)
{
        if (n <= 1)
                snprintf(buf, len, "0\n");
        else
                snprintf(buf, len, "0-%d\n", n - 1);
}

static json_t *string_array(const char *const *v, size_t n)
{
        json_t *a = json_array();
        for (size_t i = 0; i < n; i++)
                json_array_append_new(a, json_string(v[i]));
        return a;
}

static bool env_has(const char *const *env, const char *key)
{
        size_t n = strlen(key);
        for (; env && *env; env++)
                if (strncmp(*env, key, n) == 0 && (*env)[n] == '=')
                        return true;
        return false;
}

static json_t *build_env(const struct container_spec *spec)
{
        json_t *a = json_array();
        int n = oci_spec_cpu_count(spec);

        if (!env_has(spec->env, "PATH"))
                json_array_append_new(a, json_string(DEFAULT_PATH));
        for (size_t i = 0; n > 0 && i < ARRAY_SIZE(thread_env); i++) {
                char kv[64];
                if (env_has(spec->env, thread_env[i]))
                        continue;
                snprintf(kv, sizeof(kv), "%s=%d", thread_env[i], n);
                json_array_append_new(a, json_string(kv));
        }
        for (const char *const *e = spec->env; e && *e; e++)
                json_array_append_new(a, json_string(*e));
        return a;
}

static int build_process(const struct container_spec *spec, json_t **ret, struct tess_error **err)
{
        json_t *args = json_array(), *gids = json_array(), *caps, *env;
        uint64_t nofile = spec->nofile ? spec->nofile : OCI_DEFAULT_NOFILE;

        for (const char *const *a = spec->args; a && *a; a++)
                json_array_append_new(args, json_string(*a));
        if (json_array_size(args) == 0) {
                json_decref(args);
                json_decref(gids);
                return tess_err(err, EINVAL, "no command to run");
        }
        for (size_t i = 0; i < spec->n_extra_gids; i++)
                json_array_append_new(gids, json_integer(spec->extra_gids[i]));
        env = build_env(spec);
        caps = string_array(capabilities, ARRAY_SIZE(capabilities));
        *ret = json_pack("{s:b, s:{s:I, s:I, s:o}, s:o, s:o, s:s, s:{s:O, s:O, s:o}, s:[{s:s, s:I, s:I}], s:b}",
                         "terminal", 0, "user", "uid", (json_int_t)spec->uid, "gid", (json_int_t)spec->gid,
                         "additionalGids", gids, "args", args, "env", env, "cwd", spec->cwd ? spec->cwd : "/",
                         "capabilities", "bounding", caps, "effective", caps, "permitted", caps, "rlimits", "type",
                         "RLIMIT_NOFILE", "hard", (json_int_t)nofile, "soft", (json_int_t)nofile,
                         "noNewPrivileges", 1);
        return 0;
}

static void add_mount(json_t *mounts, const char *dst, const char *type, const char *src, const char *const *opts)
{
        json_t *o = json_array();
        for (; *opts; opts++)
                json_array_append_new(o, json_string(*opts));
        json_array_append_new(mounts,
                              json_pack("{s:s, s:s, s:s, s:o}", "destination", dst, "type", type, "source", src,
                                        "options", o));
}

static void add_bind_of(json_t *mounts, const char *dst, const char *src, bool ro, bool exec, bool recursive)
{
        const char *opts[] = { recursive ? "rbind" : "bind", ro ? "ro" : "rw", "nosuid", "nodev",
                               exec ? NULL : "noexec", NULL };
        add_mount(mounts, dst, "bind", src, opts);
}

static void add_bind(json_t *mounts, const char *dst, const char *src, bool ro, bool exec)
{
        add_bind_of(mounts, dst, src, ro, exec, true);
}

static int build_mounts(const struct container_spec *spec, const struct oci_spec_host *host, json_t **ret,
                        struct tess_error **err)
{
        json_t *m = json_array();
        _cleanup_free_ char *shm = xasprintf("size=%" PRId64, spec->shm_size > 0 ? spec->shm_size : OCI_DEFAULT_SHM);

        add_mount(m, "/proc", "proc", "proc", (const char *[]){ "nosuid", "noexec", "nodev", NULL });
        add_mount(m, "/dev", "tmpfs", "tmpfs", (const char *[]){ "nosuid", "strictatime", "mode=755", "size=65536k", NULL });
        add_mount(m, "/dev/pts", "devpts", "devpts",
                  (const char *[]){ "nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", "gid=5", NULL });
        add_mount(m, "/dev/shm", "tmpfs", "shm", (const char *[]){ "nosuid", "noexec", "nodev", "mode=1777", shm, NULL });
        add_mount(m, "/dev/mqueue", "mqueue", "mqueue", (const char *[]){ "nosuid", "noexec", "nodev", NULL });
        if (host->userns_base && host->netns)
                /* sysfs may only be mounted by the owner of the network
                 * namespace, which the agent made outside: the host's, read
                 * only all the way down (rro, Linux 5.12), as rootless
                 * Docker and Podman do */
                add_mount(m, "/sys", "bind", "/sys", (const char *[]){ "rbind", "nosuid", "noexec", "nodev", "rro", NULL });
        else
                add_mount(m, "/sys", "sysfs", "sysfs", (const char *[]){ "nosuid", "noexec", "nodev", "ro", NULL });
        add_mount(m, "/sys/fs/cgroup", "cgroup", "cgroup",
                  (const char *[]){ "nosuid", "noexec", "nodev", "relatime", "ro", NULL });
        for (size_t i = 0; host->cpu_online && i < ARRAY_SIZE(cpu_files); i++)
                add_bind(m, cpu_files[i], host->cpu_online, true, false);
        if (host->hosts)
                add_bind(m, "/etc/hosts", host->hosts, true, false);
        if (host->hostname_file)
                add_bind(m, "/etc/hostname", host->hostname_file, true, false);
        if (spec->runner_path)
                add_bind(m, CONTAINER_RUNNER_PATH, spec->runner_path, true, true);
        if (host->runner_dir)
                add_bind(m, CONTAINER_RUNNER_DIR, host->runner_dir, false, false);
        for (size_t i = 0; i < spec->n_mounts; i++) {
                const struct container_mount *cm = &spec->mounts[i];
                if (!cm->source || cm->source[0] != '/' || !cm->destination || cm->destination[0] != '/') {
                        json_decref(m);
                        return tess_err(err, EINVAL, "mount '%s' -> '%s': paths must be absolute",
                                        cm->source ? cm->source : "", cm->destination ? cm->destination : "");
                }
                add_bind_of(m, cm->destination, cm->source, cm->readonly, true, !cm->single);
        }
        *ret = m;
        return 0;
}

static json_t *device_rule(char type, int64_t major, int64_t minor, const char *access)
{
        json_t *d = json_pack("{s:b, s:s, s:s}", "allow", 1, "type", (char[]){ type, '\0' }, "access", access);
        if (major >= 0)
                json_object_set_new(d, "major", json_integer(major));
        if (minor >= 0)
                json_object_set_new(d, "minor", json_integer(minor));
        return d;
}

static int build_devices(const struct container_spec *spec, json_t **ret_rules, json_t **ret_nodes,
                         struct tess_error **err)
{
        json_t *rules = json_array(), *nodes = json_array();

        json_array_append_new(rules, json_pack("{s:b, s:s}", "allow", 0, "access", "rwm"));
        for (size_t i = 0; i < ARRAY_SIZE(std_devices); i++)
                json_array_append_new(rules, device_rule('c', std_devices[i].major, std_devices[i].minor, "rwm"));
        for (size_t i = 0; i < spec->n_devices; i++) {
                const struct container_device *d = &spec->devices[i];
                if (!d->path || d->path[0] != '/' || (d->type != 'c' && d->type != 'b')) {
                        json_decref(rules);
                        json_decref(nodes);
                        return tess_err(err, EINVAL, "device '%s': needs an absolute path and type 'c' or 'b'",
                                        d->path ? d->path : "");
                }
                json_array_append_new(rules, device_rule(d->type, d->major, d->minor, "rwm"));
                json_array_append_new(nodes, json_pack("{s:s, s:s, s:I, s:I, s:i, s:i, s:i}", "path", d->path,
                                                       "type", (char[]){ d->type, '\0' }, "major",
                                                       (json_int_t)d->major, "minor", (json_int_t)d->minor,
                                                       "fileMode", 0666, "uid", 0, "gid", 0));
        }
        *ret_rules = rules;
        *ret_nodes = nodes;
        return 0;
}

static json_t *build_resources(const struct container_spec *spec, const struct oci_spec_host *host, json_t *devices)
{
        json_t *res = json_object(), *cpu = json_object();

        if (spec->cpu > 0) {
                int64_t quota = spec->cpu * (OCI_CPU_PERIOD_US / 1000);
                json_object_set_new(cpu, "quota", json_integer(quota < 1000 ? 1000 : quota));
                json_object_set_new(cpu, "period", json_integer(OCI_CPU_PERIOD_US));
        }
        if (spec->n_cores > 0) {
                struct buf b = BUF_INIT;
                for (size_t i = 0; i < spec->n_cores; i++)
                        buf_printf(&b, "%s%d", i ? "," : "", spec->cores[i]);
                json_object_set_new(cpu, "cpus", json_string(b.data));
                buf_release(&b);
        }
        if (spec->mems)
                json_object_set_new(cpu, "mems", json_string(spec->mems));
        json_object_set_new(res, "cpu", cpu);
        if (spec->memory > 0) {
                json_t *mem = json_pack("{s:I}", "limit", (json_int_t)spec->memory);
                /* memory+swap = memory: no swap beyond the memory (Backend.AI's MemorySwap = Memory) */
                if (host->swap_limit)
                        json_object_set_new(mem, "swap", json_integer(spec->memory));
                json_object_set_new(res, "memory", mem);
        }
        json_object_set_new(res, "pids",
                            json_pack("{s:I}", "limit", (json_int_t)(spec->pids_limit > 0 ? spec->pids_limit
                                                                                            : OCI_DEFAULT_PIDS)));
        json_object_set_new(res, "devices", devices);
        return res;
}

static json_t *build_namespaces(const struct oci_spec_host *host)
{
        json_t *ns = json_pack("[{s:s}, {s:s}, {s:s}, {s:s}, {s:s}]", "type", "pid", "type", "mount", "type", "uts",
                               "type", "ipc", "type", "cgroup");
        json_t *net = json_pack("{s:s}", "type", "network");
        if (host->netns)
                json_object_set_new(net, "path", json_string(host->netns));
        json_array_append_new(ns, net);
        if (host->userns_base)
                json_array_append_new(ns, json_pack("{s:s}", "type", "user"));
        return ns;
}

/* [{containerID 0, hostID base, size}]: uidMappings and gidMappings alike */
static json_t *id_mappings(const struct oci_spec_host *host)
{
        return json_pack("[{s:i, s:I, s:I}]", "containerID", 0, "hostID", (json_int_t)host->userns_base, "size",
                         (json_int_t)host->userns_size);
}

int oci_spec_build(const struct container_spec *spec, const struct oci_spec_host *host, json_t **ret,
                   struct tess_error **err)
{
        json_t *process = NULL, *mounts = NULL, *rules = NULL, *nodes = NULL;
        char hostname[64];
        int r;

        r = build_process(spec, &process, err);
        if (r < 0)
                return r;
        r = build_mounts(spec, host, &mounts, err);
        if (r < 0) {
                json_decref(process);
                return r;
        }
        r = build_devices(spec, &rules, &nodes, err);
        if (r < 0) {
                json_decref(process);
                json_decref(mounts);
                return r;
        }
        snprintf(hostname, sizeof(hostname), "%s", spec->hostname ? spec->hostname : spec->id);
        *ret = json_pack("{s:s, s:o, s:{s:s, s:b}, s:s, s:o, s:{s:o, s:s, s:o, s:o, s:o, s:o, s:o}}", "ociVersion",
                         "1.0.2", "process", process, "root", "path", host->rootfs, "readonly", 0, "hostname",
                         hostname, "mounts", mounts, "linux", "namespaces", build_namespaces(host), "cgroupsPath",
                         host->cgroups_path, "resources", build_resources(spec, host, rules), "devices", nodes,
                         "maskedPaths", string_array(masked_paths, ARRAY_SIZE(masked_paths)), "readonlyPaths",
                         string_array(readonly_paths, ARRAY_SIZE(readonly_paths)), "seccomp", oci_seccomp_profile());
        if (!*ret)
                return tess_err(err, EINVAL, "building config.json");
        if (host->userns_base) {
                json_t *lx = json_object_get(*ret, "linux");
                json_object_set_new(lx, "uidMappings", id_mappings(host));
                json_object_set_new(lx, "gidMappings", id_mappings(host));
        }
        return 0;
}
