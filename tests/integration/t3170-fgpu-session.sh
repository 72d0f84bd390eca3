#!/bin/bash
test_description='a session holding half of a 16 GiB mock GPU (fgpu_per_gpu = 1) sees 8 GiB through the CUDA driver and NVML: the agent wires the fake driver, libtessera-fgpu.so, its config and region into the container; its kernel launches show as its cuda_util (the agent samples the fake NVML per process), and the idle session beside it shows 0'
. "$(dirname "$0")/../lib/test-lib.sh"
. "$(dirname "$0")/../lib/registry.sh"

test_with_containers
BUILD_DIR=$(dirname "$TESSERA")
for lib in libtessera-fgpu.so libtessera-fake-cuda.so libtessera-fake-nvml.so; do
        [ -f "$BUILD_DIR/$lib" ] || skip_all "$BUILD_DIR/$lib is not built"
done
GIB=1073741824

# probe NAME [GIB...]: run tests/lib/fgpu-probe.py in session NAME (through
# the API, as a user would), its output in $TMP/probe
probe() {
        "$TESSERA" session upload "$1" "$TEST_ROOT/tests/lib/fgpu-probe.py" >/dev/null &&
                "$TESSERA" session exec "$1" "python3 fgpu-probe.py ${*:2}" >"$TMP/probe"
}
value() { sed -n "s/^$1 //p" "$TMP/probe"; }

test_expect_success 'a python session asks for 0.5 of a 16 GiB mock GPU' '
        start_dev_with_image python 3.11 "--mock-gpus 1 --mock-gpu-memory 16g --fgpu-per-gpu 1 --agent-network none" &&
        api POST /session "{\"name\": \"half\", \"image\": \"python:3.11\", \"enqueueOnly\": true, \"config\": {\"resources\": {\"cpu\": 1, \"mem\": \"512m\", \"cuda.shares\": \"0.5\"}}}" &&
        test "$CODE" = 201 &&
        wait_status half RUNNING
'

test_expect_success 'inside, the CUDA driver and NVML report 8 GiB' '
        probe half &&
        test "$(value cuda_total)" = $((8 * GIB)) &&
        test "$(value device_total)" = $((8 * GIB)) &&
        test "$(value nvml_total)" = $((8 * GIB)) &&
        test "$(value cuda_free)" = $((8 * GIB))
'

test_expect_success 'inside, 1 GiB allocates and 9 GiB is out of memory (CUDA_ERROR_OUT_OF_MEMORY = 2)' '
        probe half 1 9 &&
        test "$(value alloc_1)" = 0 &&
        test "$(value alloc_9)" = 2
'

test_expect_success 'a user cannot lift the limit: without LD_PRELOAD, naming another config, region or limit, still 8 GiB' '
        "$TESSERA" session exec half "env -u LD_PRELOAD TESSERA_FGPU_CONFIG=/nonexistent TESSERA_FGPU_REGION=/tmp/mine CUDA_DEVICE_MEMORY_LIMIT=16g python3 fgpu-probe.py 9; if test -e /tmp/mine; then echo region_moved; fi" >"$TMP/probe" &&
        test "$(value cuda_total)" = $((8 * GIB)) &&
        test "$(value nvml_total)" = $((8 * GIB)) &&
        test "$(value alloc_9)" = 2 &&
        ! grep -q region_moved "$TMP/probe"
'

test_expect_success 'the session'"'"'s lastStat shows the 8 GiB limit' '
        for _ in $(seq 1 150); do
                OUT=$TMP/info api GET /session/half
                jq -e "(.lastStat.cuda_mem.capacity | tonumber) == $((8 * GIB))" "$TMP/info" >/dev/null 2>&1 && break
                sleep 0.1
        done &&
        jq -e "(.lastStat.cuda_mem.capacity | tonumber) == $((8 * GIB))" "$TMP/info"
'

# util SESSION: its lastStat.cuda_util.current as an integer (empty: not
# reported), GET /session/SESSION in $TMP/info
util() {
        OUT=$TMP/info api GET "/session/$1" &&
                jq -r ".lastStat.cuda_util.current // empty | tonumber | floor" "$TMP/info"
}

test_expect_success 'the other half of the GPU goes to a session that runs nothing on it' '
        api POST /session "{\"name\": \"quiet\", \"image\": \"python:3.11\", \"enqueueOnly\": true, \"config\": {\"resources\": {\"cpu\": 1, \"mem\": \"256m\", \"cuda.shares\": \"0.5\"}}}" &&
        test "$CODE" = 201 &&
        wait_status quiet RUNNING
'

test_expect_success 'a session launching kernels through the fake driver shows its GPU use in lastStat.cuda_util' '
        "$TESSERA" session upload half "$TEST_ROOT/tests/lib/fgpu-launch.py" >/dev/null &&
        { "$TESSERA" session exec half "python3 fgpu-launch.py 25" >"$TMP/launch" 2>&1 & } &&
        LAUNCHER=$! &&
        busy= &&
        for _ in $(seq 1 300); do
                busy=$(util half) &&
                test -n "$busy" && test "$busy" -gt 0 && break
                sleep 0.1
        done &&
        echo "half: cuda_util $busy" &&
        test -n "$busy" && test "$busy" -gt 0 && test "$busy" -le 100 &&
        jq -e "(.lastStat.cuda_util.capacity | tonumber) == 100" "$TMP/info"
'

test_expect_success 'meanwhile the idle session on the same GPU shows cuda_util 0' '
        quiet= &&
        for _ in $(seq 1 150); do
                quiet=$(util quiet) && test -n "$quiet" && break
                sleep 0.1
        done &&
        echo "quiet: cuda_util $quiet" &&
        test "$quiet" = 0 &&
        kill -0 "$LAUNCHER"
'

test_expect_success 'the idle session ends (the node has two CPUs)' '
        api DELETE /session/quiet && test "$CODE" = 200 &&
        wait_status quiet TERMINATED
'

test_expect_success 'when its launches end, the session goes back to 0' '
        wait "$LAUNCHER" &&
        grep "^launches [1-9]" "$TMP/launch" &&
        for _ in $(seq 1 150); do
                test "$(util half)" = 0 && break
                sleep 0.1
        done &&
        test "$(util half)" = 0
'

test_expect_success 'a session without GPU shares sees no hook and no GPU' '
        api POST /session "{\"name\": \"nogpu\", \"image\": \"python:3.11\", \"enqueueOnly\": true, \"config\": {\"resources\": {\"cpu\": 1, \"mem\": \"256m\"}}}" &&
        test "$CODE" = 201 && wait_status nogpu RUNNING &&
        "$TESSERA" session exec nogpu "echo \"[\$LD_PRELOAD]\"; ls /opt/tessera 2>&1 || true" >"$TMP/nogpu" &&
        grep -qx "\[\]" "$TMP/nogpu" && ! grep -q fgpu "$TMP/nogpu"
'

test_done
