#!/bin/bash
test_description='the agent through a full disk in its state directory and a manager that answers 503 for a while: creation fails naming the full disk, running sessions go on, no kernel event is lost or doubled, the agent backs off, and all works again by itself'
. "$(dirname "$0")/../lib/test-lib.sh"
. "$(dirname "$0")/../lib/registry.sh"

test_with_containers
STATE=$MANAGER_STATE/agent
CONF=$MANAGER_STATE/agent.conf
PROXIED_CONF=$TMP/agent-proxied.conf
FILL=$STATE/fill
CONTROL=$TMP/manager-fails
PROXY_LOG=$TMP/proxy.log
PROXY_PID=
SMALL='{"cpu": 0.2, "mem": "64m"}'

# (test_at_exit) the agent behind the proxy and its containers, the
# proxy, the tmpfs under the agent's state
cleanup_faults() {
        stop_agent_and_containers "$STATE" "$PROXIED_CONF"
        [ -z "$PROXY_PID" ] || kill "$PROXY_PID"
        if mountpoint -q "$STATE"; then
                umount "$STATE" || umount -l "$STATE"
        fi
}

# fill_state: the agent's tmpfs full to the last page
fill_state() {
        dd if=/dev/zero of="$FILL" bs=1M 2>/dev/null
        dd if=/dev/zero bs=4k count=1 2>/dev/null >>"$FILL"
        test "$(df --output=avail "$STATE" | tail -n 1 | tr -d " ")" = 0 ||
                { df "$STATE"; return 1; }
}

# start_proxy: tests/lib/fault-proxy.py in front of the manager; PROXY_URL
start_proxy() {
        python3 "$TEST_ROOT/tests/lib/fault-proxy.py" --upstream "127.0.0.1:$MANAGER_PORT" --control "$CONTROL" \
                --port-file "$TMP/proxy.port" </dev/null >"$PROXY_LOG" 2>&1 &
        PROXY_PID=$!
        for _ in $(seq 1 100); do
                [ -s "$TMP/proxy.port" ] && break
                sleep 0.05
        done
        PROXY_URL=http://127.0.0.1:$(cat "$TMP/proxy.port") && test -s "$TMP/proxy.port"
}

# agent_alive: the manager sees the one agent ALIVE (10 s)
agent_alive() {
        for _ in $(seq 1 100); do
                OUT=$TMP/agents api GET /admin/agents
                jq -e '(.items | length) == 1 and .items[0].status == "ALIVE"' "$TMP/agents" >/dev/null && return 0
                sleep 0.1
        done
        cat "$TMP/agents"
        return 1
}

# tries_while_failing FROM: lines of the proxy's log from line FROM on that it answered 503
tries_while_failing() {
        tail -n +"$1" "$PROXY_LOG" | awk '$4 == 503'
}

test_expect_success 'the agent keeps its state on a 64 MiB tmpfs and reaches the manager through a proxy' '
        mkdir -p "$STATE" && mount -t tmpfs -o size=64m tessera-t3180 "$STATE" &&
        test_at_exit cleanup_faults &&
        printf "agent_lost_timeout = \"10m\"\n" >"$TMP/manager.conf" &&
        registry_start && registry_push busybox busybox:latest &&
        WITH_AGENT="--agent-network none" start_manager --config "$TMP/manager.conf" &&
        api POST /admin/images "{\"name\": \"busybox\", \"tag\": \"latest\", \"registry\": \"$REGISTRY\"}" &&
        test "$CODE" = 201 &&
        agent_alive &&
        PID=$(agent_pid "$CONF") && test -n "$PID" && kill -9 "$PID" &&
        for _ in $(seq 1 50); do process_gone "$PID" && break; sleep 0.1; done &&
        start_proxy &&
        sed "s|^manager = .*|manager = \"$PROXY_URL\"|" "$CONF" >"$PROXIED_CONF" &&
        grep -q "^manager = \"$PROXY_URL\"" "$PROXIED_CONF" &&
        start_agent "$PROXIED_CONF" "$TMP/agent.log" &&
        agent_alive &&
        grep -q " POST /agent/heartbeat 200" "$PROXY_LOG"
'

test_expect_success 'a session runs, and a batch job waits; then the state directory is full' '
        SESSION_RESOURCES=$SMALL create_session first interactive &&
        SESSION_RESOURCES=$SMALL create_session waiter batch "sleep 3180 || exit 3" &&
        remember_containers first waiter &&
        fill_state
'

test_expect_success 'a session created on the full disk ends in ERROR, its status_data naming the full disk' '
        SESSION_RESOURCES=$SMALL create_session second interactive &&
        wait_status second ERROR &&
        test "$(field second statusInfo)" = creation-failed &&
        field second statusData.error.repr >"$TMP/why" &&
        cat "$TMP/why" &&
        grep -q "^no space left on device in the agent'"'"'s state_dir '"'"'$STATE'"'"': " "$TMP/why" &&
        grep -q "No space left on device" "$TMP/why"
'

test_expect_success 'the running session goes on untouched, in the same container' '
        same_containers first
'

test_expect_success 'kernel records on the full disk are whole: the last ones written, no leftovers' '
        ls -A "$STATE/kernels" >"$TMP/records" &&
        cat "$TMP/records" &&
        ! grep -v "\.json$" "$TMP/records" &&
        for f in "$STATE"/kernels/*.json; do jq -e ".phase and .spec.id" "$f" >/dev/null || return 1; done &&
        jq -e ".phase == \"running\"" "$STATE/kernels/${CONTAINER[first]}.json"
'

test_expect_success 'a batch job ending on the full disk keeps its exit code (the monitor'"'"'s reserve)' '
        pkill -f "^sleep 3180\$" &&
        wait_status waiter TERMINATED &&
        test "$(field waiter statusData.kernel.exit_code)" = 3 &&
        test "$(field waiter result)" = FAILURE
'

test_expect_success 'an exit on the full disk reaches the manager: the destroyed session ends TERMINATED' '
        destroy_sessions first &&
        grep -q "outbox: .*No space left on device; events are kept in memory" "$TMP/agent.log"
'

test_expect_success 'room again: the kept events are written, a new session runs' '
        rm -f "$FILL" &&
        SESSION_RESOURCES=$SMALL create_session third interactive &&
        wait_status third RUNNING &&
        for _ in $(seq 1 50); do grep -q "outbox: events are written to disk again" "$TMP/agent.log" && break;
                sleep 0.1; done &&
        grep -q "outbox: events are written to disk again" "$TMP/agent.log" &&
        destroy_sessions third
'

test_expect_success 'the log told each time the disk refused events once, and once when it took them again' '
        grep -E "outbox: .*(kept in memory|written to disk again)" "$TMP/agent.log" |
                sed -E "s/.*(kept in memory|written to disk again).*/\1/" >"$TMP/outbox-lines" &&
        cat "$TMP/outbox-lines" &&
        n=$(wc -l <"$TMP/outbox-lines") &&
        test "$n" -ge 2 && test "$n" -le 6 && test $((n % 2)) = 0 &&
        awk "{ want = NR % 2 ? \"kept in memory\" : \"written to disk again\" } \$0 != want { exit 1 }" \
                "$TMP/outbox-lines"
'

test_expect_success 'a batch session runs until told to exit with 7' '
        SESSION_RESOURCES=$SMALL create_session ender batch \
                "while [ ! -e /tmp/go ]; do sleep 0.1; done; echo ending; exit 7" &&
        remember_containers ender &&
        HIST_BEFORE=$(field ender statusHistory | jq -cS "keys")
'

test_expect_success 'the manager answers 503 for 35 s; the session exits meanwhile; the agent backs off' '
        FROM=$(($(wc -l <"$PROXY_LOG") + 1)) &&
        : >"$CONTROL" &&
        runc --root "$RUNC_ROOT" exec "${CONTAINER[ender]}" /bin/touch /tmp/go &&
        for _ in $(seq 1 100); do container_running "${CONTAINER[ender]}" || break; sleep 0.1; done &&
        test_must_fail container_running "${CONTAINER[ender]}" &&
        sleep 35 &&
        test "$(field ender status)" = RUNNING &&
        tries_while_failing $FROM >"$TMP/tries" &&
        cat "$TMP/tries" &&
        # a try a second from each thread would be 70; backing off, about 14
        test "$(wc -l <"$TMP/tries")" -ge 6 && test "$(wc -l <"$TMP/tries")" -le 24 &&
        # the reporter waits longer and longer: at least 8 s between its last two tries
        grep -v /agent/sync "$TMP/tries" | awk "NR > 1 { gap = \$1 - prev } { prev = \$1 } END { exit !(gap >= 8) }" &&
        test "$(grep -c "manager: .*503" "$TMP/agent.log")" = 1 &&
        grep "manager: .*503" "$TMP/agent.log" | grep -q "trying again with backoff"
'

test_expect_success 'healed: the exit is delivered once: TERMINATED, FAILURE, exit code 7' '
        rm -f "$CONTROL" &&
        wait_status ender TERMINATED 600 &&
        test "$(field ender result)" = FAILURE &&
        test "$(field ender statusInfo)" = task-failed &&
        test "$(field ender statusData.kernel.exit_code)" = 7 &&
        OUT=$TMP/logs api GET /session/ender/logs && test "$CODE" = 200 &&
        jq -r .result.logs "$TMP/logs" | grep -q "^ending$"
'

test_expect_success 'one history entry per transition, no event applied twice, the log says the manager is back once' '
        field ender statusHistory | jq -cS "keys" >"$TMP/hist" &&
        test "$(cat "$TMP/hist")" = "$(echo "$HIST_BEFORE" | jq -cS ". + [\"TERMINATED\"] | sort")" &&
        ! grep "about kernel ${CONTAINER[ender]} ignored" "$MANAGER_LOG" &&
        test "$(grep -c "manager: answering again after" "$TMP/agent.log")" = 1
'

test_expect_success 'a 503 with Retry-After: 4 is honoured: each thread tries again 4 to 5 s later, not sooner' '
        FROM=$(($(wc -l <"$PROXY_LOG") + 1)) &&
        echo 4 >"$CONTROL" &&
        sleep 18 &&
        rm -f "$CONTROL" &&
        tries_while_failing $FROM >"$TMP/tries" &&
        cat "$TMP/tries" &&
        awk "{ t = (\$3 == \"/agent/sync\") } seen[t] { gap = \$1 - last[t]; n++; if (gap < 4 || gap > 6) bad++ }
                { seen[t] = 1; last[t] = \$1 } END { exit !(n >= 3 && !bad) }" "$TMP/tries" &&
        for _ in $(seq 1 100); do
                test "$(grep -c "manager: answering again after" "$TMP/agent.log")" = 2 && break
                sleep 0.1
        done &&
        test "$(grep -c "manager: answering again after" "$TMP/agent.log")" = 2
'

test_done
