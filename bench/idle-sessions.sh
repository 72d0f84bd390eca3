#!/bin/bash
# bench/idle-sessions.sh - many concurrent idle sessions on one agent: a
# `tessera dev` (manager + child agent) with network none (a /24 bridge
# would hold 253; none keeps the figure about the agent, not veths), the
# busybox image in the agent's store, N interactive sessions asking 0.002
# core and 16 MiB each (2 cores' worth would not fit otherwise; the default
# keypair policy is raised to allow them), created in one burst through the
# API.  Figures: the time until all are RUNNING; the agent process's VmRSS
# and VmHWM (the agent alone, not the monitors, which are processes of their
# own) when all run and after a minute idle; the gaps between the
# heartbeats the manager records (agents.last_heartbeat, read from its
# SQLite database every 200 ms) over that minute, against the configured
# interval (5 s); the agent's CPU time over the idle minute.  Targets: all
# RUNNING, RSS <= 64 MB, heartbeats on time.  Not a test: nothing fails on
# the figures.
#
# usage: bench/idle-sessions.sh [-n N] [-i IDLE_SECONDS]   (default 500, 60)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
N=500
IDLE=60
while getopts n:i: o; do
        case $o in n) N=$OPTARG ;; i) IDLE=$OPTARG ;; *) exit 2 ;; esac
done
[ "$(id -u)" -eq 0 ] || { echo "needs root" >&2; exit 1; }
make -s -j2 all build/test-tool || exit 1
T=$(mktemp -d /tmp/tessera-bench-idle.XXXXXX)
CG=tessera-bench-$$
. bench/lib/peers.sh
. bench/lib/dev.sh
trap 'dev_cleanup; rm -rf "$T"' EXIT

mem() { # PID: "VmRSS X MB, VmHWM Y MB"
        awk '/^VmRSS/ {r = $2} /^VmHWM/ {h = $2} END {printf "VmRSS %.1f MB, VmHWM %.1f MB", r / 1024, h / 1024}' \
                "/proc/$1/status"
}
cpu_ticks() { # PID: utime + stime (clock ticks)
        awk '{print $14 + $15}' "/proc/$1/stat"
}

echo "load: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"
dev_start || exit 1
AGENT=$(agent_pid)
echo "agent pid $AGENT at start: $(mem "$AGENT")"
t0=$(now)
for i in $(seq 1 "$N"); do
        api POST /session "$(session_body "idle-$i" 0.002 16m)" >"$T/out" || { cat "$T/out"; exit 1; }
        grep -q '"sessionId"' "$T/out" || { echo "idle-$i: $(cat "$T/out")"; exit 1; }
done
t_created=$(now)
printf 'created %d sessions in %.1f s\n' "$N" "$(echo "($t_created - $t0) / 1000000000" | bc -l)"
db() { sqlite3 -readonly "file:$T/state/tessera.db?mode=ro" "$1" 2>/dev/null; }
for _ in $(seq 1 1200); do
        running=$(db "SELECT count(*) FROM sessions WHERE status = 'RUNNING'")
        [ "${running:-0}" -ge "$N" ] && break
        bad=$(db "SELECT count(*) FROM sessions WHERE status IN ('ERROR', 'TERMINATED', 'CANCELLED')")
        [ "${bad:-0}" -gt 0 ] && { echo "$bad sessions failed:"; db "SELECT name, status, status_info FROM sessions WHERE status IN ('ERROR', 'TERMINATED', 'CANCELLED') LIMIT 5"; break; }
        sleep 0.5
done
t_running=$(now)
printf 'RUNNING: %s of %d, %.1f s after the first create\n' "$running" "$N" "$(echo "($t_running - $t0) / 1000000000" | bc -l)"
echo "agent with $N sessions: $(mem "$AGENT"), $(ls /proc/"$AGENT"/task | wc -l) threads"
echo "containers running (runc list): $(runc --root "$RUNC_ROOT" list -q 2>/dev/null | grep -cFf <(ls "$T/state/agent/containers"))"

# the idle minute: heartbeats as the manager records them
c0=$(cpu_ticks "$AGENT")
: >"$T/beats"
end=$(($(now) + IDLE * 1000000000))
while [ "$(now)" -lt "$end" ]; do
        db "SELECT last_heartbeat FROM agents" >>"$T/beats"
        curl -s -o /dev/null -w '%{time_total}\n' "http://127.0.0.1:$PORT/" >>"$T/get"
        sleep 0.2
done
c1=$(cpu_ticks "$AGENT")
uniq "$T/beats" | awk 'NR > 1 {printf "%.0f\n", ($1 - prev) * 1000} {prev = $1}' >"$T/gaps" # usec -> ns
echo "agent after ${IDLE} s idle: $(mem "$AGENT"); CPU $(echo "($c1 - $c0) * 100 / $(getconf CLK_TCK) / $IDLE" | bc -l | xargs printf '%.1f')% of a core"
stats "heartbeat gaps (interval 5 s)" "$T/gaps"
echo "the manager's GET / meanwhile, slowest: $(sort -n "$T/get" | tail -n 1 | awk '{printf "%.0f", $1 * 1000}') ms"
echo "heartbeat gaps (ms): $(awk '{printf "%.0f ", $1 / 1000000}' "$T/gaps")"
echo "monitors: $(pgrep -fc "_monitor $T/state/agent/containers") processes, RSS $(ps -o rss= -p "$(pgrep -fd, "_monitor $T/state/agent/containers")" | awk '{s += $1} END {printf "%.0f", s / 1024}') MB in all"
echo "agent's warnings: $(grep -c 'tessera-agent warn' "$T/dev.log")"; grep 'tessera-agent warn' "$T/dev.log" | tail -n 3
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
exit 0
