/* dev_agent.c - the agent that `tessera dev` runs beside its manager.
 *
 * `tessera dev` is the whole platform on one machine: after the manager
 * has its cluster secret, it writes state_dir/agent.conf (this manager's
 * URL, the secret's file, state_dir/agent for the agent's own state, the
 * mock GPUs asked for with --mock-gpus, --mock-gpu-memory and
 * --fgpu-per-gpu, the network of --agent-network, the manager's storage
 * hosts as its vfolder_hosts) and runs `tessera agent
 * --config` on it as a child process.  The manager knows the agent only by that command line, as it
 * would know one on another node.  At exit the agent is stopped (SIGTERM,
 * also when the manager is killed: PR_SET_PDEATHSIG); its containers keep
 * running, and the next `tessera dev` finds them. */
#include "common/compat.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/fs.h"
#include "common/log.h"
#include "manager/core/manager.h"
#include "manager/main.h"

/* The manager's storage hosts, resolved: the agent binds folders from the same directories. */
static char *hosts_text(const struct manager *m)
{
        struct buf b = BUF_INIT;

        for (size_t i = 0; i < m->vfolder_hosts.n; i++)
                buf_printf(&b, "%s%s=%s", i ? "," : "", m->vfolder_hosts.v[i].name, m->vfolder_hosts.v[i].path);
        return buf_detach(&b, NULL);
}

static char *agent_conf_text(const struct manager *m)
{
        _cleanup_free_ char *hosts = hosts_text(m);

        return xasprintf("# written by tessera dev at every start\n"
                         "manager = \"http://%s\"\n"
                         "id = \"%s\"\n"
                         "state_dir = \"%s/agent\"\n"
                         "cluster_secret_file = \"%s\"\n"
                         "log_level = \"%s\"\n"
                         "mock_gpus = %d\n"
                         "mock_gpu_memory = \"%s\"\n"
                         "fgpu_per_gpu = \"%s\"\n"
                         "network = \"%s\"\n"
                         "runc = \"%s\"\n"
                         "listen = \"127.0.0.1:0\"\n"
                         "vfolder_hosts = \"%s\"\n",
                         m->conf.listen, m->dev_agent.id, m->conf.state_dir, m->conf.cluster_secret_file,
                         m->conf.log_level, m->dev_agent.mock_gpus, m->dev_agent.mock_gpu_memory,
                         m->dev_agent.fgpu_per_gpu, m->dev_agent.network, m->dev_agent.runtime, hosts ? hosts : "");
}

int dev_agent_start(struct manager *m, struct tess_error **err)
{
        _cleanup_free_ char *path = xasprintf("%s/agent.conf", m->conf.state_dir);
        _cleanup_free_ char *text = agent_conf_text(m);
        int r = fs_write_file_atomic(path, text, strlen(text), 0600, err);

        if (r < 0)
                return r;
        pid_t pid = fork();
        if (pid < 0)
                return tess_err(err, errno, "starting the agent: %s", strerror(errno));
        if (pid == 0) {
                /* the manager blocks the signals its loop reads: the
                 * agent would never see SIGTERM; and it stops with its
                 * manager, even one killed with -9 (its containers keep
                 * running; the next agent adopts them) */
                sigset_t none;
                sigemptyset(&none);
                sigprocmask(SIG_SETMASK, &none, NULL);
                if (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0 || getppid() == 1)
                        _exit(1);
                execl("/proc/self/exe", "tessera", "agent", "--config", path, (char *)NULL);
                fprintf(stderr, "tessera dev: cannot run the agent: %s\n", strerror(errno));
                _exit(127);
        }
        m->dev_agent.pid = pid;
        log_info("agent '%s' started (pid %d, %s)", m->dev_agent.id, (int)pid, path);
        return 0;
}

void dev_agent_stop(struct manager *m)
{
        int status;

        if (m->dev_agent.pid <= 0)
                return;
        kill(m->dev_agent.pid, SIGTERM);
        for (int i = 0; i < 100; i++) { /* it answers within a second or two */
                if (waitpid(m->dev_agent.pid, &status, WNOHANG) == m->dev_agent.pid) {
                        m->dev_agent.pid = 0;
                        return;
                }
                usleep(50 * 1000);
        }
        log_warn("agent (pid %d) did not stop in 5 s; killing it", (int)m->dev_agent.pid);
        kill(m->dev_agent.pid, SIGKILL);
        waitpid(m->dev_agent.pid, &status, 0);
        m->dev_agent.pid = 0;
}
