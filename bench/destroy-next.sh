#!/bin/bash
# bench/destroy-next.sh - the seeds' scenario end to end on a `tessera dev`
# (manager + child agent, network none, busybox in the agent's store): a
# session holds all the agent's cores, a second one asking as much waits
# PENDING; the first is destroyed (DELETE /session/NAME); measured is the
# time from just before that request (curl, signed beforehand) to the
# second's RUNNING event read from GET /events/session (stamped when read).
# The medians of its phases are printed: DELETE -> the first TERMINATED
# (container stopped, slots freed), -> the second SCHEDULED, -> CREATING,
# -> RUNNING.  Target <= 300 ms.  Not a test: nothing fails on timing.
#
# usage: bench/destroy-next.sh [-n N]   (N rounds, default 20)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
N=20
while getopts n: o; do
        case $o in n) N=$OPTARG ;; *) exit 2 ;; esac
done
[ "$(id -u)" -eq 0 ] || { echo "needs root" >&2; exit 1; }
make -s -j2 all build/test-tool || exit 1
T=$(mktemp -d /tmp/tessera-bench-dn.XXXXXX)
CG=tessera-bench-$$
. bench/lib/peers.sh
. bench/lib/dev.sh
trap 'dev_cleanup; rm -rf "$T"' EXIT

echo "load: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"
dev_start || exit 1
sse_start
CPU=$(api GET /admin/agents | jq -r '.items[0].availableSlots.cpu // .items[0].available_slots.cpu')
echo "the agent offers $CPU cores; each session asks all of them"
: >"$T/s"
: >"$T/phases"
for i in $(seq 1 "$N"); do
        holder=bench-hold-$i waiter=bench-wait-$i
        api POST /session "$(session_body $holder "$CPU" 64m)" >/dev/null
        sse_wait $holder RUNNING 60 || { echo "$holder: not RUNNING"; exit 1; }
        api POST /session "$(session_body $waiter "$CPU" 64m)" >/dev/null
        sse_wait $waiter PENDING 10 || { echo "$waiter: not PENDING"; exit 1; }
        sleep 0.3 # it stays PENDING (no room)
        st=$(api GET /session/$waiter | jq -r .status)
        [ "$st" = PENDING ] || { echo "$waiter: $st, not PENDING: the pool was not full"; exit 1; }
        h=()
        while IFS= read -r l; do h+=(-H "$l"); done < <("$TT" sign DELETE /session/$holder "127.0.0.1:$PORT" $AK $SK text/plain)
        t0=$(now)
        curl -sS -m 30 -X DELETE "${h[@]}" "http://127.0.0.1:$PORT/session/$holder" >"$T/out" || { cat "$T/out"; exit 1; }
        sse_wait $waiter RUNNING 60 || { echo "$waiter: not RUNNING after 60 s"; exit 1; }
        t1=$SSE_T
        echo $((t1 - t0)) >>"$T/s"
        sse_wait $holder TERMINATED 5 && a=$SSE_T
        sse_wait $waiter SCHEDULED 1 && b=$SSE_T
        sse_wait $waiter CREATING 1 && c=$SSE_T
        echo "$((a - t0)) $((b - a)) $((c - b)) $((t1 - c))" >>"$T/phases"
        api DELETE /session/$waiter >/dev/null
        sse_wait $waiter TERMINATED 60 || { echo "$waiter: not TERMINATED"; exit 1; }
done
stats "DELETE first -> second RUNNING event" "$T/s"
P50_ALL=$P50
for col in 1 2 3 4; do
        cut -d' ' -f$col "$T/phases" >"$T/phase$col"
        stats "  $(echo "DELETE->first-TERMINATED TERMINATED->second-SCHEDULED SCHEDULED->CREATING CREATING->RUNNING" |
                cut -d' ' -f$col)" "$T/phase$col"
done
printf 'p50 %.1f ms   (target <= 300 ms)\n' "$(echo "$P50_ALL / 1000000" | bc -l)"
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
exit 0
