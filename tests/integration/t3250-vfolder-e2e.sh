#!/bin/bash
test_description='virtual folders end to end with the CLI: A uploads 200 MB and 10,000 small files, writes a result from a session; B, invited read-only, reads it from its own session and cannot write; a cut upload resumes to identical bytes; A deletes the folder and B loses it'
. "$(dirname "$0")/../lib/test-lib.sh"
. "$(dirname "$0")/../lib/registry.sh"

test_with_containers
for tool in jq sha256sum; do
        command -v $tool >/dev/null 2>&1 || skip_all "needs $tool (scripts/install-deps.sh test)"
done

declare -A AK SK

make_user() { # NAME EMAIL
        api POST /admin/users "{\"email\": \"$2\", \"password\": \"e2e-password-1\", \"projects\": [\"default\"]}"
        [ "$CODE" = 201 ] || { cat "$TMP/out"; return 1; }
        AK[$1]=$(jq -r .keypair.access_key "$TMP/out")
        SK[$1]=$(jq -r .keypair.secret_key "$TMP/out")
        [ ${#SK[$1]} = 40 ]
}

# run_in USER SESSION COMMAND: a batch execution of COMMAND (sh -c) in a
# running session; its output in $TMP/console, its exit code in EXIT_CODE
run_in() {
        local body run status
        body=$(jq -cn --arg c "$3" '{mode: "batch", code: $c}')
        : >"$TMP/console"
        BACKEND_ACCESS_KEY=${AK[$1]} BACKEND_SECRET_KEY=${SK[$1]} api POST "/session/$2" "$body"
        for _ in $(seq 1 60); do
                [ "$CODE" = 200 ] || { echo "execute: $CODE $(cat "$TMP/out")"; return 1; }
                jq -r '.result.console[]? | .[1]' "$TMP/out" >>"$TMP/console"
                status=$(jq -r .result.status "$TMP/out")
                if [ "$status" = finished ]; then
                        EXIT_CODE=$(jq -r .result.exitCode "$TMP/out")
                        return 0
                fi
                run=$(jq -r .result.runId "$TMP/out")
                BACKEND_ACCESS_KEY=${AK[$1]} BACKEND_SECRET_KEY=${SK[$1]} \
                        api POST "/session/$2" "$(jq -cn --arg r "$run" '{mode: "continue", code: "", runId: $r}')"
        done
        echo "never finished"
        return 1
}

# session USER NAME MOUNTS_JSON: a running busybox session of USER mounting those folders
session() {
        BACKEND_ACCESS_KEY=${AK[$1]} BACKEND_SECRET_KEY=${SK[$1]} api POST /session \
                "{\"name\": \"$2\", \"image\": \"busybox:latest\", \"enqueueOnly\": true, \"config\": {\"resources\": {\"cpu\": 1, \"mem\": \"256m\"}, \"mounts\": $3}}"
        [ "$CODE" = 201 ] || { echo "session $2: $CODE $(cat "$TMP/out")"; return 1; }
        BACKEND_ACCESS_KEY=${AK[$1]} BACKEND_SECRET_KEY=${SK[$1]} wait_status "$2" RUNNING
}

test_expect_success 'a manager with its agent, users A and B' '
        start_dev_with_busybox &&
        AK[admin]=$BACKEND_ACCESS_KEY && SK[admin]=$BACKEND_SECRET_KEY &&
        make_user A a@e2e.test && make_user B b@e2e.test &&
        # each file costs A one signed request-upload: more than the default
        # 10,000 requests per 15 minutes for this test
        api PATCH "/admin/keypairs/${AK[A]}" "{\"rate_limit\": 100000}" && test "$CODE" = 200
'

test_expect_success 'A creates a folder and uploads 200 MB and 10,000 small files' '
        as A "$TESSERA" vfolder create results &&
        head -c 200000000 /dev/urandom >"$TMP/big.bin" &&
        mkdir -p "$TMP/small" &&
        for d in $(seq 0 99); do
                mkdir "$TMP/small/d$d" &&
                for f in $(seq 0 99); do echo "file $d/$f" >"$TMP/small/d$d/f$f.txt"; done || return 1
        done &&
        as A "$TESSERA" vfolder upload results "$TMP/big.bin" "$TMP/small" >"$TMP/up.log" &&
        grep -q "uploaded 10001 files" "$TMP/up.log" &&
        as A "$TESSERA" --json vfolder usage results >"$TMP/usage" &&
        test "$(jq -r .file_count "$TMP/usage")" -ge 10101
'

test_expect_success 'the uploaded bytes are identical (download and compare)' '
        (cd "$TMP" && as A "$TESSERA" vfolder download results big.bin -o big.back) &&
        test "$(sha256sum <"$TMP/big.bin")" = "$(sha256sum <"$TMP/big.back")" &&
        (cd "$TMP" && as A "$TESSERA" vfolder download results small/d7/f42.txt -o f42) &&
        test "$(cat "$TMP/f42")" = "file 7/42"
'

test_expect_success 'an upload cut half way resumes when re-run and ends with identical bytes' '
        head -c 120000000 /dev/urandom >"$TMP/cut.bin" &&
        { (
                export BACKEND_ACCESS_KEY=${AK[A]} BACKEND_SECRET_KEY=${SK[A]}
                exec "$TESSERA" vfolder upload --chunk-size 1048576 results "$TMP/cut.bin" >/dev/null 2>&1
        ) & } &&
        up=$! &&
        for _ in $(seq 1 600); do
                find "$MANAGER_STATE"/vfolders/*/.uploads -type f -size +30M 2>/dev/null | grep -q . && break
                sleep 0.05
        done &&
        kill -9 $up && ! wait $up &&
        as A "$TESSERA" --json vfolder ls-files results >"$TMP/files" &&
        ! jq -e ".items[] | select(.name == \"cut.bin\")" "$TMP/files" &&
        as A "$TESSERA" vfolder upload results "$TMP/cut.bin" &&
        (cd "$TMP" && as A "$TESSERA" vfolder download results cut.bin -o cut.back) &&
        test "$(sha256sum <"$TMP/cut.bin")" = "$(sha256sum <"$TMP/cut.back")"
'

test_expect_success 'A mounts the folder rw in a session and writes a result file' '
        session A sess-a1 "[\"results\"]" &&
        run_in A sess-a1 "wc -c </home/work/results/big.bin; echo 42 >/home/work/results/answer.txt" &&
        test "$EXIT_CODE" = 0 && grep -q 200000000 "$TMP/console" &&
        as A "$TESSERA" --json vfolder ls-files results >"$TMP/files" &&
        jq -e ".items[] | select(.name == \"answer.txt\")" "$TMP/files"
'

test_expect_success 'B, invited read-only, accepts and reads the result in its own session but cannot write' '
        as A "$TESSERA" vfolder invite --perm ro results b@e2e.test &&
        as B "$TESSERA" --json vfolder invitations >"$TMP/inv" &&
        inv=$(jq -r ".invitations[0].id" "$TMP/inv") && test -n "$inv" &&
        as B "$TESSERA" vfolder accept "$inv" &&
        as B "$TESSERA" --json vfolder ls >"$TMP/bls" &&
        test "$(jq -r ".[] | select(.name == \"results\") | .permission" "$TMP/bls")" = ro &&
        session B sess-b1 "[\"results\"]" &&
        run_in B sess-b1 "cat /home/work/results/answer.txt" && test "$EXIT_CODE" = 0 &&
        grep -qx 42 "$TMP/console" &&
        run_in B sess-b1 "echo no >/home/work/results/b.txt" && test "$EXIT_CODE" != 0 &&
        test_must_fail as B "$TESSERA" vfolder mkdir results fromb
'

test_expect_success 'A deletes the folder once the sessions are gone; B loses access' '
        as A "$TESSERA" session rm sess-a1 && as B "$TESSERA" session rm sess-b1 &&
        wait_status sess-a1 TERMINATED && wait_status sess-b1 TERMINATED &&
        as A "$TESSERA" vfolder rm results &&
        test_must_fail as B "$TESSERA" vfolder info results &&
        as B "$TESSERA" --json vfolder ls >"$TMP/bls" &&
        test "$(jq length "$TMP/bls")" = 0 &&
        as A "$TESSERA" vfolder purge results &&
        test_must_fail as A "$TESSERA" vfolder info results
'

test_done
