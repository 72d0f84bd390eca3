#!/bin/bash
test_description='the manager survives its database failing: PostgreSQL stopped then started, SQLite locked by another process, a full disk under the state directory'
. "$(dirname "$0")/../lib/test-lib.sh"

command -v jq >/dev/null || skip_all 'needs jq'

# req METHOD PATH [BODY]: a signed request; CODE gets the status, RETRY the
# Retry-After header (empty if none), $REQ.out the answer ($REQ.headers
# its headers; REQ defaults to $TMP/req).
req() {
        local ct=text/plain h=() f=${REQ:-$TMP/req}
        [ -n "${3:-}" ] && ct=application/json
        while IFS= read -r l; do h+=(-H "$l"); done < <("$BUILD/test-tool" sign "$1" "$2" \
                "${BACKEND_ENDPOINT#http://}" "$BACKEND_ACCESS_KEY" "$BACKEND_SECRET_KEY" "$ct")
        CODE=$(curl -s -m 30 -X "$1" -D "$f.headers" -o "$f.out" -w '%{http_code}' "${h[@]}" \
                ${3:+--data "$3"} "$BACKEND_ENDPOINT$2") || true
        RETRY=$(tr -d '\r' <"$f.headers" | sed -n 's/^[Rr]etry-[Aa]fter: *//p')
        echo "$1 $2 -> $CODE${RETRY:+ (Retry-After: $RETRY)}: $(head -c 300 "$f.out")"
}

# create_domain NAME: one cheap write
create_domain() {
        req POST /admin/domains "{\"name\": \"$1\"}"
}

manager_alive() {
        [ -n "$MANAGER_PID" ] && [ ! -e "$MANAGER_EXIT_FILE" ] && kill -0 "$MANAGER_PID" 2>/dev/null
}

# ---- PostgreSQL: stopped for 20 s under a writer, then started again ----

# (not under $TMP: the server runs as user postgres, who may not enter it)
PG_DIR=
PG_BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -rV | head -n 1)

pg_ctl_() {
        if [ "$(id -u)" -eq 0 ]; then
                runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$PG_DIR/data" "$@"
        else
                "$PG_BIN/pg_ctl" -D "$PG_DIR/data" "$@"
        fi
}

# the server as scripts/pg-test.sh starts it (Unix socket in $PG_DIR only)
# but with synchronous_commit on: an immediate shutdown is a crash, which
# loses the last commits acknowledged under synchronous_commit=off
pg_start() {
        pg_ctl_ -l "$PG_DIR/server.log" -w -t 60 -o "-c listen_addresses='' -k '$PG_DIR' -c fsync=off" start >/dev/null
}

pg_sql() {
        psql -X -q -t -A -v ON_ERROR_STOP=1 "$PG_URL" -c "$1"
}

# The writer: creates domains w-1, w-2, ... one after the other until
# $TMP/writer.stop exists; one line per answer in $TMP/writes:
# "N STATUS RETRY-AFTER KIND".
writer() {
        local i=0 kind REQ=$TMP/writer
        while [ ! -e "$TMP/writer.stop" ]; do
                i=$((i + 1))
                create_domain "w-$i" >/dev/null 2>&1
                kind=$(jq -r '.type // "-"' "$REQ.out" 2>/dev/null | sed 's|.*/||')
                echo "$i ${CODE:-000} ${RETRY:--} ${kind:--}" >>"$TMP/writes"
                sleep 0.05
        done
}

# writes_since N: answers after the writer's line N
writes_since() {
        tail -n "+$(($1 + 1))" "$TMP/writes"
}

test_expect_success POSTGRESQL 'a manager on its own PostgreSQL writes' '
        test -n "$PG_BIN" &&
        PG_DIR=$(mktemp -d "${TMPDIR:-/tmp}/tessera-pg.XXXXXX") &&
        test_at_exit "\"$TEST_ROOT/scripts/pg-test.sh\" stop \"$PG_DIR\"" &&
        PG_URL=$("$TEST_ROOT/scripts/pg-test.sh" start "$PG_DIR") &&
        pg_ctl_ -m fast -w stop >/dev/null && pg_start &&
        test "$(pg_sql "SHOW synchronous_commit")" = on &&
        TESSERA_TEST_DB=sqlite start_manager --database "$PG_URL" &&
        FIRST_PID=$MANAGER_PID &&
        create_domain first && test "$CODE" = 201
'

test_expect_success POSTGRESQL 'while PostgreSQL is stopped the manager answers 503 with Retry-After' '
        : >"$TMP/writes" &&
        writer 2>/dev/null &
        WRITER_PID=$! &&
        test_at_exit "touch \"$TMP/writer.stop\"; kill $WRITER_PID" &&
        for _ in $(seq 1 200); do
                test "$(grep -c " 201 " "$TMP/writes")" -ge 5 && break
                sleep 0.1
        done &&
        test "$(grep -c " 201 " "$TMP/writes")" -ge 5 &&
        pg_ctl_ -m fast -w stop >/dev/null &&
        STOPPED_AT=$(wc -l <"$TMP/writes") &&
        STOP_TIME=$(date +%s) &&
        for _ in $(seq 1 300); do
                test "$(writes_since "$STOPPED_AT" | grep -c " 503 ")" -ge 10 && break
                sleep 0.1
        done &&
        writes_since "$STOPPED_AT" | grep " 503 " | head -n 3 &&
        test "$(writes_since "$STOPPED_AT" | grep -c " 503 ")" -ge 10 &&
        req GET /admin/domains &&
        test "$CODE" = 503 && test -n "$RETRY" &&
        jq -e ".type | endswith(\"/service-unavailable\")" "$TMP/req.out" &&
        jq -e ".title | test(\"database is unreachable\")" "$TMP/req.out" &&
        # down for about 20 s in all
        while [ $(($(date +%s) - STOP_TIME)) -lt 20 ]; do sleep 1; done &&
        manager_alive
'

test_expect_success POSTGRESQL 'every answer during the outage was 2xx or 503 with Retry-After, never 500' '
        writes_since "$STOPPED_AT" >"$TMP/outage" &&
        ! grep -v -E " (201 - -|503 [0-9]+ service-unavailable)$" "$TMP/outage"
'

# wait_writes_ok LINE: until the writer has 5 writes acknowledged after LINE
wait_writes_ok() {
        for _ in $(seq 1 600); do
                test "$(writes_since "$1" | grep -c " 201 ")" -ge 5 && return 0
                sleep 0.1
        done
        echo "no 5 writes acknowledged after line $1 of $TMP/writes"
        return 1
}

test_expect_success POSTGRESQL 'PostgreSQL started again: writes succeed without a manager restart' '
        RESTARTED_AT=$(wc -l <"$TMP/writes") &&
        pg_start &&
        wait_writes_ok "$RESTARTED_AT" &&
        manager_alive && test "$MANAGER_PID" = "$FIRST_PID"
'

test_expect_success POSTGRESQL 'PostgreSQL killed (immediate shutdown) and started again: 503 meanwhile, then writes' '
        KILLED_AT=$(wc -l <"$TMP/writes") &&
        pg_ctl_ -m immediate -w stop >/dev/null &&
        for _ in $(seq 1 300); do
                test "$(writes_since "$KILLED_AT" | grep -c " 503 ")" -ge 10 && break
                sleep 0.1
        done &&
        test "$(writes_since "$KILLED_AT" | grep -c " 503 ")" -ge 10 &&
        RESTARTED_AT=$(wc -l <"$TMP/writes") &&
        pg_start &&
        wait_writes_ok "$RESTARTED_AT" &&
        touch "$TMP/writer.stop" && wait $WRITER_PID &&
        manager_alive && test "$MANAGER_PID" = "$FIRST_PID" &&
        create_domain after && test "$CODE" = 201 &&
        writes_since "$KILLED_AT" >"$TMP/outage2" &&
        ! grep -v -E " (201 - -|503 [0-9]+ service-unavailable)$" "$TMP/outage2"
'

test_expect_success POSTGRESQL 'every acknowledged write is in the database' '
        awk "\$2 == 201 { print \"w-\" \$1 }" "$TMP/writes" | sort >"$TMP/acked" &&
        test -s "$TMP/acked" &&
        pg_sql "SELECT name FROM domains WHERE name LIKE '\''w-%'\''" | sort >"$TMP/stored" &&
        comm -23 "$TMP/acked" "$TMP/stored" >"$TMP/lost" &&
        test_cmp /dev/null "$TMP/lost"
'

test_expect_success POSTGRESQL 'each outage is logged once, not at every request' '
        grep "database unavailable" "$MANAGER_LOG" &&
        test "$(grep -c "database unavailable" "$MANAGER_LOG")" = 2 &&
        test "$(grep -c "database available again" "$MANAGER_LOG")" = 2 &&
        ! grep -E "POST /admin/domains" "$MANAGER_LOG"
'

test_expect_success POSTGRESQL 'a manager started while PostgreSQL is down waits for it (database_wait) and then serves' '
        stop_manager &&
        pg_ctl_ -m fast -w stop >/dev/null &&
        { (sleep 4; pg_start) & } &&
        PG_STARTING=$! &&
        TESSERA_TEST_DB=sqlite start_manager --database "$PG_URL" &&
        wait $PG_STARTING &&
        grep -q "waiting for it (database_wait)" "$MANAGER_LOG" &&
        create_domain after-start && test "$CODE" = 201
'

test_expect_success POSTGRESQL 'a database that will never answer as configured is an error at once, not a wait' '
        stop_manager &&
        test_must_fail timeout 20 "$TESSERA" dev --no-agent --state-dir "$TMP/wrong" --listen 127.0.0.1:0 \
                --database "${PG_URL%%\?*}_nosuchdb?${PG_URL#*\?}" >"$TMP/wrong.log" 2>&1 &&
        cat "$TMP/wrong.log" &&
        grep -q "does not exist" "$TMP/wrong.log" &&
        ! grep -q "database_wait" "$TMP/wrong.log"
'

# ---- SQLite: another process holds the write lock ----

# lock_db: another sqlite3 holds the database's write lock until unlock_db
lock_db() {
        rm -f "$TMP/lock.fifo" "$TMP/lock.out" &&
        mkfifo "$TMP/lock.fifo" &&
        { sqlite3 "$MANAGER_STATE/tessera.db" <"$TMP/lock.fifo" >"$TMP/lock.out" 2>&1 & } &&
        LOCK_PID=$! &&
        test_at_exit "kill $LOCK_PID" &&
        exec 7>"$TMP/lock.fifo" &&
        echo "BEGIN EXCLUSIVE; SELECT 'locked';" >&7 &&
        for _ in $(seq 1 100); do
                grep -q locked "$TMP/lock.out" && break
                sleep 0.1
        done &&
        grep -qx locked "$TMP/lock.out"
}

unlock_db() {
        echo "COMMIT; SELECT 'released';" >&7 &&
        for _ in $(seq 1 100); do
                grep -q released "$TMP/lock.out" && break
                sleep 0.1
        done &&
        grep -qx released "$TMP/lock.out" &&
        echo ".quit" >&7 &&
        exec 7>&-
}

test_expect_success SQLITE 'SQLite locked by another process: writes get 503 with Retry-After, reads work' '
        start_manager &&
        create_domain before-lock && test "$CODE" = 201 &&
        lock_db &&
        create_domain during-lock &&
        test "$CODE" = 503 && test -n "$RETRY" &&
        jq -e ".type | endswith(\"/service-unavailable\")" "$TMP/req.out" &&
        jq -e ".title | test(\"locked by another process\")" "$TMP/req.out" &&
        create_domain during-lock-2 && test "$CODE" = 503 &&
        req GET /admin/domains && test "$CODE" = 200 &&
        jq -e "[.items[]?.name // .[]?.name] | index(\"before-lock\")" "$TMP/req.out" >/dev/null &&
        manager_alive
'

test_expect_success SQLITE 'the lock released: writes succeed again' '
        unlock_db &&
        for _ in $(seq 1 50); do
                create_domain after-lock && test "$CODE" = 201 && break
                sleep 0.2
        done &&
        test "$CODE" = 201 &&
        sqlite3 "$MANAGER_STATE/tessera.db" "SELECT name FROM domains WHERE name LIKE '\''during-lock%'\''" >"$TMP/refused" &&
        test_cmp /dev/null "$TMP/refused" &&
        stop_manager
'

# ---- SQLite: the state directory's disk fills up ----

SMALL=$TMP/small

test_expect_success SQLITE,ROOT 'a full disk under the state directory: writes get 507, reads work' '
        mkdir -p "$SMALL" &&
        mount -t tmpfs -o size=24m tmpfs "$SMALL" &&
        test_at_exit "stop_manager; umount \"$SMALL\" || umount -l \"$SMALL\"" &&
        MANAGER_STATE=$SMALL/state &&
        start_manager &&
        create_domain before-full && test "$CODE" = 201 &&
        # no room kept in the write-ahead log: every write must grow a file
        sqlite3 "$MANAGER_STATE/tessera.db" "PRAGMA wal_checkpoint(TRUNCATE)" &&
        { dd if=/dev/zero of="$SMALL/filler" bs=64k 2>/dev/null || true; } &&
        test "$(df --output=avail "$SMALL" | tail -n 1)" -eq 0 &&
        create_domain during-full &&
        test "$CODE" = 507 &&
        jq -e ".type | endswith(\"/insufficient-storage\")" "$TMP/req.out" &&
        jq -e ".title | test(\"disk is full\")" "$TMP/req.out" &&
        create_domain during-full-2 && test "$CODE" = 507 &&
        req GET /admin/domains && test "$CODE" = 200 &&
        jq -e "[.items[]?.name // .[]?.name] | index(\"before-full\")" "$TMP/req.out" >/dev/null &&
        manager_alive
'

test_expect_success SQLITE,ROOT 'space freed: writes succeed by themselves, the database is intact' '
        rm -f "$SMALL/filler" &&
        for _ in $(seq 1 50); do
                create_domain after-full && test "$CODE" = 201 && break
                sleep 0.2
        done &&
        test "$CODE" = 201 &&
        test "$(sqlite3 "$MANAGER_STATE/tessera.db" "PRAGMA integrity_check")" = ok &&
        # the writes answered 507 did not happen
        sqlite3 "$MANAGER_STATE/tessera.db" "SELECT name FROM domains WHERE name LIKE '\''%-full%'\'' ORDER BY name" \
                >"$TMP/stored" &&
        printf "after-full\nbefore-full\n" >"$TMP/expected" &&
        test_cmp "$TMP/expected" "$TMP/stored" &&
        grep "database unavailable for writes" "$MANAGER_LOG" &&
        grep "database available again" "$MANAGER_LOG"
'

test_done
