#!/bin/bash
test_description='two managers on one PostgreSQL behind haproxy (deploy/haproxy.cfg): events reach streams and agents on either manager, kill -9 of one under load fails at most its requests in flight and loses no acknowledged write, streams and terminals on the other go on, and a manager cut from its database leaves the front and comes back'
. "$(dirname "$0")/../lib/test-lib.sh"
. "$(dirname "$0")/../lib/registry.sh"

[ "$TESSERA_TEST_DB" = postgresql ] || skip_all 'needs PostgreSQL (several managers share one database)'
command -v haproxy >/dev/null || skip_all 'needs haproxy (scripts/install-deps.sh test)'
# a real terminal needs containers; without them the event stream stands in
[ "$(id -u)" = 0 ] && command -v "${OCI_RUNTIME:-runc}" >/dev/null && test_set_prereq CONTAINERS

TT=$BUILD/test-tool

sql() {
        psql -X -q -t -A -v ON_ERROR_STOP=1 "$TEST_DB_URL" -c "$1"
}

# via ENDPOINT CMD...: run CMD with BACKEND_ENDPOINT=ENDPOINT
via() {
        local saved=$BACKEND_ENDPOINT rc
        BACKEND_ENDPOINT=$1
        shift
        "$@"
        rc=$?
        BACKEND_ENDPOINT=$saved
        return $rc
}

# sse_open NAME ENDPOINT PATH: a signed server-sent-event stream into
# $TMP/NAME.sse, in the background (SSE_PID[NAME]), once it answered
declare -A SSE_PID
sse_open() {
        local h=() l
        while IFS= read -r l; do h+=(-H "$l"); done < <("$TT" sign GET "$3" "${2#http://}" \
                "$BACKEND_ACCESS_KEY" "$BACKEND_SECRET_KEY")
        curl -sN "${h[@]}" "$2$3" >"$TMP/$1.sse" 2>&1 &
        SSE_PID[$1]=$!
        test_at_exit "kill ${SSE_PID[$1]}"
        for _ in $(seq 1 300); do
                grep -q "^: open" "$TMP/$1.sse" && return 0
                sleep 0.1
        done
        echo "sse_open $1: no stream: $(cat "$TMP/$1.sse")"
        return 1
}

# sse_id NAME EVENT SESSION: the id of EVENT about SESSION on stream NAME
sse_id() {
        awk -v ev="$2" -v s="\"sessionName\":\"$3\"" '
                /^id: / { id = $2 } /^event: / { name = $2 }
                /^data: / && name == ev && index($0, s) { print id; exit }' "$TMP/$1.sse"
}

# sse_wait NAME EVENT SESSION: wait (30 s) until stream NAME has EVENT about SESSION
sse_wait() {
        for _ in $(seq 1 300); do
                [ -n "$(sse_id "$@")" ] && return 0
                sleep 0.1
        done
        echo "stream $1 has no $2 of $3:"
        cat "$TMP/$1.sse"
        return 1
}

# start_second: manager B on the same database (state of its own, the
# same keys), its log in $TMP/manager2.log
start_second() {
        PORT2=$(test_free_port) &&
        (TESSERA_ADMIN_ACCESS_KEY=$TEST_ADMIN_ACCESS_KEY TESSERA_ADMIN_SECRET_KEY=$TEST_ADMIN_SECRET_KEY \
                TESSERA_ADMIN_PASSWORD=$TEST_ADMIN_PASSWORD exec "$TESSERA" dev --state-dir "$TMP/state2" \
                --listen "127.0.0.1:$PORT2" --database "$TEST_DB_URL" --no-agent --config "$TMP/manager2.conf" \
                </dev/null >>"$TMP/manager2.log" 2>&1 &
         echo $! >"$TMP/manager2.pid") &&
        test_at_exit 'kill -9 $(cat "$TMP/manager2.pid")' &&
        B=http://127.0.0.1:$PORT2 &&
        for _ in $(seq 1 300); do curl -sf -o /dev/null "$B/health" && break; sleep 0.1; done &&
        curl -sf -o /dev/null "$B/health"
}

# agent_conf: the real agent's configuration; it reaches the managers
# through the front
agent_conf() {
        cat >"$TMP/agent.conf" <<EOF
manager = "$FRONT"
id = "real-1"
state_dir = "$TMP/agent"
cluster_secret_file = "$MANAGER_STATE/cluster.secret"
heartbeat_interval = "1s"
network = "none"
listen = "127.0.0.1:0"
vfolder_hosts = "local=$TMP/vfolders"
EOF
}

# pty_held ENDPOINT TARGET STEP...: the harness's pty, without its 60 s limit
pty_held() {
        local h=() l
        while IFS= read -r l; do h+=(-H "$l"); done < <("$TT" sign GET "$2" "${1#http://}" \
                "$BACKEND_ACCESS_KEY" "$BACKEND_SECRET_KEY")
        timeout 600 python3 "$TEST_ROOT/tests/lib/ws-pty.py" "ws://${1#http://}$2" "${h[@]}" "${@:3}"
}

# health ENDPOINT: GET /health into $TMP/health, its status in HEALTH
health() {
        HEALTH=$(curl -s -m 10 -o "$TMP/health" -w '%{http_code}' "$1/health") || HEALTH=000
}

# load LOOP N: N times, create session load-LOOP-i through the front and
# read it back; lines "create NAME CODE" and "read NAME CODE" in
# $TMP/load.LOOP.  The sessions ask for more than any agent has: they wait.
load() {
        local hp=() hg=() l i name code
        while IFS= read -r l; do hp+=(-H "$l"); done < <("$TT" sign POST /session "${FRONT#http://}" \
                "$BACKEND_ACCESS_KEY" "$BACKEND_SECRET_KEY" application/json)
        for i in $(seq 1 "$2"); do
                name=load-$1-$i
                code=$(curl -s -m 20 -o /dev/null -w '%{http_code}' "${hp[@]}" -H 'Content-Type: application/json' \
                        --data "{\"name\": \"$name\", \"image\": \"python:3.11\", \"enqueueOnly\": true, \"config\": {\"resources\": {\"cpu\": 1000, \"mem\": \"1g\"}}}" \
                        "$FRONT/session") || code=000
                echo "create $name $code"
                hg=()
                while IFS= read -r l; do hg+=(-H "$l"); done < <("$TT" sign GET "/session/$name" "${FRONT#http://}" \
                        "$BACKEND_ACCESS_KEY" "$BACKEND_SECRET_KEY")
                code=$(curl -s -m 20 -o /dev/null -w '%{http_code}' "${hg[@]}" "$FRONT/session/$name") || code=000
                echo "read $name $code"
        done >"$TMP/load.$1"
}

cat >"$TMP/manager.conf" <<EOF
scheduler_interval = 2s
agent_lost_timeout = 1h
EOF
# B schedules only when an event asks: a placement it did not cause is A's
cat >"$TMP/manager2.conf" <<EOF
scheduler_interval = 1h
agent_lost_timeout = 1h
EOF

test_expect_success 'two managers on one database, haproxy in front with the repository configuration' '
        start_manager --config "$TMP/manager.conf" &&
        A=$BACKEND_ENDPOINT &&
        tessera_api PATCH /admin/keypairs/$BACKEND_ACCESS_KEY --data "{\"rate_limit\": 0}" >/dev/null &&
        api POST /admin/images "{\"name\": \"python\", \"tag\": \"3.11\"}" && test "$CODE" = 201 &&
        mkdir -p "$TMP/state2" && cp "$MANAGER_STATE/master.key" "$MANAGER_STATE/cluster.secret" "$TMP/state2/" &&
        start_second &&
        FRONT_PORT=$(test_free_port) && FRONT=http://127.0.0.1:$FRONT_PORT &&
        (TESSERA_FRONT=127.0.0.1:$FRONT_PORT TESSERA_MANAGER1=127.0.0.1:$MANAGER_PORT \
                TESSERA_MANAGER2=127.0.0.1:$PORT2 exec haproxy -db -f "$TEST_ROOT/deploy/haproxy.cfg" \
                </dev/null >"$TMP/haproxy.log" 2>&1 &
         echo $! >"$TMP/haproxy.pid") &&
        test_at_exit "kill \$(cat $TMP/haproxy.pid)" &&
        for _ in $(seq 1 300); do curl -sf -o /dev/null "$FRONT/health" && break; sleep 0.1; done &&
        health "$FRONT" && test "$HEALTH" = 200
'

test_expect_success 'GET /health: 200, the database, and events heard from the other managers' '
        health "$A" && test "$HEALTH" = 200 &&
        jq -e ".status == \"ok\" and .database == \"postgresql\" and .events == \"listening\"" "$TMP/health" &&
        health "$B" && test "$HEALTH" = 200 &&
        jq -e ".events == \"listening\"" "$TMP/health"
'

test_expect_success 'a stream on B has the events of a session created and cancelled through A, with the ids A gave them' '
        sse_open a "$A" "/events/session" && sse_open b "$B" "/events/session" &&
        via "$A" api POST /session "{\"name\": \"ev-1\", \"image\": \"python:3.11\", \"enqueueOnly\": true, \"config\": {\"resources\": {\"cpu\": 1, \"mem\": \"1g\"}}}" &&
        test "$CODE" = 201 &&
        sse_wait b session_enqueued ev-1 &&
        sse_wait a session_enqueued ev-1 &&
        test "$(sse_id a session_enqueued ev-1)" = "$(sse_id b session_enqueued ev-1)" &&
        via "$A" api DELETE /session/ev-1 && test "$CODE" = 200 &&
        sse_wait b session_cancelled ev-1 &&
        test "$(sse_id a session_cancelled ev-1)" = "$(sse_id b session_cancelled ev-1)" &&
        test "$(sse_id b session_cancelled ev-1)" -gt "$(sse_id b session_enqueued ev-1)"
'

test_expect_success 'an agent waiting on B is answered as soon as A places a session on it' '
        via "$A" agent_register n1 "{\"cpu\": 1, \"mem\": \"1g\"}" "$(gpus 1 1)" &&
        via "$B" agent_post n1 /agent/sync "{\"id\": \"n1\"}" && test "$AGENT_STATUS" = 200 &&
        D=$(jq -r .digest "$TMP/agent-out") && test "$(jq ".kernels | length" "$TMP/agent-out")" = 0 &&
        { (sleep 1; via "$A" api POST /session "{\"name\": \"sync-1\", \"image\": \"python:3.11\", \"enqueueOnly\": true, \"config\": {\"resources\": {\"cpu\": 1, \"mem\": \"1g\", \"cuda.shares\": \"1\"}}}") & } &&
        CREATE_PID=$! &&
        start=$(date +%s%N) &&
        via "$B" agent_post n1 /agent/sync "{\"id\": \"n1\", \"digest\": \"$D\", \"wait\": 30}" &&
        end=$(date +%s%N) && wait $CREATE_PID &&
        test "$AGENT_STATUS" = 200 &&
        echo "answered after $(((end - start) / 1000000)) ms" &&
        jq -e ".kernels[] | select(.session_name == \"sync-1\") | .action == \"run\"" "$TMP/agent-out" &&
        test $(((end - start) / 1000000)) -lt 20000
'

test_expect_success CONTAINERS 'a real agent behind the front and a busybox session on it' '
        image=$(test_image busybox) && test -d "$image" &&
        via "$A" api POST /admin/images "{\"name\": \"busybox\", \"tag\": \"latest\"}" && test "$CODE" = 201 &&
        agent_conf &&
        test_at_exit "stop_agent_and_containers $TMP/agent $TMP/agent.conf" &&
        "$TESSERA" agent image --store "$TMP/agent/images" import "$image" >/dev/null &&
        start_agent "$TMP/agent.conf" "$TMP/agent.log" &&
        WAIT_TENTHS=300 &&
        via "$B" create_session term interactive && via "$B" wait_status term RUNNING
'

test_expect_success CONTAINERS 'a terminal through B answers' '
        { pty_held "$B" /stream/session/term/pty "send:echo before-\$((1+1))\n" expect:before-2 \
                "wait-file:$TMP/a-killed" "send:echo after-\$((2+2))\n" expect:after-4 close expect-close \
                >"$TMP/pty.out" 2>&1 & } &&
        PTY_PID=$! && test_at_exit "kill $PTY_PID" &&
        for _ in $(seq 1 300); do grep -q "^before-2" "$TMP/pty.out" && break; sleep 0.1; done &&
        grep -q "^before-2" "$TMP/pty.out" || { cat "$TMP/pty.out"; false; }
'

test_expect_success 'kill -9 of A under load through the front: at most its requests in flight fail' '
        LOAD_PIDS= &&
        a0=$(grep -c "tessera_managers/manager1 " "$TMP/haproxy.log" || true) &&
        for l in 1 2; do load $l 120 & LOAD_PIDS="$LOAD_PIDS $!"; done &&
        test_at_exit "kill $LOAD_PIDS" &&
        # A is killed once the load is under way and the front has sent A
        # some of it (leastconn favours B while A holds more connections,
        # and a loaded machine can make A miss a health check)
        for _ in $(seq 1 600); do
                n=$(cat "$TMP"/load.* 2>/dev/null | grep -c " 20[01]$" || true)
                a=$(($(grep -c "tessera_managers/manager1 " "$TMP/haproxy.log" || true) - a0))
                [ "$n" -ge 80 ] && [ "$a" -ge 20 ] && break
                sleep 0.1
        done &&
        kill -KILL "$MANAGER_PID" && touch "$TMP/a-killed" &&
        wait $LOAD_PIDS &&
        total=$(cat "$TMP"/load.* | wc -l) &&
        ok=$(cat "$TMP"/load.* | grep -c " 20[01]$") &&
        echo "$ok of $total requests succeeded; failed: $(cat "$TMP"/load.* | grep -v " 20[01]$" | tr "\n" " ")" &&
        test "$total" = 480 &&
        test $((ok * 100)) -ge $((total * 99)) &&
        # the front spread the load over both (its log: a line per request)
        on_a=$(grep -c "tessera_managers/manager1 " "$TMP/haproxy.log") &&
        on_b=$(grep -c "tessera_managers/manager2 " "$TMP/haproxy.log") &&
        echo "requests through the front: $on_a on A, $on_b on B" &&
        test "$on_a" -ge 20 && test "$on_b" -ge 20 &&
        stop_manager; test "$MANAGER_EXIT" = 137
'

test_expect_success 'every acknowledged create is in the database, once' '
        cat "$TMP"/load.* | awk "\$1 == \"create\" && \$3 == 201 {print \$2}" | sort >"$TMP/acked" &&
        sql "SELECT name FROM sessions WHERE name LIKE '\''load-%'\''" | sort >"$TMP/stored" &&
        comm -23 "$TMP/acked" "$TMP/stored" >"$TMP/lost" &&
        echo "acknowledged $(wc -l <"$TMP/acked"), stored $(wc -l <"$TMP/stored")" &&
        test ! -s "$TMP/lost" && test -s "$TMP/acked" &&
        test -z "$(uniq -d "$TMP/stored")"
'

test_expect_success CONTAINERS 'the terminal through B outlived A' '
        wait $PTY_PID || { cat "$TMP/pty.out"; false; } &&
        grep -q "^after-4" "$TMP/pty.out"
'

test_expect_success 'the event streams on B go on: a session ended through the front shows on it' '
        kill -0 ${SSE_PID[b]} &&
        via "$FRONT" api DELETE /session/sync-1 && test "$CODE" = 200 &&
        sse_wait b session_terminating sync-1
'

test_expect_success 'A again, on its address: B hears it, the front uses it again' '
        MANAGER_LISTEN_PORT=$MANAGER_PORT start_manager --config "$TMP/manager.conf" && test "$BACKEND_ENDPOINT" = "$A" &&
        for _ in $(seq 1 300); do grep -q "manager1 is UP" "$TMP/haproxy.log" && break; sleep 0.1; done &&
        grep -q "manager1 is UP" "$TMP/haproxy.log" &&
        via "$A" api POST /session "{\"name\": \"ev-2\", \"image\": \"python:3.11\", \"enqueueOnly\": true, \"config\": {\"resources\": {\"cpu\": 1000, \"mem\": \"1g\"}}}" &&
        test "$CODE" = 201 &&
        sse_wait b session_enqueued ev-2
'

DBNAME=${TEST_PG_DBS[main]}
test_at_exit "psql -X -q \"$TESSERA_TEST_PG_URL\" -c \"ALTER DATABASE $DBNAME ALLOW_CONNECTIONS true\""

test_expect_success 'cut from the database, a manager answers 503 on /health and the front stops using it' '
        psql -X -q -v ON_ERROR_STOP=1 "$TESSERA_TEST_PG_URL" -c "ALTER DATABASE $DBNAME ALLOW_CONNECTIONS false" &&
        psql -X -q -t -v ON_ERROR_STOP=1 "$TESSERA_TEST_PG_URL" \
                -c "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '\''$DBNAME'\''" >/dev/null &&
        for _ in $(seq 1 300); do health "$B"; [ "$HEALTH" = 503 ] && break; sleep 0.1; done &&
        test "$HEALTH" = 503 && grep -q "unreachable" "$TMP/health" &&
        for _ in $(seq 1 300); do health "$FRONT"; [ "$HEALTH" = 503 ] && break; sleep 0.1; done &&
        test "$HEALTH" = 503 &&
        for _ in $(seq 1 300); do grep -q "manager2 is DOWN" "$TMP/haproxy.log" && break; sleep 0.1; done &&
        grep -q "manager2 is DOWN" "$TMP/haproxy.log"
'

test_expect_success 'the database back: both answer again, listen again, and events flow from A to B' '
        psql -X -q -v ON_ERROR_STOP=1 "$TESSERA_TEST_PG_URL" -c "ALTER DATABASE $DBNAME ALLOW_CONNECTIONS true" &&
        for _ in $(seq 1 300); do
                health "$B"; [ "$HEALTH" = 200 ] && jq -e ".events == \"listening\"" "$TMP/health" >/dev/null && break
                sleep 0.1
        done &&
        jq -e ".events == \"listening\"" "$TMP/health" &&
        for _ in $(seq 1 300); do health "$A"; [ "$HEALTH" = 200 ] && break; sleep 0.1; done &&
        test "$HEALTH" = 200 &&
        grep -q "listening again" "$TMP/manager2.log" &&
        via "$A" api POST /session "{\"name\": \"ev-3\", \"image\": \"python:3.11\", \"enqueueOnly\": true, \"config\": {\"resources\": {\"cpu\": 1000, \"mem\": \"1g\"}}}" &&
        test "$CODE" = 201 &&
        sse_wait b session_enqueued ev-3 &&
        for _ in $(seq 1 300); do health "$FRONT"; [ "$HEALTH" = 200 ] && break; sleep 0.1; done &&
        test "$HEALTH" = 200
'

test_expect_success 'stop B cleanly' '
        kill "$(cat "$TMP/manager2.pid")" &&
        for _ in $(seq 1 300); do kill -0 "$(cat "$TMP/manager2.pid")" 2>/dev/null || break; sleep 0.1; done &&
        ! kill -0 "$(cat "$TMP/manager2.pid")" 2>/dev/null
'

test_done
