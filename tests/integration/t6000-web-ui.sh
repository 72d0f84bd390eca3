#!/bin/bash
test_description='the web UI in a real browser (chromium through playwright-core, tests/browser/web-ui.mjs): a wrong password, login, the summary, two busybox sessions from the launcher with a folder (the second PENDING with its reason), live statuses, delete, the finished list, reload, logout, a blocked login, no console errors; screenshots of every page at 1280x800 and 390x844 in $BUILD/test-logs/screenshots/'
. "$(dirname "$0")/../lib/test-lib.sh"
. "$(dirname "$0")/../lib/registry.sh"

test_with_containers
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
[ -x "$CHROMIUM" ] || skip_all "needs chromium (scripts/install-deps.sh test)"
command -v node >/dev/null 2>&1 || skip_all 'needs node (scripts/install-deps.sh build)'
[ -f "$BUILD/web/index.html" ] || skip_all "needs the built UI in $BUILD/web (make BUILD=... tests)"

SCRIPT=$TEST_ROOT/tests/browser/web-ui.mjs
SHOTS=$BUILD/test-logs/screenshots/$TEST_NAME-$TESSERA_TEST_DB
RESULTS=$TMP/browser.results
BLOCKED_EMAIL=blocked@t.test

test_expect_success 'a manager with its agent and the busybox image; playwright-core' '
        NODE_MODULES=$("$TEST_ROOT/scripts/web-deps.sh") && test -d "$NODE_MODULES/playwright-core" &&
        start_dev_with_busybox &&
        api POST /admin/users "{\"email\": \"$BLOCKED_EMAIL\", \"password\": \"blocked-password\"}" &&
        test "$CODE" = 201 &&
        api POST /folders "{\"name\": \"webdata\"}" && test "$CODE" = 201
'

test_expect_success 'the browser runs its steps' '
        rm -rf "$SHOTS" && mkdir -p "$SHOTS" &&
        TESSERA_URL=$BACKEND_ENDPOINT TESSERA_EMAIL=$TEST_ADMIN_EMAIL TESSERA_PASSWORD=$TEST_ADMIN_PASSWORD \
                TESSERA_BLOCKED_EMAIL=$BLOCKED_EMAIL NODE_MODULES=$NODE_MODULES SCREENSHOTS=$SHOTS \
                RESULTS=$RESULTS CHROMIUM=$CHROMIUM timeout 540 node "$SCRIPT" >"$TMP/browser.log" 2>&1
        rc=$?
        cat "$TMP/browser.log"
        test $rc = 0
'

# browser_step NAME: did the browser pass that step?
browser_step() {
        grep -qxF "ok - $1" "$RESULTS" && return 0
        grep -F "not ok - $1" "$RESULTS" || echo "not reached (the browser stopped at an earlier step)"
        return 1
}

while IFS= read -r browser_step_name; do
        test_expect_success "browser: $browser_step_name" 'browser_step "$browser_step_name"'
done < <(node "$SCRIPT" --list)

test_expect_success 'a screenshot of every page at both sizes' '
        for p in login summary launcher sessions; do
                for s in 1280x800 390x844; do test -s "$SHOTS/$p-$s.png" || { echo "no $p-$s.png"; return 1; }; done
        done
'

test_done
