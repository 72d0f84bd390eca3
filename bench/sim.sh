#!/bin/bash
# bench/sim.sh - `tessera sim` at the issue's scale (not a test: nothing here
# fails on timing).  Generates 100,000-session traces and replays each on
# 2,000 agents x 8 GPUs (fractional, fifo, concentrated), printing the wall
# and CPU time of the whole command, the time inside sched_pass(), and the
# issue's target (<= 60 s wall for the run):
#   1. steady:     the generator's defaults (offered GPU load 0.9, lognormal
#                  durations with median 30 min and sigma 1.5, mix 20:50:30);
#                  the queue stays short, so each pass places what arrived;
#   2. saturated:  load 1.1 with exponential 30 min durations: the cluster
#                  fills up and thousands of sessions wait, so every event's
#                  pass walks a long queue;
#   3. saturated, with the manager's 5 ms kick delay (--kick-delay 5ms:
#                  events within 5 ms share one pass, as in the manager);
#   4. saturated, 1 s kick delay (a manager that batches harder).
# Compare runs of one invocation only: the machine's two cores are shared,
# and the CPU column shows when something else took them.
#
# usage: bench/sim.sh [jobs [agents]]      (default 100000 2000)
#        BUILD=build/mine bench/sim.sh     (use another build directory)
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${1:-100000}
AGENTS=${2:-2000}
BUILD=${BUILD:-build}
make -s BUILD="$BUILD" all >/dev/null
T=$PWD/$BUILD/tessera
WORK=$(mktemp -d /tmp/tessera-bench-sim.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

echo "# tessera sim: $JOBS sessions on $AGENTS agents x 8 GPUs, $(nproc) cores, $(date -u +%Y-%m-%d)"
"$T" sim generate --agents "$AGENTS" --jobs "$JOBS" --seed 1 "$WORK/steady.csv" >/dev/null
"$T" sim generate --agents "$AGENTS" --jobs "$JOBS" --seed 1 --load 1.1 --duration exp:30m \
        "$WORK/saturated.csv" >/dev/null
echo "# traces: $(du -h "$WORK/steady.csv" | cut -f1) and $(du -h "$WORK/saturated.csv" | cut -f1) of CSV"

printf '%-28s %8s %8s %10s %9s %8s %11s %12s %10s\n' scenario wall_s cpu_s in_pass_s passes queue placed/s "wait p50/p95" "GPU used"
run() { # NAME TRACE [options...]
        local name=$1 trace=$2 out=$WORK/$1 t0 t1 c0 c1
        shift 2
        c0=$(awk '{print $14 + $15 + $16 + $17}' /proc/$$/stat)
        t0=$(date +%s.%N)
        "$T" sim --agents "$AGENTS" --gpus-per-agent 8 --trace "$trace" --out "$out" "$@" >"$WORK/$name.log" 2>&1
        t1=$(date +%s.%N)
        c1=$(awk '{print $14 + $15 + $16 + $17}' /proc/$$/stat)
        local s=$out/summary.csv
        get() { awk -F, -v col="$1" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == col) c = i } NR == 2 { print $c }' "$s"; }
        printf '%-28s %8.1f %8.1f %10.1f %9s %8s %11.0f %12s %9.1f%%\n' "$name" \
                "$(echo "$t1 - $t0" | bc)" "$(echo "($c1 - $c0) / $(getconf CLK_TCK)" | bc -l)" \
                "$(get pass_wall_s)" "$(get passes)" "$(get max_queue)" "$(get placements_per_s)" \
                "$(printf '%.0fs/%.0fs' "$(get wait_p50_s)" "$(get wait_p95_s)")" \
                "$(echo "$(get gpu_util_arrivals) * 100" | bc -l)"
}
run steady "$WORK/steady.csv"
run saturated "$WORK/saturated.csv"
run "saturated, kick 5ms" "$WORK/saturated.csv" --kick-delay 5ms
run "saturated, kick 1s" "$WORK/saturated.csv" --kick-delay 1s
echo "# target: <= 60 s wall for the run; wall_s/cpu_s: the whole command (reading the trace,"
echo "# simulating, writing the CSV and SVG); in_pass_s: wall time inside sched_pass();"
echo "# queue: the longest queue; GPU used: while jobs arrive"
