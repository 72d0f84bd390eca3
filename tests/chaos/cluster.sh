# shellcheck shell=bash
# cluster.sh - the chaos test's cluster on this machine, and its nodes'
# lives (start, kill, stop, continue).
#
#   host (root netns)   bridge $BR with $NET.1: PostgreSQL (TCP $NET.1:PG_PORT),
#                       haproxy (the front, $NET.1:FRONT_PORT), one delay
#                       relay per agent ($NET.1:RELAY_PORT[aN] -> the front)
#   netns m1, m2        `tessera manager` on $NET.21 / $NET.22 port 8090
#   netns a1, a2, a3    `tessera agent` on $NET.31.. (port 6011), one mock GPU
#                       each (fGPU: 1 share), state_dir on its own tmpfs,
#                       real busybox containers through crun/runc
#
# Each namespace hangs on the bridge by a veth (host end ${VETH_PREFIX}<node>),
# so a node's link can be cut (ip link set down) without touching the
# others.  Agents reach the managers only through the front (their
# `manager` is their relay); managers reach agents directly.  One node,
# picked by the seed (CLOCK_NODE), runs under libfaketime so its wall clock
# can be stepped (faults.sh).  Needs root, iproute2, PostgreSQL's server,
# haproxy, python3, libfaketime.

MANAGERS="m1 m2"
AGENTS="a1 a2 a3"
declare -A NODE_IP=([m1]=21 [m2]=22 [a1]=31 [a2]=32 [a3]=33)
declare -A RELAY_PORT=()

ns_of() { echo "chaos-$CHAOS_ID-$1"; }
veth_of() { echo "${VETH_PREFIX}$1"; }
ip_of() { echo "$NET.${NODE_IP[$1]}"; }

# free_port: a TCP port nothing listens on here
free_port() {
        local p
        for _ in $(seq 1 50); do
                p=$((20000 + RANDOM % 20000))
                ss -Htln "sport = :$p" 2>/dev/null | grep -q . || { echo $p; return 0; }
        done
        return 1
}

# cluster_pick_net: a 10.x.y.0/24 that no interface here uses
cluster_pick_net() {
        local n i
        for i in $(seq 0 40); do
                n=10.$((150 + (CHAOS_ID + i) % 50)).$(((CHAOS_ID / 50 + i) % 256))
                ip -4 addr | grep -q " $n\." || { NET=$n; return 0; }
        done
        return 1
}

# ---- network ----

net_plug() { # NODE: (re)create the node's veth pair on the bridge
        local node=$1 ns
        ns=$(ns_of "$node")
        ip link add "$(veth_of "$node")" type veth peer name up0 netns "$ns" &&
                ip link set "$(veth_of "$node")" master "$BR" up &&
                ip -n "$ns" link set lo up &&
                ip -n "$ns" addr add "$(ip_of "$node")/24" dev up0 &&
                ip -n "$ns" link set up0 up
}

net_up() {
        local node
        ip link add "$BR" type bridge && ip addr add "$NET.1/24" dev "$BR" && ip link set "$BR" up || return 1
        echo "$BR" >>"$CHAOS_DIR/created.links"
        for node in $MANAGERS $AGENTS; do
                ip netns add "$(ns_of "$node")" || return 1
                echo "$(ns_of "$node")" >>"$CHAOS_DIR/created.netns"
                net_plug "$node" || return 1
        done
}

# ---- PostgreSQL: a private cluster listening on the bridge ----

pg_bindir() {
        ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -rV | head -n 1
}

pg_start() {
        local bin dir=$CHAOS_DIR/pg
        bin=$(pg_bindir)
        runuser -u postgres -- "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
                -o "-c listen_addresses='$NET.1' -p $PG_PORT -k '$dir' -c fsync=off -c full_page_writes=off -c max_connections=300" \
                start >/dev/null
}

pg_stop() { # [MODE]: immediate (a crash) by default
        runuser -u postgres -- "$(pg_bindir)/pg_ctl" -D "$CHAOS_DIR/pg/data" -m "${1:-immediate}" -w stop >/dev/null 2>&1
}

pg_up() {
        local dir=$CHAOS_DIR/pg bin
        bin=$(pg_bindir)
        [ -n "$bin" ] || { echo "no PostgreSQL server here (scripts/install-deps.sh test)"; return 1; }
        PG_PORT=$(free_port) || return 1
        mkdir -p "$dir" && chown postgres: "$dir" && chmod 0755 "$dir" || return 1
        runuser -u postgres -- "$bin/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --locale=C --no-sync \
                >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log"; return 1; }
        echo "host all all $NET.0/24 trust" >>"$dir/data/pg_hba.conf"
        pg_start || { tail -n 20 "$dir/server.log"; return 1; }
        PG_URL="postgresql://postgres@$NET.1:$PG_PORT/tessera"
        PG_LOCAL_URL="postgresql:///tessera?host=$dir&port=$PG_PORT&user=postgres"
        psql -X -q -v ON_ERROR_STOP=1 "postgresql:///postgres?host=$dir&port=$PG_PORT&user=postgres" \
                -c "CREATE DATABASE tessera" >/dev/null
}

# ---- the front ----

front_start() {
        (
                export CHAOS_FRONT_BIND=$FRONT CHAOS_M1=$(ip_of m1):8090 CHAOS_M2=$(ip_of m2):8090
                cd / && exec haproxy -db -f "$CHAOS_HAPROXY_CFG" </dev/null >>"$CHAOS_DIR/haproxy.log" 2>&1
        ) &
        set_pid haproxy $!
        disown $!
        for _ in $(seq 1 100); do
                curl -s -o /dev/null -m 2 "http://$FRONT/" && return 0
                sleep 0.1
        done
        echo "haproxy did not answer on $FRONT:"; tail -n 20 "$CHAOS_DIR/haproxy.log"
        return 1
}

relay_start() { # AGENT
        (cd / && exec python3 "$CHAOS_ROOT/tests/chaos/delay-relay.py" "$NET.1:${RELAY_PORT[$1]}" "$FRONT" \
                "$CHAOS_DIR/delay-$1" </dev/null >>"$CHAOS_DIR/relay-$1.log" 2>&1) &
        set_pid "relay-$1" $!
        disown $!
}

# ---- managers and agents ----

# node_env NODE: the environment a node's daemon runs with (libfaketime on
# the clock node)
node_env() {
        echo "ASAN_OPTIONS=${CHAOS_ASAN_OPTIONS:-detect_leaks=0:abort_on_error=1}"
        if [ "$1" = "$CLOCK_NODE" ]; then
                echo "LD_PRELOAD=$FAKETIME_LIB"
                echo "FAKETIME_TIMESTAMP_FILE=$CHAOS_DIR/clock-$1"
                echo "FAKETIME_DONT_FAKE_MONOTONIC=1"
                echo "FAKETIME_CACHE_DURATION=1"
                echo "ASAN_OPTIONS=${CHAOS_ASAN_OPTIONS:-detect_leaks=0:abort_on_error=1}:verify_asan_link_order=0"
        fi
}

manager_conf() { # NODE
        cat >"$CHAOS_DIR/$1/manager.conf" <<EOF
listen = "$(ip_of "$1"):8090"
database = "$PG_URL"
state_dir = "$CHAOS_DIR/$1/state"
master_key_file = "$CHAOS_DIR/shared/master.key"
cluster_secret_file = "$CHAOS_DIR/shared/cluster.secret"
vfolder_hosts = "local=$CHAOS_DIR/vfolders"
scheduler_interval = "2s"
agent_lost_timeout = "${AGENT_LOST_TIMEOUT}s"
log_level = "info"
public_hosts = "$NET.1"
EOF
}

agent_conf() { # NODE
        cat >"$CHAOS_DIR/$1/agent.conf" <<EOF
manager = "http://$NET.1:${RELAY_PORT[$1]}"
id = "chaos-$1"
state_dir = "$CHAOS_DIR/$1/state"
cluster_secret_file = "$CHAOS_DIR/shared/cluster.secret"
heartbeat_interval = "2s"
gpu_plugin = "mock"
mock_gpus = 1
fgpu_per_gpu = 1
vfolder_hosts = "local=$CHAOS_DIR/vfolders"
log_level = "info"
EOF
}

# node_start NODE: start (or restart) the node's daemon in its namespace
node_start() {
        local node=$1 cmd envs=()
        mapfile -t envs < <(node_env "$node")
        case $node in
        m*) cmd=(manager --config "$CHAOS_DIR/$node/manager.conf") ;;
        a*) cmd=(agent --config "$CHAOS_DIR/$node/agent.conf") ;;
        esac
        (
                cd / && exec nsenter --net="/run/netns/$(ns_of "$node")" env "${envs[@]}" \
                        TESSERA_ADMIN_ACCESS_KEY=$ADMIN_AK TESSERA_ADMIN_SECRET_KEY=$ADMIN_SK \
                        TESSERA_ADMIN_PASSWORD=$ADMIN_PW "$TESSERA" "${cmd[@]}" \
                        </dev/null >>"$CHAOS_DIR/$node.log" 2>&1
        ) &
        set_pid "$node" $!
        disown $!
        record nodes.log "start $node $!"
}

# manager_wait NODE: until it answers GET / (60 s)
manager_wait() {
        for _ in $(seq 1 600); do
                ip netns exec "$(ns_of "$1")" curl -s -o /dev/null -m 2 "http://$(ip_of "$1"):8090/" && return 0
                alive "$(pid_of "$1")" || break
                sleep 0.1
        done
        echo "manager $1 did not come up:"; tail -n 20 "$CHAOS_DIR/$1.log"
        return 1
}

# node_signal NODE SIGNAL
node_signal() {
        local pid
        pid=$(pid_of "$1")
        [ -n "$pid" ] && kill -"$2" "$pid" 2>/dev/null
}

# node_kill NODE: kill -9 and reap (waits until it is gone)
node_kill() {
        local pid
        pid=$(pid_of "$1")
        [ -n "$pid" ] || return 0
        kill -CONT "$pid" 2>/dev/null
        kill -KILL "$pid" 2>/dev/null
        for _ in $(seq 1 100); do alive "$pid" || break; sleep 0.05; done
        record nodes.log "killed $1 $pid"
}

agent_disk_up() { # NODE: its state_dir on a small tmpfs, the busybox image in its store
        local dir=$CHAOS_DIR/$1/state
        mkdir -p "$dir" && mount -t tmpfs -o "size=${CHAOS_AGENT_DISK:-192m}" "chaos-$CHAOS_ID-$1" "$dir" || return 1
        echo "$dir" >>"$CHAOS_DIR/created.mounts"
        "$TESSERA" agent image --store "$dir/images" import "$BUSYBOX_IMAGE" >/dev/null
}

# cluster_up: everything, in order; on failure the caller's cleanup undoes it
cluster_up() {
        local node
        cluster_pick_net || { echo "no free 10.x.y.0/24 here"; return 1; }
        BR=chb$CHAOS_ID VETH_PREFIX=ch$CHAOS_ID
        FRONT=$NET.1:$(free_port) || return 1
        export FRONT
        mkdir -p "$CHAOS_DIR/shared" "$CHAOS_DIR/vfolders" "$CHAOS_DIR/pids" || return 1
        for node in $MANAGERS $AGENTS; do mkdir -p "$CHAOS_DIR/$node" || return 1; done
        : >"$CHAOS_DIR/clock-$CLOCK_NODE"
        echo "+0" >"$CHAOS_DIR/clock-$CLOCK_NODE"
        BUSYBOX_IMAGE=$(TESSERA=$TESSERA "$CHAOS_ROOT/scripts/test-images/build.sh" busybox | tail -n 1) &&
                test -d "$BUSYBOX_IMAGE" || { echo "no busybox test image"; return 1; }
        say "network $NET.0/24 on bridge $BR; nodes $MANAGERS $AGENTS; clock node $CLOCK_NODE"
        net_up || return 1
        pg_up || return 1
        say "postgresql on $NET.1:$PG_PORT"
        for node in $MANAGERS; do manager_conf "$node"; done
        node_start m1 && manager_wait m1 || return 1
        node_start m2 && manager_wait m2 || return 1
        front_start || return 1
        say "managers on $(ip_of m1):8090 and $(ip_of m2):8090 behind haproxy on $FRONT"
        for node in $AGENTS; do
                RELAY_PORT[$node]=$(free_port) || return 1
                echo 0 >"$CHAOS_DIR/delay-$node"
                relay_start "$node"
                agent_disk_up "$node" || return 1
                agent_conf "$node"
                node_start "$node"
        done
        cluster_wait_agents 3 60 || return 1
        admin_api POST /admin/images '{"name": "busybox", "tag": "latest"}'
        [ "$CODE" = 201 ] || { echo "registering busybox: $CODE"; return 1; }
        say "agents $AGENTS ALIVE"
}

# cluster_wait_agents N SECONDS: until N agents are ALIVE
cluster_wait_agents() {
        local n
        for _ in $(seq 1 $(($2 * 2))); do
                OUT=$CHAOS_DIR/agents.json admin_api GET /admin/agents
                n=$(jq '[.items[]? | select(.status == "ALIVE")] | length' "$CHAOS_DIR/agents.json" 2>/dev/null)
                [ "${n:-0}" -ge "$1" ] && return 0
                sleep 0.5
        done
        echo "not $1 agents ALIVE after $2 s: $(jq -c '[.items[]? | {id, status}]' "$CHAOS_DIR/agents.json" 2>/dev/null)"
        return 1
}
