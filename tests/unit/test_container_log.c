/* test_container_log.c - a container's output log (rotation, reading by
 * stream offset), its on-disk records and the id rules. */
#include "common/compat.h"

#include <sys/stat.h>

#include "../lib/test.h"
#include "agent/container/container-internal.h"
#include "agent/container/container.h"
#include "common/fs.h"

struct fixture {
        char root[64];
        char *dir;
        struct container_config cfg;
};

static bool fixture_open(struct fixture *f)
{
        snprintf(f->root, sizeof(f->root), "/tmp/tessera-test-ctlog.XXXXXX");
        if (!mkdtemp(f->root))
                return false;
        f->cfg = (struct container_config){ .state_dir = f->root };
        f->dir = container_dir(&f->cfg, "k1");
        return fs_mkdir_p(f->dir, 0755, NULL) == 0;
}

static void fixture_close(struct fixture *f)
{
        _cleanup_free_ char *cmd = xasprintf("rm -rf '%s'", f->root);
        if (system(cmd) != 0)
                test_fail(__FILE__, __LINE__, "%s failed", cmd);
        free(f->dir);
}

/* Write `total` bytes of numbered lines in chunks of `chunk`; RET them. */
static char *write_stream(const char *dir, int64_t log_max, size_t total, size_t chunk)
{
        struct container_log *l = NULL;
        struct tess_error *err = NULL;
        struct buf all = BUF_INIT;

        for (int i = 0; all.len < total; i++)
                buf_printf(&all, "line %d\n", i);
        all.len = total;
        all.data[total] = '\0';
        if (container_log_open(dir, log_max, &l, &err) < 0) {
                test_fail(__FILE__, __LINE__, "%s", err->msg);
                tess_error_free(err);
                return buf_detach(&all, NULL);
        }
        for (size_t off = 0; off < total; off += chunk) {
                size_t n = total - off < chunk ? total - off : chunk;
                if (container_log_write(l, all.data + off, n, &err) < 0) {
                        test_fail(__FILE__, __LINE__, "%s", err->msg);
                        err = tess_error_free(err);
                }
        }
        container_log_close(l);
        return buf_detach(&all, NULL);
}

static void test_small_log(void)
{
        struct tess_error *err = NULL;
        struct buf out = BUF_INIT;
        struct fixture f;
        int64_t next = -1;

        if (!fixture_open(&f))
                SKIP("no temporary directory");
        _cleanup_free_ char *all = write_stream(f.dir, 1 << 20, 100, 7);
        CHECK_INTEQ(container_log_read(&f.cfg, "k1", 0, 1000, &out, &next, &err), 0);
        CHECK_INTEQ(out.len, 100);
        CHECK(memcmp(out.data, all, 100) == 0);
        CHECK_INTEQ(next, 100);
        /* from the middle, with a small max */
        buf_reset(&out);
        CHECK_INTEQ(container_log_read(&f.cfg, "k1", 90, 4, &out, &next, &err), 0);
        CHECK_INTEQ(out.len, 4);
        CHECK(memcmp(out.data, all + 90, 4) == 0);
        CHECK_INTEQ(next, 94);
        /* at or past the end: nothing, and the end */
        buf_reset(&out);
        CHECK_INTEQ(container_log_read(&f.cfg, "k1", 500, 10, &out, &next, &err), 0);
        CHECK_INTEQ(out.len, 0);
        CHECK_INTEQ(next, 100);
        buf_release(&out);
        fixture_close(&f);
}

static void test_rotation_keeps_the_tail(void)
{
        struct tess_error *err = NULL;
        struct buf out = BUF_INIT, followed = BUF_INIT;
        struct fixture f;
        int64_t next = -1, off;
        const size_t total = 100000;

        if (!fixture_open(&f))
                SKIP("no temporary directory");
        /* chunks larger than half the limit are split */
        _cleanup_free_ char *all = write_stream(f.dir, 8192, total, 65536);
        CHECK_INTEQ(container_log_read(&f.cfg, "k1", 0, 1 << 20, &out, &next, &err), 0);
        CHECK_INTEQ(next, total);
        CHECK(out.len >= 4096 && out.len <= 8192);
        CHECK(memcmp(out.data, all + total - out.len, out.len) == 0);
        /* a reader following the stream in small steps sees the same bytes */
        for (off = 0;; off = next) {
                size_t before = followed.len;
                CHECK_INTEQ(container_log_read(&f.cfg, "k1", off, 1000, &followed, &next, &err), 0);
                if (followed.len == before)
                        break;
        }
        CHECK_INTEQ(followed.len, out.len);
        CHECK(followed.len == out.len && memcmp(followed.data, out.data, out.len) == 0);
        /* the files: log.1 is full, log.base says where log begins */
        _cleanup_free_ char *base = xasprintf("%s/%s", f.dir, CT_LOG_BASE), *text = NULL;
        size_t len;
        CHECK_INTEQ(fs_read_file(base, 64, &text, &len, &err), 0);
        CHECK_INTEQ(strtoll(text, NULL, 10) % 4096, 0);
        buf_release(&out);
        buf_release(&followed);
        fixture_close(&f);
}

static void test_read_errors(void)
{
        struct tess_error *err = NULL;
        struct buf out = BUF_INIT;
        struct fixture f;
        int64_t next;

        if (!fixture_open(&f))
                SKIP("no temporary directory");
        CHECK_INTEQ(container_log_read(&f.cfg, "../k1", 0, 10, &out, &next, &err), -EINVAL);
        err = tess_error_free(err);
        CHECK_INTEQ(container_log_read(&f.cfg, "nope", 0, 10, &out, &next, &err), -ENOENT);
        err = tess_error_free(err);
        /* a container that printed nothing yet */
        CHECK_INTEQ(container_log_read(&f.cfg, "k1", 0, 10, &out, &next, &err), 0);
        CHECK_INTEQ(next, 0);
        buf_release(&out);
        fixture_close(&f);
}

static void test_id_rules(void)
{
        char long_id[70];

        CHECK(container_id_valid("k1"));
        CHECK(container_id_valid("session-2.kernel_0"));
        CHECK(container_id_valid("ABC"));
        CHECK(!container_id_valid(NULL));
        CHECK(!container_id_valid(""));
        CHECK(!container_id_valid("."));
        CHECK(!container_id_valid(".."));
        CHECK(!container_id_valid("a/b"));
        CHECK(!container_id_valid("../etc"));
        CHECK(!container_id_valid("a b"));
        CHECK(!container_id_valid("a\nb"));
        memset(long_id, 'x', 64);
        long_id[64] = '\0';
        CHECK(container_id_valid(long_id));
        long_id[64] = 'x';
        long_id[65] = '\0';
        CHECK(!container_id_valid(long_id));
}

static void test_records_round_trip(void)
{
        char **layers = xcalloc(3, sizeof(char *));
        layers[0] = xstrdup("/l/1");
        layers[1] = xstrdup("/l/2");
        struct container_record rec = {
                .id = xstrdup("k1"), .created_at = 1234, .runc = xstrdup("runc"), .runc_root = xstrdup("/run/r"),
                .cgroup_root = xstrdup("/sys/fs/cgroup"), .cgroup_path = xstrdup("/tessera/k1"), .log_max = 4096,
                .rootfs = xstrdup("/s/k1/bundle/rootfs"), .layers = layers, .bridge = xstrdup("br0"),
                .netns = xstrdup("/run/ns/k1"), .veth = xstrdup("tv0"), .ip = xstrdup("10.0.0.2"),
                .gateway = xstrdup("10.0.0.1"), .prefix = 24, .ipam_dir = xstrdup("/s/ipam/br0"),
                .owners_dir = xstrdup("/s/containers"),
        };
        struct container_record back = { 0 };
        struct container_exit ex = { .exit_code = 137, .signal = 9, .oom_killed = true, .finished_at = 99 }, exb;
        struct tess_error *err = NULL;
        struct fixture f;
        uint64_t start;
        pid_t pid;

        if (!fixture_open(&f))
                SKIP("no temporary directory");
        CHECK_INTEQ(container_record_write(f.dir, &rec, &err), 0);
        CHECK_INTEQ(container_record_read(f.dir, &back, &err), 0);
        CHECK_STREQ(back.id, "k1");
        CHECK_INTEQ(back.created_at, 1234);
        CHECK_STREQ(back.cgroup_path, "/tessera/k1");
        CHECK_STREQ(back.layers[1], "/l/2");
        CHECK(back.layers[2] == NULL);
        CHECK_STREQ(back.ip, "10.0.0.2");
        CHECK_INTEQ(back.prefix, 24);
        container_record_release(&back);
        /* no network: no network fields */
        free(rec.netns);
        rec.netns = NULL;
        CHECK_INTEQ(container_record_write(f.dir, &rec, &err), 0);
        CHECK_INTEQ(container_record_read(f.dir, &back, &err), 0);
        CHECK(back.netns == NULL && back.ip == NULL && back.veth == NULL);
        container_record_release(&back);
        container_record_release(&rec);

        CHECK_INTEQ(container_exit_read(f.dir, &exb, &err), -ENOENT);
        err = tess_error_free(err);
        CHECK_INTEQ(container_exit_write(f.dir, &ex, &err), 0);
        CHECK_INTEQ(container_exit_read(f.dir, &exb, &err), 0);
        CHECK_INTEQ(exb.exit_code, 137);
        CHECK_INTEQ(exb.signal, 9);
        CHECK(exb.oom_killed);
        CHECK(!exb.monitor_lost);
        CHECK_INTEQ(exb.finished_at, 99);

        _cleanup_free_ char *pidfile = xasprintf("%s/%s", f.dir, CT_MONITOR_PID);
        CHECK_INTEQ(container_pidfile_write(pidfile, getpid(), &err), 0);
        CHECK_INTEQ(container_pidfile_read(pidfile, &pid, &start), 0);
        CHECK_INTEQ(pid, getpid());
        CHECK(start > 0);
        /* runc's pid files have no start time */
        CHECK_INTEQ(fs_write_file_atomic(pidfile, "42", 2, 0644, &err), 0);
        CHECK_INTEQ(container_pidfile_read(pidfile, &pid, &start), 0);
        CHECK_INTEQ(pid, 42);
        CHECK_INTEQ(start, 0);
        fixture_close(&f);
}

static const struct test tests[] = {
        TEST(test_small_log), TEST(test_rotation_keeps_the_tail), TEST(test_read_errors), TEST(test_id_rules),
        TEST(test_records_round_trip), {},
};

int main(void)
{
        return test_main(tests);
}
