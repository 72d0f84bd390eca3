/* main.c - tessera-runner: process 1 of every session container.
 *
 *   tessera-runner [options]                    interactive session
 *   tessera-runner --batch [options] [-- CMD...]  batch session
 *
 * It reaps every process (PID 1, or a child subreaper when started
 * elsewhere, as in the tests), serves the agent's requests on
 * <socket-dir>/runner.sock (conn.c), and ends:
 *
 *   interactive   on SIGTERM/SIGINT or a shutdown request; exit status 0
 *   batch         when the startup command ends (or as above); exit status
 *                 the command's (128+N when killed by signal N)
 *
 * Ending: stop listening, SIGTERM (and SIGHUP to terminals) to every
 * process, SIGKILL after --grace-ms, exit when none is left.
 *
 * User processes run as --uid/--gid (default 1000, the `work` user of the
 * images) when the runner is root.  Who they run as is an option, never
 * the environment: the environment is the session's, and a user who could
 * set TESSERA_UID=0 was root (issue 19).  Environment: TESSERA_PYTHON
 * (default python3) for query mode, TESSERA_STARTUP_COMMAND for --batch
 * without a command (run by /bin/sh -c); the manager and the agent keep
 * users from setting any TESSERA_ name (common/env_reserved.h).
 *
 * TESSERA_BOOTSTRAP_SCRIPT (the session's bootstrap_script) runs first, as
 * the user by /bin/sh -c in the home directory, its output in the
 * container's log.  Requests are served meanwhile (a terminal can watch
 * it); a batch command starts only after it succeeds, and a failed script
 * ends a batch session with the script's exit status instead.  An
 * interactive session stays up either way, the failure in its log.
 *
 * Restart (the "restart" request, Backend.AI's session restart): every
 * process of the session ends as at shutdown (SIGTERM, SIGKILL after
 * --grace-ms), the runner stays, and the session starts over: the
 * bootstrap script, then (batch) the startup command.  Files, the
 * network and the resources stay as they were.  Answered once no process
 * is left. */
#include "common/compat.h"

#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>

#include "runner/runner.h"

struct runner_conf rconf = {
        .socket_dir = "/opt/tessera/run",
        .home = "/home/work",
        .python = "python3",
        .auth_outside = true,
        .uid = 1000,
        .gid = 1000,
        .grace_ms = 5000,
};

struct ending {
        bool active, killed;
        int64_t kill_at, give_up_at;
};
static struct ending sd;      /* shutdown */
static struct ending rs;      /* restart */
static struct conn *rs_conn;  /* the restart request, answered at its end */
static pid_t user_work = -1;  /* the bootstrap script or batch command, while it runs */
static int exit_code;

static const char usage[] =
        "usage: tessera-runner [--batch] [options] [-- COMMAND [ARG...]]\n"
        "  --batch              batch session: run COMMAND (or sh -c \"$TESSERA_STARTUP_COMMAND\")\n"
        "                       and exit with its status\n"
        "  --socket-dir DIR     where runner.sock is created (default /opt/tessera/run)\n"
        "  --home DIR           the user's home: cwd of user processes, root of file requests\n"
        "                       (default /home/work)\n"
        "  --auth outside|uid   accept peers outside our pid namespace with --agent-uid (default),\n"
        "                       or any peer with our own uid (tests, no pid namespace)\n"
        "  --agent-uid N        the agent's uid as seen here (default 0)\n"
        "  --uid N, --gid N     user processes' uid and gid when the runner is root (default 1000)\n"
        "  --keep-uid           run user processes with the runner's own uid/gid\n"
        "  --grace-ms N         SIGTERM to SIGKILL at shutdown (default 5000)\n"
        "  --die-with-parent    shut down when the parent process dies\n"
        "  --version\n";

static int parse_uint(const char *s, long max, long *ret)
{
        char *end;
        long v;

        errno = 0;
        v = strtol(s, &end, 10);
        if (errno || end == s || *end || v < 0 || v > max)
                return -1;
        *ret = v;
        return 0;
}

static void __attribute__((format(printf, 1, 2), noreturn)) die_usage(const char *fmt, ...)
{
        va_list ap;

        fprintf(stderr, "tessera-runner: ");
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fprintf(stderr, "\n%s", usage);
        exit(2);
}

/* The name of uid in /etc/passwd (the static binary has no NSS). */
static const char *user_name(uid_t uid)
{
        FILE *f = fopen("/etc/passwd", "re");
        char line[1024];
        const char *name = NULL;

        if (!f)
                return NULL;
        while (!name && fgets(line, sizeof(line), f)) {
                char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
                if (c2 && strtol(c2 + 1, NULL, 10) == (long)uid && c2[1] >= '0' && c2[1] <= '9') {
                        *c1 = '\0';
                        name = xstrdup(line);
                }
        }
        fclose(f);
        return name;
}

static void parse_args(int argc, char **argv)
{
        enum { O_BATCH = 256, O_SOCKET_DIR, O_HOME, O_AUTH, O_AGENT_UID, O_UID, O_GID, O_KEEP_UID, O_GRACE, O_DIE,
               O_VERSION };
        static const struct option opts[] = {
                { "batch", no_argument, NULL, O_BATCH },
                { "socket-dir", required_argument, NULL, O_SOCKET_DIR },
                { "home", required_argument, NULL, O_HOME },
                { "auth", required_argument, NULL, O_AUTH },
                { "agent-uid", required_argument, NULL, O_AGENT_UID },
                { "uid", required_argument, NULL, O_UID },
                { "gid", required_argument, NULL, O_GID },
                { "keep-uid", no_argument, NULL, O_KEEP_UID },
                { "grace-ms", required_argument, NULL, O_GRACE },
                { "die-with-parent", no_argument, NULL, O_DIE },
                { "version", no_argument, NULL, O_VERSION },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        bool keep_uid = false, die_with_parent = false;
        const char *s;
        long v;
        int o;

        while ((o = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
                switch (o) {
                case O_BATCH: rconf.batch = true; break;
                case O_SOCKET_DIR: rconf.socket_dir = optarg; break;
                case O_HOME: rconf.home = optarg; break;
                case O_AUTH:
                        if (!streq(optarg, "outside") && !streq(optarg, "uid"))
                                die_usage("--auth must be outside or uid, not '%s'", optarg);
                        rconf.auth_outside = streq(optarg, "outside");
                        break;
                case O_AGENT_UID:
                        if (parse_uint(optarg, INT32_MAX, &v) < 0)
                                die_usage("bad --agent-uid '%s'", optarg);
                        rconf.agent_uid = (uid_t)v;
                        break;
                case O_UID:
                        if (parse_uint(optarg, INT32_MAX, &v) < 0)
                                die_usage("bad --uid '%s'", optarg);
                        rconf.uid = (uid_t)v;
                        break;
                case O_GID:
                        if (parse_uint(optarg, INT32_MAX, &v) < 0)
                                die_usage("bad --gid '%s'", optarg);
                        rconf.gid = (gid_t)v;
                        break;
                case O_KEEP_UID: keep_uid = true; break;
                case O_GRACE:
                        if (parse_uint(optarg, 3600000, &v) < 0)
                                die_usage("bad --grace-ms '%s'", optarg);
                        rconf.grace_ms = (int)v;
                        break;
                case O_DIE: die_with_parent = true; break;
                case O_VERSION: printf("tessera-runner %s\n", RUNNER_VERSION); exit(0);
                case 'h': fputs(usage, stdout); exit(0);
                default: fputs(usage, stderr); exit(2);
                }
        }
        if (optind < argc) {
                if (!rconf.batch)
                        die_usage("a command needs --batch ('%s')", argv[optind]);
                rconf.batch_argv = argv + optind;
        }
        if ((s = getenv("TESSERA_PYTHON")) && *s)
                rconf.python = s;
        rconf.switch_user = !keep_uid && geteuid() == 0;
        /* root's own groups would leak into file requests made as the user */
        if (rconf.switch_user && setgroups(1, &rconf.gid) < 0)
                rlog("cannot drop supplementary groups: %s", strerror(errno));
        rconf.user_name = user_name(rconf.switch_user ? rconf.uid : geteuid());
        if (!rconf.user_name && rconf.switch_user)
                rconf.user_name = "work";
        if (die_with_parent) {
                prctl(PR_SET_PDEATHSIG, SIGTERM);
                if (getppid() == 1)
                        exit(1);
        }
}

/* ---- shutdown ---- */

bool runner_shutting_down(void)
{
        return sd.active;
}

/* Every process asked to end (SIGTERM): SIGKILL once the grace period is
 * over.  True when it is time to stop waiting: none left, or the killed
 * ones still there 2 s later. */
static bool ending_step(struct ending *e)
{
        int64_t now = now_ms();

        if (proc_none_left())
                return true;
        if (!e->killed && now >= e->kill_at) {
                rlog("processes left after %d ms, killing them", rconf.grace_ms);
                proc_signal_all(SIGKILL);
                e->killed = true;
                e->give_up_at = now + 2000;
        }
        return e->killed && now >= e->give_up_at;
}

static void ending_begin(struct ending *e)
{
        *e = (struct ending){ .active = true, .kill_at = now_ms() + rconf.grace_ms };
        proc_signal_all(SIGTERM);
}

/* next (-1: none) or e's deadline, whichever is first */
static int64_t ending_deadline(const struct ending *e, int64_t next)
{
        int64_t t = e->killed ? e->give_up_at : e->kill_at;

        return e->active && (next < 0 || t < next) ? t : next;
}

void runner_shutdown(void)
{
        if (sd.active)
                return;
        conn_stop_listening();
        ending_begin(&sd);
}

static void __attribute__((noreturn)) finish(void)
{
        conn_flush_all();
        conn_stop_listening();
        exit(exit_code);
}

static void shutdown_step(void)
{
        if (ending_step(&sd))
                finish();
}

/* ---- signals and the batch command ---- */

static void on_signal(void *ptr UNUSED, int fd, short revents UNUSED)
{
        struct signalfd_siginfo si;

        while (read(fd, &si, sizeof(si)) == sizeof(si)) {
                if (si.ssi_signo == SIGCHLD)
                        proc_reap();
                else
                        runner_shutdown();
        }
}

static void batch_exited(void *ptr UNUSED, pid_t pid UNUSED, int status)
{
        user_work = -1;
        exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        runner_shutdown();
}

static void start_batch(void);

static void bootstrap_exited(void *ptr UNUSED, pid_t pid UNUSED, int status)
{
        int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);

        user_work = -1;
        if (code == 0) {
                rlog("the bootstrap script finished");
        } else if (rconf.batch) {
                rlog("the bootstrap script failed (exit status %d): the startup command is not run", code);
                exit_code = code;
                runner_shutdown();
                return;
        } else {
                rlog("the bootstrap script failed (exit status %d)", code);
        }
        if (rconf.batch)
                start_batch();
}

/* The bootstrap script, then (batch) the startup command. */
static void start_user_work(void)
{
        const char *script = getenv("TESSERA_BOOTSTRAP_SCRIPT");
        const char *sh[] = { "/bin/sh", "-c", script, NULL };
        struct spawn s = { .argv = sh, .fds = { -1, 1, 2 }, .nfds = 3, .as_user = true };

        if (!script || !*script) {
                if (rconf.batch)
                        start_batch();
                return;
        }
        rlog("running the bootstrap script");
        pid_t pid = proc_spawn(&s);
        if (pid < 0) {
                rlog("cannot start the bootstrap script: %s", strerror((int)-pid));
                if (rconf.batch)
                        exit(127);
                return;
        }
        user_work = pid;
        proc_track(pid, bootstrap_exited, NULL, false);
}

static void start_batch(void)
{
        const char *sh[] = { "/bin/sh", "-c", getenv("TESSERA_STARTUP_COMMAND"), NULL };
        struct spawn s = { .argv = rconf.batch_argv ? (const char *const *)rconf.batch_argv : sh,
                           .fds = { 0, 1, 2 }, .nfds = 3, .as_user = true };
        pid_t pid;

        if (!rconf.batch_argv && !sh[2])
                die_usage("--batch needs a command or TESSERA_STARTUP_COMMAND");
        pid = proc_spawn(&s);
        if (pid < 0) {
                rlog("cannot start the batch command: %s", strerror((int)-pid));
                exit(127);
        }
        user_work = pid;
        proc_track(pid, batch_exited, NULL, false);
}

/* ---- restart ---- */

static void restart_closed(struct conn *c UNUSED)
{
        rs_conn = NULL; /* the agent went away: the restart goes on */
}

static void restart_timeout(struct conn *c)
{
        /* not reached: ending_step gives up after grace + 2 s */
        rs_conn = NULL;
        conn_reply_err(c, ETIMEDOUT, "the restart is taking too long");
}

void op_restart(struct conn *c, const struct rmsg_req *q UNUSED)
{
        if (sd.active)
                return conn_reply_err(c, ESHUTDOWN, "the session is ending");
        if (rs.active)
                return conn_reply_err(c, EBUSY, "a restart is already under way");
        rlog("restarting the session: ending its processes");
        if (user_work > 0) {
                proc_untrack(user_work); /* its end is not the session's */
                user_work = -1;
        }
        rs_conn = c;
        conn_wait(c, now_ms() + rconf.grace_ms + 60000, restart_timeout, restart_closed, NULL);
        ending_begin(&rs);
}

static void restart_step(void)
{
        if (!ending_step(&rs))
                return;
        rs.active = false;
        if (!proc_none_left())
                rlog("restart: some processes would not die; starting over beside them");
        rlog("restart: starting the session again");
        if (rs_conn) {
                struct conn *c = rs_conn;
                rs_conn = NULL;
                conn_reply_begin(c);
                conn_reply_end(c);
        }
        start_user_work();
}

int main(int argc, char **argv)
{
        sigset_t mask;
        int sfd, r;

        parse_args(argc, argv);
        if (getpid() != 1)
                prctl(PR_SET_CHILD_SUBREAPER, 1);
        signal(SIGPIPE, SIG_IGN);
        sigemptyset(&mask);
        sigaddset(&mask, SIGCHLD);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigprocmask(SIG_BLOCK, &mask, NULL);
        sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
        if (sfd < 0) {
                rlog("signalfd: %s", strerror(errno));
                return 1;
        }
        watch_add(sfd, POLLIN, on_signal, NULL);
        r = conn_listen();
        if (r < 0) {
                rlog("cannot listen on %s/%s: %s", rconf.socket_dir, RUNNER_SOCKET, strerror(-r));
                return 1;
        }
        start_user_work();

        for (;;) {
                int64_t next = conn_next_deadline(), now;
                int timeout = -1;

                next = ending_deadline(&rs, ending_deadline(&sd, next));
                now = now_ms();
                if (next >= 0)
                        timeout = next <= now ? 0 : (int)(next - now > 60000 ? 60000 : next - now);
                if (run_kicked())
                        timeout = 0;
                loop_once(timeout);
                conn_run_timers();
                if (run_kicked())
                        run_tick();
                if (sd.active)
                        shutdown_step();
                else if (rs.active)
                        restart_step();
        }
}
