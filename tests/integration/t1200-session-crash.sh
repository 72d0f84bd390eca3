#!/bin/bash
test_description='kill -9 of the manager during a burst of 1,000 session creates loses no acknowledged create'
. "$(dirname "$0")/../lib/test-lib.sh"

TT=$BUILD/test-tool
N=1000
LOOPS=4

# One client loop: creates sessions LOOP-1, LOOP-5, ... and records "name status".
burst() {
        local loop=$1 h=() i name code
        while IFS= read -r l; do h+=(-H "$l"); done < <("$TT" sign POST /session "${BACKEND_ENDPOINT#http://}" \
                "$BACKEND_ACCESS_KEY" "$BACKEND_SECRET_KEY")
        for i in $(seq "$loop" "$LOOPS" "$N"); do
                name=crash-$i
                code=$(curl -s -m 10 -o /dev/null -w '%{http_code}' "${h[@]}" \
                        --data "{\"name\": \"$name\", \"image\": \"crash/img:1\", \"enqueueOnly\": true}" \
                        "$BACKEND_ENDPOINT/session") || code=000
                echo "$name $code"
        done >"$TMP/burst.$loop"
}

test_expect_success 'start a manager and register an image' '
        start_manager &&
        tessera_api PATCH /admin/keypairs/$BACKEND_ACCESS_KEY --data "{\"rate_limit\": 0}" &&
        tessera_api POST /admin/images --data "{\"name\": \"crash/img\", \"tag\": \"1\"}"
'

test_expect_success 'kill -9 the manager in the middle of 1,000 creates' '
        pids= &&
        for l in $(seq 1 $LOOPS); do burst $l & pids="$pids $!"; done
        for i in $(seq 1 600); do
                done_so_far=$(cat "$TMP"/burst.* 2>/dev/null | grep -c " 201$" || true)
                [ "$done_so_far" -ge 300 ] && break
                sleep 0.05
        done &&
        kill -KILL "$MANAGER_PID" &&
        wait $pids
        stop_manager; test "$MANAGER_EXIT" = 137 &&
        acked=$(cat "$TMP"/burst.* | grep -c " 201$") &&
        failed=$(cat "$TMP"/burst.* | grep -vc " 201$") &&
        echo "acknowledged $acked, not acknowledged $failed" &&
        test "$acked" -ge 300 && test "$failed" -ge 1
'

test_expect_success 'after restart every acknowledged create is there, once, whole' '
        start_manager &&
        cat "$TMP"/burst.* | awk "\$2 == 201 {print \$1}" | sort >"$TMP/acked" &&
        db_sql "SELECT name FROM sessions ORDER BY name" | sort >"$TMP/stored" &&
        comm -23 "$TMP/acked" "$TMP/stored" >"$TMP/lost" &&
        test ! -s "$TMP/lost" &&
        test -z "$(sort "$TMP/stored" | uniq -d)" &&
        test "$(db_sql "SELECT COUNT(*) FROM sessions s WHERE NOT EXISTS (SELECT 1 FROM kernels k WHERE k.session_id = s.id)")" = 0 &&
        test "$(db_sql "SELECT COUNT(*) FROM sessions WHERE status <> '"'"'PENDING'"'"' OR status_history NOT LIKE '"'"'%PENDING%'"'"'")" = 0
'

test_expect_success 'acknowledged sessions answer through the API after the restart' '
        for name in $(head -n 20 "$TMP/acked"); do
                tessera_api GET /session/$name >"$TMP/info" &&
                grep -q "\"status\":\"PENDING\"" "$TMP/info" || return 1
        done
'

test_expect_success 'a create repeated after the crash is answered with the stored session, not a duplicate' '
        name=$(head -n 1 "$TMP/acked") &&
        tessera_api POST /session --data "{\"name\": \"$name\", \"image\": \"crash/img:1\", \"enqueueOnly\": true}" >"$TMP/again" &&
        grep -q "\"created\":false" "$TMP/again" &&
        test "$(db_sql "SELECT COUNT(*) FROM sessions WHERE name = '"'"'$name'"'"'")" = 1
'

test_done
