#!/bin/bash
# bench/session-commit.sh - commit of a running session with SIZE MiB of
# changes (default 200) to a private image, beside `tar` of the same upper
# directory, in one run on the same disk.  Nothing fails on timing.
#
# The changes are real files: host libraries and data (/usr/lib, /usr/share)
# copied into the container's root as root in it would install packages
# (through its overlay mount, so they land in its upper dir), plus a few
# deletions.  Each round:
#   - Tessera: `tessera session commit NAME --tag T`, which POSTs
#     /session/{name}/commit and follows the task's events to its end (the
#     agent snapshots the upper dir into a zstd layer, uploading it to the
#     manager's registry as it is written; the manager registers the image;
#     the agent unpacks it for itself afterwards): the user's wait;
#   - tar -cf: the upper dir into a file (synced), the bare snapshot;
#   - tar -czf: the same through gzip (default level 6), a compressed layer
#     as `docker commit`'s push makes.
# Rounds are interleaved, medians compared; the agent's own log line gives
# the commit's parts.  Targets: commit <= 10 s, <= 1.5x tar -cf.
#
# usage: [ROUNDS=5] bench/session-commit.sh [SIZE_MIB]
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
MIB=${1:-200}
ROUNDS=${ROUNDS:-5}
[ "$(id -u)" -eq 0 ] || { echo "needs root" >&2; exit 1; }
make -s -j2 all build/test-tool || exit 1
T=$(mktemp -d /tmp/tessera-bench-commit.XXXXXX)
. bench/lib/dev.sh
trap 'dev_cleanup; rm -rf "$T"' EXIT

now() { date +%s.%N; }
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f\n", b - a }'; }

echo "load: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"
dev_start || exit 1
api PATCH /admin/keypair-policies/default '{"max_customized_image_count": 0}' >/dev/null
api POST /session "$(session_body bench 1 256m)" >/dev/null
for _ in $(seq 1 100); do
        api GET '/sessions?name=bench' | jq -e '.items[0].status == "RUNNING"' >/dev/null && break
        sleep 0.1
done
K=$(api GET '/sessions?name=bench' | jq -r '.items[0].containerId')
C=$T/state/agent/containers/$K
[ -d "$C/bundle/rootfs/bin" ] || { echo "no running session" >&2; exit 1; }

# SIZE MiB of host files into the container's /usr/local, as root would
find /usr/lib /usr/share -xdev -type f -size +4k -readable 2>/dev/null | sort >"$T/candidates"
total=0
: >"$T/files"
while IFS= read -r f; do
        s=$(stat -c %s "$f")
        [ $((total + s)) -le $((MIB * 1048576)) ] || continue
        echo "$f" >>"$T/files"
        total=$((total + s))
        [ "$total" -ge $((MIB * 1048576 * 99 / 100)) ] && break
done <"$T/candidates"
mkdir -p "$C/bundle/rootfs/usr/local"
tar -cf - -T "$T/files" 2>/dev/null | tar -xf - -C "$C/bundle/rootfs/usr/local" 2>/dev/null
rm -f "$C/bundle/rootfs/etc/group"
sync
UPPER_MIB=$(du -sm "$C/rw/upper" | cut -f1)
echo "changes: $(wc -l <"$T/files") files, $((total / 1048576)) MiB of file data; upper dir $UPPER_MIB MiB"

: >"$T/commit.t"; : >"$T/tar.t"; : >"$T/targz.t"
for ((i = 1; i <= ROUNDS; i++)); do
        t0=$(now)
        tar -C "$C/rw/upper" -cf "$T/upper.tar" . && sync
        t1=$(now)
        elapsed "$t0" "$t1" >>"$T/tar.t"
        rm -f "$T/upper.tar"
        t0=$(now)
        tar -C "$C/rw/upper" -czf "$T/upper.tgz" . && sync
        t1=$(now)
        elapsed "$t0" "$t1" >>"$T/targz.t"
        rm -f "$T/upper.tgz"
        echo "$i" >"$C/bundle/rootfs/usr/local/round" # a new layer each round: no blob is reused
        sync
        t0=$(now)
        BACKEND_ENDPOINT=http://127.0.0.1:$PORT BACKEND_ACCESS_KEY=$AK BACKEND_SECRET_KEY=$SK \
                "$TESSERA" session commit bench --tag "r$i" >"$T/commit.out" 2>&1 ||
                { echo "commit failed: $(cat "$T/commit.out")" >&2; exit 1; }
        t1=$(now)
        elapsed "$t0" "$t1" >>"$T/commit.t"
        # the agent then unpacks the layer for itself: not the user's wait,
        # but not to be measured into the next round's tar either
        for _ in $(seq 1 600); do
                grep -q "busybox:r$i stored here" "$T/dev.log" && break
                sleep 0.1
        done
done

COMMIT=$(median <"$T/commit.t")
TAR=$(median <"$T/tar.t")
TARGZ=$(median <"$T/targz.t")
echo "rounds (s): commit $(tr '\n' ' ' <"$T/commit.t")| tar -cf $(tr '\n' ' ' <"$T/tar.t")| tar -czf $(tr '\n' ' ' <"$T/targz.t")"
grep -o 'commit of .* in [0-9.]* s' "$T/dev.log" | sed 's/^/agent: /'
grep -o 'commit [^ ]* phases: .*' "$T/dev.log" | sed 's/^/agent: /'
printf '%-34s %8s %10s\n' "median of $ROUNDS rounds" seconds "vs tar -cf"
printf '%-34s %8.2f %9.2fx\n' "tar -cf of the upper dir" "$TAR" 1
printf '%-34s %8.2f %9.2fx\n' "tar -czf of the upper dir" "$TARGZ" "$(awk -v a="$TARGZ" -v b="$TAR" 'BEGIN { print a / b }')"
printf '%-34s %8.2f %9.2fx\n' "tessera session commit" "$COMMIT" "$(awk -v a="$COMMIT" -v b="$TAR" 'BEGIN { print a / b }')"
echo "targets: commit <= 10 s ($(awk -v a="$COMMIT" 'BEGIN { print (a <= 10) ? "met" : "missed" }')), <= 1.5x tar -cf ($(awk -v a="$COMMIT" -v b="$TAR" 'BEGIN { print (a / b <= 1.5) ? "met" : "missed" }'))"
