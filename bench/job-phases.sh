#!/bin/bash
# bench/job-phases.sh - where a short batch job's time goes (issue 21), on a
# `tessera dev` (manager + child agent, runc, network none, busybox in the
# agent's store): trivial jobs (`true`, 0.125 cores, 64 MiB), each submitted
# by its own `tessera session create` process, at 1 job in flight and at 16.
#
# Printed, as medians over the jobs:
#   - wall time of each phase, from the sessions' status history (the
#     manager stamps each transition): PENDING -> SCHEDULED (the scheduler's
#     tick), SCHEDULED -> PREPARING (the agent takes it), PREPARING ->
#     CREATING (bundle, layers, overlay), CREATING -> RUNNING (runtime
#     create and start), RUNNING -> TERMINATED (the job itself, its exit
#     seen, teardown; through TERMINATING when a job passes it);
#   - the client's own wall time (process start -> the answer to POST /session);
#   - CPU per job: the manager's, the agent's with the children it reaped
#     (runc...), and the whole machine's (/proc/stat), over the batch; the
#     script waits on the events stream, without forking, so that its own
#     work stays out of it (run `perf record -a` beside it for a split by
#     process).
# Not a test: nothing fails on timing.
#
# usage: bench/job-phases.sh [-n JOBS]   (jobs per setting, default 48)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
JOBS=48
while getopts n: o; do
        case $o in n) JOBS=$OPTARG ;; *) exit 2 ;; esac
done
[ "$(id -u)" -eq 0 ] || { echo "needs root" >&2; exit 1; }
make -s -j2 all build/test-tool || exit 1
T=$(mktemp -d /tmp/tessera-bench-phases.XXXXXX)
CG=tessera-bench-$$
. bench/lib/peers.sh
. bench/lib/dev.sh
trap 'dev_cleanup; rm -rf "$T"' EXIT

echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)  machine: $(nproc) cores; load: $(cut -d' ' -f1-3 /proc/loadavg)"
dev_start || exit 1
sse_start
export BACKEND_ENDPOINT=http://127.0.0.1:$PORT BACKEND_ACCESS_KEY=$AK BACKEND_SECRET_KEY=$SK
MANAGER=$DEV_PID
AGENT=$(agent_pid)
[ -n "$AGENT" ] || { echo "no agent process" >&2; exit 1; }
TICKS=$(getconf CLK_TCK)

cpu_of() { # PID: its user+system ticks, and its reaped children's
        awk '{print $14 + $15 + $16 + $17}' "/proc/$1/stat"
}
machine_busy() { # all cores' non-idle ticks
        awk '/^cpu / {print $2 + $3 + $4 + $7 + $8}' /proc/stat
}

# create NAME: one client process; its wall time (ns) appended to $T/client
create() {
        local t0
        t0=$(now)
        "$TESSERA" session create -n "$1" -i busybox:latest -t batch -c true --enqueue-only \
                -r cpu=0.125 -r mem=64m >/dev/null || return 1
        echo $(($(now) - t0)) >>"$T/client"
}


# setting INFLIGHT: JOBS jobs, INFLIGHT at a time (a batch of INFLIGHT
# submitted together, then waited for)
setting() {
        local inflight=$1 i b m0 a0 s0 m1 a1 s1 pids
        : >"$T/client"
        m0=$(cpu_of "$MANAGER") a0=$(cpu_of "$AGENT") s0=$(machine_busy)
        for b in $(seq 1 $((JOBS / inflight))); do
                pids=()
                for i in $(seq 1 "$inflight"); do
                        create "ph$inflight-$b-$i" &
                        pids+=($!)
                done
                wait "${pids[@]}" # not the dev manager, also a child
                # the events stream, read without forking: no polling of our own in the CPU measured
                for i in $(seq 1 "$inflight"); do
                        sse_wait "ph$inflight-$b-$i" TERMINATED 120 || { echo "ph$inflight-$b-$i: not TERMINATED"; exit 1; }
                done
        done
        m1=$(cpu_of "$MANAGER") a1=$(cpu_of "$AGENT") s1=$(machine_busy)
        api GET "/sessions?status=TERMINATED&limit=1000" >"$T/sessions.json"
        echo
        echo "$inflight in flight ($JOBS jobs):"
        python3 - "$T/sessions.json" "ph$inflight-" <<'PY'
import json, sys
from datetime import datetime
items = [s for s in json.load(open(sys.argv[1]))["items"] if s["sessionName"].startswith(sys.argv[2])]
phases = ["PENDING", "SCHEDULED", "PREPARING", "CREATING", "RUNNING", "TERMINATING", "TERMINATED"]
def t(h, k):
    return datetime.fromisoformat(h[k]).timestamp() if k in h else None
res = {}
bad = 0
order = lambda k: 98 if "(all)" in k else phases.index(k.split(" ")[0])
for s in items:
    h = s["statusHistory"]
    if isinstance(h, str):
        h = json.loads(h)
    if s.get("result") not in ("SUCCESS", "success"):
        bad += 1
    seen = [p for p in phases if p in h]  # statuses a job skips (TERMINATING) are left out
    for a, b in zip(seen, seen[1:]):
        res.setdefault(a + " -> " + b, []).append((t(h, b) - t(h, a)) * 1000)
    if t(h, "PENDING") and t(h, "TERMINATED"):
        res.setdefault("PENDING -> TERMINATED (all)", []).append((t(h, "TERMINATED") - t(h, "PENDING")) * 1000)
def med(v):
    v = sorted(v)
    return v[(len(v) - 1) // 2]
for k, v in sorted(res.items(), key=lambda kv: (order(kv[0]), kv[0])):
    print(f"  {k:34s} p50 {med(v):8.1f} ms   max {max(v):8.1f} ms   ({len(v)} jobs)")
if bad:
    print(f"  ({bad} jobs did not end in SUCCESS)")
PY
        stats "  client: process start -> answer" "$T/client"
        printf '  CPU per job: manager %.1f ms, agent (+ reaped children) %.1f ms, whole machine %.1f ms\n' \
                "$(echo "($m1 - $m0) * 1000 / $TICKS / $JOBS" | bc -l)" \
                "$(echo "($a1 - $a0) * 1000 / $TICKS / $JOBS" | bc -l)" \
                "$(echo "($s1 - $s0) * 1000 / $TICKS / $JOBS" | bc -l)"
}

setting 1
setting 16
echo
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
exit 0
