#!/bin/bash
test_description='sessions end to end: tessera dev with its agent pulls a busybox image from a registry on loopback and runs real containers through runc'
. "$(dirname "$0")/../lib/test-lib.sh"
. "$(dirname "$0")/../lib/registry.sh"

test_with_containers

# The host's cgroup2 mount (cgroup_tune.h): its line of mountinfo.
cgroup2_mount() { awk '/ - cgroup2 / { print; exit }' /proc/self/mountinfo; }
grep -qx favordynmods /sys/kernel/cgroup/features 2>/dev/null && [ -n "$(cgroup2_mount)" ] &&
        test_set_prereq FAVORDYNMODS

test_expect_success FAVORDYNMODS 'before the agent: the host'"'"'s cgroup2 mount without favordynmods' '
        set -- $(cgroup2_mount) &&
        target=$5 mount_opts=$6 && shift $(($# - 1)) &&
        super_opts=$(echo "$1" | tr , "\n" | grep -vx favordynmods | paste -sd ,) &&
        echo "$mount_opts $super_opts" >"$TMP/cgroup2-opts" &&
        mount --options-mode ignore -o "remount,$mount_opts,$super_opts" "$target" &&
        ! cgroup2_mount | grep -q favordynmods
'

test_expect_success 'a busybox image is pushed to a registry on loopback and registered' '
        start_dev_with_busybox "--mock-gpus 1 --fgpu-per-gpu 2 --agent-network none"
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

test_expect_success FAVORDYNMODS 'the agent set favordynmods, keeping the mount'"'"'s other options' '
        set -- $(cgroup2_mount) &&
        mount_opts=$6 && shift $(($# - 1)) &&
        test "$mount_opts $(echo "$1" | tr , "\n" | grep -vx favordynmods | paste -sd ,)" = "$(cat "$TMP/cgroup2-opts")" &&
        echo "$1" | tr , "\n" | grep -qx favordynmods &&
        grep -q "cgroup2 remounted with favordynmods" "$MANAGER_LOG"
'

test_expect_success 'an interactive session is pulled, created and RUNNING in a real container' '
        create_session inter1 interactive &&
        wait_status inter1 RUNNING &&
        OUT=$TMP/info api GET /session/inter1 &&
        jq -e ".statusHistory | has(\"PREPARING\") and has(\"PULLING\") and has(\"CREATING\") and has(\"RUNNING\")" \
                "$TMP/info" &&
        K=$(kernel_id inter1) && test -n "$K" &&
        container_running "$K"
'

test_expect_success 'the image registry learns the image'"'"'s labels, digest and size from the agent' '
        OUT=$TMP/images api GET /admin/images && test "$CODE" = 200 &&
        jq -e ".items[] | select(.name == \"busybox\") | .labels[\"ai.backend.kernelspec\"] == \"1\"
                and .labels[\"ai.backend.runtime-path\"] == \"/bin/sh\" and (.digest | startswith(\"sha256:\"))
                and .size_bytes > 0" "$TMP/images"
'

test_expect_success 'inside: its own pid namespace, the allotted core; its init (the runner) has no new privileges, seccomp, fewer capabilities' '
        K=$(kernel_id inter1) &&
        runc --root "$RUNC_ROOT" exec "$K" /bin/sh -c "ps -o pid | wc -l" >"$TMP/ps" &&
        test "$(cat "$TMP/ps")" -lt 6 &&
        test "$(runc --root "$RUNC_ROOT" exec "$K" /bin/nproc)" = 1 &&
        runc --root "$RUNC_ROOT" exec "$K" /bin/cat /proc/1/status >"$TMP/status" &&
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

# inter1's c_info from /resource/usage/period (yesterday to today, UTC)
inter1_usage() {
        OUT=$TMP/usage api GET "/resource/usage/period?start_date=$(date -u -d yesterday +%Y%m%d)&end_date=$(date -u +%Y%m%d)" &&
                jq -c "[.[].c_infos[] | select(.name == \"inter1\")] | .[0]" "$TMP/usage"
}

test_expect_success 'measured use: 4 s of a busy loop in the container are about 4 s of CPU time, within wall time x cores' '
        K=$(kernel_id inter1) &&
        before=$(inter1_usage | jq .cpu_used) &&
        { runc --root "$RUNC_ROOT" exec "$K" timeout 4 sh -c "while :; do :; done"; test $? = 143; } &&
        for _ in $(seq 1 150); do
                e=$(inter1_usage)
                echo "$e" | jq -e ".cpu_used - $before >= 2000" >/dev/null && break
                sleep 0.1
        done &&
        echo "$e" | jq -c "{cpu_used, mem_used, io_read, io_write, used_seconds, cpu_allocated}" &&
        echo "$e" | jq -e ".cpu_used - $before >= 2000 and
                .cpu_used <= (.used_seconds + 1) * 1000 * .cpu_allocated and .mem_used > 0" &&
        OUT=$TMP/admin api GET "/admin/usage?group_by=domain" &&
        jq -e "[.totals[].cpu_used_seconds] | add >= 2" "$TMP/admin"
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
        create_session batch-ok batch "echo hello from batch" &&
        create_session batch-bad batch "exit 3" &&
        wait_status batch-ok TERMINATED && wait_status batch-bad TERMINATED &&
        test "$(field batch-ok result)" = SUCCESS && test "$(field batch-ok statusInfo)" = task-finished &&
        test "$(field batch-bad result)" = FAILURE && test "$(field batch-bad statusInfo)" = task-failed
'

test_expect_success 'a batch session busy for 3 s, shorter than a heartbeat interval, is measured to its end' '
        create_session busy3 batch "timeout 3 yes >/dev/null; exit 0" &&
        wait_status busy3 TERMINATED && test "$(field busy3 result)" = SUCCESS &&
        OUT=$TMP/usage api GET "/resource/usage/period?start_date=$(date -u -d yesterday +%Y%m%d)&end_date=$(date -u +%Y%m%d)" &&
        e=$(jq -c "[.[].c_infos[] | select(.name == \"busy3\")] | .[0] | {cpu_used, used_seconds, cpu_allocated}" "$TMP/usage") &&
        echo "$e" &&
        echo "$e" | jq -e ".cpu_used >= 1500 and .cpu_used <= (.used_seconds + 1) * 1000 * .cpu_allocated"
'

test_expect_success 'the output of a finished session stays readable through the API' '
        create_session talker batch "echo first line; echo second line >&2; exit 0" &&
        wait_status talker TERMINATED &&
        OUT=$TMP/logs api GET /session/talker/logs && test "$CODE" = 200 &&
        jq -r .result.logs "$TMP/logs" >"$TMP/logs.txt" &&
        grep -q "first line" "$TMP/logs.txt" && grep -q "second line" "$TMP/logs.txt"
'

test_done
