#!/bin/bash
# bench/vs-slurm.sh - Tessera beside Slurm on this machine, in one run,
# interleaved (issue 21): short batch jobs through each, one client
# process per job, and how soon a waiting job starts when a running one
# ends.  Not a test: nothing fails on timing; it prints medians and ratios.
#
#   throughput  JOBS trivial jobs (`true`) from SUBMITTERS parallel shells,
#               one client process per job: `sbatch -c 1 --mem=64 --wrap=true`
#               on a node of 16 CPUs, and `tessera session create -t batch
#               -c true --enqueue-only -r cpu=0.125 -r mem=64m` on a
#               `tessera dev` of this machine's cores: 16 at once in both.
#               Submit -> all complete (jobs/s; both polled every 0.2 s,
#               squeue and GET /sessions, to keep the polling's own cost
#               small and alike), and the submit phase alone (submits/s,
#               jobs running meanwhile).  Tessera's jobs are
#               containers (runc: overlay root, namespaces, cgroups,
#               seccomp); Slurm's plain processes.
#   array       the same JOBS from one client process, as a job array:
#               `sbatch --array=1-JOBS` and `tessera session create --count
#               JOBS` (one connection); jobs/s and the submit's time.
#   next        a job holding all the node's CPUs ends (scancel; DELETE) ->
#               the one waiting for them starts (its script's first line;
#               the RUNNING event), p50 over LATENCY samples.
#
# Slurm runs in two profiles (bench/lib/slurm.sh): plain
# (batch_sched_delay=0) and epilog (+ Epilog=/bin/true).  Each round runs
# the three (Slurm plain, Slurm epilog, Tessera) in a rotating order.
#
# usage: bench/vs-slurm.sh [-n JOBS] [-r ROUNDS] [-s SUBMITTERS] [-l LATENCY]
#        defaults 1000, 3, 4, 6.  Needs root; installs Slurm from Debian when
#        missing.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
JOBS=1000 ROUNDS=3 SUBMITTERS=4 LATENCY=6
while getopts n:r:s:l: o; do
        case $o in
        n) JOBS=$OPTARG ;;
        r) ROUNDS=$OPTARG ;;
        s) SUBMITTERS=$OPTARG ;;
        l) LATENCY=$OPTARG ;;
        *) exit 2 ;;
        esac
done
[ "$(id -u)" -eq 0 ] || { echo "needs root" >&2; exit 1; }
make -s -j2 all build/test-tool || exit 1
T=$(mktemp -d /tmp/tessera-bench-slurm.XXXXXX)
CG=tessera-bench-$$
. bench/lib/peers.sh
. bench/lib/dev.sh
. bench/lib/slurm.sh
cleanup() {
        command -v scancel >/dev/null && [ -n "${SLURM_CONF:-}" ] && scancel -u root 2>/dev/null
        slurm_stop
        dev_cleanup
        rm -rf "$T"
}
trap cleanup EXIT

slurm_install || exit 1
echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)  machine: $(nproc) cores, $(awk '/MemTotal/ {print int($2/1048576)}' /proc/meminfo) GiB, $(uname -r)"
echo "slurm: $(slurmctld -V)  tessera: $("$TESSERA" --version 2>/dev/null | head -n 1) ($(git rev-parse --short HEAD))"
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
dev_start || exit 1
sse_start
CPU=$(api GET /admin/agents | jq -r '.items[0].available_slots.cpu')
export BACKEND_ENDPOINT=http://127.0.0.1:$PORT BACKEND_ACCESS_KEY=$AK BACKEND_SECRET_KEY=$SK

ms() { echo "scale=1; $1 / 1000000" | bc; }
median() { sort -n | awk '{a[NR] = $1} END {if (NR) print a[int((NR + 1) / 2)]; else print 0}'; }

# submit COMMAND...: JOBS runs of COMMAND from SUBMITTERS shells; sets
# SUBMIT_NS (from the first start to the last submit)
submit() {
        local per=$((JOBS / SUBMITTERS)) s t0 pids=()
        t0=$(now)
        for s in $(seq 1 "$SUBMITTERS"); do
                (for _ in $(seq 1 "$per"); do "$@" >/dev/null 2>>"$T/submit.err" || echo x >>"$T/submit.failed"; done) &
                pids+=($!)
        done
        wait "${pids[@]}"
        SUBMIT_NS=$(($(now) - t0))
        [ ! -s "$T/submit.failed" ] || { echo "$(wc -l <"$T/submit.failed") submits failed:"; tail -n 3 "$T/submit.err"; return 1; }
}

LIVE=PENDING,SCHEDULED,PREPARING,PULLING,CREATING,RUNNING,TERMINATING

# throughput NAME: the jobs of NAME (slurm or tessera); appends "jobs/s submits/s"
throughput() {
        local t0 done_ns n=$((JOBS / SUBMITTERS * SUBMITTERS)) before after
        rm -f "$T/submit.failed"
        if [ "$1" = slurm ]; then
                t0=$(now)
                submit sbatch -Q -o /dev/null -c 1 --mem=64 --wrap=true || return 1
                while [ -n "$(squeue -h -o %i 2>/dev/null | head -n 1)" ]; do sleep 0.2; done
        else
                before=$(api GET "/sessions?status=TERMINATED&limit=1" | jq .total)
                t0=$(now)
                submit "$TESSERA" session create -i busybox:latest -t batch -c true --enqueue-only \
                        -r cpu=0.125 -r mem=64m || return 1
                while [ "$(api GET "/sessions?status=$LIVE&limit=1" | jq .total)" != 0 ]; do sleep 0.2; done
                after=$(api GET "/sessions?status=TERMINATED&limit=1" | jq .total)
                [ $((after - before)) -eq "$n" ] || { echo "tessera: $((after - before)) of $n jobs TERMINATED"; return 1; }
        fi
        done_ns=$(($(now) - t0))
        echo "$(echo "scale=2; $n * 1000000000 / $done_ns" | bc) $(echo "scale=2; $n * 1000000000 / $SUBMIT_NS" | bc)"
}

# array NAME: the same jobs submitted by one client process, as a job
# array (`sbatch --array=1-JOBS`; `tessera session create --count JOBS`);
# appends "jobs/s submit-seconds"
array() {
        local t0 s1 before after
        if [ "$1" = slurm ]; then
                t0=$(now)
                sbatch -Q -o /dev/null -c 1 --mem=64 --array=1-"$JOBS" --wrap=true || return 1
                s1=$(now)
                while [ -n "$(squeue -h -o %i 2>/dev/null | head -n 1)" ]; do sleep 0.2; done
        else
                before=$(api GET "/sessions?status=TERMINATED&limit=1" | jq .total)
                t0=$(now)
                "$TESSERA" session create -n "arr$RANDOM" -i busybox:latest -t batch -c true --enqueue-only \
                        -r cpu=0.125 -r mem=64m --count "$JOBS" >/dev/null || return 1
                s1=$(now)
                while [ "$(api GET "/sessions?status=$LIVE&limit=1" | jq .total)" != 0 ]; do sleep 0.2; done
                after=$(api GET "/sessions?status=TERMINATED&limit=1" | jq .total)
                [ $((after - before)) -eq "$JOBS" ] || { echo "tessera: $((after - before)) of $JOBS jobs TERMINATED"; return 1; }
        fi
        echo "$(echo "scale=2; $JOBS * 1000000000 / ($(now) - $t0)" | bc) $(ms $((s1 - t0)))"
}

# next NAME: LATENCY samples (ns) of a job ending -> the waiting one starting
next() {
        local i hold wait t0 h=() st
        for i in $(seq 1 "$LATENCY"); do
                if [ "$1" = slurm ]; then
                        hold=$(sbatch --parsable -o /dev/null -c 16 --wrap='sleep 1000') || return 1
                        until [ "$(squeue -h -j "$hold" -o %T)" = RUNNING ]; do sleep 0.05; done
                        rm -f "$T/started"
                        wait=$(sbatch --parsable -o /dev/null -c 16 --wrap="date +%s%N >$T/started.tmp; mv $T/started.tmp $T/started; sleep 1000") || return 1
                        until [ "$(squeue -h -j "$wait" -o %T)" = PENDING ]; do sleep 0.05; done
                        sleep 0.3
                        t0=$(now)
                        scancel "$hold"
                        until [ -s "$T/started" ]; do
                                [ $(($(now) - t0)) -lt 60000000000 ] || { echo "slurm: job $wait did not start" >&2; return 1; }
                                sleep 0.002
                        done
                        echo $(($(cat "$T/started") - t0))
                        scancel "$wait"
                        while [ -n "$(squeue -h -o %i | head -n 1)" ]; do sleep 0.05; done
                else
                        hold=vs-hold-$RANDOM$i wait=vs-wait-$RANDOM$i
                        api POST /session "$(session_body $hold "$CPU" 64m)" >/dev/null
                        sse_wait $hold RUNNING 60 || { echo "$hold: not RUNNING" >&2; return 1; }
                        api POST /session "$(session_body $wait "$CPU" 64m)" >/dev/null
                        sse_wait $wait PENDING 10 || { echo "$wait: not PENDING" >&2; return 1; }
                        sleep 0.3
                        st=$(api GET /session/$wait | jq -r .status)
                        [ "$st" = PENDING ] || { echo "$wait: $st, not PENDING" >&2; return 1; }
                        h=()
                        while IFS= read -r l; do h+=(-H "$l"); done < <("$TT" sign DELETE /session/$hold "127.0.0.1:$PORT" $AK $SK text/plain)
                        t0=$(now)
                        curl -sS -m 30 -X DELETE "${h[@]}" "http://127.0.0.1:$PORT/session/$hold" >/dev/null || return 1
                        sse_wait $wait RUNNING 60 || { echo "$wait: not RUNNING" >&2; return 1; }
                        echo $((SSE_T - t0))
                        api DELETE /session/$wait >/dev/null
                        sse_wait $wait TERMINATED 60 || return 1
                fi
        done
}

# one NAME PROFILE: a round of NAME (slurm in PROFILE, or tessera)
one() {
        local label=$1${2:+-$2} r a
        if [ "$1" = slurm ]; then slurm_start "$2" || return 1; fi
        r=$(throughput "$1") || { echo "$label: $r"; return 1; }
        echo "$r" >>"$T/tp.$label"
        a=$(array "$1") || { echo "$label: $a"; return 1; }
        echo "$a" >>"$T/array.$label"
        next "$1" >>"$T/next.$label" || return 1
        printf '  %-14s %8s jobs/s  %8s submits/s  array %8s jobs/s (submitted in %s ms)  next p50 %6s ms\n' \
                "$label" ${r} ${a} "$(ms "$(median <"$T/next.$label")")"
        if [ "$1" = slurm ]; then slurm_stop; fi
}

order=("slurm plain" "slurm epilog" "tessera")
for round in $(seq 1 "$ROUNDS"); do
        echo "round $round: $JOBS jobs, $SUBMITTERS submitters; load $(cut -d' ' -f1 /proc/loadavg)"
        for k in 0 1 2; do
                # shellcheck disable=SC2086
                one ${order[$(((k + round - 1) % 3))]} || exit 1
        done
done

echo
echo "medians over $ROUNDS rounds:"
printf '%-14s %10s %12s %14s %16s %10s\n' system "jobs/s" "submits/s" "array jobs/s" "array submit ms" "next p50"
for label in slurm-plain slurm-epilog tessera; do
        tp=$(cut -d' ' -f1 "$T/tp.$label" | median)
        sb=$(cut -d' ' -f2 "$T/tp.$label" | median)
        ar=$(cut -d' ' -f1 "$T/array.$label" | median)
        as=$(cut -d' ' -f2 "$T/array.$label" | median)
        nx=$(ms "$(median <"$T/next.$label")")
        printf '%-14s %10s %12s %14s %16s %8s ms\n' "$label" "$tp" "$sb" "$ar" "$as" "$nx"
        eval "TP_${label//-/_}=$tp SB_${label//-/_}=$sb NX_${label//-/_}=$nx AR_${label//-/_}=$ar AS_${label//-/_}=$as"
done
best_tp=$(printf '%s\n%s\n' "$TP_slurm_plain" "$TP_slurm_epilog" | sort -g | tail -n 1)
best_sb=$(printf '%s\n%s\n' "$SB_slurm_plain" "$SB_slurm_epilog" | sort -g | tail -n 1)
best_nx=$(printf '%s\n%s\n' "$NX_slurm_plain" "$NX_slurm_epilog" | sort -g | head -n 1)
echo
printf 'tessera / best slurm: throughput %.2fx (target >= 2), submit %.2fx (target >= 1), next-job latency %.2fx of slurm'"'"'s (target tessera <= 100 ms)\n' \
        "$(echo "$TP_tessera / $best_tp" | bc -l)" "$(echo "$SB_tessera / $best_sb" | bc -l)" \
        "$(echo "$NX_tessera / $best_nx" | bc -l)"
best_ar=$(printf '%s\n%s\n' "$AR_slurm_plain" "$AR_slurm_epilog" | sort -g | tail -n 1)
best_as=$(printf '%s\n%s\n' "$AS_slurm_plain" "$AS_slurm_epilog" | sort -g | head -n 1)
printf 'job arrays: throughput %.2fx, submit time %.2fx of slurm'"'"'s\n' \
        "$(echo "$AR_tessera / $best_ar" | bc -l)" "$(echo "$AS_tessera / $best_as" | bc -l)"
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
exit 0
