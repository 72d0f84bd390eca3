#!/bin/bash
test_description='in-session apps from the web UI in a real browser (tests/browser/apps.mjs): the session list offers the apps of a session'"'"'s image; Jupyter opens in a new tab through the app proxy, a new notebook runs a cell; screenshots at 1280x800 and 390x844'
. "$(dirname "$0")/../lib/test-lib.sh"
. "$(dirname "$0")/../lib/registry.sh"
. "$(dirname "$0")/../lib/browser.sh"

browser_prereqs
# the jupyter test image: images/jupyter.recipe built by debootstrap (minutes, then cached)
test_image jupyter >"$TMP/image.out" 2>"$TMP/image.log" ||
        skip_all "the jupyter test image cannot be built (is the Debian archive reachable?): $(tail -n 2 "$TMP/image.log" | tr '\n' ' ')"

test_expect_success 'a manager with its agent; a running session of the jupyter image' '
        start_dev_with_image jupyter latest &&
        api POST /session "{\"name\": \"notebook\", \"image\": \"jupyter:latest\", \"enqueueOnly\": true,
                \"config\": {\"resources\": {\"cpu\": 1, \"mem\": \"1g\"}}}" &&
        { test "$CODE" = 201 || { echo "create: $CODE $(cat "$TMP/out")"; false; }; } &&
        WAIT_TENTHS=1200 wait_status notebook RUNNING
'

browser_run "$TEST_ROOT/tests/browser/apps.mjs"
browser_screenshots apps

test_done
