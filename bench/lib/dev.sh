# shellcheck shell=bash
# bench/lib/dev.sh - a `tessera dev` (manager + child agent) for the agent
# benchmarks, with the busybox test image imported into the agent's store
# (so no pull is measured) and registered without a registry.  Source it
# after setting T (scratch directory, removed by the caller); call
# dev_cleanup from the caller's trap.
#
#   dev_start [tessera dev options]   starts it (network none unless told),
#                                     raises the admin keypair's limits
#   api METHOD PATH [BODY]            a signed request; body on stdout
#   session_body NAME [CPU MEM]       the JSON of an interactive busybox session
#   sse_start                         records GET /events/session?sessionName=*
#                                     into $T/sse, each line prefixed with the
#                                     wall time at which it was read (ns)
#   sse_wait NAME STATUS [SEC]        waits for that event in $T/sse; sets
#                                     SSE_T to its time (ns)
#   agent_pid                         the child agent's pid
#   dev_cleanup                       stops it; kills and deletes the
#                                     containers its agent left

AK=AKIABENCHAGENTBENCH0
SK=benchagentbenchagentbenchagentbenchagent
TESSERA=$PWD/build/tessera
TT=$PWD/build/test-tool
DEV_PID=
SSE_PID=
PORT=
RUNC_ROOT=/run/tessera/runc

api() { # METHOD PATH [BODY]
        local ct=text/plain h=()
        [ $# -ge 3 ] && ct=application/json
        while IFS= read -r l; do h+=(-H "$l"); done < <("$TT" sign "$1" "$2" "127.0.0.1:$PORT" $AK $SK $ct)
        curl -sS -m 30 -X "$1" "${h[@]}" ${3:+--data "$3"} "http://127.0.0.1:$PORT$2"
}

session_body() { # NAME [CPU MEM]
        printf '{"name": "%s", "image": "busybox:latest", "enqueueOnly": true, "type": "interactive", "config": {"resources": {"cpu": %s, "mem": "%s"}}}' \
                "$1" "${2:-1}" "${3:-64m}"
}

dev_start() {
        local img
        img=$(scripts/test-images/build.sh busybox | tail -n 1) || return 1
        mkdir -p "$T/state/agent"
        "$TESSERA" agent image import --store "$T/state/agent/images" --ref busybox:latest "$img" >/dev/null || return 1
        for _ in 1 2 3; do
                PORT=$((20000 + RANDOM % 30000))
                TESSERA_ADMIN_ACCESS_KEY=$AK TESSERA_ADMIN_SECRET_KEY=$SK TESSERA_ADMIN_PASSWORD=benchbench \
                        "$TESSERA" dev --state-dir "$T/state" --listen "127.0.0.1:$PORT" --agent-network none "$@" \
                        </dev/null >>"$T/dev.log" 2>&1 &
                DEV_PID=$!
                for _ in $(seq 1 100); do
                        curl -sf -m 1 -o /dev/null "http://127.0.0.1:$PORT/" && break
                        kill -0 $DEV_PID 2>/dev/null || break
                        sleep 0.1
                done
                kill -0 $DEV_PID 2>/dev/null && break
        done
        kill -0 $DEV_PID 2>/dev/null || { tail -n 20 "$T/dev.log" >&2; return 1; }
        api PATCH /admin/keypairs/$AK '{"rate_limit": 0}' >/dev/null &&
                api PATCH /admin/keypair-policies/default '{"max_concurrent_sessions": 100000}' >/dev/null &&
                api POST /admin/images '{"name": "busybox", "tag": "latest"}' >/dev/null || return 1
        for _ in $(seq 1 100); do
                api GET /admin/agents | jq -e '.items | length == 1' >/dev/null && return 0
                sleep 0.1
        done
        echo "the dev agent did not register" >&2
        return 1
}

agent_pid() {
        pgrep -f "tessera agent --config $T/state/agent.conf" | head -n 1
}

sse_start() {
        local h=()
        while IFS= read -r l; do h+=(-H "$l"); done < <("$TT" sign GET '/events/session?sessionName=*' \
                "127.0.0.1:$PORT" $AK $SK text/plain)
        : >"$T/sse"
        curl -sN "${h[@]}" "http://127.0.0.1:$PORT/events/session?sessionName=*" | while IFS= read -r line; do
                printf '%s %s\n' "${EPOCHREALTIME/./}000" "$line"
        done >>"$T/sse" &
        SSE_PID=$!
        exec {SSE_FD}<"$T/sse" {NAP_FD}<> <(:)
        declare -gA SSE_SEEN=()
        SSE_PART=
        sleep 0.3
}

# Without forking (the machine's cores are what is measured): read the
# stream's new lines into SSE_SEEN["name status"] (the first time seen),
# napping 2 ms (read -t on a pipe nobody writes) when there is none; sets
# SSE_T to the event's time.  Not in a subshell: $(sse_wait) would lose
# what it read.
sse_wait() { # NAME STATUS [SEC]
        local line re='^([0-9]+) data: .*"sessionName":"([^"]*)".*"status":"([^"]*)"' until
        until=$((${EPOCHREALTIME/./} + ${3:-60} * 1000000))
        while [ -z "${SSE_SEEN["$1 $2"]:-}" ]; do
                if IFS= read -r line <&$SSE_FD; then
                        line=$SSE_PART$line
                        SSE_PART=
                        [[ $line =~ $re ]] && [ -z "${SSE_SEEN["${BASH_REMATCH[2]} ${BASH_REMATCH[3]}"]:-}" ] &&
                                SSE_SEEN["${BASH_REMATCH[2]} ${BASH_REMATCH[3]}"]=${BASH_REMATCH[1]}
                        continue
                fi
                SSE_PART=$SSE_PART$line # a line still being written
                [ "${EPOCHREALTIME/./}" -lt "$until" ] || return 1
                read -r -t 0.002 -u $NAP_FD
        done
        SSE_T=${SSE_SEEN["$1 $2"]}
}

dev_cleanup() {
        local c
        [ -n "$SSE_PID" ] && { pkill -P "$SSE_PID" curl 2>/dev/null; kill "$SSE_PID" 2>/dev/null; }
        if [ -n "$DEV_PID" ]; then
                kill "$DEV_PID" 2>/dev/null
                wait "$DEV_PID" 2>/dev/null
        fi
        for c in $(ls "$T/state/agent/containers" 2>/dev/null); do
                runc --root "$RUNC_ROOT" kill "$c" KILL 2>/dev/null
        done
        sleep 0.5
        for c in $(ls "$T/state/agent/containers" 2>/dev/null); do
                runc --root "$RUNC_ROOT" delete -f "$c" 2>/dev/null
        done
        grep -F " $T/" /proc/mounts | awk '{print $2}' | sort -r | while read -r m; do umount -l "$m"; done
}
