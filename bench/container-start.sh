#!/bin/bash
# bench/container-start.sh - how long a container takes to start: Tessera's
# container_create() (bridge network and none; in a user namespace, the
# default, and without one: what the namespace and its idmapped mounts
# cost, docs/design/containers.md; with the writable layer on a filesystem
# of its own, the agent's default, and on a plain directory), a bare
# `runc run -d` of an
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
CT_ALL=("$TOOL" --state "$T/state" --runc-root "$T/runc" --cgroup-parent "$CG" --netns-dir "$T/netns"
        --bridge "$BR" --cidr "10.253.$(($$ % 250)).1/24")
CT=("${CT_ALL[@]}")

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
# One start of container ID on NET with the user namespace USERNS; samples
# appended to $T/s-tessera-SUFFIX and $T/s-tessera-wall-SUFFIX.
start_one() { # ID NET USERNS SUFFIX [CREATE OPTION...]
        local t0 id=$1 net=$2 suffix=$4 ct=("${CT_ALL[@]}" --userns "$3")
        shift 4
        t0=$(now)
        "${ct[@]}" create "$id" --layer "$T/rootfs" --net "$net" --pids 64 --memory $((64 << 20)) "$@" -- \
                sleep 1000 >"$T/out" || { cat "$T/out"; return 1; }
        echo $(($(now) - t0)) >>"$T/s-tessera-wall-$suffix"
        echo $(($(sed -n 's/^created in \([0-9]*\) us$/\1/p' "$T/out") * 1000)) >>"$T/s-tessera-$suffix"
        "${ct[@]}" destroy "$id" 0 >/dev/null && "${ct[@]}" remove "$id" >/dev/null
}
# With and without the user namespace, one after the other in each round,
# so that the machine's load weighs on both alike.
bench_tessera() { # NET LABEL
        local i
        : >"$T/s-tessera-$1" >"$T/s-tessera-wall-$1" >"$T/s-tessera-$1-off" >"$T/s-tessera-wall-$1-off"
        for i in $(seq 1 "$N"); do
                start_one "b$1$i" "$1" on "$1" && start_one "o$1$i" "$1" off "$1-off" || return 1
        done
        stats "$2, the call" "$T/s-tessera-$1-off"
        TESS_OFF=$P50
        stats "$2 + user namespace, the call" "$T/s-tessera-$1"
        TESS_CALL=$P50
        stats "$2 + user namespace, whole process" "$T/s-tessera-wall-$1"
}
bench_tessera none "tessera (network none)" || exit 1
TESS=$TESS_CALL
TESS_WALL=$P50
TESS_NOUSERNS=$TESS_OFF
# The writable layer on a filesystem of its own (the agent's default
# container_disk, 16 GiB: a sparse file, mkfs.ext4, a loop mount), against
# the plain directory, alternating.
bench_disk() {
        local i
        : >"$T/s-tessera-disk" >"$T/s-tessera-wall-disk" >"$T/s-tessera-nodisk" >"$T/s-tessera-wall-nodisk"
        for i in $(seq 1 "$N"); do
                start_one "d$i" none on disk --disk $((16 << 30)) && start_one "p$i" none on nodisk || return 1
        done
        stats "tessera (network none, user namespace), writable layer of 16 GiB, the call" "$T/s-tessera-disk"
        TESS_DISK=$P50
        stats "the same, writable layer a plain directory, the call" "$T/s-tessera-nodisk"
        TESS_NODISK=$P50
}
bench_disk || exit 1
bench_tessera bridge "tessera (bridge + veth)" || exit 1
TESS_BR=$TESS_CALL
TESS_BR_NOUSERNS=$TESS_OFF
CT=("${CT_ALL[@]}" --userns off) # the bare runtime's bundle as before: no user namespace

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
printf 'user namespace, network none (p50):     %+.1f ms (userns/off %.2f)\n' \
        "$(echo "($TESS - $TESS_NOUSERNS) / 1000000" | bc -l)" "$(echo "$TESS / $TESS_NOUSERNS" | bc -l)"
printf 'user namespace, bridge (p50):           %+.1f ms (userns/off %.2f)\n' \
        "$(echo "($TESS_BR - $TESS_BR_NOUSERNS) / 1000000" | bc -l)" "$(echo "$TESS_BR / $TESS_BR_NOUSERNS" | bc -l)"
printf 'writable layer of its own (p50):        %+.1f ms (disk/plain %.2f)\n' \
        "$(echo "($TESS_DISK - $TESS_NODISK) / 1000000" | bc -l)" "$(echo "$TESS_DISK / $TESS_NODISK" | bc -l)"
[ -n "$DOCK" ] && printf 'ratio tessera call/docker (p50):        %.2f\n' "$(echo "$TESS / $DOCK" | bc -l)"
exit 0
