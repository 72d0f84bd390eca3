#!/bin/bash
# bench/http-libs/run.sh - measure candidate HTTP server libraries on the
# manager's first benchmark: signed GET /session/{name} with keep-alive,
# driven by wrk, server and wrk sharing the machine's cores (no pinning).
#
#   bench/http-libs/run.sh                 3 repetitions x c8/c32/c128 x 10 s
#   REPS=5 DURATION=10s CONNS="32" SERVERS="mhd-ext h2o" bench/http-libs/run.sh
#   SUMMARY_ONLY=1 bench/http-libs/run.sh  summary of every run in results.tsv
#
# Installs missing Debian packages, builds into build/bench/, prints one line
# per run and a summary (medians over the repetitions, with min..max of
# requests/s, and ratios to libmicrohttpd in the manager's mode, mhd-ext).
# Raw results: build/bench/results.tsv (appended to by every call).
#
# The machine is shared (builds, fuzzers): before each measured run the script
# waits up to QUIET_MAX seconds for the other processes to use less than
# QUIET_PCT % of a core, and it records "other%" - CPU used during the run by
# anything but the server and wrk, plus hypervisor steal, in % of one core.
# A run above NOISY_PCT is repeated (up to RETRIES more times, all recorded);
# the summary counts only runs with other% <= NOISY_PCT (all runs if none).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
BUILD=${BENCH_BUILD:-build/bench}
REPS=${REPS:-3}
DURATION=${DURATION:-10s}
WARMUP=${WARMUP:-2s}
CONNS=${CONNS:-"8 32 128"}
SERVERS=${SERVERS:-"mhd-ext mhd-thread libevent h2o"}
PORT=${PORT:-18480}
QUIET_PCT=${QUIET_PCT:-10}
QUIET_MAX=${QUIET_MAX:-300}
NOISY_PCT=${NOISY_PCT:-10}
RETRIES=${RETRIES:-2}
RESULTS=$BUILD/results.tsv
SUMMARY_ONLY=${SUMMARY_ONLY:-}

summary() { # $1: a run tag, or "all"
        echo "# summary: medians over the runs with other% <= $NOISY_PCT (n of them); req/s min..max"
        echo "# over those runs; ratios to mhd-ext (the manager's mode) at the same -c"
        printf '%-11s %5s %2s %10s %-17s %7s %7s %7s %10s %8s %8s\n' server conns n req/s "[min..max]" p50ms p99ms errors cpu_us/req rps/mhd p99/mhd
        awk -F'\t' -v tag="$1" -v servers="$SERVERS" -v conns="$CONNS" -v noisy="$NOISY_PCT" '
function median(key, col,    m, i, j, t, a) {
        m = split(vals[key, col], a, " ")
        for (i = 2; i <= m; i++) for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
        lo[key] = a[1]; hi[key] = a[m]
        return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
}
NR > 1 && (tag == "all" || $1 == tag) {
        k = $3 SUBSEP $4
        for (c = 5; c <= 11; c++) all[k, c] = all[k, c] (all[k, c] == "" ? "" : " ") $c
        if ($12 + 0 <= noisy + 0) {
                n[k]++
                for (c = 5; c <= 11; c++) vals[k, c] = vals[k, c] (vals[k, c] == "" ? "" : " ") $c
        }
}
END {
        for (kc in all) if (!(kc in vals)) vals[kc] = all[kc] # no quiet run at all: use every run
        ns = split(servers, S, " "); nc = split(conns, C, " ")
        for (ci = 1; ci <= nc; ci++) {
                base = "mhd-ext" SUBSEP C[ci]
                brps = ((base, 5) in vals) ? median(base, 5) : 0
                bp99 = ((base, 9) in vals) ? median(base, 9) : 0
                for (si = 1; si <= ns; si++) {
                        k = S[si] SUBSEP C[ci]
                        if (!((k, 5) in vals)) continue
                        p99 = median(k, 9); p50 = median(k, 6); errs = median(k, 10); cpu = median(k, 11)
                        rps = median(k, 5)
                        printf "%-11s %5s %2d %10.0f [%6.0f..%6.0f] %7.3f %7.3f %7d %10.1f %8s %8s\n", S[si], C[ci], n[k], rps,
                                lo[k], hi[k], p50, p99, errs, cpu,
                                brps ? sprintf("%.2f", rps / brps) : "-", bp99 ? sprintf("%.2f", p99 / bp99) : "-"
                }
        }
}' "$RESULTS"
}

if [[ -n $SUMMARY_ONLY ]]; then
        summary all
        exit 0
fi

# --- packages -----------------------------------------------------------------
PKGS="libmicrohttpd-dev libevent-dev libh2o-evloop-dev libssl-dev pkg-config make gcc wrk curl"
missing=()
for p in $PKGS; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
        echo "installing: ${missing[*]}" >&2
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2
fi

# --- build --------------------------------------------------------------------
make -s -f bench/http-libs/Makefile BENCH_BUILD="$BUILD" >&2

server_cmd() {
        case $1 in
        mhd-ext) echo "$BUILD/srv_mhd $PORT ext" ;;
        mhd-thread) echo "$BUILD/srv_mhd $PORT thread" ;;
        libevent) echo "$BUILD/srv_libevent $PORT" ;;
        h2o) echo "$BUILD/srv_h2o $PORT" ;;
        *) echo "unknown server $1" >&2; exit 2 ;;
        esac
}

# total user+system CPU of a process and its threads, in clock ticks
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

# busy (user+nice+system+irq+softirq) and steal clock ticks of the whole machine
sys_ticks() { awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8, $9 }' /proc/stat; }

# user+system CPU of this shell's waited-for children (wrk), in clock ticks;
# `times` must run in this shell, not in a $(...) subshell
child_ticks() {
        times >"$TMP/times"
        awk -v t="$TICK" 'NR == 2 { for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); s += a[1] * 60 + a[2] } print int(s * t + 0.5) }' "$TMP/times"
}

now_ns() { date +%s%N; }

# Waits until the machine is quiet; returns 0 at once if it is, or after QUIET_MAX seconds.
wait_quiet() {
        local waited=0 b0 b1
        while :; do
                read -r b0 _ < <(sys_ticks)
                sleep 1
                read -r b1 _ < <(sys_ticks)
                (((b1 - b0) * 100 <= QUIET_PCT * TICK)) && return 0
                ((waited >= QUIET_MAX)) && { echo "# machine still busy after ${QUIET_MAX}s; measuring anyway" >&2; return 0; }
                ((waited == 0)) && echo "# waiting for the machine to be quiet ($(((b1 - b0) * 100 / TICK))% of a core busy)" >&2
                sleep 4
                waited=$((waited + 5))
        done
}

# wrk's latency figure ("635.00us", "2.05ms", "1.01s") in milliseconds
to_ms() {
        awk -v v="$1" 'BEGIN {
                if (v ~ /us$/) { sub(/us$/, "", v); printf "%.3f", v / 1000 }
                else if (v ~ /ms$/) { sub(/ms$/, "", v); printf "%.3f", v }
                else if (v ~ /m$/) { sub(/m$/, "", v); printf "%.3f", v * 60000 }
                else { sub(/s$/, "", v); printf "%.3f", v * 1000 } }'
}

# A signed request as the CLI sends it (signature not checked by the bench servers).
WRK_HDRS=(-H "Authorization: BackendAI signMethod=HMAC-SHA256, credential=AKIAIOSFODNN7EXAMPLE:5f1e0b1d2c7a9b3e4f60718293a4b5c6d7e8f90112233445566778899aabbccd"
        -H "Date: $(date -u '+%a, %d %b %Y %H:%M:%S GMT')"
        -H "X-BackendAI-Version: v8.20240315"
        -H "Accept: application/json")
URL="http://127.0.0.1:$PORT/session/alice-notebook-01"
TICK=$(getconf CLK_TCK)

mkdir -p "$BUILD"
[[ -s $RESULTS ]] || printf 'when\trep\tserver\tconns\trps\tp50_ms\tp75_ms\tp90_ms\tp99_ms\terrors\tcpu_us_per_req\tother_pct\n' >"$RESULTS"
RUN_TAG=$(date -u +%Y-%m-%dT%H:%M:%SZ)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"; [[ -n ${SPID:-} ]] && kill "$SPID" 2>/dev/null || true' EXIT

echo "# $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), $(uname -r), wrk $(wrk -v 2>&1 | head -1 | awk '{print $2}')"
echo "# reps=$REPS duration=$DURATION conns=[$CONNS] servers=[$SERVERS]"
printf '%-3s %-11s %5s %10s %8s %8s %8s %7s %10s %7s\n' rep server conns req/s p50ms p90ms p99ms errors cpu_us/req other%

# One measured wrk run against the running server $SPID; prints and records
# it and sets $other (in % of a core) for the caller.
measure() {
        local rep=$1 srv=$2 conns=$3 c0 c1 n0 n1 b0 b1 st0 st1 w0 w1 rps total p50 p75 p90 p99 errs cpu
        wait_quiet
        child_ticks >"$TMP/w0"
        c0=$(cpu_ticks "$SPID") n0=$(now_ns)
        read -r b0 st0 < <(sys_ticks)
        wrk -t1 -c"$conns" -d"$DURATION" --latency "${WRK_HDRS[@]}" "$URL" >"$TMP/wrk.out"
        read -r b1 st1 < <(sys_ticks)
        c1=$(cpu_ticks "$SPID") n1=$(now_ns)
        child_ticks >"$TMP/w1"
        w0=$(<"$TMP/w0") w1=$(<"$TMP/w1")
        other=$(awk -v b=$((b1 - b0)) -v st=$((st1 - st0)) -v s=$((c1 - c0)) -v w=$((w1 - w0)) \
                -v ns=$((n1 - n0)) -v t="$TICK" 'BEGIN { o = (b - s - w + st) / (ns / 1e9 * t) * 100; printf "%.0f", o < 0 ? 0 : o }')
        rps=$(awk '/^Requests\/sec:/ { print $2 }' "$TMP/wrk.out")
        total=$(awk '/requests in/ { print $1 }' "$TMP/wrk.out")
        lat() { to_ms "$(awk -v p="$1%" '$1 == p { print $2 }' "$TMP/wrk.out")"; }
        p50=$(lat 50) p75=$(lat 75) p90=$(lat 90) p99=$(lat 99)
        errs=$(awk '/Socket errors|Non-2xx/ { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+,?$/) s += $i } END { print s + 0 }' "$TMP/wrk.out")
        cpu=$(awk -v d=$((c1 - c0)) -v t="$TICK" -v n="$total" 'BEGIN { printf "%.1f", n ? d * 1e6 / t / n : 0 }')
        printf '%-3s %-11s %5s %10.0f %8s %8s %8s %7s %10s %7s\n' "$rep" "$srv" "$conns" "$rps" "$p50" "$p90" "$p99" "$errs" "$cpu" "$other"
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$RUN_TAG" "$rep" "$srv" "$conns" "$rps" "$p50" "$p75" "$p90" "$p99" "$errs" "$cpu" "$other" >>"$RESULTS"
}

read -r -a srv_list <<<"$SERVERS"
for ((rep = 1; rep <= REPS; rep++)); do
        # rotate the order every repetition so that drift does not favour one server
        n=${#srv_list[@]}
        order=()
        for ((i = 0; i < n; i++)); do order+=("${srv_list[$(((i + rep - 1) % n))]}"); done
        for conns in $CONNS; do
                for srv in "${order[@]}"; do
                        $(server_cmd "$srv") 2>"$TMP/server.log" &
                        SPID=$!
                        for _ in $(seq 50); do
                                curl -s -o /dev/null "$URL" 2>/dev/null && break
                                sleep 0.1
                        done
                        wrk -t1 -c"$conns" -d"$WARMUP" "${WRK_HDRS[@]}" "$URL" >/dev/null
                        for ((attempt = 0; attempt <= RETRIES; attempt++)); do
                                measure "$rep" "$srv" "$conns"
                                ((other <= NOISY_PCT)) && break
                        done
                        kill "$SPID"
                        wait "$SPID" 2>/dev/null || true
                        SPID=
                done
        done
done

# --- summary of this call's runs ----------------------------------------------
echo
summary "$RUN_TAG"
