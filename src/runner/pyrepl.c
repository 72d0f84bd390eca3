/* pyrepl.c - the persistent Python interpreter behind query runs.
 *
 * Started on the first query as the session user: `python3 -u -c ...`
 * (TESSERA_PYTHON overrides the interpreter) running DRIVER below, which
 * it takes from (and removes from) its environment, with
 *
 *   fd 0  /dev/null          fd 3  frames from the runner (code, input)
 *   fd 1  stdout pipe        fd 4  frames to the runner (done, input)
 *   fd 2  stderr pipe
 *
 * A frame is "<kind> <length>\n" followed by <length> bytes.  The driver
 * execs each code block in one globals dict (state persists between runs),
 * shows the value of a trailing expression as the REPL does, prints
 * exceptions with their traceback to stderr, turns input() into an "input"
 * frame (the run waits for an exec `input` request) and ends every block
 * with "done <exit code>".  A "complete" frame (exec mode complete, while
 * no query runs) is answered by a "compl" frame: rlcompleter's candidates
 * for the text's last word in the same globals, one per line, which the
 * runner escapes into its answer (nothing the interpreter sends is taken
 * as JSON).  Output reaches fds 1 and 2 before the frame
 * that follows it, so the runner reads the frames first, then drains the
 * output pipes, then applies the frames: output never lands in the wrong
 * run.  One query runs at a time; if the interpreter dies, the current run
 * ends with its status and the next query starts a fresh one. */
#include "common/compat.h"

#include <signal.h>
#include <sys/wait.h>

#include "runner/runner.h"

#define READ_CHUNK    65536
#define FRAME_MAX     65536 /* an input() prompt */
#define DRAIN_CHUNKS  16
#define COMPLETE_WAIT_MS 3000

static const char driver[] =
        "import ast, builtins, os, signal, sys, traceback, types\n"
        "def _tessera_repl():\n"
        "    rd, wr = 3, 4\n"
        "    os.set_inheritable(rd, False)\n"
        "    os.set_inheritable(wr, False)\n"
        "    def readn(n):\n"
        "        b = bytearray()\n"
        "        while len(b) < n:\n"
        "            c = os.read(rd, n - len(b))\n"
        "            if not c:\n"
        "                os._exit(0)\n"
        "            b += c\n"
        "        return bytes(b)\n"
        "    def frame():\n"
        "        old = signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
        "        try:\n"
        "            h = bytearray()\n"
        "            while not h.endswith(b'\\n'):\n"
        "                c = os.read(rd, 1)\n"
        "                if not c or len(h) > 40:\n"
        "                    os._exit(0)\n"
        "                h += c\n"
        "            kind, n = h.split()\n"
        "            return kind, readn(int(n))\n"
        "        finally:\n"
        "            signal.signal(signal.SIGINT, old)\n"
        "    def send(kind, data=b''):\n"
        "        for f in (sys.stdout, sys.stderr):\n"
        "            try:\n"
        "                f.flush()\n"
        "            except Exception:\n"
        "                pass\n"
        "        msg = kind + b' %d\\n' % len(data) + data\n"
        "        while msg:\n"
        "            msg = msg[os.write(wr, msg):]\n"
        "    def tinput(prompt=''):\n"
        "        send(b'input', str(prompt).encode('utf-8', 'replace'))\n"
        "        kind, data = frame()\n"
        "        return data.decode('utf-8', 'replace')\n"
        "    builtins.input = tinput\n"
        "    main = types.ModuleType('__main__')\n"
        "    sys.modules['__main__'] = main\n"
        "    g = main.__dict__\n"
        "    g['__builtins__'] = builtins\n"
        "    def complete(text):\n"
        "        import re, rlcompleter\n"
        "        word = re.search(r'[\\w.]*$', text).group(0)\n"
        "        found = []\n"
        "        if word:\n"
        "            c = rlcompleter.Completer(g)\n"
        "            while len(found) < 200:\n"
        "                w = c.complete(word, len(found))\n"
        "                if w is None:\n"
        "                    break\n"
        "                found.append(w)\n"
        "        return '\\n'.join(w for w in found if '\\n' not in w)\n"
        "    while True:\n"
        "        kind, src = frame()\n"
        "        if kind == b'complete':\n"
        "            try:\n"
        "                words = complete(src.decode('utf-8', 'replace'))\n"
        "            except BaseException:\n"
        "                words = ''\n"
        "            send(b'compl', words.encode('utf-8', 'replace'))\n"
        "            continue\n"
        "        if kind != b'code':\n"
        "            continue\n"
        "        rc = 0\n"
        "        try:\n"
        "            tree = ast.parse(src, '<input>', 'exec')\n"
        "            last = None\n"
        "            if tree.body and isinstance(tree.body[-1], ast.Expr):\n"
        "                last = ast.Interactive([tree.body.pop()])\n"
        "            exec(compile(tree, '<input>', 'exec'), g)\n"
        "            if last is not None:\n"
        "                exec(compile(last, '<input>', 'single'), g)\n"
        "        except SystemExit as e:\n"
        "            rc = e.code if isinstance(e.code, int) else 0 if e.code is None else 1\n"
        "            if not isinstance(e.code, (int, type(None))):\n"
        "                print(e.code, file=sys.stderr)\n"
        "        except BaseException as e:\n"
        "            tb = e.__traceback__\n"
        "            if isinstance(e, SyntaxError):\n"
        "                tb = None\n"
        "            elif tb is not None and tb.tb_frame.f_code is _tessera_repl.__code__:\n"
        "                tb = tb.tb_next\n"
        "            traceback.print_exception(type(e), e, tb)\n"
        "            rc = 1\n"
        "        del src\n"
        "        send(b'done', b'%d' % rc)\n"
        "_tessera_repl()\n";

static struct {
        pid_t pid;
        int cmd_fd, evt_fd, out_fd, err_fd;
        struct rbuf cmd; /* frames not yet written to fd 3 */
        struct rbuf evt; /* bytes read from fd 4 */
        struct run *cur;
        bool waiting;    /* cur is in input() */
        struct conn *completer; /* the exec request waiting for a "compl" frame */
} py = { .cmd_fd = -1, .evt_fd = -1, .out_fd = -1, .err_fd = -1 };

bool pyrepl_alive(void)
{
        return py.pid > 0;
}

static void close_watched(int *fd)
{
        if (*fd >= 0)
                watch_del(*fd);
        close_fd(fd);
}

static void pause_all(bool paused)
{
        watch_pause(py.out_fd, paused);
        watch_pause(py.err_fd, paused);
        watch_pause(py.evt_fd, paused);
}

enum drain { DRAINED, FULL, BUSY };

/* Read the output pipes until they are empty (DRAINED), the run's buffer
 * is full (FULL: reading pauses), or DRAIN_CHUNKS were read (BUSY). */
static enum drain drain_output(void)
{
        int *fds[2] = { &py.out_fd, &py.err_fd };
        char buf[READ_CHUNK];
        int chunks = 0;

        for (int k = 0; k < 2; k++) {
                while (*fds[k] >= 0) {
                        ssize_t n;
                        if (py.cur && run_full(py.cur)) {
                                pause_all(true);
                                return FULL;
                        }
                        if (++chunks > DRAIN_CHUNKS)
                                return BUSY;
                        n = read(*fds[k], buf, sizeof(buf));
                        if (n > 0) {
                                if (py.cur)
                                        run_output(py.cur, k == 0 ? OUT_STDOUT : OUT_STDERR, buf, (size_t)n);
                                continue;
                        }
                        if (n < 0 && errno == EINTR)
                                continue;
                        if (n < 0 && errno == EAGAIN)
                                break;
                        close_watched(fds[k]);
                }
        }
        return DRAINED;
}

static void kill_interpreter(const char *why)
{
        rlog("python driver: %s; restarting it at the next query", why);
        if (py.pid > 0)
                kill(-py.pid, SIGKILL);
        close_watched(&py.evt_fd);
        py.evt.len = 0;
}

static void send_frame(const char *kind, const char *p, size_t n);

/* {"status": "finished", "completions": [...]} of words, one per line
 * (none when NULL), to the waiting completer. */
static void answer_completions(const char *words, size_t len)
{
        struct conn *c = py.completer;
        struct rbuf *b = conn_reply_begin(c);
        bool first = true;

        py.completer = NULL;
        rbuf_puts(b, ",\"result\":{\"status\":\"finished\",\"completions\":[");
        for (size_t i = 0; words && i < len;) {
                const char *nl = memchr(words + i, '\n', len - i);
                size_t n = nl ? (size_t)(nl - (words + i)) : len - i;
                if (n) {
                        rbuf_puts(b, first ? "" : ",");
                        rbuf_json_str(b, words + i, n);
                        first = false;
                }
                i += n + 1;
        }
        rbuf_puts(b, "]}");
        conn_reply_end(c);
}

/* Apply the first complete frame of py.evt; false if there is none. */
static bool apply_frame(void)
{
        char *nl = py.evt.len ? memchr(py.evt.data, '\n', py.evt.len < 40 ? py.evt.len : 40) : NULL;
        char kind[8];
        long n;
        size_t hdr;
        struct run *r = py.cur;

        if (!nl) {
                if (py.evt.len >= 40)
                        kill_interpreter("bad frame header");
                return false;
        }
        *nl = '\0';
        if (sscanf(py.evt.data, "%7s %ld", kind, &n) != 2 || n < 0 || n > FRAME_MAX) {
                kill_interpreter("bad frame header");
                return false;
        }
        *nl = '\n';
        hdr = (size_t)(nl - py.evt.data) + 1;
        if (py.evt.len < hdr + (size_t)n)
                return false;
        if (streq(kind, "done")) {
                char code[16] = "";
                snprintf(code, sizeof(code), "%.*s", (int)(n < 15 ? n : 15), py.evt.data + hdr);
                py.cur = NULL;
                py.waiting = false;
                rbuf_consume(&py.evt, hdr + (size_t)n);
                if (r)
                        run_finish(r, (int)strtol(code, NULL, 10));
        } else if (streq(kind, "compl")) {
                if (py.completer)
                        answer_completions(py.evt.data + hdr, (size_t)n);
                rbuf_consume(&py.evt, hdr + (size_t)n);
        } else if (streq(kind, "input")) {
                if (r) {
                        run_output(r, OUT_STDOUT, py.evt.data + hdr, (size_t)n);
                        py.waiting = true;
                } else {
                        /* nobody can answer: input() returns "" */
                        send_frame("input", "", 0);
                }
                rbuf_consume(&py.evt, hdr + (size_t)n);
                if (r && py.cur == r)
                        run_waiting_input(r);
        } else {
                kill_interpreter("unknown frame");
                return false;
        }
        return true;
}

static void py_pump(void)
{
        char buf[READ_CHUNK];

        for (;;) {
                while (py.evt_fd >= 0 && py.evt.len <= FRAME_MAX + 64) {
                        ssize_t n = read(py.evt_fd, buf, sizeof(buf));
                        if (n > 0) {
                                rbuf_append(&py.evt, buf, (size_t)n);
                                continue;
                        }
                        if (n < 0 && errno == EINTR)
                                continue;
                        if (n < 0 && errno == EAGAIN)
                                break;
                        /* EOF: the interpreter is dying; SIGCHLD ends the run */
                        close_watched(&py.evt_fd);
                }
                if (drain_output() != DRAINED)
                        return;
                if (!apply_frame())
                        return;
        }
}

static void py_readable(void *ptr UNUSED, int fd UNUSED, short revents UNUSED)
{
        py_pump();
}

static void py_writable(void *ptr UNUSED, int fd UNUSED, short revents UNUSED)
{
        ssize_t w = write(py.cmd_fd, py.cmd.data, py.cmd.len);

        if (w < 0 && (errno == EAGAIN || errno == EINTR))
                return;
        if (w < 0) {
                /* EPIPE: the interpreter is gone; SIGCHLD ends the run */
                close_watched(&py.cmd_fd);
                py.cmd.len = 0;
                return;
        }
        rbuf_consume(&py.cmd, (size_t)w);
        if (py.cmd.len == 0)
                watch_set(py.cmd_fd, 0);
}

static void py_exited(void *ptr UNUSED, pid_t pid UNUSED, int status)
{
        struct run *r = py.cur;
        char msg[128];
        int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);

        /* what it wrote before dying still belongs to the run */
        for (int i = 0; i < 4 && py.cur && drain_output() == BUSY; i++)
                ;
        close_watched(&py.cmd_fd);
        close_watched(&py.evt_fd);
        close_watched(&py.out_fd);
        close_watched(&py.err_fd);
        rbuf_release(&py.cmd);
        rbuf_release(&py.evt);
        py.pid = 0;
        py.cur = NULL;
        py.waiting = false;
        if (py.completer)
                answer_completions(NULL, 0);
        if (r) {
                int n = snprintf(msg, sizeof(msg), "tessera-runner: the python interpreter exited (%s %d)\n",
                                 WIFEXITED(status) ? "status" : "signal",
                                 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
                run_output(r, OUT_STDERR, msg, (size_t)n);
                run_finish(r, code ? code : 1);
        }
}

static int py_spawn(void)
{
        int cmd[2] = { -1, -1 }, evt[2] = { -1, -1 }, out[2] = { -1, -1 }, err[2] = { -1, -1 };
        /* the driver comes in the environment, which it clears: short argv */
        const char *argv[] = { rconf.python, "-u", "-c", "import os; exec(os.environ.pop('TESSERA_REPL_DRIVER'))", NULL };
        _cleanup_free_ char *env_driver = xasprintf("TESSERA_REPL_DRIVER=%s", driver);
        const char *env[] = { env_driver, NULL };
        struct spawn s = { .argv = argv, .env_extra = env, .nfds = 5, .as_user = true };
        pid_t pid;
        int r;

        if ((r = make_pipe(cmd, 1)) < 0 || (r = make_pipe(evt, 0)) < 0 || (r = make_pipe(out, 0)) < 0 ||
            (r = make_pipe(err, 0)) < 0)
                goto out_close;
        s.fds[0] = -1;
        s.fds[1] = out[1];
        s.fds[2] = err[1];
        s.fds[3] = cmd[0];
        s.fds[4] = evt[1];
        pid = proc_spawn(&s);
        if (pid < 0) {
                r = (int)pid;
                goto out_close;
        }
        close(cmd[0]);
        close(evt[1]);
        close(out[1]);
        close(err[1]);
        py.pid = pid;
        py.cmd_fd = cmd[1];
        py.evt_fd = evt[0];
        py.out_fd = out[0];
        py.err_fd = err[0];
        watch_add(py.cmd_fd, 0, py_writable, NULL);
        watch_add(py.evt_fd, POLLIN, py_readable, NULL);
        watch_add(py.out_fd, POLLIN, py_readable, NULL);
        watch_add(py.err_fd, POLLIN, py_readable, NULL);
        proc_track(pid, py_exited, NULL, false);
        return 0;

out_close:
        for (int k = 0; k < 2; k++) {
                close_fd(&cmd[k]);
                close_fd(&evt[k]);
                close_fd(&out[k]);
                close_fd(&err[k]);
        }
        return r;
}

static void send_frame(const char *kind, const char *p, size_t n)
{
        rbuf_printf(&py.cmd, "%s %zu\n", kind, n);
        rbuf_append(&py.cmd, p, n);
        watch_set(py.cmd_fd, POLLOUT);
}

int pyrepl_start(struct run *r, const char *code, size_t len)
{
        int err;

        if (py.cur)
                return -EBUSY;
        if (py.pid <= 0 && (err = py_spawn()) < 0)
                return err;
        py.cur = r;
        py.waiting = false;
        send_frame("code", code, len);
        return 0;
}

int pyrepl_input(struct run *r, const char *text, size_t len)
{
        if (r != py.cur || !py.waiting || py.cmd_fd < 0)
                return -EINVAL;
        if (len > FRAME_MAX)
                return -E2BIG;
        py.waiting = false;
        send_frame("input", text, len);
        return 0;
}

int pyrepl_interrupt(struct run *r)
{
        if (py.pid > 0 && py.cur && (!r || r == py.cur))
                kill(-py.pid, SIGINT);
        return 0;
}

void pyrepl_resume(struct run *r)
{
        if (r != py.cur || py.pid <= 0)
                return;
        pause_all(false);
        py_pump();
}

void pyrepl_forget(struct run *r)
{
        if (py.cur == r) {
                py.cur = NULL;
                py.waiting = false;
        }
}

static void complete_timeout(struct conn *c UNUSED)
{
        answer_completions(NULL, 0); /* the interpreter is slow: none */
}

static void complete_closed(struct conn *c)
{
        if (py.completer == c)
                py.completer = NULL;
}

int pyrepl_complete(struct conn *c, const char *text, size_t len)
{
        int err;

        if (py.cur || py.completer)
                return -EBUSY;
        if (len > FRAME_MAX)
                return -E2BIG;
        if (py.pid <= 0 && (err = py_spawn()) < 0)
                return err;
        py.completer = c;
        conn_wait(c, now_ms() + COMPLETE_WAIT_MS, complete_timeout, complete_closed, NULL);
        send_frame("complete", text, len);
        return 0;
}
