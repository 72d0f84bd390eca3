#!/bin/bash
test_description='tessera sim: the scheduler on virtual agents, traces, converters, reports, comparisons'
. "$(dirname "$0")/../lib/test-lib.sh"

# The simulator needs no manager and no database: it runs the same way on
# both backends.
T=$TESSERA
S=$TEST_ROOT/tests/sim

# csv_get FILE RUN COLUMN: the value of COLUMN in the row whose first field
# is RUN (a summary.csv or compare.csv).
csv_get() {
        awk -F, -v run="$2" -v col="$3" '
                NR == 1 { for (i = 1; i <= NF; i++) if ($i == col) c = i; next }
                $1 == run && c { print $c; found = 1 }
                END { if (!found || !c) exit 1 }' "$1"
}

# lt A B: A < B as decimal numbers
lt() {
        awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 < b + 0) }'
}

test_expect_success 'help exits 0, a bad option 2, a missing trace 1' '
        $T sim --help >"$TMP/help" && grep -q -- "--gpu-mode" "$TMP/help" &&
        grep -q -- "--compare" "$TMP/help" &&
        $T sim convert --help | grep -q -- "--from" &&
        $T sim generate --help | grep -q -- "--jobs" &&
        { $T sim --no-such-option 2>"$TMP/err"; test $? = 2; } && grep -q "unknown option" "$TMP/err" &&
        { $T sim --policy round 2>"$TMP/err"; test $? = 2; } && grep -q "fifo, lifo, drf or fair-share" "$TMP/err" &&
        { $T sim --agents many 2>/dev/null; test $? = 2; } &&
        { $T sim frobnicate 2>/dev/null; test $? = 2; } &&
        { $T sim convert in out 2>/dev/null; test $? = 2; } &&
        { $T sim --trace "$TMP/none.csv" 2>"$TMP/err"; test $? = 1; } && grep -q "none.csv" "$TMP/err"
'

test_expect_success 'a bad trace is an error naming its line' '
        { $T sim --trace "$S/bad-trace.csv" 2>"$TMP/err"; test $? = 1; } &&
        grep -q "bad-trace.csv:3: column .duration.: .sixty." "$TMP/err"
'

test_expect_success 'a synthetic workload runs and writes its CSV and SVG' '
        $T sim --agents 4 --jobs 300 --seed 3 --users 5 --out "$TMP/syn" >"$TMP/out" &&
        grep -q "300 done" "$TMP/out" && grep -q "queueing delay" "$TMP/out" &&
        grep -q "Jain" "$TMP/out" && grep -q "fragmentation" "$TMP/out" &&
        for f in timeseries.csv jobs.csv summary.csv chart.svg; do test -s "$TMP/syn/$f" || exit 1; done &&
        head -n 1 "$TMP/syn/timeseries.csv" | grep -q "^time_s,gpu_util,gpu_alloc,cpu_util,queue,running,frag_gpus$" &&
        test "$(tail -n +2 "$TMP/syn/jobs.csv" | wc -l)" = 300 &&
        head -c 5 "$TMP/syn/chart.svg" | grep -q "<svg" && grep -q "<polyline" "$TMP/syn/chart.svg" &&
        tail -n 1 "$TMP/syn/chart.svg" | grep -q "</svg>" &&
        test "$(csv_get "$TMP/syn/summary.csv" fifo-fractional done)" = 300
'

test_expect_success 'the same seed gives the same jobs; generate writes a trace that replays' '
        $T sim generate --agents 4 --jobs 120 --seed 9 "$TMP/gen1.csv" >/dev/null &&
        $T sim generate --agents 4 --jobs 120 --seed 9 "$TMP/gen2.csv" >/dev/null &&
        cmp "$TMP/gen1.csv" "$TMP/gen2.csv" &&
        $T sim --agents 4 --trace "$TMP/gen1.csv" --out "$TMP/gen" >/dev/null &&
        test "$(csv_get "$TMP/gen/summary.csv" fifo-fractional done)" = 120
'

test_expect_success 'every job of a placeable trace completes, under every policy and selection' '
        for sel in concentrated dispersed roundrobin; do
                $T sim --agents 4 --trace "$S/small.csv" --select $sel --compare --out "$TMP/small-$sel" >"$TMP/out" || exit 1
                for run in fifo-whole fifo-fractional lifo-whole lifo-fractional drf-whole drf-fractional \
                        fair-share-whole fair-share-fractional; do
                        test "$(csv_get "$TMP/small-$sel/compare.csv" $run done)" = 40 || exit 1
                        test "$(grep -c ",done$" "$TMP/small-$sel/$run/jobs.csv")" = 40 || exit 1
                done
        done &&
        test -s "$TMP/small-concentrated/compare.svg" &&
        grep -q "fair-share-fractional" "$TMP/out"
'

test_expect_success 'half-GPU jobs: fractional allocation uses the GPUs better and waits less than whole' '
        $T sim --agents 2 --gpus-per-agent 4 --trace "$S/half-gpu.csv" --compare=modes --out "$TMP/half" >"$TMP/out" &&
        c=$TMP/half/compare.csv &&
        fu=$(csv_get "$c" fifo-fractional gpu_util) && wu=$(csv_get "$c" fifo-whole gpu_util) &&
        fw=$(csv_get "$c" fifo-fractional wait_mean_s) && ww=$(csv_get "$c" fifo-whole wait_mean_s) &&
        echo "util fractional $fu whole $wu; wait fractional $fw whole $ww" &&
        lt "$wu" "$fu" && lt "$fw" "$ww" &&
        lt 0.9 "$fu" && lt "$wu" 0.55 &&
        lt 0.9 "$(csv_get "$c" fifo-whole gpu_alloc)" &&
        test "$(csv_get "$c" fifo-fractional done)" = 64 && test "$(csv_get "$c" fifo-whole done)" = 64
'

test_expect_success 'a job larger than an agent is rejected, the rest run; a user GPU limit holds' '
        { cat "$S/half-gpu.csv"; echo "100,60,u9,p1,1,4g,5"; } >"$TMP/big.csv" &&
        $T sim --agents 2 --gpus-per-agent 4 --trace "$TMP/big.csv" --out "$TMP/big" >"$TMP/out" &&
        grep -q "64 done, 1 rejected" "$TMP/out" &&
        grep -q ",rejected$" "$TMP/big/jobs.csv" &&
        $T sim --agents 2 --gpus-per-agent 4 --trace "$S/half-gpu.csv" --user-gpu-limit 1 --out "$TMP/lim" >/dev/null &&
        test "$(csv_get "$TMP/lim/summary.csv" fifo-fractional done)" = 64 &&
        lt "$(csv_get "$TMP/half/compare.csv" fifo-fractional wait_mean_s)" \
           "$(csv_get "$TMP/lim/summary.csv" fifo-fractional wait_mean_s)"
'

test_expect_success 'Helios and Philly logs convert to traces that replay' '
        $T sim convert --from helios "$S/helios-sample.csv" "$TMP/helios.csv" >"$TMP/out" &&
        grep -q "converted 7 jobs (1 skipped" "$TMP/out" &&
        head -n 1 "$TMP/helios.csv" | grep -q "^arrival,duration,user,project,cpu,mem,gpu,nodes,priority,id$" &&
        grep -q "^129,7200,uVMrF,vchbv,32,256g,8,2,0,1425515$" "$TMP/helios.csv" &&
        $T sim --agents 4 --trace "$TMP/helios.csv" --out "$TMP/hel" >/dev/null &&
        test "$(csv_get "$TMP/hel/summary.csv" fifo-fractional done)" = 7 &&
        $T sim convert --from philly --cpu-per-gpu 2 "$S/philly-sample.json" "$TMP/philly.csv" >"$TMP/out" &&
        grep -q "converted 4 jobs (2 skipped" "$TMP/out" &&
        grep -q "^0,9656,ce2f4c,ee9e8c,16,256g,8,1,0,application_1506638472019_14199$" "$TMP/philly.csv" &&
        $T sim --agents 2 --trace "$TMP/philly.csv" --gpu-mode whole --out "$TMP/phi" >/dev/null &&
        test "$(csv_get "$TMP/phi/summary.csv" fifo-whole done)" = 4 &&
        { $T sim convert --from philly "$S/helios-sample.csv" "$TMP/x.csv" 2>"$TMP/err"; test $? = 1; } &&
        grep -q "not valid JSON" "$TMP/err" &&
        { $T sim convert --from slurm a b 2>/dev/null; test $? = 2; }
'

test_expect_success 'periodic passes, a kick delay and a pending timeout' '
        $T sim --agents 1 --gpus-per-agent 2 --trace "$S/half-gpu.csv" --pending-timeout 30m \
                --pass-interval 1m --kick-delay 5ms --out "$TMP/to" >"$TMP/out" &&
        to=$(csv_get "$TMP/to/summary.csv" fifo-fractional timed_out) &&
        done=$(csv_get "$TMP/to/summary.csv" fifo-fractional done) &&
        test "$to" -gt 0 && test $((to + done)) = 64 &&
        grep -q ",timed-out$" "$TMP/to/jobs.csv"
'

test_done
