#!/bin/bash
test_description='the web UI'"'"'s modules that need no browser, with node --test (tests/web/*.test.mjs, without the globals Debian 12'"'"'s node 18 lacks): units and durations, slot values, the launcher'"'"'s rules, session statuses, the terminal'"'"'s messages, retry delays, folder paths and names'
. "$(dirname "$0")/../lib/test-lib.sh"

command -v node >/dev/null 2>&1 || skip_all 'needs node (scripts/install-deps.sh build)'
[ "$TESSERA_TEST_DB" = postgresql ] && skip_all 'no database here: the sqlite run covers it'

for web_test in "$TEST_ROOT"/tests/web/*.test.mjs; do
        test_expect_success "$(basename "$web_test")" \
                'node --import "$TEST_ROOT/tests/web/node18-globals.mjs" --test "$web_test"'
done

test_done
