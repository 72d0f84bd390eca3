/* test_outbox.c - the agent's outbox: events kept on disk until
 * acknowledged, in order, with sequence numbers that never go back, across
 * reopening (an agent's restart), acknowledged or not. */
#include "common/compat.h"

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
        CHECK_INTEQ(outbox_add(o, ev, NULL), 0);
        int64_t seq = json_integer_value(json_object_get(ev, "seq"));
        json_decref(ev);
        return seq;
}

static int64_t pending_seq(struct outbox *o, size_t i)
{
        json_t *evs = outbox_pending(o);
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

static const struct test tests[] = {
        TEST(test_order_and_ack),
        TEST(test_numbers_survive_reopening),
        {},
};

int main(void)
{
        return test_main(tests);
}
