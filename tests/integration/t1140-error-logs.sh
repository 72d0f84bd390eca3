#!/bin/bash
test_description='Backend.AI'"'"'s error logs (/logs/error, its SDK'"'"'s ServerLog and `backend.ai server-logs list`): a client reports an error, kept with its user and domain; the list answers {logs, count} newest first, paged, a superadmin every log, an admin and a monitor their domain'"'"'s but a superadmin'"'"'s, a user its own not cleared; mark_read marks the page read; clear hides a log from its reporter; every field checked with a precise 400'
. "$(dirname "$0")/../lib/test-lib.sh"
. "$(dirname "$0")/../lib/roles.sh"

CALLERS=(superadmin admin monitor user user2 oadmin ouser)

# report WHO MESSAGE [EXTRA_FIELDS]: a log reported by WHO; its id in LOG_ID
report() {
        call "$1" POST /logs/error "{\"severity\": \"error\", \"source\": \"webui\", \"message\": \"$2\", \"context_lang\": \"js\", \"context_env\": \"{\\\"agent\\\": \\\"test\\\"}\"${3:+, $3}}"
        [ "$CODE" = 200 ] || { echo "report $1: $CODE $(cat "$TMP/out")"; return 1; }
        LOG_ID=$(jq -r .log_id "$TMP/out")
}

# the SDK's request: ServerLog.list(mark_read, page_size, page_no)
list() { # WHO [MARK_READ [PAGE_SIZE [PAGE_NO]]]
        call "$1" GET "/logs/error?mark_read=${2:-False}&page_size=${3:-20}&page_no=${4:-1}"
}

# body OVERRIDES: a valid report with OVERRIDES (JSON) merged in; a field
# set to "DEL" is left out
body() {
        jq -cn --argjson o "$1" '{severity: "error", source: "s", message: "m", context_lang: "js",
                context_env: "{}"} + $o | with_entries(select(.value != "DEL"))'
}

# bad BODY PATTERN: POST /logs/error answers 400 with a title matching PATTERN
bad() {
        call user POST /logs/error "$1"
        [ "$CODE" = 400 ] && jq -e --arg p "$2" '.title | test($p)' "$TMP/out" >/dev/null ||
                { echo "$1: $CODE $(cat "$TMP/out"), want 400 /$2/"; return 1; }
}

test_expect_success 'set up two domains, every role' '
        start_manager && make_every_role logs.test
'

test_expect_success 'a report with every field is kept as sent, with the reporter'"'"'s user and domain' '
        call user POST /logs/error "{\"severity\": \"critical\", \"source\": \"webui\", \"message\": \"cannot list sessions\", \"context_lang\": \"js\", \"context_env\": \"{\\\"browser\\\": \\\"firefox\\\", \\\"screen\\\": [1920, 1080]}\", \"request_url\": \"http://m.test/sessions?limit=1\", \"request_status\": 502, \"traceback\": \"Error: x\\n    at f (app.js:1)\"}" &&
        test "$CODE" = 200 &&
        jq -e ".success == true and (.log_id | test(\"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$\"))" "$TMP/out" &&
        FULL=$(jq -r .log_id "$TMP/out") &&
        test "$(db_sql "SELECT user_id || '\''|'\'' || domain_name FROM error_logs WHERE id = '\''$FULL'\''")" = "${UID_[user]}|default"
'

test_expect_success 'the list answers Backend.AI'"'"'s shape, field by field' '
        now=$(date +%s) &&
        list user && test "$CODE" = 200 &&
        jq -e "keys == [\"count\", \"logs\"] and .count == 1 and (.logs | length) == 1" "$TMP/out" &&
        jq -e --arg id "$FULL" --arg u "${UID_[user]}" --argjson now "$now" ".logs[0] |
                (keys == [\"context_env\", \"context_lang\", \"created_at\", \"is_cleared\", \"is_read\", \"log_id\",
                          \"message\", \"request_status\", \"request_url\", \"severity\", \"source\", \"traceback\", \"user\"])
                and .log_id == \$id and .user == \$u and .severity == \"critical\" and .source == \"webui\"
                and .message == \"cannot list sessions\" and .context_lang == \"js\"
                and .context_env == {\"browser\": \"firefox\", \"screen\": [1920, 1080]}
                and .request_url == \"http://m.test/sessions?limit=1\" and .request_status == 502
                and .traceback == \"Error: x\\n    at f (app.js:1)\" and .is_read == false and .is_cleared == false
                and (.created_at | type) == \"number\" and .created_at > \$now - 60 and .created_at < \$now + 60" "$TMP/out"
'

test_expect_success 'optional fields may be left out (null), severity is any case, context_env an object too' '
        call user POST /logs/error "{\"severity\": \"WARNING\", \"source\": \"sdk\", \"message\": \"m\", \"context_lang\": \"python\", \"context_env\": {\"python\": \"3.11\"}, \"request_url\": null, \"traceback\": null}" &&
        test "$CODE" = 200 && OPT=$(jq -r .log_id "$TMP/out") &&
        list user && jq -e --arg id "$OPT" ".logs[0] | .log_id == \$id and .severity == \"warning\"
                and .request_url == null and .request_status == null and .traceback == null
                and .context_env == {\"python\": \"3.11\"}" "$TMP/out" &&
        call user POST /logs/error "{\"severity\": \"error\", \"source\": \"sdk\", \"message\": \"m\", \"context_lang\": \"python\", \"context_env\": \"[1, \\\"two\\\"]\", \"request_status\": \"0\"}" &&
        test "$CODE" = 200 &&
        list user && jq -e ".logs[0].context_env == [1, \"two\"] and .logs[0].request_status == 0" "$TMP/out"
'

test_expect_success 'every field is checked: a precise 400 for each' '
        while IFS="|" read -r o pat; do
                bad "$(body "$o")" "$pat" || return 1
        done <<-\EOF &&
	{"severity": "DEL"}|severity.*required
	{"severity": "fatal"}|severity.*critical, error or warning
	{"severity": 3}|severity.*string
	{"source": "DEL"}|source.*required
	{"source": ""}|source.*empty
	{"source": 5}|source.*string
	{"message": "DEL"}|message.*required
	{"message": ""}|message.*empty
	{"context_lang": "DEL"}|context_lang.*required
	{"context_env": "DEL"}|context_env.*required
	{"context_env": "{not json"}|context_env.*JSON
	{"context_env": 5}|context_env.*JSON text
	{"request_status": "abc"}|request_status.*integer
	{"request_status": 1000}|request_status.*between 0 and 999
	{"request_status": -1}|request_status.*between 0 and 999
	{"request_url": 7}|request_url.*string
	{"traceback": ["x"]}|traceback.*string
	{"request_code": 500}|request_code.*not a field
	{"message": "a\u0000b"}|u0000|NUL
	EOF
        bad "[1]" "must be an object"
'

test_expect_success 'each text has its limit (bytes): at it accepted, past it a 400' '
        for spec in source:255 message:8192 context_lang:64 request_url:2048 traceback:32768; do
                f=${spec%%:*} n=${spec#*:}
                call user POST /logs/error "$(body "{\"$f\": \"$(head -c "$n" /dev/zero | tr "\\0" x)\"}")" &&
                test "$CODE" = 200 || { echo "$f at $n: $CODE $(cat "$TMP/out")"; return 1; }
                bad "$(body "{\"$f\": \"$(head -c $((n + 1)) /dev/zero | tr "\\0" x)\"}")" "$f.*longer than $n" ||
                        return 1
        done &&
        env=$(jq -cn --arg v "$(head -c 8190 /dev/zero | tr "\\0" y)" "{v: \$v} | tojson") &&
        test "$(echo "$env" | jq -r . | wc -c)" -gt 8193 &&
        bad "$(body "{\"context_env\": $env}")" "context_env.*longer than 8192" &&
        bad "$(body "{\"context_env\": {\"v\": \"$(head -c 8190 /dev/zero | tr "\\0" y)\"}}")" "context_env.*longer than 8192"
'

test_expect_success 'every role may report; nobody without a signature' '
        for who in "${CALLERS[@]}"; do
                report $who "from-$who" || return 1
                eval "LOG_$who=\$LOG_ID"
        done &&
        CODE=$(curl -s -o "$TMP/out" -w "%{http_code}" -X POST -H "Content-Type: application/json" \
                --data "{\"severity\": \"error\"}" "$BACKEND_ENDPOINT/logs/error") && test "$CODE" = 401
'

test_expect_success 'every role lists exactly the logs of the owners it sees (count too)' '
        bad=0
        for caller in "${CALLERS[@]}"; do
                list $caller False 100 && test "$CODE" = 200 || { echo "$caller: $CODE"; return 1; }
                n=0
                for owner in "${CALLERS[@]}"; do
                        if jq -e --arg m "from-$owner" "any(.logs[]; .message == \$m)" "$TMP/out" >/dev/null; then got=yes; else got=no; fi
                        if sees $caller $owner; then want=yes; else want=no; fi
                        [ $got = $want ] || { echo "$caller sees the log of $owner: $got, want $want"; bad=$((bad + 1)); }
                done
                want=$(jq "[.logs[].user] | length" "$TMP/out")
                [ "$(jq .count "$TMP/out")" = "$want" ] || { echo "$caller: count $(jq .count "$TMP/out"), logs $want"; bad=$((bad + 1)); }
                for u in $(jq -r ".logs[].user" "$TMP/out" | sort -u); do
                        owner=
                        for o in "${CALLERS[@]}"; do [ "${UID_[$o]}" = "$u" ] && owner=$o; done
                        sees $caller $owner || { echo "$caller sees a log of $owner"; bad=$((bad + 1)); }
                done
        done
        test $bad = 0
'

test_expect_success 'newest first, paged: page_size and page_no, count the total' '
        for i in $(seq 1 23); do report user2 "page-$i" || return 1; done &&
        list user2 && test "$CODE" = 200 &&
        jq -e ".count == 24 and (.logs | length) == 20 and .logs[0].message == \"page-23\" and .logs[19].message == \"page-4\"" "$TMP/out" &&
        jq -e "[.logs[].created_at] as \$t | \$t == (\$t | sort | reverse)" "$TMP/out" &&
        list user2 False 20 2 && jq -e ".count == 24 and (.logs | map(.message)) == [\"page-3\", \"page-2\", \"page-1\", \"from-user2\"]" "$TMP/out" &&
        list user2 False 5 3 && jq -e "(.logs | map(.message)) == [\"page-13\", \"page-12\", \"page-11\", \"page-10\", \"page-9\"]" "$TMP/out" &&
        list user2 False 20 9 && jq -e ".count == 24 and .logs == []" "$TMP/out" &&
        call user2 GET /logs/error && jq -e ".count == 24 and (.logs | length) == 20" "$TMP/out"
'

test_expect_success 'page parameters are checked' '
        for q in page_size=0 page_size=101 page_size=abc page_no=0 page_no=-1 page_no=x mark_read=maybe; do
                call user GET "/logs/error?$q" && test "$CODE" = 400 || { echo "$q: $CODE"; return 1; }
                p=${q%%=*}
                jq -e --arg p "$p" ".title | contains(\$p)" "$TMP/out" >/dev/null || { echo "$q: $(cat "$TMP/out")"; return 1; }
        done &&
        list user False 100 && test "$CODE" = 200
'

test_expect_success 'mark_read=True marks the page read (the answer shows them as they were); False does not' '
        list user2 False 5 && jq -e "all(.logs[]; .is_read == false)" "$TMP/out" &&
        list user2 True 5 && jq -e "all(.logs[]; .is_read == false)" "$TMP/out" &&
        list user2 False 10 && jq -e "(.logs[0:5] | all(.is_read)) and (.logs[5:] | all(.is_read | not))" "$TMP/out" &&
        list user2 true 10 2 && list user2 False 20 &&
        jq -e "(.logs[0:5] | all(.is_read)) and (.logs[5:10] | all(.is_read | not)) and (.logs[10:20] | all(.is_read))" "$TMP/out"
'

test_expect_success 'a monitor marks only its own logs read; an admin its domain'"'"'s' '
        list monitor True 100 && test "$CODE" = 200 &&
        test "$(db_sql "SELECT is_read FROM error_logs WHERE id = '\''$LOG_monitor'\''")" = 1 &&
        test "$(db_sql "SELECT is_read FROM error_logs WHERE id = '\''$LOG_user'\''")" = 0 &&
        list admin True 100 &&
        test "$(db_sql "SELECT is_read FROM error_logs WHERE id = '\''$LOG_user'\''")" = 1 &&
        test "$(db_sql "SELECT is_read FROM error_logs WHERE id = '\''$LOG_ouser'\''")" = 0
'

test_expect_success 'clear: who may clear whose log, by the rule (monitors never: they only read)' '
        bad=0
        for caller in "${CALLERS[@]}"; do
                for owner in "${CALLERS[@]}"; do
                        report $owner "clear-$caller-$owner" || return 1
                        if [ "${ROLE[$caller]}" = monitor ]; then want=403
                        elif sees $caller $owner; then want=200
                        else want=404; fi
                        call $caller POST "/logs/error/$LOG_ID/clear"
                        [ "$CODE" = $want ] || { echo "$caller clears the log of $owner: $CODE, want $want"; bad=$((bad + 1)); continue; }
                        c=$(db_sql "SELECT is_cleared FROM error_logs WHERE id = '\''$LOG_ID'\''")
                        [ $want = 200 ] && [ "$c" != 1 ] && { echo "$caller: not cleared"; bad=$((bad + 1)); }
                        [ $want != 200 ] && [ "$c" != 0 ] && { echo "$caller: cleared without the right"; bad=$((bad + 1)); }
                        [ $want = 200 ] && ! jq -e ". == {\"success\": true}" "$TMP/out" >/dev/null && bad=$((bad + 1))
                done
        done
        test $bad = 0
'

test_expect_success 'a cleared log is gone from its reporter'"'"'s list and count; administrators still see it, cleared' '
        list user False 100 && before=$(jq .count "$TMP/out") &&
        call user POST "/logs/error/$FULL/clear" && test "$CODE" = 200 &&
        call user POST "/logs/error/$FULL/clear" && test "$CODE" = 200 &&
        list user False 100 && test "$(jq .count "$TMP/out")" = $((before - 1)) &&
        jq -e --arg id "$FULL" "all(.logs[]; .log_id != \$id and .is_cleared == false)" "$TMP/out" &&
        for who in admin monitor superadmin; do
                list $who False 100 &&
                jq -e --arg id "$FULL" "any(.logs[]; .log_id == \$id and .is_cleared == true)" "$TMP/out" || return 1
        done
'

test_expect_success 'clear: an id that is not a UUID is a 400, one of no log a 404' '
        call user POST /logs/error/nope/clear && test "$CODE" = 400 &&
        jq -e ".title | test(\"not a UUID\")" "$TMP/out" &&
        call superadmin POST /logs/error/00000000-0000-4000-8000-000000000000/clear && test "$CODE" = 404 &&
        call user GET "/logs/error/$FULL/clear" && test "$CODE" = 405 -o "$CODE" = 404
'

test_expect_success 'a user keeps its 1000 newest logs' '
        db_sql "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000)
                INSERT INTO error_logs(id, created_at, severity, source, user_id, domain_name, message, context_lang, context_env)
                SELECT '\''old-'\'' || i, i, '\''error'\'', '\''s'\'', '\''${UID_[ouser]}'\'', '\''other'\'', '\''old'\'', '\''js'\'', '\''{}'\'' FROM n" &&
        report ouser newest &&
        test "$(db_sql "SELECT COUNT(*) FROM error_logs WHERE user_id = '\''${UID_[ouser]}'\''")" = 1000 &&
        test "$(db_sql "SELECT COUNT(*) FROM error_logs WHERE id = '\''old-9'\'' OR id = '\''old-10'\''")" = 1 &&
        test "$(db_sql "SELECT MIN(created_at) FROM error_logs WHERE user_id = '\''${UID_[ouser]}'\''")" = 10 &&
        shown=$(db_sql "SELECT COUNT(*) FROM error_logs WHERE user_id = '\''${UID_[ouser]}'\'' AND is_cleared = 0") &&
        list ouser False 1 && jq -e --argjson n "$shown" ".count == \$n and .logs[0].message == \"newest\"" "$TMP/out"
'

test_expect_success 'a deleted user'"'"'s logs go with it' '
        call superadmin DELETE /admin/users/ouser@logs.test && test "$CODE" = 200 -o "$CODE" = 204 &&
        test "$(db_sql "SELECT COUNT(*) FROM error_logs WHERE user_id = '\''${UID_[ouser]}'\''")" = 0
'

test_done
