#!/bin/bash
# bench/scheduler.sh - the manager's scheduler end to end (a benchmark, not
# a test: nothing here fails on timing).  On SQLite and on PostgreSQL:
#
#   1. `tessera dev --no-agent` (release build: no agent of its own, which
#      would take sessions before the measurement) with agent_lost_timeout
#      = 1h, log_level = info and scheduler_interval = 1h (only events tick);
#   2. 2,000 agents register through POST /agent/heartbeat, signed with the
#      cluster secret, 64 CPUs and 512 GiB each: 1,200 with 8 GPUs of
#      cuda.shares (fgpu_per_gpu 1) and 800 with 8 GPUs of cuda.device; the
#      admin API marks them all non-schedulable (PATCH /admin/agents/{id});
#   3. 9,999 mixed sessions become PENDING: 40 % fractional (0.25-1 fGPU),
#      15 % whole GPUs as shares (1-4 fGPU, spread over devices), 15 % whole
#      GPUs as cuda.device (1-4), 30 % CPU-only.  By default (clone) one
#      session per distinct shape (200) goes in through POST /session; SQL
#      copies their sessions and kernels rows, every column as the API
#      wrote it (the scheduler's waiting reason included) but id, name and
#      times, into sessions 1-9,899, and deletes the templates; sessions
#      9,900-9,999 go in through POST /session (two keep-alive clients),
#      which also measures enqueueing behind a deep backlog.  PostgreSQL is
#      ANALYZEd, as autovacuum would within a minute.  BENCH_CREATE=api
#      sends all 9,999 through the API: every enqueue makes the scheduler
#      tick over the whole backlog, so that takes minutes (12 on SQLite
#      under load on the 2-core machine);
#   4. one SQL statement makes every agent schedulable again (what the
#      admin PATCH writes, for all agents at once: one by one, the first
#      agents back would be filled by many small ticks; the PATCH does not
#      kick the scheduler today, but nothing here relies on that), then the
#      10,000th session is created through the API: its enqueue event is
#      the one event that starts the measured tick;
#   5. the wall time from that request until `SELECT count(*) FROM sessions
#      WHERE status = 'SCHEDULED'` reaches 10,000 (polled with sqlite3 /
#      psql) and the manager's own "placed N sessions in X ms" lines give
#      placements per second, compared with Nomad (3,750/s), kube-scheduler
#      (810/s; 180/s with extended resources) and Slurm (500/s);
#   6. the placement is checked: per agent, the kernels' occupied_slots sum
#      to at most available_slots and equal the agent's stored
#      occupied_slots; per GPU device, the kernels' device_alloc sum to at
#      most its capacity; each kernel's device_alloc sums to its GPU amount.
#
# The peers' figures are published numbers from other hardware (see
# ../shared/research/perf-anchors.md), not runs on this machine.
#
# usage: bench/scheduler.sh [sqlite|postgresql ...]   (default: both)
#   BENCH_AGENTS (2000), BENCH_SESSIONS (10000), TESSERA (build/tessera),
#   BENCH_CREATE=clone (default) or api, BENCH_API_TAIL (100; clone: how
#   many of the 9,999 still go through the API), BENCH_WAIT (120 s),
#   BENCH_PORT (18795), BENCH_KEEP=1 keeps the work directory.
set -euo pipefail
cd "$(dirname "$0")/.."
AGENTS=${BENCH_AGENTS:-2000}
SESSIONS=${BENCH_SESSIONS:-10000}
DEVICE_AGENTS=$((AGENTS * 2 / 5)) # the last 40 % offer cuda.device
CREATE=${BENCH_CREATE:-clone}
API_TAIL=${BENCH_API_TAIL:-100} # clone: the last ones of the backlog still go through the API
DBS=("$@")
[ ${#DBS[@]} -gt 0 ] || DBS=(sqlite postgresql)

. bench/lib/manager.sh
AK=AKIASCHEDBENCHBENCH0
SK=schedbenchschedbenchschedbenchschedbench
PORT=${BENCH_PORT:-18795}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }

signed() { # METHOD PATH [BODY]: prints the answer, fails on a non-2xx
        local ct=text/plain h=()
        [ $# -ge 3 ] && ct=application/json
        while IFS= read -r l; do h+=(-H "$l"); done < <("$TT" sign "$1" "$2" "127.0.0.1:$PORT" $AK $SK $ct)
        curl -sSf -m 60 -X "$1" "${h[@]}" ${3:+--data "$3"} "http://127.0.0.1:$PORT$2"
}

# curl_config FILE: run the requests of a curl config written by
# sched-load (one keep-alive connection); print the count of each status
curl_config() {
        curl -s -K "$1" | sort | uniq -c | awk '{ printf "%s%s x%s", (NR > 1 ? ", " : ""), $2, $1 }'
}

start_manager() {
        cat >"$WORK/manager.conf" <<EOF
agent_lost_timeout = 1h
log_level = info
scheduler_interval = 1h
EOF
        TESSERA_ADMIN_ACCESS_KEY=$AK TESSERA_ADMIN_SECRET_KEY=$SK TESSERA_ADMIN_PASSWORD=benchbench \
                "$TESSERA" dev --no-agent --state-dir "$WORK/state-$DB" --listen 127.0.0.1:$PORT ${DBURL:+--database "$DBURL"} \
                --config "$WORK/manager.conf" >"$WORK/manager-$DB.log" 2>&1 &
        MPID=$!
        for _ in $(seq 100); do curl -sf -m 1 "http://127.0.0.1:$PORT/" >/dev/null && return 0; sleep 0.1; done
        echo "the manager did not start:" >&2
        tail -20 "$WORK/manager-$DB.log" >&2
        exit 1
}

stop_manager() {
        kill "$MPID"
        wait "$MPID" 2>/dev/null || true
        MPID=
}

# the heartbeats of the agents: ID<TAB>POST<TAB>/agent/heartbeat<TAB>BODY
agent_lines() {
        local devs
        devs=$(for d in 0 1 2 3 4 5 6 7; do
                [ $d -gt 0 ] && printf ', '
                printf '{"id": "%d", "slot": "SLOT", "capacity": "1", "model": "mock"}' $d
        done)
        awk -v n="$AGENTS" -v ndev="$DEVICE_AGENTS" -v devs="$devs" 'BEGIN {
                for (i = 1; i <= n; i++) {
                        d = devs
                        gsub(/SLOT/, i > n - ndev ? "cuda.device" : "cuda.shares", d)
                        printf "bench-%04d\tPOST\t/agent/heartbeat\t{\"id\": \"bench-%04d\", \"address\": \"10.1.%d.%d:6001\", \"resource_group\": \"default\", \"runtime\": \"none\", \"heartbeat_interval\": 3600, \"available_slots\": {\"cpu\": \"64\", \"mem\": \"512g\"}, \"devices\": [%s]}\n", i, i, i / 250, i % 250, d
                }
        }'
}

# the mix: N<TAB>RESOURCES_JSON for every session, the same every run
session_mix() {
        awk -v n="$SESSIONS" 'BEGIN {
                srand(20261123)
                for (i = 1; i <= n; i++) {
                        r = rand()
                        if (r < 0.40) {          # fractional
                                gpu = sprintf(", \"cuda.shares\": %s", 0.25 * (1 + int(rand() * 4)))
                                cpu = 1 + int(rand() * 4); mem = 2 * (1 + int(rand() * 8))
                        } else if (r < 0.55) {   # whole GPUs as shares
                                g = 1 + int(rand() * 4)
                                gpu = sprintf(", \"cuda.shares\": %d", g); cpu = 4 * g; mem = 32 * g
                        } else if (r < 0.70) {   # whole GPUs as devices
                                g = 1 + int(rand() * 4)
                                gpu = sprintf(", \"cuda.device\": %d", g); cpu = 4 * g; mem = 32 * g
                        } else {                 # CPU only
                                gpu = ""; cpu = 1 + int(rand() * 8); mem = 2 * (1 + int(rand() * 8))
                        }
                        printf "%d\t{\"cpu\": %d, \"mem\": \"%dg\"%s}\n", i, cpu, mem, gpu
                }
        }'
}

# POST /session lines for sched-load from NAME<TAB>RESOURCES lines
create_lines() {
        awk -F '\t' '{ printf "POST\t/session\t{\"name\": \"%s\", \"image\": \"bench/python:3.11\", \"enqueueOnly\": true, \"config\": {\"resources\": %s}}\n", $1, $2 }'
}

# SELECT list copying every column of TABLE from alias A but those named
# in the COL=EXPR arguments
clone_columns() {
        local table=$1 alias=$2 cols c e out= list=
        shift 2
        if [ "$DB" = sqlite ]; then
                cols=$(sql "SELECT name FROM pragma_table_info('$table') ORDER BY cid")
        else
                cols=$(sql "SELECT column_name FROM information_schema.columns WHERE table_name = '$table'
                            AND table_schema = current_schema() ORDER BY ordinal_position")
        fi
        for c in $cols; do
                e=$alias.$c
                for kv in "$@"; do [ "${kv%%=*}" = "$c" ] && e=${kv#*=}; done
                list="$list${list:+, }$c"
                out="$out${out:+, }$e"
        done
        echo "$list|$out"
}

# Sessions 1..N-1 of the mix: one template per distinct shape goes in
# through POST /session (and gets the scheduler's reason like any waiting
# session), then SQL copies the templates' sessions and kernels rows, every
# column as the API wrote it but id, name and the times, and deletes the
# templates.
create_by_clone() {
        local base=$1 last=$2 t0 now_us sel
        t0=$(now)
        session_mix | awk -v last="$last" 'NR <= last' >"$WORK/mix.tsv"
        cut -f2 "$WORK/mix.tsv" | sort -u | awk '{ printf "tmpl-%03d\t%s\n", NR, $0 }' >"$WORK/tmpl.tsv"
        create_lines <"$WORK/tmpl.tsv" | "$LOAD" keypair $AK $SK "$base" >"$WORK/tmpl.curl"
        echo "  $(wc -l <"$WORK/tmpl.tsv") templates, one per shape, via POST /session: $(curl_config "$WORK/tmpl.curl")"
        # N, session id, kernel id, name, template (ids: random version 4 UUIDs)
        awk -F '\t' 'function h(n,  s) { s = ""; while (n-- > 0) s = s sprintf("%x", int(rand() * 16)); return s }
                function uuid() { return h(8) "-" h(4) "-4" h(3) "-" sprintf("%x", 8 + int(rand() * 4)) h(3) "-" h(12) }
                BEGIN { srand(7) }
                NR == FNR { t[$2] = $1; next }
                { printf "%d\t%s\t%s\tsb-%05d\t%s\n", $1, uuid(), uuid(), $1, t[$2] }' \
                "$WORK/tmpl.tsv" "$WORK/mix.tsv" >"$WORK/clone.tsv"
        now_us=$(($(date +%s%N) / 1000))
        sql "CREATE TABLE bench_mix (n BIGINT, id TEXT, kid TEXT, name TEXT, tmpl TEXT)" >/dev/null
        if [ "$DB" = sqlite ]; then
                sqlite3 -cmd ".timeout 10000" -cmd ".mode tabs" "$WORK/state-$DB/tessera.db" ".import $WORK/clone.tsv bench_mix"
        else
                psql -X -q -v ON_ERROR_STOP=1 "$DBURL" -c "\\copy bench_mix FROM '$WORK/clone.tsv'"
        fi
        sel=$(clone_columns sessions t id=m.id name=m.name "created_at=$now_us + m.n" "status_changed_at=$now_us + m.n")
        local ssql="INSERT INTO sessions (${sel%%|*}) SELECT ${sel#*|} FROM bench_mix m JOIN sessions t ON t.name = m.tmpl AND t.access_key = '$AK' AND t.status = 'PENDING'"
        sel=$(clone_columns kernels k id=m.kid session_id=m.id "created_at=$now_us + m.n")
        local ksql="INSERT INTO kernels (${sel%%|*}) SELECT ${sel#*|} FROM bench_mix m JOIN sessions t ON t.name = m.tmpl AND t.access_key = '$AK' AND t.status = 'PENDING' JOIN kernels k ON k.session_id = t.id"
        sql "BEGIN; $ssql; $ksql;
             DELETE FROM kernels WHERE session_id IN (SELECT id FROM sessions WHERE name LIKE 'tmpl-%');
             DELETE FROM sessions WHERE name LIKE 'tmpl-%';
             DROP TABLE bench_mix; COMMIT" >/dev/null
        echo "  copied into sessions 1-$last by SQL, templates deleted, $(elapsed "$t0" "$(now)") s"
}

# Sessions FIRST..LAST of the mix through POST /session, two keep-alive
# clients.  Every enqueue makes the scheduler tick over the whole backlog,
# so with a deep one this is slow (12 minutes for 9,999 on SQLite under
# load on this machine), but it involves no SQL.
create_by_api() {
        local base=$1 first=$2 last=$3 t0 t
        session_mix | sed -n "${first},${last}p" | awk -F '\t' '{ printf "sb-%05d\t%s\n", $1, $2 }' |
                create_lines >"$WORK/create.tsv"
        awk 'NR % 2 == 1' "$WORK/create.tsv" | "$LOAD" keypair $AK $SK "$base" >"$WORK/create1.curl"
        awk 'NR % 2 == 0' "$WORK/create.tsv" | "$LOAD" keypair $AK $SK "$base" >"$WORK/create2.curl"
        t0=$(now)
        curl_config "$WORK/create1.curl" >"$WORK/create1.out" &
        curl_config "$WORK/create2.curl" >"$WORK/create2.out"
        wait $!
        t=$(elapsed "$t0" "$(now)")
        echo "  sessions $first-$last via POST /session (enqueueOnly, 2 keep-alive clients), $((first - 1)) already waiting: $(cat "$WORK/create1.out"); $(cat "$WORK/create2.out"), $t s: $(awk -v n=$((last - first + 1)) -v t="$t" 'BEGIN { printf "%.0f", n / t }') creates/s"
}

# the placement is sound: the checks of the header, on the stored rows
verify() {
        sql "SELECT agent_id, occupied_slots, device_alloc FROM kernels WHERE agent_id IS NOT NULL
             AND status IN ('SCHEDULED', 'PREPARING', 'PULLING', 'CREATING', 'RUNNING', 'TERMINATING')" >"$WORK/kernels.tsv"
        sql "SELECT id, available_slots, devices, occupied_slots FROM agents WHERE status = 'ALIVE'" >"$WORK/agents.tsv"
        jq -n -r --rawfile k "$WORK/kernels.tsv" --rawfile a "$WORK/agents.tsv" '
                # slot amounts in hundredths (the cuda.shares quantum), exact in a double
                def units: with_entries(.value |= ((tonumber * 100) | round));
                def rows($t): $t | split("\n") | map(select(length > 0) | split("\t"));
                def gpu: (.["cuda.shares"] // .["cuda.device"] // 0);
                (rows($k) | map({agent: .[0], occ: (.[1] | fromjson | units), dev: (.[2] | fromjson | units)})) as $ks
                | (rows($a) | map({key: .[0], value: {avail: (.[1] | fromjson | units),
                        cap: (.[2] | fromjson | map({key: .id, value: (.capacity | tonumber * 100 | round)}) | from_entries),
                        stored: (.[3] | fromjson | units)}}) | from_entries) as $ag
                | ($ks | group_by(.agent) | map({agent: .[0].agent,
                        used: (map(.occ | to_entries[]) | group_by(.key) | map({key: .[0].key, value: (map(.value) | add)}) | from_entries),
                        dev: (map(.dev | to_entries[]) | group_by(.key) | map({key: .[0].key, value: (map(.value) | add)}) | from_entries)})) as $use
                | [ ($ks[] | select((.dev | to_entries | map(.value) | add // 0) != (.occ | gpu))
                        | "kernel on \(.agent): device_alloc \(.dev) does not add up to \(.occ)"),
                    ($use[] | . as $u | $ag[$u.agent] as $x
                        | (($u.used | to_entries[] | select(.value > ($x.avail[.key] // 0))
                                | "agent \($u.agent): \(.key) \(.value / 100) used of \(($x.avail[.key] // 0) / 100)"),
                           ($u.dev | to_entries[] | select(.value > ($x.cap[.key] // 0))
                                | "agent \($u.agent): GPU \(.key) \(.value / 100) used of \(($x.cap[.key] // 0) / 100)"),
                           (select(($u.used | with_entries(select(.value != 0))) != ($x.stored | with_entries(select(.value != 0))))
                                | "agent \($u.agent): stored occupied_slots \($x.stored) but its kernels use \($u.used)"))) ] as $bad
                | ($use | map(.used.cpu // 0) | add // 0) as $cpu
                | ($ag | to_entries | map(.value.avail.cpu // 0) | add) as $cpucap
                | ($use | map(.used | gpu) | add // 0) as $g
                | ($ag | to_entries | map(.value.avail | gpu) | add) as $gcap
                | if ($bad | length) > 0 then ($bad[:20][] | "OVER-COMMITTED: " + .), "FAILED"
                  else "verified: \($ks | length) kernels on \($use | length) of \($ag | length) agents, none over-committed (agents, GPU devices, stored occupancy); cluster use: CPU \($cpu * 100 / $cpucap | floor) %, GPU \($g * 100 / $gcap | floor) %"
                  end'
}

bench_one() {
        local t0 t1 n=0 placed_ms placed_n rate
        echo "## $DB"
        if [ "$DB" = postgresql ]; then
                PGDIR=$WORK/pg
                DBURL=$(scripts/pg-test.sh start "$PGDIR")
        else
                DBURL=
        fi
        start_manager
        signed PATCH /admin/keypairs/$AK '{"rate_limit": 0}' >/dev/null
        local policy
        policy=$(signed GET /admin/keypairs/$AK | jq -r '.resource_policy // .item.resource_policy // "default"')
        signed PATCH "/admin/keypair-policies/$policy" '{"max_concurrent_sessions": 1000000}' >/dev/null
        signed POST /admin/images '{"name": "bench/python", "tag": "3.11"}' >/dev/null

        local base=http://127.0.0.1:$PORT
        t0=$(now)
        agent_lines | "$LOAD" agent "$WORK/state-$DB/cluster.secret" "$base" >"$WORK/agents.curl"
        echo "register $AGENTS agents ($((AGENTS - DEVICE_AGENTS)) x 8 cuda.shares GPUs of 1 fGPU, $DEVICE_AGENTS x 8 cuda.device GPUs; 64 CPUs, 512 GiB each) via POST /agent/heartbeat: $(curl_config "$WORK/agents.curl"), $(elapsed "$t0" "$(now)") s"

        t0=$(now)
        seq -f $'PATCH\t/admin/agents/bench-%04g\t{"schedulable": false}' 1 "$AGENTS" |
                "$LOAD" keypair $AK $SK "$base" >"$WORK/unsched.curl"
        echo "mark them non-schedulable via PATCH /admin/agents/{id}: $(curl_config "$WORK/unsched.curl"), $(elapsed "$t0" "$(now)") s"

        echo "create $((SESSIONS - 1)) PENDING sessions (method: $CREATE):"
        if [ "$CREATE" = clone ]; then
                create_by_clone "$base" $((SESSIONS - 1 - API_TAIL))
                create_by_api "$base" $((SESSIONS - API_TAIL)) $((SESSIONS - 1))
        else
                create_by_api "$base" 1 $((SESSIONS - 1))
        fi
        session_mix | tail -n 1 | awk -F '\t' '{ printf "sb-%05d\t%s\n", $1, $2 }' | create_lines |
                "$LOAD" keypair $AK $SK "$base" >"$WORK/trigger.curl"
        # what autovacuum does within a minute of such a change: the
        # planner's statistics (they decide, e.g., whether PostgreSQL JITs
        # the snapshot's queries)
        [ "$DB" = postgresql ] && sql "ANALYZE" >/dev/null
        echo "  pending: $(sql "SELECT count(*) FROM sessions WHERE status = 'PENDING'"), scheduled: $(sql "SELECT count(*) FROM sessions WHERE status = 'SCHEDULED'")"
        if grep -q "scheduler: placed" "$WORK/manager-$DB.log"; then
                echo "the scheduler placed sessions before the measurement; giving up" >&2
                exit 1
        fi

        sql "UPDATE agents SET schedulable = 1 WHERE id LIKE 'bench-%'" >/dev/null
        t0=$(now)
        echo "  trigger: POST /session of the last one: $(curl_config "$WORK/trigger.curl")"
        local deadline=$((SECONDS + ${BENCH_WAIT:-120}))
        local prev=-1 still=0
        while [ $SECONDS -lt $deadline ]; do
                n=$(sql "SELECT count(*) FROM sessions WHERE status = 'SCHEDULED'")
                [ "$n" -ge "$SESSIONS" ] && break
                # some placed and no more for 5 s: the rest do not fit
                if [ "$n" -gt 0 ] && [ "$n" -eq "$prev" ]; then
                        [ $((SECONDS - still)) -ge 5 ] && break
                else
                        still=$SECONDS
                        t1=$(now)
                fi
                prev=$n
                sleep 0.02
        done
        [ "$n" -ge "$SESSIONS" ] && t1=$(now)
        sleep 0.5 # the tick logs after publishing its events
        local wall
        wall=$(elapsed "$t0" "$t1")
        rate=$(awk -v n="$n" -v t="$wall" 'BEGIN { printf "%.0f", n / t }')
        echo "one enqueue event -> $n of $SESSIONS SCHEDULED in $wall s wall (polled): $rate placements/s"
        grep "scheduler: placed" "$WORK/manager-$DB.log" | sed 's/^/  manager: /' || true
        if [ "$n" -lt "$SESSIONS" ]; then
                echo "  NOT ALL PLACED; the manager's log says:"
                grep -E "scheduler|error|warn" "$WORK/manager-$DB.log" | tail -5 | sed 's/^/  manager: /'
        fi
        read -r placed_n placed_ms < <(awk '/scheduler: placed/ { for (i = 1; i <= NF; i++) { if ($i == "placed") n += $(i + 1); if ($i == "ms") ms += $(i - 1) } }
                END { print n + 0, ms + 0 }' "$WORK/manager-$DB.log")
        local tick_rate
        tick_rate=$(awk -v n="$placed_n" -v ms="$placed_ms" 'BEGIN { if (ms > 0) printf "%.0f", n * 1000 / ms; else print 0 }')
        echo "  the manager's own tick time: $placed_n placed in $placed_ms ms: $tick_rate placements/s"
        echo "  target >= 5000/s: $([ "$rate" -ge 5000 ] && echo met || echo MISSED) (wall)"
        echo "  ratio (wall) to Nomad 3750/s: $(ratio "$rate" 3750), kube-scheduler 810/s: $(ratio "$rate" 810) (180/s with extended resources: $(ratio "$rate" 180)), Slurm 500/s: $(ratio "$rate" 500)"
        verify
        grep -iE "error|warn" "$WORK/manager-$DB.log" | head -5 | sed 's/^/  manager log: /' || true
        echo "summary $DB: sessions=$n wall_s=$wall wall_rate=$rate tick_ms=$placed_ms tick_rate=$tick_rate"
        stop_manager
        if [ -n "$PGDIR" ]; then
                scripts/pg-test.sh stop "$PGDIR" >/dev/null
                PGDIR=
        fi
}

echo "# Tessera scheduler throughput, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# $AGENTS agents x 8 GPUs, $SESSIONS pending mixed sessions; target >= 5000 placements/s"
for DB in "${DBS[@]}"; do
        case $DB in
        sqlite | postgresql) bench_one ;;
        *) echo "usage: $0 [sqlite|postgresql ...]" >&2; exit 2 ;;
        esac
done
