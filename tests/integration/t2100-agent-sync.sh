#!/bin/bash
test_description='the agent protocol: desired kernels by long poll (POST /agent/sync), kernel events applied to sessions (POST /agent/events)'
. "$(dirname "$0")/../lib/test-lib.sh"

# This test plays the agent with signed requests, as the agent does.

# create NAME [TYPE [STARTUP_COMMAND]]: enqueue a small session
create() {
        api POST /session "{\"name\": \"$1\", \"image\": \"python:3.11\", \"enqueueOnly\": true, \"type\": \"${2:-interactive}\"${3:+, \"startupCommand\": \"$3\"}, \"config\": {\"resources\": {\"cpu\": 1, \"mem\": \"1g\"}}}"
        test "$CODE" = 201 || { echo "create $1: $CODE $(cat "$TMP/out")"; return 1; }
}

sync() { # [DIGEST [WAIT]]: the kernels of agent n1 into $TMP/agent-out
        agent_post n1 /agent/sync "{\"id\": \"n1\"${1:+, \"digest\": \"$1\"}${2:+, \"wait\": $2}}"
        test "$AGENT_STATUS" = 200 || { echo "sync: $AGENT_STATUS $(cat "$TMP/agent-out")"; return 1; }
}

kernel_of() { # SESSION_NAME: its kernel id in the last sync answer
        jq -r ".kernels[] | select(.session_name == \"$1\") | .id" "$TMP/agent-out"
}

SEQ=0
report() { # KERNEL KIND [EXTRA_JSON_FIELDS]: one event, expects it acknowledged
        SEQ=$((SEQ + 1))
        agent_post n1 /agent/events "{\"id\": \"n1\", \"events\": [{\"seq\": $SEQ, \"kernel\": \"$1\", \"kind\": \"$2\"${3:+, $3}}]}"
        test "$AGENT_STATUS" = 200 && test "$(jq .acked "$TMP/agent-out")" = "$SEQ" ||
                { echo "report $2: $AGENT_STATUS $(cat "$TMP/agent-out")"; return 1; }
}

test_expect_success 'start a manager and register an agent with a container runtime' '
        start_manager &&
        api POST /admin/images "{\"name\": \"python\", \"tag\": \"3.11\"}" && test "$CODE" = 201 &&
        AGENT_RUNTIME=runc agent_register n1 "{\"cpu\": 8, \"mem\": \"16g\"}"
'

test_expect_success 'an agent with nothing placed is told to run nothing' '
        sync && test "$(jq ".kernels | length" "$TMP/agent-out")" = 0 &&
        jq -e ".digest | test(\"^[0-9a-f]{32}$\")" "$TMP/agent-out"
'

test_expect_success 'a placed session is in the answer with what the agent needs to run it' '
        create sess-s1 &&
        wait_status sess-s1 SCHEDULED &&
        sync && K1=$(kernel_of sess-s1) && test -n "$K1" &&
        jq -e ".kernels[0] | .action == \"run\" and .image == \"python:3.11\" and .session_type == \"interactive\"
                and .cluster_role == \"main\" and .slots.cpu == \"1\" and (.slots.mem | length > 0)" "$TMP/agent-out"
'

test_expect_success 'preparing, creating and running walk the session to RUNNING, each step in its history' '
        report "$K1" preparing && test "$(field sess-s1 status)" = PREPARING &&
        report "$K1" creating && test "$(field sess-s1 status)" = CREATING &&
        report "$K1" running "\"container_id\": \"c-1\"" && test "$(field sess-s1 status)" = RUNNING &&
        OUT=$TMP/info api GET /session/sess-s1 &&
        jq -e ".statusHistory | has(\"SCHEDULED\") and has(\"PREPARING\") and has(\"CREATING\") and has(\"RUNNING\")" \
                "$TMP/info"
'

test_expect_success 'an event sent again changes nothing and is acknowledged' '
        SEQ=$((SEQ - 1)) && report "$K1" preparing && test "$(field sess-s1 status)" = RUNNING
'

test_expect_success 'the long poll waits while nothing changes and wakes when the session is destroyed' '
        sync && D=$(jq -r .digest "$TMP/agent-out") &&
        start=$(date +%s%N) && sync "$D" 1 && end=$(date +%s%N) &&
        test $(((end - start) / 1000000)) -ge 900 &&
        test "$(jq -r .digest "$TMP/agent-out")" = "$D" &&
        { (sleep 0.5; api DELETE /session/sess-s1) & } &&
        start=$(date +%s%N) && sync "$D" 20 && end=$(date +%s%N) && wait &&
        test $(((end - start) / 1000000)) -lt 10000 &&
        jq -e ".kernels[0].action == \"stop\"" "$TMP/agent-out" &&
        test "$(field sess-s1 status)" = TERMINATING
'

test_expect_success 'the kernel exiting ends a TERMINATING session, the reason kept' '
        report "$K1" exited "\"exit_code\": 137" &&
        test "$(field sess-s1 status)" = TERMINATED && test "$(field sess-s1 statusInfo)" = user-requested &&
        sync && test "$(kernel_of sess-s1)" = ""
'

test_expect_success 'a batch session ends by itself: SUCCESS on exit 0, FAILURE otherwise' '
        create sess-b0 batch "true" && create sess-b3 batch "exit 3" &&
        wait_status sess-b0 SCHEDULED && wait_status sess-b3 SCHEDULED && sync &&
        K0=$(kernel_of sess-b0) && K3=$(kernel_of sess-b3) &&
        jq -e ".kernels[] | select(.session_name == \"sess-b3\") | .startup_command == \"exit 3\"" "$TMP/agent-out" &&
        report "$K0" running && report "$K0" exited "\"exit_code\": 0" &&
        report "$K3" running && report "$K3" exited "\"exit_code\": 3" &&
        test "$(field sess-b0 status)" = TERMINATED && test "$(field sess-b0 result)" = SUCCESS &&
        test "$(field sess-b0 statusInfo)" = task-finished &&
        test "$(field sess-b3 status)" = TERMINATED && test "$(field sess-b3 result)" = FAILURE &&
        test "$(field sess-b3 statusInfo)" = task-failed
'

test_expect_success 'an interactive session whose kernel exits on its own is self-terminated' '
        create sess-s2 && wait_status sess-s2 SCHEDULED && sync && K=$(kernel_of sess-s2) &&
        report "$K" running && report "$K" exited "\"exit_code\": 0" &&
        test "$(field sess-s2 status)" = TERMINATED && test "$(field sess-s2 statusInfo)" = self-terminated
'

test_expect_success 'out of memory ends in ERROR (oom-killed); a creation failure in ERROR with the message' '
        create sess-s3 && create sess-s4 && wait_status sess-s3 SCHEDULED && wait_status sess-s4 SCHEDULED && sync &&
        K3=$(kernel_of sess-s3) && K4=$(kernel_of sess-s4) &&
        report "$K3" running && report "$K3" exited "\"exit_code\": 137, \"oom\": true" &&
        test "$(field sess-s3 status)" = ERROR && test "$(field sess-s3 statusInfo)" = oom-killed &&
        report "$K4" failed "\"message\": \"pulling python:3.11: manifest unknown\"" &&
        test "$(field sess-s4 status)" = ERROR && test "$(field sess-s4 statusInfo)" = creation-failed &&
        OUT=$TMP/info api GET /session/sess-s4 &&
        jq -e ".statusData.error.repr | test(\"manifest unknown\")" "$TMP/info"
'

test_expect_success 'events about kernels of other agents are acknowledged and ignored' '
        create sess-s5 && wait_status sess-s5 SCHEDULED && sync && K=$(kernel_of sess-s5) &&
        AGENT_RUNTIME=runc agent_register n2 "{\"cpu\": 8, \"mem\": \"16g\"}" &&
        agent_post n2 /agent/events "{\"id\": \"n2\", \"events\": [{\"seq\": 1, \"kernel\": \"$K\", \"kind\": \"exited\", \"exit_code\": 1}]}" &&
        test "$AGENT_STATUS" = 200 && test "$(jq .acked "$TMP/agent-out")" = 1 &&
        test "$(field sess-s5 status)" = SCHEDULED
'

test_expect_success 'malformed requests are refused with a precise 400 and change nothing' '
        agent_post n1 /agent/events "{\"id\": \"n1\", \"events\": [{\"seq\": 99, \"kernel\": \"x\", \"kind\": \"exploded\"}]}" &&
        test "$AGENT_STATUS" = 400 && grep -q "unknown event kind" "$TMP/agent-out" &&
        agent_post n1 /agent/events "{\"id\": \"n1\", \"events\": [{\"kernel\": \"x\", \"kind\": \"running\"}]}" &&
        test "$AGENT_STATUS" = 400 && grep -q "seq" "$TMP/agent-out" &&
        agent_post n1 /agent/events "{\"id\": \"n1\", \"events\": {}}" && test "$AGENT_STATUS" = 400 &&
        agent_post n1 /agent/sync "{\"id\": \"n1\", \"wait\": 31}" && test "$AGENT_STATUS" = 400 &&
        grep -q "wait" "$TMP/agent-out" &&
        agent_post n1 /agent/sync "{\"id\": \"n2\"}" && test "$AGENT_STATUS" = 403 &&
        http POST /agent/sync --data "{\"id\": \"n1\"}" && test "$HTTP_STATUS" = 401
'

test_done
