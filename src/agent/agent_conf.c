/* agent_conf.c - the agent's configuration keys (`tessera agent --config
 * FILE`, format of src/common/conf.h). */
#include "common/compat.h"

#include "common/conf.h"
#include "agent/agent.h"

#define AC struct agent_conf

const struct conf_opt agent_conf_opts[] = {
        CONF_OPT("manager", CONF_T_STR, AC, manager, "http://127.0.0.1:8090", 0, 0, false,
                 "the manager's URL"),
        CONF_OPT("id", CONF_T_STR, AC, id, NULL, 0, 0, false, "this agent's name (default: the host name)"),
        CONF_OPT("state_dir", CONF_T_STR, AC, state_dir, "/var/lib/tessera/agent", 0, 0, false,
                 "where the agent keeps its kernels, events and images"),
        CONF_OPT("cluster_secret_file", CONF_T_STR, AC, cluster_secret_file, NULL, 0, 0, false,
                 "the secret shared with the manager (default: state_dir/cluster.secret)"),
        CONF_OPT("resource_group", CONF_T_STR, AC, resource_group, "default", 0, 0, false,
                 "the resource group this agent joins at first contact"),
        CONF_OPT("log_level", CONF_T_STR, AC, log_level, "info", 0, 0, true, "debug, info, notice, warn, error"),
        CONF_OPT("heartbeat_interval", CONF_T_USEC, AC, heartbeat_interval, "5s", 0, 0, false,
                 "how often the agent reports to the manager"),
        CONF_OPT("reserved_cpu", CONF_T_U64, AC, reserved_cpu, "0", 0, 1024, false,
                 "cores kept for the host, not offered"),
        CONF_OPT("reserved_mem", CONF_T_SIZE, AC, reserved_mem, "512m", 0, 0, false,
                 "memory kept for the host, not offered"),
        CONF_OPT("gpu_plugin", CONF_T_STR, AC, gpu_plugin, "auto", 0, 0, false,
                 "cuda (NVIDIA GPUs through NVML), mock (mock_gpus fake ones), none, or auto (mock if mock_gpus, else cuda)"),
        CONF_OPT("nvml_library", CONF_T_STR, AC, nvml_library, "libnvidia-ml.so.1", 0, 0, false,
                 "the NVML library the cuda plugin loads"),
        CONF_OPT("reserved_gpu_mem", CONF_T_SIZE, AC, reserved_gpu_mem, "0", 0, 0, false,
                 "memory of each GPU kept out of fGPU shares (a share f gets (memory - this) x f)"),
        CONF_OPT("fgpu_library", CONF_T_STR, AC, fgpu_library, NULL, 0, 0, false,
                 "libtessera-fgpu.so, preloaded in containers holding GPU fractions (default: beside tessera)"),
        CONF_OPT("mock_cuda_library", CONF_T_STR, AC, mock_cuda_library, NULL, 0, 0, false,
                 "the mock GPUs' CUDA driver, libtessera-fake-cuda.so (default: beside tessera)"),
        CONF_OPT("mock_nvml_library", CONF_T_STR, AC, mock_nvml_library, NULL, 0, 0, false,
                 "the mock GPUs' NVML, libtessera-fake-nvml.so (default: beside tessera)"),
        CONF_OPT("mock_gpus", CONF_T_U64, AC, mock_gpus, "0", 0, 16, false,
                 "fake GPUs of the mock accelerator (for nodes and tests without GPUs)"),
        CONF_OPT("mock_gpu_memory", CONF_T_SIZE, AC, mock_gpu_memory, "16g", 0, 0, false,
                 "memory of each mock GPU"),
        CONF_OPT("mock_gpu_sm", CONF_T_U64, AC, mock_gpu_sm, "108", 1, 1024, false,
                 "streaming multiprocessors of each mock GPU"),
        CONF_OPT("mock_gpu_model", CONF_T_STR, AC, mock_gpu_model, "Tessera Mock GPU", 0, 0, false,
                 "model name of the mock GPUs"),
        CONF_OPT("fgpu_per_gpu", CONF_T_STR, AC, fgpu_per_gpu, "1", 0, 0, false,
                 "fGPU one GPU is worth (cuda.shares); 0 offers whole GPUs (cuda.device)"),
        CONF_OPT("runc", CONF_T_STR, AC, runc, "auto", 0, 0, false,
                 "the OCI runtime: a command, or auto: crun where it runs on this host's cgroups (cgroup v2 alone, or "
                 "no controller left on a hybrid host's cgroup2), else runc"),
        CONF_OPT("cgroup_favordynmods", CONF_T_BOOL, AC, cgroup_favordynmods, "true", 0, 0, false,
                 "remount the host's cgroup2 with favordynmods where the kernel offers it: container starts "
                 "no longer wait for an RCU grace period (10-20 ms each), forks and exits cost a little more"),
        CONF_OPT("runner", CONF_T_STR, AC, runner, NULL, 0, 0, false,
                 "the runner bound into every container (default: tessera-runner beside tessera)"),
        CONF_OPT("userns", CONF_T_BOOL, AC, userns, "true", 0, 0, false,
                 "run containers in a user namespace: their root is an unprivileged host uid (userns_base), files "
                 "keep their owners through idmapped mounts (Linux 5.19); false: containers' root is host root"),
        CONF_OPT("userns_base", CONF_T_U64, AC, userns_base, "2000000000", 1, 4294901759ULL, false,
                 "the host uid and gid of containers' root in their user namespace; their 65536 ids are "
                 "userns_base to userns_base+65535 (the work user: userns_base+1000)"),
        CONF_OPT("network", CONF_T_STR, AC, network, "bridge", 0, 0, false,
                 "bridge (a veth on the agent's bridge) or none (loopback only)"),
        CONF_OPT("bridge", CONF_T_STR, AC, bridge, NULL, 0, 0, false,
                 "the agent's bridge (default, with bridge_cidr unset too: the first free of tessera0, tessera1, ...)"),
        CONF_OPT("bridge_cidr", CONF_T_STR, AC, bridge_cidr, NULL, 0, 0, false,
                 "the bridge's address and the containers' subnet (default: 10.88.0.1/16 for tessera0, 10.89.0.1/16 "
                 "for tessera1, ...)"),
        CONF_OPT("listen", CONF_T_STR, AC, listen, "0.0.0.0:6011", 0, 0, false,
                 "where the agent serves its manager (execute, files, logs); port 0: any free one"),
        CONF_OPT("address", CONF_T_STR, AC, address, NULL, 0, 0, false,
                 "HOST:PORT the manager reaches the agent at (default: this host's address towards the manager)"),
        CONF_OPT("vfolder_hosts", CONF_T_STR, AC, vfolder_hosts, "local=/var/lib/tessera/vfolders", 0, 0, false,
                 "storage hosts of virtual folders, NAME=PATH,... (the manager's names; folders are bound from here)"),
        CONF_OPT("image_disk_budget", CONF_T_SIZE, AC, image_disk_budget, "0", 0, 0, false,
                 "disk space the image store may take (blobs and unpacked layers, e.g. 50g); beyond it the least "
                 "recently used images no container uses are removed; 0: no budget, nothing removed"),
        CONF_OPT("container_disk", CONF_T_SIZE, AC, container_disk, "16g", 0, 0, false,
                 "what each container may write outside its folders (its writable layer, a filesystem of this "
                 "size of its own; a session's resource policy may set less); at least 8m; 0: unlimited, on this "
                 "node's disk"),
        CONF_OPT("terminal_keep", CONF_T_USEC, AC, terminal_keep, "15m", 0, 0, false,
                 "how long a named terminal (the web UI's) keeps its shell after its socket closed; 0: not kept"),
        CONF_OPT("terminal_keep_max", CONF_T_U64, AC, terminal_keep_max, "8", 1, 1024, false,
                 "named terminals kept without a socket per kernel; past it the one detached longest is closed"),
        { 0 },
};
