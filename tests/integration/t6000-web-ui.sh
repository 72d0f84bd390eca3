#!/bin/bash
test_description='the web UI in a real browser (chromium through playwright-core, tests/browser/web-ui.mjs): a wrong password, login, the summary, three 1-fGPU busybox sessions from the launcher on a 2-fGPU mock node, with a folder (the third PENDING with its reason), live statuses, delete, the finished list, reload, logout, a blocked login, no console errors; screenshots of every page at 1280x800 and 390x844 in $BUILD/test-logs/screenshots/'
. "$(dirname "$0")/../lib/test-lib.sh"
. "$(dirname "$0")/../lib/registry.sh"
. "$(dirname "$0")/../lib/browser.sh"

browser_prereqs
BLOCKED_EMAIL=blocked@t.test

test_expect_success 'a manager with its agent (one mock GPU worth 2 fGPU) and the busybox image' '
        start_dev_with_busybox "--agent-network none --mock-gpus 1 --fgpu-per-gpu 2" &&
        api POST /admin/users "{\"email\": \"$BLOCKED_EMAIL\", \"password\": \"blocked-password\"}" &&
        test "$CODE" = 201 &&
        api POST /folders "{\"name\": \"webdata\"}" && test "$CODE" = 201
'

browser_run "$TEST_ROOT/tests/browser/web-ui.mjs" TESSERA_BLOCKED_EMAIL=$BLOCKED_EMAIL
browser_screenshots login summary launcher sessions

test_done
