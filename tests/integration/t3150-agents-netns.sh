#!/bin/bash
test_description='three agents in network namespaces of this machine with one manager: sessions spread over them; two agents in one namespace take distinct bridges and subnets by themselves; one agent cut off for a while is UNREACHABLE and its sessions wait for it, one cut off past agent_lost_timeout goes LOST and only its sessions end (agent-lost); a manager down longer than that ends nothing; the agents share nothing'
. "$(dirname "$0")/../lib/test-lib.sh"
. "$(dirname "$0")/../lib/registry.sh"

test_with_containers
command -v nsenter >/dev/null || skip_all 'needs nsenter (util-linux)'
command -v nft >/dev/null || skip_all 'needs nft (Debian package nftables, scripts/install-deps.sh)'
AGENTS="1 2 3"
# names of this run: bridge, namespaces and host ends of the veths
BR=tbr$$
ns() { echo "tessera-t3150-$$-$1"; }
veth() { echo "tvh$$x$1"; }
# a /24 no interface here has: 10.(200..249).(0..255)
NET=
for i in $(seq 0 20); do
        n=10.$((200 + ($$ + i) % 50)).$(( ($$ / 50 + i) % 256 ))
        ip -4 addr | grep -q " $n\." || { NET=$n; break; }
done
[ -n "$NET" ] || skip_all 'no free 10.x.y.0/24 here'

declare -A WHERE

# network_up: the bridge on the host (NET.1) and, for each agent, a
# namespace whose up0 (NET.1N) is a veth on the bridge
network_up() {
        local n
        ip link add "$BR" type bridge && ip addr add "$NET.1/24" dev "$BR" && ip link set "$BR" up || return 1
        for n in $AGENTS; do
                ip netns add "$(ns $n)" && plug $n || return 1
        done
}

# plug N: (re)connect agent N's namespace to the bridge
plug() {
        ip link add "$(veth $1)" type veth peer name up0 netns "$(ns $1)" &&
                ip link set "$(veth $1)" master "$BR" up &&
                ip -n "$(ns $1)" link set lo up &&
                ip -n "$(ns $1)" addr add "$NET.1$1/24" dev up0 &&
                ip -n "$(ns $1)" link set up0 up &&
                ip -n "$(ns $1)" route add default via "$NET.1"
}

network_down() {
        local n
        for n in $AGENTS; do
                # the agents' claims on their bridges there (netns_bridge_claim)
                rm -f /run/tessera/bridges/"$(stat -L -c %i "/run/netns/$(ns $n)")"-*.lock
                ip netns del "$(ns $n)"
        done
        ip link del "$BR"
}

# agent_conf N: agent N's configuration (its own state_dir and image store)
agent_conf() {
        cat >"$TMP/agent-$1.conf" <<EOF
manager = "$BACKEND_ENDPOINT"
id = "node-$1"
state_dir = "$TMP/agent-$1"
cluster_secret_file = "$MANAGER_STATE/cluster.secret"
heartbeat_interval = "1s"
log_level = "debug"
EOF
}

# place NAME...: remember their containers; WHERE[NAME] = the agent whose
# state holds the session's container
place() {
        local s n
        remember_containers "$@" || return 1
        for s in "$@"; do
                WHERE[$s]=
                for n in $AGENTS; do
                        [ -d "$TMP/agent-$n/containers/${CONTAINER[$s]}" ] && WHERE[$s]="${WHERE[$s]}$n"
                done
                test "${#WHERE[$s]}" = 1 || { echo "$s: container ${CONTAINER[$s]} on agent(s) '${WHERE[$s]}'"; return 1; }
        done
}

# on N: the sessions on agent N
on() {
        local s
        for s in "${!WHERE[@]}"; do
                [ "${WHERE[$s]}" = "$1" ] && echo "$s"
        done | sort
}

# reach_all: every namespace reaches the manager
reach_all() {
        local n
        for n in $AGENTS; do
                ip netns exec "$(ns $n)" curl -sf -m 5 -o /dev/null "$BACKEND_ENDPOINT/" ||
                        { echo "namespace $n cannot reach $BACKEND_ENDPOINT"; return 1; }
        done
}

# start_agents: an agent in each namespace with the busybox image imported
# into its own store
start_agents() {
        local n image
        image=$(test_image busybox) && test -d "$image" || return 1
        for n in $AGENTS; do
                agent_conf $n
                test_at_exit "stop_agent_and_containers $TMP/agent-$n $TMP/agent-$n.conf $(ns $n)"
                "$TESSERA" agent image --store "$TMP/agent-$n/images" import "$image" >/dev/null &&
                        start_agent "$TMP/agent-$n.conf" "$TMP/agent-$n.log" "$(ns $n)" || return 1
        done
}

# alive N: how many agents are ALIVE, waiting up to 10 s for N
alive() {
        for _ in $(seq 1 100); do
                OUT=$TMP/agents api GET /admin/agents
                test "$(jq "[.items[] | select(.status == \"ALIVE\")] | length" "$TMP/agents")" = "$1" && return 0
                sleep 0.1
        done
        jq -c "[.items[] | {id, status}]" "$TMP/agents"
        return 1
}

# two_each: two sessions on every agent
two_each() {
        local n
        for n in $AGENTS; do
                test "$(on $n | wc -l)" = 2 || { echo "agent $n: $(on $n | tr "\n" " ")"; return 1; }
        done
}

# own_pieces NAME...: the session's container is in its agent's state only,
# its veth on the tessera0 bridge of its agent's namespace, not on the host
own_pieces() {
        local s n m veth
        for s in "$@"; do
                n=${WHERE[$s]}
                for m in $AGENTS; do
                        [ $m = $n ] || [ ! -e "$TMP/agent-$m/kernels/${CONTAINER[$s]}.json" ] ||
                                { echo "$s: agent $m has a record of it too"; return 1; }
                done
                veth=$(jq -r .veth "$TMP/agent-$n/containers/${CONTAINER[$s]}/container.json")
                test -n "$veth" && test "$veth" != null || { echo "$s: no veth"; return 1; }
                nsenter --net=/run/netns/$(ns $n) ip link show "$veth" | grep -q "master tessera0" ||
                        { echo "$s: $veth is not on tessera0 in $(ns $n)"; return 1; }
                ! ip link show "$veth" >/dev/null 2>&1 || { echo "$s: $veth is on the host"; return 1; }
        done
}

# ended_lost NAME...: each ERROR (agent-lost) within 5 s
ended_lost() {
        local s
        for s in "$@"; do
                for _ in $(seq 1 50); do test "$(field $s status)" = ERROR && break; sleep 0.1; done
                test "$(field $s status)" = ERROR && test "$(field $s statusInfo)" = agent-lost ||
                        { echo "$s: $(field $s status) $(field $s statusInfo)"; return 1; }
        done
}

# stopped NAME...: each container gone within 15 s
stopped() {
        local s
        for s in "$@"; do
                for _ in $(seq 1 150); do container_running "${CONTAINER[$s]}" || break; sleep 0.1; done
                ! container_running "${CONTAINER[$s]}" || { echo "$s still runs"; return 1; }
        done
}

# marked NAME...: each RUNNING, marked as waiting for its unreachable agent
marked() {
        local s
        for s in "$@"; do
                OUT=$TMP/s api GET "/session/$s" &&
                        jq -e ".status == \"RUNNING\" and .statusInfo == \"agent-unreachable\"
                                and .statusData.agentUnreachable.agent == \"node-${WHERE[$s]}\"" "$TMP/s" >/dev/null ||
                        { echo "$s: $(jq -c "{status, statusInfo, statusData}" "$TMP/s")"; return 1; }
        done
}

# unmarked NAME...: each RUNNING without the mark
unmarked() {
        local s
        for s in "$@"; do
                OUT=$TMP/s api GET "/session/$s" &&
                        jq -e ".status == \"RUNNING\" and .statusInfo != \"agent-unreachable\"
                                and (.statusData | has(\"agentUnreachable\") | not)" "$TMP/s" >/dev/null ||
                        { echo "$s: $(jq -c "{status, statusInfo, statusData}" "$TMP/s")"; return 1; }
        done
}

# agent_status N: node-N's status in the admin API
agent_status() {
        OUT=$TMP/agents api GET /admin/agents
        jq -r ".items[] | select(.id == \"node-$1\") | .status" "$TMP/agents"
}

test_at_exit 'network_down'

test_expect_success 'three namespaces on a bridge; the manager listens on the bridge' '
        network_up &&
        printf "agent_lost_timeout = \"20s\"\nscheduler_interval = \"1s\"\n" >"$TMP/manager.conf" &&
        MANAGER_HOST=$NET.1 start_manager --config "$TMP/manager.conf" &&
        api POST /admin/images "{\"name\": \"busybox\", \"tag\": \"latest\"}" && test "$CODE" = 201 &&
        reach_all
'

test_expect_success 'an agent in each namespace, each with its own state and image store, registers' '
        start_agents && alive 3
'

test_expect_success 'six sessions of one core fill the three agents, two on each' '
        for i in 1 2 3 4 5 6; do
                SESSION_RESOURCES="{\"cpu\": 1, \"mem\": \"64m\"}" create_session "spread$i" interactive
        done &&
        place spread1 spread2 spread3 spread4 spread5 spread6 &&
        two_each
'

test_expect_success 'the agents share nothing: each container in its agent'"'"'s state, namespace and bridge' '
        own_pieces "${!WHERE[@]}"
'

# in1 CMD...: CMD in namespace 1
in1() {
        nsenter --net=/run/netns/$(ns 1) "$@"
}

test_expect_success 'a second agent in the namespace of another takes the next bridge and subnet by itself' '
        agent_conf 4 &&
        test_at_exit "stop_agent_and_containers $TMP/agent-4 $TMP/agent-4.conf $(ns 1)" &&
        start_agent "$TMP/agent-4.conf" "$TMP/agent-4.log" "$(ns 1)" &&
        alive 4 &&
        test "$(cat "$TMP/agent-1/bridge")" = "tessera0 10.88.0.1/16" &&
        test "$(cat "$TMP/agent-4/bridge")" = "tessera1 10.89.0.1/16" &&
        grep "bridge tessera1 with 10.89.0.1/16 chosen" "$TMP/agent-4.log" &&
        in1 ip -4 -o addr show dev tessera1 | grep " 10.89.0.1/16 " &&
        in1 nft list table bridge tessera-tessera1 >/dev/null &&
        in1 nft list table inet tessera-tessera1 >/dev/null
'

test_expect_success 'an agent configured with the bridge of another is refused, one with an overlapping subnet too' '
        agent_conf 5 &&
        test_at_exit "stop_agent_and_containers $TMP/agent-5 $TMP/agent-5.conf $(ns 1)" &&
        printf "bridge = \"tessera0\"\n" >>"$TMP/agent-5.conf" &&
        test_must_fail timeout 20 nsenter --net=/run/netns/$(ns 1) "$TESSERA" agent --config "$TMP/agent-5.conf" >"$TMP/agent-5.log" 2>&1 &&
        grep "bridge .tessera0. of this network namespace is the agent.s of state_dir .$TMP/agent-1." "$TMP/agent-5.log" &&
        agent_conf 5 &&
        printf "bridge = \"tessera7\"\nbridge_cidr = \"10.89.128.1/17\"\n" >>"$TMP/agent-5.conf" &&
        test_must_fail timeout 20 nsenter --net=/run/netns/$(ns 1) "$TESSERA" agent --config "$TMP/agent-5.conf" >"$TMP/agent-5.log" 2>&1 &&
        grep "the subnet 10.89.128.1/17 of the bridge .tessera7. overlaps the address 10.89.0.1/16 on tessera1" "$TMP/agent-5.log" &&
        test_must_fail in1 ip link show tessera7
'

test_expect_success 'the second agent stopped with no container on its bridge removes the bridge and its tables' '
        PID=$(agent_pid "$TMP/agent-4.conf") && kill -TERM "$PID" &&
        for _ in $(seq 1 100); do process_gone "$PID" && break; sleep 0.1; done &&
        process_gone "$PID" &&
        test_must_fail in1 ip link show tessera1 &&
        test_must_fail in1 nft list table bridge tessera-tessera1 &&
        test_must_fail in1 nft list table inet tessera-tessera1 &&
        in1 nft list table bridge tessera-tessera0 >/dev/null
'

test_expect_success 'kill -9 and restart of one agent touches no other agent'"'"'s containers' '
        PID=$(agent_pid "$TMP/agent-1.conf") && kill -9 "$PID" &&
        for _ in $(seq 1 50); do process_gone "$PID" && break; sleep 0.1; done &&
        start_agent "$TMP/agent-1.conf" "$TMP/agent-1.log" "$(ns 1)" &&
        sleep 3 &&
        same_containers $(on 1) $(on 2) $(on 3) &&
        test "$(agent_status 1)" = ALIVE
'

TERM_ID=t3150-keep-0001

test_expect_success 'a named terminal in a session on agent 1' '
        TERM_SESSION=$(on 1 | head -n 1) &&
        pty "/stream/session/$TERM_SESSION/pty?terminal=$TERM_ID" expect-terminal:new \
                "send:X=kept42; echo set-\$X\n" expect:set-kept42 close expect-close >"$TMP/pty1.out" ||
        { cat "$TMP/pty1.out"; false; }
'

test_expect_success 'namespace 3 cut off for a while: its agent is UNREACHABLE, its sessions go on, marked' '
        ip link del "$(veth 3)" &&
        for _ in $(seq 1 200); do
                test "$(agent_status 3)" = UNREACHABLE && break
                sleep 0.1
        done &&
        test "$(agent_status 3)" = UNREACHABLE &&
        marked $(on 3) &&
        same_containers $(on 3) &&
        test "$(agent_status 1)" = ALIVE && unmarked $(on 1) $(on 2)
'

test_expect_success 'a session on it that ends while it is cut off gets its real end when it is back; the others go on unmarked' '
        ENDED=$(on 3 | head -n 1) && KEPT=$(on 3 | tail -n 1) &&
        kill -9 "${CONTAINER_PID[$ENDED]}" &&
        sleep 2 &&
        test "$(field $ENDED status)" = RUNNING &&
        plug 3 && alive 3 &&
        wait_status $ENDED TERMINATED &&
        OUT=$TMP/s api GET "/session/$ENDED" &&
        jq -e ".statusInfo == \"self-terminated\" and .statusData.kernel.exit_code == 137
                and (.statusData | has(\"agentUnreachable\") | not)" "$TMP/s" &&
        unset "WHERE[$ENDED]" &&
        unmarked $KEPT &&
        same_containers $KEPT
'

test_expect_success 'one namespace cut off past agent_lost_timeout: its agent goes LOST, its sessions end in ERROR (agent-lost)' '
        ip link del "$(veth 2)" &&
        for _ in $(seq 1 400); do
                test "$(agent_status 2)" = LOST && break
                sleep 0.1
        done &&
        test "$(agent_status 2)" = LOST &&
        ended_lost $(on 2)
'

test_expect_success 'the other agents and their sessions are untouched' '
        test "$(agent_status 1)" = ALIVE && test "$(agent_status 3)" = ALIVE &&
        same_containers $(on 1) $(on 3)
'

test_expect_success 'reconnected, the lost agent stops the containers of its ended sessions, and only those' '
        plug 2 && alive 3 &&
        stopped $(on 2) &&
        same_containers $(on 1) $(on 3)
'

test_expect_success 'the manager killed and started again after longer than agent_lost_timeout: every session goes on' '
        PORT=$MANAGER_PORT && MPID=$MANAGER_PID &&
        kill -9 "$MPID" &&
        for _ in $(seq 1 50); do process_gone "$MPID" && break; sleep 0.1; done &&
        stop_manager KILL; test "$MANAGER_EXIT" = 137 &&
        sleep 25 &&
        BEFORE=$(wc -l <"$MANAGER_LOG") &&
        MANAGER_HOST=$NET.1 MANAGER_LISTEN_PORT=$PORT start_manager --config "$TMP/manager.conf" &&
        alive 3 &&
        sleep 3 &&
        same_containers $(on 1) $(on 3) &&
        unmarked $(on 1) $(on 3) &&
        tail -n +$((BEFORE + 1)) "$MANAGER_LOG" >"$TMP/after.log" &&
        grep -q "manager listening" "$TMP/after.log" &&
        ! grep -E "agent node-[123] is (UNREACHABLE|LOST)" "$TMP/after.log"
'

test_expect_success 'the named terminal attaches to the same shell through the restarted manager' '
        pty "/stream/session/$TERM_SESSION/pty?terminal=$TERM_ID" expect-terminal:kept expect:set-kept42 \
                "send:echo still-\$X\n" expect:still-kept42 close expect-close >"$TMP/pty2.out" ||
        { cat "$TMP/pty2.out"; false; }
'

test_expect_success 'the sessions on the others end normally' '
        destroy_sessions $(on 1) $(on 3)
'

test_done
