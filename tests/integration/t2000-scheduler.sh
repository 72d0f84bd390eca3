#!/bin/bash
test_description='the scheduler in the manager: agents through the agent API, placement, reasons, limits, timeouts, agent loss'
. "$(dirname "$0")/../lib/test-lib.sh"

# create NAME RESOURCES_JSON [EXTRA_FIELDS [EXTRA_CONFIG_FIELDS]]: enqueue a session
create() {
        api POST /session "{\"name\": \"$1\", \"image\": \"python:3.11\", \"enqueueOnly\": true, \"config\": {\"resources\": $2${4:+, $4}}${3:+, $3}}"
        test "$CODE" = 201 || { echo "create $1: $CODE $(cat "$TMP/out")"; return 1; }
}

# through the admin list, which does not count as the owner's activity
status_of() {
        OUT=$TMP/st api GET "/sessions?name=$1"
        sed -n 's/.*"status":"\([A-Z]*\)".*/\1/p' "$TMP/st"
}

# wait_status NAME STATUS [TENTHS]: poll until the session is in STATUS
wait_status() {
        local s
        for _ in $(seq 1 "${3:-100}"); do
                s=$(status_of "$1")
                [ "$s" = "$2" ] && return 0
                sleep 0.1
        done
        echo "session $1 is $s, not $2: $(cat "$TMP/st")"
        return 1
}

cat >"$TMP/manager.conf" <<EOF
scheduler_interval = 1s
agent_lost_timeout = 1h
EOF

test_expect_success 'start a manager with an image registered' '
        start_manager --config "$TMP/manager.conf" &&
        api POST /admin/images "{\"name\": \"registry.test/stable/python\", \"tag\": \"3.11\"}" &&
        test "$CODE" = 201
'

test_expect_success 'the agent API refuses unsigned, badly signed and malformed heartbeats' '
        http POST /agent/heartbeat --data "{\"id\": \"x\"}" && test "$HTTP_STATUS" = 401 &&
        http POST /agent/heartbeat -H "Authorization: TesseraAgent id=x, signature=00" \
                -H "X-Tessera-Agent-Time: $(date +%s)" --data "{\"id\": \"x\"}" &&
        test "$HTTP_STATUS" = 401 && grep -q "signature mismatch" "$HTTP_BODY" &&
        test_must_fail agent_register bad "{\"cpu\": 4}" && test "$AGENT_STATUS" = 400 &&
        grep -q "needs cpu and mem" "$TMP/agent-out" &&
        test_must_fail agent_register bad "{\"cpu\": 4, \"mem\": \"8g\", \"cuda.shares\": 2}" &&
        grep -q "GPU slots need their devices" "$TMP/agent-out" &&
        test_must_fail agent_register bad "{\"cpu\": 4, \"mem\": \"8g\"}" "[{\"id\": \"0\", \"slot\": \"cuda.shares\", \"capacity\": \"-1\"}]" &&
        test "$AGENT_STATUS" = 400 &&
        test_must_fail agent_register bad "{\"cpu\": 4, \"mem\": \"8g\"}" "[]" nowhere &&
        grep -q "resource group .nowhere. does not exist" "$TMP/agent-out"
'

test_expect_success 'the seeds: one GPU worth 2 fGPU, three 1-fGPU sessions: two placed, one waits and says why' '
        agent_register a1 "{\"cpu\": 8, \"mem\": \"32g\"}" "$(gpus 1 2)" &&
        create sess1 "{\"cpu\": 1, \"mem\": \"1g\", \"cuda.shares\": 1}" &&
        create sess2 "{\"cpu\": 1, \"mem\": \"1g\", \"cuda.shares\": 1}" &&
        create sess3 "{\"cpu\": 1, \"mem\": \"1g\", \"cuda.shares\": 1}" &&
        wait_status sess1 SCHEDULED && wait_status sess2 SCHEDULED &&
        for _ in $(seq 1 50); do
                OUT=$TMP/sess3 api GET /session/sess3
                grep -q "agent_resources" "$TMP/sess3" && break
                sleep 0.1
        done &&
        grep -q "\"status\":\"PENDING\"" "$TMP/sess3" &&
        grep -q "\"failed_predicates\":\[{\"name\":\"agent_resources\"" "$TMP/sess3" &&
        grep -q "no agent has room for cpu 1, mem 1 GiB, 1 fGPU" "$TMP/sess3" &&
        grep -q "on one GPU" "$TMP/sess3"
'

test_expect_success 'placed sessions carry their agent, slots and GPU device' '
        api GET /session/sess1 &&
        grep -q "\"occupyingSlots\":{\"cpu\":\"1\",\"cuda.shares\":\"1\",\"mem\":\"1073741824\"}" "$TMP/out" &&
        grep -qE "\"SCHEDULED\":\"20" "$TMP/out" &&
        api GET /admin/agents/a1 && test "$CODE" = 200 &&
        grep -q "\"occupied_slots\":{\"cpu\":\"2\",\"cuda.shares\":\"2\",\"mem\":\"2147483648\"}" "$TMP/out" &&
        jq -e ".devices == [{\"id\": \"0\", \"slot\": \"cuda.shares\", \"capacity\": \"2\", \"model\": \"mock\", \"occupied\": \"2\"}]" "$TMP/out" &&
        api GET /admin/agents && jq -e ".items[] | select(.id == \"a1\") | .devices[0].occupied == \"2\"" "$TMP/out"
'

test_expect_success 'destroying a placed session places the waiting one within a second' '
        api DELETE /session/sess1 && test "$CODE" = 200 &&
        wait_status sess3 SCHEDULED 10 &&
        wait_status sess1 TERMINATED 10 &&
        api GET /session/sess1 && grep -q "\"statusInfo\":\"user-requested\"" "$TMP/out"
'

test_expect_success 'a session that can never fit is told so, and others pass it (fifo skips after retries)' '
        create bigone "{\"cpu\": 64, \"mem\": \"1g\"}" &&
        create small "{\"cpu\": 1, \"mem\": \"1g\"}" &&
        wait_status small SCHEDULED 100 &&
        api GET /session/bigone && grep -q "no agent has room for cpu 64" "$TMP/out" &&
        api DELETE /session/bigone && api DELETE /session/small
'

test_expect_success 'a CPU-only session avoids the GPU agent when another agent fits' '
        agent_register c1 "{\"cpu\": 4, \"mem\": \"8g\"}" &&
        create cpuonly "{\"cpu\": 1, \"mem\": \"1g\"}" &&
        wait_status cpuonly SCHEDULED &&
        api GET "/admin/agents/c1" && grep -q "\"occupied_slots\":{\"cpu\":\"1\"" "$TMP/out" &&
        api DELETE /session/cpuonly
'

test_expect_success 'project limits: the waiting session says which limit and by how much' '
        api PATCH /admin/projects/default "{\"total_resource_slots\": {\"cuda.shares\": \"2\"}}" &&
        test "$CODE" = 200 &&
        api DELETE /session/sess2 && wait_status sess2 TERMINATED &&
        create sess4 "{\"cpu\": 1, \"mem\": \"1g\", \"cuda.shares\": 1}" &&
        wait_status sess4 SCHEDULED &&
        create sess5 "{\"cpu\": 1, \"mem\": \"1g\", \"cuda.shares\": 1}" &&
        for _ in $(seq 1 50); do
                OUT=$TMP/sess5 api GET /session/sess5
                grep -q project_resource_limit "$TMP/sess5" && break
                sleep 0.1
        done &&
        grep -q "project gpu limit: 2 fGPU in use of 2; 1 fGPU requested" "$TMP/sess5" &&
        "$TESSERA" session info sess5 >"$TMP/cli" && grep -q "project gpu limit" "$TMP/cli" &&
        api PATCH /admin/projects/default "{\"total_resource_slots\": {}}" &&
        api DELETE /session/sess3 && api DELETE /session/sess4 && api DELETE /session/sess5
'

test_expect_success 'dependencies: wait for the dependency, cancelled when it fails' '
        create parent "{\"cpu\": 64, \"mem\": \"1g\"}" &&
        create child "{\"cpu\": 1, \"mem\": \"1g\"}" "\"dependencies\": [\"parent\"]" &&
        for _ in $(seq 1 50); do
                OUT=$TMP/child api GET /session/child
                grep -q "\"name\":\"dependencies\"" "$TMP/child" && break
                sleep 0.1
        done &&
        grep -q "dependency .parent. has not finished yet" "$TMP/child" &&
        api DELETE /session/parent &&
        wait_status child CANCELLED &&
        api GET /session/child && grep -q "\"statusInfo\":\"dependency-failed\"" "$TMP/out"
'

test_expect_success 'designated agents (superadmin only) are honoured' '
        create pinned "{\"cpu\": 1, \"mem\": \"1g\"}" "" "\"agent_list\": [\"a1\"]" &&
        wait_status pinned SCHEDULED &&
        api GET /admin/agents/a1 && grep -q "\"occupied_slots\":{\"cpu\":\"1\"" "$TMP/out" &&
        api DELETE /session/pinned
'

test_expect_success 'pending_timeout of the resource group cancels sessions that waited too long' '
        api PATCH /admin/resource-groups/default "{\"scheduler_opts\": {\"pending_timeout\": 1}}" &&
        test "$CODE" = 200 &&
        create waits "{\"cpu\": 64, \"mem\": \"1g\"}" &&
        wait_status waits CANCELLED 50 &&
        api GET /session/waits && grep -q "\"statusInfo\":\"pending-timeout\"" "$TMP/out" &&
        api PATCH /admin/resource-groups/default "{\"scheduler_opts\": {}}"
'

test_expect_success 'bad scheduler options are refused' '
        api PATCH /admin/resource-groups/default "{\"scheduler_opts\": {\"agent_selection\": \"random\"}}" &&
        test "$CODE" = 400 && grep -q "agent_selection" "$TMP/out" &&
        api PATCH /admin/resource-groups/default "{\"scheduler_opts\": {\"bogus\": 1}}" &&
        test "$CODE" = 400 && grep -q "unknown scheduler option" "$TMP/out"
'

test_expect_success 'lifetime rules: batch_timeout, max_session_lifetime, idle_timeout end sessions with their reason' '
        create batch1 "{\"cpu\": 1, \"mem\": \"1g\"}" "\"type\": \"batch\", \"startupCommand\": \"sleep 100\", \"batch_timeout\": 1" &&
        wait_status batch1 TERMINATED 50 &&
        api GET /session/batch1 && grep -q "\"statusInfo\":\"task-timeout\"" "$TMP/out" &&
        api PATCH /admin/keypair-policies/default "{\"max_session_lifetime\": 1}" && test "$CODE" = 200 &&
        create lifer "{\"cpu\": 1, \"mem\": \"1g\"}" &&
        wait_status lifer TERMINATED 50 &&
        api GET /session/lifer && grep -q "\"statusInfo\":\"session-lifetime\"" "$TMP/out" &&
        api PATCH /admin/keypair-policies/default "{\"max_session_lifetime\": 0, \"idle_timeout\": 1}" &&
        create idler "{\"cpu\": 1, \"mem\": \"1g\"}" &&
        wait_status idler TERMINATED 50 &&
        api GET /session/idler && grep -q "\"statusInfo\":\"idle-timeout\"" "$TMP/out" &&
        api PATCH /admin/keypair-policies/default "{\"idle_timeout\": 0}"
'

test_expect_success 'the owner using a session through the API keeps it from the idle timeout' '
        api PATCH /admin/keypair-policies/default "{\"idle_timeout\": 3}" &&
        create busy "{\"cpu\": 1, \"mem\": \"1g\"}" &&
        wait_status busy SCHEDULED 50 &&
        for _ in $(seq 1 20); do
                OUT=$TMP/busy api GET /session/busy && test "$CODE" = 200 || return 1
                sleep 0.3
        done &&
        test "$(status_of busy)" = SCHEDULED &&
        wait_status busy TERMINATED 80 &&
        api GET /session/busy && grep -q "\"statusInfo\":\"idle-timeout\"" "$TMP/out" &&
        api PATCH /admin/keypair-policies/default "{\"idle_timeout\": 0}"
'

# agent_status ID: its status as GET /admin/agents/ID says
agent_status() {
        OUT=$TMP/agent api GET "/admin/agents/$1" && jq -r .status "$TMP/agent"
}

test_expect_success 'an agent silent for three of its heartbeats is UNREACHABLE: its session waits, marked, and nothing new goes there' '
        stop_manager &&
        printf "scheduler_interval = 1s\nagent_lost_timeout = 1h\n" >"$TMP/short.conf" &&
        start_manager --config "$TMP/short.conf" &&
        AGENT_HEARTBEAT=1 agent_register u1 "{\"cpu\": 2, \"mem\": \"4g\"}" &&
        create onu1 "{\"cpu\": 1, \"mem\": \"1g\"}" "" "\"agent_list\": [\"u1\"]" &&
        wait_status onu1 SCHEDULED &&
        for _ in $(seq 1 100); do
                test "$(agent_status u1)" = UNREACHABLE && break
                sleep 0.2
        done &&
        test "$(agent_status u1)" = UNREACHABLE &&
        jq -e ".unreachable_since != null and .heartbeat_interval == 1" "$TMP/agent" &&
        grep -q "agent u1 is UNREACHABLE" "$MANAGER_LOG" &&
        api GET /session/onu1 &&
        jq -e ".status == \"SCHEDULED\" and .statusInfo == \"agent-unreachable\"
                and .statusData.agentUnreachable.agent == \"u1\" and .statusData.agentUnreachable.since != null" \
                "$TMP/out" &&
        create onu1b "{\"cpu\": 1, \"mem\": \"1g\"}" "" "\"agent_list\": [\"u1\"]" &&
        sleep 3 &&
        test "$(status_of onu1b)" = PENDING &&
        test "$(status_of onu1)" = SCHEDULED
'

test_expect_success 'its next heartbeat makes it ALIVE: the mark goes, the waiting session is placed there' '
        AGENT_HEARTBEAT=1 agent_register u1 "{\"cpu\": 2, \"mem\": \"4g\"}" &&
        test "$(agent_status u1)" = ALIVE &&
        jq -e ".unreachable_since == null" "$TMP/agent" &&
        api GET /session/onu1 &&
        jq -e ".status == \"SCHEDULED\" and .statusInfo != \"agent-unreachable\"
                and (.statusData | has(\"agentUnreachable\") | not)" "$TMP/out" &&
        wait_status onu1b SCHEDULED &&
        AGENT_HEARTBEAT=3600 agent_register u1 "{\"cpu\": 2, \"mem\": \"4g\"}"
'

test_expect_success 'an end reported before the heartbeat that takes the mark off keeps the reason it had before the mark' '
        AGENT_RUNTIME=runc AGENT_HEARTBEAT=1 agent_register u3 "{\"cpu\": 2, \"mem\": \"4g\"}" &&
        create onu3 "{\"cpu\": 1, \"mem\": \"1g\"}" "" "\"agent_list\": [\"u3\"]" &&
        wait_status onu3 SCHEDULED &&
        api DELETE /session/onu3 && test "$CODE" = 200 &&
        test "$(status_of onu3)" = TERMINATING &&
        for _ in $(seq 1 100); do
                api GET /session/onu3 && jq -e ".statusInfo == \"agent-unreachable\"" "$TMP/out" >/dev/null && break
                sleep 0.2
        done &&
        jq -e ".status == \"TERMINATING\" and .statusData.agentUnreachable.statusInfo == \"user-requested\"" "$TMP/out" &&
        K=$(db_sql "SELECT k.id FROM kernels k JOIN sessions s ON s.id = k.session_id WHERE s.name = '"'"'onu3'"'"'") &&
        agent_post u3 /agent/events "{\"id\": \"u3\", \"events\": [{\"seq\": 1, \"kernel\": \"$K\", \"kind\": \"exited\", \"exit_code\": 0}]}" &&
        test "$AGENT_STATUS" = 200 &&
        wait_status onu3 TERMINATED &&
        api GET /session/onu3 &&
        jq -e ".statusInfo == \"user-requested\" and (.statusData | has(\"agentUnreachable\") | not)" "$TMP/out" &&
        AGENT_HEARTBEAT=3600 agent_register u3 "{\"cpu\": 2, \"mem\": \"4g\"}"
'

# beat_u2: agent u2 heartbeats every second while $TMP/beating exists (30 s at most)
beat_u2() {
        local i
        for i in $(seq 1 30); do
                test -e "$TMP/beating" || return 0
                AGENT_HEARTBEAT=2 agent_register u2 "{\"cpu\": 2, \"mem\": \"4g\"}" >/dev/null
                sleep 1
        done
}

test_expect_success 'a manager restarted after a stop longer than agent_lost_timeout judges no agent before it could hear from it' '
        stop_manager &&
        printf "scheduler_interval = 1s\nagent_lost_timeout = 6s\n" >"$TMP/restart.conf" &&
        start_manager --config "$TMP/restart.conf" &&
        AGENT_HEARTBEAT=2 agent_register u2 "{\"cpu\": 2, \"mem\": \"4g\"}" &&
        create onu2 "{\"cpu\": 1, \"mem\": \"1g\"}" "" "\"agent_list\": [\"u2\"]" &&
        wait_status onu2 SCHEDULED &&
        stop_manager &&
        sleep 8 &&
        : >"$TMP/beating" &&
        start_manager --config "$TMP/restart.conf" &&
        { beat_u2 & } &&
        sleep 10 &&
        rm -f "$TMP/beating" && wait &&
        test "$(agent_status u2)" = ALIVE &&
        ! grep -q "agent u2 is \(UNREACHABLE\|LOST\)" "$MANAGER_LOG" &&
        api GET /session/onu2 &&
        jq -e ".status == \"SCHEDULED\" and (.statusData | has(\"agentUnreachable\") | not)" "$TMP/out"
'

test_expect_success 'an agent that stops heartbeating is LOST and its sessions end in ERROR (agent-lost)' '
        stop_manager &&
        printf "scheduler_interval = 1s\nagent_lost_timeout = 2s\n" >"$TMP/short.conf" &&
        start_manager --config "$TMP/short.conf" &&
        agent_register a1 "{\"cpu\": 8, \"mem\": \"32g\"}" "$(gpus 1 2)" &&
        agent_register c1 "{\"cpu\": 4, \"mem\": \"8g\"}" &&
        create orphan "{\"cpu\": 1, \"mem\": \"1g\", \"cuda.shares\": 1}" &&
        wait_status orphan SCHEDULED &&
        wait_status orphan ERROR 80 &&
        api GET /session/orphan && grep -q "\"statusInfo\":\"agent-lost\"" "$TMP/out" &&
        api GET /admin/agents/a1 && grep -q "\"status\":\"LOST\"" "$TMP/out" &&
        agent_register a1 "{\"cpu\": 8, \"mem\": \"32g\"}" "$(gpus 1 2)" &&
        api GET /admin/agents/a1 && grep -q "\"status\":\"ALIVE\"" "$TMP/out"
'

test_done
