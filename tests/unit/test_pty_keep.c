/* test_pty_keep.c - src/agent/pty_keep.c: the scrollback ring, and the
 * registry's attach, hand-over, draining, expiry and limits, with Unix
 * socket pairs in place of terminals (one end is the "master" the
 * registry owns, the other the "shell").
 *
 * Built twice: with the other unit tests (ASan), and with
 * -fsanitize=thread -DTEST_UNDER_TSAN into $(BUILD)/tests/tsan/, which
 * the ASan build runs as one more test. */
#include "common/compat.h"

#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>

#include "agent/pty_keep.h"
#include "../lib/test.h"

#define ID_A "term-aaaa"
#define ID_B "term-bbbb"
#define ID_C "term-cccc"

static struct pty_keep *keep_new(int64_t keep_usec, unsigned max_detached)
{
        struct pty_keep_conf c = { .keep_usec = keep_usec, .max_detached = max_detached };
        return pty_keep_new(&c);
}

/* sv[0]: the master (given to the registry), sv[1]: the shell's side. */
static void term_pair(int sv[2])
{
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
                abort();
}

static int64_t ms_now(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The registry closed the master: the shell's side hangs up. */
static bool hung_up(int shell)
{
        struct pollfd p = { .fd = shell, .events = POLLIN };
        return poll(&p, 1, 0) == 1 && (p.revents & POLLHUP);
}

static bool wait_hung_up(int shell)
{
        for (int64_t end = ms_now() + 3000; ms_now() < end; usleep(5000))
                if (hung_up(shell))
                        return true;
        return false;
}

/* Everything the shell wrote was read from the master (by the keeper). */
static bool wait_drained(int master)
{
        for (int64_t end = ms_now() + 3000; ms_now() < end; usleep(2000)) {
                int n = -1;
                if (ioctl(master, FIONREAD, &n) == 0 && n == 0)
                        return true;
        }
        return false;
}

static bool wait_count(struct pty_keep *k, const char *kernel, unsigned want)
{
        for (int64_t end = ms_now() + 3000; ms_now() < end; usleep(5000))
                if (pty_keep_count(k, kernel, NULL) == want)
                        return true;
        return false;
}

static void say(int shell, const char *text)
{
        if (write(shell, text, strlen(text)) != (ssize_t)strlen(text))
                abort();
}

/* What an attached socket does with output: read it and record it. */
static void view_reads(struct pty_view *v, char *out, size_t cap)
{
        size_t len = strlen(out);
        for (int64_t end = ms_now() + 1000; ms_now() < end;) {
                struct pollfd p = { .fd = pty_view_fd(v), .events = POLLIN };
                if (poll(&p, 1, 20) != 1)
                        break;
                ssize_t n = read(pty_view_fd(v), out + len, cap - 1 - len);
                if (n <= 0)
                        break;
                pty_view_output(v, out + len, (size_t)n);
                len += (size_t)n;
                out[len] = '\0';
        }
}

static int attach(struct pty_keep *k, const char *kernel, const char *id, int fresh, struct pty_view *v, char **replay,
                  size_t *len)
{
        *v = (struct pty_view){ 0 };
        return pty_keep_attach(k, kernel, id, &fresh, 1000, v, replay, len);
}

/* ---- the ring ---- */

static void test_ring_keeps_the_end(void)
{
        struct pty_ring r;
        char out[64];

        pty_ring_init(&r, 8);
        pty_ring_append(&r, "12345", 5);
        CHECK_INTEQ(pty_ring_copy(&r, out), 5);
        CHECK(memcmp(out, "12345", 5) == 0 && !r.dropped);
        pty_ring_append(&r, "6789", 4); /* wraps */
        CHECK_INTEQ(pty_ring_copy(&r, out), 8);
        CHECK(memcmp(out, "23456789", 8) == 0 && r.dropped);
        pty_ring_append(&r, "abcdefghijkl", 12); /* more than it holds */
        CHECK_INTEQ(pty_ring_copy(&r, out), 8);
        CHECK(memcmp(out, "efghijkl", 8) == 0);
        pty_ring_release(&r);

        pty_ring_init(&r, 8);
        pty_ring_append(&r, "abcdefgh", 8); /* exactly full: nothing lost */
        CHECK_INTEQ(pty_ring_copy(&r, out), 8);
        CHECK(!r.dropped);
        pty_ring_release(&r);
}

static void test_ring_replay_starts_with_a_whole_line(void)
{
        const char *text = "line one\nline two\nline three\nfour\n"; /* 34 bytes */
        struct pty_ring r;
        char out[64];
        size_t n;

        pty_ring_init(&r, 32);
        pty_ring_append(&r, text, strlen(text));
        n = pty_ring_copy(&r, out);
        out[n] = '\0';
        CHECK_STREQ(out, "line two\nline three\nfour\n");
        pty_ring_release(&r);

        pty_ring_init(&r, 16); /* no newline near the start: all of it */
        pty_ring_append(&r, "0123456789abcdefXYZ", 19);
        n = pty_ring_copy(&r, out);
        out[n] = '\0';
        CHECK_STREQ(out, "3456789abcdefXYZ");
        pty_ring_release(&r);
}

/* ---- the registry ---- */

static void test_ids(void)
{
        CHECK(terminal_id_valid("abcd-EF_09"));
        CHECK(terminal_id_valid("12345678"));
        CHECK(!terminal_id_valid("1234567"));
        CHECK(!terminal_id_valid(NULL));
        CHECK(!terminal_id_valid("abcdefgh/"));
        CHECK(!terminal_id_valid("abcd efgh"));
        CHECK(!terminal_id_valid("abcd%2Fefgh"));
        char long_id[TERMINAL_ID_MAX + 2];
        memset(long_id, 'x', sizeof(long_id) - 1);
        long_id[TERMINAL_ID_MAX + 1] = '\0';
        CHECK(!terminal_id_valid(long_id));
        long_id[TERMINAL_ID_MAX] = '\0';
        CHECK(terminal_id_valid(long_id));
}

static void test_a_detached_terminal_is_attached_again_with_its_scrollback(void)
{
        struct pty_keep *k = keep_new(10 * 1000000, 8);
        struct pty_view v;
        char *replay = NULL, seen[256] = "";
        size_t len = 0;
        int sv[2];
        unsigned detached;

        term_pair(sv);
        CHECK_INTEQ(attach(k, "k1", ID_A, sv[0], &v, &replay, &len), 0);
        CHECK(!v.kept && !replay && len == 0);
        CHECK(!pty_keep_has(k, "k1", ID_B) && pty_keep_has(k, "k1", ID_A));
        say(sv[1], "prompt$ ");
        view_reads(&v, seen, sizeof(seen));
        CHECK_STREQ(seen, "prompt$ ");
        pty_view_detach(&v);
        CHECK(!v.term);
        CHECK_INTEQ(pty_keep_count(k, "k1", &detached), 1);
        CHECK_INTEQ(detached, 1);

        say(sv[1], "while away\n");
        CHECK(wait_drained(sv[0])); /* the keeper read it */
        CHECK_INTEQ(attach(k, "k1", ID_A, -1, &v, &replay, &len), 0);
        CHECK(v.kept);
        CHECK(replay && len == strlen("prompt$ while away\n") && memcmp(replay, "prompt$ while away\n", len) == 0);
        free(replay);
        CHECK_INTEQ(pty_keep_count(k, "k1", &detached), 1);
        CHECK_INTEQ(detached, 0);
        CHECK(!hung_up(sv[1]));

        pty_view_end(&v); /* the shell ended */
        CHECK_INTEQ(pty_keep_count(k, "k1", NULL), 0);
        CHECK(wait_hung_up(sv[1]));
        close(sv[1]);
        pty_keep_free(k);
}

static void test_a_detached_terminal_never_blocks_its_shell(void)
{
        struct pty_keep *k = keep_new(10 * 1000000, 8);
        struct pty_view v;
        char *replay = NULL, line[32];
        size_t len = 0;
        int sv[2], lines = 100000; /* 1.2 MB through a 64 KiB ring */

        term_pair(sv);
        CHECK_INTEQ(attach(k, "k1", ID_A, sv[0], &v, &replay, &len), 0);
        pty_view_detach(&v);
        int64_t end = ms_now() + 10000;
        for (int i = 0; i < lines && ms_now() < end; i++) {
                snprintf(line, sizeof(line), "line %06d\n", i);
                for (size_t off = 0; off < strlen(line) && ms_now() < end;) {
                        ssize_t n = send(sv[1], line + off, strlen(line) - off, MSG_DONTWAIT);
                        if (n > 0) {
                                off += (size_t)n;
                        } else {
                                struct pollfd p = { .fd = sv[1], .events = POLLOUT };
                                poll(&p, 1, 100);
                        }
                }
        }
        CHECK(ms_now() < end);
        CHECK(wait_drained(sv[0]));
        CHECK_INTEQ(attach(k, "k1", ID_A, -1, &v, &replay, &len), 0);
        CHECK(v.kept && replay && len > PTY_KEEP_RING - 4096 && len <= PTY_KEEP_RING);
        snprintf(line, sizeof(line), "line %06d\n", lines - 1);
        CHECK(replay && len >= strlen(line) && memcmp(replay + len - strlen(line), line, strlen(line)) == 0);
        CHECK(replay && memcmp(replay, "line ", 5) == 0); /* a whole line first */
        free(replay);
        pty_view_detach(&v);
        close(sv[1]);
        pty_keep_free(k);
}

struct holder {
        struct pty_keep *k;
        int master;
        pthread_mutex_t mu;
        pthread_cond_t cond;
        bool ready;
        enum pty_view_state ended;
};

/* A socket's thread: attached, relaying output, until told to let go. */
static void *hold(void *data)
{
        struct holder *h = data;
        struct pty_view v;
        char *replay = NULL, seen[256] = "";
        size_t len;
        int r = attach(h->k, "k1", ID_A, h->master, &v, &replay, &len);

        pthread_mutex_lock(&h->mu);
        h->ready = true;
        pthread_cond_signal(&h->cond);
        pthread_mutex_unlock(&h->mu);
        if (r < 0)
                return NULL;
        h->ended = PTY_VIEW_OWNED;
        for (int64_t end = ms_now() + 5000; ms_now() < end && h->ended == PTY_VIEW_OWNED;) {
                struct pollfd p[2] = { { .fd = pty_view_fd(&v), .events = POLLIN },
                                       { .fd = pty_view_wake_fd(&v), .events = POLLIN } };
                poll(p, 2, 100);
                if (p[1].revents) {
                        h->ended = pty_view_check(&v);
                        continue;
                }
                if (p[0].revents & POLLIN) {
                        ssize_t n = read(pty_view_fd(&v), seen, sizeof(seen));
                        if (n > 0)
                                pty_view_output(&v, seen, (size_t)n);
                }
        }
        pty_view_detach(&v); /* nothing once let go */
        return NULL;
}

static void test_a_second_socket_takes_the_terminal_over(void)
{
        struct holder h = { .k = keep_new(10 * 1000000, 8), .ended = PTY_VIEW_OWNED };
        struct pty_view v;
        char *replay = NULL;
        size_t len = 0;
        pthread_t th;
        int sv[2];

        term_pair(sv);
        h.master = sv[0];
        pthread_mutex_init(&h.mu, NULL);
        pthread_cond_init(&h.cond, NULL);
        pthread_create(&th, NULL, hold, &h);
        pthread_mutex_lock(&h.mu);
        while (!h.ready)
                pthread_cond_wait(&h.cond, &h.mu);
        pthread_mutex_unlock(&h.mu);

        say(sv[1], "seen by the first\n");
        CHECK(wait_drained(sv[0])); /* the holder read it (into the ring) */
        CHECK_INTEQ(attach(h.k, "k1", ID_A, -1, &v, &replay, &len), 0);
        pthread_join(th, NULL);
        CHECK(h.ended == PTY_VIEW_TAKEN);
        CHECK(v.kept && replay && len == strlen("seen by the first\n"));
        free(replay);
        say(sv[1], "now mine");
        char seen[64] = "";
        view_reads(&v, seen, sizeof(seen));
        CHECK_STREQ(seen, "now mine");
        CHECK_INTEQ(pty_keep_count(h.k, "k1", NULL), 1);
        pty_view_detach(&v);
        close(sv[1]);
        pty_keep_free(h.k);
        pthread_cond_destroy(&h.cond);
        pthread_mutex_destroy(&h.mu);
}

static void test_a_holder_that_does_not_let_go_makes_the_other_wait_then_fail(void)
{
        struct pty_keep *k = keep_new(10 * 1000000, 8);
        struct pty_view a, b = { 0 };
        char *replay = NULL;
        size_t len;
        int sv[2], none = -1;

        term_pair(sv);
        CHECK_INTEQ(attach(k, "k1", ID_A, sv[0], &a, &replay, &len), 0);
        int64_t t0 = ms_now();
        CHECK_INTEQ(pty_keep_attach(k, "k1", ID_A, &none, 100, &b, &replay, &len), -EBUSY);
        CHECK(ms_now() - t0 >= 90);
        CHECK(!b.term);
        CHECK(pty_view_check(&a) == PTY_VIEW_OWNED); /* the request is withdrawn */
        pty_view_detach(&a);
        close(sv[1]);
        pty_keep_free(k);
}

static void test_detached_terminals_end_after_keep(void)
{
        struct pty_keep *k = keep_new(50 * 1000, 8);
        struct pty_view v;
        char *replay;
        size_t len;
        int sv[2];

        term_pair(sv);
        CHECK_INTEQ(attach(k, "k1", ID_A, sv[0], &v, &replay, &len), 0);
        pty_view_detach(&v);
        CHECK(wait_count(k, "k1", 0));
        CHECK(wait_hung_up(sv[1]));
        close(sv[1]);
        pty_keep_free(k);

        k = keep_new(0, 8); /* 0: not kept at all */
        term_pair(sv);
        CHECK_INTEQ(attach(k, "k1", ID_A, sv[0], &v, &replay, &len), 0);
        pty_view_detach(&v);
        CHECK_INTEQ(pty_keep_count(k, "k1", NULL), 0);
        CHECK(wait_hung_up(sv[1]));
        close(sv[1]);
        pty_keep_free(k);
}

static void test_past_the_limit_the_oldest_detached_ends(void)
{
        struct pty_keep *k = keep_new(10 * 1000000, 2);
        const char *ids[] = { ID_A, ID_B, ID_C };
        struct pty_view v;
        char *replay;
        size_t len;
        int sv[3][2], other[2];
        unsigned detached;

        for (int i = 0; i < 3; i++) {
                term_pair(sv[i]);
                CHECK_INTEQ(attach(k, "k1", ids[i], sv[i][0], &v, &replay, &len), 0);
                pty_view_detach(&v);
                usleep(2000);
        }
        term_pair(other);
        CHECK_INTEQ(attach(k, "k2", ID_A, other[0], &v, &replay, &len), 0);
        pty_view_detach(&v);
        CHECK_INTEQ(pty_keep_count(k, "k1", &detached), 2);
        CHECK_INTEQ(detached, 2);
        CHECK(!pty_keep_has(k, "k1", ID_A) && pty_keep_has(k, "k1", ID_B) && pty_keep_has(k, "k1", ID_C));
        CHECK(wait_hung_up(sv[0][1]));
        CHECK(!hung_up(sv[1][1]) && !hung_up(sv[2][1]));
        CHECK_INTEQ(pty_keep_count(k, "k2", NULL), 1);
        pty_keep_free(k);
        for (int i = 0; i < 3; i++)
                close(sv[i][1]);
        close(other[1]);
}

static void test_a_shell_that_ends_while_detached_is_gone(void)
{
        struct pty_keep *k = keep_new(10 * 1000000, 8);
        struct pty_view v;
        char *replay;
        size_t len;
        int sv[2];

        term_pair(sv);
        CHECK_INTEQ(attach(k, "k1", ID_A, sv[0], &v, &replay, &len), 0);
        pty_view_detach(&v);
        say(sv[1], "bye\n");
        close(sv[1]);
        CHECK(wait_count(k, "k1", 0));
        CHECK_INTEQ(attach(k, "k1", ID_A, -1, &v, &replay, &len), -ENOENT);
        pty_keep_free(k);
}

static void test_a_kernel_takes_its_terminals_along(void)
{
        struct pty_keep *k = keep_new(10 * 1000000, 8);
        struct pty_view held, v;
        char *replay;
        size_t len;
        int a[2], b[2], c[2];

        term_pair(a);
        term_pair(b);
        term_pair(c);
        CHECK_INTEQ(attach(k, "k1", ID_A, a[0], &held, &replay, &len), 0);
        CHECK_INTEQ(attach(k, "k1", ID_B, b[0], &v, &replay, &len), 0);
        pty_view_detach(&v);
        CHECK_INTEQ(attach(k, "k2", ID_A, c[0], &v, &replay, &len), 0);
        pty_view_detach(&v);
        pty_keep_drop_kernel(k, "k1");
        CHECK_INTEQ(pty_keep_count(k, "k1", NULL), 0);
        CHECK_INTEQ(pty_keep_count(k, "k2", NULL), 1);
        CHECK(wait_hung_up(b[1]));
        struct pollfd p = { .fd = pty_view_wake_fd(&held), .events = POLLIN };
        CHECK(poll(&p, 1, 1000) == 1); /* the attached socket hears it */
        CHECK(pty_view_check(&held) == PTY_VIEW_CLOSED);
        CHECK(!held.term);
        CHECK(wait_hung_up(a[1]));
        pty_keep_free(k);
        CHECK(hung_up(c[1]));
        close(a[1]);
        close(b[1]);
        close(c[1]);
}

static void test_names_are_per_kernel_and_checked(void)
{
        struct pty_keep *k = keep_new(10 * 1000000, 8);
        struct pty_view v;
        char *replay;
        size_t len;
        int sv[2], fresh[2], bad[2];

        term_pair(sv);
        CHECK_INTEQ(attach(k, "k1", ID_A, sv[0], &v, &replay, &len), 0);
        pty_view_detach(&v);
        CHECK(!pty_keep_has(k, "k2", ID_A));
        CHECK_INTEQ(attach(k, "k2", ID_A, -1, &v, &replay, &len), -ENOENT); /* another kernel's */

        term_pair(fresh); /* a fresh master for a name that exists: closed, the kept one attached */
        CHECK_INTEQ(attach(k, "k1", ID_A, fresh[0], &v, &replay, &len), 0);
        CHECK(v.kept);
        free(replay);
        CHECK(wait_hung_up(fresh[1]));
        CHECK(!hung_up(sv[1]));
        pty_view_detach(&v);

        term_pair(bad);
        CHECK_INTEQ(attach(k, "k1", "short", bad[0], &v, &replay, &len), -EINVAL);
        CHECK(wait_hung_up(bad[1]));
        CHECK_INTEQ(pty_keep_count(k, "k1", NULL), 1);
        pty_keep_free(k);
        CHECK(hung_up(sv[1]));
        close(sv[1]);
        close(fresh[1]);
        close(bad[1]);
}

#ifndef TEST_UNDER_TSAN
/* This file again, built with ThreadSanitizer (Makefile: PTY_KEEP_TSAN). */
static void test_under_thread_sanitizer(void)
{
        char self[PATH_MAX], path[PATH_MAX + 32], out[1 << 16];
        ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
        size_t len = 0;
        int status;

        if (n <= 0)
                SKIP("no /proc/self/exe");
        self[n] = '\0';
        *strrchr(self, '/') = '\0';
        snprintf(path, sizeof(path), "%s/tsan/test_pty_keep", self);
        FILE *f = fopen(path, "r");
        char head[4] = "";
        if (!f || fread(head, 1, 4, f) != 4 || memcmp(head, "\177ELF", 4) != 0) {
                if (f)
                        fclose(f);
                SKIP("the ThreadSanitizer build is missing (its compiler could not build it?)");
        }
        fclose(f);
        int pipefd[2];
        if (pipe(pipefd) < 0)
                abort();
        pid_t pid = fork();
        if (pid == 0) {
                dup2(pipefd[1], 1);
                dup2(pipefd[1], 2);
                setenv("TSAN_OPTIONS", "halt_on_error=1 exitcode=66", 1);
                execl(path, path, (char *)NULL);
                _exit(127);
        }
        close(pipefd[1]);
        while (len < sizeof(out) - 1 && (n = read(pipefd[0], out + len, sizeof(out) - 1 - len)) > 0)
                len += (size_t)n;
        out[len] = '\0';
        close(pipefd[0]);
        waitpid(pid, &status, 0);
        if (strstr(out, "FATAL: ThreadSanitizer") || strstr(out, "unexpected memory mapping")) {
                printf("# %.300s\n", out);
                SKIP("ThreadSanitizer cannot run here (ASLR / vm.mmap_rnd_bits?)");
        }
        if (strstr(out, "WARNING: ThreadSanitizer") || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
                test_fail(__FILE__, __LINE__, "under ThreadSanitizer (status %d):\n%.6000s", status, out);
        else
                printf("# under ThreadSanitizer: no report\n");
}
#endif

static const struct test tests[] = {
        TEST(test_ring_keeps_the_end),
        TEST(test_ring_replay_starts_with_a_whole_line),
        TEST(test_ids),
        TEST(test_a_detached_terminal_is_attached_again_with_its_scrollback),
        TEST(test_a_detached_terminal_never_blocks_its_shell),
        TEST(test_a_second_socket_takes_the_terminal_over),
        TEST(test_a_holder_that_does_not_let_go_makes_the_other_wait_then_fail),
        TEST(test_detached_terminals_end_after_keep),
        TEST(test_past_the_limit_the_oldest_detached_ends),
        TEST(test_a_shell_that_ends_while_detached_is_gone),
        TEST(test_a_kernel_takes_its_terminals_along),
        TEST(test_names_are_per_kernel_and_checked),
#ifndef TEST_UNDER_TSAN
        TEST(test_under_thread_sanitizer),
#endif
        { 0 },
};

int main(void)
{
        return test_main(tests);
}
