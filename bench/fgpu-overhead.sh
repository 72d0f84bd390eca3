#!/bin/bash
# bench/fgpu-overhead.sh - what libtessera-fgpu.so adds to CUDA driver
# calls, measured against the fake driver (build/libtessera-fake-cuda.so:
# no GPU needed, and the driver itself costs next to nothing, so what is
# left is the hook).  bench/fgpu-bench.c calls the driver in a loop, bare
# and with the hook preloaded, in the same run:
#
#   - the launch path (cuLaunchKernel): no limit, a memory limit (the hook
#     active, SM time not limited), and an SM limit of 50 % (in CPU time:
#     the limiter's pacing is the point there, its sleeps are not
#     overhead);
#   - the allocation path (cuMemAlloc_v2 + cuMemFree_v2 of 1 MiB with a
#     memory limit): one process, and 8 processes sharing one region at
#     once, each against bare peers run the same way: in CPU time per call
#     (each process's own; 8 processes on a 2-core machine stretch every
#     call's wall time about 4x, hook or not), and in wall time, which also
#     holds the waits for the region's lock;
#   - the launch path as a program linked with -lcuda takes it (the hook's
#     exported wrapper, where dlsym hands out the driver's own function
#     when nothing is limited).
#
# Nanoseconds: medians of ROUNDS runs of N calls.  Instructions: callgrind
# (repeatable), the difference between runs of N1 and N2 calls, so start-up
# costs cancel.  Targets (issue 5): launch ≤ 50 ns with a limit set, ≤ 10 ns
# with none; allocation under 8 contending processes within 2× of one.
# Not a test: nothing fails on timing.
#
# usage: bench/fgpu-overhead.sh   (ROUNDS=5 N=200000 by default)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
ROUNDS=${ROUNDS:-5}
N=${N:-200000}
N1=2000 N2=12000
B=build
make -s -j2 $B/libtessera-fgpu.so $B/libtessera-fake-cuda.so $B/libtessera-fake-nvml.so || exit 1
T=$(mktemp -d /tmp/tessera-bench-fgpu.XXXXXX)
trap 'rm -rf "$T"' EXIT
cc -O2 -I/usr/local/cuda/include -o "$T/fgpu-bench" bench/fgpu-bench.c -ldl || exit 1
mkdir "$T/lib"
ln -s "$PWD/$B/libtessera-fake-cuda.so" "$T/lib/libcuda.so.1"
ln -s "$PWD/$B/libtessera-fake-nvml.so" "$T/lib/libnvidia-ml.so.1"
export LD_LIBRARY_PATH=$T/lib TESSERA_FGPU_REAL_LIBCUDA=$T/lib/libcuda.so.1 TESSERA_FGPU_REAL_LIBNVML=$T/lib/libnvidia-ml.so.1

# run KIND [ENV...] -- CMD...: KIND bare or hook (with its own region)
run() {
        local kind=$1
        shift
        if [ "$kind" = hook ]; then
                env LD_PRELOAD="$PWD/$B/libtessera-fgpu.so" TESSERA_FGPU_REGION="${REGION:-$T/region.$RANDOM$RANDOM}" "$@"
        else
                env "$@"
        fi
}
median() { sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
# per_call FIGURE KIND OP [ENV...]: the median of ROUNDS runs' FIGURE
# (ns_per_call or cpu_ns_per_call)
per_call() {
        local figure=$1 kind=$2 op=$3
        shift 3
        for _ in $(seq 1 "$ROUNDS"); do
                run "$kind" "$@" "$T/fgpu-bench" "$op" "$N" | sed -n "s/^$figure //p"
        done | median
}
ns() { per_call ns_per_call "$@"; }
cpu() { per_call cpu_ns_per_call "$@"; }
# at8 FIGURE KIND OP [ENV...]: median over 8 processes at once (one region)
# of FIGURE per call (cpu_ns_per_call, or ns_per_call: wall time, which
# also holds what waiting for the region's lock costs)
at8() {
        local figure=$1 kind=$2 op=$3 i
        shift 3
        export REGION=$T/region.shared.$RANDOM
        for i in $(seq 1 8); do
                run "$kind" "$@" "$T/fgpu-bench" "$op" "$N" | sed -n "s/^$figure //p" >"$T/p.$i" &
        done
        wait
        unset REGION
        cat "$T"/p.* | median
}
# instr KIND OP [ENV...]: instructions per call (callgrind, N2 - N1 calls)
instr() {
        local kind=$1 op=$2 n i=0
        shift 2
        command -v valgrind >/dev/null || { echo "-"; return; }
        for n in $N1 $N2; do
                i=$((i + 1))
                run "$kind" "$@" valgrind --tool=callgrind --callgrind-out-file="$T/cg.$i" "$T/fgpu-bench" "$op" "$n" \
                        >/dev/null 2>&1
        done
        echo "$(sed -n 's/^summary: //p' "$T/cg.1") $(sed -n 's/^summary: //p' "$T/cg.2")" |
                awk -v d=$((N2 - N1)) '{printf "%.0f", ($2 - $1) / d}'
}
diff_() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.1f", a - b}'; }

echo "load: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores; $N calls, median of $ROUNDS runs"
echo
echo "| path | bare fake driver | with the hook | added | instructions added per call |"
echo "|---|---|---|---|---|"
lb=$(ns bare launch) ib=$(instr bare launch)
for c in "no limit|" "memory limit 8 GiB|CUDA_DEVICE_MEMORY_LIMIT=8g"; do
        name=${c%%|*} envs=${c#*|}
        # shellcheck disable=SC2086
        lh=$(ns hook launch $envs) ih=$(instr hook launch $envs)
        echo "| cuLaunchKernel, $name | $lb ns | $lh ns | $(diff_ "$lh" "$lb") ns | $((ih - ib)) |"
done
# as a program linked with -lcuda calls it: through the hook's wrapper even with no limit
lb=$(ns bare launch_linked) ib=$(instr bare launch_linked)
lh=$(ns hook launch_linked) ih=$(instr hook launch_linked)
echo "| cuLaunchKernel linked (-lcuda), no limit | $lb ns | $lh ns | $(diff_ "$lh" "$lb") ns | $((ih - ib)) |"

# CPU time: a paced launch sleeps, and the sleep is the limit, not overhead
# (the fake GPU reads 0 % busy, so the closed loop lets these through)
cb=$(cpu bare launch) ch=$(cpu hook launch CUDA_DEVICE_MEMORY_LIMIT=8g CUDA_DEVICE_SM_LIMIT=50)
ih=$(instr hook launch CUDA_DEVICE_MEMORY_LIMIT=8g CUDA_DEVICE_SM_LIMIT=50)
echo "| cuLaunchKernel, SM limit 50 % (CPU time) | $cb ns | $ch ns | $(diff_ "$ch" "$cb") ns | $((ih - ib)) |"
ab=$(cpu bare alloc) ah=$(cpu hook alloc CUDA_DEVICE_MEMORY_LIMIT=8g)
ib=$(instr bare alloc) ih=$(instr hook alloc CUDA_DEVICE_MEMORY_LIMIT=8g)
echo "| cuMemAlloc + cuMemFree, 1 process (CPU time) | $ab ns | $ah ns | $(diff_ "$ah" "$ab") ns | $((ih - ib)) |"
ab8=$(at8 cpu_ns_per_call bare alloc) ah8=$(at8 cpu_ns_per_call hook alloc CUDA_DEVICE_MEMORY_LIMIT=8g)
echo "| cuMemAlloc + cuMemFree, 8 processes, one region (CPU time) | $ab8 ns | $ah8 ns | $(diff_ "$ah8" "$ab8") ns | |"
wb8=$(at8 ns_per_call bare alloc) wh8=$(at8 ns_per_call hook alloc CUDA_DEVICE_MEMORY_LIMIT=8g)
echo "| cuMemAlloc + cuMemFree, 8 processes, one region (wall time, $(nproc) cores) | $wb8 ns | $wh8 ns | $(diff_ "$wh8" "$wb8") ns | |"
echo
awk -v a1="$(diff_ "$ah" "$ab")" -v a8="$(diff_ "$ah8" "$ab8")" \
        'BEGIN {printf "allocation: the hook adds %.2fx under 8 contending processes what it adds to one (target within 2x)\n", (a1 > 0 ? a8 / a1 : 0)}'
