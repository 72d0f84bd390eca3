/* pty.c - terminals.  The runner opens a pty pair, starts a shell on the
 * slave (new session, the slave its controlling terminal, TERM set, the
 * session user) and hands the master to the agent with SCM_RIGHTS: the
 * terminal's bytes never pass through the runner.  The agent resizes with
 * TIOCSWINSZ on its fd and keeps the fd as long as the terminal lives;
 * closing it hangs the shell up.  Any number of terminals may be open. */
#include "common/compat.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <termios.h>

#include "runner/runner.h"

static int open_slave(int master, char *name, size_t namesz)
{
        unsigned n;
        int fd;

        if (ioctl(master, TIOCGPTN, &n) < 0)
                return -errno;
        snprintf(name, namesz, "/dev/pts/%u", n);
        /* by the master (Linux 4.13), so a /dev/pts of another devpts
         * instance cannot get in the way */
        fd = ioctl(master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
        if (fd < 0 && (errno == EINVAL || errno == ENOTTY))
                fd = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
        return fd < 0 ? -errno : fd;
}

void op_pty(struct conn *c, const struct rmsg_req *q)
{
        struct winsize ws = { .ws_row = (unsigned short)q->rows, .ws_col = (unsigned short)q->cols };
        const char *shell[] = { access("/bin/bash", X_OK) == 0 ? "/bin/bash" : "/bin/sh", NULL };
        const char *env[RMSG_ARGV_MAX + 2];
        struct spawn s = { .argv = q->argc ? q->argv : shell, .env_extra = env, .nfds = 3, .ctty = 1, .as_user = true };
        char name[64];
        int master, slave, zero = 0, n = 0;
        pid_t pid;

        env[n++] = "TERM=xterm-256color";
        for (int i = 0; i < q->envc; i++)
                env[n++] = q->env[i];
        env[n] = NULL;

        master = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
        if (master < 0) {
                conn_reply_err(c, errno, "opening /dev/ptmx: %s", strerror(errno));
                return;
        }
        if (ioctl(master, TIOCSPTLCK, &zero) < 0 || (slave = open_slave(master, name, sizeof(name))) < 0) {
                int e = errno;
                close(master);
                conn_reply_err(c, e, "opening the pty's slave: %s", strerror(e));
                return;
        }
        ioctl(master, TIOCSWINSZ, &ws);
        if (rconf.switch_user) {
                /* as login does: the terminal belongs to its user */
                if (fchown(slave, rconf.uid, (gid_t)-1) < 0 || fchmod(slave, 0620) < 0)
                        rlog("cannot give %s to uid %d: %s", name, (int)rconf.uid, strerror(errno));
        }
        s.fds[0] = s.fds[1] = s.fds[2] = slave;
        pid = proc_spawn(&s);
        close(slave);
        if (pid < 0) {
                close(master);
                conn_reply_err(c, (int)-pid, "starting the shell: %s", strerror((int)-pid));
                return;
        }
        proc_track(pid, NULL, NULL, true);
        rbuf_printf(conn_reply_begin(c), ",\"pid\":%d,\"tty\":\"%s\"", (int)pid, name);
        conn_pass_fd(c, master);
        conn_reply_end(c);
}
