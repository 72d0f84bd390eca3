/* proc.c - the runner's children: spawning (new session, reset signals,
 * only the fds asked for, the session user's identity and environment),
 * the table of children whose exit someone waits for, reaping every child
 * (the runner is PID 1 or a child subreaper), and signalling them all at
 * shutdown. */
#include "common/compat.h"

#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <sys/fsuid.h>
#include <sys/ioctl.h>
#include <sys/wait.h>

#include "runner/runner.h"

extern char **environ;

struct tracked {
        pid_t pid;
        child_fn fn;
        void *ptr;
        bool hup;
};

static struct tracked children[CHILD_MAX];
static int nchildren;

static bool same_key(const char *a, const char *b)
{
        size_t n = strcspn(a, "=");
        return strncmp(a, b, n) == 0 && b[n] == '=';
}

struct env {
        char **v;
        char *own[3]; /* the strings we made */
};

/* The inherited environment with HOME, USER, LOGNAME and `extra` set. */
static void build_env(struct env *env, const char *const *extra, bool as_user)
{
        size_t n = 0, cap = 8;
        int nown = 0;
        const char *path = NULL;

        for (char **e = environ; *e; e++)
                cap++;
        for (const char *const *e = extra; e && *e; e++)
                cap++;
        *env = (struct env){ .v = xcalloc(cap, sizeof(char *)) };
        env->own[nown++] = xasprintf("HOME=%s", rconf.home);
        if (as_user && rconf.switch_user && rconf.user_name) {
                env->own[nown++] = xasprintf("USER=%s", rconf.user_name);
                env->own[nown++] = xasprintf("LOGNAME=%s", rconf.user_name);
        }
        for (char **e = environ; *e; e++) {
                bool skip = false;
                for (int i = 0; i < nown && !skip; i++)
                        skip = same_key(env->own[i], *e);
                for (const char *const *x = extra; x && *x && !skip; x++)
                        skip = same_key(*x, *e);
                if (strncmp(*e, "PATH=", 5) == 0)
                        path = *e;
                if (!skip)
                        env->v[n++] = *e;
        }
        for (int i = 0; i < nown; i++)
                env->v[n++] = env->own[i];
        for (const char *const *x = extra; x && *x; x++)
                env->v[n++] = (char *)*x;
        if (!path)
                env->v[n++] = (char *)"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
        env->v[n] = NULL;
}

static void free_env(struct env *env)
{
        for (size_t i = 0; i < ARRAY_SIZE(env->own); i++)
                free(env->own[i]);
        free(env->v);
}

static void child_fail(const char *what, const char *arg)
{
        char line[512];
        int n = snprintf(line, sizeof(line), "tessera-runner: %s '%s': %s\n", what, arg, strerror(errno));
        ssize_t UNUSED w = write(STDERR_FILENO, line, n > 0 && (size_t)n < sizeof(line) ? (size_t)n : 0);
        _exit(errno == ENOENT ? 127 : 126);
}

static void close_from(int lowest)
{
        if (close_range((unsigned)lowest, ~0U, 0) == 0)
                return;
        for (int fd = lowest; fd < 65536; fd++)
                close(fd);
}

/* In the child: never returns. */
static void __attribute__((noreturn)) child_exec(const struct spawn *s, char **env)
{
        int tmp[5];
        sigset_t none;

        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        for (int sig = 1; sig < NSIG; sig++)
                if (sig != SIGKILL && sig != SIGSTOP)
                        signal(sig, SIG_DFL);
        setsid();
        for (int i = 0; i < s->nfds; i++) {
                tmp[i] = s->fds[i] < 0 ? open("/dev/null", O_RDWR | O_CLOEXEC) : fcntl(s->fds[i], F_DUPFD_CLOEXEC, 16);
                if (tmp[i] < 0)
                        child_fail("setting up fds for", s->argv[0]);
        }
        for (int i = 0; i < s->nfds; i++)
                if (dup2(tmp[i], i) < 0)
                        child_fail("setting up fds for", s->argv[0]);
        close_from(s->nfds);
        if (s->ctty && ioctl(0, TIOCSCTTY, 0) < 0)
                child_fail("setting the controlling terminal of", s->argv[0]);
        if (s->as_user && rconf.switch_user) {
                if (setgroups(1, &rconf.gid) < 0 || setgid(rconf.gid) < 0)
                        child_fail("switching to the group of", rconf.user_name ? rconf.user_name : "user");
                if (setuid(rconf.uid) < 0)
                        child_fail("switching to the user", rconf.user_name ? rconf.user_name : "user");
        }
        if (chdir(rconf.home) < 0 && chdir("/") < 0)
                child_fail("changing directory to", "/");
        execvpe(s->argv[0], (char *const *)s->argv, env);
        child_fail("cannot run", s->argv[0]);
        _exit(127);
}

pid_t proc_spawn(const struct spawn *s)
{
        struct env env;
        pid_t pid;

        build_env(&env, s->env_extra, s->as_user);
        pid = fork();
        if (pid == 0)
                child_exec(s, env.v);
        if (pid < 0)
                pid = -errno;
        free_env(&env);
        return pid;
}

void proc_track(pid_t pid, child_fn fn, void *ptr, bool hup)
{
        if (nchildren == CHILD_MAX) {
                rlog("too many children to track, pid %d will be reaped silently", (int)pid);
                return;
        }
        children[nchildren++] = (struct tracked){ pid, fn, ptr, hup };
}

void proc_untrack(pid_t pid)
{
        for (int i = 0; i < nchildren; i++)
                if (children[i].pid == pid) {
                        children[i] = children[--nchildren];
                        return;
                }
}

int proc_count(void)
{
        return nchildren;
}

void proc_reap(void)
{
        pid_t pid;
        int status;

        while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
                for (int i = 0; i < nchildren; i++) {
                        if (children[i].pid != pid)
                                continue;
                        struct tracked t = children[i];
                        children[i] = children[--nchildren];
                        if (t.fn)
                                t.fn(t.ptr, pid, status);
                        break;
                }
        }
}

static bool tracked_session(pid_t sid)
{
        for (int i = 0; i < nchildren; i++)
                if (children[i].pid == sid)
                        return true;
        return false;
}

/* Not PID 1: the processes whose parent is us or whose session one of ours. */
static void signal_descendants(int sig)
{
        DIR *d = opendir("/proc");
        struct dirent *de;
        pid_t self = getpid();

        if (!d)
                return;
        while ((de = readdir(d))) {
                char path[300], stat[512], *p;
                int pid, ppid, pgrp, sid, fd;
                ssize_t n;
                char state;

                if (de->d_name[0] < '1' || de->d_name[0] > '9')
                        continue;
                snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
                fd = open(path, O_RDONLY | O_CLOEXEC);
                if (fd < 0)
                        continue;
                n = read(fd, stat, sizeof(stat) - 1);
                close(fd);
                if (n <= 0)
                        continue;
                stat[n] = '\0';
                p = strrchr(stat, ')');
                if (!p || sscanf(p + 1, " %c %d %d %d", &state, &ppid, &pgrp, &sid) != 4)
                        continue;
                pid = (int)strtol(de->d_name, NULL, 10);
                if (pid != self && (ppid == self || tracked_session(sid)))
                        kill(pid, sig);
        }
        closedir(d);
}

void proc_signal_all(int sig)
{
        for (int i = 0; i < nchildren; i++) {
                if (children[i].hup && sig == SIGTERM)
                        kill(-children[i].pid, SIGHUP);
                kill(-children[i].pid, sig);
        }
        if (getpid() == 1)
                kill(-1, sig);
        else
                signal_descendants(sig);
}

bool proc_none_left(void)
{
        siginfo_t si;

        return waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) < 0 && errno == ECHILD;
}

void proc_fs_user(void)
{
        if (!rconf.switch_user)
                return;
        setfsgid(rconf.gid);
        setfsuid(rconf.uid);
}

void proc_fs_root(void)
{
        if (!rconf.switch_user)
                return;
        setfsuid(geteuid());
        setfsgid(getegid());
}
