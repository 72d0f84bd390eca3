#!/bin/bash
test_description='usage accounting: slot-seconds of occupancy per session and day, measured use from the agents'"'"' statistics (a repeated heartbeat adds nothing, a restart repeats nothing), the usage routes, scopes, tessera admin usage'
. "$(dirname "$0")/../lib/test-lib.sh"

TT=$BUILD/test-tool
declare -A AK SK

test_have_prereq JQ || skip_all 'needs jq'

# call ROLE METHOD PATH [BODY]: a request signed with ROLE's keypair; CODE
# gets the status, $TMP/out the answer.
call() {
        local role=$1 ct=text/plain h=()
        [ -n "${4:-}" ] && ct=application/json
        while IFS= read -r l; do h+=(-H "$l"); done < <("$TT" sign "$2" "$3" "${BACKEND_ENDPOINT#http://}" \
                "${AK[$role]}" "${SK[$role]}" "$ct")
        CODE=$(curl -s -m 40 -X "$2" -o "${OUT:-$TMP/out}" -w '%{http_code}' "${h[@]}" ${4:+--data "$4"} \
                "$BACKEND_ENDPOINT$3") || true
}

# make_user ROLE EMAIL DOMAIN USERROLE [PROJECT]: create it as the superadmin, keep its keypair
make_user() {
        call superadmin POST /admin/users "{\"email\": \"$2\", \"password\": \"usage-password-1\", \"domain\": \"$3\", \"role\": \"$4\"${5:+, \"projects\": [\"$5\"]}}"
        [ "$CODE" = 201 ] || { cat "$TMP/out"; return 1; }
        AK[$1]=$(jq -r '.. | .access_key? // empty' "$TMP/out" | head -n 1)
        SK[$1]=$(jq -r '.. | .secret_key? // empty' "$TMP/out" | head -n 1)
        [ ${#SK[$1]} = 40 ] || { echo "no secret key in: $(cat "$TMP/out")"; return 1; }
}

# expect ROLE PATH STATUS [WORDS]: a GET answers STATUS, its title mentioning WORDS
expect() {
        call "$1" GET "$2"
        [ "$CODE" = "$3" ] || { echo "GET $2 as $1: got $CODE, want $3: $(cat "$TMP/out")"; return 1; }
        [ -z "${4:-}" ] || grep -q -- "$4" "$TMP/out" || { echo "title lacks '$4': $(cat "$TMP/out")"; return 1; }
}

create() { # ROLE NAME RESOURCES_JSON
        call "$1" POST /session "{\"name\": \"$2\", \"image\": \"python:3.11\", \"enqueueOnly\": true, \"config\": {\"resources\": $3}}"
        [ "$CODE" = 201 ] || { echo "create $2: $CODE $(cat "$TMP/out")"; return 1; }
}

# wait_status ROLE NAME STATUS: poll (up to 10 s) until the session is in STATUS
wait_status() {
        local s
        for _ in $(seq 1 100); do
                OUT=$TMP/st call "$1" GET "/session/$2"
                s=$(jq -r .status "$TMP/st" 2>/dev/null)
                [ "$s" = "$3" ] && return 0
                sleep 0.1
        done
        echo "session $2 is $s, not $3: $(cat "$TMP/st")"
        return 1
}

# test_expect_code CODE CMD...: CMD exits with CODE.
test_expect_code() {
        local want=$1 rc
        shift
        "$@"
        rc=$?
        [ "$rc" = "$want" ] || { echo "'$*' exited $rc, not $want"; return 1; }
}

# The period from yesterday to today (UTC), computed at each call so that
# a run across midnight still covers every interval.
period() {
        echo "start_date=$(date -u -d yesterday +%Y%m%d)&end_date=$(date -u +%Y%m%d)"
}

# c_info ROLE NAME: the usage entry of session NAME from usage/period, or "null"
c_info() {
        call "$1" GET "/resource/usage/period?$(period)" &&
        [ "$CODE" = 200 ] && jq -c "[.[].c_infos[] | select(.name == \"$2\")] | .[0]" "$TMP/out"
}

# exact ENTRY: slot-seconds are the session's slots times its seconds, exactly
# (2 cores, 4 GiB and 0.5 fGPU for u1-sess)
exact() {
        echo "$1" | jq -e '.used_seconds as $s | $s > 0 and
                .slot_seconds.cpu == "\(2 * $s)" and
                .slot_seconds.mem == "\(4294967296 * $s)" and
                (.slot_seconds["cuda.shares"] | tonumber) == 0.5 * $s and
                ([.days[].seconds] | add) == $s' >/dev/null ||
                { echo "not exact: $1"; return 1; }
}

# kstat CPU_MSEC IO_READ IO_WRITE MEM: one kernel's statistics as agents send them
kstat() {
        echo "{\"cpu_used\": {\"current\": \"$1\", \"unit_hint\": \"msec\"}, \"cpu_util\": {\"current\": \"0.0\", \"capacity\": \"100.0\", \"unit_hint\": \"percent\"}, \"mem\": {\"current\": \"$4\", \"capacity\": \"1073741824\", \"unit_hint\": \"bytes\"}, \"io_read\": {\"current\": \"$2\", \"unit_hint\": \"bytes\"}, \"io_write\": {\"current\": \"$3\", \"unit_hint\": \"bytes\"}}"
}

# beat AGENT KERNEL CPU_MSEC IO_READ IO_WRITE MEM: a heartbeat of agent
# AGENT (registered as a1 is) with statistics for KERNEL
beat() {
        agent_post "$1" /agent/heartbeat "{\"id\": \"$1\", \"available_slots\": {\"cpu\": 8, \"mem\": \"32g\"}, \"devices\": $(gpus 1 2), \"resource_group\": \"default\", \"runtime\": \"none\", \"stats\": {\"$2\": $(kstat "$3" "$4" "$5" "$6")}}"
        [ "$AGENT_STATUS" = 200 ] || { echo "heartbeat of $1: $AGENT_STATUS $(cat "$TMP/agent-out")"; return 1; }
}

# measured ROLE NAME: the measured fields of session NAME's c_info
measured() {
        c_info "$1" "$2" | jq -c "{cpu_used, mem_used, io_read, io_write}"
}

cat >"$TMP/manager.conf" <<EOF
scheduler_interval = 1s
agent_lost_timeout = 1h
EOF

test_expect_success 'set up two domains, admins, users and an image' '
        start_manager --config "$TMP/manager.conf" &&
        AK[superadmin]=$BACKEND_ACCESS_KEY && SK[superadmin]=$BACKEND_SECRET_KEY &&
        call superadmin POST /admin/images "{\"name\": \"registry.test/stable/python\", \"tag\": \"3.11\"}" &&
        test "$CODE" = 201 &&
        call superadmin POST /admin/domains "{\"name\": \"other\"}" && test "$CODE" = 201 &&
        call superadmin POST /admin/projects "{\"name\": \"oproj\", \"domain\": \"other\"}" && test "$CODE" = 201 &&
        make_user admin uadmin@usage.test default admin &&
        make_user monitor umon@usage.test default monitor &&
        make_user user1 user1@usage.test default user default &&
        make_user user2 user2@usage.test default user default &&
        make_user oadmin oadmin@usage.test other admin
'

test_expect_success 'usage/period: precise 400s for dates' '
        expect user1 "/resource/usage/period" 400 "start_date. is required" &&
        expect user1 "/resource/usage/period?start_date=20250101" 400 "end_date. is required" &&
        expect user1 "/resource/usage/period?start_date=2025011&end_date=20250102" 400 "YYYYMMDD, not .2025011." &&
        expect user1 "/resource/usage/period?start_date=20250101&end_date=2025-1-2" 400 "end_date. must be a date" &&
        expect user1 "/resource/usage/period?start_date=20250230&end_date=20250302" 400 "not a calendar date" &&
        expect user1 "/resource/usage/period?start_date=20250110&end_date=20250101" 400 "before .start_date" &&
        expect user1 "/resource/usage/period?start_date=20250101&end_date=20250411" 400 "is 101 days: at most 100 may" &&
        expect user1 "/resource/usage/period?start_date=20250101&end_date=20250410" 200 &&
        expect user1 "/resource/usage/period?start_date=2025-01-01&end_date=2025-01-01" 200 &&
        expect superadmin "/admin/usage?group_by=team" 400 "group_by. must be user, project or domain" &&
        expect superadmin "/admin/usage?start_date=20250301&end_date=20250201" 400 "before" &&
        expect superadmin "/admin/usage?end_date=20250201" 200 &&
        jq -e ".start_date == \"2025-01-03\" and .end_date == \"2025-02-01\"" "$TMP/out"
'

test_expect_success 'a project must exist and be visible' '
        expect user1 "/resource/usage/period?$(period)&project_id=00000000-0000-4000-8000-000000000000" 404 \
                "project .00000000-0000-4000-8000-000000000000. not found" &&
        call superadmin GET "/admin/projects/oproj?domain=other" && test "$CODE" = 200 &&
        OPROJ=$(jq -r .id "$TMP/out") &&
        expect admin "/resource/usage/period?$(period)&project_id=$OPROJ" 404 "not found" &&
        expect oadmin "/resource/usage/period?$(period)&group_id=$OPROJ" 200 &&
        expect superadmin "/resource/usage/period?$(period)&project_id=$OPROJ" 200
'

test_expect_success 'no usage yet: empty answers' '
        expect superadmin "/resource/usage/period?$(period)" 200 && test "$(cat "$TMP/out")" = "[]" &&
        expect superadmin "/admin/usage?$(period)" 200 &&
        jq -e ".items == [] and .totals == [] and .group_by == \"user\"" "$TMP/out" &&
        expect user1 /resource/stats/user/month 200 &&
        jq -e "length == 30 and ([.[].num_sessions.value] | add) == 0 and
                .[29].day == \"$(date -u +%Y-%m-%d)\" and (.[29].date | type) == \"number\" and
                .[0].cpu_allocated.unit_hint == \"count\" and .[0].mem_allocated.unit_hint == \"bytes\"" "$TMP/out"
'

test_expect_success 'who may read what' '
        expect user1 "/admin/usage" 403 &&
        expect monitor "/admin/usage" 200 &&
        expect admin "/admin/usage" 200 &&
        expect monitor "/resource/usage/period?$(period)" 200 &&
        expect monitor "/resource/stats/user/month" 200
'

test_expect_success 'sessions placed on an agent show their open interval, growing' '
        agent_register a1 "{\"cpu\": 8, \"mem\": \"32g\"}" "$(gpus 1 2)" &&
        create user1 u1-sess "{\"cpu\": 2, \"mem\": \"4g\", \"cuda.shares\": \"0.5\"}" &&
        create user2 u2-sess "{\"cpu\": 1, \"mem\": \"1g\"}" &&
        wait_status user1 u1-sess SCHEDULED && wait_status user2 u2-sess SCHEDULED &&
        sleep 2 &&
        e1=$(c_info user1 u1-sess) && exact "$e1" &&
        echo "$e1" | jq -e ".status == \"SCHEDULED\" and .terminated_at == null and .email == \"user1@usage.test\" and
                .group_name == \"default\" and .domain_name == \"default\" and .agent == \"a1\" and
                .scaling_group == \"default\" and .cpu_allocated == 2 and .mem_allocated == 4294967296 and
                .gpu_allocated == 0.5 and .used_seconds >= 1 and .used_seconds < 60" &&
        sleep 1.2 &&
        e2=$(c_info user1 u1-sess) && exact "$e2" &&
        test "$(echo "$e2" | jq .used_seconds)" -gt "$(echo "$e1" | jq .used_seconds)"
'

test_expect_success 'scopes: users see only themselves, admins their domain, superadmins all' '
        call user1 GET "/resource/usage/period?$(period)" &&
        jq -e "[.[].c_infos[].name] == [\"u1-sess\"]" "$TMP/out" &&
        call user2 GET "/resource/usage/period?$(period)" &&
        jq -e "[.[].c_infos[].name] == [\"u2-sess\"]" "$TMP/out" &&
        call admin GET "/resource/usage/period?$(period)" &&
        jq -e "[.[].c_infos[].name] | sort == [\"u1-sess\", \"u2-sess\"]" "$TMP/out" &&
        jq -e "length == 1 and .[0].g_name == \"default\" and .[0].g_sessions == 2 and
                (.[0].g_days | length) >= 1 and .[0].g_cpu_allocated == 3" "$TMP/out" &&
        call monitor GET "/resource/usage/period?$(period)" &&
        jq -e "[.[].c_infos[]] | length == 2" "$TMP/out" &&
        call oadmin GET "/resource/usage/period?$(period)" && test "$(cat "$TMP/out")" = "[]" &&
        call oadmin GET "/admin/usage?$(period)" && jq -e ".items == []" "$TMP/out" &&
        call superadmin GET "/resource/usage/period?$(period)" &&
        jq -e "[.[].c_infos[]] | length == 2" "$TMP/out"
'

test_expect_success 'usage/month (Backend.AI'"'"'s, superadmins): the month'"'"'s sessions as c_infos in one list, by project' '
        M=$(date -u +%Y%m) &&
        call superadmin GET "/resource/usage/month?month=$M" && test "$CODE" = 200 &&
        jq -e "[.[].name] | sort == [\"u1-sess\", \"u2-sess\"]" "$TMP/out" &&
        G=$(jq -r ".[0].group_id" "$TMP/out") && test -n "$G" &&
        call superadmin GET /resource/usage/month "{\"month\": \"$M\", \"group_ids\": [\"$G\"]}" &&
        jq -e "length == 2" "$TMP/out" &&
        call superadmin GET "/resource/usage/month?month=$M&group_ids=00000000-0000-4000-8000-000000000000" &&
        test "$(cat "$TMP/out")" = "[]" &&
        call superadmin GET "/resource/usage/month?month=201901" && test "$(cat "$TMP/out")" = "[]" &&
        call superadmin GET "/resource/usage/month?month=202613" && test "$CODE" = 400 &&
        call superadmin GET "/resource/usage/month" && test "$CODE" = 400 &&
        call admin GET "/resource/usage/month?month=$M" && test "$CODE" = 403
'

test_expect_success 'usage/period with its parameters as a JSON body, as Backend.AI'"'"'s SDK sends a GET' '
        call admin GET "/resource/usage/period?$(period)" && cp "$TMP/out" "$TMP/by-query" &&
        call admin GET /resource/usage/period "{\"start_date\": \"$(date -u -d yesterday +%Y%m%d)\", \"end_date\": \"$(date -u +%Y%m%d)\", \"group_id\": null}" &&
        test "$CODE" = 200 && jq -e "[.[].c_infos[].name] | sort == [\"u1-sess\", \"u2-sess\"]" "$TMP/out" &&
        call admin GET /resource/usage/period "{\"start_date\": \"20250101\"}" && test "$CODE" = 400
'

test_expect_success 'heartbeats with statistics: the increase of the counters is measured use' '
        agent_post a1 /agent/sync "{\"id\": \"a1\"}" && test "$AGENT_STATUS" = 200 &&
        K2=$(jq -r ".kernels[] | select(.session_name == \"u2-sess\") | .id" "$TMP/agent-out") &&
        test -n "$K2" && echo "$K2" >"$TMP/k2" &&
        test "$(measured user2 u2-sess)" = "{\"cpu_used\":0,\"mem_used\":0,\"io_read\":0,\"io_write\":0}" &&
        beat a1 "$K2" 1500.5 4096 1024 1048576 &&
        test "$(measured user2 u2-sess)" = "{\"cpu_used\":1500.5,\"mem_used\":1048576,\"io_read\":4096,\"io_write\":1024}" &&
        OUT=$TMP/info call user2 GET /session/u2-sess &&
        jq -e ".lastStat.cpu_used.current == \"1500.5\"" "$TMP/info"
'

test_expect_success 'the same heartbeat again adds nothing; counters that go down start over' '
        K2=$(cat "$TMP/k2") &&
        beat a1 "$K2" 1500.5 4096 1024 1048576 &&
        test "$(measured user2 u2-sess)" = "{\"cpu_used\":1500.5,\"mem_used\":1048576,\"io_read\":4096,\"io_write\":1024}" &&
        beat a1 "$K2" 4000 8192 1024 4096 &&
        test "$(measured user2 u2-sess)" = "{\"cpu_used\":4000,\"mem_used\":1048576,\"io_read\":8192,\"io_write\":1024}" &&
        beat a1 "$K2" 1000 0 0 4096 &&
        test "$(measured user2 u2-sess)" = "{\"cpu_used\":5000,\"mem_used\":1048576,\"io_read\":8192,\"io_write\":1024}"
'

test_expect_success 'another agent cannot report a kernel that is not its own' '
        K2=$(cat "$TMP/k2") &&
        agent_register a2 "{\"cpu\": 1, \"mem\": \"1g\"}" &&
        beat a2 "$K2" 999999 999999 999999 999999 &&
        test "$(measured user2 u2-sess)" = "{\"cpu_used\":5000,\"mem_used\":1048576,\"io_read\":8192,\"io_write\":1024}"
'

test_expect_success 'measured use in every report: project totals, days, user bins, admin totals' '
        call user2 GET "/resource/usage/period?$(period)" &&
        jq -e ".[0].g_cpu_used == 5000 and .[0].g_io_read == 8192 and .[0].g_io_write == 1024 and
                .[0].g_mem_used == 1048576 and ([.[0].g_days[].cpu_used] | add) == 5000 and
                ([.[0].c_infos[0].days[].io_read] | add) == 8192" "$TMP/out" &&
        call user2 GET /resource/stats/user/month && test "$CODE" = 200 &&
        jq -e "([.[].cpu_used.value] | add) == 5000 and .[29].cpu_used.unit_hint == \"msec\" and
                ([.[].io_read_bytes.value] | add) == 8192 and ([.[].io_write_bytes.value] | add) == 1024 and
                .[29].io_read_bytes.unit_hint == \"bytes\" and ([.[].mem_used.value] | max) == 1048576" "$TMP/out" &&
        call superadmin GET "/admin/usage?$(period)&group_by=user" &&
        jq -e ".totals[] | select(.scope_name == \"user2@usage.test\") | .cpu_used_seconds == 5 and
                .io_read_bytes == 8192 and .io_write_bytes == 1024 and .mem_peak_bytes == 1048576" "$TMP/out" &&
        jq -e "[.items[] | select(.scope_name == \"user2@usage.test\") | .cpu_used_seconds] | add == 5" "$TMP/out" &&
        jq -e ".totals[] | select(.scope_name == \"user1@usage.test\") | .cpu_used_seconds == 0" "$TMP/out"
'

test_expect_success 'a closed interval is recorded and stops growing' '
        call user1 DELETE /session/u1-sess && test "$CODE" = 200 &&
        wait_status user1 u1-sess TERMINATED &&
        e1=$(c_info user1 u1-sess) && exact "$e1" &&
        echo "$e1" | jq -e ".status == \"TERMINATED\" and .terminated_at != null and .used_seconds >= 3" &&
        sleep 1.5 &&
        e2=$(c_info user1 u1-sess) &&
        test "$(echo "$e2" | jq -c .slot_seconds)" = "$(echo "$e1" | jq -c .slot_seconds)" &&
        test "$(echo "$e2" | jq .used_seconds)" = "$(echo "$e1" | jq .used_seconds)"
'

test_expect_success 'the records survive a restart' '
        before=$(c_info user1 u1-sess | jq -c "{used_seconds, slot_seconds, days}") &&
        echo "$before" | jq -e ".used_seconds > 0" &&
        restart_manager --config "$TMP/manager.conf" &&
        after=$(c_info user1 u1-sess | jq -c "{used_seconds, slot_seconds, days}") &&
        test "$before" = "$after"
'

test_expect_success 'after a restart the last counters are remembered: a repeated heartbeat adds nothing' '
        K2=$(cat "$TMP/k2") &&
        beat a1 "$K2" 1000 0 0 4096 &&
        test "$(measured user2 u2-sess)" = "{\"cpu_used\":5000,\"mem_used\":1048576,\"io_read\":8192,\"io_write\":1024}" &&
        beat a1 "$K2" 1250.25 100 0 4096 &&
        test "$(measured user2 u2-sess)" = "{\"cpu_used\":5250.25,\"mem_used\":1048576,\"io_read\":8292,\"io_write\":1024}"
'

test_expect_success 'stats/user/month: the caller, per day' '
        call user1 GET /resource/stats/user/month && test "$CODE" = 200 &&
        jq -e "length == 30 and ([.[].num_sessions.value] | add) >= 1 and
                ([.[].seconds] | add) >= 3 and ([.[].cpu_allocated.value] | add) > 0" "$TMP/out" &&
        secs=$(jq "[.[].seconds] | add" "$TMP/out") &&
        test "$(jq -r "[.[].slot_seconds.cpu // \"0\" | tonumber] | add" "$TMP/out")" = "$((2 * secs))"
'

test_expect_success '/admin/usage rolls up per user, project and domain' '
        call superadmin GET "/admin/usage?$(period)&group_by=user" && test "$CODE" = 200 &&
        jq -e "[.totals[].scope_name] | sort == [\"user1@usage.test\", \"user2@usage.test\"]" "$TMP/out" &&
        jq -e ".totals[] | select(.scope_name == \"user1@usage.test\") | .sessions == 1 and .domain_name == \"default\"" \
                "$TMP/out" &&
        jq -e "[.items[] | select(.scope_name == \"user1@usage.test\") | .slot_seconds.cpu | tonumber] | add > 0" \
                "$TMP/out" &&
        call superadmin GET "/admin/usage?$(period)&group_by=project" &&
        jq -e "[.totals[].scope_name] == [\"default\"] and .totals[0].sessions == 2" "$TMP/out" &&
        call admin GET "/admin/usage?$(period)&group_by=domain" &&
        jq -e ".group_by == \"domain\" and [.totals[].scope_id] == [\"default\"] and .totals[0].sessions == 2" \
                "$TMP/out"
'

test_expect_success CLI 'tessera admin usage prints hours per day and scope' '
        "$TESSERA" admin usage --from "$(date -u -d yesterday +%F)" --to "$(date -u +%F)" >"$TMP/cli.out" &&
        head -n 1 "$TMP/cli.out" | grep -qE "^DAY +SCOPE +SESSIONS +CPU-HOURS +MEM-GIB-HOURS +GPU-HOURS +FGPU-HOURS +CPU-USED-HOURS +IO-GIB$" &&
        grep -qE "^total +user2@usage.test +1 +[0-9.]+ +[0-9.]+ +0.00 +[0-9.]+ +0.00 +0.00$" "$TMP/cli.out" &&
        grep -qE "^20[0-9-]+ +user1@usage.test +1 +[0-9]+\.[0-9]{2} " "$TMP/cli.out" &&
        grep -qE "^total +user2@usage.test +1 " "$TMP/cli.out" &&
        "$TESSERA" admin usage --by project >"$TMP/cli.out" && grep -qE "^total +default +2 " "$TMP/cli.out" &&
        "$TESSERA" --json admin usage --by domain >"$TMP/cli.json" &&
        jq -e ".group_by == \"domain\" and (.items | length) >= 1" "$TMP/cli.json" &&
        test_expect_code 2 "$TESSERA" admin usage --by team &&
        test_expect_code 1 "$TESSERA" admin usage --from 2025-02-30 2>"$TMP/cli.err" &&
        grep -q "not a calendar date" "$TMP/cli.err" &&
        BACKEND_ACCESS_KEY=${AK[user1]} BACKEND_SECRET_KEY=${SK[user1]} test_expect_code 1 "$TESSERA" admin usage
'

test_expect_success 'the final counters of an exited kernel are measured once, however often the event comes' '
        K2=$(cat "$TMP/k2") &&
        ev="{\"id\": \"a1\", \"events\": [{\"seq\": 1, \"kernel\": \"$K2\", \"kind\": \"exited\", \"exit_code\": 0, \"stat\": $(kstat 1400.25 100 2048 4096)}]}" &&
        agent_post a1 /agent/events "$ev" && test "$AGENT_STATUS" = 200 &&
        wait_status user2 u2-sess TERMINATED &&
        test "$(measured user2 u2-sess)" = "{\"cpu_used\":5400.25,\"mem_used\":1048576,\"io_read\":8292,\"io_write\":3072}" &&
        agent_post a1 /agent/events "$ev" && test "$AGENT_STATUS" = 200 &&
        test "$(measured user2 u2-sess)" = "{\"cpu_used\":5400.25,\"mem_used\":1048576,\"io_read\":8292,\"io_write\":3072}" &&
        agent_post a1 /agent/events "{\"id\": \"a1\", \"events\": [{\"seq\": 2, \"kernel\": \"$K2\", \"kind\": \"exited\", \"stat\": 5}]}" &&
        test "$AGENT_STATUS" = 400 && grep -q "stat must be an object" "$TMP/agent-out"
'

test_done
