#!/bin/bash
test_description='an agent with image_disk_budget keeps its image store within it: the least recently used images no session uses are removed with their layers, the image of a running session stays and the session keeps working, and a session of a removed image pulls it again and runs'
. "$(dirname "$0")/../lib/test-lib.sh"
. "$(dirname "$0")/../lib/registry.sh"

test_with_containers
for tool in jq gzip du; do
        command -v $tool >/dev/null 2>&1 || skip_all "needs $tool (scripts/install-deps.sh test)"
done
. "$TEST_ROOT/scripts/test-images/oci-layout.sh"
export SOURCE_DATE_EPOCH=1700000000

CONF=$TMP/agent.conf
STATE=$TMP/agent
STORE=$STATE/images
PAYLOAD_MB=8
test_at_exit 'stop_agent_and_containers "$STATE" "$CONF"'

# make_image NAME: $TMP/img-NAME, an OCI layout of the image gc/NAME:1:
# busybox plus /name and /payload (PAYLOAD_MB MiB of random bytes) in a
# layer of its own, the busybox image's settings and labels
make_image() {
        local bb=$1 name=$2 m c root=$TMP/root-$2
        m=$(jq -r '.manifests[0].digest' "$bb/index.json") &&
                c=$(jq -r .config.digest "$bb/blobs/sha256/${m#sha256:}") &&
                mkdir -p "$root" &&
                tar -xzf "$bb/blobs/sha256/$(jq -r '.layers[0].digest' "$bb/blobs/sha256/${m#sha256:}" | cut -c8-)" \
                        --numeric-owner -C "$root" &&
                echo "$name" >"$root/name" &&
                head -c $((PAYLOAD_MB << 20)) /dev/urandom >"$root/payload" &&
                oci_layout_write "$root" "$TMP/img-$name" "gc/$name:1" \
                        "$(jq -c .config "$bb/blobs/sha256/${c#sha256:}")" >/dev/null &&
                rm -rf "$root"
}

# store_bytes: what blobs/ and layers/ of the agent's store take (each file once)
store_bytes() {
        du -scB1 "$STORE/blobs" "$STORE/layers" | tail -n 1 | cut -f1
}

# store_refs: the references in the agent's store, sorted, on one line
store_refs() {
        "$TESSERA" agent image --store "$STORE" ls --json | jq -r '[.[].ref] | sort | join(" ")'
}

# write_conf [KEY = VALUE]: the agent's configuration, plus that line
write_conf() {
        cat >"$CONF" <<EOC
manager = "$BACKEND_ENDPOINT"
id = "gc-node"
state_dir = "$STATE"
cluster_secret_file = "$MANAGER_STATE/cluster.secret"
heartbeat_interval = "1s"
network = "none"
listen = "127.0.0.1:0"
$*
EOC
}

# agent_alive: the agent is ALIVE for the manager (10 s)
agent_alive() {
        for _ in $(seq 1 100); do
                OUT=$TMP/agents api GET /admin/agents
                jq -e '.items | map(select(.id == "gc-node" and .status == "ALIVE")) | length == 1' "$TMP/agents" \
                        >/dev/null && return 0
                sleep 0.1
        done
        return 1
}

# session NAME IMAGE TYPE [COMMAND]: enqueue a session of IMAGE
session() {
        api POST /session "{\"name\": \"$1\", \"image\": \"$2\", \"enqueueOnly\": true, \"type\": \"$3\"${4:+,
                \"startupCommand\": \"$4\"}, \"config\": {\"resources\": {\"cpu\": 0.5, \"mem\": \"64m\"}}}" &&
                test "$CODE" = 201 || { echo "session $1: $CODE $(cat "$TMP/out")"; return 1; }
}

# batch_says NAME IMAGE TEXT: a batch session of IMAGE printing /name ends
# with SUCCESS and TEXT in its output
batch_says() {
        session "$1" "$2" batch "cat /name" && wait_status "$1" TERMINATED &&
                test "$(field "$1" result)" = SUCCESS &&
                OUT=$TMP/logs api GET "/session/$1/logs" &&
                jq -r .result.logs "$TMP/logs" | grep -qx "$3" ||
                { echo "$1: $(field "$1" status) $(field "$1" result) $(cat "$TMP/logs" 2>/dev/null)"; return 1; }
}

# only_container ID: the agent's state holds that container and no other (30 s)
only_container() {
        for _ in $(seq 1 300); do
                [ "$(ls "$STATE/containers")" = "$1" ] && return 0
                sleep 0.1
        done
        echo "containers: $(ls "$STATE/containers" | tr "\n" " ")"
        return 1
}

# in_log TEXT: the agent's log says it (30 s)
in_log() {
        for _ in $(seq 1 300); do
                grep -qF -- "$1" "$TMP/agent.log" && return 0
                sleep 0.1
        done
        echo "not in the agent's log: $1"
        return 1
}

test_expect_success 'four images of busybox and a payload of their own each, imported into the manager' '
        BB=$(test_image busybox) && test -f "$BB/index.json" &&
        for n in a b c d; do make_image "$BB" $n || return 1; done &&
        start_manager &&
        for n in a b c d; do
                "$TESSERA" image import "$TMP/img-$n" >"$TMP/import.out" 2>&1 &&
                        grep -q "imported gc/$n:1" "$TMP/import.out" || { cat "$TMP/import.out"; return 1; }
        done
'

test_expect_success 'an agent without a budget pulls each one for a session; it keeps them all' '
        write_conf && start_agent "$CONF" "$TMP/agent.log" && agent_alive &&
        session keep gc/d:1 interactive && remember_containers keep &&
        K=${CONTAINER[keep]} &&
        batch_says run-a gc/a:1 a &&
        batch_says run-b gc/b:1 b &&
        batch_says run-c gc/c:1 c &&
        only_container "$K" &&
        test "$(store_refs)" = "gc/a:1 gc/b:1 gc/c:1 gc/d:1" &&
        ! grep -q "image gc" "$TMP/agent.log"
'

test_expect_success 'the store lists when each image was last used: d (the running session), then a, b, c' '
        "$TESSERA" agent image --store "$STORE" ls >"$TMP/ls" && cat "$TMP/ls" &&
        grep -q "LAST USED" "$TMP/ls" &&
        "$TESSERA" agent image --store "$STORE" ls --json >"$TMP/ls.json" &&
        test "$(jq -r "sort_by(.last_used) | map(.ref) | join(\" \")" "$TMP/ls.json")" = \
                "gc/d:1 gc/a:1 gc/b:1 gc/c:1"
'

test_expect_success 'restarted with a budget for two and a half images, the agent removes a and b' '
        TOTAL=$(store_bytes) && BUDGET=$((TOTAL * 5 / 8)) && echo "store $TOTAL bytes, budget $BUDGET" &&
        PID=$(agent_pid "$CONF") && kill "$PID" &&
        for _ in $(seq 1 100); do process_gone "$PID" && break; sleep 0.1; done && process_gone "$PID" &&
        containers_running keep &&
        write_conf "image_disk_budget = $BUDGET" && start_agent "$CONF" "$TMP/agent.log" &&
        in_log "image gc: removed gc/b:1" &&
        grep "image gc" "$TMP/agent.log" &&
        grep -q "image gc: removed gc/a:1 (last used .*), .* freed" "$TMP/agent.log" &&
        test "$(store_refs)" = "gc/c:1 gc/d:1" &&
        test "$(store_bytes)" -le "$BUDGET" &&
        test "$(grep -c "image gc: removed" "$TMP/agent.log")" = 2
'

test_expect_success 'the running session'"'"'s image and layers stay, and it keeps working' '
        agent_alive && same_containers keep &&
        for l in $(jq -r ".layers[]" "$STATE/containers/$K/container.json"); do test -d "$l" || return 1; done &&
        "$TESSERA" session exec keep "cat /name; wc -c </payload" >"$TMP/exec.out" && cat "$TMP/exec.out" &&
        test "$(head -n 1 "$TMP/exec.out")" = d &&
        test "$(sed -n 2p "$TMP/exec.out" | tr -d " ")" = $((PAYLOAD_MB << 20))
'

test_expect_success 'a session of a removed image pulls it again and runs; c, now the least recently used, makes room' '
        batch_says again-a gc/a:1 a &&
        grep -q "gc/a:1" <<<"$(store_refs)" &&
        in_log "image gc: removed gc/c:1" &&
        only_container "$K" &&
        test "$(store_refs)" = "gc/a:1 gc/d:1" &&
        test "$(store_bytes)" -le "$BUDGET"
'

test_expect_success 'tessera agent image gc --budget applies a budget by hand: nothing goes within it, then the unused image' '
        "$TESSERA" agent image --store "$STORE" gc --budget "$BUDGET" >"$TMP/gc.out" && cat "$TMP/gc.out" &&
        ! grep -q removed "$TMP/gc.out" && test "$(store_refs)" = "gc/a:1 gc/d:1" &&
        "$TESSERA" agent image --store "$STORE" gc --budget 1m --json >"$TMP/gc.json" && cat "$TMP/gc.json" &&
        jq -e "(.removed | map(.ref)) == [\"gc/a:1\"] and .after < .before and .freed_bytes > 0" "$TMP/gc.json" &&
        test "$(store_refs)" = "gc/d:1" &&
        same_containers keep &&
        test_must_fail "$TESSERA" agent image --store "$STORE" gc --budget lots 2>"$TMP/gc.err" &&
        grep -q "not a size" "$TMP/gc.err"
'

test_expect_success 'the last session ends' '
        destroy_sessions keep
'

test_done
