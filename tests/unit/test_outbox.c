/* test_outbox.c - the agent's outbox: events kept on disk until
 * acknowledged, in order, with sequence numbers that never go back, across
 * reopening (an agent's restart), acknowledged or not; on a full disk
 * (a small tmpfs, as root) kept in memory and written when there is room. */
#include "common/compat.h"

#include <fcntl.h>
#include <sys/mount.h>

#include "../lib/test.h"
#include "agent/agent.h"

static char *tmpdir(void)
{
        char dir[] = "/tmp/tessera-test-outbox.XXXXXX";
        if (!mkdtemp(dir))
                test_fail(__FILE__, __LINE__, "mkdtemp: %s", strerror(errno));
        return xasprintf("%s/outbox", dir);
}

static void rm_tree(const char *dir) /* DIR/outbox: DIR */
{
        _cleanup_free_ char *cmd = xasprintf("rm -rf '%.*s'", (int)(strlen(dir) - strlen("/outbox")), dir);
        if (system(cmd) != 0)
                test_fail(__FILE__, __LINE__, "%s failed", cmd);
}

static int64_t add(struct outbox *o, const char *kind)
{
        json_t *ev = json_pack("{s:s}", "kind", kind);
        outbox_add(o, ev);
        int64_t seq = json_integer_value(json_object_get(ev, "seq"));
        json_decref(ev);
        return seq;
}

static int64_t pending_seq(struct outbox *o, size_t i)
{
        json_t *evs = outbox_pending(o, 100);
        int64_t seq = json_integer_value(json_object_get(json_array_get(evs, i), "seq"));
        json_decref(evs);
        return seq;
}

static void test_order_and_ack(void)
{
        _cleanup_free_ char *dir = tmpdir();
        struct outbox *o = NULL;

        CHECK_INTEQ(outbox_open(dir, &o, NULL), 0);
        CHECK_INTEQ(add(o, "preparing"), 1);
        CHECK_INTEQ(add(o, "creating"), 2);
        CHECK_INTEQ(add(o, "running"), 3);
        CHECK_INTEQ(outbox_count(o), 3);
        outbox_ack(o, 2);
        CHECK_INTEQ(outbox_count(o), 1);
        CHECK_INTEQ(pending_seq(o, 0), 3);
        outbox_ack(o, 1); /* an older acknowledgement changes nothing */
        CHECK_INTEQ(outbox_count(o), 1);
        outbox_close(o);
        rm_tree(dir);
}

static void test_numbers_survive_reopening(void)
{
        _cleanup_free_ char *dir = tmpdir();
        struct outbox *o = NULL;

        /* unacknowledged events come back, and the numbering goes on */
        CHECK_INTEQ(outbox_open(dir, &o, NULL), 0);
        add(o, "a");
        add(o, "b");
        outbox_close(o);
        CHECK_INTEQ(outbox_open(dir, &o, NULL), 0);
        CHECK_INTEQ(outbox_count(o), 2);
        CHECK_INTEQ(pending_seq(o, 1), 2);
        CHECK_INTEQ(add(o, "c"), 3);
        /* all acknowledged: no event file is left, the number is kept */
        outbox_ack(o, 3);
        CHECK_INTEQ(outbox_count(o), 0);
        outbox_close(o);
        CHECK_INTEQ(outbox_open(dir, &o, NULL), 0);
        CHECK_INTEQ(outbox_count(o), 0);
        CHECK_INTEQ(add(o, "d"), 4);
        /* acknowledged up to 4 while 5 waits: 5 is the highest after reopening */
        CHECK_INTEQ(add(o, "e"), 5);
        outbox_ack(o, 4);
        outbox_close(o);
        CHECK_INTEQ(outbox_open(dir, &o, NULL), 0);
        CHECK_INTEQ(outbox_count(o), 1);
        CHECK_INTEQ(add(o, "f"), 6);
        outbox_close(o);
        rm_tree(dir);
}

static bool exists(const char *dir, int64_t seq)
{
        _cleanup_free_ char *path = xasprintf("%s/%020lld.json", dir, (long long)seq);
        return access(path, F_OK) == 0;
}

/* Fill the file system of path up to the last byte. */
static void fill(const char *path)
{
        static const char block[4096];
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

        CHECK(fd >= 0);
        while (write(fd, block, sizeof(block)) > 0)
                ;
        while (write(fd, block, 1) > 0)
                ;
        CHECK(errno == ENOSPC);
        close(fd);
}

static void test_full_disk_loses_no_event(void)
{
        char root[] = "/tmp/tessera-test-outbox-full.XXXXXX";
        struct outbox *o = NULL;

        if (geteuid() != 0)
                SKIP("needs root (a small tmpfs)");
        CHECK(mkdtemp(root) != NULL);
        if (mount("tmpfs", root, "tmpfs", 0, "size=64k") < 0) {
                rmdir(root);
                SKIP("cannot mount a tmpfs");
        }
        _cleanup_free_ char *dir = xasprintf("%s/outbox", root);
        _cleanup_free_ char *filler = xasprintf("%s/fill", root);
        CHECK_INTEQ(outbox_open(dir, &o, NULL), 0);
        CHECK_INTEQ(add(o, "before the disk is full"), 1);
        fill(filler);
        /* not written, yet kept, numbered and given to the reporter */
        CHECK_INTEQ(add(o, "while the disk is full"), 2);
        CHECK_INTEQ(add(o, "still full"), 3);
        CHECK(exists(dir, 1) && !exists(dir, 2) && !exists(dir, 3));
        CHECK_INTEQ(outbox_count(o), 3);
        CHECK_INTEQ(pending_seq(o, 2), 3);
        outbox_flush(o);
        CHECK_INTEQ(outbox_count(o), 3);
        /* acknowledged on a full disk: forgotten, its file gone */
        outbox_ack(o, 1);
        CHECK_INTEQ(outbox_count(o), 2);
        CHECK(!exists(dir, 1));
        /* room again: the kept ones are written */
        unlink(filler);
        outbox_flush(o);
        CHECK(exists(dir, 2) && exists(dir, 3));
        /* an event only in memory when the agent stops is lost, but its
         * number is not given again */
        fill(filler);
        CHECK_INTEQ(add(o, "lost with the agent"), 4);
        outbox_close(o);
        CHECK_INTEQ(outbox_open(dir, &o, NULL), 0);
        CHECK_INTEQ(outbox_count(o), 2);
        CHECK_INTEQ(add(o, "after the restart"), 5);
        unlink(filler);
        outbox_ack(o, 5);
        CHECK_INTEQ(outbox_count(o), 0);
        CHECK(!exists(dir, 2) && !exists(dir, 3));
        outbox_close(o);
        CHECK_INTEQ(umount(root), 0);
        rmdir(root);
}

static const struct test tests[] = {
        TEST(test_order_and_ack),
        TEST(test_numbers_survive_reopening),
        TEST(test_full_disk_loses_no_event),
        {},
};

int main(void)
{
        return test_main(tests);
}
