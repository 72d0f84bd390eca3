# shellcheck shell=bash
# browser.sh - an integration test that runs a script of tests/browser
# (playwright-core driving Debian's chromium; tests/browser/lib.mjs).
#
# browser_prereqs: skip the whole test without root and runc (the
#     sessions), chromium, node or the built UI; sets CHROMIUM and SHOTS
#     ($TEST_LOGS/screenshots/<test>-<database>, emptied).
# browser_run SCRIPT [NAME=VALUE...]: a test that runs SCRIPT against the
#     manager (TESSERA_URL, the admin's TESSERA_EMAIL and TESSERA_PASSWORD,
#     NODE_MODULES, SCREENSHOTS, RESULTS, CHROMIUM and the NAME=VALUEs in
#     its environment; at most 540 s) and shows its output; then one test
#     per step of SCRIPT (`node SCRIPT --list`), passed when the browser
#     passed it.
# browser_screenshots PAGE...: a test that each PAGE has its screenshot
#     at 1280x800 and 390x844.

browser_prereqs() {
        test_with_containers
        CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
        [ -x "$CHROMIUM" ] || skip_all "needs chromium (scripts/install-deps.sh test)"
        command -v node >/dev/null 2>&1 || skip_all 'needs node (scripts/install-deps.sh build)'
        [ -f "$BUILD/web/index.html" ] || skip_all "needs the built UI in $BUILD/web (make BUILD=... tests)"
        SHOTS=${TEST_LOGS:-$BUILD/test-logs}/screenshots/$TEST_NAME-$TESSERA_TEST_DB
        rm -rf "$SHOTS" && mkdir -p "$SHOTS"
}

# browser_step_ RESULTS NAME: did the browser pass that step?
browser_step_() {
        grep -qxF "ok - $2" "$1" && return 0
        grep -F "not ok - $2" "$1" || echo "not reached (the browser stopped at an earlier step)"
        return 1
}

browser_run() {
        browser_script=$1
        shift
        browser_env=("$@")
        test_expect_success "the browser runs $(basename "$browser_script")" '
                NODE_MODULES=$("$TEST_ROOT/scripts/web-deps.sh") && test -d "$NODE_MODULES/playwright-core" &&
                env TESSERA_URL="$BACKEND_ENDPOINT" TESSERA_EMAIL="$TEST_ADMIN_EMAIL" \
                        TESSERA_PASSWORD="$TEST_ADMIN_PASSWORD" NODE_MODULES="$NODE_MODULES" SCREENSHOTS="$SHOTS" \
                        RESULTS="$TMP/browser.results" CHROMIUM="$CHROMIUM" "${browser_env[@]}" \
                        timeout 540 node "$browser_script" >"$TMP/browser.log" 2>&1
                rc=$?
                cat "$TMP/browser.log"
                test $rc = 0
        '
        while IFS= read -r browser_step_name; do
                test_expect_success "browser: $browser_step_name" \
                        'browser_step_ "$TMP/browser.results" "$browser_step_name"'
        done < <(node "$browser_script" --list)
}

browser_screenshots() {
        browser_pages=("$@")
        test_expect_success 'a screenshot of every page at both sizes' '
                for p in "${browser_pages[@]}"; do
                        for s in 1280x800 390x844; do
                                test -s "$SHOTS/$p-$s.png" || { echo "no $p-$s.png"; return 1; }
                        done
                done
        '
}
