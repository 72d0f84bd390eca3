#!/bin/bash
test_description='a user'"'"'s quota is the user'"'"'s: sessions and slots of all its keypairs count against the policy; keypairs per user capped, self-service keypairs need the password and may be forbidden, users never choose keys; max_concurrent_sessions 0 is unlimited; a user'"'"'s priority is capped by its policy; recalculate-usage recounts agents'"'"' occupancy'
. "$(dirname "$0")/../lib/test-lib.sh"

command -v jq >/dev/null 2>&1 || skip_all "needs jq"

declare -A AK SK


expect() { # STATUS
        test "$CODE" = "$1" || { echo "got $CODE, want $1: $(cat "$TMP/out")"; return 1; }
}

# create ROLE NAME [EXTRA FIELDS]: enqueue a small session as ROLE
create() {
        api_as "$1" POST /session "{\"name\": \"$2\", \"image\": \"limits/img:1\", \"enqueueOnly\": true, \"config\": {\"resources\": {\"cpu\": 1, \"mem\": \"1g\"}}${3:+, $3}}"
}

status_of() {
        OUT=$TMP/st api GET "/sessions?name=$1"
        jq -r ".items[0].status" "$TMP/st"
}

wait_status() { # NAME STATUS
        local s
        for _ in $(seq 1 150); do
                s=$(status_of "$1")
                [ "$s" = "$2" ] && return 0
                sleep 0.1
        done
        echo "session $1 is $s, not $2: $(cat "$TMP/st")"
        return 1
}

# pending_for ROLE NAME PREDICATE: ROLE's session waits, and says why
pending_for() {
        for _ in $(seq 1 150); do
                OUT=$TMP/why api_as "$1" GET "/session/$2"
                grep -q "\"failed_predicates\":\[{\"name\":\"$3\"" "$TMP/why" && break
                sleep 0.1
        done
        grep -q "\"status\":\"PENDING\"" "$TMP/why" && grep -q "\"failed_predicates\":\[{\"name\":\"$3\"" "$TMP/why" ||
                { echo "session $2: $(cat "$TMP/why")"; return 1; }
}

cat >"$TMP/manager.conf" <<EOF
scheduler_interval = 1s
EOF

test_expect_success 'a manager, an agent, a policy of one session and 2 cores, a user on it' '
        start_manager --config "$TMP/manager.conf" &&
        AK[admin]=$BACKEND_ACCESS_KEY && SK[admin]=$BACKEND_SECRET_KEY &&
        api POST /admin/images "{\"name\": \"limits/img\", \"tag\": \"1\"}" && expect 201 &&
        agent_register a1 "{\"cpu\": 32, \"mem\": \"64g\"}" &&
        api POST /admin/keypair-policies "{\"name\": \"one\", \"max_concurrent_sessions\": 1, \"total_resource_slots\": {\"cpu\": 2}}" &&
        expect 201 &&
        api POST /admin/users "{\"email\": \"u@limits.test\", \"password\": \"limits-password-1\", \"projects\": [\"default\"], \"resource_policy\": \"one\"}" &&
        expect 201 && AK[u]=$(jq -r .keypair.access_key "$TMP/out") && SK[u]=$(jq -r .keypair.secret_key "$TMP/out") &&
        api POST /admin/keypairs "{\"user\": \"u@limits.test\", \"resource_policy\": \"one\"}" && expect 201 &&
        AK[u2]=$(jq -r .access_key "$TMP/out") && SK[u2]=$(jq -r .secret_key "$TMP/out")
'

test_expect_success 'a new policy: at most 10 keypairs a user, self-service allowed, priority up to 10' '
        api POST /admin/keypair-policies "{\"name\": \"fresh\"}" && expect 201 &&
        jq -e ".max_keypairs_per_user == 10 and .allow_user_keypairs == true and .max_session_priority == 10" "$TMP/out" &&
        api PATCH /admin/keypair-policies/one "{\"max_keypairs_per_user\": 4}" && expect 200
'

test_expect_success 'a user creates its own keypair only with its password, and never chooses its keys' '
        api_as u POST /admin/keypairs "{}" && expect 403 && grep -q password "$TMP/out" &&
        api_as u POST /admin/keypairs "{\"password\": \"wrong-password\"}" && expect 403 &&
        api_as u POST /admin/keypairs "{\"password\": \"limits-password-1\", \"secret_key\": \"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\"}" &&
        expect 403 &&
        api_as u POST /admin/keypairs "{\"password\": \"limits-password-1\", \"access_key\": \"AKIACHOSENCHOSEN0001\"}" && expect 403 &&
        api_as u POST /admin/keypairs "{\"password\": \"limits-password-1\"}" && expect 201 &&
        test "$(jq -r .secret_key "$TMP/out" | wc -c)" = 41 && test "$(jq -r .resource_policy "$TMP/out")" = one
'

test_expect_success 'one session for the user, whichever keypair asks: the second waits (keypair_concurrency)' '
        create u sess1 && expect 201 && wait_status sess1 SCHEDULED &&
        create u2 sess2 && expect 201 && pending_for u2 sess2 keypair_concurrency &&
        grep -q "all its keypairs together" "$TMP/why"
'

test_expect_success 'slots too: the policy'"'"'s 2 cores count the user'"'"'s sessions on all keypairs' '
        api PATCH /admin/keypair-policies/one "{\"max_concurrent_sessions\": 5}" && expect 200 &&
        wait_status sess2 SCHEDULED &&
        create u sess3 && expect 201 && pending_for u sess3 keypair_resource_limit &&
        grep -q "2 cores in use of 2" "$TMP/why"
'

test_expect_success 'check-presets shows the user'"'"'s use, from either keypair' '
        api_as u2 POST /resource/check-presets "{\"group\": \"default\"}" && expect 200 &&
        test "$(jq -r ".keypair_using.cpu" "$TMP/out")" = 2
'

test_expect_success 'max_concurrent_sessions 0 is unlimited (as its help says)' '
        api PATCH /admin/keypair-policies/one "{\"max_concurrent_sessions\": 0, \"total_resource_slots\": {}}" && expect 200 &&
        wait_status sess3 SCHEDULED &&
        create u sess4 && expect 201 && wait_status sess4 SCHEDULED
'

test_expect_success 'keypairs per user: the policy'"'"'s cap holds for users and admins' '
        api_as u POST /admin/keypairs "{\"password\": \"limits-password-1\"}" && expect 201 &&
        api_as u POST /admin/keypairs "{\"password\": \"limits-password-1\"}" && expect 403 &&
        grep -q max_keypairs_per_user "$TMP/out" &&
        api POST /admin/keypairs "{\"user\": \"u@limits.test\", \"resource_policy\": \"one\"}" && expect 403 &&
        api PATCH /admin/keypair-policies/one "{\"max_keypairs_per_user\": 0}" && expect 200 &&
        api POST /admin/keypairs "{\"user\": \"u@limits.test\", \"resource_policy\": \"one\"}" && expect 201
'

test_expect_success 'a policy may forbid self-service keypairs' '
        api PATCH /admin/keypair-policies/one "{\"allow_user_keypairs\": false}" && expect 200 &&
        api_as u POST /admin/keypairs "{\"password\": \"limits-password-1\"}" && expect 403 &&
        grep -q "only admins" "$TMP/out"
'

test_expect_success 'priority: a user asks up to its policy'"'"'s max_session_priority, an admin for more' '
        create u prio1 "\"priority\": 100" && expect 400 && grep -q max_session_priority "$TMP/out" &&
        create u prio2 "\"priority\": 10" && expect 201 &&
        api PATCH /admin/keypair-policies/one "{\"max_session_priority\": 50}" && expect 200 &&
        create u prio3 "\"priority\": 50" && expect 201 &&
        create u prio4 "\"priority\": 51" && expect 400 &&
        create admin prio5 "\"priority\": 100" && expect 201 &&
        api PATCH /admin/keypair-policies/one "{\"max_session_priority\": 101}" && expect 400
'

test_expect_success 'a user created with a limit of its own (total_resource_slots) is held to it' '
        api POST /admin/users "{\"email\": \"own@limits.test\", \"password\": \"limits-password-1\", \"projects\": [\"default\"], \"total_resource_slots\": {\"cpu\": 1}}" &&
        expect 201 && AK[own]=$(jq -r .keypair.access_key "$TMP/out") && SK[own]=$(jq -r .keypair.secret_key "$TMP/out") &&
        api GET /admin/users/own@limits.test && expect 200 && jq -e ".total_resource_slots.cpu == \"1\"" "$TMP/out" &&
        create own own1 && expect 201 && wait_status own1 SCHEDULED &&
        create own own2 && expect 201 && pending_for own own2 user_resource_limit
'

test_expect_success 'the CLI sets and shows the new policy fields' '
        "$TESSERA" admin keypair-policy update one --max-keypairs-per-user 7 --allow-user-keypairs true \
                --max-session-priority 20 >"$TMP/cli" 2>&1 &&
        api GET /admin/keypair-policies/one && expect 200 &&
        jq -e ".max_keypairs_per_user == 7 and .allow_user_keypairs == true and .max_session_priority == 20" "$TMP/out"
'

test_expect_success 'recalculate-usage (backend.ai admin resource recalculate-usage) recounts an agent'"'"'s occupancy from its kernels' '
        USED=$(db_sql "SELECT occupied_slots FROM agents WHERE id = '"'"'a1'"'"'") &&
        jq -e ".cpu != null" <<<"$USED" &&
        db_sql "UPDATE agents SET occupied_slots = '"'"'{\"cpu\": \"999\"}'"'"' WHERE id = '"'"'a1'"'"'" &&
        api POST /resource/recalculate-usage && expect 200 &&
        for _ in $(seq 1 50); do
                test "$(db_sql "SELECT occupied_slots FROM agents WHERE id = '"'"'a1'"'"'")" = "$USED" && break
                sleep 0.1
        done &&
        test "$(db_sql "SELECT occupied_slots FROM agents WHERE id = '"'"'a1'"'"'")" = "$USED" &&
        api_as u2 POST /resource/recalculate-usage && expect 403
'

test_done
