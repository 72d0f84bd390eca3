#!/bin/bash
test_description='a session holding half of a 16 GiB mock GPU (fgpu_per_gpu = 1) sees 8 GiB through the CUDA driver and NVML: the agent wires the fake driver, libtessera-fgpu.so, its config and region into the container'
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

test_expect_success 'a session without GPU shares sees no hook and no GPU' '
        api POST /session "{\"name\": \"nogpu\", \"image\": \"python:3.11\", \"enqueueOnly\": true, \"config\": {\"resources\": {\"cpu\": 1, \"mem\": \"256m\"}}}" &&
        test "$CODE" = 201 && wait_status nogpu RUNNING &&
        "$TESSERA" session exec nogpu "echo \"[\$LD_PRELOAD]\"; ls /opt/tessera 2>&1 || true" >"$TMP/nogpu" &&
        grep -qx "\[\]" "$TMP/nogpu" && ! grep -q fgpu "$TMP/nogpu"
'

test_done
