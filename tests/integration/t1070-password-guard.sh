#!/bin/bash
test_description='password routes: one guessing limit per user found (email and username together), shared by /auth/authorize, /server/login and /auth/update-password, 429 with Retry-After; scrypt off the event loop: signed requests are answered while anonymous clients hammer logins, and an admin'"'"'s new passwords are hashed on workers too'
. "$(dirname "$0")/../lib/test-lib.sh"

# pw PATH BODY [curl args]: an unsigned JSON POST; CODE, answer in $TMP/pw
pw() {
        local path=$1 body=$2
        shift 2
        CODE=$(curl -s -m 60 -D "$TMP/pwh" -o "$TMP/pw" -w '%{http_code}' -X POST -H "Content-Type: application/json" \
                "$@" --data "$body" "$BACKEND_ENDPOINT$path") || true
        echo "POST $path -> $CODE $(head -c 300 "$TMP/pw")"
}
authorize() { pw /auth/authorize "{\"type\": \"keypair\", \"domain\": \"default\", \"username\": \"$1\", \"password\": \"$2\"}" "${@:3}"; }

test_expect_success 'start a manager (its front: 127.0.0.1) with two users' '
        echo "trusted_proxies = 127.0.0.1" >"$TMP/manager.conf" &&
        start_manager --config "$TMP/manager.conf" &&
        api POST /admin/users "{\"email\": \"victim@test.local\", \"username\": \"victim\", \"password\": \"victim-password-1\", \"role\": \"user\", \"projects\": [\"default\"]}" &&
        test "$CODE" = 201 &&
        VAK=$(jq -r "[.. | objects | .access_key? | strings][0]" "$TMP/out") &&
        VSK=$(jq -r "[.. | objects | .secret_key? | strings][0]" "$TMP/out") &&
        api POST /admin/users "{\"email\": \"other@test.local\", \"username\": \"other\", \"password\": \"other-password-1\", \"role\": \"user\", \"projects\": [\"default\"]}" &&
        test "$CODE" = 201
'

test_expect_success 'the right password logs in' '
        authorize victim@test.local victim-password-1 -H "X-Forwarded-For: 10.1.0.1" && test "$CODE" = 200
'

test_expect_success 'five wrong passwords, by email and by username, then even the right one is a 429' '
        for name in victim@test.local victim victim@test.local victim victim@test.local; do
                authorize "$name" wrong-password -H "X-Forwarded-For: 10.1.0.$((++n))" && test "$CODE" = 401 || return 1
        done &&
        authorize victim victim-password-1 -H "X-Forwarded-For: 10.1.1.1" && test "$CODE" = 429 &&
        grep -qiE "^Retry-After: [0-9]+" "$TMP/pwh" && jq -e ".title | test(\"too many failed logins\")" "$TMP/pw"
'

test_expect_success 'the web login of the same user is blocked too; another user is not' '
        pw /server/login "{\"email\": \"victim\", \"password\": \"victim-password-1\"}" -H "X-Forwarded-For: 10.1.1.2" &&
        test "$CODE" = 429 && grep -qi "^Retry-After: " "$TMP/pwh" &&
        pw /server/login "{\"email\": \"other@test.local\", \"password\": \"other-password-1\"}" -H "X-Forwarded-For: 10.1.1.3" &&
        test "$CODE" = 200 &&
        authorize other other-password-1 -H "X-Forwarded-For: 10.1.1.4" && test "$CODE" = 200
'

test_expect_success 'a password change guesses the old password under the same limit' '
        api POST /admin/users "{\"email\": \"changer@test.local\", \"password\": \"changer-password-1\", \"role\": \"user\", \"projects\": [\"default\"]}" &&
        test "$CODE" = 201 &&
        CAK=$(jq -r "[.. | objects | .access_key? | strings][0]" "$TMP/out") &&
        CSK=$(jq -r "[.. | objects | .secret_key? | strings][0]" "$TMP/out") &&
        for i in 1 2 3 4 5; do
                BACKEND_ACCESS_KEY=$CAK BACKEND_SECRET_KEY=$CSK api POST /auth/update-password \
                        "{\"old_password\": \"guess-$i\", \"new_password\": \"new-password-1\"}" &&
                test "$CODE" = 401 || return 1
        done &&
        BACKEND_ACCESS_KEY=$CAK BACKEND_SECRET_KEY=$CSK api POST /auth/update-password \
                "{\"old_password\": \"changer-password-1\", \"new_password\": \"new-password-1\"}" &&
        test "$CODE" = 429 &&
        authorize changer@test.local changer-password-1 -H "X-Forwarded-For: 10.1.1.5" && test "$CODE" = 429
'

test_expect_success 'a password change with the right old password works (another user)' '
        api POST /admin/users "{\"email\": \"ok@test.local\", \"password\": \"ok-password-1\", \"role\": \"user\", \"projects\": [\"default\"]}" &&
        test "$CODE" = 201 &&
        OAK=$(jq -r "[.. | objects | .access_key? | strings][0]" "$TMP/out") &&
        OSK=$(jq -r "[.. | objects | .secret_key? | strings][0]" "$TMP/out") &&
        BACKEND_ACCESS_KEY=$OAK BACKEND_SECRET_KEY=$OSK api POST /auth/update-password \
                "{\"old_password\": \"ok-password-1\", \"new_password\": \"ok-password-2\"}" && test "$CODE" = 200 &&
        authorize ok@test.local ok-password-2 -H "X-Forwarded-For: 10.1.1.6" && test "$CODE" = 200
'

test_expect_success 'twenty failures from one address block it, whatever the names' '
        for i in $(seq 1 20); do
                authorize "nobody-$i" wrong -H "X-Forwarded-For: 10.2.0.1" && test "$CODE" = 401 || return 1
        done &&
        authorize other other-password-1 -H "X-Forwarded-For: 10.2.0.1" && test "$CODE" = 429
'

test_expect_success 'signed requests are answered while 6 anonymous clients hammer logins' '
        for c in 1 2 3 4 5 6; do
                (
                        for i in $(seq 1 40); do
                                curl -s -o /dev/null -m 60 -X POST -H "Content-Type: application/json" \
                                        -H "X-Forwarded-For: 10.3.$c.$i" --data \
                                        "{\"type\": \"keypair\", \"username\": \"x$c-$i@test.local\", \"password\": \"wrong\"}" \
                                        "$BACKEND_ENDPOINT/auth/authorize"
                        done
                        touch "$TMP/hammer-$c.done"
                ) &
                test_at_exit "kill $!"
        done &&
        sleep 1 &&
        for i in $(seq 1 10); do
                t0=$(date +%s%N) && api GET /sessions && t1=$(date +%s%N) &&
                echo "GET /sessions: $CODE in $(((t1 - t0) / 1000000)) ms while logins hammer" &&
                test "$CODE" = 200 || return 1
        done &&
        for _ in $(seq 1 1200); do
                [ "$(ls "$TMP"/hammer-*.done 2>/dev/null | wc -l)" = 6 ] && break
                sleep 0.1
        done &&
        test "$(ls "$TMP"/hammer-*.done | wc -l)" = 6
'

test_expect_success 'an admin creating users and setting passwords in parallel: hashed off the loop, each logs in with its password' '
        for i in 1 2 3 4 5 6 7 8; do
                (
                        OUT=$TMP/made-$i api POST /admin/users "{\"email\": \"made$i@test.local\", \"password\": \"made-password-$i\", \"role\": \"user\", \"projects\": [\"default\"]}" &&
                        echo "$CODE" >"$TMP/made-$i.code" &&
                        OUT=$TMP/set-$i api PATCH "/admin/users/made$i@test.local" "{\"password\": \"reset-password-$i\"}" &&
                        echo "$CODE" >"$TMP/set-$i.code"
                ) &
        done &&
        t0=$(date +%s%N) && api GET /sessions && t1=$(date +%s%N) &&
        echo "GET /sessions: $CODE in $(((t1 - t0) / 1000000)) ms while passwords are hashed" &&
        wait &&
        for i in 1 2 3 4 5 6 7 8; do
                test "$(cat "$TMP/made-$i.code")" = 201 && test "$(cat "$TMP/set-$i.code")" = 200 &&
                ! grep -q "reset-password\|made-password\|scrypt" "$TMP/made-$i" "$TMP/set-$i" &&
                authorize "made$i@test.local" "reset-password-$i" -H "X-Forwarded-For: 10.4.0.$i" &&
                test "$CODE" = 200 &&
                authorize "made$i@test.local" "made-password-$i" -H "X-Forwarded-For: 10.4.1.$i" &&
                test "$CODE" = 401 || return 1
        done
'

test_done
