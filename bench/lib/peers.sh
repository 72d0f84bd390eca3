# shellcheck shell=bash
# bench/lib/peers.sh - what the container benchmarks share: a busybox root
# filesystem, percentiles, and the peers Tessera is measured against (a
# bare `runc run -d` and `docker run -d` on Debian's docker.io engine).
# Source it after setting T (a scratch directory the caller removes) and CG
# (a cgroup name of this run); call peers_cleanup from the caller's trap.
#
#   peers_rootfs                    $T/rootfs: busybox-static and its applets
#   now                             nanoseconds (wall clock)
#   stats LABEL FILE                p50/p95 of the samples (ns) in FILE; sets P50
#   peers_runc_config STATE CT...   $T/config.json.in: the config.json
#                                   container-tool (the command CT..., its
#                                   state in STATE) writes for a container
#                                   (network none, 64 pids, 64 MiB, `sleep
#                                   1000`), on $T/rootfs without overlay
#   peers_runc N CONFIG OUT [RT]    N x `runc run -d` (or RT's) of the bundle whose
#                                   config.json is CONFIG (root.path pointing
#                                   to $T/rootfs); samples to OUT
#   peers_dockerd_start             dockerd --iptables=false --bridge=none on
#                                   $T/docker.sock with busybox imported as
#                                   tessera-bench/busybox; false if it cannot
#   peers_docker N OUT              N x `docker run -d --network none`
#   peers_bench_docker N            the engine, N runs, their stats; sets
#                                   DOCK to the p50 (empty without docker)
#   peers_cleanup                   removes what the above left

DOCKER=/usr/bin/docker
DOCKERD=/usr/sbin/dockerd
DOCKERD_PID=

now() { date +%s%N; }

peers_rootfs() {
        mkdir -p "$T/rootfs/bin" "$T/rootfs/etc" "$T/rootfs/tmp"
        cp /bin/busybox "$T/rootfs/bin/"
        for a in $(/bin/busybox --list); do [ "$a" = busybox ] || ln -s busybox "$T/rootfs/bin/$a"; done
}

stats() {
        local n p50 p95
        n=$(wc -l <"$2")
        p50=$(sort -n "$2" | sed -n "$(((n + 1) / 2))p")
        p95=$(sort -n "$2" | sed -n "$(((n * 95 + 99) / 100))p")
        printf '%-44s n=%-3d p50 %7.1f ms   p95 %7.1f ms\n' "$1" "$n" "$(echo "$p50 / 1000000" | bc -l)" \
                "$(echo "$p95 / 1000000" | bc -l)"
        P50=$p50
}

peers_runc_config() { # STATE CONTAINER-TOOL-COMMAND...
        local state=$1
        shift
        "$@" create cfg --layer "$T/rootfs" --net none --pids 64 --memory $((64 << 20)) -- sleep 1000 >/dev/null ||
                return 1
        jq --arg root "$T/rootfs" '.root.path = $root | .mounts |= map(select(.destination | startswith("/etc/") or
                startswith("/opt/tessera") | not))' "$state/containers/cfg/bundle/config.json" >"$T/config.json.in"
        "$@" destroy cfg 0 >/dev/null && "$@" remove cfg >/dev/null
}

peers_runc() { # N CONFIG OUT [RUNTIME (default runc)]
        local i t0 rt=${4:-runc}
        mkdir -p "$T/bundle"
        : >"$3"
        for i in $(seq 1 "$1"); do
                jq --arg cg "/$CG/bare$i" '.linux.cgroupsPath = $cg' "$2" >"$T/bundle/config.json"
                t0=$(now)
                "$rt" --root "$T/bare-$rt" run -d --bundle "$T/bundle" "bare$i" </dev/null >/dev/null 2>"$T/out" ||
                        { cat "$T/out"; return 1; }
                echo $(($(now) - t0)) >>"$3"
                "$rt" --root "$T/bare-$rt" delete -f "bare$i"
        done
}

peers_dockerd_start() {
        [ -x $DOCKERD ] && [ -x $DOCKER ] || { echo "docker: not installed (apt-get install docker.io), skipped"; return 1; }
        $DOCKERD --iptables=false --bridge=none --data-root "$T/docker" --exec-root "$T/docker-exec" \
                -H "unix://$T/docker.sock" --pidfile "$T/docker.pid" >"$T/dockerd.log" 2>&1 &
        DOCKERD_PID=$!
        D=($DOCKER -H "unix://$T/docker.sock")
        for _ in $(seq 1 150); do "${D[@]}" info >/dev/null 2>&1 && break; sleep 0.2; done
        if ! tar -C "$T/rootfs" -c . | "${D[@]}" import - tessera-bench/busybox >/dev/null; then
                echo "docker: the engine did not start; see its log:" >&2
                tail -n 5 "$T/dockerd.log" >&2
                return 1
        fi
}

peers_docker() { # N OUT
        local i t0
        : >"$2"
        for i in $(seq 1 "$1"); do
                t0=$(now)
                "${D[@]}" run -d --network none --pids-limit 64 --memory 64m --name "d$i" \
                        tessera-bench/busybox sleep 1000 >/dev/null || return 1
                echo $(($(now) - t0)) >>"$2"
                "${D[@]}" rm -f "d$i" >/dev/null
        done
}

peers_bench_docker() { # N
        DOCK=
        if peers_dockerd_start; then
                peers_docker "$1" "$T/s-docker" && stats "docker run -d (network none)" "$T/s-docker" && DOCK=$P50
        fi
}

peers_cleanup() {
        local id c rt
        for rt in runc crun; do
                command -v $rt >/dev/null || continue
                for id in $($rt --root "$T/bare-$rt" list -q 2>/dev/null); do $rt --root "$T/bare-$rt" delete -f "$id"; done
        done
        if [ -n "$DOCKERD_PID" ]; then
                "${D[@]}" rm -f $("${D[@]}" ps -aq) >/dev/null 2>&1
                kill "$DOCKERD_PID"
                wait "$DOCKERD_PID" 2>/dev/null
                DOCKERD_PID=
        fi
        grep -F " $T/" /proc/mounts | awk '{print $2}' | sort -r | while read -r m; do umount -l "$m"; done
        for c in /sys/fs/cgroup/*/"$CG" /sys/fs/cgroup/"$CG"; do
                [ -d "$c" ] && find "$c" -depth -type d -exec rmdir {} + 2>/dev/null
        done
}
