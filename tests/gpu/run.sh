#!/bin/bash
# tests/gpu/run.sh - libtessera-fgpu.so on a real NVIDIA GPU, with a CUDA
# program (fgpu_check.cu) and PyTorch (fgpu_torch.py); prints a markdown
# report with PASS/FAIL per check.  Needs gcc, make, nvcc and, for the
# PyTorch checks, a python with torch (PYTHON, default /opt/torch/.venv/bin/python3
# or python3).  Takes about 3 minutes.  Not part of `make check`: no GPU there.
#
# usage: tests/gpu/run.sh
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
PYTHON=${PYTHON:-/opt/torch/.venv/bin/python3}
[ -x "$PYTHON" ] || PYTHON=python3
W=$(mktemp -d /tmp/fgpu-gpu.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$W"' EXIT
# Every step is bounded (a hung step shows which one) and told on stderr.
say() { echo "run.sh: $*" >&2; }
T="timeout -k 5 180"
say "building the hook"
$T make -s BUILD="$W/build" "$W/build/libtessera-fgpu.so" >"$W/make.log" 2>&1 || { cat "$W/make.log"; exit 1; }
HOOK=$W/build/libtessera-fgpu.so
say "compiling fgpu_check.cu"
$T "$NVCC" -O2 -o "$W/fgpu_check" tests/gpu/fgpu_check.cu >"$W/nvcc.log" 2>&1 || { cat "$W/nvcc.log"; exit 1; }
C=$W/fgpu_check
pass=0 fail=0
check() { # NAME COND DETAIL
        if eval "$2"; then echo "| PASS | $1 | $3 |"; pass=$((pass + 1)); else echo "| FAIL | $1 | $3 |"; fail=$((fail + 1)); fi
}
hooked() { # ENV... -- CMD...: run with the hook and a region of its own unless given
        say "hooked: $*"
        $T env LD_PRELOAD="$HOOK" TESSERA_FGPU_REGION="${REGION:-$W/region.$RANDOM}" "$@"
}
median() { sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }

echo "# fGPU on a real GPU"
echo
echo "$(date -u '+%Y-%m-%d %H:%M UTC'); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -n 1);" \
        "CUDA $("$NVCC" --version | sed -n 's/.*release \([0-9.]*\).*/\1/p'); torch $("$PYTHON" -c 'import torch; print(torch.__version__)' 2>/dev/null)"
echo
echo "| result | check | measured |"
echo "|---|---|---|"

info=$(hooked CUDA_DEVICE_MEMORY_LIMIT=4g "$C" info)
check "4 GiB limit: cudaMemGetInfo reports 4 GiB" '[[ $info == "total 4.00 GiB"* ]]' "$info (without: $($T "$C" info))"
hooked CUDA_DEVICE_MEMORY_LIMIT=4g "$C" try 3.5; r1=$?
hooked CUDA_DEVICE_MEMORY_LIMIT=4g "$C" try 5; r2=$?
check "4 GiB limit: 3.5 GiB allocates, 5 GiB is out of memory" '[ $r1 = 0 ] && [ $r2 = 2 ]' "exit codes $r1, $r2 (0 ok, 2 OOM)"
nv=$(hooked CUDA_DEVICE_MEMORY_LIMIT=4g "$PYTHON" -c '
import ctypes
n = ctypes.CDLL("libnvidia-ml.so.1")
class M(ctypes.Structure):
    _fields_ = [("total", ctypes.c_ulonglong), ("free", ctypes.c_ulonglong), ("used", ctypes.c_ulonglong)]
n.nvmlInit_v2(); h = ctypes.c_void_p(); n.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(h)); m = M()
n.nvmlDeviceGetMemoryInfo(h, ctypes.byref(m)); print("%.2f" % (m.total / 2**30))' 2>&1)
check "4 GiB limit: NVML (nvidia-smi's source) reports 4 GiB" '[ "$nv" = 4.00 ]' "nvmlDeviceGetMemoryInfo total $nv GiB"
tm=$(hooked CUDA_DEVICE_MEMORY_LIMIT=4g "$PYTHON" tests/gpu/fgpu_torch.py mem 2>&1)
check "PyTorch: mem_get_info 4 GiB, 3.5 GiB works, 5 GiB is OOM" \
        '[[ $tm == *"total 4.00 GiB"* && $tm == *"3.5 GiB: allocated"* && $tm == *"5 GiB: out of memory"* ]]' \
        "$(echo "$tm" | tr '\n' ';')"

# two processes share one 4 GiB budget; kill -9 of one frees its share
export REGION=$W/shared.region
hooked CUDA_DEVICE_MEMORY_LIMIT=4g "$C" hold 2.5 >"$W/hold.out" &
holder=$!
for _ in $(seq 1 100); do grep -q held "$W/hold.out" && break; sleep 0.1; done
hooked CUDA_DEVICE_MEMORY_LIMIT=4g "$C" try 2; s1=$?
hooked CUDA_DEVICE_MEMORY_LIMIT=4g "$C" try 1.2; s2=$?
kill -9 $holder; wait $holder 2>/dev/null
hooked CUDA_DEVICE_MEMORY_LIMIT=4g "$C" try 3.5; s3=$?
unset REGION
check "two processes share 4 GiB; kill -9 of one frees its share" '[ $s1 = 2 ] && [ $s2 = 0 ] && [ $s3 = 0 ]' \
        "with 2.5 GiB held: 2 GiB → $s1, 1.2 GiB → $s2; after kill -9: 3.5 GiB → $s3"

# SM time: a compute-bound loop, unlimited and at 25 % and 50 %
say "SM limits"
k0=$($T "$C" spin 8 | cut -d' ' -f1)
k25=$(hooked CUDA_DEVICE_SM_LIMIT=25 "$C" spin 12 | cut -d' ' -f1)
k50=$(hooked CUDA_DEVICE_SM_LIMIT=50 "$C" spin 12 | cut -d' ' -f1)
p25=$(echo "$k25 $k0" | awk '{printf "%.1f", 100 * $1 / $2}')
p50=$(echo "$k50 $k0" | awk '{printf "%.1f", 100 * $1 / $2}')
check "SM limit 25 %: 25 ± 5 % of the unlimited throughput" "awk 'BEGIN {exit !($p25 >= 20 && $p25 <= 30)}'" \
        "$p25 % ($k25 vs $k0 kernels/s)"
check "SM limit 50 %: 50 ± 5 % of the unlimited throughput" "awk 'BEGIN {exit !($p50 >= 45 && $p50 <= 55)}'" \
        "$p50 % ($k50 vs $k0 kernels/s)"

# the hook's cost with no limit: launch-bound tiny kernels and a matmul loop
for i in 1 2 3; do
        say "overhead, round $i"
        $T "$C" tiny 200000 | cut -d' ' -f1 >>"$W/tiny.none"
        hooked "$C" tiny 200000 | cut -d' ' -f1 >>"$W/tiny.hook"
        $T "$PYTHON" tests/gpu/fgpu_torch.py matmul 300 >>"$W/mm.none"
        hooked "$PYTHON" tests/gpu/fgpu_torch.py matmul 300 >>"$W/mm.hook"
done
t0=$(median <"$W/tiny.none") t1=$(median <"$W/tiny.hook") m0=$(median <"$W/mm.none") m1=$(median <"$W/mm.hook")
ct=$(echo "$t1 $t0" | awk '{printf "%.2f", 100 * ($1 / $2 - 1)}')
cm=$(echo "$m1 $m0" | awk '{printf "%.2f", 100 * ($1 / $2 - 1)}')
check "no limit: the hook costs ≤ 2 % on tiny kernel launches" "awk 'BEGIN {exit !($ct <= 2)}'" \
        "$ct % ($t1 vs $t0 ns/launch, medians of 3)"
check "no limit: the hook costs ≤ 2 % on a matmul loop" "awk 'BEGIN {exit !($cm <= 2)}'" \
        "$cm % ($m1 vs $m0 s for 300 4096² matmuls, medians of 3)"
echo
echo "$pass passed, $fail failed"
