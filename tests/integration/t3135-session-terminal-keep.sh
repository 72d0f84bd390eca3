#!/bin/bash
test_description='named terminals (?terminal=ID) outlive their WebSocket: the same shell again with its scrollback, one socket at a time, a new shell once it ended; malformed ids and other users are refused; without an id a shell still ends with its socket; a revoked login or keypair closes its terminals'
. "$(dirname "$0")/../lib/test-lib.sh"
. "$(dirname "$0")/../lib/registry.sh"

test_with_containers

ID=t3135-keep-0001

# ps_has PATTERN: a process of the session's container matches (busybox ps)
ps_has() {
        "$TESSERA" session exec keep ps >"$TMP/ps.out" 2>&1 && grep -q "$1" "$TMP/ps.out"
}

test_expect_success 'a busybox session' '
        start_dev_with_busybox &&
        SESSION_RESOURCES="{\"cpu\": 0.5, \"mem\": \"128m\"}" create_session keep interactive &&
        wait_status keep RUNNING
'

test_expect_success 'a named terminal: a new shell, left with a variable, a job and a program running' '
        pty "/stream/session/keep/pty?rows=30&cols=100&terminal=$ID" expect-terminal:new \
                "send:X=kept42; echo set-\$X\n" expect:set-kept42 \
                "send:(sleep 2; echo away-\$((40+2))) &\n" \
                "send:sleep 4242\n" sleep:0.5 close expect-close >"$TMP/pty1.out" ||
        { cat "$TMP/pty1.out"; false; }
'

# cpu_ticks PID: user + system time of a process, in clock ticks
cpu_ticks() {
        sed 's/.*) //' "/proc/$1/stat" | awk "{ print \$12 + \$13 }"
}

test_expect_success 'its shell goes on without a socket, and the agent keeping it does not spin' '
        P=$(agent_pid "$MANAGER_STATE/agent.conf") && test -n "$P" &&
        T0=$(cpu_ticks "$P") && sleep 3 && T1=$(cpu_ticks "$P") &&
        echo "# the agent used $((T1 - T0)) ticks in 3 s" &&
        test $((T1 - T0)) -lt 100 &&
        ps_has "sleep 4242" || { cat "$TMP/ps.out"; false; }
'

test_expect_success 'the same id attaches the same shell again: the scrollback first, with what came meanwhile' '
        pty "/stream/session/keep/pty?rows=40&cols=120&terminal=$ID" expect-terminal:kept \
                expect:set-kept42 expect:away-42 \
                ctrl:C "send:echo got-\$X-\$(stty size)\n" "expect:got-kept42-40 120" \
                close expect-close >"$TMP/pty2.out" ||
        { cat "$TMP/pty2.out"; false; }
'

test_expect_success 'a second socket takes the terminal over; the first is closed with 4001' '
        { pty "/stream/session/keep/pty?terminal=$ID" expect-terminal:kept "send:echo first-\$((1+1))\n" \
                expect:first-2 expect-close:4001 >"$TMP/first.out" 2>&1 & } &&
        FIRST=$! &&
        for _ in $(seq 1 100); do grep -q "^first-2" "$TMP/first.out" && break; sleep 0.1; done &&
        pty "/stream/session/keep/pty?terminal=$ID" expect-terminal:kept expect:first-2 \
                "send:echo second-\$X\n" expect:second-kept42 close expect-close >"$TMP/second.out" &&
        wait $FIRST &&
        grep "^# closed 4001 another connection took this terminal over" "$TMP/first.out" ||
        { cat "$TMP/first.out" "$TMP/second.out"; false; }
'

test_expect_success 'another id is another shell (restart replaces it in place); exit ends a named shell, and its id then opens a new one' '
        pty "/stream/session/keep/pty?terminal=${ID}-other" expect-terminal:new \
                "send:Y=1; echo other-[\$X]\n" "expect:other-[]" \
                "raw:{\"type\": \"restart\"}" "send:echo restarted-[\$Y]\n" "expect:restarted-[]" \
                close expect-close >"$TMP/pty3.out" &&
        pty "/stream/session/keep/pty?terminal=${ID}-other" expect-terminal:kept \
                "send:echo still-[\$Y]\n" "expect:still-[]" close expect-close >>"$TMP/pty3.out" &&
        pty "/stream/session/keep/pty?terminal=$ID" expect-terminal:kept \
                "send:exit\n" expect-close:1000 >"$TMP/pty4.out" &&
        grep -q "^# closed 1000 the shell ended" "$TMP/pty4.out" &&
        pty "/stream/session/keep/pty?terminal=$ID" expect-terminal:new \
                "send:echo again-[\$X]\n" "expect:again-[]" close expect-close >"$TMP/pty5.out" ||
        { cat "$TMP/pty3.out" "$TMP/pty4.out" "$TMP/pty5.out"; false; }
'

test_expect_success 'without an id the shell ends with its socket, as before (no terminal message)' '
        pty /stream/session/keep/pty "send:echo plain-ok\n" expect:plain-ok \
                "send:sleep 4343\n" sleep:0.5 close expect-close >"$TMP/pty6.out" &&
        ! grep -q "^# terminal" "$TMP/pty6.out" &&
        for _ in $(seq 1 50); do ps_has "sleep 4343" || break; sleep 0.2; done &&
        ! ps_has "sleep 4343" || { cat "$TMP/pty6.out" "$TMP/ps.out"; false; }
'

test_expect_success 'a malformed id is a 400 that says why' '
        for bad in short "has%20space" "$(printf "x%.0s" $(seq 1 65))" "a/b/c/d/e"; do
                test_must_fail pty "/stream/session/keep/pty?terminal=$bad" "send:id\n" 2>"$TMP/bad.err" &&
                grep -q " 400 " "$TMP/bad.err" && grep -q "terminal id is 8-64" "$TMP/bad.err" ||
                { echo "$bad:"; cat "$TMP/bad.err"; return 1; }
        done
'

test_expect_success 'another user cannot reach the terminal by its id' '
        OUT=$TMP/other api POST /admin/users "{\"email\": \"other@t.test\", \"password\": \"other-pass\"}" &&
        test "$CODE" = 201 &&
        (
                BACKEND_ACCESS_KEY=$(jq -r .keypair.access_key "$TMP/other") &&
                BACKEND_SECRET_KEY=$(jq -r .keypair.secret_key "$TMP/other") &&
                test_must_fail pty "/stream/session/keep/pty?terminal=$ID" "send:id\n" 2>"$TMP/other.err" &&
                grep -q " 404 " "$TMP/other.err"
        )
'

# held_pty NAME TARGET HEADER...: a terminal, held open in the background
# (ws-pty.py's output in $TMP/NAME.out, its pid in HELD), once its shell
# answered
held_pty() {
        local name=$1 target=$2 i
        shift 2
        { timeout 60 python3 "$TEST_ROOT/tests/lib/ws-pty.py" "ws://${BACKEND_ENDPOINT#http://}$target" "$@" \
                "send:echo held-\$((6*7))\n" expect:held-42 sleep:30 >"$TMP/$name.out" 2>&1 & }
        HELD=$!
        for i in $(seq 1 100); do grep -q "^held-42" "$TMP/$name.out" && return 0; sleep 0.1; done
        cat "$TMP/$name.out"
        return 1
}

test_expect_success 'a terminal of a web login closes (1008) when that login logs out' '
        curl -s -c "$TMP/jar" -o "$TMP/login" -H "Content-Type: application/json" \
                --data "{\"email\": \"$TEST_ADMIN_EMAIL\", \"password\": \"$TEST_ADMIN_PASSWORD\"}" \
                "$BACKEND_ENDPOINT/server/login" &&
        TOK=$(awk "\$6 == \"tessera_session\" { print \$7 }" "$TMP/jar") && test -n "$TOK" &&
        held_pty web /stream/session/keep/pty -H "Cookie: tessera_session=$TOK" &&
        test "$(curl -s -o /dev/null -w "%{http_code}" -X POST -b "$TMP/jar" "$BACKEND_ENDPOINT/server/logout")" = 204 &&
        wait $HELD &&
        grep "^# closed 1008" "$TMP/web.out" || { cat "$TMP/web.out"; false; }
'

test_expect_success 'a terminal closes (1008) when the keypair that opened it is deactivated; the session runs on' '
        OUT=$TMP/kp2 api POST /admin/keypairs "{}" && test "$CODE" = 201 &&
        AK2=$(jq -r .access_key "$TMP/kp2") && SK2=$(jq -r .secret_key "$TMP/kp2") && test "$AK2" != null &&
        MAIN_AK=$BACKEND_ACCESS_KEY &&
        h=() && while IFS= read -r l; do h+=(-H "$l"); done < <("$BUILD/test-tool" sign GET \
                "/stream/session/keep/pty?owner_access_key=$MAIN_AK" "${BACKEND_ENDPOINT#http://}" "$AK2" "$SK2") &&
        held_pty kp "/stream/session/keep/pty?owner_access_key=$MAIN_AK" "${h[@]}" &&
        api PATCH "/admin/keypairs/$AK2" "{\"is_active\": false}" && test "$CODE" = 200 &&
        wait $HELD &&
        grep "^# closed 1008" "$TMP/kp.out" &&
        test "$(field keep status)" = RUNNING || { cat "$TMP/kp.out"; false; }
'

test_expect_success 'deleting the session closes its attached terminal' '
        { pty "/stream/session/keep/pty?terminal=$ID" expect-terminal:kept "send:echo last-\$((6*7))\n" \
                expect:last-42 sleep:30 >"$TMP/last.out" 2>&1 & } &&
        LAST=$! &&
        for _ in $(seq 1 100); do grep -q "^last-42" "$TMP/last.out" && break; sleep 0.1; done &&
        api DELETE /session/keep && test "$CODE" = 200 &&
        wait $LAST &&
        grep "^# closed 1000" "$TMP/last.out" &&
        wait_status keep TERMINATED || { cat "$TMP/last.out"; false; }
'

test_done
