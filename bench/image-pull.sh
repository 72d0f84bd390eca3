#!/bin/bash
# bench/image-pull.sh - pull of the python 3.11 test image (images/
# python3.11.recipe, built or taken from the cache) from Debian's
# docker-registry on loopback, by the agent's own code (`tessera agent image
# pull`, src/registry/registry.c into an empty store) beside `skopeo copy` of
# the same image into an OCI directory; target: the pull <= 1.2x skopeo.
# Nothing fails on timing.
#
# The two do not do the same work: the agent's pull also unpacks the layer
# (gunzip, the diff_id's SHA-256, one file per entry, syncfs), which it
# needs to run the image; skopeo only downloads, verifies and fsyncs the
# blobs.  So four commands run, each into an empty target:
#
#   pull        tessera agent image pull: download + verify + unpack
#   skopeo      skopeo copy docker://... oci:DIR
#   pull-dl     the same pull into a store that already has the layer
#               unpacked (an empty layers/sha256/<diff_id> directory): it
#               downloads, verifies and commits every blob and unpacks
#               nothing - the like-for-like peer of skopeo
#   skopeo+tar  skopeo copy, then tar -xzf of the layer blob and sync - the
#               like-for-like peer of pull
#
# ROUNDS rounds (default 5), the order of the four rotating from one round
# to the next; medians.  Before every command the previous targets are
# removed and, with DROP=1 (default), the page cache is dropped (sync; echo
# 3 > drop_caches), so that every command starts cold: the registry reads
# its blobs from disk for each alike, and no command pays for writing back
# what the one before it left dirty.
#
# Where the targets live: FS=loop (default) a fresh ext4 (mkfs.ext4's
# defaults: with a journal) on a loop device over a file in the scratch
# directory, made for the run; FS=dir the scratch directory itself.  This
# project's VMs have ext4 *without* a journal as their root, where ext4
# skips, for every new inode, the inodes deleted in the last 12 hours whose
# inode table blocks are cached (recently_deleted()): after a few runs
# that delete tens of thousands of files, making a file costs ~10x more,
# and the figures depend on what ran before.  A journaled ext4, as an
# agent's disk normally is, does not do that.  Needs root.
#
# usage: [ROUNDS=5] [DROP=1] [FS=loop|dir] [BUILD=build] bench/image-pull.sh
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
ROUNDS=${ROUNDS:-5}
DROP=${DROP:-1}
FS=${FS:-loop}
[ "$(id -u)" = 0 ] || { echo "image-pull.sh: needs root (layers keep their owners; the page cache is dropped)" >&2; exit 1; }
for tool in docker-registry skopeo jq tar curl mkfs.ext4 losetup; do
        command -v $tool >/dev/null || { echo "image-pull.sh: needs $tool (scripts/install-deps.sh test)" >&2; exit 1; }
done
make -s BUILD="$BUILD" all >/dev/null
TESSERA=$PWD/$BUILD/tessera
WORK=$(mktemp -d "${TMPDIR:-/var/tmp}/tessera-pullbench.XXXXXX")
REG_PID=
LOOP=
cleanup() {
        [ -n "$REG_PID" ] && kill $REG_PID
        wait 2>/dev/null
        if [ -n "$LOOP" ]; then
                umount "$WORK/fs" || true
                losetup -d "$LOOP" || true
        fi
        rm -rf "$WORK"
}
trap cleanup EXIT

# ---- where the targets go ----

T=$WORK
if [ "$FS" = loop ]; then
        truncate -s 4G "$WORK/fs.img"
        mkfs.ext4 -q -F "$WORK/fs.img"
        LOOP=$(losetup -f --show --direct-io=on "$WORK/fs.img" 2>/dev/null || losetup -f --show "$WORK/fs.img")
        mkdir "$WORK/fs"
        mount "$LOOP" "$WORK/fs"
        T=$WORK/fs
fi

# ---- the image, and a registry holding it ----

IMAGE=$(TESSERA=$TESSERA scripts/test-images/build.sh python 2>/dev/null | tail -n 1)
[ -f "$IMAGE/index.json" ] || { echo "image-pull.sh: building the python image failed" >&2; exit 1; }
blob() { echo "$IMAGE/blobs/sha256/${1#sha256:}"; }
MANIFEST=$(jq -r '.manifests[0].digest' "$IMAGE/index.json")
CONFIG=$(jq -r '.config.digest' "$(blob "$MANIFEST")")
LAYERS=$(jq -r '.layers[].digest' "$(blob "$MANIFEST")")
DIFF_IDS=$(jq -r '.rootfs.diff_ids[]' "$(blob "$CONFIG")")
BYTES=$(jq '[.layers[].size] | add' "$(blob "$MANIFEST")")

registry_start() {
        local port
        for _ in 1 2 3 4 5; do
                port=$((30000 + RANDOM % 20000))
                printf 'version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: %s\nhttp:\n  addr: 127.0.0.1:%s\n' \
                        "$WORK/registry" "$port" >"$WORK/registry.yml"
                env -i PATH="$PATH" HOME=/ docker-registry serve "$WORK/registry.yml" </dev/null >"$WORK/registry.log" 2>&1 &
                REG_PID=$!
                for _ in $(seq 1 100); do
                        curl -sf -o /dev/null "http://127.0.0.1:$port/v2/" && { REGISTRY=127.0.0.1:$port; return 0; }
                        kill -0 $REG_PID 2>/dev/null || break
                        sleep 0.1
                done
                kill $REG_PID 2>/dev/null && wait $REG_PID 2>/dev/null
                REG_PID=
        done
        echo "image-pull.sh: docker-registry did not start:" >&2
        tail -n 5 "$WORK/registry.log" >&2
        return 1
}
registry_start
REF=$REGISTRY/python:3.11
"$TESSERA" image push "$IMAGE" "$REF" >/dev/null 2>&1 || { echo "image-pull.sh: the push failed" >&2; exit 1; }

# ---- the four commands ----

run_pull() { "$TESSERA" agent image --store "$T/store" pull "$REF"; }
run_skopeo() { skopeo copy --quiet --insecure-policy --src-tls-verify=false "docker://$REF" "oci:$T/oci:python:3.11"; }
run_pull_dl() {
        local d
        for d in $DIFF_IDS; do mkdir -p "$T/store/layers/sha256/${d#sha256:}"; done
        t0=$(now) # (the store is prepared outside the time)
        run_pull
}
run_skopeo_tar() {
        local l
        run_skopeo
        mkdir "$T/rootfs"
        for l in $LAYERS; do tar -C "$T/rootfs" --numeric-owner --warning=no-unknown-keyword \
                -xzf "$T/oci/blobs/sha256/${l#sha256:}"; done
        sync
}

now() { date +%s%N; }
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
seconds() { awk -v n="$1" 'BEGIN { printf "%.2f", n / 1e9 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

# one NAME: clean targets, cold cache, time the command into $WORK/NAME.t
one() {
        rm -rf "$T/store" "$T/oci" "$T/rootfs"
        if [ "$DROP" = 1 ]; then
                sync
                echo 3 >/proc/sys/vm/drop_caches
        fi
        t0=$(now)
        "run_${1//-/_}" >/dev/null
        echo $(($(now) - t0)) >>"$WORK/$1.t"
}

LOAD=$(cut -d' ' -f1-3 /proc/loadavg)
PEERS=(pull skopeo pull-dl skopeo-tar)
for ((i = 0; i < ROUNDS; i++)); do
        for ((k = 0; k < ${#PEERS[@]}; k++)); do
                one "${PEERS[(i + k) % ${#PEERS[@]}]}"
        done
done
for p in "${PEERS[@]}"; do
        declare "M_${p//-/_}=$(median <"$WORK/$p.t")"
done

echo "image: $REF ($(echo "$LAYERS" | wc -w) layer(s), $(awk -v b="$BYTES" 'BEGIN { printf "%.1f", b / 1048576 }') MiB compressed),"
echo "  $(nproc) cores, targets on $([ "$FS" = loop ] && echo "a fresh ext4 (journal) on $LOOP" || echo "$(df --output=fstype "$T" | tail -1) at $T"), median of $ROUNDS rounds,"
echo "  page cache dropped before each: $([ "$DROP" = 1 ] && echo yes || echo no), load average before: $LOAD"
printf '%-62s %7s s\n' "tessera agent image pull (download + verify + unpack + sync)" "$(seconds "$M_pull")" \
        "skopeo copy docker:// oci: (download + verify + fsync)" "$(seconds "$M_skopeo")" \
        "tessera pull, layer already unpacked (download + verify only)" "$(seconds "$M_pull_dl")" \
        "skopeo copy, then tar -xzf of the layer and sync" "$(seconds "$M_skopeo_tar")"
echo "pull / skopeo copy:                $(ratio "$M_pull" "$M_skopeo")x  (target <= 1.2x)"
echo "pull download only / skopeo copy:  $(ratio "$M_pull_dl" "$M_skopeo")x  (like for like: no unpack)"
echo "pull / (skopeo copy + tar):        $(ratio "$M_pull" "$M_skopeo_tar")x  (like for like: both unpack)"
