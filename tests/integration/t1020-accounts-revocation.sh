#!/bin/bash
test_description='revocation reaches every credential: folder tokens re-checked at each use (keypair, user, share), a deactivated user logged out and its sessions ended, open event streams cut, a password change ends the other web logins, need_password_change holds a web login to the password change, one namespace for emails and usernames'
. "$(dirname "$0")/../lib/test-lib.sh"

command -v jq >/dev/null 2>&1 || skip_all "needs jq"

declare -A AK SK UID_OF

# as ROLE METHOD PATH [BODY]: api signed with ROLE's keypair.

make_user() { # ROLE EMAIL [EXTRA JSON FIELDS]
        api POST /admin/users "{\"email\": \"$2\", \"password\": \"revoke-password-1\", \"role\": \"user\", \"projects\": [\"default\"]${3:+, $3}}"
        [ "$CODE" = 201 ] || { cat "$TMP/out"; return 1; }
        AK[$1]=$(jq -r .keypair.access_key "$TMP/out")
        SK[$1]=$(jq -r .keypair.secret_key "$TMP/out")
        UID_OF[$1]=$(jq -r .id "$TMP/out")
}

expect() { # STATUS: the last api/as/web call answered STATUS
        test "$CODE" = "$1" || { echo "got $CODE, want $1: $(cat "$TMP/out")"; return 1; }
}

# web JAR METHOD PATH [BODY]: a browser's request with cookie jar JAR (and
# its CSRF token, once logged in); CODE, the answer in $TMP/out
web() {
        local jar=$TMP/$1 csrf
        csrf=$(cat "$jar.csrf" 2>/dev/null || true)
        CODE=$(curl -s -m 20 -X "$2" -b "$jar" -c "$jar" -o "$TMP/out" -w '%{http_code}' \
                ${csrf:+-H "X-Tessera-CSRF: $csrf"} ${4:+-H "Content-Type: application/json" --data "$4"} \
                "$BACKEND_ENDPOINT$3") || true
}

login() { # JAR EMAIL PASSWORD
        rm -f "$TMP/$1" "$TMP/$1.csrf"
        web "$1" POST /server/login "{\"email\": \"$2\", \"password\": \"$3\"}"
        [ "$CODE" = 200 ] || { echo "login $2: $CODE $(cat "$TMP/out")"; return 1; }
        jq -r .csrf_token "$TMP/out" >"$TMP/$1.csrf"
}

# token ROLE FOLDER KIND BODY: request-KIND; sets TOKEN and URL
token() {
        api_as "$1" POST "/folders/$2/request-$3" "$4"
        [ "$CODE" = 200 ] || { cat "$TMP/out"; echo; return 1; }
        TOKEN=$(jq -r .token "$TMP/out") && URL=$(jq -r .url "$TMP/out")
}

download() { # TOKEN: HTTP_STATUS of the download
        http GET "/folders/_/download?token=$1"
}

authorize() { # BODY: POST /auth/authorize, unsigned
        http POST /auth/authorize -H "Content-Type: application/json" --data "$1"
}

tus_create() { # TOKEN SIZE: TUS gets the status of the tus creation
        TUS=$(curl -s -o "$TMP/tus.body" -w '%{http_code}' -X POST -H "Tus-Resumable: 1.0.0" \
                -H "Upload-Length: $2" "$BACKEND_ENDPOINT/folders/_/upload?token=$1") || true
}

# Event streams (GET /events/session) held open in the background: curl's
# output in $TMP/NAME.sse, its pid in SSE_PID[NAME].
declare -A SSE_PID

sse_start() { # NAME CURL_ARGS...: once the stream has opened
        local name=$1 i
        shift
        rm -f "$TMP/$name.sse"
        curl -s -N -m 60 -o "$TMP/$name.sse" "$@" "$BACKEND_ENDPOINT/events/session" &
        SSE_PID[$name]=$!
        for i in $(seq 1 100); do
                grep -q "^: open" "$TMP/$name.sse" 2>/dev/null && return 0
                sleep 0.1
        done
        echo "stream $name did not open: $(cat "$TMP/$name.sse" 2>/dev/null)"
        return 1
}

sse_as() { # ROLE NAME: a stream signed with ROLE's keypair
        local h=() l
        while IFS= read -r l; do h+=(-H "$l"); done < <("$BUILD/test-tool" sign GET /events/session \
                "${BACKEND_ENDPOINT#http://}" "${AK[$1]}" "${SK[$1]}")
        sse_start "$2" "${h[@]}"
}

sse_web() { # JAR NAME: a stream of web login JAR
        sse_start "$2" -b "$TMP/$1"
}

sse_ended() { # NAME: the manager ended the stream (within 10 s), cleanly
        local pid=${SSE_PID[$1]} i
        for i in $(seq 1 100); do
                kill -0 "$pid" 2>/dev/null || break
                sleep 0.1
        done
        kill -0 "$pid" 2>/dev/null && { echo "stream $1 still open"; return 1; }
        wait "$pid" || { echo "stream $1: curl exited $?"; return 1; }
}

sse_open() { # NAME: the stream is still open
        kill -0 "${SSE_PID[$1]}" 2>/dev/null || { echo "stream $1 ended"; return 1; }
}

sse_stop() { # NAME
        kill "${SSE_PID[$1]}" 2>/dev/null
        wait "${SSE_PID[$1]}" 2>/dev/null
        return 0
}

test_expect_success 'a manager, users a and b, a folder of a with a file' '
        start_manager &&
        AK[admin]=$BACKEND_ACCESS_KEY && SK[admin]=$BACKEND_SECRET_KEY &&
        make_user a a@revoke.test && make_user b b@revoke.test &&
        api_as a POST /folders "{\"name\": \"data\"}" && expect 201 &&
        token a data upload "{\"path\": \"f.txt\", \"size\": 5}" &&
        curl -s -o /dev/null -X POST -H "Tus-Resumable: 1.0.0" -H "Upload-Length: 5" "$URL?token=$TOKEN" &&
        printf hello >"$TMP/hello" &&
        test "$(curl -s -o /dev/null -w "%{http_code}" -X PATCH -H "Tus-Resumable: 1.0.0" -H "Upload-Offset: 0" \
                -H "Content-Type: application/offset+octet-stream" --data-binary @"$TMP/hello" "$URL?token=$TOKEN")" = 204 &&
        token a data download "{\"path\": \"f.txt\"}" && download "$TOKEN" && test "$HTTP_STATUS" = 200 &&
        test "$(cat "$HTTP_BODY")" = hello
'

test_expect_success 'a download token stops working when its keypair is deactivated, and again when reactivated' '
        token a data download "{\"path\": \"f.txt\"}" && T=$TOKEN &&
        token a data upload "{\"path\": \"g.txt\", \"size\": 3}" && U=$TOKEN &&
        api PATCH "/admin/keypairs/${AK[a]}" "{\"is_active\": false}" && expect 200 &&
        download "$T" && test "$HTTP_STATUS" = 403 && grep -q "no longer active" "$HTTP_BODY" &&
        tus_create "$U" 3 && test "$TUS" = 403 &&
        api PATCH "/admin/keypairs/${AK[a]}" "{\"is_active\": true}" && expect 200 &&
        download "$T" && test "$HTTP_STATUS" = 200
'

test_expect_success 'a token of a folder shared with b stops working when a unshares it' '
        api_as a POST /folders/data/invite "{\"perm\": \"ro\", \"emails\": [\"b@revoke.test\"]}" && expect 201 &&
        api_as b GET /folders/invitations/list && INV=$(jq -r ".invitations[0].id" "$TMP/out") &&
        api_as b POST /folders/invitations/accept "{\"inv_id\": \"$INV\"}" && expect 200 &&
        api_as a GET /folders && ID=$(jq -r ".[] | select(.name == \"data\") | .id" "$TMP/out") && test -n "$ID" &&
        token b "$ID" download "{\"path\": \"f.txt\"}" && T=$TOKEN &&
        download "$T" && test "$HTTP_STATUS" = 200 &&
        api_as a POST /folders/data/unshare "{\"emails\": [\"b@revoke.test\"]}" && expect 200 &&
        download "$T" && test "$HTTP_STATUS" = 404 && grep -q "no longer shared" "$HTTP_BODY"
'

test_expect_success 'deactivating a user: its tokens, web logins and sessions end' '
        token a data download "{\"path\": \"f.txt\"}" && T=$TOKEN &&
        token a data upload "{\"path\": \"h.txt\", \"size\": 3}" && U=$TOKEN &&
        login ja a@revoke.test revoke-password-1 && web ja GET /folders && expect 200 &&
        api POST /admin/images "{\"name\": \"revoke/img\", \"tag\": \"1\"}" && expect 201 &&
        agent_register r1 "{\"cpu\": 8, \"mem\": \"16g\"}" &&
        api_as a POST /session "{\"name\": \"runs\", \"image\": \"revoke/img:1\", \"enqueueOnly\": true, \"config\": {\"resources\": {\"cpu\": 1, \"mem\": \"1g\"}}}" &&
        expect 201 && wait_status runs SCHEDULED &&
        api_as a POST /session "{\"name\": \"waits\", \"image\": \"revoke/img:1\", \"enqueueOnly\": true, \"config\": {\"resources\": {\"cpu\": 64, \"mem\": \"1g\"}}}" &&
        expect 201 &&
        api PATCH /admin/users/a@revoke.test "{\"status\": \"inactive\"}" && expect 200 &&
        test "$(db_sql "SELECT COUNT(*) FROM web_sessions WHERE user_id = '\''${UID_OF[a]}'\''")" = 0 &&
        download "$T" && test "$HTTP_STATUS" = 403 &&
        tus_create "$U" 3 && test "$TUS" = 403 &&
        web ja GET /folders && expect 401 &&
        for i in $(seq 1 100); do
                test "$(field waits status)" = CANCELLED && break
                sleep 0.2
        done &&
        test "$(field waits status)" = CANCELLED && test "$(field waits statusInfo)" = owner-inactive &&
        wait_status runs TERMINATED && test "$(field runs statusInfo)" = owner-inactive &&
        api PATCH /admin/users/a@revoke.test "{\"status\": \"active\"}" && expect 200
'

test_expect_success 'terminate_inactive_users = false leaves a deactivated user'"'"'s sessions running' '
        printf "terminate_inactive_users = false\nscheduler_interval = 1s\n" >"$TMP/keep.conf" &&
        restart_manager --config "$TMP/keep.conf" &&
        api_as a POST /session "{\"name\": \"stays\", \"image\": \"revoke/img:1\", \"enqueueOnly\": true, \"config\": {\"resources\": {\"cpu\": 1, \"mem\": \"1g\"}}}" &&
        expect 201 && wait_status stays SCHEDULED &&
        api PATCH /admin/users/a@revoke.test "{\"status\": \"inactive\"}" && expect 200 &&
        sleep 4 && test "$(field stays status)" = SCHEDULED &&
        api PATCH /admin/users/a@revoke.test "{\"status\": \"active\"}" && expect 200
'

test_expect_success 'a password change ends the other web logins; the one that changed it stays' '
        login j1 b@revoke.test revoke-password-1 && login j2 b@revoke.test revoke-password-1 &&
        web j1 POST /auth/update-password "{\"old_password\": \"revoke-password-1\", \"new_password\": \"revoke-password-2\", \"new_password2\": \"revoke-password-2\"}" &&
        expect 200 &&
        web j1 GET /folders && expect 200 &&
        web j2 GET /folders && expect 401
'

test_expect_success 'an admin setting a password ends every web login of the user' '
        login j1 b@revoke.test revoke-password-2 &&
        api PATCH /admin/users/b@revoke.test "{\"password\": \"revoke-password-3\"}" && expect 200 &&
        web j1 GET /folders && expect 401
'

test_expect_success 'need_password_change: the web login may only change the password, to another one; /auth/authorize gives no key' '
        make_user c c@revoke.test "\"need_password_change\": true" &&
        login jc c@revoke.test revoke-password-1 && jq -e ".need_password_change == true" "$TMP/out" &&
        web jc GET /folders && expect 403 &&
        jq -e ".type | endswith(\"password-change-required\")" "$TMP/out" &&
        grep -q "update-password" "$TMP/out" &&
        web jc GET /server/session && expect 200 &&
        authorize "{\"type\": \"keypair\", \"domain\": \"default\", \"username\": \"c@revoke.test\", \"password\": \"revoke-password-1\"}" &&
        test "$HTTP_STATUS" = 403 && ! grep -q secret_key "$HTTP_BODY" &&
        web jc POST /auth/update-password "{\"old_password\": \"revoke-password-1\", \"new_password\": \"revoke-password-1\"}" &&
        expect 400 && grep -q "must differ" "$TMP/out" &&
        web jc GET /folders && expect 403 &&
        web jc POST /auth/update-password "{\"old_password\": \"revoke-password-1\", \"new_password\": \"revoke-password-9\"}" &&
        expect 200 &&
        web jc GET /folders && expect 200 &&
        authorize "{\"type\": \"keypair\", \"domain\": \"default\", \"username\": \"c@revoke.test\", \"password\": \"revoke-password-9\"}" &&
        test "$HTTP_STATUS" = 200
'

test_expect_success 'open event streams end when their keypair is deactivated; another user'"'"'s stays open' '
        sse_as a a1 && sse_as b b1 &&
        api PATCH "/admin/keypairs/${AK[a]}" "{\"is_active\": false}" && expect 200 &&
        sse_ended a1 && sse_open b1 &&
        api PATCH "/admin/keypairs/${AK[a]}" "{\"is_active\": true}" && expect 200 &&
        sse_as a a2 &&
        api PATCH /admin/users/a@revoke.test "{\"status\": \"inactive\"}" && expect 200 &&
        sse_ended a2 && sse_open b1 && sse_stop b1 &&
        api PATCH /admin/users/a@revoke.test "{\"status\": \"active\"}" && expect 200
'

test_expect_success 'a web login'"'"'s event stream ends at its logout, and when another login changes the password' '
        login w1 b@revoke.test revoke-password-3 && login w2 b@revoke.test revoke-password-3 &&
        sse_web w1 w1 && sse_web w2 w2 &&
        web w1 POST /server/logout && expect 204 &&
        sse_ended w1 && sse_open w2 &&
        login w3 b@revoke.test revoke-password-3 && sse_web w3 w3 &&
        web w2 POST /auth/update-password "{\"old_password\": \"revoke-password-3\", \"new_password\": \"revoke-password-4\", \"new_password2\": \"revoke-password-4\"}" &&
        expect 200 &&
        sse_ended w3 && sse_open w2 &&
        api PATCH /admin/users/b@revoke.test "{\"need_password_change\": true}" && expect 200 &&
        sse_ended w2 &&
        api PATCH /admin/users/b@revoke.test "{\"password\": \"revoke-password-3\", \"need_password_change\": false}" &&
        expect 200
'

test_expect_success 'an admin'"'"'s event stream ends when the admin is made a user' '
        api POST /admin/users "{\"email\": \"adm@revoke.test\", \"password\": \"revoke-password-1\", \"role\": \"admin\"}" &&
        expect 201 && AK[adm]=$(jq -r .keypair.access_key "$TMP/out") && SK[adm]=$(jq -r .keypair.secret_key "$TMP/out") &&
        sse_as adm m1 && sse_as b b2 &&
        api PATCH /admin/users/adm@revoke.test "{\"role\": \"user\"}" && expect 200 &&
        sse_ended m1 && sse_open b2 && sse_stop b2
'

test_expect_success 'squatting: a domain admin cannot give a username that is another user'"'"'s email' '
        api POST /admin/domains "{\"name\": \"other\"}" && expect 201 &&
        api POST /admin/users "{\"email\": \"oadmin@other.test\", \"password\": \"revoke-password-1\", \"domain\": \"other\", \"role\": \"admin\"}" &&
        expect 201 && AK[oadmin]=$(jq -r .keypair.access_key "$TMP/out") && SK[oadmin]=$(jq -r .keypair.secret_key "$TMP/out") &&
        api_as oadmin POST /admin/users "{\"email\": \"s1@other.test\", \"username\": \"$TEST_ADMIN_EMAIL\", \"password\": \"squat-password-1\"}" &&
        expect 409 &&
        api_as oadmin POST /admin/users "{\"email\": \"s2@other.test\", \"username\": \"B@REVOKE.TEST\", \"password\": \"squat-password-1\"}" &&
        expect 409 &&
        api_as oadmin POST /admin/users "{\"email\": \"s3@other.test\", \"username\": \"newhire@revoke.test\", \"password\": \"squat-password-1\"}" &&
        expect 400 &&
        api_as oadmin POST /admin/users "{\"email\": \"s4@other.test\", \"username\": \"squatter\", \"password\": \"squat-password-1\"}" &&
        expect 201 &&
        api_as oadmin PATCH /admin/users/s4@other.test "{\"username\": \"a@revoke.test\"}" && expect 409 &&
        api POST /admin/users "{\"email\": \"x@revoke.test\", \"username\": \"squatter\", \"password\": \"squat-password-1\"}" &&
        expect 409
'

test_expect_success 'a squatted username left from before does not lock its email'"'"'s owner out' '
        db_sql "UPDATE users SET username = '\''bee'\'' WHERE email = '\''b@revoke.test'\''" &&
        db_sql "UPDATE users SET username = '\''b@revoke.test'\'' WHERE email = '\''c@revoke.test'\''" &&
        login jb b@revoke.test revoke-password-3 && test "$(jq -r .email "$TMP/out")" = b@revoke.test &&
        authorize "{\"type\": \"keypair\", \"domain\": \"default\", \"username\": \"b@revoke.test\", \"password\": \"revoke-password-3\"}" &&
        test "$HTTP_STATUS" = 200 && jq -e ".data.user_id == \"${UID_OF[b]}\"" "$HTTP_BODY"
'

test_done
