#!/bin/bash
# cleanup.sh DIR - undo everything a chaos run with directory DIR made: its
# processes (by the pids it recorded), the agents' containers, the agents'
# tmpfs, PostgreSQL, the network namespaces, veths and bridge.
#
# run.sh calls it at exit (normal, error, INT, TERM) and from a guardian
# process that outlives run.sh, so a run killed with SIGKILL is undone as
# well.  Idempotent: a second call finds nothing left.
set -u

dir=${1:?usage: cleanup.sh DIR}
[ -d "$dir" ] || exit 0
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$ROOT/build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
[ -f "$dir/env" ] && . "$dir/env"

# the workload's and fault schedule's loops first (they would restart things)
for f in "$dir"/pids/loop-* "$dir"/pids/fault-*; do
        [ -f "$f" ] || continue
        pid=$(cat "$f")
        [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null
done
sleep 0.2
# everything else it started: continued (a stopped process cannot die of
# TERM), then killed
for f in "$dir"/pids/*; do
        [ -f "$f" ] || continue
        pid=$(cat "$f")
        [ -n "$pid" ] || continue
        kill -CONT "$pid" 2>/dev/null
        kill -KILL "$pid" 2>/dev/null
done
# (python and curl children of the workload's loops die with their loops'
# process group)
for f in "$dir"/pids/loop-*; do
        [ -f "$f" ] || continue
        pid=$(cat "$f")
        [ -n "$pid" ] && kill -KILL -- -"$pid" 2>/dev/null
done

# the agents' containers (runc state and the kernels' network pieces)
for st in "$dir"/a*/state; do
        [ -d "$st/containers" ] || continue
        node=$(basename "$(dirname "$st")")
        ns=chaos-${CHAOS_ID:-x}-$node
        nsx=()
        [ -e "/run/netns/$ns" ] && nsx=(nsenter --net="/run/netns/$ns")
        for c in "$st"/containers/*; do
                [ -d "$c" ] || continue
                c=$(basename "$c")
                "${nsx[@]}" "$BUILD/container-tool" --state "$st" destroy "$c" 1 >/dev/null 2>&1
                "${nsx[@]}" "$BUILD/container-tool" --state "$st" remove "$c" >/dev/null 2>&1
        done
done

# PostgreSQL
if [ -f "$dir/pg/data/postmaster.pid" ]; then
        bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -rV | head -n 1)
        runuser -u postgres -- "$bin/pg_ctl" -D "$dir/pg/data" -m immediate -w stop >/dev/null 2>&1
fi

# mounts (the agents' tmpfs), namespaces, links
if [ -f "$dir/created.mounts" ]; then
        while read -r m; do
                umount -l "$m" 2>/dev/null
        done <"$dir/created.mounts"
        rm -f "$dir/created.mounts"
fi
if [ -f "$dir/created.netns" ]; then
        while read -r ns; do
                [ -e "/run/netns/$ns" ] || continue
                rm -f /run/tessera/bridges/"$(stat -L -c %i "/run/netns/$ns")"-*.lock
                ip netns del "$ns" 2>/dev/null
        done <"$dir/created.netns"
        rm -f "$dir/created.netns"
fi
if [ -f "$dir/created.links" ]; then
        while read -r l; do
                ip link del "$l" 2>/dev/null
        done <"$dir/created.links"
        rm -f "$dir/created.links"
fi
rm -rf "$dir/pg/data"
# (so that a second call, the guardian's after run.sh's, signals no pid
# that another process may have taken since)
rm -f "$dir"/pids/*
exit 0
