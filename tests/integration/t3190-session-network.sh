#!/bin/bash
# shellcheck disable=SC2016
test_description='session networks: a session reaches no other session on its agent (another user'"'"'s or the same user'"'"'s; TCP and ping), the kernels of a cluster session reach each other, no session reaches the host'"'"'s services (bound on the bridge address or on every address); the rules outlive a kill -9 of the agent, go with each container and, with the last one, when the agent stops'
. "$(dirname "$0")/../lib/test-lib.sh"
. "$(dirname "$0")/../lib/registry.sh"

test_with_containers
command -v nft >/dev/null || skip_all 'needs nft (Debian package nftables, scripts/install-deps.sh)'
command -v nsenter >/dev/null || skip_all 'needs nsenter (util-linux)'
[ -x /bin/busybox ] || skip_all 'needs busybox-static'

STATE=$MANAGER_STATE/agent
CONF=$MANAGER_STATE/agent.conf
PORT=7000 # every kernel's server (in its network namespace)
declare -A IP PID
SERVERS=

as_admin() {
        BACKEND_ACCESS_KEY=$TEST_ADMIN_ACCESS_KEY
        BACKEND_SECRET_KEY=$TEST_ADMIN_SECRET_KEY
}

as_user() {
        BACKEND_ACCESS_KEY=$(sed -n 1p "$TMP/user.keys")
        BACKEND_SECRET_KEY=$(sed -n 2p "$TMP/user.keys")
}

# session NAME [EXTRA]: a busybox session RUNNING (EXTRA: more of the body)
session() {
        api POST /session "{\"name\": \"$1\", \"image\": \"busybox:latest\", \"enqueueOnly\": true${2:+, $2}, \"config\": {\"resources\": {\"cpu\": 0.25, \"mem\": \"128m\"}}}"
        test "$CODE" = 201 || { echo "session $1: $CODE $(cat "$TMP/out")"; return 1; }
        wait_status "$1" RUNNING
}

# kernels NAME: IP[KEY] and PID[KEY] of each kernel of the session: KEY
# NAME for its main kernel (where execute runs), NAME.2, ... for the
# others; from the agent's address claims, which name each kernel's
# network group (its session)
kernels() {
        local sid main f n=1 owner key
        sid=$(OUT=$TMP/info api GET "/session/$1" && jq -r .sessionId "$TMP/info") && test -n "$sid" || return 1
        main=$(kernel_id "$1") && test -n "$main" || return 1
        for f in $(grep -lx -- "$sid" "$STATE/ipam/$BR"/* 2>/dev/null | sort); do
                owner=$(head -n 1 "$f")
                if [ "$owner" = "$main" ]; then
                        key=$1
                else
                        n=$((n + 1))
                        key=$1.$n
                fi
                IP[$key]=$(basename "$f")
                PID[$key]=$(container_pid "$owner")
                test -n "${PID[$key]}" || { echo "$key: no process for $owner"; return 1; }
        done
        test -n "${IP[$1]}" || { echo "$1: no address claim of $main names $sid"; return 1; }
}

# serve KEY: a web server on PORT in the kernel's network namespace that
# answers "from-KEY"
serve() {
        mkdir -p "$TMP/www-$1" && echo "from-$1" >"$TMP/www-$1/index.html" || return 1
        # alone in the background, so that $! is the server itself (nsenter
        # execs it), which cleanup kills; a list in the background would be
        # a subshell whose death leaves the server running
        nsenter --net=/proc/${PID[$1]}/ns/net busybox httpd -f -p $PORT -h "$TMP/www-$1" &
        SERVERS="$SERVERS $!"
}

# fetch NAME URL: wget inside the session (as its user, through the API);
# the page in $TMP/console, the exit code in EXIT
fetch() {
        session_run "$1" "timeout 5 wget -q -O - $2"
}

# url KEY|ADDR:PORT: the URL of a kernel's server (or of ADDR:PORT); none
# for a kernel not found, so that no check passes on an empty address
url() {
        case $1 in
        *:*) echo "http://$1/" ;;
        *) test -n "${IP[$1]}" && echo "http://${IP[$1]}:$PORT/" ;;
        esac
}

# reaches NAME KEY TEXT / reaches_not NAME KEY|ADDR:PORT
reaches() {
        local u
        u=$(url "$2") && fetch "$1" "$u" && test "$EXIT" = 0 && grep -qx "$3" "$TMP/console" ||
                { echo "$1 -> $2 ($u): exit $EXIT: $(cat "$TMP/console")"; return 1; }
}
reaches_not() {
        local u
        u=$(url "$2") || { echo "no address for $2"; return 1; }
        fetch "$1" "$u" && test "$EXIT" != 0 || { echo "$1 -> $u answered: $(cat "$TMP/console")"; return 1; }
}

# pings KEY ADDR / pings_not KEY ADDR: ICMP from the kernel's namespace
pings() {
        test -n "${PID[$1]}" && test -n "$2" && nsenter --net=/proc/${PID[$1]}/ns/net busybox ping -c 1 -W 2 "$2" >/dev/null
}
pings_not() {
        test -n "${PID[$1]}" && test -n "$2" || { echo "pings_not '$1' '$2'"; return 1; }
        ! nsenter --net=/proc/${PID[$1]}/ns/net busybox ping -c 1 -W 2 "$2" >/dev/null
}

# elements: the ports in the bridge table's groups
elements() {
        nft -j list map bridge "tessera-$BR" port_group | jq -r '[.nftables[].map? | select(.) | .elem[]?] | length'
}

cleanup() {
        local p
        for p in $SERVERS $HOST_SERVERS; do kill "$p"; done
}
test_at_exit cleanup

test_expect_success 'tessera dev on a bridge network, a second user; the agent picks its bridge and makes its nftables tables' '
        start_dev_with_busybox "--agent-network bridge" &&
        OUT=$TMP/user api POST /admin/users "{\"email\": \"member@t.test\", \"password\": \"member-pass\", \"projects\": [\"default\"]}" &&
        test "$CODE" = 201 &&
        jq -r ".keypair.access_key, .keypair.secret_key" "$TMP/user" >"$TMP/user.keys" &&
        api PATCH /admin/keypair-policies/default "{\"max_containers_per_session\": 2}" && test "$CODE" = 200 &&
        for _ in $(seq 1 100); do test -s "$STATE/bridge" && break; sleep 0.1; done &&
        read -r BR CIDR <"$STATE/bridge" && GW=${CIDR%/*} &&
        echo "bridge $BR $CIDR" &&
        ip -4 -o addr show dev "$BR" | grep -q " $CIDR " &&
        ip link show "$BR" >"$TMP/bridge-before" &&
        nft list table bridge "tessera-$BR" >/dev/null &&
        nft list table inet "tessera-$BR" >/dev/null
'

test_expect_success 'sessions: two of the admin, one of a user, a cluster session of two kernels; a server in each kernel' '
        as_admin && session mine1 && session mine2 &&
        session clus "\"clusterSize\": 2, \"clusterMode\": \"single-node\"" &&
        as_user && session theirs && as_admin &&
        kernels mine1 && kernels mine2 && kernels clus && as_user && kernels theirs && as_admin &&
        test -n "${IP[clus.2]}" &&
        for k in mine1 mine2 theirs clus clus.2; do serve $k; done &&
        for k in mine1 mine2 theirs clus clus.2; do
                for _ in $(seq 1 50); do
                        curl -s -m 3 "http://${IP[$k]}:$PORT/" 2>/dev/null | grep -qx "from-$k" && break
                        sleep 0.1
                done
                curl -s -m 3 "http://${IP[$k]}:$PORT/" | grep -qx "from-$k" || { echo "host -> $k"; false; }
        done
'

test_expect_success 'a session reaches nothing of another user'"'"'s session: neither TCP nor ping, either way' '
        as_admin && reaches_not mine1 theirs &&
        as_user && reaches_not theirs mine1 && as_admin &&
        pings_not mine1 "${IP[theirs]}" && pings_not theirs "${IP[mine1]}"
'

test_expect_success 'nor of another session of the same user' '
        reaches_not mine1 mine2 &&
        pings_not mine2 "${IP[mine1]}" &&
        reaches_not clus mine1
'

test_expect_success 'the kernels of a cluster session reach each other (TCP and ping)' '
        reaches clus clus.2 from-clus.2 &&
        pings clus "${IP[clus.2]}" && pings clus.2 "${IP[clus]}"
'

test_expect_success 'a kernel speaks with its own address only: with another one (root in its namespace) it reaches not even its peer' '
        X=${GW%.*.*}.250.250 && N=/proc/${PID[clus]}/ns/net &&
        ! grep -rqx "$X" "$STATE/ipam/$BR" &&
        nsenter --net=$N ip addr add "$X/${CIDR#*/}" dev eth0 &&
        { ! nsenter --net=$N busybox ping -c 1 -W 2 -I "$X" "${IP[clus.2]}" >/dev/null; rc=$?
          nsenter --net=$N ip addr del "$X/${CIDR#*/}" dev eth0; test $rc = 0; } &&
        pings clus "${IP[clus.2]}"
'

test_expect_success 'no session reaches a host service, on the bridge address or on every address' '
        mkdir -p "$TMP/www-host" && echo from-host >"$TMP/www-host/index.html" &&
        P1=$(test_free_port) && P2=$(test_free_port) &&
        { busybox httpd -f -p "$GW:$P1" -h "$TMP/www-host" & HOST_SERVERS="$!"; } &&
        { busybox httpd -f -p "$P2" -h "$TMP/www-host" & HOST_SERVERS="$HOST_SERVERS $!"; } &&
        for _ in $(seq 1 50); do curl -s -m 3 "http://$GW:$P1/" >/dev/null 2>&1 && break; sleep 0.1; done &&
        curl -s -m 3 "http://$GW:$P1/" | grep -qx from-host &&
        curl -s -m 3 "http://127.0.0.1:$P2/" | grep -qx from-host &&
        OTHER=$(ip -4 -o addr show scope global | awk -v br="$BR" "\$2 != br {sub(\"/.*\", \"\", \$4); print \$4; exit}") &&
        reaches_not mine1 "$GW:$P1" &&
        reaches_not mine1 "$GW:$P2" &&
        { test -z "$OTHER" || { as_user && reaches_not theirs "$OTHER:$P2" && as_admin; }; } &&
        pings_not mine1 "$GW"
'

test_expect_success 'what sessions need still works: execute, and the host opening connections into them' '
        session_run mine1 "echo works" && test "$EXIT" = 0 && grep -qx works "$TMP/console" &&
        curl -s -m 3 "http://${IP[mine1]}:$PORT/" | grep -qx from-mine1
'

test_expect_success 'kill -9 of the agent and a restart keep every container'"'"'s rules' '
        test "$(elements)" = 5 &&
        APID=$(agent_pid "$CONF") && test -n "$APID" && kill -9 "$APID" &&
        for _ in $(seq 1 50); do process_gone "$APID" && break; sleep 0.1; done &&
        test "$(elements)" = 5 &&
        pings_not mine1 "${IP[theirs]}" && pings clus "${IP[clus.2]}" &&
        start_agent "$CONF" "$TMP/agent-restarted.log" &&
        for _ in $(seq 1 100); do grep -q "agent .* serving at" "$TMP/agent-restarted.log" && break; sleep 0.1; done &&
        grep -q "serving at" "$TMP/agent-restarted.log" &&
        test "$(elements)" = 5 &&
        pings clus.2 "${IP[clus]}" && pings_not mine2 "${IP[mine1]}" &&
        reaches clus clus.2 from-clus.2 &&
        reaches_not mine1 theirs
'

test_expect_success 'tables deleted behind the agent'"'"'s back: its next start puts every running container back in its group' '
        APID=$(agent_pid "$CONF") && test -n "$APID" && kill -9 "$APID" &&
        for _ in $(seq 1 50); do process_gone "$APID" && break; sleep 0.1; done &&
        nft delete table bridge "tessera-$BR" && nft delete table inet "tessera-$BR" &&
        start_agent "$CONF" "$TMP/agent-restarted2.log" &&
        for _ in $(seq 1 100); do grep -q "agent .* serving at" "$TMP/agent-restarted2.log" && break; sleep 0.1; done &&
        grep -q "serving at" "$TMP/agent-restarted2.log" &&
        test "$(elements)" = 5 &&
        pings clus "${IP[clus.2]}" && pings_not mine1 "${IP[theirs]}" && pings_not mine1 "$GW"
'

test_expect_success 'each ended container takes its rules along; the agent stopped with none left removes its tables and its bridge' '
        destroy_sessions mine1 mine2 clus && as_user && destroy_sessions theirs && as_admin &&
        test "$(elements)" = 0 &&
        APID=$(agent_pid "$CONF") && kill -TERM "$APID" &&
        for _ in $(seq 1 100); do process_gone "$APID" && break; sleep 0.1; done &&
        process_gone "$APID" &&
        test_must_fail nft list table bridge "tessera-$BR" &&
        test_must_fail nft list table inet "tessera-$BR" &&
        if grep -q "alias tessera-bridge" "$TMP/bridge-before" 2>/dev/null; then test_must_fail ip link show "$BR"; fi
'

test_done
