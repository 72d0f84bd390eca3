#!/bin/bash
test_description='kill -9 of the agent with ten running sessions: they live on, the restarted agent adopts them again with their slots, and one that exited meanwhile is reported with its exit code'
. "$(dirname "$0")/../lib/test-lib.sh"
. "$(dirname "$0")/../lib/registry.sh"

test_with_containers
CONF=$MANAGER_STATE/agent.conf

N=10
SURVIVORS=$(seq -f 'live%g' 1 $N)

# agent_slot SLOT: the dev agent's occupied SLOT (admin agent info)
agent_slot() {
        OUT=$TMP/agents api GET /admin/agents
        jq -r ".items[0].occupied_slots[\"$1\"] // \"0\"" "$TMP/agents"
}

# sessions_slot SLOT NAME...: the sum of SLOT the sessions occupy (API)
sessions_slot() {
        local slot=$1 n sum=0
        shift
        for n in "$@"; do
                sum=$(echo "$sum + $(field "$n" "occupiedSlots[\"$slot\"]")" | bc)
        done
        echo "$sum"
}

# slots_equal A B: the same amount (1 and 1.0 are)
slots_equal() {
        test "$(echo "$1 == $2" | bc)" = 1 || { echo "slots differ: $1 != $2"; return 1; }
}

# start_sessions: the ten survivors (0.1 core and 33..42 MiB each) and
# "ender", a batch session that exits with 7 once /tmp/go exists; all
# RUNNING, their containers remembered
start_sessions() {
        local s i=0
        for s in $SURVIVORS; do
                i=$((i + 1))
                SESSION_RESOURCES="{\"cpu\": 0.1, \"mem\": \"$((32 + i))m\"}" create_session $s interactive || return 1
        done
        SESSION_RESOURCES="{\"cpu\": 0.2, \"mem\": \"64m\"}" \
                create_session ender batch "while [ ! -e /tmp/go ]; do sleep 0.1; done; echo ending; exit 7" || return 1
        remember_containers $SURVIVORS ender
}

# wait_agent_slot SLOT AMOUNT: until the agent occupies AMOUNT of SLOT (10 s)
wait_agent_slot() {
        for _ in $(seq 1 100); do
                slots_equal "$(agent_slot "$1")" "$2" >/dev/null && return 0
                sleep 0.1
        done
        slots_equal "$(agent_slot "$1")" "$2"
}

test_expect_success 'ten interactive sessions and a batch session that waits for a signal run' '
        start_dev_with_busybox &&
        start_sessions &&
        slots_equal "$(agent_slot cpu)" 1.2 &&
        slots_equal "$(agent_slot mem)" "$(sessions_slot mem $SURVIVORS ender)"
'

test_expect_success 'kill -9 of the agent leaves every container running' '
        PID=$(agent_pid "$CONF") && test -n "$PID" &&
        kill -9 "$PID" &&
        for _ in $(seq 1 50); do process_gone "$PID" && break; sleep 0.1; done &&
        process_gone "$PID" &&
        containers_running $SURVIVORS ender
'

test_expect_success 'while the agent is down the batch session ends with exit code 7' '
        runc --root "$RUNC_ROOT" exec "${CONTAINER[ender]}" /bin/touch /tmp/go &&
        for _ in $(seq 1 100); do container_running "${CONTAINER[ender]}" || break; sleep 0.1; done &&
        test_must_fail container_running "${CONTAINER[ender]}" &&
        test "$(field ender status)" = RUNNING
'

test_expect_success 'the restarted agent reports that session ended: FAILURE, exit code 7, its output kept' '
        start_agent "$CONF" "$TMP/agent.log" &&
        wait_status ender TERMINATED &&
        test "$(field ender result)" = FAILURE &&
        test "$(field ender statusInfo)" = task-failed &&
        test "$(field ender statusData.kernel.exit_code)" = 7 &&
        OUT=$TMP/logs api GET /session/ender/logs && test "$CODE" = 200 &&
        jq -r .result.logs "$TMP/logs" | grep -q "^ending$"
'

test_expect_success 'the ten run on in the same containers with the same processes, nothing re-created' '
        same_containers $SURVIVORS &&
        test "$(ls "$MANAGER_STATE/agent/containers" | wc -l)" = $N &&
        OUT=$TMP/agents api GET /admin/agents &&
        jq -e "(.items | length) == 1 and .items[0].status == \"ALIVE\"" "$TMP/agents"
'

test_expect_success 'the agent occupies exactly the slots of the ten' '
        wait_agent_slot cpu 1 &&
        slots_equal "$(agent_slot mem)" "$(sessions_slot mem $SURVIVORS)" &&
        slots_equal "$(agent_slot mem)" "$(( (33 + 42) * 5 * 1024 * 1024 ))"
'

test_expect_success 'the restarted agent owns the ten again: each one destroyed stops, its slots freed' '
        destroy_sessions $SURVIVORS &&
        wait_agent_slot cpu 0 && wait_agent_slot mem 0
'

# An OCI runtime that, while $TMP/hold exists, hangs in `run` (after
# writing its parent, the container's monitor, and itself to $TMP/held):
# a creation the test can cut short
cat >"$TMP/hanging-runc" <<EOF
#!/bin/sh
for a in "\$@"; do
        if [ "\$a" = run ] && [ -e "$TMP/hold" ]; then
                echo "\$PPID \$\$" >"$TMP/held"
                exec sleep 3600
        fi
done
exec runc "\$@"
EOF
chmod +x "$TMP/hanging-runc"

test_expect_success 'a start cut short by the agent'"'"'s death is made again when it returns, not reported ended' '
        PID=$(agent_pid "$CONF") && kill -9 "$PID" &&
        for _ in $(seq 1 50); do process_gone "$PID" && break; sleep 0.1; done &&
        sed -i "/^runc *=/d" "$CONF" && echo "runc = \"$TMP/hanging-runc\"" >>"$CONF" &&
        touch "$TMP/hold" && rm -f "$TMP/held" &&
        start_agent "$CONF" "$TMP/agent.log" &&
        SESSION_RESOURCES="{\"cpu\": 0.1, \"mem\": \"64m\"}" create_session cutshort interactive &&
        for _ in $(seq 1 300); do [ -s "$TMP/held" ] && break; sleep 0.1; done && test -s "$TMP/held" &&
        # the agent, the monitor and its runc die: the container is half made
        PID=$(agent_pid "$CONF") && kill -9 "$PID" $(cat "$TMP/held") &&
        for _ in $(seq 1 50); do process_gone "$PID" && break; sleep 0.1; done &&
        rm -f "$TMP/hold" &&
        start_agent "$CONF" "$TMP/agent.log" &&
        wait_status cutshort RUNNING &&
        grep -q "left half made by a restart; making it again" "$TMP/agent.log" &&
        session_run cutshort "echo alive" && grep -q "^alive$" "$TMP/console" &&
        sleep 2 && test "$(field cutshort status)" = RUNNING
'

test_done
