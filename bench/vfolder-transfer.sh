#!/bin/bash
# bench/vfolder-transfer.sh - folder transfer benchmarks (nothing fails on
# timing).  In one run, on the same disk:
#   1. upload of a 1 GiB file through the API (curl, tus PATCH of 64 MiB
#      chunks over loopback) vs `cp` of the same file, target >= 70 % of cp;
#   2. download of it (GET /folders/_/download) vs cp, same target;
#   3. listing a folder of 100,000 files (GET /folders/{name}/files),
#      target <= 1 s.
# usage: BUILD=build/release bench/vfolder-transfer.sh [MiB]   (default 1024)
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

t0=$(now); cp "$WORK/src" "$WORK/copy"; sync; t1=$(now)
CP=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')
rm -f "$WORK/copy"

TOKEN=$(api POST /folders/bench/request-upload "{\"path\": \"big.bin\", \"size\": $BYTES}" | jq -r .token)
U="$EP/folders/_/upload?token=$TOKEN"
CH=$((64 * 1048576))
t0=$(now)
curl -sS -o /dev/null -X POST -H "Tus-Resumable: 1.0.0" -H "Upload-Length: $BYTES" "$U"
for ((off = 0; off < BYTES; off += CH)); do
        n=$((BYTES - off < CH ? BYTES - off : CH))
        dd if="$WORK/src" bs=4M iflag=skip_bytes,count_bytes skip=$off count=$n status=none |
                curl -sS -o /dev/null -H "Expect:" -X PATCH -H "Tus-Resumable: 1.0.0" \
                        -H "Content-Type: application/offset+octet-stream" -H "Upload-Offset: $off" \
                        --data-binary @- "$U"
done
sync
t1=$(now)
UP=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')

TOKEN=$(api POST /folders/bench/request-download '{"path": "big.bin"}' | jq -r .token)
t0=$(now); curl -sS -o "$WORK/down" "$EP/folders/_/download?token=$TOKEN"; sync; t1=$(now)
DOWN=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')
cmp -s "$WORK/down" "$WORK/src" || echo "download differs!"

api POST /folders/many/mkdir '{"path": "d"}' >/dev/null
DIR=$(find "$WORK/state/vfolders" -type d -name d -path "*/d" | head -1)
(cd "$DIR" && seq -f "file-%06g" 1 100000 | xargs touch)
api GET "/folders/many/files?path=d" >/dev/null # warm the cache
t0=$(now); N=$(api GET "/folders/many/files?path=d" | jq ".items | length"); t1=$(now)
LS=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')

echo "file: $MIB MiB on $(df --output=source "$WORK" | tail -1), $(nproc) cores"
echo "cp:           $(rate $BYTES "$CP") MB/s"
echo "tus upload:   $(rate $BYTES "$UP") MB/s ($(awk -v a="$CP" -v b="$UP" 'BEGIN { printf "%.0f", 100 * a / b }') % of cp; target >= 70 %)"
echo "download:     $(rate $BYTES "$DOWN") MB/s ($(awk -v a="$CP" -v b="$DOWN" 'BEGIN { printf "%.0f", 100 * a / b }') % of cp; target >= 70 %)"
echo "list $N files: $(awk -v s="$LS" 'BEGIN { printf "%.3f", s }') s (target <= 1 s, request and jq included)"
