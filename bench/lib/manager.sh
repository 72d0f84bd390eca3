# shellcheck shell=bash
# bench/lib/manager.sh - what the benchmarks of a bare manager (`tessera dev
# --no-agent` on SQLite or PostgreSQL, driven by signed requests) share:
# bench/scheduler.sh and bench/manager-restart.sh.  Source it from the
# repository's root after `set -euo pipefail`; it installs what the tests
# install, builds, and makes a work directory with copies of the binaries
# (other work may rebuild build/ meanwhile).
#
#   WORK       the work directory (short: PostgreSQL's socket lives there);
#              removed at exit unless BENCH_KEEP=1
#   TESSERA TT LOAD   the release tessera, test-tool, and sched-load (the
#              bulk request signer, bench/sched-load.c)
#   MPID PGDIR        the caller's manager and PostgreSQL, stopped at exit
#   DB DBURL          sqlite or postgresql, and the latter's URL
#   now, elapsed A B  wall times (seconds, to the millisecond)
#   sql QUERY         one row per line, columns separated by tabs

scripts/install-deps.sh test >/dev/null
make -s -j2 all build/test-tool >/dev/null
WORK=$(mktemp -d /tmp/tbm.XXXXXX)
chmod 0755 "$WORK" # the PostgreSQL server runs as postgres when we are root
cp "${TESSERA:-build/tessera}" "$WORK/tessera"
cp build/test-tool "$WORK/test-tool"
TESSERA=$WORK/tessera
TT=$WORK/test-tool
# the request signer, against the release build's library archive (it
# takes the src/common objects the signer calls, nothing else)
cc -std=gnu17 -O2 -Isrc $(pkg-config --cflags jansson openssl) -o "$WORK/sched-load" bench/sched-load.c \
        build/libtessera.a $(pkg-config --libs jansson openssl) -lm
LOAD=$WORK/sched-load
MPID=
PGDIR=
DB=
DBURL=

cleanup() {
        [ -n "$MPID" ] && kill "$MPID" 2>/dev/null && wait "$MPID" 2>/dev/null
        [ -n "$PGDIR" ] && scripts/pg-test.sh stop "$PGDIR" >/dev/null 2>&1
        if [ -n "${BENCH_KEEP:-}" ]; then echo "# kept $WORK" >&2; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }

sql() {
        if [ "$DB" = sqlite ]; then
                sqlite3 -cmd ".timeout 10000" -separator $'\t' "$WORK/state-$DB/tessera.db" "$1"
        else
                psql -X -q -A -t -F $'\t' -v ON_ERROR_STOP=1 "$DBURL" -c "$1"
        fi
}
