#!/bin/bash
test_description='inside a running session through the API: execute (query and batch), interrupt, upload, download and list files, relayed by the manager to the agent'
. "$(dirname "$0")/../lib/test-lib.sh"
. "$(dirname "$0")/../lib/registry.sh"

test_with_containers
WAIT_TENTHS=600 # a Debian image: pulls and starts under ASan on a loaded machine

# exec NAME MODE CODE [RUNID]: POST /session/NAME, answer in $TMP/out
exec_() {
        local body
        body=$(jq -cn --arg m "$2" --arg c "$3" --arg r "${4:-}" '{mode: $m, code: $c} + (if $r == "" then {} else {runId: $r} end)')
        api POST "/session/$1" "$body"
}

# run_to_end NAME MODE CODE: execute, then `continue` until finished; all
# console output in $TMP/console, the last answer in $TMP/out
run_to_end() {
        local run status
        exec_ "$1" "$2" "$3" && test "$CODE" = 200 || { echo "execute: $CODE $(cat "$TMP/out")"; return 1; }
        : >"$TMP/console"
        for _ in $(seq 1 60); do
                jq -r '.result.console[]? | select(.[0] == "stdout" or .[0] == "stderr") | .[1]' "$TMP/out" >>"$TMP/console"
                status=$(jq -r .result.status "$TMP/out")
                [ "$status" = finished ] && return 0
                [ "$status" = continued ] || { echo "status $status: $(cat "$TMP/out")"; return 1; }
                run=$(jq -r .result.runId "$TMP/out")
                exec_ "$1" continue "" "$run" && test "$CODE" = 200 || { echo "continue: $CODE"; return 1; }
        done
        echo "never finished"
        return 1
}

# upload NAME FILE AS: multipart POST /session/NAME/upload, as Backend.AI's client sends it
upload() {
        local h=()
        while IFS= read -r l; do
                case $l in Content-Type:*) ;; *) h+=(-H "$l") ;; esac
        done < <("$BUILD/test-tool" sign POST "/session/$1/upload" "${BACKEND_ENDPOINT#http://}" \
                "$BACKEND_ACCESS_KEY" "$BACKEND_SECRET_KEY" multipart/form-data)
        CODE=$(curl -s -m 40 -o "$TMP/out" -w '%{http_code}' "${h[@]}" -F "src=@$2;filename=$3" \
                "$BACKEND_ENDPOINT/session/$1/upload") || true
}

# other_user: act as a second, ordinary user (created on first use)
other_user() {
        if [ ! -s "$TMP/other.keys" ]; then
                OUT=$TMP/other api POST /admin/users "{\"email\": \"other@t.test\", \"password\": \"other-pass\"}" &&
                test "$CODE" = 201 &&
                jq -r ".keypair.access_key, .keypair.secret_key" "$TMP/other" >"$TMP/other.keys" || return 1
        fi
        BACKEND_ACCESS_KEY=$(sed -n 1p "$TMP/other.keys")
        BACKEND_SECRET_KEY=$(sed -n 2p "$TMP/other.keys")
}

test_expect_success 'a python session runs on the dev agent' '
        start_dev_with_image python 3.11 &&
        api POST /session "{\"name\": \"pysess\", \"image\": \"python:3.11\", \"enqueueOnly\": true, \"config\": {\"resources\": {\"cpu\": 1, \"mem\": \"512m\"}}}" &&
        test "$CODE" = 201 &&
        wait_status pysess RUNNING
'

test_expect_success 'query mode runs Python and keeps its state between calls' '
        run_to_end pysess query "x = 6 * 7" &&
        run_to_end pysess query "print(x, flush=True)" &&
        grep -qx 42 "$TMP/console"
'

test_expect_success 'batch mode runs a shell command and reports its exit code' '
        run_to_end pysess batch "echo out; echo err >&2; exit 3" &&
        grep -qx out "$TMP/console" && grep -qx err "$TMP/console" &&
        test "$(jq .result.exitCode "$TMP/out")" = 3
'

test_expect_success 'a long command is streamed with continue until it finishes' '
        run_to_end pysess batch "for i in 1 2 3; do echo tick \$i; sleep 1; done" &&
        test "$(grep -c "^tick" "$TMP/console")" = 3 &&
        test "$(jq .result.exitCode "$TMP/out")" = 0
'

test_expect_success 'interrupt stops a running command' '
        exec_ pysess batch "sleep 60" && test "$CODE" = 200 &&
        RUN=$(jq -r .result.runId "$TMP/out") &&
        test "$(jq -r .result.status "$TMP/out")" = continued &&
        api POST /session/pysess/interrupt "{\"runId\": \"$RUN\"}" && test "$CODE" = 200 &&
        for _ in $(seq 1 20); do
                exec_ pysess continue "" "$RUN" && test "$CODE" = 200 &&
                test "$(jq -r .result.status "$TMP/out")" = finished && break
        done &&
        test "$(jq -r .result.status "$TMP/out")" = finished &&
        test "$(jq .result.exitCode "$TMP/out")" != 0
'

test_expect_success 'tessera session exec streams the output and exits with the command'"'"'s code' '
        "$TESSERA" session exec pysess "echo one; sleep 1.5; echo two >&2" >"$TMP/cli.out" 2>"$TMP/cli.err" &&
        test "$(cat "$TMP/cli.out")" = one && test "$(cat "$TMP/cli.err")" = two &&
        { "$TESSERA" session exec pysess "exit 5"; test $? = 5; } &&
        "$TESSERA" session exec --mode query pysess "print(x + 1)" >"$TMP/cli.out" &&
        test "$(cat "$TMP/cli.out")" = 43
'

test_expect_success 'a terminal over a WebSocket: a shell that runs commands, resizes and exits' '
        pty "/stream/session/pysess/pty?rows=30&cols=100" \
                "send:echo \$((6 * 7))-ok\n" expect:42-ok \
                "send:stty size\n" "expect:30 100" \
                resize:40:120 "send:stty size\n" "expect:40 120" \
                "send:id -un; pwd\n" expect:/home/work \
                "send:exit\n" expect-close >"$TMP/pty.out" ||
        { cat "$TMP/pty.out"; false; }
'

test_expect_success 'terminal errors: bad messages are answered, other users and plain requests are refused' '
        pty /stream/session/pysess/pty "raw:not json" "expect-error:messages are JSON" \
                "raw:{\"type\": \"stdin\", \"chars\": \"%%%\"}" "expect-error:base64" close expect-close &&
        api GET /stream/session/pysess/pty && test "$CODE" = 400 &&
        (
                owner=$BACKEND_ACCESS_KEY &&
                other_user &&
                test_must_fail pty /stream/session/pysess/pty "send:id\n" 2>"$TMP/pty.err" &&
                grep -q 404 "$TMP/pty.err" &&
                test_must_fail pty "/stream/session/pysess/pty?owner_access_key=$owner" "send:id\n" 2>"$TMP/pty.err" &&
                grep -q " 403 " "$TMP/pty.err"
        )
'

test_expect_success 'tessera session upload, ls-files and download move files in and out' '
        head -c 70000 /dev/urandom >"$TMP/up.bin" && echo "some text" >"$TMP/note.txt" &&
        "$TESSERA" session upload -d cli pysess "$TMP/up.bin" "$TMP/note.txt" >"$TMP/cli.out" &&
        grep -q "uploaded 2 files" "$TMP/cli.out" &&
        "$TESSERA" session ls-files pysess cli >"$TMP/cli.out" &&
        grep -q " 70000 .* up.bin$" "$TMP/cli.out" && grep -q "note.txt$" "$TMP/cli.out" &&
        (cd "$TMP" && "$TESSERA" session download pysess cli/up.bin -o back.bin) &&
        cmp "$TMP/up.bin" "$TMP/back.bin" &&
        test "$("$TESSERA" session download pysess cli/note.txt -o -)" = "some text" &&
        test_must_fail "$TESSERA" session download pysess cli/missing -o "$TMP/x" 2>"$TMP/cli.err" &&
        test ! -e "$TMP/x"
'

test_expect_success 'bad execute requests get a 400 that says why' '
        api POST /session/pysess "{\"code\": \"1\"}" && test "$CODE" = 400 &&
        grep -q "mode is required" "$TMP/out" &&
        api POST /session/pysess "{\"mode\": \"shell\", \"code\": \"1\"}" && test "$CODE" = 400 &&
        api POST /session/pysess "{\"mode\": \"continue\"}" && test "$CODE" = 400 &&
        grep -q runId "$TMP/out" &&
        api POST /session/nosuch "{\"mode\": \"query\", \"code\": \"1\"}" && test "$CODE" = 404
'

test_expect_success 'a file uploaded arrives in the home directory with the same bytes' '
        head -c 300000 /dev/urandom >"$TMP/blob" &&
        upload pysess "$TMP/blob" data/blob.bin && test "$CODE" = 200 &&
        run_to_end pysess batch "sha256sum data/blob.bin" &&
        test "$(cut -d" " -f1 "$TMP/console")" = "$(sha256sum "$TMP/blob" | cut -d" " -f1)"
'

test_expect_success 'download_single gives a file back byte for byte' '
        run_to_end pysess batch "printf \"made inside\\n\" > made.txt" &&
        OUT=$TMP/dl api GET "/session/pysess/download_single?file=data/blob.bin" && test "$CODE" = 200 &&
        cmp "$TMP/dl" "$TMP/blob" &&
        OUT=$TMP/dl api POST /session/pysess/download_single "{\"file\": \"made.txt\"}" && test "$CODE" = 200 &&
        test "$(cat "$TMP/dl")" = "made inside"
'

test_expect_success 'files lists a directory as Backend.AI does' '
        api GET "/session/pysess/files?path=data" && test "$CODE" = 200 &&
        jq -r .files "$TMP/out" >"$TMP/files" &&
        jq -e "map(select(.filename == \"blob.bin\" and .size == 300000 and (.mode | startswith(\"-rw\")))) | length == 1" "$TMP/files" &&
        test "$(jq -r .abspath "$TMP/out")" = /home/work/data &&
        api GET /session/pysess/files "{\"path\": \"/home/work/data\"}" && test "$CODE" = 200 &&
        jq -r .files "$TMP/out" | jq -e "map(.filename) | index(\"blob.bin\")" &&
        api GET /session/pysess/files "{\"path\": \"/home/work\"}" && test "$CODE" = 200 &&
        test "$(jq -r .abspath "$TMP/out")" = /home/work &&
        api GET /session/pysess/files "{\"path\": \"/home/workshop\"}" && test "$CODE" = 400
'

test_expect_success 'paths cannot leave the home directory' '
        api GET "/session/pysess/download_single?file=../../etc/passwd" && test "$CODE" = 400 &&
        api GET "/session/pysess/download_single?file=/etc/passwd" && test "$CODE" = 400 &&
        api GET "/session/pysess/files?path=a/../../.." && test "$CODE" = 400 &&
        upload pysess "$TMP/blob" ../escape.bin && test "$CODE" = 400 &&
        run_to_end pysess batch "ln -s /etc link" &&
        api GET "/session/pysess/download_single?file=link/passwd" && test "$CODE" = 400 &&
        api GET "/session/pysess/download_single?file=missing.txt" && test "$CODE" = 404
'

test_expect_success 'another user cannot execute in, or read from, the session' '
        (
                other_user &&
                exec_ pysess query "1" && test "$CODE" = 404 &&
                api GET "/session/pysess/download_single?file=made.txt" && test "$CODE" = 404
        )
'

test_expect_success 'the agent refuses requests that the manager did not sign' '
        ADDR=$(OUT=$TMP/agents api GET /admin/agents && jq -r ".items[0].address" "$TMP/agents") &&
        test -n "$ADDR" && test "$ADDR" != null &&
        K=$(ls "$AGENT_STATE/containers" | head -n 1) &&
        code=$(curl -s -o "$TMP/raw" -w "%{http_code}" -X POST --data "{\"mode\":\"batch\",\"code\":\"id\"}" \
                "http://$ADDR/v1/kernels/$K/execute") &&
        test "$code" = 403 &&
        code=$(curl -s -o "$TMP/raw" -w "%{http_code}" -X POST --data "{}" \
                -H "Authorization: TesseraManager signature=00" -H "X-Tessera-Agent-Time: $(date +%s)" \
                "http://$ADDR/v1/kernels/$K/execute") &&
        test "$code" = 403 &&
        head -c 60000000 /dev/zero >"$TMP/big" &&
        code=$(curl -s -o "$TMP/raw" -w "%{http_code}" -X PUT --data-binary @"$TMP/big" \
                -H "Authorization: TesseraManager signature=00" -H "X-Tessera-Agent-Time: $(date +%s)" \
                -H "X-Tessera-Content-SHA256: $(printf %064d 0)" "http://$ADDR/v1/kernels/$K/files?path=big") &&
        test "$code" = 403 && grep -q "signature mismatch" "$TMP/raw" &&
        test_must_fail test -e "$AGENT_STATE/containers/$K/bundle/rootfs/home/work/big"
'

test_expect_success 'the logs of a running session are read live from its agent' '
        api POST /session "{\"name\": \"talker\", \"image\": \"python:3.11\", \"type\": \"batch\", \"enqueueOnly\": true, \"startupCommand\": \"echo live-line; sleep 120\", \"config\": {\"resources\": {\"cpu\": 1, \"mem\": \"256m\"}}}" &&
        test "$CODE" = 201 &&
        wait_status talker RUNNING &&
        for _ in $(seq 1 50); do
                OUT=$TMP/logs api GET /session/talker/logs
                jq -r .result.logs "$TMP/logs" | grep -qx live-line && break
                sleep 0.1
        done &&
        jq -r .result.logs "$TMP/logs" | grep -qx live-line &&
        api DELETE /session/talker && test "$CODE" = 200
'

test_expect_success 'bootstrap_script runs before the startup command, as the user, in the home directory' '
        api POST /session "{\"name\": \"booted\", \"image\": \"python:3.11\", \"type\": \"batch\", \"enqueueOnly\": true, \"bootstrap_script\": \"echo prepared-by-\$(id -u) >ready\", \"startupCommand\": \"cat ready\", \"config\": {\"resources\": {\"cpu\": 1, \"mem\": \"256m\"}}}" &&
        test "$CODE" = 201 &&
        wait_status booted TERMINATED &&
        test "$(field booted result)" = SUCCESS &&
        OUT=$TMP/logs api GET /session/booted/logs &&
        jq -r .result.logs "$TMP/logs" | grep -qx prepared-by-1000 &&
        api POST /session "{\"name\": \"boot-fails\", \"image\": \"python:3.11\", \"type\": \"batch\", \"enqueueOnly\": true, \"bootstrap_script\": \"exit 4\", \"startupCommand\": \"echo never-printed\", \"config\": {\"resources\": {\"cpu\": 1, \"mem\": \"256m\"}}}" &&
        test "$CODE" = 201 &&
        wait_status boot-fails TERMINATED &&
        test "$(field boot-fails result)" = FAILURE &&
        OUT=$TMP/logs api GET /session/boot-fails/logs &&
        jq -r .result.logs "$TMP/logs" >"$TMP/logs.text" &&
        grep -q "bootstrap script failed (exit status 4)" "$TMP/logs.text" &&
        ! grep -q never-printed "$TMP/logs.text"
'

# stream_exec STEP...: ws-exec.py on pysess's streamed execution; frames in $TMP/sx
stream_exec() {
        ws_exec /stream/session/pysess/execute "$@" >"$TMP/sx" || { cat "$TMP/sx"; return 1; }
}

test_expect_success 'streamed execution (backend.ai run): query mode, one finished frame, closed 1000' '
        stream_exec "send:{\"code\": \"print(x * 2)\", \"mode\": \"query\", \"options\": {}}" until:finished \
                until-close:1000 &&
        grep -qx "stdout \"84\\\\n\"" "$TMP/sx" &&
        grep "^frame " "$TMP/sx" | tail -n 1 | sed "s/^frame //" |
                jq -e ".status == \"finished\" and has(\"console\") and has(\"exitCode\") and has(\"options\") and has(\"files\")"
'

test_expect_success 'streamed execution: a batch command streams continued frames, then its exit code' '
        stream_exec "send:{\"code\": \"for i in 1 2 3; do echo tick \$i; sleep 1; done; exit 4\", \"mode\": \"batch\", \"options\": {\"exec\": null}}" \
                until:finished until-close:1000 &&
        grep -c "\"status\": \"continued\"" "$TMP/sx" | grep -qv "^0$" &&
        grep -qx "stdout \"tick 1\\\\ntick 2\\\\ntick 3\\\\n\"" "$TMP/sx" &&
        grep "\"status\": \"finished\"" "$TMP/sx" | sed "s/^frame //" | jq -e ".exitCode == 4"
'

test_expect_success 'streamed execution: input() asks with waiting-input, a text frame answers it' '
        stream_exec "send:{\"code\": \"who = input(\\\"who? \\\"); print(\\\"hello \\\" + who)\", \"mode\": \"query\"}" \
                until:waiting-input "send:world" until:finished until-close:1000 &&
        grep "\"status\": \"waiting-input\"" "$TMP/sx" | sed "s/^frame //" | jq -e ".options.is_password == false" &&
        grep -q "stdout \"who? hello world\\\\n\"" "$TMP/sx"
'

test_expect_success 'streamed execution: bad requests get {"status": "error"} and 1008; others and plain GETs are refused' '
        ws_exec /stream/session/pysess/execute "send:not json" until-close:1008 >"$TMP/sx" &&
        grep "^frame " "$TMP/sx" | sed "s/^frame //" | jq -e ".status == \"error\" and (.msg | test(\"JSON object\"))" &&
        ws_exec /stream/session/pysess/execute "send:{\"code\": \"1\", \"mode\": \"shell\"}" until-close:1008 >"$TMP/sx" &&
        grep -q "mode: must be query or batch" "$TMP/sx" &&
        ws_exec /stream/session/pysess/execute "binary:{}" until-close:1008 >"$TMP/sx" &&
        grep -q "text frames (UTF-8) only" "$TMP/sx" &&
        api GET /stream/session/pysess/execute && test "$CODE" = 400 &&
        (
                other_user &&
                test_must_fail ws_exec /stream/session/pysess/execute "send:{\"code\": \"1\"}" until:finished 2>"$TMP/sx.err" >&2 &&
                grep -q 404 "$TMP/sx.err"
        )
'

test_expect_success 'download (backend.ai session download): one tar per path in multipart/mixed, directories whole' '
        run_to_end pysess batch "mkdir -p tree/sub && printf a >tree/a.txt && printf bb >tree/sub/b.txt && chmod 750 tree/sub && ln -s /etc/passwd tree/pw" &&
        API_HEADERS_OUT=$TMP/dl.h OUT=$TMP/dl api GET /session/pysess/download \
                "{\"files\": [\"tree/\", \"/home/work/made.txt\", \"data/blob.bin\"]}" &&
        test "$CODE" = 200 &&
        mkdir "$TMP/dl.d" &&
        python3 "$TEST_ROOT/tests/lib/multipart-untar.py" "$TMP/dl.h" "$TMP/dl" "$TMP/dl.d" >"$TMP/dl.names" &&
        sort "$TMP/dl.names" >"$TMP/dl.sorted" &&
        printf "%s\n" blob.bin made.txt tree tree/a.txt tree/sub tree/sub/b.txt >"$TMP/dl.expect" &&
        test_cmp "$TMP/dl.expect" "$TMP/dl.sorted" &&
        test "$(cat "$TMP/dl.d/tree/a.txt")" = a && test "$(cat "$TMP/dl.d/tree/sub/b.txt")" = bb &&
        test "$(stat -c %a "$TMP/dl.d/tree/sub")" = 750 &&
        test "$(cat "$TMP/dl.d/made.txt")" = "made inside" &&
        cmp "$TMP/dl.d/blob.bin" "$TMP/blob"
'

test_expect_success 'download: the home directory itself, and its errors' '
        API_HEADERS_OUT=$TMP/home.h OUT=$TMP/home api GET /session/pysess/download "{\"files\": [\"/home/work\"]}" &&
        test "$CODE" = 200 &&
        mkdir "$TMP/home.d" &&
        python3 "$TEST_ROOT/tests/lib/multipart-untar.py" "$TMP/home.h" "$TMP/home" "$TMP/home.d" >/dev/null &&
        cmp "$TMP/home.d/work/data/blob.bin" "$TMP/blob" &&
        api GET /session/pysess/download "{\"files\": [\"missing.txt\"]}" && test "$CODE" = 404 &&
        grep -q "missing.txt" "$TMP/out" &&
        api GET /session/pysess/download "{\"files\": [\"../x\"]}" && test "$CODE" = 400 &&
        api GET /session/pysess/download "{\"files\": [\"/etc/passwd\"]}" && test "$CODE" = 400 &&
        api GET /session/pysess/download "{\"files\": [\"tree/pw\"]}" && test "$CODE" = 400 &&
        api GET /session/pysess/download "{\"files\": []}" && test "$CODE" = 400 &&
        api GET /session/pysess/download && test "$CODE" = 400 &&
        (
                other_user &&
                api GET /session/pysess/download "{\"files\": [\"made.txt\"]}" && test "$CODE" = 404
        )
'

test_expect_success 'task logs (backend.ai task-logs): /session/_/logs?taskId= answers the text, by session or kernel id' '
        ID=$(OUT=$TMP/info api GET /session/pysess && jq -r .sessionId "$TMP/info") &&
        KID=$(db_sql "SELECT id FROM kernels WHERE session_id = '"'"'$ID'"'"'") &&
        API_HEADERS_OUT=$TMP/tl.h OUT=$TMP/tl api GET "/session/_/logs?taskId=$ID" && test "$CODE" = 200 &&
        grep -qi "^content-type: text/plain" "$TMP/tl.h" &&
        OUT=$TMP/tl2 api GET "/session/_/logs?taskId=$KID" && test "$CODE" = 200 &&
        OUT=$TMP/logs api GET /session/pysess/logs && test "$CODE" = 200 &&
        jq -j .result.logs "$TMP/logs" >"$TMP/logs.text" &&
        cmp "$TMP/tl" "$TMP/tl2" && cmp "$TMP/tl" "$TMP/logs.text" &&
        api GET "/session/_/logs" && test "$CODE" = 400 &&
        api GET "/session/_/logs?taskId=$(cat /proc/sys/kernel/random/uuid)" && test "$CODE" = 404 &&
        (
                other_user &&
                api GET "/session/_/logs?taskId=$ID" && test "$CODE" = 404
        )
'

test_expect_success 'complete answers the Python interpreter'"'"'s completions, and apps lists the image'"'"'s apps' '
        api POST /session/pysess/complete "{\"code\": \"pri\", \"options\": {\"row\": 0, \"col\": 3, \"line\": \"pri\", \"post\": \"\"}}" &&
        test "$CODE" = 200 && jq -e ".result.status == \"finished\" and (.result.completions | index(\"print(\"))" "$TMP/out" &&
        api POST /session/pysess/complete "{\"code\": 5}" && test "$CODE" = 400 &&
        api GET /stream/session/pysess/apps && test "$CODE" = 200 &&
        jq -e "type == \"array\"" "$TMP/out" &&
        (
                other_user &&
                api GET /stream/session/pysess/apps && test "$CODE" = 404
        )
'

test_expect_success 'restart (PATCH, backend.ai session restart): processes and Python state end, files stay' '
        run_to_end pysess query "kept = 41" &&
        run_to_end pysess batch "nohup sleep 600 >/dev/null 2>&1 & echo started" &&
        run_to_end pysess batch "grep -l \"^sleep\" /proc/[0-9]*/cmdline | wc -l" &&
        test "$(cat "$TMP/console")" -ge 1 &&
        api PATCH /session/pysess && test "$CODE" = 204 &&
        test "$(field pysess status)" = RUNNING &&
        run_to_end pysess batch "grep -l \"^sleep\" /proc/[0-9]*/cmdline | wc -l" &&
        test "$(cat "$TMP/console")" = 0 &&
        run_to_end pysess query "print(\"kept\" in globals())" &&
        test "$(cat "$TMP/console")" = False &&
        run_to_end pysess batch "cat made.txt" && test "$(cat "$TMP/console")" = "made inside" &&
        (
                other_user &&
                api PATCH /session/pysess && test "$CODE" = 404
        )
'

test_expect_success 'a session that is not running answers 409' '
        api DELETE /session/pysess && test "$CODE" = 200 &&
        wait_status pysess TERMINATED &&
        exec_ pysess query "1" && test "$CODE" = 409 &&
        api PATCH /session/pysess && test "$CODE" = 409
'

test_done
