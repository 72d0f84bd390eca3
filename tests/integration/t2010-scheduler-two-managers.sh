#!/bin/bash
test_description='two managers on one PostgreSQL: one schedules at a time, no slot is given twice'
. "$(dirname "$0")/../lib/test-lib.sh"

[ "$TESSERA_TEST_DB" = postgresql ] || skip_all 'needs PostgreSQL (several managers share one database)'

sql() {
        psql -X -q -t -A -v ON_ERROR_STOP=1 "$PG_URL" -c "$1"
}

# No agent holds more than it has, no GPU device more than its capacity
# (1 fGPU each here), from the kernels the managers wrote.
check_no_overcommit() {
        local over
        over=$(sql "SELECT d.key, SUM(d.value::numeric) FROM kernels k, json_each_text(k.device_alloc::json) d
                    WHERE k.status IN ('SCHEDULED', 'TERMINATING') GROUP BY d.key HAVING SUM(d.value::numeric) > 1") &&
        test -z "$over" || { echo "over-committed devices: $over"; return 1; }
        test "$(sql "SELECT COUNT(*) FROM kernels WHERE status = 'SCHEDULED'")" -le 8
}

# Each pass holds its snapshot 300 ms before writing: without the lock (and
# the agents' allocation generation) the two managers would place on the
# same room.
export TESSERA_TEST_SCHED_DELAY_MS=300

cat >"$TMP/manager.conf" <<EOF
scheduler_interval = 1s
agent_lost_timeout = 1h
EOF

test_expect_success 'two managers share one PostgreSQL database' '
        start_manager --config "$TMP/manager.conf" &&
        PG_URL=$TEST_DB_URL &&
        FIRST=$BACKEND_ENDPOINT &&
        mkdir -p "$TMP/state2" && cp "$MANAGER_STATE/master.key" "$MANAGER_STATE/cluster.secret" "$TMP/state2/" &&
        PORT2=$(test_free_port) &&
        (TESSERA_ADMIN_ACCESS_KEY=$TEST_ADMIN_ACCESS_KEY TESSERA_ADMIN_SECRET_KEY=$TEST_ADMIN_SECRET_KEY \
                TESSERA_ADMIN_PASSWORD=$TEST_ADMIN_PASSWORD exec "$TESSERA" dev --state-dir "$TMP/state2" \
                --listen "127.0.0.1:$PORT2" --database "$TEST_DB_URL" --config "$TMP/manager.conf" \
                </dev/null >"$TMP/manager2.log" 2>&1 &
         echo $! >"$TMP/manager2.pid") &&
        SECOND=http://127.0.0.1:$PORT2 &&
        for _ in $(seq 1 100); do curl -sf -o /dev/null "$SECOND/" && break; sleep 0.1; done &&
        curl -sf -o /dev/null "$SECOND/" &&
        api POST /admin/images "{\"name\": \"registry.test/stable/python\", \"tag\": \"3.11\"}" && test "$CODE" = 201
'

test_expect_success 'sessions enqueued on both managers at once fill 4 GPUs exactly' '
        agent_register g1 "{\"cpu\": 100, \"mem\": \"100g\"}" "$(gpus 4 1)" &&
        for i in $(seq 1 40); do
                # later sessions outrank earlier ones: the managers see different heads of the queue
                if [ $((i % 2)) = 0 ]; then BACKEND_ENDPOINT=$FIRST; else BACKEND_ENDPOINT=$SECOND; fi
                api POST /session "{\"name\": \"half-$i\", \"image\": \"python:3.11\", \"enqueueOnly\": true, \"priority\": $((i + 10)), \"config\": {\"resources\": {\"cpu\": 1, \"mem\": \"1g\", \"cuda.shares\": \"0.5\"}}}" &
                sleep 0.05
        done; wait &&
        BACKEND_ENDPOINT=$FIRST &&
        for _ in $(seq 1 100); do
                test "$(sql "SELECT COUNT(*) FROM sessions WHERE status = '\''SCHEDULED'\''")" = 8 && break
                sleep 0.2
        done &&
        sleep 2 &&
        test "$(sql "SELECT COUNT(*) FROM sessions WHERE status = '\''SCHEDULED'\''")" = 8 &&
        test "$(sql "SELECT COUNT(*) FROM sessions WHERE status = '\''PENDING'\''")" = 32 &&
        check_no_overcommit
'

test_expect_success 'ending sessions through both managers hands the room on, never twice' '
        ok=1 &&
        for round in 1 2 3; do
                for n in $(sql "SELECT name FROM sessions WHERE status = '\''SCHEDULED'\'' ORDER BY name LIMIT 5"); do
                        if [ $((RANDOM % 2)) = 0 ]; then BACKEND_ENDPOINT=$FIRST; else BACKEND_ENDPOINT=$SECOND; fi
                        api DELETE "/session/$n" &
                done; wait
                sleep 2.5
                check_no_overcommit || ok=0
        done &&
        test $ok = 1 &&
        BACKEND_ENDPOINT=$FIRST &&
        test "$(sql "SELECT COUNT(*) FROM sessions WHERE status = '\''SCHEDULED'\''")" = 8 &&
        test "$(sql "SELECT COUNT(*) FROM sessions WHERE status = '\''TERMINATED'\''")" = 15 &&
        grep -q "placed" "$TMP/manager2.log" "$MANAGER_LOG"
'

test_expect_success 'stop the second manager' '
        kill "$(cat "$TMP/manager2.pid")" &&
        for _ in $(seq 1 100); do kill -0 "$(cat "$TMP/manager2.pid")" 2>/dev/null || break; sleep 0.1; done &&
        ! grep -E "ERROR|AddressSanitizer|runtime error" "$TMP/manager2.log"
'

test_done
