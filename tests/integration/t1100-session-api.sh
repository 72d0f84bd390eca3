#!/bin/bash
test_description='the Backend.AI session routes: validation, get-or-create, enqueue limits, cancel, logs, waiting, listing, events'
. "$(dirname "$0")/../lib/test-lib.sh"

TT=$BUILD/test-tool

# expect_400 BODY WORDS: a create with BODY is a 400 whose title mentions WORDS
expect_400() {
        api POST /session "$1"
        test "$CODE" = 400 || { echo "got $CODE: $(cat "$TMP/out")"; return 1; }
        grep -q "application/problem+json" <(curl -s -o /dev/null -w '%{content_type}' "$BACKEND_ENDPOINT/session/x") &&
        grep -q -- "$2" "$TMP/out" || { echo "title lacks '$2': $(cat "$TMP/out")"; return 1; }
}

test_expect_success 'start a manager with an image registered' '
        start_manager &&
        api POST /admin/images "{\"name\": \"registry.test/stable/python\", \"tag\": \"3.11\", \"min_resources\": {\"cpu\": 1, \"mem\": \"2g\"}}" &&
        test "$CODE" = 201
'

test_expect_success 'create answers 201 with a UUID and PENDING' '
        api POST /session "{\"name\": \"first\", \"image\": \"python:3.11\", \"enqueueOnly\": true, \"config\": {\"resources\": {\"cpu\": 2, \"mem\": \"4g\", \"cuda.shares\": \"0.5\"}}}" &&
        test "$CODE" = 201 &&
        grep -qE "\"sessionId\":\"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\"" "$TMP/out" &&
        grep -q "\"status\":\"PENDING\"" "$TMP/out" && grep -q "\"created\":true" "$TMP/out"
'

test_expect_success 'info shows what was asked, in decimal strings, the PENDING stamp and its owner' '
        api GET /session/first && test "$CODE" = 200 &&
        grep -q "\"requestedSlots\":{\"cpu\":\"2\",\"cuda.shares\":\"0.5\",\"mem\":\"4294967296\"}" "$TMP/out" &&
        grep -q "\"image\":\"registry.test/stable/python:3.11\"" "$TMP/out" &&
        grep -qE "\"statusHistory\":\{\"PENDING\":\"20[0-9-]+T" "$TMP/out" &&
        grep -q "\"domainName\":\"default\"" "$TMP/out" &&
        grep -q "\"userEmail\":\"$TEST_ADMIN_EMAIL\"" "$TMP/out" &&
        grep -q "\"ownerAccessKey\":\"$BACKEND_ACCESS_KEY\"" "$TMP/out"
'

test_expect_success 'snake_case and camelCase aliases, numbers as strings, image minimums applied' '
        api POST /session "{\"clientSessionToken\": \"second\", \"lang\": \"registry.test/stable/python:3.11\", \"enqueue_only\": \"true\", \"config\": {\"resources\": {\"cpu\": \"0.5\", \"mem\": \"1g\"}}}" &&
        test "$CODE" = 201 &&
        api GET /session/second &&
        grep -q "\"requestedSlots\":{\"cpu\":\"1\",\"mem\":\"2147483648\"}" "$TMP/out"
'

test_expect_success 'get-or-create: the same name and image answers the existing session' '
        id=$(sed -n "s/.*\"sessionId\":\"\([^\"]*\)\".*/\1/p" "$TMP/out") &&
        api POST /session "{\"name\": \"second\", \"image\": \"python:3.11\", \"enqueueOnly\": true}" &&
        test "$CODE" = 200 && grep -q "\"created\":false" "$TMP/out" && grep -q "$id" "$TMP/out" &&
        api POST /session "{\"name\": \"second\", \"image\": \"python:3.11\", \"enqueueOnly\": true, \"reuseIfExists\": false}" &&
        test "$CODE" = 409 && grep -q "existingSessionId" "$TMP/out"
'

test_expect_success 'invalid input: a precise 400 for each mistake' '
        expect_400 "{\"image\": \"python:3.11\"}" "name" &&
        expect_400 "{\"name\": \"ab\", \"image\": \"python:3.11\"}" "4 to 64" &&
        expect_400 "{\"name\": \"-bad-name\", \"image\": \"python:3.11\"}" "name" &&
        expect_400 "{\"name\": \"okname\"}" "image" &&
        expect_400 "{\"name\": \"okname\", \"image\": \"nope:1\"}" "not registered" &&
        expect_400 "{\"name\": \"okname\", \"image\": \"python:3.11\", \"type\": \"weird\"}" "type" &&
        expect_400 "{\"name\": \"okname\", \"image\": \"python:3.11\", \"type\": \"batch\"}" "startupCommand" &&
        expect_400 "{\"name\": \"okname\", \"image\": \"python:3.11\", \"config\": {\"resources\": {\"gpu\": 1}}}" "unknown resource slot" &&
        expect_400 "{\"name\": \"okname\", \"image\": \"python:3.11\", \"config\": {\"resources\": {\"cuda.shares\": \"0.005\"}}}" "quantum" &&
        expect_400 "{\"name\": \"okname\", \"image\": \"python:3.11\", \"config\": {\"resources\": {\"mem\": \"-1g\"}}}" "negative" &&
        expect_400 "{\"name\": \"okname\", \"image\": \"python:3.11\", \"config\": {\"resources\": {\"mem\": \"4x\"}}}" "suffix" &&
        expect_400 "{\"name\": \"okname\", \"image\": \"python:3.11\", \"config\": {\"resources\": {\"cuda.device\": 1, \"cuda.shares\": 1}}}" "together" &&
        expect_400 "{\"name\": \"okname\", \"image\": \"python:3.11\", \"clusterSize\": 0}" "clusterSize" &&
        expect_400 "{\"name\": \"okname\", \"image\": \"python:3.11\", \"priority\": 101}" "priority" &&
        expect_400 "{\"name\": \"okname\", \"image\": \"python:3.11\", \"group\": \"nope\"}" "project" &&
        expect_400 "{\"name\": \"okname\", \"image\": \"python:3.11\", \"config\": {\"scaling_group\": \"nope\"}}" "resource group" &&
        expect_400 "{\"name\": \"okname\", \"image\": \"python:3.11\", \"config\": {\"environ\": {\"A\": 1}}}" "environ" &&
        expect_400 "{\"name\": \"okname\", \"image\": \"python:3.11\", \"config\": {\"mount_map\": {\"data\": \"/etc/passwd\"}}}" "mount" &&
        expect_400 "{\"name\": \"okname\", \"image\": \"python:3.11\", \"starts_at\": \"1h\"}" "batch" &&
        expect_400 "{\"name\": \"okname\", \"image\": \"python:3.11\", \"dependencies\": [\"no-such-session\"]}" "dependency" &&
        expect_400 "[1, 2]" "object" &&
        expect_400 "{\"name\": \"okname\", " "malformed JSON"
'

test_expect_success 'request limits: body size 413, JSON depth and string length 400, page size 400' '
        head -c 2000000 /dev/zero | tr "\0" "a" >"$TMP/big" &&
        h=(); while IFS= read -r l; do h+=(-H "$l"); done < <("$TT" sign POST /session "${BACKEND_ENDPOINT#http://}" "$BACKEND_ACCESS_KEY" "$BACKEND_SECRET_KEY") &&
        code=$(curl -s -o "$TMP/out" -w "%{http_code}" "${h[@]}" --data-binary @"$TMP/big" "$BACKEND_ENDPOINT/session") &&
        test "$code" = 413 &&
        deep=$(printf "{\"a\":%.0s" $(seq 40))1$(printf "}%.0s" $(seq 40)) &&
        api POST /session "$deep" && test "$CODE" = 400 && grep -q "nested deeper" "$TMP/out" &&
        long=$(head -c 70000 /dev/zero | tr "\0" "x") &&
        api POST /session "{\"name\": \"$long\"}" && test "$CODE" = 400 && grep -q "longer than" "$TMP/out" &&
        api GET "/sessions?limit=100000" && test "$CODE" = 400 && grep -q limit "$TMP/out" &&
        api GET "/sessions?offset=-1" && test "$CODE" = 400
'

test_expect_success 'enqueue limits: pending count and pending slots answer 412 at once' '
        api POST /admin/keypair-policies "{\"name\": \"tight\", \"max_pending_session_count\": 3, \"max_pending_session_resource_slots\": {\"cpu\": 4}}" &&
        test "$CODE" = 201 &&
        api POST /admin/users "{\"email\": \"limited@t.test\", \"password\": \"limited-pass\", \"resource_policy\": \"tight\"}" &&
        test "$CODE" = 201 &&
        LAK=$(sed -n "s/.*\"access_key\": *\"\([A-Z0-9]*\)\".*/\1/p" "$TMP/out") &&
        LSK=$(sed -n "s/.*\"secret_key\": *\"\([A-Za-z0-9]*\)\".*/\1/p" "$TMP/out") &&
        (
                BACKEND_ACCESS_KEY=$LAK BACKEND_SECRET_KEY=$LSK
                api POST /session "{\"name\": \"lim1\", \"image\": \"python:3.11\", \"enqueueOnly\": true, \"config\": {\"resources\": {\"cpu\": 2}}}" && test "$CODE" = 201 &&
                api POST /session "{\"name\": \"lim2\", \"image\": \"python:3.11\", \"enqueueOnly\": true, \"config\": {\"resources\": {\"cpu\": 3}}}" && test "$CODE" = 412 &&
                grep -q "pending resource limit: cpu" "$TMP/out" &&
                api POST /session "{\"name\": \"lim3\", \"image\": \"python:3.11\", \"enqueueOnly\": true, \"config\": {\"resources\": {\"cpu\": 1}}}" && test "$CODE" = 201 &&
                api POST /session "{\"name\": \"lim4\", \"image\": \"python:3.11\", \"enqueueOnly\": true, \"config\": {\"resources\": {\"cpu\": 1}}}" && test "$CODE" = 201 &&
                api POST /session "{\"name\": \"lim5\", \"image\": \"python:3.11\", \"enqueueOnly\": true, \"config\": {\"resources\": {\"cpu\": 1}}}" && test "$CODE" = 412 &&
                grep -q "pending session limit" "$TMP/out"
        )
'

test_expect_success 'DELETE cancels a PENDING session; its name becomes free; info still answers' '
        api DELETE /session/first && test "$CODE" = 200 &&
        api GET /session/first && grep -q "\"status\":\"CANCELLED\"" "$TMP/out" &&
        grep -q "\"statusInfo\":\"user-requested\"" "$TMP/out" && grep -q "\"CANCELLED\":\"20" "$TMP/out" &&
        grep -qv "\"terminationTime\":null" "$TMP/out" &&
        api DELETE /session/first && test "$CODE" = 404 &&
        api POST /session "{\"name\": \"first\", \"image\": \"python:3.11\", \"enqueueOnly\": true}" && test "$CODE" = 201 &&
        api GET "/sessions?name=first" && grep -q "\"total\":2" "$TMP/out"
'

test_expect_success 'rename (backend.ai session rename): a live session takes a free name; taken, bad or ended names are refused' '
        api POST /session "{\"name\": \"oldname\", \"image\": \"python:3.11\", \"enqueueOnly\": true}" &&
        test "$CODE" = 201 && RID=$(jq -r .sessionId "$TMP/out") &&
        api POST /session "{\"name\": \"taken\", \"image\": \"python:3.11\", \"enqueueOnly\": true}" &&
        test "$CODE" = 201 &&
        api POST "/session/$RID/rename?name=newname" && test "$CODE" = 200 &&
        jq -e ".sessionName == \"newname\"" "$TMP/out" &&
        api GET /session/newname && test "$CODE" = 200 && jq -e ".sessionId == \"$RID\"" "$TMP/out" &&
        api GET /session/oldname && test "$CODE" = 404 &&
        api POST "/session/newname/rename?name=taken" && test "$CODE" = 409 &&
        api POST "/session/newname/rename?name=no" && test "$CODE" = 400 &&
        api POST /session/newname/rename "{\"name\": \"from-body\"}" && test "$CODE" = 200 &&
        api DELETE /session/from-body && test "$CODE" = 200 &&
        api POST "/session/$RID/rename?name=after-end" && test "$CODE" = 404 &&
        api DELETE /session/taken && test "$CODE" = 200
'

test_expect_success 'logs answer result.logs, also for a session that ended' '
        api GET /session/second/logs && test "$CODE" = 200 && grep -q "{\"result\":{\"logs\":\"\"}}" "$TMP/out" &&
        api GET "/session/no-such-one/logs" && test "$CODE" = 404
'

test_expect_success 'without enqueueOnly the answer waits up to maxWaitSeconds, then says TIMEOUT; the session stays queued' '
        start=$(date +%s%N) &&
        api POST /session "{\"name\": \"waiter\", \"image\": \"python:3.11\", \"maxWaitSeconds\": 1}" &&
        elapsed=$((($(date +%s%N) - start) / 1000000)) &&
        test "$CODE" = 201 && grep -q "\"status\":\"TIMEOUT\"" "$TMP/out" &&
        test $elapsed -ge 900 &&
        test "$(field waiter status)" = PENDING
'

test_expect_success 'a waiting create answers as soon as the session is cancelled' '
        (
                OUT=$TMP/canceller.out
                # cancel once the waiting create has stored the session
                for i in $(seq 1 100); do
                        api GET /session/waiter2 && [ "$CODE" = 200 ] && break
                        sleep 0.1
                done
                api DELETE /session/waiter2
        ) >"$TMP/canceller.log" 2>&1 &
        canceller=$! &&
        start=$(date +%s%N) &&
        api POST /session "{\"name\": \"waiter2\", \"image\": \"python:3.11\", \"maxWaitSeconds\": 30}" &&
        cp "$TMP/out" "$TMP/waiter2" &&
        elapsed=$((($(date +%s%N) - start) / 1000000)) &&
        wait $canceller &&
        test "$CODE" = 201 && grep -q "\"status\":\"CANCELLED\"" "$TMP/waiter2" &&
        test $elapsed -lt 20000
'

test_expect_success 'maxWaitSeconds 0 (what Backend.AI'"'"'s SDK sends by default) waits without a limit: here until the session is cancelled 3 s later' '
        (
                OUT=$TMP/canceller0.out
                for i in $(seq 1 100); do
                        api GET /session/waiter0 && [ "$CODE" = 200 ] && break
                        sleep 0.1
                done
                sleep 3
                api DELETE /session/waiter0
        ) >"$TMP/canceller0.log" 2>&1 &
        canceller=$! &&
        api POST /session "{\"name\": \"waiter0\", \"image\": \"python:3.11\", \"maxWaitSeconds\": 0}" &&
        cp "$TMP/out" "$TMP/waiter0" &&
        wait $canceller &&
        test "$CODE" = 201 && grep -q "\"status\":\"CANCELLED\"" "$TMP/waiter0"
'

test_expect_success 'listing filters by status, owner, group and pages' '
        api GET "/sessions?status=PENDING&limit=2" && test "$CODE" = 200 &&
        grep -q "\"limit\":2" "$TMP/out" && test $(grep -o "\"sessionId\"" "$TMP/out" | wc -l) = 2 &&
        total=$(sed -n "s/.*\"total\":\([0-9]*\).*/\1/p" "$TMP/out") &&
        api GET "/sessions?status=PENDING&limit=2&offset=2" && test "$CODE" = 200 &&
        api GET "/sessions?status=CANCELLED" && ! grep -q "\"status\":\"PENDING\"" "$TMP/out" &&
        api GET "/sessions?status=WRONG" && test "$CODE" = 400 &&
        api GET "/sessions?owner=limited@t.test" && grep -q lim1 "$TMP/out" && ! grep -q waiter "$TMP/out" &&
        api GET "/sessions?group=default&type=interactive" && test "$CODE" = 200
'

test_expect_success 'events stream session_enqueued and session_cancelled with reasons' '
        h=(); while IFS= read -r l; do h+=(-H "$l"); done < <("$TT" sign GET "/events/session?sessionName=evt1" "${BACKEND_ENDPOINT#http://}" "$BACKEND_ACCESS_KEY" "$BACKEND_SECRET_KEY" text/plain)
        curl -sN -m 5 -D "$TMP/ev-headers" "${h[@]}" "$BACKEND_ENDPOINT/events/session?sessionName=evt1" >"$TMP/events" &
        p=$!
        # the stream opens with ": open": subscribed from then on
        for i in $(seq 1 50); do grep -q "^: open" "$TMP/events" && break; sleep 0.1; done
        grep -q "^: open" "$TMP/events" &&
        api POST /session "{\"name\": \"evt1\", \"image\": \"python:3.11\", \"enqueueOnly\": true}" &&
        api POST /session "{\"name\": \"evt2\", \"image\": \"python:3.11\", \"enqueueOnly\": true}" &&
        api DELETE /session/evt1
        wait $p
        grep -qi "content-type: text/event-stream" "$TMP/ev-headers" &&
        grep -q "^event: session_enqueued" "$TMP/events" && grep -q "^event: session_cancelled" "$TMP/events" &&
        grep -q "\"reason\":\"user-requested\"" "$TMP/events" && ! grep -q evt2 "$TMP/events"
'

test_expect_success 'an event stream as Backend.AI'"'"'s SDK (aiohttp) opens it: signed as application/octet-stream, no Content-Type sent; each message it parses has JSON data' '
        h=(); while IFS= read -r l; do case $l in Content-Type:*) ;; *) h+=(-H "$l") ;; esac; done < <("$TT" sign GET "/events/session?sessionName=evt4" "${BACKEND_ENDPOINT#http://}" "$BACKEND_ACCESS_KEY" "$BACKEND_SECRET_KEY" application/octet-stream)
        curl -sN -m 5 "${h[@]}" "$BACKEND_ENDPOINT/events/session?sessionName=evt4" >"$TMP/events4" &
        p=$!
        for i in $(seq 1 50); do grep -q "^: open" "$TMP/events4" && break; sleep 0.1; done
        api POST /session "{\"name\": \"evt4\", \"image\": \"python:3.11\", \"enqueueOnly\": true}" &&
        api DELETE /session/evt4
        wait $p
        grep -q "^event: session_cancelled" "$TMP/events4" &&
        python3 - "$TMP/events4" <<-\PY
	# the SDK'"'"'s parser: comment lines skipped, a blank line ends a message,
	# each message'"'"'s data fed to json.loads; no retry: (it reads seconds)
	import json, sys
	msgs, lines = [], []
	for line in open(sys.argv[1]).read().split("\n"):
	    if line.startswith(":"):
	        continue
	    if line == "":
	        if lines:
	            msgs.append(lines)
	        lines = []
	        continue
	    lines.append(line)
	assert msgs, "no message"
	for m in msgs:
	    fields = dict(l.split(":", 1) for l in m)
	    assert "retry" not in fields, m
	    json.loads(fields["data"])
	PY
'

test_expect_success 'why a PENDING session waits comes as a session_waiting event when the scheduler finds it' '
        h=(); while IFS= read -r l; do h+=(-H "$l"); done < <("$TT" sign GET "/events/session?sessionName=evt3&waiting=1" "${BACKEND_ENDPOINT#http://}" "$BACKEND_ACCESS_KEY" "$BACKEND_SECRET_KEY" text/plain)
        curl -sN -m 8 "${h[@]}" "$BACKEND_ENDPOINT/events/session?sessionName=evt3&waiting=1" >"$TMP/events3" &
        p=$!
        for i in $(seq 1 50); do grep -q "^: open" "$TMP/events3" && break; sleep 0.1; done
        api POST /session "{\"name\": \"evt3\", \"image\": \"python:3.11\", \"enqueueOnly\": true}" &&
        for i in $(seq 1 70); do grep -q "^event: session_waiting" "$TMP/events3" && break; sleep 0.1; done
        kill $p 2>/dev/null; wait $p
        grep -q "^event: session_waiting" "$TMP/events3" &&
        grep -A1 "^event: session_waiting" "$TMP/events3" | grep -q "\"status\":\"PENDING\",\"reason\":\"[^\"]" &&
        OUT=$TMP/evt3 api GET /session/evt3 &&
        reason=$(grep -A1 "^event: session_waiting" "$TMP/events3" | sed -n "s/.*\"reason\":\"\([^\"]*\)\".*/\1/p" | head -n 1) &&
        grep -qF "$reason" "$TMP/evt3" &&
        api DELETE /session/evt3
'

test_expect_success 'check-presets: limits, usage and what fits' '
        api POST /admin/presets "{\"name\": \"small\", \"resource_slots\": {\"cpu\": 1, \"mem\": \"1g\"}}" &&
        api PATCH /admin/keypair-policies/default "{\"total_resource_slots\": {\"cpu\": 8, \"mem\": \"16g\"}}" &&
        api POST /resource/check-presets "{\"group\": \"default\"}" && test "$CODE" = 200 &&
        grep -q "\"keypair_limits\":{\"cpu\":\"8\",\"mem\":\"17179869184\",\"cuda.device\":\"Infinity\",\"cuda.shares\":\"Infinity\"}" "$TMP/out" &&
        grep -q "\"group_limits\":{\"cpu\":\"Infinity\"" "$TMP/out" &&
        grep -q "\"name\":\"small\"" "$TMP/out" &&
        grep -q "\"allocatable\":false" "$TMP/out" &&
        api GET /resource/presets && grep -q "\"presets\":\[{\"name\":\"small\"" "$TMP/out" &&
        api POST /resource/check-presets "{\"group\": \"nope\"}" && test "$CODE" = 404
'

test_done
