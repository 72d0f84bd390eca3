/* test_proc.c - the agent's child processes: run and capture, exit
 * statuses, input, clean signals, process identity. */
#include "common/compat.h"

#include <signal.h>

#include "../lib/test.h"
#include "agent/container/proc.h"

static void test_run_captures_output(void)
{
        const char *argv[] = { "sh", "-c", "echo out; echo err >&2; cat", NULL };
        struct tess_error *err = NULL;
        struct buf out = BUF_INIT;
        int status = -1;

        CHECK_INTEQ(proc_run(argv, "in\n", -1, &out, &status, &err), 0);
        CHECK_INTEQ(status, 0);
        CHECK_STREQ(out.data, "out\nerr\nin\n");
        buf_release(&out);
}

static void test_run_status_and_errors(void)
{
        const char *exit3[] = { "sh", "-c", "echo why; exit 3", NULL };
        const char *killed[] = { "sh", "-c", "kill -9 $$", NULL };
        const char *missing[] = { "/no/such/program", NULL };
        struct tess_error *err = NULL;
        int status = -1;

        CHECK_INTEQ(proc_run(exit3, NULL, -1, NULL, &status, &err), 0);
        CHECK_INTEQ(status, 3);
        /* without ret_status a failure is an error carrying the output */
        CHECK_INTEQ(proc_run(exit3, NULL, -1, NULL, NULL, &err), -EIO);
        CHECK(err && strstr(err->msg, "status 3: why"));
        err = tess_error_free(err);
        CHECK_INTEQ(proc_run(killed, NULL, -1, NULL, &status, &err), 0);
        CHECK_INTEQ(status, 137);
        CHECK_INTEQ(proc_run(missing, NULL, -1, NULL, &status, &err), -ENOENT);
        CHECK(err && strstr(err->msg, "/no/such/program"));
        tess_error_free(err);
}

static void test_children_get_clean_signals_and_fds(void)
{
        const char *argv[] = { "sh", "-c", "grep -E '^Sig(Blk|Ign)' /proc/self/status; ls /proc/self/fd | wc -l",
                               NULL };
        struct tess_error *err = NULL;
        struct buf out = BUF_INIT;
        sigset_t chld, old;

        /* what the monitor does to itself: none of it may reach a child */
        sigemptyset(&chld);
        sigaddset(&chld, SIGCHLD);
        sigprocmask(SIG_BLOCK, &chld, &old);
        signal(SIGTERM, SIG_IGN);
        int leak = dup(1);
        CHECK_INTEQ(proc_run(argv, NULL, -1, &out, NULL, &err), 0);
        sigprocmask(SIG_SETMASK, &old, NULL);
        signal(SIGTERM, SIG_DFL);
        close(leak);
        CHECK(strstr(out.data, "SigBlk:\t0000000000000000\n") != NULL);
        CHECK(strstr(out.data, "SigIgn:\t0000000000000000\n") != NULL);
        /* 0, 1, 2 and the one ls opens */
        CHECK(strstr(out.data, "\n4\n") != NULL);
        buf_release(&out);
}

static int chdir_root(void *arg)
{
        int *ret = arg;
        if (chdir("/") < 0)
                return errno;
        return *ret;
}

static void test_in_child(void)
{
        char before[4096], after[4096];
        int v = 0;

        if (!getcwd(before, sizeof(before)))
                SKIP("no cwd");
        CHECK_INTEQ(proc_in_child(chdir_root, &v), 0);
        v = EACCES;
        CHECK_INTEQ(proc_in_child(chdir_root, &v), -EACCES);
        /* the change stayed in the child */
        CHECK(getcwd(after, sizeof(after)) != NULL);
        CHECK_STREQ(after, before);
}

static void test_alive(void)
{
        uint64_t start = 0;

        CHECK_INTEQ(proc_start_time(getpid(), &start), 0);
        CHECK(start > 0);
        CHECK(proc_alive(getpid(), start));
        CHECK(proc_alive(getpid(), 0));
        CHECK(!proc_alive(getpid(), start + 1));
        CHECK(!proc_alive(0, 0));
        CHECK_INTEQ(proc_start_time(-1, &start), -ESRCH);
}

static const struct test tests[] = {
        TEST(test_run_captures_output),
        TEST(test_run_status_and_errors),
        TEST(test_children_get_clean_signals_and_fds),
        TEST(test_in_child),
        TEST(test_alive),
        {},
};

int main(void)
{
        return test_main(tests);
}
