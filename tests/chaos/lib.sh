# shellcheck shell=bash
# lib.sh - what every file of the chaos test shares: the run's directory and
# names, time stamps, the run's logs, signed API requests through the
# front (haproxy), and SQL on the run's PostgreSQL.
#
# Sourced by run.sh before cluster.sh, workload.sh, faults.sh and
# invariants.sh.  Everything a run creates is named after CHAOS_ID (the
# pid of run.sh) and lives under CHAOS_DIR, so cleanup.sh can find it.

CHAOS_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${BUILD:-$CHAOS_ROOT/build}
case $BUILD in /*) ;; *) BUILD=$CHAOS_ROOT/$BUILD ;; esac
TESSERA=${TESSERA:-$BUILD/tessera}
export BUILD TESSERA

# The fixed superadmin of the cluster (given to the first manager's start).
ADMIN_AK=AKIATESSERACHAOS0001
ADMIN_SK=TesseraChaosSecretKey000000000000000001A
ADMIN_PW=tessera-chaos-password

# now_ms: wall-clock milliseconds (the harness's own clock, never faked)
now_ms() {
        date +%s%3N
}

# say MSG...: a time-stamped line on the run's output and in run.log
say() {
        local line
        line="[$(date +%H:%M:%S)] $*"
        echo "$line"
        [ -n "${CHAOS_DIR:-}" ] && echo "$line" >>"$CHAOS_DIR/run.log"
        return 0
}

# record FILE WORDS...: append one line "MS WORDS..." to a log of the run
record() {
        local f=$1
        shift
        echo "$(now_ms) $*" >>"$CHAOS_DIR/$f"
}

# pid_of NAME / set_pid NAME PID: the processes the run started, by name
pid_of() {
        cat "$CHAOS_DIR/pids/$1" 2>/dev/null
}
set_pid() {
        echo "$2" >"$CHAOS_DIR/pids/$1"
}

# alive PID: the process runs (a zombie does not count)
alive() {
        [ -n "$1" ] && kill -0 "$1" 2>/dev/null &&
                [ "$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -c1)" != Z ]
}

# capi AK SK METHOD PATH [BODY]: a signed request to the front; sets CODE
# (000 when no answer came) and leaves the body in $OUT (default
# $CHAOS_DIR/out.PID of the calling shell), whose path is in ANSWER.
# Every request goes to requests.log as "START_MS END_MS METHOD PATH CODE"
# for the availability invariant.
capi() {
        local ak=$1 sk=$2 method=$3 path=$4 body=${5:-} ct=text/plain h=() l start
        local out=${OUT:-$CHAOS_DIR/out.$BASHPID}
        ANSWER=$out
        [ -n "$body" ] && ct=application/json
        while IFS= read -r l; do h+=(-H "$l"); done < <("$BUILD/test-tool" sign "$method" "$path" \
                "$FRONT" "$ak" "$sk" "$ct")
        start=$(now_ms)
        CODE=$(curl -s -m "${CAPI_TIMEOUT:-30}" -X "$method" -o "$out" -w '%{http_code}' "${h[@]}" \
                ${body:+--data "$body"} "http://$FRONT$path") || true
        [ -n "$CODE" ] || CODE=000
        echo "$start $(now_ms) $method ${path%%\?*} $CODE" >>"$CHAOS_DIR/requests.log"
}

# admin_api METHOD PATH [BODY]: capi as the superadmin
admin_api() {
        capi "$ADMIN_AK" "$ADMIN_SK" "$@"
}

# sql QUERY: rows of the run's database, |-separated (fails while
# PostgreSQL is down: callers treat that as "no observation")
sql() {
        psql -X -q -A -t -v ON_ERROR_STOP=1 "$PG_LOCAL_URL" -c "$1" 2>/dev/null
}
