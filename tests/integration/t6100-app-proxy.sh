#!/bin/bash
test_description='the app proxy: start-service gives the owner a short-lived link to Jupyter in a session; through the link (then its cookie) the notebook answers and runs a cell over its WebSocket; others, wrong and expired tokens are refused; after a manager and an agent restart the same cookie reaches the same running Jupyter'
. "$(dirname "$0")/../lib/test-lib.sh"
. "$(dirname "$0")/../lib/registry.sh"

test_with_containers
command -v jq >/dev/null 2>&1 || skip_all "needs jq (scripts/install-deps.sh test)"
command -v python3 >/dev/null 2>&1 || skip_all "needs python3 (scripts/install-deps.sh test)"
CONF=$MANAGER_STATE/agent.conf
# the jupyter test image: images/jupyter.recipe built by debootstrap (minutes, then cached)
test_image jupyter >"$TMP/image.out" 2>"$TMP/image.log" ||
        skip_all "the jupyter test image cannot be built (is the Debian archive reachable?): $(tail -n 2 "$TMP/image.log" | tr '\n' ' ')"

AC="python3 $TEST_ROOT/tests/lib/app-client.py"
declare -A AK SK

as() { # WHO CMD...: CMD signed as WHO
        local who=$1
        shift
        BACKEND_ACCESS_KEY=${AK[$who]} BACKEND_SECRET_KEY=${SK[$who]} "$@"
}

make_user() { # WHO
        api POST /admin/users "{\"email\": \"$1@apps.test\", \"password\": \"apps-password-1\", \"role\": \"user\", \"projects\": [\"default\"]}"
        [ "$CODE" = 201 ] || { cat "$TMP/out"; return 1; }
        AK[$1]=$(jq -r "[.. | objects | .access_key? // empty][0]" "$TMP/out")
        SK[$1]=$(jq -r "[.. | objects | .secret_key? // empty][0]" "$TMP/out")
}

# start_service: the owner's start-service jupyter; TOKEN, URL, APP (the
# app's prefix as a URL)
start_service() {
        as owner api POST /session/notebook/start-service '{"app": "jupyter"}'
        [ "$CODE" = 200 ] || { echo "start-service: $CODE $(cat "$TMP/out")"; return 1; }
        TOKEN=$(jq -r .token "$TMP/out") URL=$(jq -r .url "$TMP/out") APP=$BACKEND_ENDPOINT$(jq -r .path "$TMP/out")
}

# expect_status WANT ACTUAL_OUTPUT_FILE
expect_first_line() {
        test "$(head -n 1 "$2")" = "$1" || { echo "wanted $1, got: $(head -c 400 "$2")"; return 1; }
}

# jupyter_started: when the Jupyter behind the cookie started (api/status)
jupyter_started() {
        $AC "$TMP/jar" request GET "${APP}api/status" >"$TMP/status" && expect_first_line 200 "$TMP/status" &&
                sed 1d "$TMP/status" | jq -r .started
}

test_expect_success 'a session of the jupyter image runs, owned by a user' '
        start_dev_with_image jupyter latest &&
        make_user owner && make_user other &&
        as owner api POST /session "{\"name\": \"notebook\", \"image\": \"jupyter:latest\", \"enqueueOnly\": true,
                \"config\": {\"resources\": {\"cpu\": 1, \"mem\": \"1g\"}}}" &&
        { test "$CODE" = 201 || { echo "create: $CODE $(cat "$TMP/out")"; false; }; } && SID=$(jq -r .sessionId "$TMP/out") &&
        WAIT_TENTHS=1200 as owner wait_status notebook RUNNING
'

test_expect_success 'start-service: only for the owner, and only apps the image declares' '
        as other api POST /session/notebook/start-service "{\"app\": \"jupyter\"}" && test "$CODE" = 404 &&
        as other api POST /session/$SID/start-service "{\"app\": \"jupyter\"}" && test "$CODE" = 404 &&
        as owner api POST /session/notebook/start-service "{\"app\": \"tensorboard\"}" && test "$CODE" = 404 &&
        grep -q "declares no app" "$TMP/out" &&
        as owner api POST /session/notebook/start-service "{\"app\": \"jupyter\", \"port\": 9999}" && test "$CODE" = 400 &&
        as owner api POST /session/notebook/start-service "{}" && test "$CODE" = 400
'

test_expect_success 'start-service jupyter: a token, wsproxy_addr and the URL that opens it' '
        start_service &&
        test ${#TOKEN} = 64 &&
        test "$(jq -r .wsproxy_addr "$TMP/out")" = "$BACKEND_ENDPOINT" &&
        test "$URL" = "$BACKEND_ENDPOINT/apps/_/open?token=$TOKEN" &&
        test "$APP" = "$BACKEND_ENDPOINT/apps/$SID/jupyter/" &&
        test "$(jq -r .expires_in "$TMP/out")" = 300 &&
        ! db_sql "SELECT token_hash FROM app_tokens" | grep -q "$TOKEN"
'

test_expect_success 'without the app cookie, or with a wrong token, the app is refused' '
        $AC "$TMP/nobody" request GET "${APP}api/status" >"$TMP/r" && expect_first_line 403 "$TMP/r" &&
        test_must_fail $AC "$TMP/nobody" websocket "ws://${APP#http://}api/kernels/x/channels" >"$TMP/r" &&
        grep -q " 403 " "$TMP/r" &&
        $AC "$TMP/nobody" open "$BACKEND_ENDPOINT/apps/_/open?token=$(printf %064d 0)" >"$TMP/r" &&
        expect_first_line 403 "$TMP/r" &&
        $AC "$TMP/nobody" open "$BACKEND_ENDPOINT/apps/_/open?token=nope" >"$TMP/r" && expect_first_line 403 "$TMP/r" &&
        $AC "$TMP/nobody" request GET "${APP}api/status" >"$TMP/r" && expect_first_line 403 "$TMP/r"
'

test_expect_success 'the link sets the app cookie (HttpOnly, SameSite=Lax, the app prefix) and leads to the app' '
        $AC "$TMP/jar" headers "$URL" >"$TMP/r" && expect_first_line 302 "$TMP/r" &&
        grep -qi "^Location: /apps/$SID/jupyter/\$" "$TMP/r" &&
        grep -i "^Set-Cookie: tessera_app=" "$TMP/r" >"$TMP/cookie" &&
        grep -q "Path=/apps/$SID/jupyter/;" "$TMP/cookie" && grep -q HttpOnly "$TMP/cookie" &&
        grep -q "SameSite=Lax" "$TMP/cookie" &&
        COOKIE=$(sed -n "s/.*tessera_app=\([0-9a-f]*\);.*/\1/p" "$TMP/cookie") && test ${#COOKIE} = 64 &&
        STARTED=$(jupyter_started) && test -n "$STARTED" && test "$STARTED" != null
'

test_expect_success 'the cookie opens its own session and app only (the manager'"'"'s cookies beside it are no obstacle)' '
        code=$(curl -s -o /dev/null -w "%{http_code}" -H "Cookie: tessera_app=$COOKIE" \
                "$BACKEND_ENDPOINT/apps/$(cat /proc/sys/kernel/random/uuid)/jupyter/api/status") && test "$code" = 403 &&
        code=$(curl -s -o /dev/null -w "%{http_code}" -H "Cookie: tessera_app=$COOKIE" \
                "$BACKEND_ENDPOINT/apps/$SID/jupyterlab/api/status") && test "$code" = 403 &&
        code=$(curl -s -o /dev/null -w "%{http_code}" -H "Cookie: tessera_app=$COOKIE" \
                "$BACKEND_ENDPOINT/apps/$SID/jupyter") && test "$code" = 301 &&
        code=$(curl -s -o "$TMP/api" -w "%{http_code}" -H "Cookie: a=1; tessera_app=$COOKIE; tessera_session=x" \
                "$BACKEND_ENDPOINT/apps/$SID/jupyter/api/status") && test "$code" = 200
'

test_expect_success 'an expired link is refused' '
        start_service &&
        db_sql "UPDATE app_tokens SET expires_at = 1 WHERE kind = '"'"'open'"'"'" &&
        $AC "$TMP/late" request GET "$URL" >"$TMP/r" && expect_first_line 403 "$TMP/r" && grep -q expired "$TMP/r"
'

test_expect_success 'through the proxy the notebook runs a cell over its kernel WebSocket' '
        $AC "$TMP/jar" jupyter-cell "$APP" "import numpy; print(numpy.arange(3).sum())" >"$TMP/cell" &&
        cat "$TMP/cell" &&
        KERNEL=$(sed -n "s/^kernel //p" "$TMP/cell") && test -n "$KERNEL" &&
        sed 1d "$TMP/cell" | grep -qx 3
'

test_expect_success 'uploads stream through: a notebook of 3 MiB saved and read back' '
        python3 -c "import json; print(json.dumps({\"type\": \"file\", \"format\": \"text\", \"content\": \"x\" * (3 << 20)}))" >"$TMP/big.json" &&
        $AC "$TMP/jar" request PUT "${APP}api/contents/big.txt" "@$TMP/big.json" >"$TMP/r" &&
        expect_first_line 201 "$TMP/r" &&
        $AC "$TMP/jar" request GET "${APP}api/contents/big.txt?content=1" >"$TMP/r" && expect_first_line 200 "$TMP/r" &&
        test "$(sed 1d "$TMP/r" | jq -r ".content | length")" = $((3 << 20))
'

test_expect_success 'after a manager restart the same cookie reaches the same Jupyter, its kernel still there' '
        MANAGER_LISTEN_PORT=$MANAGER_PORT WITH_AGENT="--agent-network none" restart_manager &&
        for _ in $(seq 1 100); do
                $AC "$TMP/jar" request GET "${APP}api/kernels" >"$TMP/k" && [ "$(head -n 1 "$TMP/k")" = 200 ] && break
                sleep 0.2
        done &&
        expect_first_line 200 "$TMP/k" && grep -q "$KERNEL" "$TMP/k" &&
        test "$(jupyter_started)" = "$STARTED"
'

test_expect_success 'after kill -9 of the agent and its restart, the same' '
        PID=$(agent_pid "$CONF") && test -n "$PID" && kill -9 "$PID" &&
        for _ in $(seq 1 50); do process_gone "$PID" && break; sleep 0.1; done &&
        $AC "$TMP/jar" request GET "${APP}api/kernels" >"$TMP/k" && expect_first_line 502 "$TMP/k" &&
        start_agent "$CONF" "$TMP/agent.log" &&
        for _ in $(seq 1 100); do
                $AC "$TMP/jar" request GET "${APP}api/kernels" >"$TMP/k" && [ "$(head -n 1 "$TMP/k")" = 200 ] && break
                sleep 0.2
        done &&
        expect_first_line 200 "$TMP/k" && grep -q "$KERNEL" "$TMP/k" &&
        test "$(jupyter_started)" = "$STARTED" &&
        $AC "$TMP/jar" jupyter-cell "$APP" "print(6 * 7)" >"$TMP/cell" && sed 1d "$TMP/cell" | grep -qx 42
'

test_expect_success 'start-service again answers at once: the running Jupyter is not started twice' '
        start_service && test "$(jupyter_started)" = "$STARTED"
'

test_expect_success 'the session ends: its app is gone' '
        as owner api DELETE /session/notebook && test "$CODE" = 200 &&
        as owner wait_status notebook TERMINATED &&
        $AC "$TMP/jar" request GET "${APP}api/status" >"$TMP/r" && expect_first_line 409 "$TMP/r" &&
        as owner api POST /session/notebook/start-service "{\"app\": \"jupyter\"}" && test "$CODE" = 409
'

test_done
