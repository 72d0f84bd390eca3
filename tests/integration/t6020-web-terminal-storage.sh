#!/bin/bash
test_description='the web terminal and the storage pages in a real browser (tests/browser/terminal-storage.mjs): a busybox session'"'"'s terminal echoes, follows the window size, finds the same shell after a reload and after a cut connection (a variable, a job'"'"'s output, nothing shown twice), another tab has its own shell, a new shell after exit; a folder made, a file uploaded with the picker (cut off and resumed) and one dropped, directories, a download compared byte for byte, the trash; the folder mounted in a session that reads the file; an invitation accepted by a second user; screenshots at 1280x800 and 390x844'
. "$(dirname "$0")/../lib/test-lib.sh"
. "$(dirname "$0")/../lib/registry.sh"
. "$(dirname "$0")/../lib/browser.sh"

browser_prereqs
USER2_EMAIL=reader@t.test
USER2_PASSWORD=reader-password

test_expect_success 'a manager with its agent and the busybox image; a second user' '
        start_dev_with_busybox &&
        api POST /admin/users "{\"email\": \"$USER2_EMAIL\", \"password\": \"$USER2_PASSWORD\"}" &&
        test "$CODE" = 201
'

browser_run "$TEST_ROOT/tests/browser/terminal-storage.mjs" \
        TESSERA_USER2_EMAIL=$USER2_EMAIL TESSERA_USER2_PASSWORD=$USER2_PASSWORD
browser_screenshots terminal storage upload folder share invitations

test_done
