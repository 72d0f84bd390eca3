#!/bin/bash
test_description='the web UI'"'"'s admin and statistics pages in a real browser (tests/browser/web-admin.mjs): as the superadmin, everyone'"'"'s sessions (a plain user'"'"'s running one: its owner, logs, terminal and delete; the finished ones ten a page, past the first page), users, keypair policies (their keypair, priority and disk limits read back), a user made to change the password (only that form until it is changed, the next call of a login refused brings it back, the old passwords refused), projects with members, keypairs (the secret once), edits and deletes, a domain with its storage host permissions, resource group access and scheduler options, a resource preset, the audit log, the agent of --mock-gpus 1 --fgpu-per-gpu 2 with its slots and GPU, busybox hidden and shown, an image alias, a registry rescan followed live; a domain admin refused with the manager'"'"'s reason; statistics charts after short sessions (one busy: its measured CPU time), per user for the admin, their own for a plain user who has no admin pages; no console errors; screenshots at 1280x800 and 390x844'
. "$(dirname "$0")/../lib/test-lib.sh"
. "$(dirname "$0")/../lib/registry.sh"
. "$(dirname "$0")/../lib/browser.sh"

test_with_containers
browser_prereqs
USER_EMAIL=plain@t.test USER_PASSWORD=plain-password
DADMIN_EMAIL=dadmin@t.test DADMIN_PASSWORD=dadmin-password

test_expect_success 'a manager with an agent of one mock GPU (2 fGPU) and busybox; a plain user and a domain admin' '
        start_dev_with_busybox "--agent-network none --mock-gpus 1 --fgpu-per-gpu 2" &&
        api POST /admin/users "{\"email\": \"$USER_EMAIL\", \"password\": \"$USER_PASSWORD\"}" && test "$CODE" = 201 &&
        USER_KEY=$(jq -r .keypair.access_key "$TMP/out") && USER_SECRET=$(jq -r .keypair.secret_key "$TMP/out") &&
        api POST /admin/users "{\"email\": \"$DADMIN_EMAIL\", \"password\": \"$DADMIN_PASSWORD\", \"role\": \"admin\"}" &&
        test "$CODE" = 201 &&
        DADMIN_KEY=$(jq -r .keypair.access_key "$TMP/out") && DADMIN_SECRET=$(jq -r .keypair.secret_key "$TMP/out")
'

test_expect_success 'short sessions ran, for the admin and for the plain user' '
        create_session adminrun batch "timeout 7 yes >/dev/null; exit 0" &&
        BACKEND_ACCESS_KEY=$USER_KEY BACKEND_SECRET_KEY=$USER_SECRET create_session userrun batch "sleep 3" &&
        for s in adminrun userrun; do
                wait_status $s TERMINATED && test "$(field $s result)" = SUCCESS || return 1
        done &&
        api GET /resource/stats/user/month && jq -e "[.[].cpu_used.value] | add > 0" "$TMP/out"
'

# for the admin to find under Everyone, read and delete
as_user() { BACKEND_ACCESS_KEY=$USER_KEY BACKEND_SECRET_KEY=$USER_SECRET "$@"; }
test_expect_success 'the plain user has a running session that printed a line; the list names its owner' '
        as_user create_session userlive batch "echo hello-from-userlive; sleep 600" &&
        as_user wait_status userlive RUNNING 900 &&
        api GET "/sessions?status=RUNNING" &&
        jq -e ".items[] | select(.sessionName == \"userlive\") | .userEmail == \"$USER_EMAIL\" and .ownerAccessKey == \"$USER_KEY\"" \
                "$TMP/out"
'

# what the browser's terminal of another owner's session rests on
test_expect_success 'the domain admin opens a terminal in the plain user'"'"'s session (owner_access_key); the plain user is refused the superadmin'"'"'s' '
        { BACKEND_ACCESS_KEY=$DADMIN_KEY BACKEND_SECRET_KEY=$DADMIN_SECRET \
                pty "/stream/session/userlive/pty?owner_access_key=$USER_KEY" "send:echo dadmin-\$((6*7))\n" \
                expect:dadmin-42 close expect-close >"$TMP/dadmin.out" || { cat "$TMP/dadmin.out"; false; }; } &&
        as_user test_must_fail pty "/stream/session/userlive/pty?owner_access_key=$BACKEND_ACCESS_KEY" "send:id\n" \
                2>"$TMP/refused.err" &&
        grep -q " 403 " "$TMP/refused.err"
'

# more sessions than a page of ten: the plain user's, cancelled while they
# waited for their start time (no container), newer than userrun, which
# the superadmin then finds on the second page
test_expect_success 'a dozen more sessions of the plain user, cancelled before they started' '
        for i in $(seq -w 1 12); do
                as_user api POST /session "{\"name\": \"page$i\", \"image\": \"busybox:latest\", \"type\": \"batch\",
                        \"startupCommand\": \"true\", \"starts_at\": \"1h\", \"enqueueOnly\": true}" &&
                test "$CODE" = 201 && as_user api DELETE "/session/page$i" && test "$CODE" = 200 || return 1
        done &&
        api GET "/sessions?status=CANCELLED&limit=100" && test "$(jq .total "$TMP/out")" = 12
'

browser_run "$TEST_ROOT/tests/browser/web-admin.mjs" TESSERA_URL="$BACKEND_ENDPOINT" \
        TESSERA_EMAIL="$TEST_ADMIN_EMAIL" TESSERA_PASSWORD="$TEST_ADMIN_PASSWORD" \
        TESSERA_USER_EMAIL="$USER_EMAIL" TESSERA_USER_PASSWORD="$USER_PASSWORD" \
        TESSERA_DADMIN_EMAIL="$DADMIN_EMAIL" TESSERA_DADMIN_PASSWORD="$DADMIN_PASSWORD" TESSERA_REGISTRY="$REGISTRY" \
        TESSERA_LIVE=userlive

test_expect_success 'what the browser did is what the manager has' '
        api GET /admin/users/webuser@t.test && test "$CODE" = 404 &&
        api GET /admin/keypair-policies/webpolicy && test "$CODE" = 404 &&
        api GET "/admin/images?name=busybox" && jq -e ".items[0].hidden == false" "$TMP/out" &&
        api GET /admin/agents && jq -e ".items[0].schedulable == true" "$TMP/out" &&
        api GET /admin/audit-log && jq -e "[.items[].target] | index(\"user:webuser@t.test\")" "$TMP/out" &&
        api GET "/admin/audit-log?action=POST%20/auth/update-password&limit=100" &&
        jq -e "[.items[] | select(.target == \"user:webuser@t.test\" and .status == 200)] | length == 2" "$TMP/out" &&
        api GET /admin/domains/webdom &&
        jq -e ".description == \"changed in the browser\" and
                .allowed_vfolder_hosts == {\"local\": [\"create-vfolder\", \"mount-in-session\"]}" "$TMP/out" &&
        api GET /admin/presets/webpreset && jq -e ".shared_memory == \"67108864\"" "$TMP/out" &&
        as_user api GET /sessions && jq -e ".items[] | select(.sessionName == \"userlive\") | .status == \"TERMINATED\"" "$TMP/out"
'

browser_screenshots sessions-everyone terminal-of-another sessions-page-two admin-users admin-user-form admin-policies \
        admin-policy-form password-required admin-projects admin-keypairs \
        admin-domains admin-domain-form admin-resource-groups admin-presets admin-audit-log admin-agents admin-images \
        admin-image-aliases admin-registries statistics statistics-users statistics-user

test_done
