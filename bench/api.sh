#!/bin/bash
# bench/api.sh - manager API benchmarks (not tests: nothing here fails on
# timing).  Prints figures, the issue's targets, and ratios against peers
# run side by side on the same machine in the same run:
#   1. signed GET /session/{name} with keep-alive (wrk -t1 -c32): Tessera
#      vs a minimal static h2o server answering the same bytes (the HTTP
#      ceiling of this machine), target >= 15,000 req/s, p99 <= 10 ms;
#   2. POST /session (enqueueOnly) creates/s on SQLite and PostgreSQL vs the
#      raw database doing one-row INSERT transactions (sqlite3 CLI with the
#      same WAL settings; pgbench), targets >= 2,000/s and >= 1,000/s;
#   3. manager RSS with 10,000 sessions and 1,000 registered agents, target
#      <= 64 MB.
# Server and load generator share the machine's cores; the figures say so.
#
# usage: bench/api.sh [seconds-per-run]   (default 10)
set -euo pipefail
cd "$(dirname "$0")/.."
DUR=${1:-10}
scripts/install-deps.sh test >/dev/null
make -s all build/test-tool >/dev/null
TESSERA=$PWD/build/tessera
TT=$PWD/build/test-tool
WORK=$(mktemp -d /tmp/tessera-bench.XXXXXX)
AK=AKIABENCHBENCHBENCH0
SK=benchbenchbenchbenchbenchbenchbenchbench
PORT=18790
PIDS=()
cleanup() {
        for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
        [ -n "${PGDIR:-}" ] && scripts/pg-test.sh stop "$PGDIR" >/dev/null 2>&1 || true
        rm -rf "$WORK"
}
trap cleanup EXIT

signed() { # METHOD PATH [BODY]
        local ct=text/plain; [ $# -ge 3 ] && ct=application/json
        local h=(); while IFS= read -r l; do h+=(-H "$l"); done < <("$TT" sign "$1" "$2" "127.0.0.1:$PORT" $AK $SK $ct)
        curl -sf -m 10 -X "$1" "${h[@]}" ${3:+--data "$3"} "http://127.0.0.1:$PORT$2"
}

start_manager() { # DB-URL
        TESSERA_ADMIN_ACCESS_KEY=$AK TESSERA_ADMIN_SECRET_KEY=$SK TESSERA_ADMIN_PASSWORD=benchbench \
                "$TESSERA" dev --state-dir "$WORK/state-$1" --listen 127.0.0.1:$PORT ${2:+--database "$2"} \
                --log-level warn >"$WORK/manager-$1.log" 2>&1 &
        MPID=$!
        PIDS+=($MPID)
        for _ in $(seq 100); do curl -sf -m 1 "http://127.0.0.1:$PORT/" >/dev/null && break; sleep 0.1; done
        signed PATCH /admin/keypairs/$AK '{"rate_limit": 0}' >/dev/null
        # on a restart these exist already
        signed POST /admin/images '{"name": "bench/python", "tag": "3.11"}' >/dev/null || true
        signed POST /session '{"name": "bench-get", "image": "bench/python:3.11", "enqueueOnly": true}' >/dev/null || true
}

stop_manager() {
        kill "$MPID"; wait "$MPID" 2>/dev/null || true
}

wrk_get() { # URL-PATH PORT -> "rps p50 p99"
        local h=(); while IFS= read -r l; do h+=(-H "$l"); done < <("$TT" sign GET "$1" "127.0.0.1:$2" $AK $SK text/plain)
        wrk -t1 -c32 -d"${DUR}s" --latency "${h[@]}" "http://127.0.0.1:$2$1" >"$WORK/wrk.out" 2>&1
        awk '/Requests\/sec/ {r=$2} / 50%/ {p50=$2} / 99%/ {p99=$2} /Non-2xx/ {bad=$NF}
             END {printf "%s %s %s %s\n", r, p50, p99, bad+0}' "$WORK/wrk.out"
}

wrk_create() { # PREFIX -> "rps p99 non2xx"
        local h=(); while IFS= read -r l; do h+=(-H "$l"); done < <("$TT" sign POST /session "127.0.0.1:$PORT" $AK $SK)
        BENCH_PREFIX=$1 wrk -t1 -c16 -d"${DUR}s" --latency -s bench/create.lua "${h[@]}" \
                "http://127.0.0.1:$PORT/session" >"$WORK/wrk.out" 2>&1
        awk '/Requests\/sec/ {r=$2} / 99%/ {p99=$2} /Non-2xx/ {bad=$NF} END {printf "%s %s %s\n", r, p99, bad+0}' \
                "$WORK/wrk.out"
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }

echo "# Tessera manager benchmarks, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores; server and load share them"

# 1. signed GET, SQLite
start_manager sqlite
read -r rps p50 p99 bad < <(wrk_get /session/bench-get $PORT)
echo "GET /session/{name} signed, keep-alive, wrk -t1 -c32: $rps req/s, p50 $p50, p99 $p99 (non-2xx: $bad); target >= 15000 req/s, p99 <= 10ms"
if [ -x build/bench/srv_h2o ]; then
        build/bench/srv_h2o 18791 >/dev/null 2>&1 & PIDS+=($!); sleep 0.5
        read -r prps pp50 pp99 _ < <(wrk_get /session/bench-get 18791)
        echo "  peer: minimal h2o server, same answer size: $prps req/s, p99 $pp99; ratio tessera/peer $(ratio "$rps" "$prps")"
fi

# 2a. creates on SQLite
read -r crps cp99 cbad < <(wrk_create sq)
n=$(sqlite3 "$WORK/state-sqlite/tessera.db" "SELECT COUNT(*) FROM sessions")
echo "POST /session enqueueOnly on SQLite, wrk -t1 -c16: $crps creates/s, p99 $cp99 (non-2xx: $cbad; $n sessions stored); target >= 2000/s"
# peer: the same database doing one-row INSERT transactions through the sqlite3 CLI
sqlite3 "$WORK/peer.db" "PRAGMA journal_mode=WAL; CREATE TABLE t(id TEXT PRIMARY KEY, name TEXT, body TEXT);" >/dev/null
t0=$(date +%s.%N)
{ echo "PRAGMA synchronous=NORMAL;"; for i in $(seq 5000); do echo "INSERT INTO t VALUES('$i-$RANDOM', 'n$i', '{\"requested_slots\": {}}');"; done; } |
        sqlite3 "$WORK/peer.db"
t1=$(date +%s.%N)
prate=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.0f", 5000 / (b - a) }')
echo "  peer: sqlite3 CLI, one-row INSERT per transaction, WAL synchronous=NORMAL: $prate rows/s; ratio tessera/peer $(ratio "$crps" "$prate")"

# 3. RSS with 10,000 sessions and 1,000 agents (SQLite)
stop_manager
DB="$WORK/state-sqlite/tessera.db"
sqlite3 "$DB" <<'SQL'
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000)
INSERT INTO agents(id, address, status, resource_group, available_slots, occupied_slots, first_contact, last_heartbeat)
SELECT printf('agent-%04d', i), printf('10.0.%d.%d:6001', i / 250, i % 250), 'ALIVE', 'default',
       '{"cpu":"64","mem":"274877906944","cuda.shares":"8"}', '{}', 0, 0 FROM n;
SQL
have=$(sqlite3 "$DB" "SELECT COUNT(*) FROM sessions")
sqlite3 "$DB" "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $((10000 - have)))
INSERT INTO sessions(id, name, session_type, domain_name, project_id, user_id, access_key, image, resource_group,
  requested_slots, status, status_history, status_changed_at, created_at)
SELECT lower(hex(randomblob(16))), printf('rss-%05d', i), 'interactive', s.domain_name, s.project_id, s.user_id,
  s.access_key, s.image, 'default', '{\"cpu\":\"1\",\"mem\":\"1073741824\"}', 'CANCELLED', '{}', 0, i
FROM n, (SELECT * FROM sessions LIMIT 1) s;"
start_manager sqlite
for _ in $(seq 10); do
        signed GET "/sessions?limit=1000&offset=$((RANDOM % 9000))" >/dev/null
        signed GET "/admin/agents?limit=1000" >/dev/null
done
read -r _ _ _ < <(wrk_get /session/bench-get $PORT)
rss=$(awk '/VmHWM/ {print $2}' /proc/$MPID/status)
echo "manager peak RSS with $(sqlite3 "$DB" "SELECT COUNT(*) FROM sessions") sessions and $(sqlite3 "$DB" "SELECT COUNT(*) FROM agents") agents after listing all of them and a GET load: $((rss / 1024)) MiB ($rss kB); target <= 64 MB"
stop_manager

# 2b. creates on PostgreSQL
PGDIR=$(mktemp -d /tmp/tessera-bench-pg.XXXXXX)
PGURL=$(scripts/pg-test.sh start "$PGDIR" | tail -1)
PGBENCH_URL=$PGURL
start_manager pg "$PGURL"
read -r prps pp99 pbad < <(wrk_create pg)
echo "POST /session enqueueOnly on PostgreSQL, wrk -t1 -c16: $prps creates/s, p99 $pp99 (non-2xx: $pbad); target >= 1000/s"
stop_manager
psql -q "$PGBENCH_URL" -c "CREATE TABLE peer_t(id TEXT PRIMARY KEY, name TEXT, body TEXT)"
echo "INSERT INTO peer_t VALUES (md5(random()::text || clock_timestamp()::text), 'n', '{\"requested_slots\": {}}');" >"$WORK/peer.sql"
pg_rate=$(pgbench -n -c 1 -T "$DUR" -f "$WORK/peer.sql" "$PGBENCH_URL" 2>/dev/null | awk '/^tps/ {printf "%.0f", $3}')
echo "  peer: pgbench, one client, one-row INSERT per transaction on the same server: $pg_rate tps; ratio tessera/peer $(ratio "$prps" "$pg_rate")"
