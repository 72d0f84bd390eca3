#!/bin/bash
test_description='Backend.AI'"'"'s /manager routes: the announcement every CLI command fetches (anyone reads it, only a superadmin posts or takes it down), and the service'"'"'s status: a superadmin freezes it for maintenance (no new sessions or folders, 503 server-frozen, for every role), force_kill ends every session, unfreezing lets creation through again; scheduler operations include and exclude agents'
. "$(dirname "$0")/../lib/test-lib.sh"
. "$(dirname "$0")/../lib/roles.sh"

test_expect_success 'start a manager with an admin, a user and an image' '
        start_manager &&
        api POST /admin/images "{\"name\": \"python\", \"tag\": \"3.11\"}" && test "$CODE" = 201 &&
        AK[superadmin]=$BACKEND_ACCESS_KEY SK[superadmin]=$BACKEND_SECRET_KEY &&
        make_user admin admin@state.test default admin default &&
        make_user user user@state.test default user default
'

test_expect_success 'no announcement at first: enabled false, an empty message (what the CLI checks)' '
        call user GET /manager/announcement && test "$CODE" = 200 &&
        jq -e ". == {\"enabled\": false, \"message\": \"\"}" "$TMP/out"
'

test_expect_success 'a superadmin posts one; every user reads it exactly' '
        call superadmin POST /manager/announcement "{\"enabled\": true, \"message\": \"**Maintenance** on Friday: save your work\\nThanks\"}" &&
        test "$CODE" = 204 &&
        call user GET /manager/announcement && test "$CODE" = 200 &&
        jq -e ".enabled == true and .message == \"**Maintenance** on Friday: save your work\\nThanks\"" "$TMP/out" &&
        call admin GET /manager/announcement && jq -e .enabled "$TMP/out"
'

test_expect_success 'a domain admin and a user may not post; the message stays' '
        call admin POST /manager/announcement "{\"enabled\": true, \"message\": \"mine\"}" && test "$CODE" = 403 &&
        call user POST /manager/announcement "{\"enabled\": false}" && test "$CODE" = 403 &&
        call user GET /manager/announcement && jq -e ".message | startswith(\"**Maintenance**\")" "$TMP/out"
'

test_expect_success 'bad announcements get a precise 400' '
        call superadmin POST /manager/announcement "{\"enabled\": true}" && test "$CODE" = 400 &&
        jq -e ".title | test(\"message: required\")" "$TMP/out" &&
        call superadmin POST /manager/announcement "{\"enabled\": true, \"message\": 5}" && test "$CODE" = 400 &&
        jq -e ".title | test(\"message\")" "$TMP/out" &&
        call superadmin POST /manager/announcement "{\"enabled\": \"yes\", \"message\": \"x\"}" && test "$CODE" = 400 &&
        jq -e ".title | test(\"enabled\")" "$TMP/out" &&
        long=$(head -c 16385 /dev/zero | tr "\\0" a) &&
        call superadmin POST /manager/announcement "{\"message\": \"$long\"}" && test "$CODE" = 400
'

test_expect_success 'enabled false (message null, as the CLI sends it) takes it down' '
        call superadmin POST /manager/announcement "{\"enabled\": false, \"message\": null}" && test "$CODE" = 204 &&
        call user GET /manager/announcement && jq -e ". == {\"enabled\": false, \"message\": \"\"}" "$TMP/out"
'

test_expect_success 'the status: running, with the active sessions counted; superadmins only' '
        call superadmin GET /manager/status && test "$CODE" = 200 &&
        jq -e ".status == \"running\" and .active_sessions == 0 and (.nodes | length) == 1 and .nodes[0].status == \"running\" and (.nodes[0].api_version | startswith(\"v\"))" "$TMP/out" &&
        call admin GET /manager/status && test "$CODE" = 403 &&
        call user GET /manager/status && test "$CODE" = 403
'

test_expect_success 'only a superadmin freezes; bad bodies get a 400' '
        call admin PUT /manager/status "{\"status\": \"frozen\"}" && test "$CODE" = 403 &&
        call superadmin PUT /manager/status "{\"status\": \"asleep\"}" && test "$CODE" = 400 &&
        jq -e ".title | test(\"running.*frozen\")" "$TMP/out" &&
        call superadmin PUT /manager/status "{\"status\": \"running\", \"force_kill\": true}" && test "$CODE" = 400 &&
        call user POST /folders "{\"name\": \"before-freeze\"}" && test "$CODE" = 201
'

test_expect_success 'frozen: no new session or folder, for any role (503 server-frozen, Retry-After)' '
        call superadmin PUT /manager/status "{\"status\": \"frozen\", \"force_kill\": false}" && test "$CODE" = 204 &&
        call superadmin GET /manager/status && jq -e ".status == \"frozen\"" "$TMP/out" &&
        for who in user admin superadmin; do
                call $who POST /folders "{\"name\": \"during-$who\"}" -D "$TMP/h" && test "$CODE" = 503 &&
                jq -e ".type | endswith(\"/server-frozen\")" "$TMP/out" || return 1
                call $who POST /session "{\"image\": \"python:3.11\", \"sessionName\": \"frozen-$who\"}" &&
                test "$CODE" = 503 || return 1
        done &&
        test "$(db_sql "SELECT COUNT(*) FROM vfolders WHERE name LIKE '"'"'during-%'"'"'")" = 0
'

test_expect_success 'frozen: what exists goes on (reads, the folder made before, its files)' '
        call user GET /folders && test "$CODE" = 200 &&
        jq -e "[.[] | .name] | index(\"before-freeze\")" "$TMP/out" &&
        call user GET /manager/announcement && test "$CODE" = 200
'

test_expect_success 'unfrozen: creation works again' '
        call superadmin PUT /manager/status "{\"status\": \"running\"}" && test "$CODE" = 204 &&
        call user POST /folders "{\"name\": \"after-freeze\"}" && test "$CODE" = 201
'

test_expect_success 'force_kill ends every session: pending ones are cancelled' '
        for i in 1 2; do
                api POST /session "{\"image\": \"python:3.11\", \"sessionName\": \"queued-$i\", \"enqueueOnly\": true}" &&
                test "$CODE" = 201 || { cat "$TMP/out"; return 1; }
        done &&
        call superadmin GET /manager/status && jq -e ".active_sessions == 2" "$TMP/out" &&
        call superadmin PUT /manager/status "{\"status\": \"frozen\", \"force_kill\": true}" && test "$CODE" = 204 &&
        test "$(db_sql "SELECT COUNT(*) FROM sessions WHERE status = '"'"'CANCELLED'"'"' AND status_info = '"'"'force-killed-by-freeze'"'"'")" = 2 &&
        call superadmin GET /manager/status && jq -e ".active_sessions == 0 and .status == \"frozen\"" "$TMP/out" &&
        call superadmin PUT /manager/status "{\"status\": \"running\"}" && test "$CODE" = 204
'

test_expect_success 'scheduler operation exclude-agents / include-agents sets the agents'"'"' schedulable flag, as the CLI sends it' '
        agent_register a1 "{\"cpu\": 4, \"mem\": \"8g\"}" && agent_register a2 "{\"cpu\": 4, \"mem\": \"8g\"}" &&
        call superadmin POST /manager/scheduler/operation "{\"op\": \"exclude-agents\", \"args\": [\"a1\", \"a2\"]}" &&
        test "$CODE" = 204 &&
        test "$(db_sql "SELECT COUNT(*) FROM agents WHERE schedulable = 0")" = 2 &&
        call superadmin POST /manager/scheduler/operation "{\"op\": \"include-agents\", \"args\": [\"a2\"]}" &&
        test "$CODE" = 204 &&
        call superadmin GET /admin/agents/a2 && jq -e ".schedulable == true" "$TMP/out" &&
        call superadmin GET /admin/agents/a1 && jq -e ".schedulable == false" "$TMP/out" &&
        call superadmin GET "/admin/audit-log?action=PATCH%20/admin/agents/%7Bid%7D" &&
        jq -e "[.items[].path] | sort == [\"/admin/agents/a1\", \"/admin/agents/a2\", \"/admin/agents/a2\"]" "$TMP/out"
'

test_expect_success 'scheduler operations: superadmins only; an unknown agent is a 404 after the ones before it; bad bodies a 400' '
        call admin POST /manager/scheduler/operation "{\"op\": \"include-agents\", \"args\": [\"a1\"]}" &&
        test "$CODE" = 403 &&
        call superadmin POST /manager/scheduler/operation "{\"op\": \"include-agents\", \"args\": [\"a1\", \"nope\"]}" &&
        test "$CODE" = 404 && jq -e ".title | test(\"nope\")" "$TMP/out" &&
        test "$(db_sql "SELECT schedulable FROM agents WHERE id = '"'"'a1'"'"'")" = 1 &&
        call superadmin POST /manager/scheduler/operation "{\"op\": \"drain\", \"args\": []}" && test "$CODE" = 400 &&
        call superadmin POST /manager/scheduler/operation "{\"op\": \"include-agents\", \"args\": \"a1\"}" &&
        test "$CODE" = 400 &&
        call superadmin POST /manager/scheduler/operation "{\"op\": \"include-agents\", \"args\": [1]}" && test "$CODE" = 400
'

test_done
