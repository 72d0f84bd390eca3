#!/bin/bash
test_description='GET /sessions: the largest query any role can build (every status, repeated, every filter, paging) is answered, on both databases; an empty status list is a 400'
. "$(dirname "$0")/../lib/test-lib.sh"

ALL=PENDING,SCHEDULED,PREPARING,PULLING,CREATING,RUNNING,TERMINATING,TERMINATED,CANCELLED,ERROR

test_expect_success 'start a manager with a session' '
        start_manager &&
        api POST /admin/images "{\"name\": \"registry.test/stable/python\", \"tag\": \"3.11\"}" &&
        test "$CODE" = 201 &&
        api POST /session "{\"name\": \"listed\", \"image\": \"python:3.11\", \"enqueueOnly\": true}" &&
        test "$CODE" = 201
'

# 30 statuses (every one, three times over) with all six filters, the owner
# (bound twice) and paging: more arguments than the old args[32] held.
worst="status=$ALL,$ALL,$ALL&owner=$BACKEND_ACCESS_KEY&group=default&type=interactive&name=listed"
worst="$worst&resource_group=default&domain=default&limit=7&offset=0"

test_expect_success 'the worst-case query is answered and finds the session' '
        api GET "/sessions?$worst" && test "$CODE" = 200 &&
        jq -e ".total == 1 and .items[0].sessionName == \"listed\" and .limit == 7" "$TMP/out"
'

test_expect_success 'a later status in a long list still counts' '
        api GET "/sessions?status=$ALL,$ALL,$ALL,PENDING" && test "$CODE" = 200 &&
        jq -e ".total == 1" "$TMP/out" &&
        api GET "/sessions?status=ERROR,ERROR,ERROR,ERROR,ERROR,ERROR,ERROR,ERROR,ERROR,ERROR,ERROR,ERROR,ERROR,ERROR,ERROR,ERROR,ERROR,ERROR,ERROR,ERROR,ERROR,ERROR,ERROR,ERROR,PENDING" &&
        test "$CODE" = 200 && jq -e ".total == 1" "$TMP/out"
'

test_expect_success 'a user (the scope bound too) gets the worst-case query answered' '
        api POST /admin/users "{\"email\": \"lister@test.local\", \"password\": \"lister-password-1\", \"role\": \"user\", \"projects\": [\"default\"]}" &&
        test "$CODE" = 201 &&
        ak=$(jq -r "[.. | objects | .access_key? | strings][0]" "$TMP/out") &&
        sk=$(jq -r "[.. | objects | .secret_key? | strings][0]" "$TMP/out") && test ${#sk} = 40 &&
        BACKEND_ACCESS_KEY=$ak BACKEND_SECRET_KEY=$sk api GET "/sessions?$worst" && test "$CODE" = 200 &&
        jq -e ".total == 0" "$TMP/out"
'

test_expect_success 'an empty status list is a 400 on both databases, not a database error' '
        for s in "" "," ",,," "%2C"; do
                api GET "/sessions?status=$s" && test "$CODE" = 400 &&
                jq -e ".title | test(\"status\")" "$TMP/out" || return 1
        done
'

test_expect_success 'an unknown status is a 400' '
        api GET "/sessions?status=RUNNING,nope" && test "$CODE" = 400 && grep -q nope "$TMP/out"
'

test_expect_success 'nothing went wrong in the manager' '
        ! grep -E "postgresql:|syntax error|ERROR" "$MANAGER_LOG"
'

test_done
