#!/bin/bash
test_description='the tessera CLI: login, admin commands, sessions, events, --json, exit codes'
. "$(dirname "$0")/../lib/test-lib.sh"

export XDG_CONFIG_HOME=$TMP/config
T=$TESSERA

test_expect_success 'start' '
        start_manager
'

test_expect_success 'exit codes: 0 ok, 1 error with the problem title, 2 usage' '
        $T version >"$TMP/out" && grep -q "client: tessera .* (API v9.20250722)" "$TMP/out" &&
        grep -q "server: .*API v8.20240315" "$TMP/out" &&
        { $T session info no-such-session 2>"$TMP/err"; test $? = 1; } &&
        grep -q "error: session .no-such-session. not found (HTTP 404)" "$TMP/err" &&
        { $T session frobnicate 2>/dev/null; test $? = 2; } &&
        { $T --no-such-flag 2>/dev/null; test $? = 2; } &&
        $T session --help | grep -q create && $T admin --help | grep -q keypair
'

test_expect_success 'admin: domain, project with members, user with main keypair, policy, preset, image' '
        $T admin domain create lab --description "the lab" &&
        $T admin project create research --domain lab &&
        $T admin resource-group allow default --domain lab &&
        $T --json admin resource-group show default | jq -e ".domains | index(\"lab\")" >/dev/null &&
        echo "a-long-password" | $T --json admin user create ann@lab.test --password-stdin --domain lab --project research --role user >"$TMP/ann" &&
        jq -e ".keypair.secret_key | length == 40" "$TMP/ann" >/dev/null &&
        $T admin project members research --domain lab | grep -q ann@lab.test &&
        $T admin policy create tight --total cpu=4 --total mem=8g --max-concurrent-sessions 3 &&
        $T --json admin policy show tight | jq -e ".total_resource_slots.mem == \"8589934592\"" >/dev/null &&
        $T admin preset create small -r cpu=1 -r mem=2g &&
        $T admin image create registry.test/python:3.11 --min cpu=1 --min mem=1g --label ai.backend.kernelspec=1 &&
        $T admin image ls | grep -q "registry.test/python" &&
        $T admin domain ls | grep -q lab
'

test_expect_success 'admin update and delete, with errors for what does not exist' '
        $T admin user update ann@lab.test --full-name "Ann Lab" &&
        $T --json admin user show ann@lab.test | jq -e ".full_name == \"Ann Lab\"" >/dev/null &&
        $T admin preset rm small && test_must_fail $T admin preset show small &&
        test_must_fail $T admin policy rm no-such-policy 2>"$TMP/err" && grep -q "HTTP 404" "$TMP/err"
'

test_expect_success 'login with email and password writes a 0600 config the next commands use' '
        ep=$BACKEND_ENDPOINT &&
        echo "a-long-password" | $T login --endpoint "$ep" --domain lab --email ann@lab.test --password-stdin &&
        test "$(stat -c %a "$XDG_CONFIG_HOME/tessera/config")" = 600 &&
        (
                unset BACKEND_ENDPOINT BACKEND_ACCESS_KEY BACKEND_SECRET_KEY
                $T --json api GET /auth/role | jq -e ".role == \"user\"" >/dev/null &&
                $T session create -n ann-1 -i python:3.11 --group research -r cpu=1 --enqueue-only &&
                $T session ls | grep -q ann-1 &&
                $T logout && test ! -e "$XDG_CONFIG_HOME/tessera/config" &&
                test_must_fail $T session ls
        ) &&
        echo "wrong-password" | test_must_fail $T login --endpoint "$ep" --domain lab --email ann@lab.test --password-stdin
'

test_expect_success 'session create, info, ls with filters, logs, rm' '
        $T session create -n cli-one -i python:3.11 -r cpu=2 -r mem=4g --env A=b --enqueue-only >"$TMP/out" &&
        grep -q PENDING "$TMP/out" &&
        $T --json session info cli-one | jq -e ".requestedSlots.cpu == \"2\" and .environ.A == \"b\"" >/dev/null &&
        $T session ls --status PENDING | grep -q cli-one &&
        $T --json session ls --status CANCELLED | jq -e ".items | length == 0" >/dev/null &&
        $T session logs cli-one &&
        $T session rm cli-one &&
        $T --json session info cli-one | jq -e ".status == \"CANCELLED\"" >/dev/null &&
        $T session ls --all-status | grep cli-one | grep -q CANCELLED
'

test_expect_success 'session create --max-wait: a wait that runs out says the session stays queued' '
        $T session create -n cli-wait -i python:3.11 -r cpu=1 -r mem=1g --max-wait 1 >"$TMP/out" &&
        grep -q "TIMEOUT (not started within the wait: it stays queued)" "$TMP/out" &&
        $T session ls --status PENDING | grep -q cli-wait &&
        $T session rm cli-wait >/dev/null
'

test_expect_success 'session create --count N: a job array, NAME-1 ... NAME-N, each the same request' '
        $T session create -n arr -i python:3.11 -r cpu=1 -r mem=1g -t batch -c true --enqueue-only --count 3 >"$TMP/out" &&
        test "$(grep -c "^session .arr-[123]. .*PENDING" "$TMP/out")" = 3 &&
        $T --json session ls --status PENDING | jq -e "[.items[] | select(.sessionName | startswith(\"arr-\"))] | length == 3 and all(.type == \"BATCH\" or .type == \"batch\")" >/dev/null &&
        $T --json session info arr-2 | jq -e ".requestedSlots.cpu == \"1\"" >/dev/null &&
        test_must_fail $T session create -n arr0 -i python:3.11 --enqueue-only --count 0 2>"$TMP/err" &&
        grep -q "count" "$TMP/err" &&
        test_must_fail $T session create -n arr -i python:3.11 --enqueue-only --no-reuse --count 2 >"$TMP/out" 2>"$TMP/err" &&
        grep -q "arr-1" "$TMP/err" &&
        $T session rm arr-1 arr-2 arr-3 >/dev/null
'

test_expect_success 'session events prints enqueue and cancel as they happen' '
        ( timeout 30 $T --json session events cli-two --count 2 >"$TMP/events" ) &
        p=$! &&
        sleep 2 &&
        $T session create -n cli-two -i python:3.11 --enqueue-only >/dev/null &&
        $T session rm cli-two >/dev/null &&
        wait $p &&
        test $(wc -l <"$TMP/events") = 2 &&
        head -n 1 "$TMP/events" | jq -e ".event == \"session_enqueued\" and .sessionName == \"cli-two\"" >/dev/null &&
        tail -n 1 "$TMP/events" | jq -e ".event == \"session_cancelled\" and .status == \"CANCELLED\"" >/dev/null
'

test_expect_success 'api sends raw signed requests and exits 1 on errors' '
        $T api GET /resource/presets >"$TMP/out" && jq -e ".presets" "$TMP/out" >/dev/null &&
        test_must_fail $T api GET /session/none &&
        $T api -i GET / | head -n 1 | grep -q "200"
'

test_done
