#!/bin/bash
test_description='sessions end to end: tessera dev with its agent pulls a busybox image from a registry on loopback and runs real containers through runc'
. "$(dirname "$0")/../lib/test-lib.sh"
. "$(dirname "$0")/../lib/registry.sh"

[ "$(id -u)" = 0 ] || skip_all 'needs root (containers through runc)'
command -v runc >/dev/null || skip_all 'needs runc'

AGENT_STATE=$MANAGER_STATE/agent
RUNC_ROOT=/run/tessera/runc
WAIT_TENTHS=300 # pulls and container starts under ASan on a loaded machine

create() { # NAME TYPE [STARTUP_COMMAND]
        api POST /session "{\"name\": \"$1\", \"image\": \"busybox:latest\", \"enqueueOnly\": true, \"type\": \"$2\"${3:+, \"startupCommand\": \"$3\"}, \"config\": {\"resources\": {\"cpu\": 1, \"mem\": \"256m\"}}}"
        test "$CODE" = 201 || { echo "create $1: $CODE $(cat "$TMP/out")"; return 1; }
}

kernel_id() { # NAME: the kernel (= container) id of the session, from the agent's records
        local sid k
        OUT=$TMP/k api GET "/sessions?name=$1"
        sid=$(jq -r ".items[0].sessionId" "$TMP/k")
        for k in $(ls "$AGENT_STATE/kernels" 2>/dev/null | sed -n "s/\.json$//p"); do
                if jq -e ".spec.session_id == \"$sid\"" "$AGENT_STATE/kernels/$k.json" >/dev/null; then
                        echo "$k"
                fi
        done
}

container_running() { # KERNEL
        local st
        st=$(runc --root "$RUNC_ROOT" state "$1" 2>/dev/null) && echo "$st" | jq -e ".status == \"running\"" >/dev/null
}

agent_pid() {
        pgrep -f "tessera agent --config $MANAGER_STATE/agent.conf" | head -n 1
}

test_cleanup_agent_() {
        local pid
        pid=$(agent_pid) && [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
        for c in $(ls "$AGENT_STATE/containers" 2>/dev/null); do
                runc --root "$RUNC_ROOT" kill "$c" KILL 2>/dev/null
                sleep 0.2
                runc --root "$RUNC_ROOT" delete -f "$c" 2>/dev/null
                umount "$AGENT_STATE/containers/$c/bundle/rootfs" 2>/dev/null
        done
        registry_stop
}
trap 'test_cleanup_agent_; test_cleanup_' EXIT

test_expect_success 'a busybox image is pushed to a registry on loopback and registered' '
        registry_start && registry_push busybox busybox:latest &&
        WITH_AGENT="--mock-gpus 1 --fgpu-per-gpu 2 --agent-network none" start_manager &&
        api POST /admin/images "{\"name\": \"busybox\", \"tag\": \"latest\", \"registry\": \"$REGISTRY\"}" &&
        test "$CODE" = 201
'

test_expect_success 'the dev agent registers with its cores, memory and mock GPU' '
        for _ in $(seq 1 100); do
                OUT=$TMP/agents api GET /admin/agents
                [ "$(jq ".items | length" "$TMP/agents")" = 1 ] && break
                sleep 0.1
        done &&
        jq -e ".items[0].status == \"ALIVE\" and (.items[0].availableSlots[\"cuda.shares\"] // .items[0].available_slots[\"cuda.shares\"]) == \"2\"" \
                "$TMP/agents"
'

test_expect_success 'an interactive session is pulled, created and RUNNING in a real container' '
        create inter1 interactive &&
        wait_status inter1 RUNNING &&
        OUT=$TMP/info api GET /session/inter1 &&
        jq -e ".statusHistory | has(\"PREPARING\") and has(\"PULLING\") and has(\"CREATING\") and has(\"RUNNING\")" \
                "$TMP/info" &&
        K=$(kernel_id inter1) && test -n "$K" &&
        container_running "$K"
'

test_expect_success 'inside: its own pid namespace, the allotted core, no new privileges, seccomp, fewer capabilities' '
        K=$(kernel_id inter1) &&
        runc --root "$RUNC_ROOT" exec "$K" /bin/sh -c "ps -o pid | wc -l" >"$TMP/ps" &&
        test "$(cat "$TMP/ps")" -lt 6 &&
        test "$(runc --root "$RUNC_ROOT" exec "$K" /bin/nproc)" = 1 &&
        runc --root "$RUNC_ROOT" exec "$K" /bin/cat /proc/self/status >"$TMP/status" &&
        grep -q "^NoNewPrivs:[[:space:]]*1" "$TMP/status" &&
        grep -q "^Seccomp:[[:space:]]*2" "$TMP/status" &&
        ! grep -q "^CapBnd:[[:space:]]*000001ffffffffff" "$TMP/status"
'

test_expect_success 'the agent reports its usage, shown as the session'"'"'s lastStat' '
        for _ in $(seq 1 150); do
                OUT=$TMP/info api GET /session/inter1
                jq -e ".lastStat.mem.current | tonumber > 0" "$TMP/info" >/dev/null 2>&1 && break
                sleep 0.1
        done &&
        jq -e ".lastStat.cpu_used.unit_hint == \"msec\" and (.lastStat.mem.capacity | tonumber) == 268435456
                and (.lastStat.cpu_util.capacity | tonumber) == 100" "$TMP/info"
'

test_expect_success 'destroying it stops the container and ends the session' '
        K=$(kernel_id inter1) &&
        api DELETE /session/inter1 && test "$CODE" = 200 &&
        wait_status inter1 TERMINATED &&
        test "$(field inter1 statusInfo)" = user-requested &&
        for _ in $(seq 1 50); do
                runc --root "$RUNC_ROOT" state "$K" >/dev/null 2>&1 || break
                sleep 0.1
        done &&
        test_must_fail runc --root "$RUNC_ROOT" state "$K"
'

test_expect_success 'batch sessions end by themselves with the result of their command' '
        create batch-ok batch "echo hello from batch" &&
        create batch-bad batch "exit 3" &&
        wait_status batch-ok TERMINATED && wait_status batch-bad TERMINATED &&
        test "$(field batch-ok result)" = SUCCESS && test "$(field batch-ok statusInfo)" = task-finished &&
        test "$(field batch-bad result)" = FAILURE && test "$(field batch-bad statusInfo)" = task-failed
'

test_expect_success 'kill -9 of the agent: sessions keep running; a session that ends meanwhile is reported after the restart' '
        create survivor interactive && create ender batch "sleep 5; exit 4" &&
        wait_status survivor RUNNING && wait_status ender RUNNING &&
        KS=$(kernel_id survivor) && KE=$(kernel_id ender) &&
        { test -n "$KS" && test -n "$KE" || { echo "kernels: \"$KS\" \"$KE\""; false; }; } &&
        PID=$(agent_pid) && { test -n "$PID" || { echo "no agent process"; ps ax | grep tessera; false; }; } &&
        kill -9 "$PID" &&
        for _ in $(seq 1 200); do container_running "$KE" || break; sleep 0.1; done &&
        { ! container_running "$KE" || { echo "ender still runs"; false; }; } &&
        { container_running "$KS" || { echo "survivor died with the agent"; false; }; } &&
        test "$(field survivor status)" = RUNNING && test "$(field ender status)" = RUNNING &&
        { "$TESSERA" agent --config "$MANAGER_STATE/agent.conf" >>"$MANAGER_LOG" 2>&1 & } &&
        wait_status ender TERMINATED &&
        test "$(field ender result)" = FAILURE &&
        OUT=$TMP/logs api GET /session/ender/logs && test "$CODE" = 200 &&
        test "$(field survivor status)" = RUNNING &&
        { container_running "$KS" || { echo "survivor died at the restart"; false; }; } &&
        api DELETE /session/survivor && wait_status survivor TERMINATED
'

test_expect_success 'the output of a finished session stays readable through the API' '
        create talker batch "echo first line; echo second line >&2; exit 0" &&
        wait_status talker TERMINATED &&
        OUT=$TMP/logs api GET /session/talker/logs && test "$CODE" = 200 &&
        jq -r .result.logs "$TMP/logs" >"$TMP/logs.txt" &&
        grep -q "first line" "$TMP/logs.txt" && grep -q "second line" "$TMP/logs.txt"
'

test_done
