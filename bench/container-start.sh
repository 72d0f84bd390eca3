#!/bin/bash
# bench/container-start.sh - how long a container takes to start: Tessera's
# container_create() (bridge network and none), a bare `runc run -d` of an
# equivalent bundle, and `docker run -d` on Debian's docker.io engine when
# dockerd is installed.  Each start is "create -> running" with a
# `sleep 1000` init; the container is removed (untimed) before the next.
# Prints p50 and p95 per runtime and the ratios.  Not a test: nothing fails
# on timing.  Needs root, runc, busybox-static; builds the release
# container-tool (make build/container-tool).
#
# usage: bench/container-start.sh [-n N]   (N starts per runtime, default 50)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
N=50
while getopts n: o; do
        case $o in n) N=$OPTARG ;; *) exit 2 ;; esac
done
[ "$(id -u)" -eq 0 ] || { echo "needs root" >&2; exit 1; }
make -s -j2 build/container-tool || exit 1
TOOL=$PWD/build/container-tool
T=$(mktemp -d /tmp/tessera-bench-ct.XXXXXX)
. bench/lib/peers.sh
CG=tessera-bench-$$
BR=tb$(($$ % 100000))
CT=("$TOOL" --state "$T/state" --runc-root "$T/runc" --cgroup-parent "$CG" --netns-dir "$T/netns"
        --bridge "$BR" --cidr "10.253.$(($$ % 250)).1/24")

cleanup() {
        local id
        for id in $(ls "$T/state/containers" 2>/dev/null); do "${CT[@]}" destroy "$id" 0 >/dev/null 2>&1; done
        for id in $(runc --root "$T/runc" list -q 2>/dev/null); do runc --root "$T/runc" delete -f "$id"; done
        peers_cleanup
        ip link del "$BR" 2>/dev/null
        rm -rf "$T"
}
trap cleanup EXIT

peers_rootfs

# ---- Tessera: container_create() until running ----
# Two figures: the call itself (what the agent, a running daemon, pays:
# container-tool reports it), and the wall time of the whole container-tool
# process (adds its own exec and library loading, as `runc` and `docker`
# pay theirs).
bench_tessera() { # NET LABEL
        local i t0 id
        : >"$T/s-tessera-$1"
        : >"$T/s-tessera-wall-$1"
        for i in $(seq 1 "$N"); do
                id=b$1$i
                t0=$(now)
                "${CT[@]}" create "$id" --layer "$T/rootfs" --net "$1" --pids 64 --memory $((64 << 20)) -- \
                        sleep 1000 >"$T/out" || { cat "$T/out"; return 1; }
                echo $(($(now) - t0)) >>"$T/s-tessera-wall-$1"
                echo $(($(sed -n 's/^created in \([0-9]*\) us$/\1/p' "$T/out") * 1000)) >>"$T/s-tessera-$1"
                "${CT[@]}" destroy "$id" 0 >/dev/null && "${CT[@]}" remove "$id" >/dev/null
        done
        stats "$2, the call" "$T/s-tessera-$1"
        TESS_CALL=$P50
        stats "$2, whole process" "$T/s-tessera-wall-$1"
}
bench_tessera none "tessera (network none)" || exit 1
TESS=$TESS_CALL
TESS_WALL=$P50
bench_tessera bridge "tessera (bridge + veth)" || exit 1
TESS_BR=$TESS_CALL

# ---- bare runc run -d of the same config.json (plain rootfs dir, no overlay) ----
peers_runc_config "$T/state" "${CT[@]}" || exit 1
peers_runc "$N" "$T/config.json.in" "$T/s-runc" || exit 1
stats "runc run -d (same config.json)" "$T/s-runc"
RUNC=$P50

# ---- docker run -d on Debian's engine ----
peers_bench_docker "$N"

echo
printf 'ratio tessera call/runc (p50):          %.2f\n' "$(echo "$TESS / $RUNC" | bc -l)"
printf 'ratio tessera process/runc (p50):       %.2f\n' "$(echo "$TESS_WALL / $RUNC" | bc -l)"
printf 'ratio tessera bridge call/runc (p50):   %.2f\n' "$(echo "$TESS_BR / $RUNC" | bc -l)"
[ -n "$DOCK" ] && printf 'ratio tessera call/docker (p50):        %.2f\n' "$(echo "$TESS / $DOCK" | bc -l)"
exit 0
