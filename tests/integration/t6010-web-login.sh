#!/bin/bash
test_description='the web UI login: a session cookie that stands in for the signature, CSRF and origin checks, logout, blocking after repeated failures, and the UI files served at / and /ui/'
. "$(dirname "$0")/../lib/test-lib.sh"

JAR=$TMP/cookies

# web METHOD PATH [BODY] [CURL_ARGS...]: a browser-like request with the
# cookie jar; CODE, the answer in $TMP/out, headers in $TMP/headers
web() {
        local method=$1 path=$2 body=${3:-}
        shift 3 2>/dev/null || shift $#
        CODE=$(curl -s -m 20 -X "$method" -b "$JAR" -c "$JAR" -D "$TMP/headers" -o "$TMP/out" -w '%{http_code}' \
                ${body:+-H "Content-Type: application/json" --data "$body"} "$@" "$BACKEND_ENDPOINT$path") || true
}

login() { # EMAIL PASSWORD
        web POST /server/login "{\"email\": \"$1\", \"password\": \"$2\"}"
}

test_expect_success 'a manager with a web directory' '
        mkdir -p "$TMP/web" &&
        echo "<!doctype html><title>Tessera</title>" >"$TMP/web/index.html" &&
        echo "console.log(1)" >"$TMP/web/app.js" && gzip -k "$TMP/web/app.js" &&
        ln -s /etc/passwd "$TMP/web/link.js" &&
        printf "web_dir = \"%s\"\n" "$TMP/web" >"$TMP/manager.conf" &&
        start_manager --config "$TMP/manager.conf"
'

test_expect_success 'GET / serves the UI to browsers and the version JSON to clients' '
        web GET / "" -H "Accept: text/html,application/xhtml+xml" && test "$CODE" = 200 &&
        grep -q "<title>Tessera</title>" "$TMP/out" && grep -qi "^content-security-policy: default-src .self." "$TMP/headers" &&
        web GET / && test "$CODE" = 200 && jq -e ".version" "$TMP/out" &&
        web GET /ui/app.js && test "$CODE" = 200 && grep -qi "^content-type: text/javascript" "$TMP/headers" &&
        web GET /ui/app.js "" -H "Accept-Encoding: gzip" && test "$CODE" = 200 &&
        grep -qi "^content-encoding: gzip" "$TMP/headers" && ETAG=$(sed -n "s/^[Ee][Tt][Aa][Gg]: //p" "$TMP/headers" | tr -d "\r") &&
        web GET /ui/app.js "" -H "Accept-Encoding: gzip" -H "If-None-Match: $ETAG" && test "$CODE" = 304 &&
        web GET /ui/link.js && test "$CODE" = 404 &&
        web GET /ui/../manager.conf && test "$CODE" = 404 &&
        web GET /ui/.hidden && test "$CODE" = 404 &&
        web GET /ui/nope.js && test "$CODE" = 404
'

test_expect_success 'a wrong password is 401 and sets no cookie; no cookie is 401' '
        login "$TEST_ADMIN_EMAIL" wrong-password && test "$CODE" = 401 && ! grep -qi "^set-cookie" "$TMP/headers" &&
        web GET /server/session && test "$CODE" = 401 &&
        web GET /sessions && test "$CODE" = 401
'

test_expect_success 'login sets an HttpOnly SameSite=Strict cookie; the cookie reads the API' '
        login "$TEST_ADMIN_EMAIL" "$TEST_ADMIN_PASSWORD" && test "$CODE" = 200 &&
        grep -i "^set-cookie: tessera_session=" "$TMP/headers" | grep -qi "httponly" &&
        grep -i "^set-cookie: tessera_session=" "$TMP/headers" | grep -qi "samesite=strict" &&
        jq -e ".role == \"superadmin\" and .email == \"$TEST_ADMIN_EMAIL\" and (.csrf_token | length) == 32" "$TMP/out" &&
        jq -r .csrf_token "$TMP/out" >"$TMP/csrf" &&
        web GET /server/session && test "$CODE" = 200 && test "$(jq -r .csrf_token "$TMP/out")" = "$(cat "$TMP/csrf")" &&
        web GET /sessions && test "$CODE" = 200 && jq -e ".items" "$TMP/out" &&
        web GET /auth/role && test "$CODE" = 200
'

test_expect_success 'the database keeps only a hash of the cookie' '
        TOKEN=$(awk "\$6 == \"tessera_session\" { print \$7 }" "$JAR") && test ${#TOKEN} = 64 &&
        api GET /admin/audit-log >/dev/null &&
        if [ "$TESSERA_TEST_DB" = sqlite ]; then
                ! sqlite3 "$MANAGER_STATE/tessera.db" "SELECT id FROM web_sessions" | grep -q "$TOKEN" &&
                sqlite3 "$MANAGER_STATE/tessera.db" "SELECT id FROM web_sessions" | grep -q "$(printf %s "$TOKEN" | sha256sum | cut -c1-64)"
        fi
'

test_expect_success 'changes need the CSRF header; a foreign Origin is refused' '
        web POST /folders "{\"name\": \"webf\"}" && test "$CODE" = 401 && grep -q CSRF "$TMP/out" &&
        web POST /folders "{\"name\": \"webf\"}" -H "X-Tessera-CSRF: 0000" && test "$CODE" = 401 &&
        web POST /folders "{\"name\": \"webf\"}" -H "X-Tessera-CSRF: $(cat "$TMP/csrf")" && test "$CODE" = 201 &&
        web GET /folders "" -H "Origin: http://evil.test" && test "$CODE" = 401 &&
        web GET /folders "" -H "Origin: $BACKEND_ENDPOINT" && test "$CODE" = 200
'

test_expect_success 'logout ends the session: the old cookie no longer works' '
        cp "$JAR" "$TMP/old-jar" &&
        web POST /server/logout && test "$CODE" = 204 &&
        web GET /sessions && test "$CODE" = 401 &&
        CODE=$(curl -s -b "$TMP/old-jar" -o /dev/null -w "%{http_code}" "$BACKEND_ENDPOINT/sessions") && test "$CODE" = 401
'

test_expect_success 'five wrong passwords block the email for a while (429, Retry-After), even with the right one' '
        for i in 1 2 3 4 5; do login "$TEST_ADMIN_EMAIL" "wrong-$i" && test "$CODE" = 401 || return 1; done &&
        login "$TEST_ADMIN_EMAIL" "$TEST_ADMIN_PASSWORD" && test "$CODE" = 429 &&
        grep -qi "^retry-after: [0-9]" "$TMP/headers" &&
        api GET /sessions && test "$CODE" = 200
'

test_expect_success 'a deactivated user'"'"'s session ends' '
        api POST /admin/users "{\"email\": \"webuser@t.test\", \"password\": \"web-user-pass\"}" && test "$CODE" = 201 &&
        rm -f "$JAR" && login webuser@t.test web-user-pass && test "$CODE" = 200 &&
        web GET /sessions && test "$CODE" = 200 &&
        api PATCH /admin/users/webuser@t.test "{\"status\": \"inactive\"}" && test "$CODE" = 200 &&
        web GET /sessions && test "$CODE" = 401
'

test_expect_success 'webserver mode (Backend.AI'"'"'s BACKEND_ENDPOINT_TYPE=session): {username} login, authenticated, /func/<route> by the cookie' '
        api POST /admin/users "{\"email\": \"funcuser@t.test\", \"password\": \"func-user-pass\"}" && test "$CODE" = 201 &&
        rm -f "$JAR" && web POST /server/login "{\"username\": \"funcuser@t.test\", \"password\": \"func-user-pass\"}" &&
        test "$CODE" = 200 && jq -e ".authenticated == true and .data.email == \"funcuser@t.test\" and .data.role == \"user\"" "$TMP/out" &&
        web GET /func/sessions && test "$CODE" = 200 && jq -e ".items == []" "$TMP/out" &&
        web GET /func/folders/_/hosts && test "$CODE" = 200 &&
        web POST /func/folders "{\"name\": \"funcf\"}" && test "$CODE" = 201 &&
        web GET /func/folders && test "$CODE" = 200 && jq -e "map(.name) == [\"funcf\"]" "$TMP/out"
'

test_expect_success 'webserver mode: browsers still need the CSRF token, signatures and agents'"'"' routes are refused' '
        web POST /func/folders "{\"name\": \"x-origin\"}" -H "Origin: $BACKEND_ENDPOINT" && test "$CODE" = 401 &&
        grep -q CSRF "$TMP/out" &&
        web POST /func/folders "{\"name\": \"x-site\"}" -H "Sec-Fetch-Site: same-site" -H "Sec-Fetch-Mode: cors" &&
        test "$CODE" = 401 &&
        web POST /func/folders "{\"name\": \"x-evil\"}" -H "Origin: http://evil.test" && test "$CODE" = 401 &&
        web POST /folders "{\"name\": \"no-prefix\"}" && test "$CODE" = 401 && grep -q CSRF "$TMP/out" &&
        web GET /func/folders && jq -e "map(.name) == [\"funcf\"]" "$TMP/out" &&
        web POST /func/agent/heartbeat "{\"id\": \"x\"}" && test "$CODE" = 404 &&
        api GET /func/sessions && test "$CODE" = 401 && grep -q "login cookie" "$TMP/out" &&
        rm -f "$JAR" && web GET /func/sessions && test "$CODE" = 401 && grep -q "log in first" "$TMP/out"
'

test_done
