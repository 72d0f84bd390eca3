#!/bin/bash
test_description='limits and isolation of real sessions: the memory limit ends a session in ERROR (oom-killed), a fork bomb stops at the pids limit, a session sees neither the processes nor the files of another'
. "$(dirname "$0")/../lib/test-lib.sh"
. "$(dirname "$0")/../lib/registry.sh"

test_with_containers
CONF=$MANAGER_STATE/agent.conf

# in_session NAME CMD...: run CMD in the session's container (as an administrator
# on the node would)
in_session() {
        local k
        k=$(kernel_id "$1") && test -n "$k" || { echo "no container for $1"; return 1; }
        shift
        runc --root "$RUNC_ROOT" exec "$k" "$@"
}

# cgroup CONTROLLER KERNEL FILE: a file of the container's cgroup (v1 or v2)
cgroup() {
        if [ -d "/sys/fs/cgroup/$1/tessera/$2" ]; then
                cat "/sys/fs/cgroup/$1/tessera/$2/$3"
        else
                cat "/sys/fs/cgroup/tessera/$2/$3"
        fi
}

# cgroup_kill KERNEL: kill -9 whatever is left in the container's cgroup
# (a fork bomb that got out of its container's pid namespace)
cgroup_kill() {
        local f=/sys/fs/cgroup/pids/tessera/$1/cgroup.procs
        [ -e "$f" ] || f=/sys/fs/cgroup/tessera/$1/cgroup.procs
        for _ in $(seq 1 50); do
                [ -s "$f" ] || return 0
                xargs -r kill -9 <"$f"
                sleep 0.1
        done
}

test_expect_success 'the dev agent runs with a busybox image from the registry' '
        start_dev_with_busybox
'

test_expect_success 'a session that needs more than its memory ends in ERROR, oom-killed' '
        SESSION_RESOURCES="{\"cpu\": 0.5, \"mem\": \"64m\"}" \
                create_session memhog batch "echo allocating; dd if=/dev/zero of=/dev/null bs=512M count=1; echo dd: \$?" &&
        for _ in $(seq 1 300); do
                case $(field memhog status) in ERROR | TERMINATED | CANCELLED) break ;; esac
                sleep 0.1
        done &&
        test "$(field memhog status)" = ERROR &&
        test "$(field memhog statusInfo)" = oom-killed &&
        test "$(field memhog statusData.error.name)" = OutOfMemory &&
        OUT=$TMP/logs api GET /session/memhog/logs && test "$CODE" = 200 &&
        jq -r .result.logs "$TMP/logs" >"$TMP/memhog.log" &&
        grep -q "^allocating" "$TMP/memhog.log" && grep -q "^dd: 137$" "$TMP/memhog.log"
'

test_expect_success 'a session within its memory is not touched' '
        SESSION_RESOURCES="{\"cpu\": 0.5, \"mem\": \"256m\"}" \
                create_session modest batch "dd if=/dev/zero of=/dev/null bs=32M count=1 && echo done" &&
        wait_status modest TERMINATED &&
        test "$(field modest result)" = SUCCESS
'

test_expect_success 'a fork bomb stops at the pids limit; the host can still fork and the API answers' '
        SESSION_RESOURCES="{\"cpu\": 0.5, \"mem\": \"1g\"}" create_session bomb interactive &&
        wait_status bomb RUNNING &&
        K=$(kernel_id bomb) &&
        test_at_exit "cgroup_kill $K" &&
        MAX=$(cgroup pids "$K" pids.max) && test "$MAX" -gt 0 &&
        runc --root "$RUNC_ROOT" exec -d "$K" /bin/sh -c "b() { b | b & }; b" &&
        for _ in $(seq 1 300); do
                test "$(cgroup pids "$K" pids.current)" -ge "$MAX" && break
                sleep 0.1
        done &&
        test "$(cgroup pids "$K" pids.current)" -le "$MAX" &&
        cgroup pids "$K" pids.events | grep -E "^max [1-9]" &&
        /bin/sh -c "exit 0" &&
        curl -sf -m 5 -o /dev/null "$BACKEND_ENDPOINT/" &&
        test "$(field bomb status)" = RUNNING
'

test_expect_success 'the fork bomb session is destroyed with all its processes' '
        K=$(kernel_id bomb) &&
        destroy_sessions bomb &&
        for _ in $(seq 1 100); do
                test -d "/sys/fs/cgroup/pids/tessera/$K" || test -d "/sys/fs/cgroup/tessera/$K" || break
                sleep 0.1
        done &&
        ! test -d "/sys/fs/cgroup/pids/tessera/$K" && ! test -d "/sys/fs/cgroup/tessera/$K"
'

test_expect_success 'two sessions: one holds a process and a file' '
        SESSION_RESOURCES="{\"cpu\": 0.2, \"mem\": \"64m\"}" create_session peer-a interactive &&
        SESSION_RESOURCES="{\"cpu\": 0.2, \"mem\": \"64m\"}" create_session peer-b batch \
                "echo secret-of-b >/home/work/b-secret; echo secret-of-b >/tmp/b-secret; exec sleep 31337" &&
        wait_status peer-a RUNNING && wait_status peer-b RUNNING &&
        for _ in $(seq 1 50); do in_session peer-b cat /home/work/b-secret 2>/dev/null | grep -q secret-of-b && break; sleep 0.1; done &&
        in_session peer-b ps -o args >"$TMP/ps-b" && grep -q "sleep 31337" "$TMP/ps-b" &&
        SPID=$(pgrep -f "^sleep 31337$") && test -n "$SPID"
'

test_expect_success 'the other sees none of its processes, nor the host'"'"'s' '
        in_session peer-a ps -o pid,args >"$TMP/ps-a" &&
        cat "$TMP/ps-a" &&
        ! grep -q "sleep 31337" "$TMP/ps-a" &&
        ! grep -qE "tessera (agent|dev|_monitor)" "$TMP/ps-a" &&
        ! grep -q "docker-registry" "$TMP/ps-a" &&
        test "$(in_session peer-a ls /proc | grep -c "^[0-9][0-9]*$")" -lt 5 &&
        in_session peer-a cat /proc/1/cmdline | tr "\0" " " | grep -q "^/opt/tessera/runner" &&
        test_must_fail in_session peer-a test -e "/proc/$SPID"
'

test_expect_success 'nor its files' '
        test_must_fail in_session peer-a cat /home/work/b-secret &&
        test_must_fail in_session peer-a cat /tmp/b-secret &&
        in_session peer-a find / -xdev -name b-secret >"$TMP/find-a" 2>/dev/null;
        test ! -s "$TMP/find-a" &&
        ! in_session peer-a grep -rqs secret-of-b /home /tmp /root /var 2>/dev/null
'

test_expect_success 'both are destroyed' '
        destroy_sessions peer-a peer-b
'

test_done
