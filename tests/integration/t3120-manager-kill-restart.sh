#!/bin/bash
test_description='kill -9 of the manager (tessera dev) with running sessions: they keep running, and after the restart nothing is created again'
. "$(dirname "$0")/../lib/test-lib.sh"
. "$(dirname "$0")/../lib/registry.sh"

test_with_containers
CONF=$MANAGER_STATE/agent.conf

SESSIONS="inter1 inter2 worker"
declare -A HIST

# remember NAME...: their containers and status histories
remember() {
        local s
        remember_containers "$@" || return 1
        for s in "$@"; do
                HIST[$s]=$(field $s statusHistory | jq -cS .)
        done
}

# unchanged NAME...: RUNNING in the same container and process, with the
# same status history
unchanged() {
        local s
        same_containers "$@" || return 1
        for s in "$@"; do
                test "$(field $s statusHistory | jq -cS .)" = "${HIST[$s]}" ||
                        { echo "$s: history $(field $s statusHistory | jq -cS .), was ${HIST[$s]}"; return 1; }
        done
}

test_expect_success 'three sessions run under tessera dev' '
        start_dev_with_busybox &&
        SESSION_RESOURCES="{\"cpu\": 0.2, \"mem\": \"64m\"}" create_session inter1 interactive &&
        SESSION_RESOURCES="{\"cpu\": 0.2, \"mem\": \"64m\"}" create_session inter2 interactive &&
        SESSION_RESOURCES="{\"cpu\": 0.2, \"mem\": \"64m\"}" create_session worker batch "sleep 3600" &&
        remember $SESSIONS &&
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
        containers_running $SESSIONS
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
