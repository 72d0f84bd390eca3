#!/bin/bash
test_description='a session holding a whole 16 GiB mock GPU (cuda.device): its processes share the fake GPU memory through the fake driver'"'"'s state file, and its lastStat reports cuda_mem of 16 GiB (the state the agent reads) and cuda_util (capacity 100)'
. "$(dirname "$0")/../lib/test-lib.sh"
. "$(dirname "$0")/../lib/registry.sh"

test_with_containers
BUILD_DIR=$(dirname "$TESSERA")
for lib in libtessera-fake-cuda.so libtessera-fake-nvml.so; do
        [ -f "$BUILD_DIR/$lib" ] || skip_all "$BUILD_DIR/$lib is not built"
done
GIB=1073741824

# One process allocates 1 GiB on the session's GPU and, while it holds it,
# another asks NVML how much of the GPU is used.
cat >"$TMP/share-probe.py" <<'PY'
import ctypes
import subprocess
import sys

NVML_USED = """
import ctypes
class Memory(ctypes.Structure):
    _fields_ = [("total", ctypes.c_ulonglong), ("free", ctypes.c_ulonglong), ("used", ctypes.c_ulonglong)]
nvml = ctypes.CDLL("libnvidia-ml.so.1")
handle, mem = ctypes.c_void_p(), Memory()
assert nvml.nvmlInit_v2() == 0
assert nvml.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(handle)) == 0
assert nvml.nvmlDeviceGetMemoryInfo(handle, ctypes.byref(mem)) == 0
print(mem.used)
"""

cuda = ctypes.CDLL("libcuda.so.1")
dev, ctx, ptr = ctypes.c_int(), ctypes.c_void_p(), ctypes.c_ulonglong()
assert cuda.cuInit(0) == 0
assert cuda.cuDeviceGet(ctypes.byref(dev), 0) == 0
assert cuda.cuCtxCreate_v2(ctypes.byref(ctx), 0, dev) == 0
assert cuda.cuMemAlloc_v2(ctypes.byref(ptr), ctypes.c_size_t(2**30)) == 0
print("other_used", subprocess.check_output([sys.executable, "-c", NVML_USED]).decode().strip())
assert cuda.cuMemFree_v2(ptr) == 0
print("after_free", subprocess.check_output([sys.executable, "-c", NVML_USED]).decode().strip())
PY

test_expect_success 'a python session asks for one whole 16 GiB mock GPU' '
        start_dev_with_image python 3.11 "--mock-gpus 1 --mock-gpu-memory 16g --fgpu-per-gpu 0 --agent-network none" &&
        api POST /session "{\"name\": \"whole\", \"image\": \"python:3.11\", \"enqueueOnly\": true, \"config\": {\"resources\": {\"cpu\": 1, \"mem\": \"512m\", \"cuda.device\": 1}}}" &&
        test "$CODE" = 201 &&
        wait_status whole RUNNING
'

test_expect_success 'inside, memory one process holds is used for another, as on a real GPU' '
        "$TESSERA" session upload whole "$TMP/share-probe.py" >/dev/null &&
        "$TESSERA" session exec whole "python3 share-probe.py" >"$TMP/probe" &&
        grep -qx "other_used $GIB" "$TMP/probe" &&
        grep -qx "after_free 0" "$TMP/probe"
'

test_expect_success 'the session'"'"'s lastStat shows cuda_mem 0 of 16 GiB and cuda_util 0 of 100' '
        for _ in $(seq 1 150); do
                OUT=$TMP/info api GET /session/whole
                jq -e ".lastStat.cuda_mem" "$TMP/info" >/dev/null 2>&1 && break
                sleep 0.1
        done &&
        jq -e "(.lastStat.cuda_mem.capacity | tonumber) == $((16 * GIB))" "$TMP/info" &&
        jq -e "(.lastStat.cuda_mem.current | tonumber) == 0" "$TMP/info" &&
        jq -e "(.lastStat.cuda_util.capacity | tonumber) == 100" "$TMP/info" &&
        jq -e "(.lastStat.cuda_util.current | tonumber) == 0" "$TMP/info"
'

test_done
