#!/bin/bash
test_description='Backend.AI'"'"'s user dotfiles (/user-config/dotfiles, its SDK'"'"'s Dotfile and `backend.ai dotfile`): create, list, get, update and delete as the SDK sends them; a user'"'"'s own, an admin'"'"'s for users it sees (owner_access_key); paths kept in the home directory; limits; and the agent told them with every kernel it has not made yet'
. "$(dirname "$0")/../lib/test-lib.sh"
. "$(dirname "$0")/../lib/roles.sh"

CALLERS=(superadmin admin monitor user user2 oadmin ouser)

# create WHO PATH DATA [PERM [OWNER_AK]]: the SDK's Dotfile.create body
create() {
        local body
        body=$(jq -cn --arg d "$3" --arg p "$2" --arg m "${4:-644}" --arg o "${5:-}" \
                '{data: $d, path: $p, permission: $m} + (if $o == "" then {} else {owner_access_key: $o} end)')
        call "$1" POST /user-config/dotfiles "$body"
}

# bad WHO METHOD PATH BODY PATTERN: a 400 whose title matches PATTERN
bad() {
        call "$1" "$2" "$3" "$4"
        [ "$CODE" = 400 ] && jq -e --arg p "$5" '.title | test($p)' "$TMP/out" >/dev/null ||
                { echo "$2 $3 $4: $CODE $(cat "$TMP/out"), want 400 /$5/"; return 1; }
}

uri() { jq -rn --arg s "$1" '$s | @uri'; }

test_expect_success 'set up two domains, every role, an image and an agent' '
        start_manager && make_every_role dot.test &&
        call superadmin POST /admin/images "{\"name\": \"python\", \"tag\": \"3.11\"}" && test "$CODE" = 201 &&
        AGENT_RUNTIME=runc agent_register n1 "{\"cpu\": 8, \"mem\": \"16g\"}"
'

test_expect_success 'none at first: an empty list' '
        call user GET /user-config/dotfiles && test "$CODE" = 200 && jq -e ". == []" "$TMP/out"
'

test_expect_success 'create as the SDK does: {data, path, permission} -> {}' '
        create user .bashrc "export EDITOR=vim
alias ll=\"ls -l\"
" 644 && test "$CODE" = 200 && jq -e ". == {}" "$TMP/out" &&
        create user .aws/config "[default]
region = us-east-1
" 600 && test "$CODE" = 200 &&
        create user bin/hello "#!/bin/sh
echo hello
" 755 && test "$CODE" = 200
'

test_expect_success 'list: [{path, permission, data}] by path, exactly what was sent' '
        call user GET /user-config/dotfiles && test "$CODE" = 200 &&
        jq -e "map(keys) == [[\"data\", \"path\", \"permission\"], [\"data\", \"path\", \"permission\"], [\"data\", \"path\", \"permission\"]]
                and map(.path) == [\".aws/config\", \".bashrc\", \"bin/hello\"]
                and map(.permission) == [\"600\", \"644\", \"755\"]
                and .[1].data == \"export EDITOR=vim\nalias ll=\\\"ls -l\\\"\n\"
                and .[0].data == \"[default]\nregion = us-east-1\n\"" "$TMP/out"
'

test_expect_success 'get one (?path=, as Dotfile.get sends it): {path, permission, data}' '
        call user GET "/user-config/dotfiles?path=.aws%2Fconfig" && test "$CODE" = 200 &&
        jq -e ". == {\"path\": \".aws/config\", \"permission\": \"600\", \"data\": \"[default]\nregion = us-east-1\n\"}" "$TMP/out" &&
        call user GET "/user-config/dotfiles?path=.nope" && test "$CODE" = 404 &&
        jq -e ".title | test(\"dotfile .\\\\.nope. not found\")" "$TMP/out"
'

test_expect_success 'update (Dotfile.update: {data, path, permission}) -> {}; data or permission alone too' '
        call user PATCH /user-config/dotfiles "{\"data\": \"export EDITOR=nano\n\", \"path\": \".bashrc\", \"permission\": \"640\"}" &&
        test "$CODE" = 200 && jq -e ". == {}" "$TMP/out" &&
        call user GET "/user-config/dotfiles?path=.bashrc" &&
        jq -e ".data == \"export EDITOR=nano\n\" and .permission == \"640\"" "$TMP/out" &&
        call user PATCH /user-config/dotfiles "{\"path\": \".bashrc\", \"permission\": \"644\"}" && test "$CODE" = 200 &&
        call user PATCH /user-config/dotfiles "{\"path\": \".bashrc\", \"data\": \"\"}" && test "$CODE" = 200 &&
        call user GET "/user-config/dotfiles?path=.bashrc" && jq -e ".data == \"\" and .permission == \"644\"" "$TMP/out" &&
        call user PATCH /user-config/dotfiles "{\"path\": \".nope\", \"data\": \"x\", \"permission\": \"644\"}" &&
        test "$CODE" = 404
'

test_expect_success 'delete (?path=, as Dotfile.delete sends it) -> {success: true}; then it is gone' '
        call user DELETE "/user-config/dotfiles?path=bin%2Fhello" && test "$CODE" = 200 &&
        jq -e ". == {\"success\": true}" "$TMP/out" &&
        call user GET "/user-config/dotfiles?path=bin%2Fhello" && test "$CODE" = 404 &&
        call user DELETE "/user-config/dotfiles?path=bin%2Fhello" && test "$CODE" = 404 &&
        call user GET /user-config/dotfiles && jq -e "map(.path) == [\".aws/config\", \".bashrc\"]" "$TMP/out"
'

test_expect_success 'paths are kept relative to the home directory: /home/work/X is X, a//./b is a/b' '
        create user /home/work/.vimrc "set nu" && test "$CODE" = 200 &&
        call user GET "/user-config/dotfiles?path=.vimrc" && jq -e ".path == \".vimrc\" and .data == \"set nu\"" "$TMP/out" &&
        call user GET "/user-config/dotfiles?path=$(uri /home/work/.vimrc)" && test "$CODE" = 200 &&
        create user .vimrc "again" && test "$CODE" = 409 &&
        create user ".config//app/./rc" "x" && test "$CODE" = 200 &&
        call user GET "/user-config/dotfiles?path=.config%2Fapp%2Frc" && test "$CODE" = 200 &&
        call user DELETE "/user-config/dotfiles?path=$(uri /home/work/.vimrc)" && test "$CODE" = 200 &&
        call user DELETE "/user-config/dotfiles?path=$(uri .config/app/rc)" && test "$CODE" = 200
'

test_expect_success 'a path may not leave the home directory, be it, or hide what the images keep' '
        while IFS="|" read -r path pat; do
                body=$(jq -cn --arg p "$path" "{data: \"x\", path: \$p, permission: \"644\"}")
                bad user POST /user-config/dotfiles "$body" "$pat" || return 1
                bad user GET "/user-config/dotfiles?path=$(uri "$path")" "" "$pat" || return 1
        done <<-\EOF &&
	../etc/passwd|'"'"'\.\.'"'"' is not allowed
	.config/../../x|'"'"'\.\.'"'"' is not allowed
	/etc/profile|outside the home directory
	/home/work2/.x|outside the home directory
	/home|outside the home directory
	/home/work|home directory itself
	/home/work/|home directory itself
	./|home directory itself
	.ssh|reserved
	.ssh/authorized_keys|reserved
	/home/work/.jupyter|reserved
	.config|reserved
	.local|reserved
	.terminfo|reserved
	EOF
        bad user POST /user-config/dotfiles "{\"data\": \"x\", \"path\": \"a\\u0001b\", \"permission\": \"644\"}" "control characters" &&
        bad user POST /user-config/dotfiles "{\"data\": \"x\", \"path\": \"\", \"permission\": \"644\"}" "home directory itself" &&
        long=$(head -c 256 /dev/zero | tr "\\0" a) &&
        bad user POST /user-config/dotfiles "{\"data\": \"x\", \"path\": \"$long\", \"permission\": \"644\"}" "longer than 255|longer than 255 bytes" &&
        deep=$(for i in $(seq 1 64); do printf "abc/"; done)x &&
        bad user POST /user-config/dotfiles "{\"data\": \"x\", \"path\": \"$deep\", \"permission\": \"644\"}" "longer than 255" &&
        call user POST /user-config/dotfiles "{\"data\": \"x\", \"path\": \"$(head -c 255 /dev/zero | tr "\\0" b)\", \"permission\": \"644\"}" &&
        test "$CODE" = 200 &&
        call user DELETE "/user-config/dotfiles?path=$(head -c 255 /dev/zero | tr "\\0" b)" && test "$CODE" = 200 &&
        call user GET /user-config/dotfiles && jq -e "map(.path) == [\".aws/config\", \".bashrc\"]" "$TMP/out"
'

test_expect_success 'every field is checked: a precise 400 for each' '
        while IFS="|" read -r method body pat; do
                bad user "$method" /user-config/dotfiles "$body" "$pat" || return 1
        done <<-\EOF &&
	POST|{"path": ".x", "permission": "644"}|data.*required
	POST|{"data": "x", "permission": "644"}|path.*required
	POST|{"data": "x", "path": ".x"}|permission.*required
	POST|{"data": 5, "path": ".x", "permission": "644"}|data.*string
	POST|{"data": "x", "path": 5, "permission": "644"}|path.*string
	POST|{"data": "x", "path": ".x", "permission": 644}|permission.*string
	POST|{"data": "x", "path": ".x", "permission": "888"}|permission.*three octal digits
	POST|{"data": "x", "path": ".x", "permission": "0644"}|permission.*three octal digits
	POST|{"data": "x", "path": ".x", "permission": "64"}|permission.*three octal digits
	POST|{"data": "x", "path": ".x", "permission": "rwx"}|permission.*three octal digits
	POST|{"data": "x", "path": ".x", "permission": "644", "group": "g"}|group.*not a field
	POST|{"data": "x", "path": ".x", "permission": "644", "owner_access_key": 5}|owner_access_key.*string
	POST|[1]|must be an object
	PATCH|{"path": ".bashrc"}|nothing to change
	PATCH|{"data": "x"}|path.*required
	PATCH|{"path": ".bashrc", "permission": "9"}|permission.*three octal digits
	PATCH|{"path": ".bashrc", "data": "x", "domain": "default"}|domain.*not a field
	EOF
        bad user DELETE /user-config/dotfiles "" "path.*required"
'

test_expect_success 'a dotfile may not be the directory of another, nor one exist twice (409)' '
        create user .a "x" && test "$CODE" = 200 &&
        create user .a/b "x" && test "$CODE" = 409 && jq -e ".title | test(\"cannot be a directory\")" "$TMP/out" &&
        create user .d/e/f "x" && test "$CODE" = 200 &&
        create user .d "x" && test "$CODE" = 409 && jq -e ".title | test(\"cannot be a file\")" "$TMP/out" &&
        create user .d/e "x" && test "$CODE" = 409 &&
        create user .d/e2 "x" && test "$CODE" = 200 &&
        create user .a "y" && test "$CODE" = 409 && jq -e ".title | test(\"exists\")" "$TMP/out" &&
        for p in .a .d/e/f .d/e2; do call user DELETE "/user-config/dotfiles?path=$(uri $p)" && test "$CODE" = 200 || return 1; done
'

test_expect_success 'limits: 64 KiB of data in all, 100 dotfiles' '
        big=$(head -c 65536 /dev/zero | tr "\\0" z) &&
        create user2 .big "$big" && test "$CODE" = 200 &&
        create user2 .one "x" && test "$CODE" = 400 && jq -e ".title | test(\"65537 bytes.*65536\")" "$TMP/out" &&
        call user2 PATCH /user-config/dotfiles "{\"path\": \".big\", \"data\": \"${big}z\"}" && test "$CODE" = 400 &&
        jq -e ".title | test(\"65536\")" "$TMP/out" &&
        call user2 PATCH /user-config/dotfiles "{\"path\": \".big\", \"data\": \"${big:1}\"}" && test "$CODE" = 200 &&
        create user2 .one "x" && test "$CODE" = 200 &&
        call user2 DELETE "/user-config/dotfiles?path=.big" && test "$CODE" = 200 &&
        for i in $(seq 2 100); do create user2 ".f$i" "" 600 && test "$CODE" = 200 || { echo "$i: $CODE"; return 1; }; done &&
        call user2 GET /user-config/dotfiles && test "$(jq length "$TMP/out")" = 100 &&
        create user2 .f101 "x" && test "$CODE" = 400 && jq -e ".title | test(\"at most 100\")" "$TMP/out" &&
        call user2 PATCH /user-config/dotfiles "{\"path\": \".f2\", \"data\": \"changed\"}" && test "$CODE" = 200 &&
        call user2 DELETE "/user-config/dotfiles?path=.f2" && create user2 .f101 "x" && test "$CODE" = 200 &&
        for p in .f99 .f100 .f101; do call user2 DELETE "/user-config/dotfiles?path=$p" && test "$CODE" = 200 || return 1; done
'

test_expect_success 'a user'"'"'s own: nobody else'"'"'s show in its list' '
        call user GET /user-config/dotfiles && jq -e "map(.path) == [\".aws/config\", \".bashrc\"]" "$TMP/out" &&
        call ouser GET /user-config/dotfiles && jq -e ". == []" "$TMP/out"
'

test_expect_success 'owner_access_key: every role for every owner, reading and writing by the rule' '
        bad=0
        for caller in "${CALLERS[@]}"; do
                for owner in "${CALLERS[@]}"; do
                        [ "$caller" = "$owner" ] && continue
                        if [ "${ROLE[$caller]}" = user ]; then want=403
                        elif sees $caller $owner; then want=200
                        else want=404; fi
                        call $caller GET "/user-config/dotfiles?owner_access_key=${AK[$owner]}"
                        [ "$CODE" = $want ] || { echo "$caller lists the dotfiles of $owner: $CODE, want $want"; bad=$((bad + 1)); }
                        [ "${ROLE[$caller]}" = monitor ] && wwant=403 || wwant=$want
                        create $caller ".by-$caller" "from $caller" 600 "${AK[$owner]}"
                        [ "$CODE" = $wwant ] || { echo "$caller creates one for $owner: $CODE, want $wwant $(cat "$TMP/out")"; bad=$((bad + 1)); }
                        n=$(db_sql "SELECT COUNT(*) FROM user_dotfiles WHERE user_id = '\''${UID_[$owner]}'\'' AND path = '\''.by-$caller'\''")
                        if [ $wwant = 200 ]; then
                                [ "$n" = 1 ] || { echo "$caller: not made for $owner"; bad=$((bad + 1)); }
                                call $caller GET "/user-config/dotfiles?path=.by-$caller&owner_access_key=${AK[$owner]}"
                                jq -e --arg c "from $caller" ".data == \$c" "$TMP/out" >/dev/null || bad=$((bad + 1))
                                call $caller PATCH /user-config/dotfiles "{\"path\": \".by-$caller\", \"data\": \"changed\", \"owner_access_key\": \"${AK[$owner]}\"}"
                                [ "$CODE" = 200 ] || bad=$((bad + 1))
                                call $caller DELETE "/user-config/dotfiles?path=.by-$caller&owner_access_key=${AK[$owner]}"
                                [ "$CODE" = 200 ] || { echo "$caller deletes for $owner: $CODE"; bad=$((bad + 1)); }
                        else
                                [ "$n" = 0 ] || { echo "$caller made one for $owner"; bad=$((bad + 1)); }
                        fi
                done
        done
        test $bad = 0
'

test_expect_success 'owner_access_key that names nobody: 404; a user naming its own: fine' '
        call admin GET "/user-config/dotfiles?owner_access_key=AKIANOPENOPENOPENOPE" && test "$CODE" = 404 &&
        call user GET "/user-config/dotfiles?owner_access_key=${AK[user]}" && test "$CODE" = 200 &&
        jq -e "length == 2" "$TMP/out"
'

test_expect_success 'a monitor reads but writes none, not even its own' '
        call monitor GET /user-config/dotfiles && test "$CODE" = 200 &&
        create monitor .m "x" && test "$CODE" = 403 &&
        call monitor PATCH /user-config/dotfiles "{\"path\": \".m\", \"data\": \"x\"}" && test "$CODE" = 403 &&
        call monitor DELETE "/user-config/dotfiles?path=.m" && test "$CODE" = 403
'

sync() { # the kernels of agent n1 into $TMP/agent-out
        agent_post n1 /agent/sync "{\"id\": \"n1\"}"
        test "$AGENT_STATUS" = 200 || { echo "sync: $AGENT_STATUS $(cat "$TMP/agent-out")"; return 1; }
}

SEQ=0
report() { # KERNEL KIND [EXTRA_JSON_FIELDS]
        SEQ=$((SEQ + 1))
        agent_post n1 /agent/events "{\"id\": \"n1\", \"events\": [{\"seq\": $SEQ, \"kernel\": \"$1\", \"kind\": \"$2\"${3:+, $3}}]}"
        test "$AGENT_STATUS" = 200 || { echo "report $2: $AGENT_STATUS $(cat "$TMP/agent-out")"; return 1; }
}

test_expect_success 'the agent is told the user'"'"'s dotfiles with a kernel it has not made yet' '
        call user POST /session "{\"name\": \"dots\", \"image\": \"python:3.11\", \"enqueueOnly\": true, \"config\": {\"resources\": {\"cpu\": 1, \"mem\": \"1g\"}}}" &&
        test "$CODE" = 201 &&
        wait_status_of() { for _ in $(seq 1 100); do call superadmin GET "/sessions?name=$1" && [ "$(jq -r ".items[0].status" "$TMP/out")" = "$2" ] && return 0; sleep 0.1; done; return 1; } &&
        wait_status_of dots SCHEDULED &&
        sync && K=$(jq -r ".kernels[] | select(.session_name == \"dots\") | .id" "$TMP/agent-out") && test -n "$K" &&
        call user GET /user-config/dotfiles && cp "$TMP/out" "$TMP/dots" &&
        jq -e --slurpfile d "$TMP/dots" ".kernels[] | select(.id == \"$K\") | .dotfiles == \$d[0]" "$TMP/agent-out" &&
        report "$K" preparing && sync &&
        jq -e ".kernels[] | select(.id == \"$K\") | .dotfiles | length == 2" "$TMP/agent-out"
'

test_expect_success 'not once it runs: a change of them moves no running kernel'"'"'s description' '
        report "$K" creating && report "$K" running "\"container_id\": \"c-1\"" && wait_status_of dots RUNNING &&
        sync && jq -e ".kernels[] | select(.id == \"$K\") | has(\"dotfiles\") | not" "$TMP/agent-out" &&
        d1=$(jq -r .digest "$TMP/agent-out") &&
        create user .later "x" && test "$CODE" = 200 &&
        sync && test "$(jq -r .digest "$TMP/agent-out")" = "$d1"
'

test_expect_success 'a user without dotfiles: no dotfiles in its kernel'"'"'s description' '
        call user2 GET /user-config/dotfiles && test "$(jq length "$TMP/out")" -gt 0 &&
        for p in $(jq -r ".[].path" "$TMP/out"); do call user2 DELETE "/user-config/dotfiles?path=$(uri "$p")" || return 1; done &&
        call user2 POST /session "{\"name\": \"nodots\", \"image\": \"python:3.11\", \"enqueueOnly\": true, \"config\": {\"resources\": {\"cpu\": 1, \"mem\": \"1g\"}}}" &&
        test "$CODE" = 201 && wait_status_of nodots SCHEDULED &&
        sync && jq -e ".kernels[] | select(.session_name == \"nodots\") | has(\"dotfiles\") | not" "$TMP/agent-out"
'

test_expect_success 'a deleted user'"'"'s dotfiles go with it' '
        create ouser .x "x" && test "$CODE" = 200 &&
        call superadmin DELETE /admin/users/ouser@dot.test && test "$CODE" = 200 -o "$CODE" = 204 &&
        test "$(db_sql "SELECT COUNT(*) FROM user_dotfiles WHERE user_id = '\''${UID_[ouser]}'\''")" = 0
'

test_done
