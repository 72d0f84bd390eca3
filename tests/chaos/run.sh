#!/bin/bash
# run.sh - the chaos test of issue 18: a cluster in network namespaces on
# this machine (PostgreSQL, two managers behind haproxy, three agents with
# mock GPUs and real containers), a workload of three users, and a seeded
# schedule of faults; six invariants checked during the run and at its end
# (invariants.sh).  docs/reliability.md explains it.
#
#   make chaos [SEED=N] [DURATION=5m]           what you run (builds first)
#   SEED=N DURATION=90s tests/chaos/run.sh      the same, on a built tree
#
# Environment:
#   SEED                the schedule's seed (default: drawn, and printed);
#                       the same SEED and DURATION replay the same schedule
#   DURATION            how long faults are injected: 90s, 5m, 30m (default 5m)
#   WARMUP              seconds of workload before the first fault (20)
#   CONVERGE_S          seconds the cluster has to settle afterwards (60)
#   MISMATCH_S          seconds a session's container may disagree with its
#                       status (an end in flight) before it counts (40: past the
#                       agents' longest backoff, 30 s)
#   AGENT_LOST_TIMEOUT  the managers' agent_lost_timeout in seconds (90)
#   CHAOS_HAPROXY_CFG   the front's config (tests/chaos/haproxy-chaos.cfg)
#   CHAOS_KEEP=1        keep the run's directory (logs, ledger) even if it passed
#   CHAOS_HOLD=S        keep the cluster up S seconds before cleaning up (debugging)
#   CHAOS_RESULTS=FILE  append the run's one-line result to FILE
#   BUILD               the build directory (build); $BUILD/tessera is run
#
# Prints the schedule, each fault and violation as it happens, then a
# summary ending in `N passed, N failed` (one per invariant, as
# tests/run.sh reads it).  Exit 0: no violation; 1: violations; 77: this
# machine cannot run it (not root, a tool missing).  Everything it starts
# is undone at exit, and by a guardian process if it is killed (cleanup.sh).
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
. "$HERE/cluster.sh"
. "$HERE/faults.sh"
. "$HERE/workload.sh"
. "$HERE/invariants.sh"

skip() {
        echo "chaos: skipped: $*"
        echo "0 passed, 0 failed, 1 skipped"
        exit 77
}

seconds_of() { # 90, 90s, 5m, 1h
        case $1 in
        *h) echo $((${1%h} * 3600)) ;;
        *m) echo $((${1%m} * 60)) ;;
        *s) echo "${1%s}" ;;
        *) echo "$1" ;;
        esac
}

SEED=${SEED:-$(((RANDOM << 15 | RANDOM) % 1000000))}
DURATION_S=$(seconds_of "${DURATION:-5m}")
WARMUP=${WARMUP:-20}
CONVERGE_S=${CONVERGE_S:-60}
MISMATCH_S=${MISMATCH_S:-40}
AGENT_LOST_TIMEOUT=${AGENT_LOST_TIMEOUT:-90}
CHAOS_HAPROXY_CFG=${CHAOS_HAPROXY_CFG:-$HERE/haproxy-chaos.cfg}
FAKETIME_LIB=$(ls /usr/lib/*/faketime/libfaketimeMT.so.1 2>/dev/null | head -n 1)
export SEED

[ "$(id -u)" = 0 ] || skip "needs root (network namespaces, tmpfs, containers)"
for tool in ip nsenter haproxy psql runuser jq curl python3 sha256sum fallocate ss; do
        command -v $tool >/dev/null 2>&1 || skip "needs $tool (scripts/install-deps.sh test)"
done
[ -n "$FAKETIME_LIB" ] || skip "needs libfaketime (scripts/install-deps.sh test)"
[ -n "$(pg_bindir)" ] || skip "needs the PostgreSQL server (scripts/install-deps.sh test)"
id postgres >/dev/null 2>&1 || skip "needs the user postgres (apt-get install postgresql)"
for f in "$TESSERA" "$BUILD/test-tool" "$BUILD/container-tool"; do
        [ -x "$f" ] || skip "$f is not built (make chaos builds it)"
done
OCI_RUNTIME=$("$TESSERA" agent --print-config 2>/dev/null | sed -n 's/^runc = "\(.*\)"$/\1/p')
command -v "${OCI_RUNTIME:-runc}" >/dev/null || skip "needs ${OCI_RUNTIME:-runc}"

CHAOS_ID=$$
CHAOS_DIR=$(mktemp -d /tmp/tchaos.XXXXXX) || exit 1
chmod 0755 "$CHAOS_DIR"
mkdir -p "$CHAOS_DIR/pids" "$CHAOS_DIR/users"
touch "$CHAOS_DIR/ledger.log" "$CHAOS_DIR/faults.log" "$CHAOS_DIR/requests.log" "$CHAOS_DIR/violations.log"
echo "CHAOS_ID=$CHAOS_ID BUILD=$BUILD" >"$CHAOS_DIR/env"

"$HERE/schedule.sh" "$SEED" "$DURATION_S" "$AGENT_LOST_TIMEOUT" >"$CHAOS_DIR/schedule.txt" || exit 1
CLOCK_NODE=$(sed -n 's/^# clock-node //p' "$CHAOS_DIR/schedule.txt")

finish() {
        local rc=$?
        trap - EXIT INT TERM
        touch "$CHAOS_DIR/stop-workload" "$CHAOS_DIR/stop-checks"
        [ -n "${CHAOS_HOLD:-}" ] && { echo "chaos: holding the cluster ${CHAOS_HOLD}s (CHAOS_HOLD)"; sleep "$CHAOS_HOLD"; }
        "$HERE/cleanup.sh" "$CHAOS_DIR"
        if [ "$rc" = 0 ] && [ -z "${CHAOS_KEEP:-}" ]; then
                rm -rf "$CHAOS_DIR"
        else
                echo "chaos: logs kept in $CHAOS_DIR"
        fi
        exit "$rc"
}
trap finish EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# the guardian: undoes the run if this shell dies without its trap (kill -9)
setsid bash -c 'while kill -0 '"$$"' 2>/dev/null; do sleep 1; done; exec "$0" "$1"' \
        "$HERE/cleanup.sh" "$CHAOS_DIR" </dev/null >/dev/null 2>&1 &

say "chaos: SEED=$SEED DURATION=${DURATION_S}s agent_lost_timeout=${AGENT_LOST_TIMEOUT}s dir $CHAOS_DIR"
say "schedule (replay: make chaos SEED=$SEED DURATION=${DURATION_S}s):"
sed 's/^/    /' "$CHAOS_DIR/schedule.txt"
cat "$CHAOS_DIR/schedule.txt" >>"$CHAOS_DIR/run.log"

cluster_up || { say "chaos: the cluster did not come up"; exit 1; }
workload_setup >>"$CHAOS_DIR/run.log" 2>&1 || { say "chaos: the workload could not start: $(tail -n 3 "$CHAOS_DIR/run.log")"; exit 1; }
# (job control: each loop in its own process group, so that its curl and
# python children stop with it)
set -m
workload_start
check_continuous_loop &
set_pid loop-checks $!
set +m
say "workload running; faults in ${WARMUP}s"
sleep "$WARMUP"

faults_play "$CHAOS_DIR/schedule.txt"
faults_heal_all
say "faults stopped; stopping the workload"
workload_stop
touch "$CHAOS_DIR/stop-checks"
wait "$(pid_of loop-checks)" 2>/dev/null
check_final

# ---- summary ----
say "faults injected: $(awk '$2 == "start" { n[$3]++ } END { for (k in n) printf "%s %d, ", k, n[k] }' "$CHAOS_DIR/faults.log" | sed 's/, $//')"
say "sessions: $(awk '$2 == "create-ack" { n++ } END { print n + 0 }' "$CHAOS_DIR/ledger.log") created (acknowledged), $(awk '$2 == "destroy-ack" { n++ } END { print n + 0 }' "$CHAOS_DIR/ledger.log") destroyed by their owners; ended: $(sql "SELECT string_agg(x, ', ') FROM (SELECT status || '/' || COALESCE(status_info, '') || ' ' || COUNT(*) AS x FROM sessions GROUP BY status, status_info ORDER BY 1) t")"
say "daemons that exited by themselves (restarted 5 s later, as systemd would): $(awk '$2 == "exited" { n[$3]++ } END { for (k in n) printf "%s %d, ", k, n[k] }' "$CHAOS_DIR/nodes.log" | sed 's/, $//')"
say "files verified: $(wc -l <"$CHAOS_DIR/files-ok" 2>/dev/null || echo 0); terminal rounds: $(grep -c ' WS .* 101$' "$CHAOS_DIR/requests.log") ok, $(grep -c ' WS .* 000$' "$CHAOS_DIR/requests.log") failed"
pass=0 fail=0
for inv in I1-legit-end I2-no-double-slot I3-exactly-once I4-files-intact I5-availability I6-converged sanitizer; do
        n=$(grep -c "^$inv " "$CHAOS_DIR/violations.log")
        if [ "$n" = 0 ]; then
                echo "ok - $inv"
                pass=$((pass + 1))
        else
                echo "not ok - $inv ($n violations)"
                grep "^$inv " "$CHAOS_DIR/violations.log" | head -n 10 | sed 's/^/# /'
                fail=$((fail + 1))
        fi
done
result="$(date +%F) SEED=$SEED DURATION=${DURATION_S}s faults=$(grep -c ' start ' "$CHAOS_DIR/faults.log") sessions=$(awk '$2 == "create-ack"' "$CHAOS_DIR/ledger.log" | wc -l) violations=$(wc -l <"$CHAOS_DIR/violations.log") ($(cut -d' ' -f1 "$CHAOS_DIR/violations.log" | sort | uniq -c | awk '{ printf "%s %s ", $2, $1 }'))"
echo "$result" >"$CHAOS_DIR/result.txt"
[ -n "${CHAOS_RESULTS:-}" ] && echo "$result" >>"$CHAOS_RESULTS"
[ "$fail" = 0 ] || say "replay: make chaos SEED=$SEED DURATION=${DURATION_S}s"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
