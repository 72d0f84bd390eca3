#!/bin/bash
test_description='the web UI in a real browser (chromium through playwright-core, tests/browser/web-ui.mjs): a wrong password, login, the summary, two busybox sessions from the launcher with a folder (the second PENDING with its reason), live statuses, delete, the finished list, reload, logout, a blocked login, no console errors; screenshots of every page at 1280x800 and 390x844 in $BUILD/test-logs/screenshots/'
. "$(dirname "$0")/../lib/test-lib.sh"
. "$(dirname "$0")/../lib/registry.sh"
. "$(dirname "$0")/../lib/browser.sh"

test_with_containers
browser_prereqs
BLOCKED_EMAIL=blocked@t.test

test_expect_success 'a manager with its agent and the busybox image' '
        start_dev_with_busybox &&
        api POST /admin/users "{\"email\": \"$BLOCKED_EMAIL\", \"password\": \"blocked-password\"}" &&
        test "$CODE" = 201 &&
        api POST /folders "{\"name\": \"webdata\"}" && test "$CODE" = 201
'

browser_steps "$TEST_ROOT/tests/browser/web-ui.mjs" TESSERA_URL="$BACKEND_ENDPOINT" TESSERA_EMAIL="$TEST_ADMIN_EMAIL" \
        TESSERA_PASSWORD="$TEST_ADMIN_PASSWORD" TESSERA_BLOCKED_EMAIL="$BLOCKED_EMAIL"
browser_screenshots login summary launcher sessions

test_done
