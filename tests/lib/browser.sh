# shellcheck shell=bash
# browser.sh - running a script of tests/browser (harness.mjs) in chromium
# from an integration test; source it after test-lib.sh.
#
#     . "$(dirname "$0")/../lib/browser.sh"
#     browser_prereqs                       skip the test without chromium, node or the UI
#     ... start a manager, make what the script needs ...
#     browser_steps SCRIPT VAR=VALUE...     run it, then one test per step
#     browser_screenshots PAGE...           a test: PAGE-<size>.png of each, at both sizes
#
# browser_prereqs: skip_all unless $CHROMIUM (default /usr/bin/chromium),
#     node and the built UI ($BUILD/web) are here; sets SHOTS, the
#     directory of the screenshots ($BUILD/test-logs/screenshots/
#     $TEST_NAME-$TESSERA_TEST_DB).
# browser_steps SCRIPT VAR=VALUE...: a test that runs the script with those
#     variables (and NODE_MODULES from scripts/web-deps.sh, SCREENSHOTS,
#     RESULTS, CHROMIUM), printing its output; then a test for each step
#     of `SCRIPT --list`, passing when the script passed that step.

browser_prereqs() {
        CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
        [ -x "$CHROMIUM" ] || skip_all "needs chromium (scripts/install-deps.sh test)"
        command -v node >/dev/null 2>&1 || skip_all 'needs node (scripts/install-deps.sh build)'
        [ -f "$BUILD/web/index.html" ] || skip_all "needs the built UI in $BUILD/web (make BUILD=... tests)"
        SHOTS=$BUILD/test-logs/screenshots/$TEST_NAME-$TESSERA_TEST_DB
        BROWSER_RESULTS=$TMP/browser.results
}

browser_run_() {
        local script=$1 rc node_modules
        shift
        node_modules=$("$TEST_ROOT/scripts/web-deps.sh") && test -d "$node_modules/playwright-core" || return 1
        rm -rf "$SHOTS" && mkdir -p "$SHOTS" || return 1
        env "$@" NODE_MODULES="$node_modules" SCREENSHOTS="$SHOTS" RESULTS="$BROWSER_RESULTS" CHROMIUM="$CHROMIUM" \
                timeout 540 node "$script" >"$TMP/browser.log" 2>&1
        rc=$?
        cat "$TMP/browser.log"
        test $rc = 0
}

# browser_step_ NAME: did the browser pass that step?
browser_step_() {
        grep -qxF "ok - $1" "$BROWSER_RESULTS" && return 0
        grep -F "not ok - $1" "$BROWSER_RESULTS" || echo "not reached (the browser stopped at an earlier step)"
        return 1
}

browser_steps() {
        local browser_script=$1 browser_step_name
        shift
        BROWSER_ENV=("$@")
        BROWSER_SCRIPT=$browser_script
        test_expect_success 'the browser runs its steps' 'browser_run_ "$BROWSER_SCRIPT" "${BROWSER_ENV[@]}"'
        while IFS= read -r browser_step_name; do
                test_expect_success "browser: $browser_step_name" 'browser_step_ "$browser_step_name"'
        done < <(node "$browser_script" --list)
}

browser_screenshots() {
        BROWSER_PAGES="$*"
        test_expect_success 'a screenshot of every page at both sizes' '
                for p in $BROWSER_PAGES; do
                        for s in 1280x800 390x844; do
                                test -s "$SHOTS/$p-$s.png" || { echo "no $p-$s.png"; return 1; }
                        done
                done
        '
}
