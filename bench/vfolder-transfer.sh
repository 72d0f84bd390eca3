#!/bin/bash
# bench/vfolder-transfer.sh - folder transfer benchmarks (nothing fails on
# timing).  In one run, on the same disk:
#   1. upload of a 1 GiB file through the API over loopback with
#      `tessera vfolder upload` (tus, 16 MiB chunks) vs `cp` of the same
#      file, each followed by sync, target >= 70 % of cp;
#   2. download of it with `tessera vfolder download` (GET
#      /folders/_/download, fsynced) vs cp, same target;
#   3. listing a folder of 100,000 files (GET /folders/{name}/files),
#      target <= 1 s.
# usage: [ROUNDS=5] BUILD=build/release bench/vfolder-transfer.sh [MiB]   (default 1024)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build/release}
MIB=${1:-1024}
make -s BUILD="$BUILD" all "$BUILD/test-tool" >/dev/null
TESSERA=$PWD/$BUILD/tessera
TT=$PWD/$BUILD/test-tool
WORK=$(mktemp -d "${TMPDIR:-/var/tmp}/tessera-vfbench.XXXXXX")
AK=AKIABENCHBENCHBENCH0
SK=benchbenchbenchbenchbenchbenchbenchbench
PORT=$((30000 + RANDOM % 20000))
EP=http://127.0.0.1:$PORT
trap 'kill $MPID 2>/dev/null; wait 2>/dev/null; rm -rf "$WORK"' EXIT

TESSERA_ADMIN_ACCESS_KEY=$AK TESSERA_ADMIN_SECRET_KEY=$SK "$TESSERA" dev --state-dir "$WORK/state" \
        --listen 127.0.0.1:$PORT --no-agent >"$WORK/manager.log" 2>&1 &
MPID=$!
for _ in $(seq 1 100); do curl -sf -o /dev/null "$EP/" && break; sleep 0.1; done

api() { # METHOD PATH [BODY]
        local h=() ct=text/plain
        [ -n "${3:-}" ] && ct=application/json
        while IFS= read -r l; do h+=(-H "$l"); done < <("$TT" sign "$1" "$2" "127.0.0.1:$PORT" "$AK" "$SK" "$ct")
        curl -sS -X "$1" "${h[@]}" ${3:+--data "$3"} "$EP$2"
}
now() { date +%s.%N; }
rate() { awk -v b="$1" -v s="$2" 'BEGIN { printf "%.0f", b / 1048576 / s }'; }

api POST /folders '{"name": "bench"}' >/dev/null
api POST /folders '{"name": "many"}' >/dev/null
dd if=/dev/urandom of="$WORK/src" bs=1M count="$MIB" status=none
sync
BYTES=$((MIB * 1048576))

# timed CMD...: seconds CMD and a sync take
timed() {
        local t0 t1
        t0=$(now)
        "$@" >/dev/null
        sync
        t1=$(now)
        awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }'
}
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# the client users run: tessera vfolder upload (tus, 16 MiB PATCH chunks)
# and download (one GET, written to disk and fsynced).  This machine's page
# cache writes vary several-fold from one minute to the next, so the three
# are interleaved over ROUNDS rounds and compared by their medians.
export BACKEND_ENDPOINT=$EP BACKEND_ACCESS_KEY=$AK BACKEND_SECRET_KEY=$SK
ROUNDS=${ROUNDS:-5}
: >"$WORK/cp.t"; : >"$WORK/up.t"; : >"$WORK/down.t"
for ((i = 0; i < ROUNDS; i++)); do
        timed cp "$WORK/src" "$WORK/copy" >>"$WORK/cp.t"
        rm -f "$WORK/copy"
        "$TESSERA" vfolder rm-files bench src >/dev/null 2>&1 || true
        timed "$TESSERA" vfolder upload bench "$WORK/src" >>"$WORK/up.t"
        timed "$TESSERA" vfolder download bench src -o "$WORK/down" >>"$WORK/down.t"
        cmp -s "$WORK/down" "$WORK/src" || echo "download differs!"
        rm -f "$WORK/down"
done
CP=$(median <"$WORK/cp.t")
UP=$(median <"$WORK/up.t")
DOWN=$(median <"$WORK/down.t")

api POST /folders/many/mkdir '{"path": "d"}' >/dev/null
DIR=$(find "$WORK/state/vfolders" -type d -name d -path "*/d" | head -1)
(cd "$DIR" && seq -f "file-%06g" 1 100000 | xargs touch)
api GET "/folders/many/files?path=d" >/dev/null # warm the cache
t0=$(now); N=$(api GET "/folders/many/files?path=d" | jq ".items | length"); t1=$(now)
LS=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')

echo "file: $MIB MiB on $(df --output=source "$WORK" | tail -1), $(nproc) cores, median of $ROUNDS interleaved rounds"
echo "cp:           $(rate $BYTES "$CP") MB/s"
echo "tus upload:   $(rate $BYTES "$UP") MB/s ($(awk -v a="$CP" -v b="$UP" 'BEGIN { printf "%.0f", 100 * a / b }') % of cp; target >= 70 %)"
echo "download:     $(rate $BYTES "$DOWN") MB/s ($(awk -v a="$CP" -v b="$DOWN" 'BEGIN { printf "%.0f", 100 * a / b }') % of cp; target >= 70 %)"
echo "list $N files: $(awk -v s="$LS" 'BEGIN { printf "%.3f", s }') s (target <= 1 s, request and jq included)"
