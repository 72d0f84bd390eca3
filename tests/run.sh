#!/bin/bash
# tests/run.sh [PATTERN...] - run every test and end with one total line.
#
#   BUILD=build/asan tests/run.sh            everything (what `make check` runs)
#   BUILD=build/asan tests/run.sh slots t0001   only files whose path contains a pattern
#
# Runs, with leak detection and halting sanitizers:
#   $BUILD/tests/test_*          unit tests (tests/unit/), TAP + `N passed, N failed`
#   $BUILD/fuzz-replay/fuzz_*    fuzz targets replaying tests/fuzz/corpus/<parser>/
#   tests/integration/t*.sh      once with TESSERA_TEST_DB=sqlite, then once with
#                                TESSERA_TEST_DB=postgresql against a private
#                                PostgreSQL (scripts/pg-test.sh) whose URL is in
#                                TESSERA_TEST_PG_URL; exit 77 means skipped
# Each child's counts come from the last `N passed, N failed[, N skipped]` line
# it prints; a child that crashes, hangs (TEST_TIMEOUT, default 600 s) or
# exits non-zero without reporting a failure counts one failure more.  Logs
# are kept in $TEST_LOGS (default $BUILD/test-logs/, emptied first: give two
# runs at once different TEST_LOGS).  The last line is the total; exit 1 if
# any test failed.
set -u

cd "$(dirname "$0")/.." || exit 1
ROOT=$(pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
export BUILD
export TESSERA=${TESSERA:-$BUILD/tessera}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
TEST_TIMEOUT=${TEST_TIMEOUT:-600}
export TEST_LOGS=${TEST_LOGS:-$BUILD/test-logs}
LOGS=$TEST_LOGS
rm -rf "$LOGS"
mkdir -p "$LOGS"

total_pass=0 total_fail=0 total_skip=0 nfiles=0
failed_files=()
patterns=("$@")

selected() {
        [ ${#patterns[@]} -eq 0 ] && return 0
        local p
        for p in "${patterns[@]}"; do
                [[ $1 == *"$p"* ]] && return 0
        done
        return 1
}

# The interesting part of a failed test's log: its failed checks, the start
# of a sanitizer report, or else its last lines.
show_failure() {
        local log=$1 first
        grep -E '^not ok|^# |FUZZ_ASSERT' "$log" | head -n 30
        first=$(grep -nE 'ERROR: [A-Za-z]+Sanitizer|runtime error:|ERROR: libFuzzer' "$log" | head -n 1 | cut -d: -f1)
        if [ -n "$first" ]; then
                sed -n "${first},\$p" "$log" | grep -vE '^ +#[0-9]+ 0x[0-9a-f]+ in (__libc_start|_start)' |
                        sed '/^Shadow bytes around/,$d' | head -n 25
        elif ! grep -qE '^not ok' "$log"; then
                tail -n 15 "$log"
        fi
        echo "(log: ${log#"$ROOT"/})"
}

# run_one LABEL LOG CMD...: run a test program, parse and print its result.
run_one() {
        local label=$1 log=$2 rc pass=0 fail=0 skip=0 last note=
        shift 2
        nfiles=$((nfiles + 1))
        # (the braces keep bash's "Aborted" notices out of our output)
        { timeout -k 10 "$TEST_TIMEOUT" "$@" </dev/null >"$log" 2>&1; } 2>/dev/null
        rc=$?
        last=$(grep -E '^([A-Za-z]+: )?[0-9]+ passed, [0-9]+ failed(, [0-9]+ skipped)?$' "$log" | tail -n 1)
        if [ -n "$last" ]; then
                last=${last#*: }
                pass=$(echo "$last" | sed -E 's/^([0-9]+) passed.*/\1/')
                fail=$(echo "$last" | sed -E 's/^[0-9]+ passed, ([0-9]+) failed.*/\1/')
                case $last in *skipped) skip=$(echo "$last" | sed -E 's/.*, ([0-9]+) skipped$/\1/') ;; esac
                # C unit tests report skips on a `# N skipped` line
                local s
                s=$(grep -E '^# [0-9]+ skipped' "$log" | tail -n 1 | sed -E 's/^# ([0-9]+) skipped.*/\1/')
                [ -n "$s" ] && skip=$((skip + s))
        else
                # no summary: count what it got through
                pass=$(grep -cE '^ok [0-9]+' "$log")
                fail=$(grep -cE '^not ok' "$log")
        fi
        if [ $rc -eq 77 ] && [ "$fail" -eq 0 ]; then
                [ "$pass" -eq 0 ] && [ "$skip" -eq 0 ] && skip=1
                note=" (skipped: $(grep -m1 -iE 'skip' "$log" | cut -c1-100))"
        elif [ $rc -ne 0 ]; then
                case $rc in
                124 | 137) note=" (timed out after ${TEST_TIMEOUT}s)" ;;
                *) [ $rc -gt 128 ] && note=" (killed by signal $((rc - 128)))" || note=" (exit $rc)" ;;
                esac
                [ -z "$last" ] && note="$note, no summary line"
                [ "$fail" -eq 0 ] && fail=1
        elif [ -z "$last" ]; then
                note=" (no '$(echo N passed, N failed)' line)"
                fail=$((fail + 1))
        fi
        total_pass=$((total_pass + pass))
        total_fail=$((total_fail + fail))
        total_skip=$((total_skip + skip))
        local status=PASS
        [ "$fail" -gt 0 ] && status=FAIL
        [ "$fail" -eq 0 ] && [ "$pass" -eq 0 ] && [ "$skip" -gt 0 ] && status=SKIP
        if [ "$skip" -gt 0 ]; then
                printf '%-4s %-44s %d passed, %d failed, %d skipped%s\n' $status "$label" "$pass" "$fail" "$skip" "$note"
        else
                printf '%-4s %-44s %d passed, %d failed%s\n' $status "$label" "$pass" "$fail" "$note"
        fi
        if [ $status = FAIL ]; then
                failed_files+=("$label")
                show_failure "$log" | sed 's/^/     | /'
        fi
}

# ---- unit tests ----
for t in "$BUILD"/tests/test_*; do
        [ -f "$t" ] && [ -x "$t" ] || continue
        case $t in *.d | *.o) continue ;; esac
        name=tests/$(basename "$t")
        selected "$name" || continue
        run_one "$name" "$LOGS/$(basename "$t").log" "$t"
done

# ---- fuzz corpus replay ----
for t in "$BUILD"/fuzz-replay/fuzz_*; do
        [ -f "$t" ] && [ -x "$t" ] || continue
        case $t in *.d | *.o) continue ;; esac
        name=fuzz-replay/$(basename "$t")
        selected "$name" || continue
        run_one "$name" "$LOGS/$(basename "$t").log" "$t"
done

# ---- integration tests, once per database backend ----
scripts=()
for s in tests/integration/t*.sh; do
        [ -f "$s" ] || continue
        selected "$s" || continue
        scripts+=("$s")
done
pg_dir=
stop_pg() {
        if [ -n "$pg_dir" ]; then
                scripts/pg-test.sh stop "$pg_dir" >/dev/null 2>&1
                pg_dir=
        fi
}
trap 'stop_pg' EXIT
trap 'stop_pg; exit 130' INT TERM
if [ ${#scripts[@]} -gt 0 ]; then
        if [ ! -x "$TESSERA" ]; then
                echo "tests/run.sh: $TESSERA is missing: build it first (make BUILD=... tests)" >&2
        fi
        for s in "${scripts[@]}"; do
                TESSERA_TEST_DB=sqlite run_one "$s [sqlite]" "$LOGS/$(basename "$s" .sh).sqlite.log" bash "$s"
        done
        if ! ls -d /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
                echo "# postgresql is not installed: skipping the postgresql runs (scripts/install-deps.sh test)"
                total_skip=$((total_skip + ${#scripts[@]}))
        else
                pg_dir=$(mktemp -d /tmp/tessera-pg.XXXXXX)
                if TESSERA_TEST_PG_URL=$(scripts/pg-test.sh start "$pg_dir" 2>"$LOGS/pg-test.log"); then
                        export TESSERA_TEST_PG_URL
                        for s in "${scripts[@]}"; do
                                TESSERA_TEST_DB=postgresql run_one "$s [postgresql]" \
                                        "$LOGS/$(basename "$s" .sh).postgresql.log" bash "$s"
                        done
                else
                        echo "FAIL scripts/pg-test.sh start: PostgreSQL did not start"
                        sed 's/^/     | /' "$LOGS/pg-test.log" | tail -n 20
                        total_fail=$((total_fail + 1))
                        failed_files+=("scripts/pg-test.sh")
                fi
                stop_pg
        fi
fi

if [ $nfiles -eq 0 ]; then
        echo "tests/run.sh: no tests found in $BUILD (build them: make BUILD=${BUILD#"$ROOT"/} tests)"
        total_fail=$((total_fail + 1))
fi
if [ ${#failed_files[@]} -gt 0 ]; then
        echo "# failed: ${failed_files[*]}"
        echo "# logs: ${LOGS#"$ROOT"/}/"
fi
if [ $total_skip -gt 0 ]; then
        echo "$total_pass passed, $total_fail failed, $total_skip skipped"
else
        echo "$total_pass passed, $total_fail failed"
fi
[ $total_fail -eq 0 ]
