#!/bin/bash
# bench/manager-restart.sh - how fast the cluster is whole again after a
# manager restart and after an agent's return (a benchmark, not a test:
# nothing here fails on timing).  On SQLite and on PostgreSQL:
#
#   1. `tessera dev --no-agent` (release build) with the defaults that
#      matter here: agent_lost_timeout 1 h, scheduler_interval 5 s;
#   2. three agents (runtime "none": no containers; 400 CPUs each)
#      register through POST /agent/heartbeat, signed with the cluster
#      secret; 1,000 sessions go in through POST /session and are placed
#      on them; POST /agent/events reports each kernel running, so 1,000
#      sessions are RUNNING;
#   3. restart: kill -9 of the manager, then the same command again.
#      Measured from the new process's start: until GET / answers, and
#      until a session created right then is placed (SCHEDULED) — the
#      cluster scheduling again.  Checked: the 1,000 sessions are all still
#      RUNNING and no agent was judged (target: <= 5 s to scheduling);
#   4. return: agent-1 promises a heartbeat every second and goes silent;
#      three seconds later it is UNREACHABLE and its sessions are marked.
#      Measured from its next heartbeat: until the heartbeat is answered
#      (the marks go in its transaction), until no session of it is marked
#      (read from the database), and the POST /agent/sync that gives it its
#      desired state — its sessions reconciled (target: <= 2 s).
#
# usage: bench/manager-restart.sh [sqlite|postgresql ...]   (default: both)
#   BENCH_SESSIONS (1000), BENCH_PORT (18797), BENCH_KEEP=1 keeps the work directory.
set -euo pipefail
cd "$(dirname "$0")/.."
SESSIONS=${BENCH_SESSIONS:-1000}
DBS=("$@")
[ ${#DBS[@]} -gt 0 ] || DBS=(sqlite postgresql)

. bench/lib/manager.sh
AK=AKIARESTARTBENCHBEN0
SK=restartbenchrestartbenchrestartbenchrest
PORT=${BENCH_PORT:-18797}
URL=http://127.0.0.1:$PORT

agent_post() { # ID PATH BODY: the answer's status, the body in $WORK/agent-out
        local h=()
        while IFS= read -r l; do h+=(-H "$l"); done < <("$TT" agent-sign "$WORK/state-$DB/cluster.secret" "$1" POST "$2" "$3")
        curl -s -m 60 -o "$WORK/agent-out" -w '%{http_code}' -X POST "${h[@]}" -H 'Content-Type: application/json' \
                --data "$3" "$URL$2"
}

heartbeat() { # ID INTERVAL
        printf '{"id": "%s", "runtime": "none", "heartbeat_interval": %d, "available_slots": {"cpu": "400", "mem": "4t"}}' \
                "$1" "$2"
}

start_manager() {
        TESSERA_ADMIN_ACCESS_KEY=$AK TESSERA_ADMIN_SECRET_KEY=$SK TESSERA_ADMIN_PASSWORD=benchbench \
                "$TESSERA" dev --no-agent --state-dir "$WORK/state-$DB" --listen 127.0.0.1:$PORT \
                ${DBURL:+--database "$DBURL"} >>"$WORK/manager-$DB.log" 2>&1 &
        MPID=$!
}

wait_answers() {
        for _ in $(seq 600); do curl -sf -m 1 -o /dev/null "$URL/" && return 0; sleep 0.01; done
        tail -20 "$WORK/manager-$DB.log" >&2
        exit 1
}

wait_sql() { # QUERY VALUE [TRIES of 10 ms]
        for _ in $(seq "${3:-6000}"); do [ "$(sql "$1")" = "$2" ] && return 0; sleep 0.01; done
        echo "waited in vain for '$1' = $2 (is $(sql "$1"))" >&2
        exit 1
}

run_db() {
        DB=$1 DBURL=
        if [ "$DB" = postgresql ]; then
                PGDIR=$WORK/pg
                DBURL=$(scripts/pg-test.sh start "$PGDIR")
        fi
        start_manager
        wait_answers
        for a in 1 2 3; do
                [ "$(agent_post agent-$a /agent/heartbeat "$(heartbeat agent-$a 3600)")" = 200 ] || exit 1
        done
        signed_sessions="$(for i in $(seq "$SESSIONS"); do
                printf 'POST\t/session\t{"name": "run-%04d", "image": "bench/python:3.11", "enqueueOnly": true, "config": {"resources": {"cpu": 1, "mem": "1g"}}}\n' "$i"
        done)"
        printf 'PATCH\t/admin/keypair-policies/default\t{"max_concurrent_sessions": 100000}\nPOST\t/admin/images\t{"name": "bench/python", "tag": "3.11"}\n%s\n' "$signed_sessions" |
                "$LOAD" keypair $AK $SK "$URL" >"$WORK/create.curl"
        t0=$(now)
        curl -s -K "$WORK/create.curl" | sort | uniq -c | tr '\n' ' ' >"$WORK/create.codes"
        wait_sql "SELECT count(*) FROM sessions WHERE status = 'SCHEDULED'" "$SESSIONS"
        echo "[$DB] $SESSIONS sessions created and placed on 3 agents in $(elapsed "$t0" "$(now)") s (answers: $(cat "$WORK/create.codes"))"
        # every kernel reported running by its agent
        for a in 1 2 3; do
                sql "SELECT id FROM kernels WHERE agent_id = 'agent-$a'" | awk -v a="agent-$a" '
                        { ev = ev (NR > 1 ? ", " : "") sprintf("{\"seq\": %d, \"kernel\": \"%s\", \"kind\": \"running\", \"container_id\": \"c%d\"}", NR, $1, NR) }
                        END { printf "%s\tPOST\t/agent/events\t{\"id\": \"%s\", \"events\": [%s]}\n", a, a, ev }'
        done | "$LOAD" agent "$WORK/state-$DB/cluster.secret" "$URL" >"$WORK/events.curl"
        curl -s -K "$WORK/events.curl" >/dev/null
        wait_sql "SELECT count(*) FROM sessions WHERE status = 'RUNNING'" "$SESSIONS"

        # 3. restart
        kill -9 "$MPID"
        wait "$MPID" 2>/dev/null || true
        t0=$(now)
        start_manager
        wait_answers
        t1=$(now)
        body='{"name": "after", "image": "bench/python:3.11", "enqueueOnly": true, "config": {"resources": {"cpu": 1, "mem": "1g"}}}'
        printf 'POST\t/session\t%s\n' "$body" | "$LOAD" keypair $AK $SK "$URL" >"$WORK/after.curl"
        curl -s -K "$WORK/after.curl" >/dev/null
        wait_sql "SELECT status FROM sessions WHERE name = 'after'" SCHEDULED 3000
        t2=$(now)
        running=$(sql "SELECT count(*) FROM sessions WHERE status = 'RUNNING'")
        judged=$(grep -c "is UNREACHABLE\|is LOST" "$WORK/manager-$DB.log" || true)
        echo "[$DB] restart with $SESSIONS RUNNING: answering after $(elapsed "$t0" "$t1") s, scheduling again (a new session placed) after $(elapsed "$t0" "$t2") s (target <= 5 s); still RUNNING: $running; agents judged: $judged"

        # 4. return
        [ "$(agent_post agent-1 /agent/heartbeat "$(heartbeat agent-1 1)")" = 200 ] || exit 1
        wait_sql "SELECT status FROM agents WHERE id = 'agent-1'" UNREACHABLE 1000
        mine=$(sql "SELECT count(*) FROM kernels WHERE agent_id = 'agent-1'")
        wait_sql "SELECT count(*) FROM sessions WHERE status_info = 'agent-unreachable'" "$mine" 1000
        t0=$(now)
        code=$(agent_post agent-1 /agent/heartbeat "$(heartbeat agent-1 3600)")
        t1=$(now)
        wait_sql "SELECT count(*) FROM sessions WHERE status_info = 'agent-unreachable'" 0
        t2=$(now)
        code2=$(agent_post agent-1 /agent/sync '{"id": "agent-1"}')
        t3=$(now)
        kernels=$(jq '.kernels | length' "$WORK/agent-out")
        echo "[$DB] agent-1 back with $mine sessions marked unreachable: heartbeat answered ($code) in $(elapsed "$t0" "$t1") s, no session marked after $(elapsed "$t0" "$t2") s, desired state ($code2, $kernels kernels) after $(elapsed "$t0" "$t3") s (target <= 2 s)"

        kill "$MPID"
        wait "$MPID" 2>/dev/null || true
        MPID=
        if [ -n "$PGDIR" ]; then
                scripts/pg-test.sh stop "$PGDIR" >/dev/null
                PGDIR=
        fi
}

for db in "${DBS[@]}"; do
        run_db "$db"
done
