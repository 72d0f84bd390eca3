#!/bin/bash
test_description='kill -9 of the manager (tessera dev) with running sessions: they keep running, and after the restart nothing is created again'
. "$(dirname "$0")/../lib/test-lib.sh"
. "$(dirname "$0")/../lib/registry.sh"

[ "$(id -u)" = 0 ] || skip_all 'needs root (containers through runc)'
command -v runc >/dev/null || skip_all 'needs runc'

WAIT_TENTHS=300 # container starts under ASan on a loaded machine
CONF=$MANAGER_STATE/agent.conf
test_at_exit 'stop_agent_and_containers "$MANAGER_STATE/agent" "$CONF"'

SESSIONS="inter1 inter2 worker"
declare -A KID KPID HIST

# snapshot NAME...: each RUNNING; its container, process and status history
# into KID, KPID and HIST
snapshot() {
        local s
        for s in "$@"; do
                wait_status $s RUNNING || return 1
                KID[$s]=$(kernel_id $s)
                KPID[$s]=$(container_pid "${KID[$s]}")
                HIST[$s]=$(field $s statusHistory | jq -cS .)
                test -n "${KID[$s]}" && test -n "${KPID[$s]}" ||
                        { echo "$s: container '${KID[$s]}' pid '${KPID[$s]}'"; return 1; }
        done
}

# all_running NAME...: each container still runs
all_running() {
        local s
        for s in "$@"; do
                container_running "${KID[$s]}" || { echo "$s: container ${KID[$s]} is not running"; return 1; }
        done
}

# unchanged NAME...: RUNNING in the same container and process, the same
# status history
unchanged() {
        local s
        for s in "$@"; do
                test "$(field $s status)" = RUNNING && test "$(kernel_id $s)" = "${KID[$s]}" &&
                        container_running "${KID[$s]}" && test "$(container_pid "${KID[$s]}")" = "${KPID[$s]}" &&
                        test "$(field $s statusHistory | jq -cS .)" = "${HIST[$s]}" ||
                        { echo "$s: $(field $s status) $(kernel_id $s) pid $(container_pid "${KID[$s]}") (was ${KPID[$s]})"
                          echo "history $(field $s statusHistory | jq -cS .), was ${HIST[$s]}"; return 1; }
        done
}

test_expect_success 'three sessions run under tessera dev' '
        registry_start && registry_push busybox busybox:latest &&
        WITH_AGENT="--agent-network none" start_manager &&
        api POST /admin/images "{\"name\": \"busybox\", \"tag\": \"latest\", \"registry\": \"$REGISTRY\"}" &&
        test "$CODE" = 201 &&
        SESSION_RESOURCES="{\"cpu\": 0.2, \"mem\": \"64m\"}" create_session inter1 interactive &&
        SESSION_RESOURCES="{\"cpu\": 0.2, \"mem\": \"64m\"}" create_session inter2 interactive &&
        SESSION_RESOURCES="{\"cpu\": 0.2, \"mem\": \"64m\"}" create_session worker batch "sleep 3600" &&
        snapshot $SESSIONS &&
        ls "$MANAGER_STATE/agent/containers" >"$TMP/containers.before" &&
        test "$(wc -l <"$TMP/containers.before")" = 3
'

test_expect_success 'kill -9 of the manager: its agent stops with it, the containers keep running' '
        PORT=$MANAGER_PORT && MPID=$MANAGER_PID &&
        kill -9 "$MPID" &&
        for _ in $(seq 1 50); do process_gone "$MPID" && break; sleep 0.1; done &&
        process_gone "$MPID" &&
        stop_manager KILL; test "$MANAGER_EXIT" = 137 &&
        test_must_fail curl -sf -o /dev/null "$BACKEND_ENDPOINT/" &&
        for _ in $(seq 1 100); do test -z "$(agent_pid "$CONF")" && break; sleep 0.1; done &&
        test -z "$(agent_pid "$CONF")" &&
        grep -q "stopping; its containers keep running" "$MANAGER_LOG" &&
        all_running $SESSIONS
'

test_expect_success 'restarted on its port and database, the sessions are RUNNING as they were' '
        MANAGER_LISTEN_PORT=$PORT WITH_AGENT="--agent-network none" start_manager &&
        for _ in $(seq 1 100); do
                OUT=$TMP/agents api GET /admin/agents
                jq -e ".items[0].status == \"ALIVE\"" "$TMP/agents" >/dev/null && break
                sleep 0.1
        done &&
        sleep 3 &&
        unchanged $SESSIONS
'

test_expect_success 'nothing was created again: the same containers, one agent process' '
        ls "$MANAGER_STATE/agent/containers" >"$TMP/containers.after" &&
        test_cmp "$TMP/containers.before" "$TMP/containers.after" &&
        test "$(pgrep -fc "tessera agent --config $CONF\$")" = 1 &&
        OUT=$TMP/agents api GET /admin/agents &&
        jq -e "(.items | length) == 1 and .items[0].status == \"ALIVE\"" "$TMP/agents"
'

test_expect_success 'the restarted manager still drives them: a new session runs, the old ones stop when destroyed' '
        SESSION_RESOURCES="{\"cpu\": 0.2, \"mem\": \"64m\"}" create_session after interactive &&
        wait_status after RUNNING &&
        destroy_sessions $SESSIONS after
'

test_done
