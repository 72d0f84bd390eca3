# shellcheck shell=bash
# bench/lib/slurm.sh - a one-node Slurm beside Tessera, for
# bench/vs-slurm.sh: Debian's slurm-wlm and munge (installed when missing,
# without letting the packages start their own daemons), and a munged,
# slurmctld and `slurmd -N localhost` of its own, everything under $T/slurm
# (config, state, socket, logs), started and stopped by pid.  The node
# offers 16 CPUs and gpu:4 (four fake device files) whatever the machine
# has (SlurmdParameters=config_overrides); jobs are plain processes
# (proctrack/linuxproc, task/none), as a default Slurm runs them.
#
#   slurm_install         apt-get install slurm-wlm munge when sbatch is missing
#   slurm_start PROFILE   plain: SchedulerParameters=batch_sched_delay=0;
#                         epilog: the same and Epilog=/bin/true
#   slurm_stop            stops what slurm_start started
# slurm_start exports SLURM_CONF, which sbatch, squeue and scancel read.

SLURM_PIDS=()

slurm_install() {
        command -v sbatch >/dev/null && command -v slurmctld >/dev/null && command -v munged >/dev/null && return 0
        local policy=/usr/sbin/policy-rc.d made=
        # the packages would start munge and slurm as services: not here
        if [ ! -e $policy ]; then
                printf '#!/bin/sh\nexit 101\n' >$policy && chmod 755 $policy && made=1
        fi
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q slurm-wlm munge >"$T/slurm-install.log" 2>&1
        local rc=$?
        [ -n "$made" ] && rm -f $policy
        [ $rc -eq 0 ] || { tail -n 20 "$T/slurm-install.log" >&2; return 1; }
}

slurm_free_port() {
        python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

slurm_start() { # PROFILE
        local S=$T/slurm i
        rm -rf "$S" && mkdir -p "$S/state" "$S/spool" && chmod 700 "$S" || return 1
        mungekey -c -k "$S/munge.key" >/dev/null 2>&1 || return 1
        chmod 400 "$S/munge.key"
        munged -f -F --key-file="$S/munge.key" --socket="$S/munge.sock" --pid-file="$S/munged.pid" \
                --log-file="$S/munged.log" --seed-file="$S/munged.seed" >>"$S/munged.out" 2>&1 &
        SLURM_PIDS+=($!)
        for i in 0 1 2 3; do mknod "$S/gpu$i" c 1 3 || return 1; done
        cat >"$S/slurm.conf" <<EOF
ClusterName=bench
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$(slurm_free_port)
SlurmdPort=$(slurm_free_port)
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$S/munge.sock
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$S/state
SlurmdSpoolDir=$S/spool
SlurmctldPidFile=$S/slurmctld.pid
SlurmdPidFile=$S/slurmd.pid
SlurmctldLogFile=$S/slurmctld.log
SlurmdLogFile=$S/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0
SlurmdParameters=config_overrides
GresTypes=gpu
ReturnToService=2
MpiDefault=none
MaxJobCount=100000
$([ "$1" = epilog ] && echo "Epilog=/bin/true")
NodeName=localhost NodeAddr=127.0.0.1 CPUs=16 RealMemory=16000 Gres=gpu:4 State=UNKNOWN
PartitionName=bench Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF
        echo "Name=gpu File=$S/gpu[0-3]" >"$S/gres.conf"
        export SLURM_CONF=$S/slurm.conf
        for i in $(seq 1 50); do [ -S "$S/munge.sock" ] && break; sleep 0.1; done
        slurmctld -D -i -f "$SLURM_CONF" >>"$S/slurmctld.out" 2>&1 &
        SLURM_PIDS+=($!)
        slurmd -D -N localhost -f "$SLURM_CONF" >>"$S/slurmd.out" 2>&1 &
        SLURM_PIDS+=($!)
        for i in $(seq 1 100); do
                sinfo -h -N -o %T 2>/dev/null | grep -qx idle && return 0
                sleep 0.1
        done
        echo "slurm did not come up:" >&2
        tail -n 5 "$S"/*.log "$S"/*.out >&2
        return 1
}

slurm_stop() {
        local p
        for p in "${SLURM_PIDS[@]}"; do kill "$p" 2>/dev/null; done
        for p in "${SLURM_PIDS[@]}"; do wait "$p" 2>/dev/null; done
        SLURM_PIDS=()
}
