#!/bin/bash
test_description='a hostile app opened by an admin in a real browser (tests/browser/app-hostile.mjs) gets nothing: the app runs on an origin of its own, its page reads no login or CSRF token from /server/session (its own origin or the web UI'"'"'s), and its POST /admin/keypairs creates no keypair; the owner'"'"'s link opens nothing in the admin'"'"'s browser'
. "$(dirname "$0")/../lib/test-lib.sh"
. "$(dirname "$0")/../lib/registry.sh"
. "$(dirname "$0")/../lib/browser.sh"

browser_prereqs

# the busybox image with an app `web`: busybox httpd serving /tmp/www
LABELS='{"ai.backend.service-ports": "web:http:8080",
         "ai.backend.service-start.web": "[\"/bin/busybox\", \"httpd\", \"-f\", \"-p\", \"127.0.0.1:{port}\", \"-h\", \"/tmp/www\"]"}'

keypair_count() {
        api GET "/admin/keypairs?limit=1000" && test "$CODE" = 200 && jq "[.. | objects | .access_key? // empty] | unique | length" "$TMP/out"
}

test_expect_success 'mallory runs a session whose app serves a hostile page' '
        registry_start && registry_push busybox busybox:latest &&
        WITH_AGENT="--agent-network none" start_manager &&
        api POST /admin/images "{\"name\": \"busybox\", \"tag\": \"latest\", \"registry\": \"$REGISTRY\", \"labels\": $LABELS}" &&
        { test "$CODE" = 201 || { echo "image: $CODE $(cat "$TMP/out")"; false; }; } &&
        api POST /admin/users "{\"email\": \"mallory@apps.test\", \"password\": \"mallory-password-1\", \"role\": \"user\", \"projects\": [\"default\"]}" &&
        test "$CODE" = 201 &&
        MAK=$(jq -r "[.. | objects | .access_key? // empty][0]" "$TMP/out") &&
        MSK=$(jq -r "[.. | objects | .secret_key? // empty][0]" "$TMP/out") &&
        BACKEND_ACCESS_KEY=$MAK BACKEND_SECRET_KEY=$MSK create_session hostile interactive &&
        SID=$(jq -r .sessionId "$TMP/out") && test -n "$SID" &&
        BACKEND_ACCESS_KEY=$MAK BACKEND_SECRET_KEY=$MSK wait_status hostile RUNNING &&
        PAGE=$(base64 -w0 "$TEST_ROOT/tests/lib/hostile-app.html") &&
        BACKEND_ACCESS_KEY=$MAK BACKEND_SECRET_KEY=$MSK session_run hostile \
                "mkdir -p /tmp/www/apps/$SID/web && echo $PAGE | base64 -d >/tmp/www/apps/$SID/web/index.html" &&
        test "$EXIT" = 0 &&
        BACKEND_ACCESS_KEY=$MAK BACKEND_SECRET_KEY=$MSK api POST /session/hostile/start-service "{\"app\": \"web\"}" &&
        { test "$CODE" = 200 || { echo "start-service: $CODE $(cat "$TMP/out")"; false; }; } &&
        MALLORY_LINK=$(jq -r .url "$TMP/out") &&
        BEFORE=$(keypair_count) && test "$BEFORE" -gt 0
'

browser_run "$TEST_ROOT/tests/browser/app-hostile.mjs" MALLORY_LINK="$MALLORY_LINK"

test_expect_success 'no keypair was created' '
        test "$(keypair_count)" = "$BEFORE"
'

test_done
