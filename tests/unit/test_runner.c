/* test_runner.c - build/tessera-runner driven through the agent's client
 * (src/agent/runner_client.c).  The runner runs as an ordinary process
 * (a child subreaper, --auth uid, --keep-uid) with its socket and home
 * directory in a temporary directory; the last tests also run it as PID 1
 * of a new pid namespace (unshare) and as another user, when root.  The
 * binary is $BUILD/tessera-runner (tests/run.sh exports BUILD); without it
 * every test skips. */
#include "common/compat.h"

#include <fcntl.h>
#include <arpa/inet.h>
#include <ftw.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>

#include "../lib/test.h"
#include "agent/runner_client.h"
#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/timeutil.h"

struct inst {
        char dir[128], run[160], home[160], sock[192], log[192];
        pid_t pid;
        struct runner_client rc;
};

static char tmpdir[] = "/tmp/tessera-runner-test.XXXXXX";
static bool have_tmpdir;
static struct inst shared;
static const char *shared_skip;

/* ---- helpers ---- */

static const char *runner_path(void)
{
        static char path[PATH_MAX];
        const char *build = getenv("BUILD");

        snprintf(path, sizeof(path), "%s/tessera-runner", build && *build ? build : "build");
        return access(path, X_OK) == 0 ? path : NULL;
}

static bool in_path(const char *prog)
{
        const char *path = getenv("PATH");
        char buf[PATH_MAX];

        for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
                size_t n = strcspn(p, ":");
                snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, p, prog);
                if (access(buf, X_OK) == 0)
                        return true;
                p += n;
                if (*p == ':')
                        p++;
        }
        return false;
}

static void sleep_ms(int ms)
{
        struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };
        nanosleep(&ts, NULL);
}

/* waitpid with a limit: the status, or -1 if still running. */
static int wait_exit(pid_t pid, int ms)
{
        int status;

        for (int i = 0; i < ms / 20; i++) {
                if (waitpid(pid, &status, WNOHANG) == pid)
                        return status;
                sleep_ms(20);
        }
        return -1;
}

static int rm_one(const char *path, const struct stat *st UNUSED, int flag UNUSED, struct FTW *ftw UNUSED)
{
        return remove(path) < 0 ? 0 : 0;
}

static void inst_stop(struct inst *in)
{
        if (in->pid <= 0)
                return;
        kill(in->pid, SIGTERM);
        if (wait_exit(in->pid, 5000) < 0) {
                kill(in->pid, SIGKILL);
                waitpid(in->pid, NULL, 0);
        }
        in->pid = 0;
}

static void cleanup(void)
{
        inst_stop(&shared);
        if (have_tmpdir)
                nftw(tmpdir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static bool make_tmpdir(void)
{
        if (!have_tmpdir) {
                if (!mkdtemp(tmpdir))
                        return false;
                have_tmpdir = true;
                atexit(cleanup);
        }
        return true;
}

/* Start a runner in tmpdir/name: prefix (e.g. unshare) + runner +
 * --socket-dir/--home + args; env entries are set in the child only.
 * With wait, until it answers a ping (10 s).  0 or -1. */
static int inst_start(struct inst *in, const char *name, const char *const *prefix, const char *const *args,
                      const char *const *env, bool wait)
{
        const char *argv[32];
        int n = 0;

        memset(in, 0, sizeof(*in));
        if (!make_tmpdir() || !runner_path())
                return -1;
        snprintf(in->dir, sizeof(in->dir), "%s/%s", tmpdir, name);
        snprintf(in->run, sizeof(in->run), "%s/run", in->dir);
        snprintf(in->home, sizeof(in->home), "%s/home", in->dir);
        snprintf(in->sock, sizeof(in->sock), "%s/runner.sock", in->run);
        snprintf(in->log, sizeof(in->log), "%s/runner.log", in->dir);
        mkdir(in->dir, 0755);
        mkdir(in->run, 0700);
        mkdir(in->home, 0755);
        for (; prefix && *prefix; prefix++)
                argv[n++] = *prefix;
        argv[n++] = runner_path();
        argv[n++] = "--socket-dir";
        argv[n++] = in->run;
        argv[n++] = "--home";
        argv[n++] = in->home;
        for (; args && *args; args++)
                argv[n++] = *args;
        argv[n] = NULL;
        in->rc = (struct runner_client){ .socket_path = in->sock, .timeout_ms = 20000 };
        in->pid = fork();
        if (in->pid < 0)
                return -1;
        if (in->pid == 0) {
                int fd = open(in->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
                int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
                dup2(null, 0);
                dup2(fd, 1);
                dup2(fd, 2);
                for (; env && *env; env++)
                        putenv((char *)*env);
                execvp(argv[0], (char *const *)argv);
                _exit(127);
        }
        if (!wait)
                return 0;
        for (int i = 0; i < 500; i++) {
                struct tess_error *err = NULL;
                json_t *ans = NULL;
                int status;
                if (access(in->sock, F_OK) == 0 && runner_ping(&in->rc, &ans, &err) == 0) {
                        json_decref(ans);
                        return 0;
                }
                tess_error_free(err);
                if (waitpid(in->pid, &status, WNOHANG) == in->pid) {
                        in->pid = 0;
                        return -1;
                }
                sleep_ms(20);
        }
        return -1;
}

/* The shared runner of most tests, started on first use. */
static struct runner_client *rc_up(void)
{
        static const char *const args[] = { "--auth", "uid", "--keep-uid", "--die-with-parent", "--grace-ms", "1000",
                                            NULL };

        if (shared.pid > 0)
                return &shared.rc;
        if (shared_skip)
                return NULL;
        if (!runner_path()) {
                shared_skip = "no tessera-runner in $BUILD (make BUILD=... tests)";
                return NULL;
        }
        if (inst_start(&shared, "shared", NULL, args, NULL, true) < 0) {
                shared_skip = "the runner did not start";
                return NULL;
        }
        return &shared.rc;
}

#define NEED_RUNNER(rc)                                             \
        struct runner_client *rc = rc_up();                         \
        if (!rc)                                                    \
                SKIP(shared_skip ? shared_skip : "no runner")

#define NEED_PYTHON()                                                   \
        do {                                                            \
                if (!in_path(getenv("TESSERA_PYTHON") ? getenv("TESSERA_PYTHON") : "python3")) \
                        SKIP("no python3 in PATH");                     \
        } while (0)

/* A call that must succeed; on failure its error is shown and freed
 * (uses the caller's `err`). */
#define CHECK_OK(call)                                                                                    \
        do {                                                                                              \
                if ((call) < 0) {                                                                         \
                        test_fail(__FILE__, __LINE__, "%s: %s", #call, err ? err->msg : "?");            \
                        err = tess_error_free(err);                                                       \
                }                                                                                         \
        } while (0)

/* Append a result's console to out/errb. */
static void collect(const json_t *res, struct buf *out, struct buf *errb)
{
        size_t i;
        json_t *item;

        json_array_foreach(json_object_get(res, "console"), i, item) {
                const char *kind = json_string_value(json_array_get(item, 0));
                const char *text = json_string_value(json_array_get(item, 1));
                if (kind && text)
                        buf_puts(streq(kind, "stderr") ? errb : out, text);
        }
}

struct outcome {
        struct buf out, err;
        char status[32];
        int exit_code;   /* -1: null */
        int responses;
        int continued;   /* responses with status continued */
};

static void outcome_release(struct outcome *o)
{
        buf_release(&o->out);
        buf_release(&o->err);
}

/* Start a run, then continue until it is finished or waits for input. */
static int run_until(struct runner_client *rc, const char *mode, const char *code, const char *run_id,
                     json_t *options, int wait_ms, struct outcome *o)
{
        const char *m = mode;

        *o = (struct outcome){ .out = BUF_INIT, .err = BUF_INIT, .exit_code = -1 };
        for (int i = 0; i < 200; i++) {
                struct tess_error *err = NULL;
                json_t *res = NULL;
                if (runner_execute(rc, m, run_id, streq(m, "continue") ? NULL : code, options, wait_ms, &res, &err) < 0) {
                        test_fail(__FILE__, __LINE__, "execute %s: %s", m, err->msg);
                        tess_error_free(err);
                        return -1;
                }
                collect(res, &o->out, &o->err);
                snprintf(o->status, sizeof(o->status), "%s", json_string_value(json_object_get(res, "status")));
                o->responses++;
                if (streq(o->status, "continued"))
                        o->continued++;
                if (json_is_integer(json_object_get(res, "exitCode")))
                        o->exit_code = (int)json_integer_value(json_object_get(res, "exitCode"));
                json_decref(res);
                if (streq(o->status, "finished") || streq(o->status, "waiting-input"))
                        return 0;
                m = "continue";
                options = NULL;
        }
        return -1;
}

/* ---- execute: batch ---- */

static void test_runner_ping(void)
{
        NEED_RUNNER(rc);
        struct runner_client bad = *rc;
        struct tess_error *err = NULL;
        json_t *ans = NULL;

        CHECK_OK(runner_ping(rc, &ans, &err));
        CHECK_STREQ(json_string_value(json_object_get(ans, "mode")), "interactive");
        CHECK_INTEQ(json_integer_value(json_object_get(ans, "pid")), shared.pid);
        json_decref(ans);
        /* the client checks who listens */
        bad.runner_pid = shared.pid;
        CHECK_OK(runner_ping(&bad, NULL, &err));
        bad.runner_pid = shared.pid + 100000;
        CHECK(runner_ping(&bad, NULL, &err) == -EPERM);
        err = tess_error_free(err);
}

static void test_runner_batch_exec(void)
{
        NEED_RUNNER(rc);
        struct tess_error *err = NULL;
        struct outcome o;
        json_t *res = NULL, *first;

        CHECK_OK(runner_execute(rc, "batch", "b1", "echo hi; echo err >&2; exit 3", NULL, 5000, &res, &err));
        CHECK_STREQ(json_string_value(json_object_get(res, "status")), "finished");
        CHECK_STREQ(json_string_value(json_object_get(res, "runId")), "b1");
        CHECK_INTEQ(json_integer_value(json_object_get(res, "exitCode")), 3);
        first = json_array_get(json_object_get(res, "console"), 0);
        CHECK_STREQ(json_string_value(json_array_get(first, 0)), "stdout");
        CHECK_STREQ(json_string_value(json_array_get(first, 1)), "hi\n");
        CHECK_INTEQ(json_array_size(json_object_get(res, "console")), 2);
        json_decref(res);
        /* a finished run is gone once fetched */
        CHECK(runner_execute(rc, "continue", "b1", NULL, NULL, 0, &res, &err) == -ENOENT);
        err = tess_error_free(err);

        /* options.exec wins over code; no runId: the runner names the run */
        json_t *opts = json_pack("{s:s}", "exec", "echo from-options");
        CHECK(run_until(rc, "batch", "echo from-code", NULL, opts, 5000, &o) == 0);
        CHECK_STREQ(o.out.data, "from-options\n");
        CHECK_INTEQ(o.exit_code, 0);
        outcome_release(&o);
        json_decref(opts);

        /* "*" is Backend.AI's CLI's "the default" (backend.ai run sends it for
         * clean, and for build and exec when not given): no stage of its
         * own, never a shell glob; exec "*" runs the code */
        opts = json_pack("{s:s, s:s, s:s, s:b}", "clean", "*", "build", "*", "exec", "*", "buildLog", false);
        CHECK(run_until(rc, "batch", "echo from-code", NULL, opts, 5000, &o) == 0);
        CHECK_STREQ(o.out.data, "from-code\n");
        CHECK_INTEQ(o.exit_code, 0);
        outcome_release(&o);
        CHECK(runner_execute(rc, "batch", "star", NULL, opts, 5000, &res, &err) == -EINVAL);
        CHECK(err && strstr(err->msg, "batch needs options.exec"));
        err = tess_error_free(err);
        json_decref(opts);
}

static void test_runner_batch_stages(void)
{
        NEED_RUNNER(rc);
        struct tess_error *err = NULL;
        json_t *opts = json_pack("{s:s, s:s, s:s}", "clean", "echo c", "build", "echo b", "exec", "echo e; exit 4");
        const char *want[][2] = { { "clean-finished", "c\n" }, { "build-finished", "b\n" }, { "finished", "e\n" } };
        const char *mode = "batch";

        for (size_t i = 0; i < ARRAY_SIZE(want); i++) {
                json_t *res = NULL;
                struct buf out = BUF_INIT, eb = BUF_INIT;
                /* wait for the stage boundary */
                CHECK_OK(runner_execute(rc, mode, "stages", NULL, i == 0 ? opts : NULL, 5000, &res, &err));
                if (!res)
                        break;
                collect(res, &out, &eb);
                CHECK_STREQ(json_string_value(json_object_get(res, "status")), want[i][0]);
                CHECK_STREQ(out.data, want[i][1]);
                if (i == 2)
                        CHECK_INTEQ(json_integer_value(json_object_get(res, "exitCode")), 4);
                json_decref(res);
                buf_release(&out);
                buf_release(&eb);
                mode = "continue";
        }
        json_decref(opts);
        /* a failing stage ends the run */
        struct outcome o;
        opts = json_pack("{s:s, s:s}", "build", "echo broken; exit 2", "exec", "echo never");
        CHECK(run_until(rc, "batch", NULL, "stages2", opts, 5000, &o) == 0);
        CHECK_STREQ(o.out.data, "broken\n");
        CHECK_INTEQ(o.exit_code, 2);
        outcome_release(&o);
        json_decref(opts);
}

static void test_runner_batch_large_output(void)
{
        NEED_RUNNER(rc);
        struct outcome o;
        size_t as = 0;

        /* 3 MB: three fetches at least, the runner stops reading in between */
        CHECK(run_until(rc, "batch", "head -c 3000000 /dev/zero | tr '\\0' a", "big", NULL, 5000, &o) == 0);
        CHECK_INTEQ(o.out.len, 3000000);
        for (size_t i = 0; i < o.out.len; i++)
                as += o.out.data[i] == 'a';
        CHECK_INTEQ(as, 3000000);
        CHECK(o.responses >= 3);
        CHECK_INTEQ(o.exit_code, 0);
        outcome_release(&o);
}

static void test_runner_batch_utf8_split(void)
{
        NEED_RUNNER(rc);
        struct outcome o;

        /* an é cut between two writes is not turned into U+FFFD */
        CHECK(run_until(rc, "batch", "printf '\\303'; sleep 0.5; printf '\\251\\n'; printf '\\377\\n' >&2", "utf8", NULL,
                        100, &o) == 0);
        CHECK_STREQ(o.out.data, "\xc3\xa9\n");
        CHECK_STREQ(o.err.data, "\xef\xbf\xbd\n");
        CHECK(o.continued >= 1);
        outcome_release(&o);
}

static void test_runner_batch_input(void)
{
        NEED_RUNNER(rc);
        struct tess_error *err = NULL;
        struct outcome o;
        json_t *res = NULL;

        CHECK_OK(runner_execute(rc, "batch", "cat1", "read line; echo got $line", NULL, 100, &res, &err));
        json_decref(res);
        CHECK(run_until(rc, "input", "hello", "cat1", NULL, 5000, &o) == 0);
        CHECK_STREQ(o.out.data, "got hello\n");
        outcome_release(&o);
}

/* ---- execute: query ---- */

static void test_runner_query_state(void)
{
        NEED_RUNNER(rc);
        NEED_PYTHON();
        struct outcome o;

        CHECK(run_until(rc, "query", "x = 41", "q1", NULL, 10000, &o) == 0);
        CHECK_STREQ(o.status, "finished");
        CHECK_STREQ(o.out.data, "");
        CHECK_INTEQ(o.exit_code, 0);
        outcome_release(&o);
        CHECK(run_until(rc, "query", "print(x + 1)", "q2", NULL, 10000, &o) == 0);
        CHECK_STREQ(o.out.data, "42\n");
        outcome_release(&o);
        /* a trailing expression shows its value, as the REPL does */
        CHECK(run_until(rc, "query", "y = [x]\ny", "q3", NULL, 10000, &o) == 0);
        CHECK_STREQ(o.out.data, "[41]\n");
        outcome_release(&o);
        /* stdout and stderr of the code and of its subprocesses */
        CHECK(run_until(rc, "query", "import os, sys\nprint('a', file=sys.stderr)\nos.system('echo sub')", "q4", NULL,
                        10000, &o) == 0);
        CHECK_STREQ(o.err.data, "a\n");
        CHECK(strstr(o.out.data, "sub\n") != NULL);
        outcome_release(&o);
}

static void test_runner_query_exception(void)
{
        NEED_RUNNER(rc);
        NEED_PYTHON();
        struct outcome o;

        CHECK(run_until(rc, "query", "def f():\n    return 1 / 0\nf()", "qe", NULL, 10000, &o) == 0);
        CHECK_STREQ(o.status, "finished");
        CHECK(strstr(o.err.data, "Traceback (most recent call last):") != NULL);
        CHECK(strstr(o.err.data, "ZeroDivisionError: division by zero") != NULL);
        CHECK(strstr(o.err.data, "_tessera_repl") == NULL); /* the driver's own frame is hidden */
        CHECK_INTEQ(o.exit_code, 1);
        outcome_release(&o);
        CHECK(run_until(rc, "query", "x = (", "qs", NULL, 10000, &o) == 0);
        CHECK(strstr(o.err.data, "SyntaxError") != NULL);
        outcome_release(&o);
        /* the interpreter survived */
        CHECK(run_until(rc, "query", "print('alive')", "qa", NULL, 10000, &o) == 0);
        CHECK_STREQ(o.out.data, "alive\n");
        outcome_release(&o);
}

static void test_runner_query_continue(void)
{
        NEED_RUNNER(rc);
        NEED_PYTHON();
        struct outcome o;

        CHECK(run_until(rc, "query", "import time\nfor i in range(5):\n    print(i)\n    time.sleep(0.2)", "ql", NULL,
                        300, &o) == 0);
        CHECK_STREQ(o.status, "finished");
        CHECK_STREQ(o.out.data, "0\n1\n2\n3\n4\n");
        CHECK(o.continued >= 1);
        CHECK(o.responses >= 2);
        outcome_release(&o);
        /* the brief's one-liner */
        CHECK(run_until(rc, "query", "import time; [print(i) or time.sleep(0.2) for i in range(5)]", "ql2", NULL, 300,
                        &o) == 0);
        CHECK(strncmp(o.out.data, "0\n1\n2\n3\n4\n", 10) == 0);
        CHECK(o.continued >= 1);
        outcome_release(&o);
}

static void test_runner_query_busy(void)
{
        NEED_RUNNER(rc);
        NEED_PYTHON();
        struct tess_error *err = NULL;
        struct outcome o;
        json_t *res = NULL;

        CHECK_OK(runner_execute(rc, "query", "qb1", "import time; time.sleep(0.5)", NULL, 0, &res, &err));
        json_decref(res);
        res = NULL;
        /* one interpreter: a second query waits its turn */
        CHECK(runner_execute(rc, "query", "qb2", "1", NULL, 0, &res, &err) == -EBUSY);
        err = tess_error_free(err);
        CHECK(run_until(rc, "continue", NULL, "qb1", NULL, 5000, &o) == 0);
        CHECK_STREQ(o.status, "finished");
        outcome_release(&o);
}

static void test_runner_query_input(void)
{
        NEED_RUNNER(rc);
        NEED_PYTHON();
        struct outcome o;

        CHECK(run_until(rc, "query", "name = input('who? ')\nprint('hello', name)", "qi", NULL, 10000, &o) == 0);
        CHECK_STREQ(o.status, "waiting-input");
        CHECK_STREQ(o.out.data, "who? ");
        outcome_release(&o);
        CHECK(run_until(rc, "input", "bob", "qi", NULL, 10000, &o) == 0);
        CHECK_STREQ(o.status, "finished");
        CHECK_STREQ(o.out.data, "hello bob\n");
        outcome_release(&o);
}

static void test_runner_query_interrupt(void)
{
        NEED_RUNNER(rc);
        NEED_PYTHON();
        struct tess_error *err = NULL;
        struct outcome o;
        json_t *res = NULL;

        CHECK(run_until(rc, "query", "z = 7", "qz", NULL, 10000, &o) == 0);
        outcome_release(&o);
        CHECK_OK(runner_execute(rc, "query", "qk", "import time\ntime.sleep(30)", NULL, 300, &res, &err));
        json_decref(res);
        CHECK_OK(runner_interrupt(rc, "qk", &err));
        CHECK(run_until(rc, "continue", NULL, "qk", NULL, 5000, &o) == 0);
        CHECK_STREQ(o.status, "finished");
        CHECK(strstr(o.err.data, "KeyboardInterrupt") != NULL);
        outcome_release(&o);
        CHECK(run_until(rc, "query", "print(z)", "qz2", NULL, 10000, &o) == 0);
        CHECK_STREQ(o.out.data, "7\n");
        outcome_release(&o);
}

static void test_runner_query_interpreter_dies(void)
{
        NEED_RUNNER(rc);
        NEED_PYTHON();
        struct outcome o;

        CHECK(run_until(rc, "query", "w = 1\nimport os; os._exit(3)", "qd", NULL, 10000, &o) == 0);
        CHECK_STREQ(o.status, "finished");
        CHECK_INTEQ(o.exit_code, 3);
        CHECK(strstr(o.err.data, "interpreter exited") != NULL);
        outcome_release(&o);
        /* a new interpreter, the old state gone */
        CHECK(run_until(rc, "query", "print('w' in globals())", "qd2", NULL, 10000, &o) == 0);
        CHECK_STREQ(o.out.data, "False\n");
        outcome_release(&o);
}

static bool has_string(const json_t *array, const char *s)
{
        size_t i;
        json_t *v;

        json_array_foreach(array, i, v)
                if (streq(json_string_value(v), s))
                        return true;
        return false;
}

static void test_runner_complete(void)
{
        NEED_RUNNER(rc);
        struct tess_error *err = NULL;
        json_t *res = NULL;

        CHECK_OK(runner_execute(rc, "complete", NULL, "pri", NULL, -1, &res, &err));
        CHECK_STREQ(json_string_value(json_object_get(res, "status")), "finished");
        CHECK(json_is_array(json_object_get(res, "completions")));
        CHECK(has_string(json_object_get(res, "completions"), "print("));
        json_decref(res);

        /* names of the session's own state, and attributes */
        CHECK_OK(runner_execute(rc, "query", NULL, "import os\ncompletion_target = {}", NULL, 5000, &res, &err));
        json_decref(res);
        CHECK_OK(runner_execute(rc, "complete", NULL, "x = completion_t", NULL, -1, &res, &err));
        CHECK(has_string(json_object_get(res, "completions"), "completion_target"));
        json_decref(res);
        CHECK_OK(runner_execute(rc, "complete", NULL, "os.getc", NULL, -1, &res, &err));
        /* "os.getcwd(", or "os.getcwd()" where Python knows it takes nothing */
        CHECK(has_string(json_object_get(res, "completions"), "os.getcwd(") ||
              has_string(json_object_get(res, "completions"), "os.getcwd()"));
        json_decref(res);
        CHECK_OK(runner_execute(rc, "complete", NULL, "no_such_prefix_", NULL, -1, &res, &err));
        CHECK(json_array_size(json_object_get(res, "completions")) == 0);
        json_decref(res);
}

/* ---- terminals ---- */

/* Bytes as a C string's text: control characters escaped. */
static void print_escaped(const char *p, size_t n)
{
        for (size_t i = 0; i < n; i++)
                printf((unsigned char)p[i] < ' ' ? "\\x%02x" : "%c", (unsigned char)p[i]);
}

/* Say what a terminal printed instead of what a test waited for, so that a
 * failure that does not come again can still be read from the log. */
static void show_seen(const char *want, const struct buf *seen, const char *why)
{
        printf("# waited for \"");
        print_escaped(want, strlen(want));
        printf("\" (%s); the terminal printed %zu bytes: \"", why, seen->len);
        print_escaped(seen->data, seen->len);
        printf("\"\n");
}

/* Read fd until `want` shows up (10 s). */
static bool read_until(int fd, const char *want, struct buf *seen)
{
        for (int i = 0; i < 200 && !strstr(seen->data, want); i++) {
                struct pollfd p = { fd, POLLIN, 0 };
                char chunk[4096];
                if (poll(&p, 1, 50) <= 0)
                        continue;
                ssize_t n = read(fd, chunk, sizeof(chunk));
                if (n <= 0) {
                        show_seen(want, seen, n < 0 ? strerror(errno) : "end of file");
                        return false;
                }
                buf_append(seen, chunk, (size_t)n);
        }
        if (strstr(seen->data, want))
                return true;
        show_seen(want, seen, "not within 200 waits of 50 ms");
        return false;
}

static void test_runner_pty(void)
{
        NEED_RUNNER(rc);
        struct runner_pty_opts opts = { .rows = 24, .cols = 80 };
        struct tess_error *err = NULL;
        struct buf seen = BUF_INIT;
        int fd = -1, fd2 = -1;
        pid_t pid = 0;

        CHECK_OK(runner_open_pty(rc, &opts, &fd, &pid, &err));
        if (fd < 0)
                return;
        CHECK(pid > 0);
        CHECK(write(fd, "echo $((6*7))\n", 14) == 14);
        CHECK(read_until(fd, "42\r\n", &seen));
        CHECK_OK(runner_pty_resize(fd, 30, 100, &err));
        buf_reset(&seen);
        CHECK(write(fd, "stty size; echo $TERM\n", 22) == 22);
        CHECK(read_until(fd, "30 100\r\nxterm-256color", &seen));
        /* a second terminal at the same time */
        CHECK_OK(runner_open_pty(rc, NULL, &fd2, NULL, &err));
        if (fd2 >= 0) {
                buf_reset(&seen);
                CHECK(write(fd2, "echo two$((1+1))\n", 17) == 17);
                CHECK(read_until(fd2, "two2", &seen));
                close(fd2);
        }
        close(fd);
        buf_release(&seen);
        /* closing the master hangs the shell up: the runner reaps it */
        for (int i = 0; i < 100 && kill(pid, 0) == 0; i++)
                sleep_ms(50);
        CHECK(kill(pid, 0) < 0);
}

/* ---- files ---- */

static void test_runner_files(void)
{
        NEED_RUNNER(rc);
        struct tess_error *err = NULL;
        struct buf got = BUF_INIT;
        size_t n = 200 * 1024 + 7, i;
        char *data = xmalloc(n), path[512];
        json_t *entries = NULL, *e;
        bool found = false;
        int64_t size = 0;
        int fd;

        for (i = 0; i < n; i++)
                data[i] = (char)((i * 7919) >> 3); /* NULs and high bytes */
        CHECK_OK(runner_upload_buf(rc, "a/b/c.bin", data, n, 0600, &err));
        CHECK_OK(runner_download_buf(rc, "a/b/c.bin", n, &got, &err));
        CHECK_INTEQ(got.len, n);
        CHECK(got.len == n && memcmp(got.data, data, n) == 0);
        /* too large for the caller's limit */
        CHECK(runner_download_buf(rc, "a/b/c.bin", 10, &got, &err) == -EFBIG);
        err = tess_error_free(err);
        CHECK_OK(runner_list(rc, "a/b", &entries, &err));
        json_array_foreach(entries, i, e) {
                if (streq(json_string_value(json_object_get(e, "name")), "c.bin")) {
                        found = true;
                        CHECK_STREQ(json_string_value(json_object_get(e, "type")), "file");
                        CHECK_INTEQ(json_integer_value(json_object_get(e, "size")), n);
                        CHECK_INTEQ(json_integer_value(json_object_get(e, "perm")), 0600);
                }
        }
        CHECK(found);
        json_decref(entries);
        /* from and to file descriptors; an empty file */
        snprintf(path, sizeof(path), "%s/src.bin", shared.dir);
        fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        CHECK(fd >= 0 && write(fd, data, 1000) == 1000);
        lseek(fd, 0, SEEK_SET);
        CHECK_OK(runner_upload(rc, "fromfd.bin", fd, 1000, -1, &err));
        close(fd);
        snprintf(path, sizeof(path), "%s/dst.bin", shared.dir);
        fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        CHECK_OK(runner_download(rc, "fromfd.bin", fd, 1 << 20, &size, &err));
        CHECK_INTEQ(size, 1000);
        CHECK_INTEQ(lseek(fd, 0, SEEK_END), 1000);
        close(fd);
        CHECK_OK(runner_upload_buf(rc, "empty", "", 0, -1, &err));
        buf_reset(&got);
        CHECK_OK(runner_download_buf(rc, "empty", 10, &got, &err));
        CHECK_INTEQ(got.len, 0);
        CHECK(runner_download_buf(rc, "missing", 10, &got, &err) == -ENOENT);
        err = tess_error_free(err);
        CHECK(runner_download_buf(rc, "a", 10, &got, &err) == -EINVAL); /* a directory */
        err = tess_error_free(err);
        /* no temporary files left behind */
        CHECK_OK(runner_list(rc, NULL, &entries, &err));
        json_array_foreach(entries, i, e)
                CHECK(!strstr(json_string_value(json_object_get(e, "name")), "tessera-upload"));
        json_decref(entries);
        buf_release(&got);
        free(data);
}

static void test_runner_path_escapes(void)
{
        NEED_RUNNER(rc);
        struct tess_error *err = NULL;
        struct buf got = BUF_INIT;
        char link[512], outside[256], secret[512];
        struct stat st;
        json_t *entries = NULL;

        snprintf(outside, sizeof(outside), "%s/outside", shared.dir);
        snprintf(secret, sizeof(secret), "%s/secret", outside);
        mkdir(outside, 0755);
        int fd = open(secret, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        CHECK(fd >= 0 && write(fd, "secret", 6) == 6);
        close(fd);

        CHECK(runner_upload_buf(rc, "../x", "x", 1, -1, &err) == -EINVAL);
        err = tess_error_free(err);
        CHECK(runner_upload_buf(rc, "a/../../x", "x", 1, -1, &err) == -EINVAL);
        err = tess_error_free(err);
        CHECK(runner_upload_buf(rc, "/etc/passwd", "x", 1, -1, &err) == -EINVAL);
        err = tess_error_free(err);
        CHECK(runner_download_buf(rc, "/etc/passwd", 1 << 20, &got, &err) == -EINVAL);
        err = tess_error_free(err);
        CHECK(runner_download_buf(rc, "../outside/secret", 1 << 20, &got, &err) == -EINVAL);
        err = tess_error_free(err);
        snprintf(link, sizeof(link), "%s/x", shared.dir);
        CHECK(stat(link, &st) < 0);

        /* a symlink in the home directory to /etc, then through it */
        snprintf(link, sizeof(link), "%s/etc", shared.home);
        CHECK(symlink("/etc", link) == 0);
        CHECK(runner_upload_buf(rc, "etc/tessera-runner-test-must-not-exist", "x", 1, -1, &err) == -ELOOP);
        err = tess_error_free(err);
        CHECK(stat("/etc/tessera-runner-test-must-not-exist", &st) < 0);
        CHECK(runner_download_buf(rc, "etc/hostname", 1 << 20, &got, &err) == -ELOOP);
        err = tess_error_free(err);
        CHECK(runner_list(rc, "etc", &entries, &err) == -ELOOP);
        err = tess_error_free(err);
        /* a deeper one */
        snprintf(link, sizeof(link), "%s/dir", shared.home);
        mkdir(link, 0755);
        snprintf(link, sizeof(link), "%s/dir/out", shared.home);
        CHECK(symlink(outside, link) == 0);
        CHECK(runner_upload_buf(rc, "dir/out/secret", "pwned", 5, -1, &err) == -ELOOP);
        err = tess_error_free(err);
        /* a symlink as the last component: not followed on download; an
         * upload replaces the link itself */
        snprintf(link, sizeof(link), "%s/secret-link", shared.home);
        CHECK(symlink(secret, link) == 0);
        CHECK(runner_download_buf(rc, "secret-link", 1 << 20, &got, &err) == -ELOOP);
        err = tess_error_free(err);
        CHECK_OK(runner_upload_buf(rc, "secret-link", "mine", 4, -1, &err));
        CHECK(lstat(link, &st) == 0 && S_ISREG(st.st_mode));
        CHECK(stat(secret, &st) == 0 && st.st_size == 6);
        CHECK_INTEQ(got.len, 0);
        buf_release(&got);
}

/* ---- services ---- */

static bool can_connect(int port)
{
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                                  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        bool ok;

        ok = connect(s, (struct sockaddr *)&sa, sizeof(sa)) == 0;
        close(s);
        return ok;
}

static void test_runner_service(void)
{
        NEED_RUNNER(rc);
        NEED_PYTHON();
        struct tess_error *err = NULL;
        int port = 20000 + (int)(getpid() % 20000);
        char portstr[16];
        const char *argv[] = { "python3", "-m", "http.server", portstr, "--bind", "127.0.0.1", NULL };
        json_t *ans = NULL;
        json_int_t pid;

        snprintf(portstr, sizeof(portstr), "%d", port);
        CHECK_OK(runner_start_service(rc, "web", argv, NULL, port, 20000, &ans, &err));
        if (!ans) {
                test_fail(__FILE__, __LINE__, "%s", err ? err->msg : "?");
                tess_error_free(err);
                return;
        }
        CHECK_STREQ(json_string_value(json_object_get(ans, "status")), "listening");
        pid = json_integer_value(json_object_get(ans, "pid"));
        json_decref(ans);
        CHECK(can_connect(port));
        /* started once */
        CHECK_OK(runner_start_service(rc, "web", argv, NULL, port, 20000, &ans, &err));
        CHECK_INTEQ(json_integer_value(json_object_get(ans, "pid")), pid);
        json_decref(ans);
        /* a command that exits before listening */
        const char *bad[] = { "sh", "-c", "exit 3", NULL };
        CHECK(runner_start_service(rc, "bad", bad, NULL, port + 1, 5000, NULL, &err) == -ECHILD);
        err = tess_error_free(err);
        /* nothing listens: a timeout, the service keeps running */
        const char *slow[] = { "sleep", "5", NULL };
        CHECK(runner_start_service(rc, "slow", slow, NULL, port + 2, 300, NULL, &err) == -ETIMEDOUT);
        err = tess_error_free(err);
        /* shutdown-service: the app ends, its port closes, and it starts again */
        CHECK_OK(runner_shutdown_service(rc, "web", &ans, &err));
        CHECK_STREQ(json_string_value(json_object_get(ans, "status")), "stopped");
        CHECK_INTEQ(json_integer_value(json_object_get(ans, "pid")), pid);
        json_decref(ans);
        CHECK(!can_connect(port));
        CHECK(runner_shutdown_service(rc, "web", NULL, &err) == -ENOENT);
        err = tess_error_free(err);
        CHECK(runner_shutdown_service(rc, "never", NULL, &err) == -ENOENT);
        err = tess_error_free(err);
        CHECK_OK(runner_start_service(rc, "web", argv, NULL, port, 20000, &ans, &err));
        CHECK(json_integer_value(json_object_get(ans, "pid")) != pid);
        json_decref(ans);
        CHECK(can_connect(port));
        CHECK_OK(runner_shutdown_service(rc, "web", NULL, &err));
        CHECK_OK(runner_shutdown_service(rc, "slow", NULL, &err));
        /* an app that ignores SIGTERM is killed after the grace period */
        const char *stubborn[] = { "sh", "-c", "trap '' TERM; sleep 60", NULL };
        CHECK_OK(runner_start_service(rc, "stubborn", stubborn, NULL, 0, 0, NULL, &err));
        int64_t t0 = monotonic_usec();
        CHECK_OK(runner_shutdown_service(rc, "stubborn", &ans, &err));
        CHECK(monotonic_usec() - t0 < 9 * USEC_PER_SEC);
        CHECK_STREQ(json_string_value(json_object_get(ans, "status")), "stopped");
        json_decref(ans);
        if (err)
                test_fail(__FILE__, __LINE__, "%s", err->msg);
        err = tess_error_free(err);
}

/* ---- protocol ---- */

/* A connection to the runner's socket, or -1. */
static int raw_connect(const char *sock)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        size_t len = strlen(sock);
        int s;

        if (len >= sizeof(sa.sun_path))
                return -1;
        memcpy(sa.sun_path, sock, len + 1);
        s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (connect(s, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
                close(s);
                return -1;
        }
        return s;
}

/* Send raw bytes, return the answer line (caller frees) or NULL. */
static char *raw(const char *sock, const char *bytes, size_t n)
{
        struct buf in = BUF_INIT;
        int s = raw_connect(sock);
        char chunk[4096];
        ssize_t got;

        if (s < 0)
                return NULL;
        if (write(s, bytes, n) != (ssize_t)n) {
                close(s);
                return NULL;
        }
        shutdown(s, SHUT_WR); /* a cut request ends here, not at the runner's timeout */
        while (!strchr(in.data, '\n') && (got = read(s, chunk, sizeof(chunk))) > 0)
                buf_append(&in, chunk, (size_t)got);
        close(s);
        return buf_detach(&in, NULL);
}

static void test_runner_protocol_errors(void)
{
        NEED_RUNNER(rc);
        static const char *const bad[] = {
                "not json\n",
                "[]\n",
                "{\"op\":\"nope\"}\n",
                "{\"op\":\"exec\"}\n",
                "{\"op\":\"exec\",\"mode\":\"continue\"}\n",
                "{\"op\":\"exec\",\"mode\":\"batch\",\"code\":\"\"}\n",
                "{\"op\":\"exec\",\"mode\":\"query\",\"code\":1}\n",
                "{\"op\":\"exec\",\"mode\":\"continue\",\"runId\":\"a b\"}\n",
                "{\"op\":\"ping\",\"id\":1,\"id\":2}\n",
                "{\"op\":\"upload\",\"path\":\"x\"}\n",
                "{\"op\":\"upload\",\"path\":\"dir/\",\"size\":1}\n",
                "{\"op\":\"pty\",\"rows\":0}\n",
                "{\"op\":\"start-service\",\"name\":\"x\",\"argv\":[]}\n",
                "{\"op\":\"shutdown-service\"}\n",
                "{\"op\":\"pty\",\"env\":[\"1X=y\"]}\n",
                "{\"op\":\"ping\",\"x\":\"\\u0000\"}\n",
                "{\"op\":\"ping\"} x\n",
        };
        struct tess_error *err = NULL;
        json_t *res = NULL;

        for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
                char *ans = raw(shared.sock, bad[i], strlen(bad[i]));
                CHECK(ans && strstr(ans, "\"ok\":false") && strstr(ans, "\"errno\":22"));
                if (!ans || !strstr(ans, "\"ok\":false"))
                        test_fail(__FILE__, __LINE__, "request %zu: %s", i, ans ? ans : "(none)");
                free(ans);
        }
        /* the id comes back; members the runner does not know are ignored */
        static const char future[] = "{\"id\":7,\"op\":\"ping\",\"future\":{\"a\":[1,2.5e3,null,true]}}\n";
        char *ans = raw(shared.sock, future, strlen(future));
        CHECK(ans && strstr(ans, "\"ok\":true,\"id\":7,"));
        free(ans);
        /* a connection that gives up half-way does no harm */
        ans = raw(shared.sock, "{\"op\":\"pi", 9);
        CHECK(ans && !*ans);
        free(ans);
        CHECK(runner_execute(rc, "continue", "no-such-run", NULL, NULL, 0, &res, &err) == -ENOENT);
        err = tess_error_free(err);
        CHECK(runner_execute(rc, "input", "no-such-run", "x", NULL, 0, &res, &err) == -ENOENT);
        err = tess_error_free(err);
        CHECK_OK(runner_ping(rc, NULL, &err));
}


static void test_runner_connections(void)
{
        NEED_RUNNER(rc);
        static const char wait_req[] = "{\"op\":\"exec\",\"mode\":\"batch\",\"runId\":\"gone\","
                                       "\"code\":\"sleep 0.5; echo done\",\"wait\":10000}\n";
        struct tess_error *err = NULL;
        struct outcome o;
        int idle[40], s;

        /* more idle connections than the runner serves at once: the rest
         * wait in the backlog, and a request still gets through */
        for (size_t i = 0; i < ARRAY_SIZE(idle); i++)
                idle[i] = raw_connect(shared.sock);
        sleep_ms(200);
        for (size_t i = 0; i < ARRAY_SIZE(idle); i++)
                if (idle[i] >= 0)
                        close(idle[i]);
        CHECK_OK(runner_ping(rc, NULL, &err));

        /* an agent that gives up waiting does not block the run */
        s = raw_connect(shared.sock);
        CHECK(s >= 0 && write(s, wait_req, strlen(wait_req)) == (ssize_t)strlen(wait_req));
        sleep_ms(100);
        close(s);
        sleep_ms(100);
        CHECK(run_until(rc, "continue", NULL, "gone", NULL, 5000, &o) == 0);
        CHECK_STREQ(o.out.data, "done\n");
        outcome_release(&o);

        /* one that shuts its writing side down still gets its answer */
        char *ans = raw(shared.sock, "{\"op\":\"exec\",\"mode\":\"batch\",\"code\":\"sleep 0.3; echo half\",\"wait\":5000}\n",
                        strlen("{\"op\":\"exec\",\"mode\":\"batch\",\"code\":\"sleep 0.3; echo half\",\"wait\":5000}\n"));
        CHECK(ans && strstr(ans, "half\\n") && strstr(ans, "\"finished\""));
        free(ans);
}

/* ---- processes ---- */

static int proc_ppid(pid_t pid)
{
        char path[64], stat[512], *p;
        int ppid = -1;
        FILE *f;

        snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
        f = fopen(path, "re");
        if (!f)
                return -1;
        if (fgets(stat, sizeof(stat), f) && (p = strrchr(stat, ')')))
                sscanf(p + 2, "%*c %d", &ppid);
        fclose(f);
        return ppid;
}

static void test_runner_reaps_orphans(void)
{
        NEED_RUNNER(rc);
        struct outcome o;
        pid_t orphan;
        char path[64];
        struct stat st;

        /* the middle shell exits at once: sleep is orphaned to the runner */
        CHECK(run_until(rc, "batch", "sh -c 'sleep 1 </dev/null >/dev/null 2>&1 & echo $!'", "orphan", NULL, 5000, &o) == 0);
        orphan = (pid_t)strtol(o.out.data, NULL, 10);
        outcome_release(&o);
        CHECK(orphan > 0);
        CHECK_INTEQ(proc_ppid(orphan), shared.pid);
        snprintf(path, sizeof(path), "/proc/%d", (int)orphan);
        for (int i = 0; i < 100 && stat(path, &st) == 0; i++)
                sleep_ms(50);
        CHECK(stat(path, &st) < 0); /* reaped, not a zombie */
}

static void test_runner_batch_session(void)
{
        static const char *const args[] = { "--batch", "--auth", "uid", "--keep-uid", "--", "sh", "-c", "exit 5", NULL };
        static const char *const args2[] = { "--batch", "--auth", "uid", "--keep-uid", NULL };
        static const char *const env2[] = { "TESSERA_STARTUP_COMMAND=echo out-$((3+4)); echo err >&2; exit 7", NULL };
        static const char *const args3[] = { "--batch", "--auth", "uid", "--keep-uid", "--grace-ms", "200", "--", "sh", "-c",
                                              "sleep 100 & exec sh -c 'kill -TERM $$'", NULL };
        struct inst in;
        char *log = NULL;
        int status;

        if (!runner_path())
                SKIP("no tessera-runner in $BUILD");
        CHECK(inst_start(&in, "batch5", NULL, args, NULL, false) == 0);
        status = wait_exit(in.pid, 10000);
        CHECK(status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 5);
        CHECK(access(in.sock, F_OK) < 0); /* removed at exit */

        CHECK(inst_start(&in, "batch7", NULL, args2, env2, false) == 0);
        status = wait_exit(in.pid, 10000);
        CHECK(status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 7);
        struct tess_error *err = NULL;
        size_t len = 0;
        CHECK(fs_read_file(in.log, 1 << 20, &log, &len, &err) == 0);
        CHECK(log && strstr(log, "out-7\n") && strstr(log, "err\n"));
        free(log);
        err = tess_error_free(err);

        /* killed by a signal: 128 + 15; what it left behind is killed too */
        CHECK(inst_start(&in, "batch143", NULL, args3, NULL, false) == 0);
        status = wait_exit(in.pid, 10000);
        CHECK(status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 143);
}

/* TESSERA_BOOTSTRAP_SCRIPT runs before a batch command, in the home
 * directory; a failed one ends the session with its status instead. */
static void test_runner_bootstrap_script(void)
{
        static const char *const args[] = { "--batch", "--auth", "uid", "--keep-uid", NULL };
        static const char *const ok_env[] = { "TESSERA_BOOTSTRAP_SCRIPT=echo boot-$((1+1)) >>order; pwd >where",
                                              "TESSERA_STARTUP_COMMAND=test -s order && echo job >>order; exit 3",
                                              NULL };
        static const char *const bad_env[] = { "TESSERA_BOOTSTRAP_SCRIPT=echo failing; exit 9",
                                               "TESSERA_STARTUP_COMMAND=echo job-ran >>order", NULL };
        struct tess_error *err = NULL;
        struct inst in;
        char *text = NULL, path[PATH_MAX];
        size_t len = 0;
        int status;

        if (!runner_path())
                SKIP("no tessera-runner in $BUILD");
        CHECK(inst_start(&in, "boot-ok", NULL, args, ok_env, false) == 0);
        status = wait_exit(in.pid, 10000);
        CHECK(status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 3);
        snprintf(path, sizeof(path), "%s/order", in.home);
        CHECK(fs_read_file(path, 4096, &text, &len, &err) == 0);
        CHECK_STREQ(text, "boot-2\njob\n");
        free(text);
        snprintf(path, sizeof(path), "%s/where", in.home);
        CHECK(fs_read_file(path, 4096, &text, &len, &err) == 0);
        CHECK(text && strncmp(text, in.home, strlen(in.home)) == 0);
        free(text);

        CHECK(inst_start(&in, "boot-bad", NULL, args, bad_env, false) == 0);
        status = wait_exit(in.pid, 10000);
        CHECK(status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 9);
        snprintf(path, sizeof(path), "%s/order", in.home);
        CHECK(access(path, F_OK) < 0); /* the command never ran */
        CHECK(fs_read_file(in.log, 1 << 20, &text, &len, &err) == 0);
        CHECK(text && strstr(text, "failing\n") && strstr(text, "bootstrap script failed (exit status 9)"));
        free(text);
        tess_error_free(err);
}

/* A restart ends every process of the session, keeps the runner and the
 * files, and starts the session over: the bootstrap script again, and a
 * batch session's command again (its end before the restart is not the
 * session's end). */
static void test_runner_restart(void)
{
        static const char *const iargs[] = { "--auth", "uid", "--keep-uid", "--die-with-parent", "--grace-ms", "1000",
                                             NULL };
        static const char *const ienv[] = { "TESSERA_BOOTSTRAP_SCRIPT=echo boot >>boots", NULL };
        static const char *const bargs[] = { "--batch", "--auth", "uid", "--keep-uid", "--die-with-parent", NULL };
        static const char *const benv[] = { "TESSERA_STARTUP_COMMAND=echo ran >>runs; exec sleep 100", NULL };
        struct tess_error *err = NULL;
        struct inst in;
        struct outcome o;
        char path[PATH_MAX], *text = NULL;
        size_t len;
        json_t *res = NULL;

        if (!runner_path())
                SKIP("no tessera-runner in $BUILD");
        CHECK(inst_start(&in, "restart-i", NULL, iargs, ienv, true) == 0);
        CHECK_OK(runner_execute(&in.rc, "batch", "r1", "echo $$; exec sleep 100", NULL, 500, &res, &err));
        o = (struct outcome){ .out = BUF_INIT, .err = BUF_INIT };
        collect(res, &o.out, &o.err);
        json_decref(res);
        pid_t sleeper = (pid_t)strtol(o.out.data ? o.out.data : "0", NULL, 10);
        outcome_release(&o);
        CHECK(sleeper > 0);
        CHECK_OK(runner_restart(&in.rc, &err));
        CHECK(sleeper <= 0 || kill(sleeper, 0) < 0); /* gone, and reaped */
        CHECK(kill(in.pid, 0) == 0);                  /* the runner stays */
        for (int i = 0; i < 100; i++) {
                snprintf(path, sizeof(path), "%s/boots", in.home);
                if (fs_read_file(path, 4096, &text, &len, &err) == 0 && streq(text, "boot\nboot\n"))
                        break;
                err = tess_error_free(err);
                free(text);
                text = NULL;
                sleep_ms(50);
        }
        CHECK_STREQ(text, "boot\nboot\n"); /* the bootstrap script ran again */
        free(text);
        text = NULL;
        CHECK_OK(runner_execute(&in.rc, "batch", "r2", "echo after", NULL, 2000, &res, &err));
        json_decref(res);
        inst_stop(&in);

        CHECK(inst_start(&in, "restart-b", NULL, bargs, benv, true) == 0);
        CHECK_OK(runner_restart(&in.rc, &err));
        CHECK(kill(in.pid, 0) == 0); /* the killed command did not end the session */
        snprintf(path, sizeof(path), "%s/runs", in.home);
        for (int i = 0; i < 100; i++) {
                if (fs_read_file(path, 4096, &text, &len, &err) == 0 && streq(text, "ran\nran\n"))
                        break;
                err = tess_error_free(err);
                free(text);
                text = NULL;
                sleep_ms(50);
        }
        CHECK_STREQ(text, "ran\nran\n");
        free(text);
        inst_stop(&in);
        tess_error_free(err);
}

static void test_runner_sigterm(void)
{
        static const char *const args[] = { "--auth", "uid", "--keep-uid", "--die-with-parent", "--grace-ms", "2000", NULL };
        struct tess_error *err = NULL;
        struct inst in;
        struct outcome o;
        pid_t sleeper;
        int fd = -1, status;

        if (!runner_path())
                SKIP("no tessera-runner in $BUILD");
        if (inst_start(&in, "term", NULL, args, NULL, true) < 0) {
                test_fail(__FILE__, __LINE__, "the runner did not start");
                return;
        }
        json_t *res = NULL;
        CHECK_OK(runner_execute(&in.rc, "batch", "s", "echo $$; exec sleep 100", NULL, 500, &res, &err));
        o = (struct outcome){ .out = BUF_INIT, .err = BUF_INIT };
        collect(res, &o.out, &o.err);
        json_decref(res);
        sleeper = (pid_t)strtol(o.out.data, NULL, 10);
        outcome_release(&o);
        CHECK(sleeper > 0);
        CHECK_OK(runner_open_pty(&in.rc, NULL, &fd, NULL, &err));
        kill(in.pid, SIGTERM);
        status = wait_exit(in.pid, 5000);
        CHECK(status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0);
        if (status < 0)
                inst_stop(&in);
        CHECK(sleeper <= 0 || kill(sleeper, 0) < 0);
        if (fd >= 0)
                close(fd);
}

static void test_runner_switches_user(void)
{
        /* TESSERA_UID=0 in the environment (the session's) changes nothing */
        static const char *const env[] = { "TESSERA_UID=0", "TESSERA_GID=0", NULL };
        static const char *const args[] = { "--auth", "uid", "--die-with-parent", "--uid", "65534", "--gid", "65534",
                                             NULL };
        struct tess_error *err = NULL;
        struct inst in;
        struct outcome o;
        struct stat st;
        char want[512], path[512];

        if (!runner_path())
                SKIP("no tessera-runner in $BUILD");
        if (geteuid() != 0)
                SKIP("needs root");
        chmod(tmpdir, 0755); /* mkdtemp's 0700 would keep the user out */
        if (inst_start(&in, "user", NULL, args, env, true) < 0) {
                test_fail(__FILE__, __LINE__, "the runner did not start");
                return;
        }
        CHECK(run_until(&in.rc, "batch", "id -u; id -g; echo $HOME; pwd", "id", NULL, 5000, &o) == 0);
        snprintf(want, sizeof(want), "65534\n65534\n%s\n%s\n", in.home, in.home);
        CHECK_STREQ(o.out.data, want);
        outcome_release(&o);
        /* file requests use the user's permissions: home is root's here */
        CHECK(runner_upload_buf(&in.rc, "f", "x", 1, -1, &err) == -EACCES);
        err = tess_error_free(err);
        CHECK(chown(in.home, 65534, 65534) == 0);
        CHECK_OK(runner_upload_buf(&in.rc, "d/f", "x", 1, -1, &err));
        err = tess_error_free(err);
        snprintf(path, sizeof(path), "%s/d/f", in.home);
        CHECK(stat(path, &st) == 0 && st.st_uid == 65534 && st.st_gid == 65534);
        inst_stop(&in);
}

/* The runner as PID 1 of a new pid namespace: peers outside it are the
 * agent, processes inside are refused; orphans are reaped; SIGTERM ends
 * everything.  The default --auth outside applies. */
static void test_runner_pid1_namespace(void)
{
        static const char *const prefix[] = { "unshare", "--pid", "--fork", "--mount-proc", NULL };
        static const char *const args[] = { "--keep-uid", "--grace-ms", "1000", NULL };
        struct tess_error *err = NULL;
        struct inst in;
        struct outcome o;
        json_t *ans = NULL;
        char path[128], code[1024];
        pid_t runner = 0;
        int status;
        FILE *f;

        if (!runner_path())
                SKIP("no tessera-runner in $BUILD");
        if (geteuid() != 0 || !in_path("unshare"))
                SKIP("needs root and unshare");
        if (inst_start(&in, "pid1", prefix, args, NULL, true) < 0) {
                inst_stop(&in);
                SKIP("unshare --pid --fork --mount-proc failed here");
        }
        CHECK_OK(runner_ping(&in.rc, &ans, &err));
        CHECK_INTEQ(json_integer_value(json_object_get(ans, "pid")), 1);
        json_decref(ans);
        /* the runner's pid as we see it: unshare's child */
        snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)in.pid, (int)in.pid);
        if ((f = fopen(path, "re"))) {
                int p = 0;
                if (fscanf(f, "%d", &p) == 1)
                        runner = p;
                fclose(f);
        }
        CHECK(runner > 0);
        in.rc.runner_pid = runner;
        CHECK_OK(runner_ping(&in.rc, NULL, &err));

        /* a process inside the container is refused (closed, no answer) */
        if (in_path("python3")) {
                snprintf(code, sizeof(code),
                         "python3 -c \"import socket; s = socket.socket(socket.AF_UNIX); s.connect('%s'); "
                         "print(repr(s.recv(100)))\"",
                         in.sock);
                CHECK(run_until(&in.rc, "batch", code, "inside", NULL, 10000, &o) == 0);
                CHECK_STREQ(o.out.data, "b''\n");
                outcome_release(&o);
        }
        /* orphans are reaped by PID 1 */
        CHECK(run_until(&in.rc, "batch", "sh -c 'sleep 0.2 </dev/null >/dev/null 2>&1 & echo $!'", "orph", NULL, 5000,
                        &o) == 0);
        snprintf(code, sizeof(code), "sleep 1; test -e /proc/%ld && echo alive || echo gone", strtol(o.out.data, NULL, 10));
        outcome_release(&o);
        CHECK(run_until(&in.rc, "batch", code, "orph2", NULL, 5000, &o) == 0);
        CHECK_STREQ(o.out.data, "gone\n");
        outcome_release(&o);

        /* SIGTERM: children (and a terminal) end, then the runner */
        int fd = -1;
        CHECK_OK(runner_open_pty(&in.rc, NULL, &fd, NULL, &err));
        json_t *res = NULL;
        CHECK_OK(runner_execute(&in.rc, "batch", "long", "sleep 100", NULL, 0, &res, &err));
        json_decref(res);
        if (runner > 0)
                kill(runner, SIGTERM);
        status = wait_exit(in.pid, 5000);
        CHECK(status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0);
        if (fd >= 0)
                close(fd);
        if (status < 0)
                inst_stop(&in);
}

static const struct test tests[] = {
        TEST(test_runner_ping),
        TEST(test_runner_batch_exec),
        TEST(test_runner_batch_stages),
        TEST(test_runner_batch_large_output),
        TEST(test_runner_batch_utf8_split),
        TEST(test_runner_batch_input),
        TEST(test_runner_query_state),
        TEST(test_runner_query_exception),
        TEST(test_runner_query_continue),
        TEST(test_runner_query_busy),
        TEST(test_runner_query_input),
        TEST(test_runner_query_interrupt),
        TEST(test_runner_query_interpreter_dies),
        TEST(test_runner_complete),
        TEST(test_runner_pty),
        TEST(test_runner_files),
        TEST(test_runner_path_escapes),
        TEST(test_runner_service),
        TEST(test_runner_protocol_errors),
        TEST(test_runner_connections),
        TEST(test_runner_reaps_orphans),
        TEST(test_runner_batch_session),
        TEST(test_runner_bootstrap_script),
        TEST(test_runner_restart),
        TEST(test_runner_sigterm),
        TEST(test_runner_switches_user),
        TEST(test_runner_pid1_namespace),
        {},
};

int main(void)
{
        signal(SIGPIPE, SIG_IGN);
        return test_main(tests);
}
