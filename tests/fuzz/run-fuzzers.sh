#!/bin/bash
# tests/fuzz/run-fuzzers.sh [SECONDS [TARGET...]] - build the libFuzzer
# targets with clang (ASan+UBSan) into build/fuzz/ and fuzz each for SECONDS
# (default 60), starting from its committed corpus.  New inputs go to
# build/fuzz/new-<parser>/ (merge the few that add coverage into
# tests/fuzz/corpus/<parser>/ by hand); crashes to build/fuzz/crash-<parser>-*.
# Exits 1 if any target crashed; 0 with a note if clang or its libFuzzer
# runtime is missing.
#
#   tests/fuzz/run-fuzzers.sh 600 slots      # ten minutes on fuzz_slots
set -u
cd "$(dirname "$0")/../.." || exit 1

secs=${1:-60}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
        for f in tests/fuzz/fuzz_*.c; do
                n=$(basename "$f" .c)
                targets+=("${n#fuzz_}")
        done
fi
out=build/fuzz
if ! command -v clang >/dev/null 2>&1 ||
        ! echo 'int LLVMFuzzerTestOneInput(const char *d, long n) { return 0; }' |
        clang -x c -fsanitize=fuzzer -o /dev/null - >/dev/null 2>&1; then
        echo "run-fuzzers: clang with libFuzzer is not installed (apt-get install clang libclang-rt-dev), skipping"
        exit 0
fi

# Every target, built by the Makefile's `fuzz` rule (instrumented library
# objects, one binary per target, the same link as the program's).
make --no-print-directory -j"$(nproc)" fuzz || exit 1

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
jobs=$(nproc)
failed=()
pids=()
names=()
run_target() {
        local t=$1
        mkdir -p "$out/new-$t"
        "$out/fuzz_$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=4096 \
                -dict=tests/fuzz/http.dict -artifact_prefix="$out/crash-$t-" -print_final_stats=1 \
                "$out/new-$t" "tests/fuzz/corpus/$t" >"$out/fuzz_$t.log" 2>&1
}
for t in "${targets[@]}"; do
        while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do
                wait -n
        done
        echo "fuzzing $t for ${secs}s"
        run_target "$t" &
        pids+=($!)
        names+=("$t")
done
for i in "${!pids[@]}"; do
        t=${names[$i]}
        if wait "${pids[$i]}"; then
                echo "ok   fuzz_$t: $(grep -m1 -E 'stat::number_of_executed_units' "$out/fuzz_$t.log" |
                        sed 's/.*: *//') runs, $(grep -E '^#[0-9]+.*(DONE|pulse|NEW|REDUCE)' "$out/fuzz_$t.log" |
                        tail -n 1 | grep -oE 'cov: [0-9]+')"
        else
                failed+=("$t")
                echo "FAIL fuzz_$t (log: $out/fuzz_$t.log)"
                grep -E 'FUZZ_ASSERT|ERROR: |runtime error|SUMMARY|Test unit written|^Base64' "$out/fuzz_$t.log" |
                        head -n 12 | sed 's/^/     | /'
        fi
done
[ ${#failed[@]} -eq 0 ]
