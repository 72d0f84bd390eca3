#!/bin/bash
test_description='the manager starts, answers, keeps its admin credentials and handles signals'
. "$(dirname "$0")/../lib/test-lib.sh"

test_expect_success 'the manager starts' '
        start_manager
'

test_expect_success 'GET / answers the API version as JSON: the one Backend.AI'"'"'s clients negotiate to' '
        http GET / &&
        test "$HTTP_STATUS" = 200 &&
        test "$HTTP_TYPE" = application/json &&
        grep -q "\"version\":\"v8.20240315\"" "$HTTP_BODY"
'

test_expect_success 'a Backend.AI client is told its own release'"'"'s API version, so that none warns (23.09 speaks v7, 22.03 v6)' '
        for ua in "22.03.2 v6.20220315" "22.09.1 v6.20220315" "23.09.11 v7.20230615" "24.03.11 v8.20240315" \
                "25.6.0 v8.20240315" "21.09.0 v6.20220315"; do
                set -- $ua &&
                curl -s -A "Backend.AI Client for Python $1" "$BACKEND_ENDPOINT/" >"$TMP/ver" &&
                jq -e ".version == \"$2\"" "$TMP/ver" || { echo "$1: $(cat "$TMP/ver")"; return 1; }
        done &&
        curl -s -A "curl/7.88" "$BACKEND_ENDPOINT/" | jq -e ".version == \"v8.20240315\""
'

test_expect_success 'an unsigned request is refused with a problem+json 401' '
        http GET /session/x &&
        test "$HTTP_STATUS" = 401 &&
        test "$HTTP_TYPE" = application/problem+json &&
        grep -q "\"status\":401" "$HTTP_BODY" &&
        grep -q "\"title\":" "$HTTP_BODY"
'

test_expect_success 'a wrong signature is refused too' '
        http GET /session/x \
                -H "Date: $(date -u +%Y-%m-%dT%H:%M:%S+00:00)" \
                -H "X-BackendAI-Version: v9.20250722" \
                -H "Authorization: BackendAI signMethod=HMAC-SHA256, credential=$BACKEND_ACCESS_KEY:0000" &&
        test "$HTTP_STATUS" = 401 &&
        test "$HTTP_TYPE" = application/problem+json
'

test_expect_success 'given admin credentials, no admin-credentials file is written' '
        test -d "$MANAGER_STATE" &&
        test ! -e "$MANAGER_STATE/admin-credentials"
'

test_expect_success 'SIGTERM makes the manager exit 0 within a few seconds' '
        start=$(date +%s) &&
        stop_manager TERM &&
        test "$MANAGER_EXIT" = 0 &&
        test $(($(date +%s) - start)) -le 5
'

test_expect_success 'without TESSERA_ADMIN_*, a fresh state dir gets admin-credentials (0600)' '
        MANAGER_STATE=$TMP/generated MANAGER_DB=generated start_manager --no-admin-env &&
        creds=$TMP/generated/admin-credentials &&
        test -f "$creds" &&
        test "$(stat -c %a "$creds")" = 600 &&
        grep -Eq "^BACKEND_ACCESS_KEY=AKIA[A-Z0-9]{16}$" "$creds" &&
        grep -Eq "^BACKEND_SECRET_KEY=[A-Za-z0-9]{40}$" "$creds" &&
        grep -q "^BACKEND_ENDPOINT=http://127.0.0.1:" "$creds" &&
        test "$BACKEND_ACCESS_KEY" = "$(sed -n "s/^BACKEND_ACCESS_KEY=//p" "$creds")" &&
        cp "$creds" "$TMP/creds.first"
'

test_expect_success 'a restart does not create new credentials' '
        stop_manager &&
        MANAGER_STATE=$TMP/generated MANAGER_DB=generated start_manager --no-admin-env &&
        test_cmp "$TMP/creds.first" "$TMP/generated/admin-credentials" &&
        test "$(grep -c "shown once" "$MANAGER_LOG")" = 1 &&
        stop_manager
'

cat >"$TMP/tessera.conf" <<CONF
# a config file for the reload tests
log_level = info
audit_reads = false
CONF

test_expect_success 'the manager starts with a config file' '
        start_manager --config "$TMP/tessera.conf"
'

test_expect_success 'SIGHUP reloads the config file and keeps the manager running' '
        printf "log_level = debug\naudit_reads = true\n" >"$TMP/tessera.conf" &&
        kill -HUP "$MANAGER_PID" &&
        for i in $(seq 1 50); do grep -q "reloaded" "$MANAGER_LOG" && break; sleep 0.1; done &&
        grep -q "reloaded" "$MANAGER_LOG" &&
        kill -0 "$MANAGER_PID" &&
        http GET / &&
        test "$HTTP_STATUS" = 200 &&
        # audit_reads took effect: a read is in the audit log now
        tessera_api GET /auth/role >/dev/null &&
        tessera_api GET "/admin/audit-log?action=GET%20/auth/role" | grep -q "\"action\":\"GET /auth/role\""
'

test_expect_success 'SIGHUP with a broken config file keeps the running configuration' '
        echo "no_such_option = 1" >"$TMP/tessera.conf" &&
        kill -HUP "$MANAGER_PID" &&
        for i in $(seq 1 50); do grep -q "keeping the running configuration" "$MANAGER_LOG" && break; sleep 0.1; done &&
        grep -q "no_such_option" "$MANAGER_LOG" &&
        kill -0 "$MANAGER_PID" &&
        http GET / &&
        test "$HTTP_STATUS" = 200
'

test_expect_success 'SIGINT stops it cleanly too' '
        stop_manager INT &&
        test "$MANAGER_EXIT" = 0
'

test_expect_success 'a bad option in the config file stops the start with file:line' '
        printf "# comment\nlisten_port = 80\n" >"$TMP/bad.conf" &&
        test_must_fail "$TESSERA" dev --state-dir "$TMP/bad-state" --config "$TMP/bad.conf" 2>"$TMP/err" &&
        grep -q "bad.conf:2" "$TMP/err" &&
        grep -q "listen_port" "$TMP/err"
'

test_expect_success 'a relative --state-dir works (make run uses ./tessera-data): folders live under its absolute path' '
        port=$(test_free_port) &&
        { (cd "$TMP" && exec "$TESSERA" dev --state-dir rel-state --listen 127.0.0.1:$port --no-agent \
                </dev/null >"$TMP/rel.log" 2>&1) & } &&
        pid=$! &&
        for _ in $(seq 1 300); do curl -sf -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.1; done &&
        { curl -sf "http://127.0.0.1:$port/" >/dev/null || { cat "$TMP/rel.log" >&2; false; }; } &&
        test -d "$TMP/rel-state/vfolders" &&
        kill $pid && wait $pid
'

test_done
