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
CG=tessera-bench-$$
BR=tb$(($$ % 100000))
DOCKER=/usr/bin/docker
DOCKERD=/usr/sbin/dockerd
DOCKERD_PID=
CT=("$TOOL" --state "$T/state" --runc-root "$T/runc" --cgroup-parent "$CG" --netns-dir "$T/netns"
        --bridge "$BR" --cidr "10.253.$(($$ % 250)).1/24")

cleanup() {
        local id c
        for id in $(ls "$T/state/containers" 2>/dev/null); do "${CT[@]}" destroy "$id" 0 >/dev/null 2>&1; done
        for id in $(runc --root "$T/runc" list -q 2>/dev/null); do runc --root "$T/runc" delete -f "$id"; done
        for id in $(runc --root "$T/bare" list -q 2>/dev/null); do runc --root "$T/bare" delete -f "$id"; done
        if [ -n "$DOCKERD_PID" ]; then
                $DOCKER -H "unix://$T/docker.sock" rm -f $($DOCKER -H "unix://$T/docker.sock" ps -aq) >/dev/null 2>&1
                kill "$DOCKERD_PID"
                wait "$DOCKERD_PID" 2>/dev/null
        fi
        grep -F " $T/" /proc/mounts | awk '{print $2}' | sort -r | while read -r m; do umount -l "$m"; done
        ip link del "$BR" 2>/dev/null
        for c in /sys/fs/cgroup/*/"$CG" /sys/fs/cgroup/"$CG"; do
                [ -d "$c" ] && find "$c" -depth -type d -exec rmdir {} + 2>/dev/null
        done
        rm -rf "$T"
}
trap cleanup EXIT

# a busybox root filesystem
mkdir -p "$T/rootfs/bin" "$T/rootfs/etc" "$T/rootfs/tmp"
cp /bin/busybox "$T/rootfs/bin/"
for a in $(/bin/busybox --list); do [ "$a" = busybox ] || ln -s busybox "$T/rootfs/bin/$a"; done

now() { date +%s%N; }
# stats LABEL FILE: print p50/p95 (ms) of the nanosecond samples, set P50
stats() {
        local n p50 p95
        n=$(wc -l <"$2")
        p50=$(sort -n "$2" | sed -n "$(((n + 1) / 2))p")
        p95=$(sort -n "$2" | sed -n "$(((n * 95 + 99) / 100))p")
        printf '%-44s n=%-3d p50 %7.1f ms   p95 %7.1f ms\n' "$1" "$n" "$(echo "$p50 / 1000000" | bc -l)" \
                "$(echo "$p95 / 1000000" | bc -l)"
        P50=$p50
}

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
"${CT[@]}" create cfg --layer "$T/rootfs" --net none --pids 64 --memory $((64 << 20)) -- sleep 1000 >/dev/null
mkdir -p "$T/bundle"
jq --arg root "$T/rootfs" '.root.path = $root | .mounts |= map(select(.destination | startswith("/etc/") or
        startswith("/opt/tessera") | not))' "$T/state/containers/cfg/bundle/config.json" >"$T/config.json.in"
"${CT[@]}" destroy cfg 0 >/dev/null && "${CT[@]}" remove cfg >/dev/null
: >"$T/s-runc"
for i in $(seq 1 "$N"); do
        jq --arg cg "/$CG/bare$i" '.linux.cgroupsPath = $cg' "$T/config.json.in" >"$T/bundle/config.json"
        t0=$(now)
        runc --root "$T/bare" run -d --bundle "$T/bundle" "bare$i" </dev/null >/dev/null 2>"$T/out" ||
                { cat "$T/out"; exit 1; }
        echo $(($(now) - t0)) >>"$T/s-runc"
        runc --root "$T/bare" delete -f "bare$i"
done
stats "runc run -d (same config.json)" "$T/s-runc"
RUNC=$P50

# ---- docker run -d on Debian's engine ----
DOCK=
if [ -x $DOCKERD ] && [ -x $DOCKER ]; then
        $DOCKERD --iptables=false --bridge=none --data-root "$T/docker" --exec-root "$T/docker-exec" \
                -H "unix://$T/docker.sock" --pidfile "$T/docker.pid" >"$T/dockerd.log" 2>&1 &
        DOCKERD_PID=$!
        D=($DOCKER -H "unix://$T/docker.sock")
        for _ in $(seq 1 100); do "${D[@]}" info >/dev/null 2>&1 && break; sleep 0.2; done
        if tar -C "$T/rootfs" -c . | "${D[@]}" import - tessera-bench/busybox >/dev/null; then
                : >"$T/s-docker"
                for i in $(seq 1 "$N"); do
                        t0=$(now)
                        "${D[@]}" run -d --network none --pids-limit 64 --memory 64m --name "d$i" \
                                tessera-bench/busybox sleep 1000 >/dev/null || break
                        echo $(($(now) - t0)) >>"$T/s-docker"
                        "${D[@]}" rm -f "d$i" >/dev/null
                done
                stats "docker run -d (network none)" "$T/s-docker"
                DOCK=$P50
        else
                echo "docker: the engine did not start; see its log:" >&2
                tail -n 5 "$T/dockerd.log" >&2
        fi
else
        echo "docker: not installed (apt-get install docker.io), skipped"
fi

echo
printf 'ratio tessera call/runc (p50):          %.2f\n' "$(echo "$TESS / $RUNC" | bc -l)"
printf 'ratio tessera process/runc (p50):       %.2f\n' "$(echo "$TESS_WALL / $RUNC" | bc -l)"
printf 'ratio tessera bridge call/runc (p50):   %.2f\n' "$(echo "$TESS_BR / $RUNC" | bc -l)"
[ -n "$DOCK" ] && printf 'ratio tessera call/docker (p50):        %.2f\n' "$(echo "$TESS / $DOCK" | bc -l)"
exit 0
