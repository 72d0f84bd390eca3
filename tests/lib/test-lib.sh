# shellcheck shell=bash
# test-lib.sh - the shell harness for tests/integration/tNNNN-*.sh
# (after git's t/test-lib.sh and redis' start_server).
#
#     #!/bin/bash
#     test_description='what this script covers'
#     . "$(dirname "$0")/../lib/test-lib.sh"
#
#     start_manager
#     test_expect_success 'version answers' '
#             http GET / &&
#             test "$HTTP_STATUS" = 200
#     '
#     test_done
#
# Each test body is eval'ed in this shell (variables persist between tests);
# its output goes to a file that is shown only when the test fails (or with
# TEST_VERBOSE=1).  test_done prints TAP's plan and `N passed, N failed`
# (`, N skipped` when something was skipped) and exits 0 or 1; skip_all
# exits 77.
#
# Environment (tests/run.sh sets these):
#   BUILD                build directory; $BUILD/tessera is the binary ($TESSERA)
#   TESSERA_TEST_DB      sqlite (default) or postgresql
#   TESSERA_TEST_PG_URL  a PostgreSQL to create databases in (scripts/pg-test.sh)
#   TEST_VERBOSE=1       show every test's output;  TEST_KEEP=1  keep $TMP
#
# Provided: $TMP (private scratch directory), $TESSERA, start_manager,
# stop_manager, restart_manager, http, tessera_api, db_sql, test_cmp, test_must_fail,
# test_set_prereq / prerequisites (SQLITE, POSTGRESQL, ROOT, JQ, CLI).

TEST_NAME=$(basename "$0" .sh)
TEST_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${BUILD:-$TEST_ROOT/build}
case $BUILD in /*) ;; *) BUILD=$TEST_ROOT/$BUILD ;; esac
TESSERA=${TESSERA:-$BUILD/tessera}
TESSERA_TEST_DB=${TESSERA_TEST_DB:-sqlite}
export BUILD TESSERA TESSERA_TEST_DB
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# Fixed superadmin credentials of a test manager (see src/manager/bootstrap.c).
TEST_ADMIN_ACCESS_KEY=AKIATESSERATEST00001
TEST_ADMIN_SECRET_KEY=TesseraTestSecretKey0000000000000000000A
TEST_ADMIN_PASSWORD=tessera-test-password
TEST_ADMIN_EMAIL=admin@tessera.local

TMP=$(mktemp -d "${TMPDIR:-/tmp}/tessera-$TEST_NAME.XXXXXX") || exit 1
HTTP_BODY=$TMP/http.body
MANAGER_PID=
MANAGER_PORT=
MANAGER_LOG=$TMP/manager.log
MANAGER_STATE=${MANAGER_STATE:-$TMP/state}
MANAGER_EXIT=
MANAGER_EXIT_FILE=
test_manager_runs=0
declare -A TEST_PG_DBS=()

test_count=0
test_passed=0
test_failed=0
test_skipped=0
test_broken=0
declare -A test_prereqs=()

say() {
        echo "$@"
}

# ---- prerequisites ----

test_set_prereq() {
        test_prereqs[$1]=1
}

# test_have_prereq A,B: are all of them set?
test_have_prereq() {
        local p
        for p in ${1//,/ }; do
                [ -n "${test_prereqs[$p]:-}" ] || return 1
        done
        return 0
}

[ -n "${test_description:-}" ] && say "# $test_description ($TESSERA_TEST_DB)"

[ "$TESSERA_TEST_DB" = postgresql ] && test_set_prereq POSTGRESQL
[ "$TESSERA_TEST_DB" = sqlite ] && test_set_prereq SQLITE
[ "$(id -u)" -eq 0 ] && test_set_prereq ROOT
command -v jq >/dev/null 2>&1 && test_set_prereq JQ
"$TESSERA" api --help >/dev/null 2>&1 && test_set_prereq CLI

# ---- running tests ----

# test_eval_ BODY: run a test's commands; a `return N` in them ends the
# body with status N (not test_run_, which must still count the test)
test_eval_() {
        eval "$1"
}

# test_run_ PREREQ DESC BODY EXPECT(success|failure)
test_run_() {
        local prereq=$1 desc=$2 body=$3 expect=$4 out rc
        test_count=$((test_count + 1))
        if [ -n "$prereq" ] && ! test_have_prereq "$prereq"; then
                say "ok $test_count - $desc # SKIP missing $prereq"
                test_skipped=$((test_skipped + 1))
                return 0
        fi
        out=$TMP/test-$test_count.out
        if [ -n "${TEST_VERBOSE:-}" ]; then
                test_eval_ "$body" </dev/null > >(tee "$out") 2>&1
                rc=$?
        else
                test_eval_ "$body" </dev/null >"$out" 2>&1
                rc=$?
        fi
        if [ "$expect" = success ]; then
                if [ $rc -eq 0 ]; then
                        say "ok $test_count - $desc"
                        test_passed=$((test_passed + 1))
                else
                        say "not ok $test_count - $desc"
                        test_failed=$((test_failed + 1))
                        test_show_failure_ "$body" "$out" "$rc"
                fi
        else
                if [ $rc -eq 0 ]; then
                        say "ok $test_count - $desc # TODO known breakage vanished"
                        test_passed=$((test_passed + 1))
                else
                        say "not ok $test_count - $desc # TODO known breakage"
                        test_broken=$((test_broken + 1))
                fi
        fi
        return 0
}

test_show_failure_() {
        say "# exit status $3 of:"
        printf '%s\n' "$1" | sed -e '/^[[:space:]]*$/d' -e 's/^/#   /'
        if [ -s "$2" ]; then
                say "# output:"
                tail -n 30 "$2" | sed 's/^/#   /'
        fi
}

# test_expect_success [PREREQ] 'description' 'commands'
test_expect_success() {
        local prereq=
        [ $# -eq 3 ] && { prereq=$1; shift; }
        [ $# -eq 2 ] || { echo "bug in the test script: test_expect_success needs 2 or 3 arguments" >&2; exit 1; }
        test_run_ "$prereq" "$1" "$2" success
}

# test_expect_failure [PREREQ] 'description' 'commands': a known breakage.
test_expect_failure() {
        local prereq=
        [ $# -eq 3 ] && { prereq=$1; shift; }
        [ $# -eq 2 ] || { echo "bug in the test script: test_expect_failure needs 2 or 3 arguments" >&2; exit 1; }
        test_run_ "$prereq" "$1" "$2" failure
}

# skip_all 'reason': skip the whole script (exit 77).
skip_all() {
        say "1..0 # SKIP $1"
        say "0 passed, 0 failed, 1 skipped"
        exit 77
}

test_done() {
        test_manager_logs_clean_
        [ $test_broken -gt 0 ] && say "# $test_broken known breakage(s)"
        [ $test_skipped -gt 0 ] && say "# $test_skipped skipped"
        say "1..$test_count"
        if [ $((test_skipped + test_broken)) -gt 0 ]; then
                say "$test_passed passed, $test_failed failed, $((test_skipped + test_broken)) skipped"
        else
                say "$test_passed passed, $test_failed failed"
        fi
        if [ $((test_passed + test_failed + test_skipped + test_broken)) -ne $test_count ]; then
                say "# bug: $test_count tests ran but only $((test_passed + test_failed + test_skipped + test_broken)) were counted"
                exit 1
        fi
        [ $test_failed -eq 0 ] && exit 0
        exit 1
}

# Sanitizer reports in any manager's or agent's log are a failure of their own.
test_manager_logs_clean_() {
        local f bad=
        for f in "$TMP"/manager*.log "$TMP"/agent*.log; do
                [ -f "$f" ] || continue
                if grep -qE 'ERROR: [A-Za-z]+Sanitizer|runtime error:' "$f"; then
                        bad="$bad $f"
                fi
        done
        [ -z "$bad" ] && return 0
        test_count=$((test_count + 1))
        test_failed=$((test_failed + 1))
        say "not ok $test_count - sanitizer report in a daemon's log"
        for f in $bad; do
                grep -m1 -A20 -E 'ERROR: [A-Za-z]+Sanitizer|runtime error:' "$f" | sed 's/^/#   /'
        done
}

# ---- helpers for test bodies ----

# test_cmp EXPECTED ACTUAL
test_cmp() {
        diff -u "$1" "$2"
}

# test_must_fail CMD...: CMD exits non-zero, but is not killed by a signal.
test_must_fail() {
        "$@"
        local rc=$?
        if [ $rc -eq 0 ]; then
                echo "test_must_fail: '$*' succeeded" >&2
                return 1
        elif [ $rc -gt 128 ] && [ $rc -le 192 ]; then
                echo "test_must_fail: '$*' died of signal $((rc - 128))" >&2
                return 1
        fi
        return 0
}

# http METHOD PATH [curl args...]: an unsigned request to the manager.
# Sets HTTP_STATUS and HTTP_TYPE (Content-Type); the body is in $HTTP_BODY.
http() {
        local method=$1 path=$2 out
        shift 2
        out=$(curl -sS -X "$method" -o "$HTTP_BODY" -w '%{http_code} %{content_type}' "$@" \
                "$BACKEND_ENDPOINT$path") || return 1
        HTTP_STATUS=${out%% *}
        HTTP_TYPE=${out#* }
        echo "$method $path -> $HTTP_STATUS $HTTP_TYPE: $(head -c 500 "$HTTP_BODY")"
}

# tessera_api METHOD PATH [--data JSON]: a signed request with the CLI
# (credentials from BACKEND_ENDPOINT/BACKEND_ACCESS_KEY/BACKEND_SECRET_KEY).
tessera_api() {
        "$TESSERA" api "$@"
}

# A TCP port nobody listens on (best effort; start_manager retries).
# Ports come from below the kernel's ephemeral range: a port picked from
# inside it can be taken by any outgoing connection (a PostgreSQL client, curl)
# between the pick and the listener's bind.
test_free_port() {
        local p i low=32768
        read -r low _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || true
        [ "$low" -gt 12000 ] || low=32768
        for i in $(seq 1 50); do
                p=$((10000 + (RANDOM * 32768 + RANDOM) % (low - 10000)))
                if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
                        echo $p
                        return 0
                fi
        done
        return 1
}

# Set TEST_DB_URL to the --database of a manager of this script: empty for
# SQLite (kept in the state directory), else a fresh PostgreSQL database, one
# per value of $MANAGER_DB (default "main"), created on first use and
# dropped at exit.
test_database_url() {
        local key=${MANAGER_DB:-main} name
        TEST_DB_URL=
        [ "$TESSERA_TEST_DB" = postgresql ] || return 0
        if [ -z "${TESSERA_TEST_PG_URL:-}" ]; then
                echo "TESSERA_TEST_DB=postgresql needs TESSERA_TEST_PG_URL (tests/run.sh starts one)" >&2
                return 1
        fi
        name=${TEST_PG_DBS[$key]:-}
        if [ -z "$name" ]; then
                name=$(echo "t_${TEST_NAME}_$$_$key" | tr 'A-Z' 'a-z' | tr -c 'a-z0-9_\n' '_' | cut -c1-63)
                psql -X -q -v ON_ERROR_STOP=1 "$TESSERA_TEST_PG_URL" -c "CREATE DATABASE $name" >&2 || return 1
                TEST_PG_DBS[$key]=$name
        fi
        TEST_DB_URL="postgresql:///$name?${TESSERA_TEST_PG_URL#*\?}"
}

# start_manager [--no-admin-env] [tessera dev options...]
# Starts `$TESSERA dev` on $MANAGER_HOST (default 127.0.0.1) and a free
# port (or $MANAGER_LISTEN_PORT) with state in $MANAGER_STATE (and,
# for PostgreSQL, the database named by $MANAGER_DB), waits
# until GET / answers, and exports BACKEND_ENDPOINT, BACKEND_ACCESS_KEY and
# BACKEND_SECRET_KEY.  With --no-admin-env the superadmin credentials are
# not given to the manager (it generates them) and BACKEND_* are read from
# $MANAGER_STATE/admin-credentials.  Output goes to $MANAGER_LOG.  The
# manager runs without its dev agent unless WITH_AGENT holds the agent's
# options (e.g. WITH_AGENT="--mock-gpus 1 --fgpu-per-gpu 2", or
# WITH_AGENT="--mock-gpus 0" for none).  MANAGER_ARGS: more options for every
# start of the script's manager (e.g. "--config $TMP/manager.conf").
start_manager() {
        local admin_env=1 db host=${MANAGER_HOST:-127.0.0.1}
        if [ "${1:-}" = --no-admin-env ]; then
                admin_env=
                shift
        fi
        if [ ! -x "$TESSERA" ]; then
                echo "start_manager: $TESSERA is not built" >&2
                return 1
        fi
        test_database_url || return 1
        db=$TEST_DB_URL
        for _ in 1 2 3; do
                MANAGER_PORT=${MANAGER_LISTEN_PORT:-$(test_free_port)} || return 1
                test_manager_runs=$((test_manager_runs + 1))
                MANAGER_EXIT_FILE=$TMP/manager-exit.$test_manager_runs
                # Run the manager detached from this shell (so that a test's
                # bare `wait` does not wait for it) under a small runner that
                # records its pid and, when it ends, its exit status.
                (
                        (
                                if [ -n "$admin_env" ]; then
                                        export TESSERA_ADMIN_ACCESS_KEY=$TEST_ADMIN_ACCESS_KEY
                                        export TESSERA_ADMIN_SECRET_KEY=$TEST_ADMIN_SECRET_KEY
                                        export TESSERA_ADMIN_PASSWORD=$TEST_ADMIN_PASSWORD
                                else
                                        unset TESSERA_ADMIN_ACCESS_KEY TESSERA_ADMIN_SECRET_KEY TESSERA_ADMIN_PASSWORD
                                fi
                                "$TESSERA" dev --state-dir "$MANAGER_STATE" --listen "$host:$MANAGER_PORT" \
                                        ${db:+--database "$db"} ${WITH_AGENT:---no-agent} ${MANAGER_ARGS:-} "$@" </dev/null &
                                echo $! >"$MANAGER_EXIT_FILE.pid"
                                wait $!
                                echo $? >"$MANAGER_EXIT_FILE.tmp"
                                mv "$MANAGER_EXIT_FILE.tmp" "$MANAGER_EXIT_FILE"
                        ) </dev/null >>"$MANAGER_LOG" 2>&1 &
                )
                for _ in $(seq 1 100); do
                        [ -s "$MANAGER_EXIT_FILE.pid" ] && break
                        sleep 0.05
                done
                MANAGER_PID=$(cat "$MANAGER_EXIT_FILE.pid" 2>/dev/null)
                if [ -z "$MANAGER_PID" ]; then
                        echo "start_manager: the manager did not start" >&2
                        return 1
                fi
                export BACKEND_ENDPOINT=http://$host:$MANAGER_PORT
                for _ in $(seq 1 300); do
                        if curl -sf -o /dev/null "$BACKEND_ENDPOINT/"; then
                                break
                        fi
                        [ -e "$MANAGER_EXIT_FILE" ] && break
                        sleep 0.1
                done
                if [ ! -e "$MANAGER_EXIT_FILE" ] && curl -sf -o /dev/null "$BACKEND_ENDPOINT/"; then
                        break
                fi
                stop_manager >/dev/null 2>&1
                # a port taken in the meantime is worth another try; anything else is not
                grep -qiE 'address already in use|bind' "$MANAGER_LOG" || {
                        echo "start_manager: the manager did not come up; its log:" >&2
                        tail -n 30 "$MANAGER_LOG" >&2
                        return 1
                }
        done
        if [ -n "$admin_env" ]; then
                export BACKEND_ACCESS_KEY=$TEST_ADMIN_ACCESS_KEY
                export BACKEND_SECRET_KEY=$TEST_ADMIN_SECRET_KEY
        elif [ -f "$MANAGER_STATE/admin-credentials" ]; then
                BACKEND_ACCESS_KEY=$(sed -n 's/^BACKEND_ACCESS_KEY=//p' "$MANAGER_STATE/admin-credentials")
                BACKEND_SECRET_KEY=$(sed -n 's/^BACKEND_SECRET_KEY=//p' "$MANAGER_STATE/admin-credentials")
                export BACKEND_ACCESS_KEY BACKEND_SECRET_KEY
        fi
        return 0
}

# stop_manager [SIGNAL]: signal the manager (TERM), wait up to 10 s for it
# to exit (then KILL it).  Returns, and sets MANAGER_EXIT to, its exit
# status (128 + N when killed by signal N).  A test that kills the manager
# itself (kill -9 "$MANAGER_PID") may call stop_manager afterwards to reap it.
stop_manager() {
        local sig=${1:-TERM}
        [ -n "$MANAGER_PID" ] || return 0
        [ -e "$MANAGER_EXIT_FILE" ] || kill -"$sig" "$MANAGER_PID" 2>/dev/null
        for _ in $(seq 1 100); do
                [ -e "$MANAGER_EXIT_FILE" ] && break
                sleep 0.1
        done
        if [ ! -e "$MANAGER_EXIT_FILE" ]; then
                echo "stop_manager: still running 10 s after SIG$sig, killing it" >&2
                kill -KILL "$MANAGER_PID" 2>/dev/null
                for _ in $(seq 1 50); do
                        [ -e "$MANAGER_EXIT_FILE" ] && break
                        sleep 0.1
                done
        fi
        MANAGER_EXIT=$(cat "$MANAGER_EXIT_FILE" 2>/dev/null || echo 255)
        MANAGER_PID=
        return "$MANAGER_EXIT"
}

restart_manager() {
        stop_manager && start_manager "$@"
}

# test_at_exit COMMAND: eval COMMAND at exit (the latest first), before the
# manager is stopped; for what a test must undo even when it fails.
test_at_exit_cmds_=()
test_at_exit() {
        test_at_exit_cmds_=("$1" "${test_at_exit_cmds_[@]}")
}

test_cleanup_() {
        local rc=$? db cmd
        for cmd in "${test_at_exit_cmds_[@]}"; do
                eval "$cmd" >/dev/null 2>&1
        done
        test_at_exit_cmds_=()
        stop_manager >/dev/null 2>&1
        for db in "${TEST_PG_DBS[@]:-}"; do
                [ -n "$db" ] || continue
                psql -X -q "$TESSERA_TEST_PG_URL" -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1
        done
        if [ -n "${TEST_KEEP:-}" ] || [ "$test_failed" -gt 0 ]; then
                echo "# kept $TMP" >&2
        else
                rm -rf "$TMP"
        fi
        return $rc
}
trap test_cleanup_ EXIT
trap 'exit 130' INT TERM

# api METHOD PATH [BODY]: a request signed as the current BACKEND_* keypair,
# its body too, as Tessera's CLI signs (with the header $API_HEADER too, if
# set); CODE gets the HTTP status, ${OUT:-$TMP/out} the answer (and
# $API_HEADERS_OUT, when set, its headers).
api() {
        local ct=text/plain h=()
        [ -n "${3:-}" ] && ct=application/json
        while IFS= read -r l; do h+=(-H "$l"); done < <("$BUILD/test-tool" sign "$1" "$2" \
                "${BACKEND_ENDPOINT#http://}" "$BACKEND_ACCESS_KEY" "$BACKEND_SECRET_KEY" "$ct" ${3:+"$3"})
        [ -n "${API_HEADER:-}" ] && h+=(-H "$API_HEADER")
        CODE=$(curl -s -m 40 -X "$1" -o "${OUT:-$TMP/out}" ${API_HEADERS_OUT:+-D "$API_HEADERS_OUT"} \
                -w '%{http_code}' "${h[@]}" ${3:+--data "$3"} "$BACKEND_ENDPOINT$2") || true
}

# as KEY CMD...: run CMD (api, ws_client, ...) signed as the keypair in
# AK[KEY] and SK[KEY] (associative arrays the script declares)
as() {
        local who=$1
        shift
        BACKEND_ACCESS_KEY=${AK[$who]} BACKEND_SECRET_KEY=${SK[$who]} "$@"
}

# api_as KEY METHOD PATH [BODY]: api as that keypair
api_as() {
        local who=$1
        shift
        as "$who" api "$@"
}

# db_sql SQL: run SQL on the test manager's database (SQLite or
# PostgreSQL, as the script runs); rows on stdout, one per line, |-separated
db_sql() {
        if [ "$TESSERA_TEST_DB" = postgresql ]; then
                psql -X -q -A -t "$TEST_DB_URL" -c "$1"
        else
                sqlite3 -cmd ".timeout 10000" "$MANAGER_STATE/tessera.db" "$1"
        fi
}

# session_run NAME CMD: run a shell command in a running session (batch
# mode, as the session's user); its output in $TMP/console, its exit code
# in EXIT
session_run() {
        local body run status
        body=$(jq -cn --arg c "$2" '{mode: "batch", code: $c}')
        api POST "/session/$1" "$body" && test "$CODE" = 200 || { echo "execute: $CODE $(cat "$TMP/out")"; return 1; }
        : >"$TMP/console"
        for _ in $(seq 1 60); do
                jq -r '.result.console[]? | select(.[0] == "stdout" or .[0] == "stderr") | .[1]' "$TMP/out" >>"$TMP/console"
                status=$(jq -r .result.status "$TMP/out")
                if [ "$status" = finished ]; then
                        EXIT=$(jq .result.exitCode "$TMP/out")
                        return 0
                fi
                [ "$status" = continued ] || { echo "status $status: $(cat "$TMP/out")"; return 1; }
                run=$(jq -r .result.runId "$TMP/out")
                body=$(jq -cn --arg r "$run" '{mode: "continue", code: "", runId: $r}')
                api POST "/session/$1" "$body" && test "$CODE" = 200 || { echo "continue: $CODE"; return 1; }
        done
        echo "never finished"
        return 1
}

# field NAME FIELD: a field of session NAME from the admin list (GET
# /sessions?name=, which does not count as the owner's activity).
field() {
        OUT=$TMP/st api GET "/sessions?name=$1"
        jq -r ".items[0].$2" "$TMP/st"
}

# wait_status NAME STATUS [TENTHS]: poll until the session is in STATUS
# (default $WAIT_TENTHS or 100, tenths of a second); a session that ended
# otherwise fails at once.
wait_status() {
        local s
        for _ in $(seq 1 "${3:-${WAIT_TENTHS:-100}}"); do
                s=$(field "$1" status)
                [ "$s" = "$2" ] && return 0
                case $s in TERMINATED | ERROR | CANCELLED) break ;; esac
                sleep 0.1
        done
        echo "session $1 is $s ($(field "$1" statusInfo)), not $2"
        return 1
}

# agent_post ID PATH BODY: a request of agent ID signed with the manager's
# cluster secret; AGENT_STATUS gets the HTTP status, $TMP/agent-out the answer.
agent_post() {
        local h=()
        while IFS= read -r l; do h+=(-H "$l"); done < <("$BUILD/test-tool" agent-sign \
                "$MANAGER_STATE/cluster.secret" "$1" POST "$2" "$3")
        AGENT_STATUS=$(curl -s -m 40 -X POST -o "$TMP/agent-out" -w '%{http_code}' "${h[@]}" \
                -H 'Content-Type: application/json' --data "$3" "$BACKEND_ENDPOINT$2") || true
}

# agent_register ID SLOTS_JSON [DEVICES_JSON] [RESOURCE_GROUP]: register (or
# heartbeat) an agent through the agent API.  Its runtime is
# ${AGENT_RUNTIME:-none}: "none" is an agent without containers (the manager
# finishes its sessions' terminations itself).  It promises a heartbeat
# every ${AGENT_HEARTBEAT:-3600} seconds: a test's agent that beats once
# stays ALIVE (silent for three intervals, an agent is UNREACHABLE).
agent_register() {
        agent_post "$1" /agent/heartbeat "{\"id\": \"$1\", \"available_slots\": $2, \"devices\": ${3:-[]}, \"resource_group\": \"${4:-default}\", \"runtime\": \"${AGENT_RUNTIME:-none}\", \"heartbeat_interval\": ${AGENT_HEARTBEAT:-3600}}"
        [ "$AGENT_STATUS" = 200 ] || { echo "agent_register $1: $AGENT_STATUS $(cat "$TMP/agent-out")"; return 1; }
}

# gpus N CAPACITY [SLOT]: the devices JSON of N GPUs of CAPACITY each
gpus() {
        local i out=
        for i in $(seq 0 $(($1 - 1))); do
                out="$out${out:+, }{\"id\": \"$i\", \"slot\": \"${3:-cuda.shares}\", \"capacity\": \"$2\", \"model\": \"mock\"}"
        done
        echo "[$out]"
}

# pty TARGET STEP...: a terminal WebSocket (tests/lib/ws-pty.py) through the
# manager, signed as the caller (BACKEND_*)
pty() { ws_client ws-pty.py "$@"; }
# ws_exec TARGET STEP...: tests/lib/ws-exec.py (Backend.AI's streamed
# execution) against TARGET, signed as the current BACKEND_* keypair
ws_exec() { ws_client ws-exec.py "$@"; }
ws_client() {
        local client=$1 target=$2 h=() l
        shift 2
        while IFS= read -r l; do h+=(-H "$l"); done < <("$BUILD/test-tool" sign GET "$target" \
                "${BACKEND_ENDPOINT#http://}" "$BACKEND_ACCESS_KEY" "$BACKEND_SECRET_KEY")
        timeout 60 python3 "$TEST_ROOT/tests/lib/$client" "ws://${BACKEND_ENDPOINT#http://}$target" "${h[@]}" "$@"
}

# ---- real agents and their containers (crun or runc) ----
#
# The dev agent of start_manager (WITH_AGENT) has its configuration in
# $MANAGER_STATE/agent.conf and its state in $MANAGER_STATE/agent; start_agent
# runs others.  Containers are runc's under $RUNC_ROOT (the agent's default).

RUNC_ROOT=/run/tessera/runc

# The OCI runtime the agents of this run use (agent option runc = auto:
# crun where it fits the host's cgroups, else runc); tests call it `runc`.
OCI_RUNTIME=$("$TESSERA" agent --print-config 2>/dev/null | sed -n 's/^runc = "\(.*\)"$/\1/p')
runc() { command "${OCI_RUNTIME:-runc}" "$@"; }

# test_with_containers: skip the script unless it can run containers (root,
# runc); wait 30 s for a status (container starts under ASan on a loaded
# machine); at exit stop the dev agent and remove its containers.
test_with_containers() {
        [ "$(id -u)" = 0 ] || skip_all 'needs root (containers through runc)'
        command -v "${OCI_RUNTIME:-runc}" >/dev/null || skip_all "needs ${OCI_RUNTIME:-runc}"
        WAIT_TENTHS=${WAIT_TENTHS:-300}
        test_at_exit 'stop_agent_and_containers "$MANAGER_STATE/agent" "$MANAGER_STATE/agent.conf"'
}

# create_session NAME TYPE [STARTUP_COMMAND]: enqueue a busybox:latest session
# of $SESSION_RESOURCES (default: 1 core, 256 MiB).
create_session() {
        local res=${SESSION_RESOURCES:-}
        [ -n "$res" ] || res='{"cpu": 1, "mem": "256m"}'
        api POST /session "{\"name\": \"$1\", \"image\": \"busybox:latest\", \"enqueueOnly\": true, \"type\": \"$2\"${3:+, \"startupCommand\": \"$3\"}, \"config\": {\"resources\": $res}}"
        test "$CODE" = 201 || { echo "create_session $1: $CODE $(cat "$TMP/out")"; return 1; }
}

# kernel_id NAME: the container (= main kernel) id of a session, from the API
kernel_id() {
        OUT=$TMP/k api GET "/sessions?name=$1"
        jq -r ".items[0].containerId // empty" "$TMP/k"
}

# container_running ID: does runc report the container running?
container_running() {
        local st
        st=$(runc --root "$RUNC_ROOT" state "$1" 2>/dev/null) && echo "$st" | jq -e ".status == \"running\"" >/dev/null
}

# container_pid ID: its process 1 as runc knows it (host pid namespace)
container_pid() {
        runc --root "$RUNC_ROOT" state "$1" 2>/dev/null | jq -r ".pid // empty"
}

# remember_containers NAME...: wait until each session is RUNNING; its
# container id and process 1 into CONTAINER[NAME] and CONTAINER_PID[NAME]
declare -A CONTAINER CONTAINER_PID
remember_containers() {
        local s
        for s in "$@"; do
                wait_status $s RUNNING || return 1
                CONTAINER[$s]=$(kernel_id $s)
                CONTAINER_PID[$s]=$(container_pid "${CONTAINER[$s]}")
                test -n "${CONTAINER[$s]}" && test -n "${CONTAINER_PID[$s]}" ||
                        { echo "$s: container '${CONTAINER[$s]}' pid '${CONTAINER_PID[$s]}'"; return 1; }
        done
}

# containers_running NAME...: each remembered container still runs (the
# manager need not be up)
containers_running() {
        local s
        for s in "$@"; do
                container_running "${CONTAINER[$s]}" || { echo "$s: ${CONTAINER[$s]} is not running"; return 1; }
        done
}

# same_containers NAME...: each session RUNNING in the container and
# process 1 remembered
same_containers() {
        local s
        for s in "$@"; do
                test "$(field $s status)" = RUNNING && test "$(kernel_id $s)" = "${CONTAINER[$s]}" &&
                        container_running "${CONTAINER[$s]}" &&
                        test "$(container_pid "${CONTAINER[$s]}")" = "${CONTAINER_PID[$s]}" ||
                        { echo "$s: $(field $s status) in '$(kernel_id $s)' pid $(container_pid "${CONTAINER[$s]}")" \
                                "(was ${CONTAINER[$s]} pid ${CONTAINER_PID[$s]})"; return 1; }
        done
}

# destroy_sessions NAME...: destroy each through the API; each must end
# TERMINATED (user-requested), its container and process 1 gone
destroy_sessions() {
        local s k pid
        declare -A ks pids
        for s in "$@"; do
                k=$(kernel_id $s)
                ks[$s]=$k
                pids[$s]=$(container_pid "$k")
                api DELETE /session/$s && test "$CODE" = 200 || { echo "DELETE $s: $CODE $(cat "$TMP/out")"; return 1; }
        done
        for s in "$@"; do
                wait_status $s TERMINATED && test "$(field $s statusInfo)" = user-requested || return 1
                for _ in $(seq 1 100); do container_running "${ks[$s]}" || break; sleep 0.1; done
                ! container_running "${ks[$s]}" || { echo "$s: container ${ks[$s]} still runs"; return 1; }
                pid=${pids[$s]}
                [ -z "$pid" ] || process_gone "$pid" || { echo "$s: process $pid still there"; return 1; }
        done
}

# agent_pid CONF: the agent running with that configuration file
agent_pid() {
        pgrep -f "tessera agent --config $1\$" | head -n 1
}

# process_gone PID: no such process, or only its zombie (the dev agent's
# parent reaps it at exit)
process_gone() {
        ! kill -0 "$1" 2>/dev/null || [ "$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -c1)" = Z ]
}

# start_agent CONF LOG [NETNS]: run `tessera agent --config CONF` detached,
# in the network namespace NETNS (ip netns) if given, its output to LOG
# (name it $TMP/agent*.log: sanitizer reports there fail the script);
# waits until it runs.  Kill it with kill -9 "$(agent_pid CONF)".
start_agent() {
        local conf=$1 log=$2 ns=${3:-}
        (
                cd / && exec ${ns:+nsenter --net=/run/netns/$ns} "$TESSERA" agent --config "$conf" \
                        </dev/null >>"$log" 2>&1 &
        )
        for _ in $(seq 1 50); do
                [ -n "$(agent_pid "$conf")" ] && return 0
                sleep 0.1
        done
        echo "start_agent: no agent with $conf; its log:" >&2
        tail -n 20 "$log" >&2
        return 1
}

# stop_agent_and_containers STATE_DIR CONF [NETNS]: kill the agent of CONF,
# then destroy and remove every container of STATE_DIR (their network
# pieces live in NETNS).  For test_at_exit.
stop_agent_and_containers() {
        local state=$1 conf=$2 ns=${3:-} pid c
        for _ in $(seq 1 20); do
                pid=$(agent_pid "$conf")
                [ -n "$pid" ] || break
                kill -9 "$pid"
                sleep 0.1
        done
        for c in $(ls "$state/containers" 2>/dev/null); do
                ${ns:+nsenter --net=/run/netns/$ns} "$BUILD/container-tool" --state "$state" destroy "$c" 1
                ${ns:+nsenter --net=/run/netns/$ns} "$BUILD/container-tool" --state "$state" remove "$c"
        done
        remove_agent_network "$state" "$conf" "$ns"
}

# remove_agent_network STATE_DIR CONF [NETNS]: what a killed agent leaves
# of its network once no container is on its bridge: its nftables tables,
# and the bridge when the agent made it (src/agent/container/bridge.h)
remove_agent_network() {
        local state=$1 conf=$2 ns=${3:-} br in
        in=${ns:+nsenter --net=/run/netns/$ns}
        br=$(cut -d" " -f1 "$state/bridge" 2>/dev/null)
        [ -n "$br" ] || br=$(sed -n 's/^bridge = "\(.*\)"$/\1/p' "$conf" 2>/dev/null)
        [ -n "$br" ] || return 0
        $in ip -o link show master "$br" 2>/dev/null | grep -q . && return 0
        $in nft delete table bridge "tessera-$br" 2>/dev/null
        $in nft delete table inet "tessera-$br" 2>/dev/null
        ! $in ip link show "$br" 2>/dev/null | grep -q "alias tessera-bridge" || $in ip link del "$br"
}
