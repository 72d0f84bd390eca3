#!/bin/bash
test_description='the app proxy: apps have an origin of their own (the app listener, listen'"'"'s port + 1 by default, or app_listen), which serves nothing else, and the API'"'"'s origin refuses /apps/; start-service gives its caller a short-lived link to Jupyter in a session, which opens only in a browser logged in to the web UI as that caller (a one-time code bound to the browser), never in another user'"'"'s or a browser merely sent it; through it (then its cookie) the notebook answers and runs a cell over its WebSocket; wrong and expired tokens are refused; a cookie stops working when its user or keypair is deactivated; after a manager and an agent restart the same cookie reaches the same running Jupyter; shutdown-service stops it and ends its cookies; servicePorts lists the image'"'"'s apps'
. "$(dirname "$0")/../lib/test-lib.sh"
. "$(dirname "$0")/../lib/registry.sh"

test_with_containers
command -v jq >/dev/null 2>&1 || skip_all "needs jq (scripts/install-deps.sh test)"
command -v python3 >/dev/null 2>&1 || skip_all "needs python3 (scripts/install-deps.sh test)"
CONF=$MANAGER_STATE/agent.conf
# a deactivated user's sessions run on (terminate_inactive_users), so that
# its app cookie can be tried
printf "terminate_inactive_users = false\n" >"$TMP/manager.conf"
MANAGER_ARGS="--config $TMP/manager.conf"
# the jupyter test image: images/jupyter.recipe built by debootstrap (minutes, then cached)
test_image jupyter >"$TMP/image.out" 2>"$TMP/image.log" ||
        skip_all "the jupyter test image cannot be built (is the Debian archive reachable?): $(tail -n 2 "$TMP/image.log" | tr '\n' ' ')"

AC="python3 $TEST_ROOT/tests/lib/app-client.py"
. "$(dirname "$0")/../lib/app-users.sh"

# start_service [WHO]: WHO's (default owner) start-service jupyter; TOKEN,
# URL, APP (the app's prefix as a URL, at wsproxy_addr)
start_service() {
        as "${1:-owner}" api POST /session/notebook/start-service '{"app": "jupyter"}'
        [ "$CODE" = 200 ] || { echo "start-service: $CODE $(cat "$TMP/out")"; return 1; }
        TOKEN=$(jq -r .token "$TMP/out") URL=$(jq -r .url "$TMP/out")
        APP=$(jq -r .wsproxy_addr "$TMP/out")$(jq -r .path "$TMP/out")
}

# a command for session_run: how many processes of Jupyter (the server
# and its kernels) run in the session
JUPYTER_PROCS='for f in /proc/[0-9]*/cmdline; do tr "\0" " " <"$f"; echo; done 2>/dev/null | grep -c -e "[j]upyter-notebook --no-browser" -e "[i]pykernel_launcher"'

# open_app JAR [URL]: a browser with the web login of JAR follows the link
# (default $URL): its last answer must be the app's (200)
open_app() {
        $AC "$1" follow "${2:-$URL}" >"$TMP/follow" &&
                grep -q "^200 ${APP}" "$TMP/follow" || { echo "open_app: $(head -c 600 "$TMP/follow")"; return 1; }
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
        APPS=http://127.0.0.1:$((MANAGER_PORT + 1)) &&
        make_user owner && make_user other &&
        $AC "$TMP/jar" login "$BACKEND_ENDPOINT" owner@apps.test apps-password-1 | grep -qx 200 &&
        $AC "$TMP/other" login "$BACKEND_ENDPOINT" other@apps.test apps-password-1 | grep -qx 200 &&
        as owner api POST /session "{\"name\": \"notebook\", \"image\": \"jupyter:latest\", \"enqueueOnly\": true,
                \"config\": {\"resources\": {\"cpu\": 1, \"mem\": \"1g\"}}}" &&
        { test "$CODE" = 201 || { echo "create: $CODE $(cat "$TMP/out")"; false; }; } && SID=$(jq -r .sessionId "$TMP/out") &&
        jq -e ".servicePorts == []" "$TMP/out" &&
        WAIT_TENTHS=1200 as owner wait_status notebook RUNNING
'

test_expect_success 'servicePorts: the image'"'"'s apps in the session'"'"'s info and in the answer of a create that finds it running' '
        as owner api GET /session/notebook && test "$CODE" = 200 &&
        jq -e ".servicePorts == [{\"name\": \"jupyter\", \"protocol\": \"http\", \"ports\": [8888], \"container_ports\": [8888]}]" "$TMP/out" &&
        as owner api POST /session "{\"name\": \"notebook\", \"image\": \"jupyter:latest\",
                \"config\": {\"resources\": {\"cpu\": 1, \"mem\": \"1g\"}}}" && test "$CODE" = 200 &&
        jq -e ".created == false and .status == \"RUNNING\" and .servicePorts[0].name == \"jupyter\" and .servicePorts[0].ports == [8888]" "$TMP/out"
'

test_expect_success 'start-service: only for the owner, and only apps the image declares' '
        as other api POST /session/notebook/start-service "{\"app\": \"jupyter\"}" && test "$CODE" = 404 &&
        as other api POST /session/$SID/start-service "{\"app\": \"jupyter\"}" && test "$CODE" = 404 &&
        as owner api POST /session/notebook/start-service "{\"app\": \"tensorboard\"}" && test "$CODE" = 404 &&
        grep -q "declares no app" "$TMP/out" &&
        as owner api POST /session/notebook/start-service "{\"app\": \"jupyter\", \"port\": 9999}" && test "$CODE" = 400 &&
        as owner api POST /session/notebook/start-service "{}" && test "$CODE" = 400
'

test_expect_success 'start-service jupyter: a token, wsproxy_addr (the app port, never the API'"'"'s) and the URL that opens it' '
        start_service &&
        test ${#TOKEN} = 64 &&
        test "$(jq -r .wsproxy_addr "$TMP/out")" = "$APPS" &&
        test "$URL" = "$APPS/apps/_/open?token=$TOKEN" &&
        test "$APP" = "$APPS/apps/$SID/jupyter/" &&
        test "$(jq -r .expires_in "$TMP/out")" = 300 &&
        ! db_sql "SELECT token_hash FROM app_tokens" | grep -q "$TOKEN"
'

test_expect_success 'without the app cookie, or with a wrong token, the app is refused' '
        $AC "$TMP/nobody" request GET "${APP}api/status" >"$TMP/r" && expect_first_line 403 "$TMP/r" &&
        test_must_fail $AC "$TMP/nobody" websocket "ws://${APP#http://}api/kernels/x/channels" >"$TMP/r" &&
        grep -q " 403 " "$TMP/r" &&
        $AC "$TMP/nobody" open "$APPS/apps/_/open?token=$(printf %064d 0)" >"$TMP/r" &&
        expect_first_line 403 "$TMP/r" &&
        $AC "$TMP/nobody" open "$APPS/apps/_/open?token=nope" >"$TMP/r" && expect_first_line 403 "$TMP/r" &&
        $AC "$TMP/nobody" request GET "${APP}api/status" >"$TMP/r" && expect_first_line 403 "$TMP/r"
'

test_expect_success 'the API'"'"'s origin never serves apps: 421, whatever the cookie or token' '
        code=$(curl -s -o "$TMP/r" -w "%{http_code}" "$BACKEND_ENDPOINT/apps/_/open?token=$TOKEN") && test "$code" = 421 &&
        grep -q "never served on the API" "$TMP/r" &&
        code=$(curl -s -o /dev/null -w "%{http_code}" "$BACKEND_ENDPOINT/apps/$SID/jupyter/api/status") &&
        test "$code" = 421 &&
        code=$(curl -s -o /dev/null -w "%{http_code}" -X POST "$BACKEND_ENDPOINT/apps/$SID/jupyter/api/kernels") &&
        test "$code" = 421
'

test_expect_success 'the link in a browser without a web login: the web UI'"'"'s origin asks for one, no app cookie' '
        $AC "$TMP/anon" follow "$URL" >"$TMP/r" &&
        grep -q "^302 $URL\$" "$TMP/r" && grep -q "^401 $BACKEND_ENDPOINT/server/app-login?token=$TOKEN&state=" "$TMP/r" &&
        grep -q "Log in to open this app" "$TMP/r" &&
        ! grep -q tessera_app= "$TMP/anon" &&
        $AC "$TMP/anon" request GET "${APP}api/status" >"$TMP/r" && expect_first_line 403 "$TMP/r"
'

test_expect_success 'the link in another user'"'"'s browser: refused, no app cookie' '
        $AC "$TMP/other" follow "$URL" >"$TMP/r" &&
        grep -q "^403 $BACKEND_ENDPOINT/server/app-login" "$TMP/r" && grep -q "someone else" "$TMP/r" &&
        ! grep -q tessera_app= "$TMP/other" &&
        $AC "$TMP/other" request GET "${APP}api/status" >"$TMP/r" && expect_first_line 403 "$TMP/r"
'

test_expect_success 'the owner'"'"'s code is good once, and only in the browser that asked for it' '
        $AC "$TMP/jar" open "$URL" >"$TMP/r" && expect_first_line 302 "$TMP/r" &&
        LOGIN=$(sed -n 2p "$TMP/r") && case "$LOGIN" in "$BACKEND_ENDPOINT/server/app-login?token=$TOKEN&state="*) ;; *) false ;; esac &&
        $AC "$TMP/jar" open "$LOGIN" >"$TMP/r" && expect_first_line 302 "$TMP/r" &&
        CODE_URL=$(sed -n 2p "$TMP/r") && case "$CODE_URL" in "$APPS/apps/_/open?code="*) ;; *) false ;; esac &&
        $AC "$TMP/other" open "$CODE_URL" >"$TMP/r" && expect_first_line 403 "$TMP/r" &&
        $AC "$TMP/anon" request GET "$CODE_URL" >"$TMP/r" && expect_first_line 403 "$TMP/r" &&
        grep -q "made for another browser" "$TMP/r" &&
        $AC "$TMP/fresh" request GET "$CODE_URL" >"$TMP/r" && expect_first_line 403 "$TMP/r" &&
        grep -q "did not open the app" "$TMP/r" &&
        ! grep -q tessera_app= "$TMP/other" "$TMP/anon" "$TMP/fresh" &&
        $AC "$TMP/jar" open "$LOGIN" >"$TMP/r" && expect_first_line 302 "$TMP/r" && SECOND=$(sed -n 2p "$TMP/r") &&
        $AC "$TMP/jar" open "$SECOND" >"$TMP/r" && expect_first_line 302 "$TMP/r" &&
        $AC "$TMP/jar" open "$SECOND" >"$TMP/r" && expect_first_line 403 "$TMP/r"
'

test_expect_success 'the owner'"'"'s browser: link, login check and code set the app cookie (HttpOnly, SameSite=Lax, the app prefix) and lead to the app' '
        $AC "$TMP/jar" open "$URL" >"$TMP/r" && $AC "$TMP/jar" open "$(sed -n 2p "$TMP/r")" >"$TMP/r" &&
        $AC "$TMP/jar" headers "$(sed -n 2p "$TMP/r")" >"$TMP/r" && expect_first_line 302 "$TMP/r" &&
        grep -qi "^Location: /apps/$SID/jupyter/\$" "$TMP/r" &&
        grep -qi "^Content-Security-Policy: default-src .none.; sandbox" "$TMP/r" &&
        grep -i "^Set-Cookie: tessera_app=" "$TMP/r" >"$TMP/cookie" &&
        grep -q "Path=/apps/$SID/jupyter/;" "$TMP/cookie" && grep -q HttpOnly "$TMP/cookie" &&
        grep -q "SameSite=Lax" "$TMP/cookie" &&
        COOKIE=$(sed -n "s/.*tessera_app=\([0-9a-f]*\);.*/\1/p" "$TMP/cookie") && test ${#COOKIE} = 64 &&
        STARTED=$(jupyter_started) && test -n "$STARTED" && test "$STARTED" != null
'

test_expect_success 'the cookie opens its own session and app only (the manager'"'"'s cookies beside it are no obstacle)' '
        code=$(curl -s -o /dev/null -w "%{http_code}" -H "Cookie: tessera_app=$COOKIE" \
                "$APPS/apps/$(cat /proc/sys/kernel/random/uuid)/jupyter/api/status") && test "$code" = 403 &&
        code=$(curl -s -o /dev/null -w "%{http_code}" -H "Cookie: tessera_app=$COOKIE" \
                "$APPS/apps/$SID/jupyterlab/api/status") && test "$code" = 403 &&
        code=$(curl -s -o /dev/null -w "%{http_code}" -H "Cookie: tessera_app=$COOKIE" \
                "$APPS/apps/$SID/jupyter") && test "$code" = 301 &&
        code=$(curl -s -o "$TMP/api" -w "%{http_code}" -H "Cookie: a=1; tessera_app=$COOKIE; tessera_session=x" \
                "$APPS/apps/$SID/jupyter/api/status") && test "$code" = 200
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

test_expect_success 'an app cookie stops working when its keypair or its user is deactivated, and again with them' '
        $AC "$TMP/jar" request GET "${APP}api/status" >"$TMP/r" && expect_first_line 200 "$TMP/r" &&
        api PATCH "/admin/keypairs/${AK[owner]}" "{\"is_active\": false}" && test "$CODE" = 200 &&
        $AC "$TMP/jar" request GET "${APP}api/status" >"$TMP/r" && expect_first_line 403 "$TMP/r" &&
        grep -q "no longer active" "$TMP/r" &&
        test_must_fail $AC "$TMP/jar" websocket "ws://${APP#http://}api/kernels/x/channels" >"$TMP/r" &&
        api PATCH "/admin/keypairs/${AK[owner]}" "{\"is_active\": true}" && test "$CODE" = 200 &&
        $AC "$TMP/jar" request GET "${APP}api/status" >"$TMP/r" && expect_first_line 200 "$TMP/r" &&
        api PATCH /admin/users/owner@apps.test "{\"status\": \"inactive\"}" && test "$CODE" = 200 &&
        $AC "$TMP/jar" request GET "${APP}api/status" >"$TMP/r" && expect_first_line 403 "$TMP/r" &&
        $AC "$TMP/jar" open "$URL" >"$TMP/r" && expect_first_line 403 "$TMP/r" &&
        api PATCH /admin/users/owner@apps.test "{\"status\": \"active\"}" && test "$CODE" = 200 &&
        $AC "$TMP/jar" request GET "${APP}api/status" >"$TMP/r" && expect_first_line 200 "$TMP/r" &&
        # the deactivation ended the owner'"'"'s web login: it logs in again
        $AC "$TMP/jar" login "$BACKEND_ENDPOINT" owner@apps.test apps-password-1 | grep -qx 200
'

test_expect_success 'an open app WebSocket is cut when the keypair of its cookie is deactivated' '
        { $AC "$TMP/jar" websocket-held "ws://${APP#http://}api/kernels/$KERNEL/channels" 30 >"$TMP/held" 2>&1 & } &&
        H=$! &&
        for _ in $(seq 1 100); do grep -q "^101" "$TMP/held" && break; sleep 0.1; done &&
        grep -q "^101" "$TMP/held" &&
        api PATCH "/admin/keypairs/${AK[owner]}" "{\"is_active\": false}" && test "$CODE" = 200 &&
        { wait $H; held=$?; } &&
        api PATCH "/admin/keypairs/${AK[owner]}" "{\"is_active\": true}" && test "$CODE" = 200 &&
        test $held = 0 && grep -qx closed "$TMP/held" || { cat "$TMP/held"; false; }
'

test_expect_success 'an admin'"'"'s link to the owner'"'"'s app is the admin'"'"'s: the owner'"'"'s login does not open it' '
        api POST /session/$SID/start-service "{\"app\": \"jupyter\"}" && test "$CODE" = 200 &&
        ADMIN_URL=$(jq -r .url "$TMP/out") &&
        $AC "$TMP/other" follow "$ADMIN_URL" >"$TMP/r" && grep -q "^403 $BACKEND_ENDPOINT/server/app-login" "$TMP/r" &&
        cp "$TMP/jar" "$TMP/owner2" && $AC "$TMP/owner2" follow "$ADMIN_URL" >"$TMP/r" &&
        grep -q "^403 $BACKEND_ENDPOINT/server/app-login" "$TMP/r" && grep -q "someone else" "$TMP/r" &&
        $AC "$TMP/admin" login "$BACKEND_ENDPOINT" "$TEST_ADMIN_EMAIL" "$TEST_ADMIN_PASSWORD" | grep -qx 200 &&
        open_app "$TMP/admin" "$ADMIN_URL"
'

test_expect_success 'start-service again answers at once: the running Jupyter is not started twice' '
        start_service && test "$(jupyter_started)" = "$STARTED"
'

test_expect_success 'shutdown-service: only the owner, only apps the image declares' '
        as other api POST /session/notebook/shutdown-service "{\"service_name\": \"jupyter\"}" && test "$CODE" = 404 &&
        as owner api POST /session/notebook/shutdown-service "{\"service_name\": \"tensorboard\"}" && test "$CODE" = 400 &&
        as owner api POST /session/notebook/shutdown-service "{}" && test "$CODE" = 400 &&
        $AC "$TMP/jar" request GET "${APP}api/status" >"$TMP/r" && expect_first_line 200 "$TMP/r"
'

test_expect_success 'shutdown-service jupyter: 204, its cookie and link stop working, the app is gone; again 404' '
        start_service && OLD_URL=$URL &&
        as owner api POST /session/notebook/shutdown-service "{\"service_name\": \"jupyter\"}" &&
        { test "$CODE" = 204 || { echo "shutdown-service: $CODE $(cat "$TMP/out")"; false; }; } &&
        $AC "$TMP/jar" request GET "${APP}api/status" >"$TMP/r" && expect_first_line 403 "$TMP/r" &&
        $AC "$TMP/late" open "$OLD_URL" >"$TMP/r" && expect_first_line 403 "$TMP/r" &&
        test "$(db_sql "SELECT COUNT(*) FROM app_tokens WHERE session_id = '"'"'$SID'"'"'")" = 0 &&
        as owner api POST /session/notebook/shutdown-service "{\"service_name\": \"jupyter\"}" && test "$CODE" = 404 &&
        grep -q "not running" "$TMP/out" &&
        for _ in $(seq 1 25); do
                as owner session_run notebook "$JUPYTER_PROCS" && test "$(cat "$TMP/console")" = 0 && break
                sleep 0.2
        done &&
        test "$(cat "$TMP/console")" = 0
'

test_expect_success 'the CLI starts it again (a new Jupyter) and stops it' '
        as owner "$TESSERA" session app start notebook jupyter >"$TMP/url" 2>"$TMP/cli.err" &&
        URL=$(cat "$TMP/url") && case "$URL" in "$APPS/apps/_/open?token="*) ;; *) false ;; esac &&
        open_app "$TMP/jar" &&
        NEW_STARTED=$(jupyter_started) && test -n "$NEW_STARTED" && test "$NEW_STARTED" != "$STARTED" &&
        $AC "$TMP/jar" jupyter-cell "$APP" "print(6 * 7)" >"$TMP/cell" && sed 1d "$TMP/cell" | grep -qx 42 &&
        as owner "$TESSERA" session app stop notebook jupyter >"$TMP/cli.out" &&
        grep -q "app .jupyter. of session .notebook. stopped" "$TMP/cli.out" &&
        test_must_fail as owner "$TESSERA" session app stop notebook jupyter 2>"$TMP/cli.err" &&
        grep -q "not running" "$TMP/cli.err" &&
        test_must_fail as owner "$TESSERA" session app stop notebook jupyter --port 8888 2>/dev/null
'

test_expect_success 'tcpproxy (backend.ai app): a TCP connection to the app over a WebSocket, the app started on demand' '
        as owner ws_client ws-tcp.py /stream/session/notebook/tcpproxy?app=jupyter \
                "GET /api/status HTTP/1.0\r\nHost: localhost\r\n\r\n" >"$TMP/tcp.out" 2>"$TMP/tcp.err" ||
                { cat "$TMP/tcp.err"; false; } &&
        head -n 1 "$TMP/tcp.out" | grep -q "^HTTP/1.[01] 200" && grep -q "\"started\"" "$TMP/tcp.out" &&
        grep -q "^closed 1000" "$TMP/tcp.err" &&
        as other ws_client ws-tcp.py /stream/session/notebook/tcpproxy?app=jupyter "x" 2>"$TMP/tcp.err" >/dev/null;
        grep -q "404" "$TMP/tcp.err" &&
        as owner api GET "/stream/session/notebook/tcpproxy?app=nosuchapp" && test "$CODE" = 400 &&
        as owner api GET "/stream/session/notebook/tcpproxy?app=jupyter&port=1" && test "$CODE" = 400 &&
        as owner api POST /session/notebook/shutdown-service "{\"service_name\": \"jupyter\"}" && test "$CODE" = 204
'

test_expect_success 'with app_listen: start-service answers a link on the app port' '
        APP_PORT=$(test_free_port) && APPS=http://127.0.0.1:$APP_PORT &&
        MANAGER_LISTEN_PORT=$MANAGER_PORT WITH_AGENT="--agent-network none" restart_manager \
                --app-listen 127.0.0.1:$APP_PORT &&
        start_service &&
        test "$(jq -r .wsproxy_addr "$TMP/out")" = "$APPS" &&
        test "$URL" = "$APPS/apps/_/open?token=$TOKEN" &&
        test "$APP" = "$APPS/apps/$SID/jupyter/"
'

test_expect_success 'with app_listen: the app port opens Jupyter, which runs a cell over its WebSocket there' '
        $AC "$TMP/jar" open "$URL" >"$TMP/r" && $AC "$TMP/jar" open "$(sed -n 2p "$TMP/r")" >"$TMP/r" &&
        $AC "$TMP/jar" headers "$(sed -n 2p "$TMP/r")" >"$TMP/r" && expect_first_line 302 "$TMP/r" &&
        grep -qi "^Location: /apps/$SID/jupyter/\$" "$TMP/r" &&
        grep -i "^Set-Cookie: tessera_app=" "$TMP/r" | grep -q "Path=/apps/$SID/jupyter/;" &&
        ! grep -qi "^Set-Cookie: tessera_session" "$TMP/r" &&
        $AC "$TMP/jar" jupyter-cell "$APP" "import numpy; print(numpy.arange(4).sum())" >"$TMP/cell" &&
        sed 1d "$TMP/cell" | grep -qx 6
'

test_expect_success 'with app_listen: the main port refuses /apps/, the app port everything else' '
        COOKIE=$(sed -n "s/.*tessera_app=\"\{0,1\}\([0-9a-f]*\).*/\1/p" "$TMP/jar" | tail -n 1) && test ${#COOKIE} = 64 &&
        code=$(curl -s -o /dev/null -w "%{http_code}" -H "Cookie: tessera_app=$COOKIE" \
                "$BACKEND_ENDPOINT/apps/$SID/jupyter/api/status") && test "$code" = 421 &&
        code=$(curl -s -o /dev/null -w "%{http_code}" "$BACKEND_ENDPOINT/apps/_/open?token=$TOKEN") && test "$code" = 421 &&
        code=$(curl -s -o /dev/null -w "%{http_code}" -H "Cookie: tessera_app=$COOKIE" "${APP}api/status") &&
        test "$code" = 200 &&
        for path in / /ui/index.js /server/session /openapi.json /metrics /sessions /session/notebook; do
                code=$(curl -s -o /dev/null -w "%{http_code}" "$APPS$path") && test "$code" = 404 || return 1
        done &&
        code=$(curl -s -o /dev/null -w "%{http_code}" -X POST -H "Content-Type: application/json" \
                --data "{\"email\": \"owner@apps.test\", \"password\": \"apps-password-1\"}" "$APPS/server/login") &&
        test "$code" = 404 &&
        BACKEND_ENDPOINT=$APPS as owner api GET /sessions && test "$CODE" = 404 &&
        BACKEND_ENDPOINT=$APPS as owner api POST /session/notebook/start-service "{\"app\": \"jupyter\"}" &&
        test "$CODE" = 404 &&
        as owner api GET /sessions && test "$CODE" = 200
'

test_expect_success 'with app_listen: the web login cookie is worth nothing on the app port' '
        curl -s -D "$TMP/login.h" -o /dev/null -X POST -H "Content-Type: application/json" \
                --data "{\"email\": \"owner@apps.test\", \"password\": \"apps-password-1\"}" "$BACKEND_ENDPOINT/server/login" &&
        WEB=$(sed -n "s/^[Ss]et-[Cc]ookie: tessera_session=\([0-9a-f]*\);.*/\1/p" "$TMP/login.h") && test -n "$WEB" &&
        code=$(curl -s -o /dev/null -w "%{http_code}" -H "Cookie: tessera_session=$WEB" "$BACKEND_ENDPOINT/server/session") &&
        test "$code" = 200 &&
        code=$(curl -s -o /dev/null -w "%{http_code}" -H "Cookie: tessera_session=$WEB" "$APPS/server/session") &&
        test "$code" = 404 &&
        code=$(curl -s -o /dev/null -w "%{http_code}" -H "Cookie: tessera_session=$WEB" "$APPS/sessions") &&
        test "$code" = 404 &&
        code=$(curl -s -o /dev/null -w "%{http_code}" -H "Cookie: tessera_session=$WEB" "$APPS/apps/$SID/jupyter/api/status") &&
        test "$code" = 403 &&
        code=$(curl -s -D "$TMP/app.h" -o /dev/null -w "%{http_code}" -H "Cookie: tessera_session=$WEB; tessera_app=$COOKIE" \
                "${APP}tree") && test "$code" = 200 && ! grep -qi "^Set-Cookie: tessera_session" "$TMP/app.h"
'

test_expect_success 'with app_listen: shutdown-service ends the app and its cookie there too' '
        as owner api POST /session/notebook/shutdown-service "{\"service_name\": \"jupyter\"}" && test "$CODE" = 204 &&
        $AC "$TMP/jar" request GET "${APP}api/status" >"$TMP/r" && expect_first_line 403 "$TMP/r" &&
        start_service && open_app "$TMP/jar"
'

test_expect_success 'the session ends: its app is gone' '
        as owner api DELETE /session/notebook && test "$CODE" = 200 &&
        as owner wait_status notebook TERMINATED &&
        $AC "$TMP/jar" request GET "${APP}api/status" >"$TMP/r" && expect_first_line 409 "$TMP/r" &&
        as owner api POST /session/notebook/start-service "{\"app\": \"jupyter\"}" && test "$CODE" = 409 &&
        as owner api POST /session/notebook/shutdown-service "{\"service_name\": \"jupyter\"}" && test "$CODE" = 409
'

test_done
