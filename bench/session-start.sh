#!/bin/bash
# bench/session-start.sh - Create -> RUNNING of a busybox session whose
# image the agent has (imported into its store: no pull), through the real
# API of a `tessera dev` (manager + child agent, network none), side by side
# in one run with a bare `runc run -d` of an equivalent bundle (and of the
# agent's runtime when that is crun: agent option runc = auto) and `docker
# run -d --network none` on Debian's docker.io engine (dockerd
# --iptables=false --bridge=none).
#
# Tessera's figure: from just before `curl POST /session` (signed
# beforehand; enqueueOnly) to the moment the session's RUNNING event is read
# from the manager's event stream (GET /events/session, server-sent events,
# open for the whole run; each line is stamped when read).  RUNNING is sent
# once the agent reports the container started.  The session is destroyed
# and its TERMINATED event awaited (untimed) before the next.  The median of
# each phase (POST -> PENDING -> SCHEDULED -> CREATING -> RUNNING) is printed
# too.  runc and docker: the wall time of the command, as in
# bench/container-start.sh.  Not a test: nothing fails on timing.
#
# usage: bench/session-start.sh [-n N] [-r RUNTIME]
#   N starts per runtime (default 30); RUNTIME the agent's (auto, runc,
#   crun: tessera dev --agent-runtime; auto picks crun where it fits)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
N=30
RT=auto
while getopts n:r: o; do
        case $o in n) N=$OPTARG ;; r) RT=$OPTARG ;; *) exit 2 ;; esac
done
[ "$(id -u)" -eq 0 ] || { echo "needs root" >&2; exit 1; }
make -s -j2 all build/test-tool build/container-tool || exit 1
T=$(mktemp -d /tmp/tessera-bench-ss.XXXXXX)
CG=tessera-bench-$$
. bench/lib/peers.sh
. bench/lib/dev.sh
trap 'dev_cleanup; peers_cleanup; rm -rf "$T"' EXIT

[ "$RT" = auto ] && RT=$(build/tessera agent --print-config | sed -n 's/^runc = "\(.*\)"$/\1/p')
echo "load: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores; the agent runs containers through $RT"
peers_rootfs

# ---- Tessera: POST /session -> RUNNING event ----
dev_start --agent-runtime "$RT" || exit 1
sse_start
: >"$T/s-tessera"
: >"$T/phases"
for i in $(seq 1 "$N"); do
        name=bench-start-$i
        h=()
        while IFS= read -r l; do h+=(-H "$l"); done < <("$TT" sign POST /session "127.0.0.1:$PORT" $AK $SK application/json)
        body=$(session_body "$name" 1 64m)
        t0=$(now)
        curl -sS -m 30 -X POST "${h[@]}" --data "$body" "http://127.0.0.1:$PORT/session" >"$T/out" ||
                { cat "$T/out"; exit 1; }
        sse_wait "$name" RUNNING 60 || { echo "$name: not RUNNING after 60 s"; cat "$T/out"; exit 1; }
        t1=$SSE_T
        echo $((t1 - t0)) >>"$T/s-tessera"
        echo $((t1 - SSE_SEEN["$name PENDING"])) >>"$T/s-server"
        sse_wait "$name" PENDING 1 && p=$SSE_T
        sse_wait "$name" SCHEDULED 1 && s=$SSE_T
        sse_wait "$name" CREATING 1 && c=$SSE_T
        echo "$((p - t0)) $((s - p)) $((c - s)) $((t1 - c))" >>"$T/phases"
        api DELETE "/session/$name" >/dev/null
        sse_wait "$name" TERMINATED 60 >/dev/null || { echo "$name: not TERMINATED after 60 s"; exit 1; }
done
stats "tessera POST /session -> RUNNING event" "$T/s-tessera"
TESS=$P50
stats "  (PENDING event -> RUNNING event)" "$T/s-server"
for col in 1 2 3 4; do
        cut -d' ' -f$col "$T/phases" >"$T/phase$col"
        stats "  $(echo "POST->PENDING PENDING->SCHEDULED SCHEDULED->CREATING CREATING->RUNNING" |
                cut -d' ' -f$col)" "$T/phase$col"
done
dev_cleanup
DEV_PID=

# ---- bare runc run -d of an equivalent bundle ----
# container-tool writes the config.json the agent's containers get (same
# namespaces, seccomp, capabilities, cgroup limits); rootfs a plain
# directory, init `sleep 1000` (the agent runs its runner, which idles).
peers_runc_config "$T/ct" "$PWD/build/container-tool" --state "$T/ct" --runc-root "$T/ctrunc" --cgroup-parent "$CG" \
        --netns-dir "$T/netns" || exit 1
peers_runc "$N" "$T/config.json.in" "$T/s-runc" || exit 1
stats "runc run -d (equivalent config.json)" "$T/s-runc"
RUNC=$P50
if [ "$RT" != runc ]; then # the agent's own runtime, bare
        peers_runc "$N" "$T/config.json.in" "$T/s-rt" "$RT" || exit 1
        stats "$RT run -d (equivalent config.json)" "$T/s-rt"
        BARE_RT=$P50
fi

# ---- docker run -d ----
peers_bench_docker "$N"

echo
printf 'ratio tessera/runc (p50):    %.2f   (target <= 1.5)\n' "$(echo "$TESS / $RUNC" | bc -l)"
[ "$RT" != runc ] && printf 'ratio tessera/%s (p50):    %.2f   (tessera through %s against it bare)\n' "$RT" \
        "$(echo "$TESS / $BARE_RT" | bc -l)" "$RT"
[ -n "$DOCK" ] && printf 'ratio docker/tessera (p50):  %.2f   (target >= 5)\n' "$(echo "$DOCK / $TESS" | bc -l)"
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
exit 0
