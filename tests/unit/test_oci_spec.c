/* test_oci_spec.c - the config.json of a container: namespaces,
 * capabilities, no_new_privs, seccomp, cgroup values from the slots,
 * mounts (the cpu-online file, the runner), devices, errors. */
#include "common/compat.h"

#include <jansson.h>

#include "../lib/test.h"
#include "agent/container/container.h"
#include "agent/container/oci_spec.h"

static const char *const args[] = { "python3", "-c", "pass", NULL };
static const char *const env[] = { "LANG=C.UTF-8", "MKL_NUM_THREADS=9", NULL };
static const int cores[] = { 2, 3 };
static const uint32_t gids[] = { 100, 2000 };
static const struct container_mount mounts[] = {
        { "/data/vfolders/u1", "/home/work/data", false },
        { "/data/models", "/models", true },
};
static const struct container_device gpus[] = { { "/dev/nvidia0", 'c', 195, 0 } };

static struct container_spec full_spec(void)
{
        return (struct container_spec){
                .id = "k1",
                .args = args,
                .env = env,
                .cwd = "/home/work",
                .uid = 1000,
                .gid = 1000,
                .extra_gids = gids,
                .n_extra_gids = 2,
                .cpu = 1500,
                .cores = cores,
                .n_cores = 2,
                .memory = (int64_t)4 << 30,
                .shm_size = (int64_t)1 << 30,
                .pids_limit = 512,
                .nofile = 65536,
                .mounts = mounts,
                .n_mounts = 2,
                .devices = gpus,
                .n_devices = 1,
                .runner_path = "/usr/lib/tessera/tessera-runner",
        };
}

static const struct oci_spec_host full_host = {
        .rootfs = "/var/lib/tessera/containers/k1/bundle/rootfs",
        .cgroups_path = "/tessera/k1",
        .netns = "/run/tessera/netns/k1",
        .cpu_online = "/var/lib/tessera/containers/k1/cpus",
        .runner_dir = "/var/lib/tessera/containers/k1/runner",
        .hosts = "/var/lib/tessera/containers/k1/hosts",
        .hostname_file = "/var/lib/tessera/containers/k1/hostname",
        .swap_limit = true,
};

static json_t *build(const struct container_spec *spec, const struct oci_spec_host *host)
{
        struct tess_error *err = NULL;
        json_t *doc = NULL;

        if (oci_spec_build(spec, host, &doc, &err) < 0) {
                test_fail(__FILE__, __LINE__, "oci_spec_build: %s", err->msg);
                tess_error_free(err);
                return NULL;
        }
        return doc;
}

/* The value at a path of object keys and array indexes ("linux.resources.cpu.quota", "mounts.0"). */
static json_t *at(json_t *doc, const char *path)
{
        _cleanup_free_ char *copy = xstrdup(path);
        char *save = NULL;

        for (char *k = strtok_r(copy, ".", &save); k && doc; k = strtok_r(NULL, ".", &save))
                doc = json_is_array(doc) ? json_array_get(doc, strtoull(k, NULL, 10)) : json_object_get(doc, k);
        return doc;
}

static const char *str_at(json_t *doc, const char *path)
{
        return json_string_value(at(doc, path));
}

static bool array_has(json_t *a, const char *s)
{
        size_t i;
        json_t *v;

        json_array_foreach (a, i, v)
                if (streq_ptr(json_string_value(v), s))
                        return true;
        return false;
}

/* The mount with this destination, or NULL. */
static json_t *mount_at(json_t *doc, const char *dst)
{
        size_t i;
        json_t *m;

        json_array_foreach (json_object_get(doc, "mounts"), i, m)
                if (streq_ptr(str_at(m, "destination"), dst))
                        return m;
        return NULL;
}

static void test_process(void)
{
        struct container_spec spec = full_spec();
        json_t *doc = build(&spec, &full_host), *p;

        if (!doc)
                return;
        p = json_object_get(doc, "process");
        CHECK(json_is_false(json_object_get(p, "terminal")));
        CHECK(json_is_true(json_object_get(p, "noNewPrivileges")));
        CHECK_INTEQ(json_integer_value(at(p, "user.uid")), 1000);
        CHECK_INTEQ(json_integer_value(at(p, "user.gid")), 1000);
        CHECK_INTEQ(json_array_size(at(p, "user.additionalGids")), 2);
        CHECK_INTEQ(json_integer_value(at(p, "user.additionalGids.1")), 2000);
        CHECK_STREQ(str_at(p, "args.0"), "python3");
        CHECK_INTEQ(json_array_size(json_object_get(p, "args")), 3);
        CHECK_STREQ(str_at(p, "cwd"), "/home/work");
        CHECK_STREQ(str_at(p, "rlimits.0.type"), "RLIMIT_NOFILE");
        CHECK_INTEQ(json_integer_value(at(p, "rlimits.0.hard")), 65536);
        CHECK_INTEQ(json_integer_value(at(p, "rlimits.0.soft")), 65536);
        /* the environment: a PATH, thread counts for 2 cores, the user's own value kept */
        json_t *e = json_object_get(p, "env");
        CHECK(array_has(e, "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"));
        CHECK(array_has(e, "OMP_NUM_THREADS=2"));
        CHECK(array_has(e, "OPENBLAS_NUM_THREADS=2"));
        CHECK(array_has(e, "NUMEXPR_NUM_THREADS=2"));
        CHECK(array_has(e, "MKL_NUM_THREADS=9"));
        CHECK(!array_has(e, "MKL_NUM_THREADS=2"));
        CHECK(array_has(e, "LANG=C.UTF-8"));
        json_decref(doc);
}

static void test_capabilities(void)
{
        static const char *const want[] = { "CAP_CHOWN",      "CAP_DAC_OVERRIDE",     "CAP_FSETID", "CAP_FOWNER",
                                            "CAP_SETGID",     "CAP_SETUID",           "CAP_SETFCAP", "CAP_SETPCAP",
                                            "CAP_NET_BIND_SERVICE", "CAP_SYS_CHROOT", "CAP_KILL",   "CAP_AUDIT_WRITE" };
        struct container_spec spec = full_spec();
        json_t *doc = build(&spec, &full_host), *caps;

        if (!doc)
                return;
        caps = at(doc, "process.capabilities");
        for (size_t s = 0; s < 3; s++) {
                const char *set = (const char *[]){ "bounding", "effective", "permitted" }[s];
                json_t *a = json_object_get(caps, set);
                CHECK_INTEQ(json_array_size(a), ARRAY_SIZE(want));
                for (size_t i = 0; i < ARRAY_SIZE(want); i++)
                        CHECK(array_has(a, want[i]));
                CHECK(!array_has(a, "CAP_SYS_ADMIN"));
                CHECK(!array_has(a, "CAP_NET_RAW"));
                CHECK(!array_has(a, "CAP_MKNOD"));
                CHECK(!array_has(a, "CAP_SYS_PTRACE"));
        }
        CHECK(!json_object_get(caps, "inheritable"));
        CHECK(!json_object_get(caps, "ambient"));
        json_decref(doc);
}

static void test_namespaces(void)
{
        struct container_spec spec = full_spec();
        struct oci_spec_host host = full_host;
        json_t *doc = build(&spec, &host), *ns;
        const char *want[] = { "pid", "mount", "uts", "ipc", "cgroup", "network" };
        size_t i;
        json_t *n;

        if (!doc)
                return;
        ns = at(doc, "linux.namespaces");
        CHECK_INTEQ(json_array_size(ns), ARRAY_SIZE(want));
        json_array_foreach (ns, i, n) {
                CHECK_STREQ(str_at(n, "type"), want[i]);
                if (streq(want[i], "network"))
                        CHECK_STREQ(str_at(n, "path"), "/run/tessera/netns/k1");
                else
                        CHECK(!json_object_get(n, "path"));
        }
        CHECK_STREQ(str_at(doc, "root.path"), full_host.rootfs);
        CHECK(json_is_false(at(doc, "root.readonly")));
        CHECK_STREQ(str_at(doc, "hostname"), "k1");
        CHECK_STREQ(str_at(doc, "linux.cgroupsPath"), "/tessera/k1");
        json_decref(doc);

        /* network none: a new namespace, no path */
        host.netns = NULL;
        doc = build(&spec, &host);
        CHECK_STREQ(str_at(doc, "linux.namespaces.5.type"), "network");
        CHECK(!at(doc, "linux.namespaces.5.path"));
        json_decref(doc);
}

/* A user namespace: "user" among the namespaces, 0.. mapped to the base
 * for uids and gids; with the agent's network namespace, the host's /sys
 * read-only all the way down instead of a sysfs it may not mount. */
static void test_user_namespace(void)
{
        struct container_spec spec = full_spec();
        struct oci_spec_host host = full_host;
        json_t *doc, *sys;
        bool user = false;
        size_t i;
        json_t *n;

        doc = build(&spec, &host);
        if (!doc)
                return;
        json_array_foreach (at(doc, "linux.namespaces"), i, n)
                user |= streq_ptr(str_at(n, "type"), "user");
        CHECK(!user);
        CHECK(!at(doc, "linux.uidMappings"));
        json_decref(doc);

        host.userns_base = 2000000000u;
        host.userns_size = 65536;
        doc = build(&spec, &host);
        if (!doc)
                return;
        json_array_foreach (at(doc, "linux.namespaces"), i, n)
                user |= streq_ptr(str_at(n, "type"), "user") && !json_object_get(n, "path");
        CHECK(user);
        for (int k = 0; k < 2; k++) {
                json_t *m = at(doc, k ? "linux.gidMappings" : "linux.uidMappings");
                CHECK_INTEQ(json_array_size(m), 1);
                CHECK_INTEQ(json_integer_value(at(m, "0.containerID")), 0);
                CHECK_INTEQ(json_integer_value(at(m, "0.hostID")), 2000000000);
                CHECK_INTEQ(json_integer_value(at(m, "0.size")), 65536);
        }
        sys = mount_at(doc, "/sys");
        CHECK_STREQ(str_at(sys, "type"), "bind");
        CHECK_STREQ(str_at(sys, "source"), "/sys");
        CHECK(array_has(json_object_get(sys, "options"), "rbind"));
        CHECK(array_has(json_object_get(sys, "options"), "rro"));
        json_decref(doc);

        host.netns = NULL; /* runc makes the network namespace, in the user namespace: sysfs */
        doc = build(&spec, &host);
        if (!doc)
                return;
        CHECK_STREQ(str_at(mount_at(doc, "/sys"), "type"), "sysfs");
        json_decref(doc);
}

static void test_seccomp(void)
{
        struct container_spec spec = full_spec();
        json_t *doc = build(&spec, &full_host), *sc, *rule;
        bool clone_newuser = false, clone3_enosys = false, vsock_denied = false, socketcall_denied = false;
        size_t i;

        if (!doc)
                return;
        sc = at(doc, "linux.seccomp");
        CHECK_STREQ(str_at(sc, "defaultAction"), "SCMP_ACT_ALLOW");
        CHECK(array_has(json_object_get(sc, "architectures"), "SCMP_ARCH_X86_64"));
        CHECK(array_has(json_object_get(sc, "architectures"), "SCMP_ARCH_X86"));
        CHECK(array_has(json_object_get(sc, "architectures"), "SCMP_ARCH_X32"));
        rule = at(sc, "syscalls.0");
        CHECK_STREQ(str_at(rule, "action"), "SCMP_ACT_ERRNO");
        CHECK_INTEQ(json_integer_value(json_object_get(rule, "errnoRet")), EPERM);
        for (size_t k = 0; k < 12; k++) {
                const char *name = (const char *[]){ "mount", "umount2", "pivot_root", "keyctl", "add_key", "bpf",
                                                     "kexec_load", "init_module", "open_by_handle_at", "setns",
                                                     "perf_event_open", "userfaultfd" }[k];
                if (!array_has(json_object_get(rule, "names"), name))
                        test_fail(__FILE__, __LINE__, "'%s' is not denied", name);
        }
        CHECK(!array_has(json_object_get(rule, "names"), "ptrace"));
        json_array_foreach (json_object_get(sc, "syscalls"), i, rule) {
                if (array_has(json_object_get(rule, "names"), "clone") &&
                    json_integer_value(at(rule, "args.0.value")) == 0x10000000 &&
                    streq_ptr(str_at(rule, "args.0.op"), "SCMP_CMP_MASKED_EQ"))
                        clone_newuser = true;
                if (array_has(json_object_get(rule, "names"), "clone3") &&
                    json_integer_value(json_object_get(rule, "errnoRet")) == ENOSYS)
                        clone3_enosys = true;
                /* socket(AF_VSOCK, ...) fails as where the family does not exist */
                if (array_has(json_object_get(rule, "names"), "socket") &&
                    json_integer_value(at(rule, "args.0.value")) == 40 &&
                    streq_ptr(str_at(rule, "args.0.op"), "SCMP_CMP_EQ") &&
                    streq_ptr(str_at(rule, "action"), "SCMP_ACT_ERRNO") &&
                    json_integer_value(json_object_get(rule, "errnoRet")) == EAFNOSUPPORT)
                        vsock_denied = true;
                if (array_has(json_object_get(rule, "names"), "socketcall") && !at(rule, "args.0") &&
                    streq_ptr(str_at(rule, "action"), "SCMP_ACT_ERRNO"))
                        socketcall_denied = true;
        }
        CHECK(clone_newuser);
        CHECK(clone3_enosys);
        CHECK(vsock_denied);
        CHECK(socketcall_denied);
        CHECK(array_has(at(doc, "linux.maskedPaths"), "/proc/kcore"));
        CHECK(array_has(at(doc, "linux.maskedPaths"), "/sys/firmware"));
        CHECK(array_has(at(doc, "linux.readonlyPaths"), "/proc/sys"));
        CHECK(array_has(at(doc, "linux.readonlyPaths"), "/proc/sysrq-trigger"));
        json_decref(doc);
}

static void test_resources_from_slots(void)
{
        struct container_spec spec = full_spec();
        struct oci_spec_host host = full_host;
        json_t *doc = build(&spec, &host), *res;

        if (!doc)
                return;
        res = at(doc, "linux.resources");
        CHECK_INTEQ(json_integer_value(at(res, "cpu.quota")), 150000);
        CHECK_INTEQ(json_integer_value(at(res, "cpu.period")), 100000);
        CHECK_STREQ(str_at(res, "cpu.cpus"), "2,3");
        CHECK(!at(res, "cpu.mems"));
        CHECK_INTEQ(json_integer_value(at(res, "memory.limit")), (int64_t)4 << 30);
        CHECK_INTEQ(json_integer_value(at(res, "memory.swap")), (int64_t)4 << 30);
        CHECK_INTEQ(json_integer_value(at(res, "pids.limit")), 512);
        json_decref(doc);

        /* half a core on one core; no swap accounting; defaults */
        spec.cpu = 500;
        spec.n_cores = 1;
        spec.mems = "0";
        spec.pids_limit = 0;
        host.swap_limit = false;
        doc = build(&spec, &host);
        res = at(doc, "linux.resources");
        CHECK_INTEQ(json_integer_value(at(res, "cpu.quota")), 50000);
        CHECK_STREQ(str_at(res, "cpu.cpus"), "2");
        CHECK_STREQ(str_at(res, "cpu.mems"), "0");
        CHECK(!at(res, "memory.swap"));
        CHECK_INTEQ(json_integer_value(at(res, "pids.limit")), OCI_DEFAULT_PIDS);
        json_decref(doc);

        /* no limits at all: no quota, no memory section */
        spec = (struct container_spec){ .id = "free", .args = args };
        doc = build(&spec, &host);
        res = at(doc, "linux.resources");
        CHECK(!at(res, "cpu.quota"));
        CHECK(!at(res, "cpu.cpus"));
        CHECK(!json_object_get(res, "memory"));
        json_decref(doc);
}

static void test_devices(void)
{
        struct container_spec spec = full_spec();
        json_t *doc = build(&spec, &full_host), *rules, *r;
        bool null_ok = false, gpu_ok = false;
        size_t i;

        if (!doc)
                return;
        rules = at(doc, "linux.resources.devices");
        CHECK(json_is_false(at(rules, "0.allow")));
        CHECK_STREQ(str_at(rules, "0.access"), "rwm");
        CHECK(!at(rules, "0.type"));
        json_array_foreach (rules, i, r) {
                if (json_is_true(json_object_get(r, "allow")) && json_integer_value(json_object_get(r, "major")) == 1 &&
                    json_integer_value(json_object_get(r, "minor")) == 3)
                        null_ok = true;
                if (json_integer_value(json_object_get(r, "major")) == 195 && streq_ptr(str_at(r, "type"), "c"))
                        gpu_ok = true;
        }
        CHECK(null_ok);
        CHECK(gpu_ok);
        CHECK_STREQ(str_at(doc, "linux.devices.0.path"), "/dev/nvidia0");
        CHECK_INTEQ(json_integer_value(at(doc, "linux.devices.0.major")), 195);
        CHECK_INTEQ(json_integer_value(at(doc, "linux.devices.0.fileMode")), 0666);
        json_decref(doc);
}

static void test_mounts(void)
{
        struct container_spec spec = full_spec();
        struct oci_spec_host host = full_host;
        json_t *doc = build(&spec, &host), *m;

        if (!doc)
                return;
        CHECK_STREQ(str_at(mount_at(doc, "/proc"), "type"), "proc");
        CHECK_STREQ(str_at(mount_at(doc, "/dev/pts"), "type"), "devpts");
        CHECK_STREQ(str_at(mount_at(doc, "/dev/mqueue"), "type"), "mqueue");
        CHECK(array_has(json_object_get(mount_at(doc, "/dev/shm"), "options"), "size=1073741824"));
        CHECK(array_has(json_object_get(mount_at(doc, "/sys"), "options"), "ro"));
        CHECK(array_has(json_object_get(mount_at(doc, "/sys/fs/cgroup"), "options"), "ro"));
        for (size_t i = 0; i < 3; i++) {
                const char *f = (const char *[]){ "/sys/devices/system/cpu/online", "/sys/devices/system/cpu/possible",
                                                  "/sys/devices/system/cpu/present" }[i];
                m = mount_at(doc, f);
                CHECK_STREQ(str_at(m, "source"), full_host.cpu_online);
                CHECK(array_has(json_object_get(m, "options"), "ro"));
        }
        m = mount_at(doc, CONTAINER_RUNNER_PATH);
        CHECK_STREQ(str_at(m, "source"), "/usr/lib/tessera/tessera-runner");
        CHECK(array_has(json_object_get(m, "options"), "ro"));
        CHECK(!array_has(json_object_get(m, "options"), "noexec"));
        m = mount_at(doc, CONTAINER_RUNNER_DIR);
        CHECK_STREQ(str_at(m, "source"), full_host.runner_dir);
        CHECK(array_has(json_object_get(m, "options"), "rw"));
        CHECK_STREQ(str_at(mount_at(doc, "/etc/hosts"), "source"), full_host.hosts);
        CHECK_STREQ(str_at(mount_at(doc, "/etc/hostname"), "source"), full_host.hostname_file);
        m = mount_at(doc, "/home/work/data");
        CHECK_STREQ(str_at(m, "source"), "/data/vfolders/u1");
        CHECK(array_has(json_object_get(m, "options"), "rw"));
        CHECK(array_has(json_object_get(m, "options"), "nosuid"));
        CHECK(array_has(json_object_get(mount_at(doc, "/models"), "options"), "ro"));
        json_decref(doc);

        /* nothing to tell about cores, no runner: no such mounts, default shm */
        spec = (struct container_spec){ .id = "bare", .args = args };
        host.cpu_online = NULL;
        doc = build(&spec, &host);
        CHECK(!mount_at(doc, "/sys/devices/system/cpu/online"));
        CHECK(!mount_at(doc, CONTAINER_RUNNER_PATH));
        CHECK(array_has(json_object_get(mount_at(doc, "/dev/shm"), "options"), "size=67108864"));
        CHECK(!array_has(at(doc, "process.env"), "OMP_NUM_THREADS=1"));
        json_decref(doc);
}

static void test_cpu_count(void)
{
        struct container_spec spec = { .id = "c" };
        char text[16];

        CHECK_INTEQ(oci_spec_cpu_count(&spec), 0);
        spec.cpu = 500;
        CHECK_INTEQ(oci_spec_cpu_count(&spec), 1);
        spec.cpu = 2001;
        CHECK_INTEQ(oci_spec_cpu_count(&spec), 3);
        spec.cores = cores;
        spec.n_cores = 2;
        CHECK_INTEQ(oci_spec_cpu_count(&spec), 2);
        oci_spec_cpu_online_text(1, text, sizeof(text));
        CHECK_STREQ(text, "0\n");
        oci_spec_cpu_online_text(8, text, sizeof(text));
        CHECK_STREQ(text, "0-7\n");
}

static void test_errors(void)
{
        static const char *const none[] = { NULL };
        static const struct container_mount rel[] = { { "/data", "relative/dst", false } };
        static const struct container_device bad[] = { { "/dev/x", 'x', 1, 1 } };
        struct container_spec spec = full_spec();
        struct tess_error *err = NULL;
        json_t *doc = NULL;

        spec.args = none;
        CHECK_INTEQ(oci_spec_build(&spec, &full_host, &doc, &err), -EINVAL);
        CHECK(err && strstr(err->msg, "no command"));
        err = tess_error_free(err);
        spec = full_spec();
        spec.mounts = rel;
        spec.n_mounts = 1;
        CHECK_INTEQ(oci_spec_build(&spec, &full_host, &doc, &err), -EINVAL);
        CHECK(err && strstr(err->msg, "relative/dst"));
        err = tess_error_free(err);
        spec = full_spec();
        spec.devices = bad;
        CHECK_INTEQ(oci_spec_build(&spec, &full_host, &doc, &err), -EINVAL);
        CHECK(err && strstr(err->msg, "/dev/x"));
        err = tess_error_free(err);
        CHECK(doc == NULL);
}

static void test_hostname_is_cut(void)
{
        char id[70];
        struct container_spec spec = { .id = id, .args = args };
        json_t *doc;

        memset(id, 'h', 64);
        id[64] = '\0';
        doc = build(&spec, &full_host);
        CHECK_INTEQ(strlen(str_at(doc, "hostname")), 63);
        json_decref(doc);
        spec.hostname = "box";
        doc = build(&spec, &full_host);
        CHECK_STREQ(str_at(doc, "hostname"), "box");
        json_decref(doc);
}

static const struct test tests[] = {
        TEST(test_process),   TEST(test_capabilities), TEST(test_namespaces), TEST(test_user_namespace),
        TEST(test_seccomp),
        TEST(test_resources_from_slots), TEST(test_devices), TEST(test_mounts), TEST(test_cpu_count),
        TEST(test_errors),    TEST(test_hostname_is_cut), {},
};

int main(void)
{
        return test_main(tests);
}
