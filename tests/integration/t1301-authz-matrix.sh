#!/bin/bash
test_description='the authorization matrix, generated: every route of docs/openapi.json that names an object a user owns (a session, its events, a background task), for every role, every way of naming the object (id, name, owner_access_key) and every owner (the caller, a user of its domain, a superadmin, a user of another domain), answers what the one rule (src/manager/api/authz.h) says'
. "$(dirname "$0")/../lib/test-lib.sh"

# The rule, as this test's oracle (docs/design/security.md, Authorization):
# a superadmin sees everything; a user its own objects; an admin those of
# its domain's users but never a superadmin's; a monitor what an admin of
# its domain sees, only to read.  What the caller may not see does not
# exist: 404.  403 only where the answer cannot depend on the object: a
# monitor on a route that changes something, a user naming another keypair.

TT=$BUILD/test-tool
OPENAPI=$TEST_ROOT/docs/openapi.json
. "$(dirname "$0")/../lib/roles.sh"
declare -A SESS NAME TASK

CALLERS=(superadmin admin monitor user oadmin)
OWNERS=(user user2 admin superadmin ouser)
NAMINGS=(id name name+ak id+ak)

# new_session OWNER NAME: a PENDING session of OWNER (made by the
# superadmin for its keypair); its id in SID
new_session() {
        local proj=default
        [ "${DOM[$1]}" = other ] && proj=oproj
        call superadmin POST /session "{\"name\": \"$2\", \"image\": \"authz/img:1\", \"group\": \"$proj\", \"enqueueOnly\": true, \"owner_access_key\": \"${AK[$1]}\"}"
        [ "$CODE" = 201 ] || { echo "creating $2 for $1: $CODE $(cat "$TMP/out")"; return 1; }
        SID=$(jq -r .sessionId "$TMP/out")
}

# expect CALLER OWNER NAMING ACCESS ANSWER: what the rule says
expect() {
        local caller=$1 owner=$2 naming=$3 access=$4 ok=$5
        if [ "${ROLE[$caller]}" = monitor ] && [ "$access" != read ]; then echo 403; return; fi
        case $naming in *+ak)
                if [ "$caller" != "$owner" ] && [ "${ROLE[$caller]}" = user ]; then echo 403; return; fi ;;
        esac
        # a bare name is looked up among the caller's own sessions
        if [ "$naming" = name ] && [ "$caller" != "$owner" ]; then echo 404; return; fi
        if sees "$caller" "$owner"; then echo "$ok"; else echo 404; fi
}

# ref OWNER NAMING NAME ID: the path segment and query naming a session
ref() {
        case $2 in
        id) REF=$4 Q= ;;
        name) REF=$3 Q= ;;
        name+ak) REF=$3 Q="owner_access_key=${AK[$1]}" ;;
        id+ak) REF=$4 Q="owner_access_key=${AK[$1]}" ;;
        esac
}

test_expect_success 'set up two domains, every role, and a session of every owner' '
        start_manager &&
        AK[superadmin]=$BACKEND_ACCESS_KEY SK[superadmin]=$BACKEND_SECRET_KEY &&
        ROLE[superadmin]=superadmin DOM[superadmin]=default &&
        UID_[superadmin]=$(db_sql "SELECT id FROM users WHERE email = '\''$TEST_ADMIN_EMAIL'\''") &&
        call superadmin POST /admin/domains "{\"name\": \"other\"}" && test "$CODE" = 201 &&
        call superadmin POST /admin/projects "{\"name\": \"oproj\", \"domain\": \"other\"}" && test "$CODE" = 201 &&
        call superadmin POST /admin/resource-groups/default/access "{\"add\": {\"domains\": [\"other\"]}}" &&
        test "$CODE" = 200 &&
        make_user admin admin1@authz.test default admin &&
        make_user monitor mon1@authz.test default monitor &&
        make_user user user1@authz.test default user default &&
        make_user user2 user2@authz.test default user default &&
        make_user oadmin oadmin@authz.test other admin &&
        make_user ouser ouser@authz.test other user oproj &&
        call superadmin POST /admin/images "{\"name\": \"authz/img\", \"tag\": \"1\"}" && test "$CODE" = 201 &&
        for o in "${OWNERS[@]}"; do
                new_session $o t-$o && SESS[$o]=$SID && NAME[$o]=t-$o || return 1
        done
'

# Every route of the document is either generated here (its class, and for
# sessions the request to send and the answer of a caller that may act on
# a PENDING session), or listed below with why it names no owned object.
cat >"$TMP/session-routes" <<'EOF'
GET /session/{name}                   | -                      | 200
GET /session/{name}/logs              | -                      | 200
GET /session/{name}/commit            | -                      | 200
POST /session/{name}                  | {"mode":"query","code":"1"} | 409
POST /session/{name}/interrupt        | {}                     | 409
POST /session/{name}/rename           | {"name":"x"}           | 400
POST /session/{name}/upload           | -                      | 409
POST /session/{name}/download_single  | {"file":"a"}           | 409
GET /session/{name}/download_single   | -                      | 409
GET /session/{name}/files             | -                      | 409
GET /session/{name}/download          | {"files":["a"]}        | 409
POST /session/{name}/complete         | {"code":"pri"}         | 409
PATCH /session/{name}                 | -                      | 409
GET /stream/session/{name}/apps       | -                      | 409
POST /session/{name}/commit           | {"tag":"authz"}        | 409
POST /session/{name}/start-service    | {"app":"jupyter"}      | 409
POST /session/{name}/shutdown-service | {"service_name":"jupyter"} | 409
GET /stream/session/{name}/pty        | websocket              | 409
GET /stream/session/{name}/execute    | websocket              | 409
GET /stream/session/{name}/tcpproxy   | websocket              | 400
DELETE /session/{name}                | -                      | 200
EOF

# METHOD PATH-REGEX | why no owned object is named (or where it is tested)
cat >"$TMP/not-owned" <<'EOF'
[A-Z]+ ^/$|^/ui/|^/health$|^/metrics$|^/openapi.json$ | public: the manager and its web UI, nothing of anyone
[A-Z]+ ^/server/|^/auth/                     | the caller's own login and account (t1000, t6010)
[A-Z]+ ^/agent/|^/v2/                        | agent-only: the cluster secret's signature (t1300: 401 for every role)
[A-Z]+ ^/apps/                               | the app proxy: an app token or cookie bound to its user (t6100, t1300)
POST ^/session$|^/session/_/create$          | creates for the caller or owner_access_key: the owner rule is authz_owner_keypair, tested below
GET ^/sessions$                              | a list: tested below (the rule as SQL)
GET ^/events/session$                        | tested below: events of every owner, by ownerAccessKey
GET ^/events/background-task$|^/background-tasks/ | tested below: a task of every owner
[A-Z]+ ^/logs/error                          | error logs, by the rule (authz_check, authz_scope_sql): every role x every owner in t1140
[A-Z]+ ^/user-config/                        | dotfiles: the caller's own, another's by owner_access_key (authz_owner_keypair): every role x every owner in t1150
[A-Z]+ ^/template/session|^/session/_/create-from-template$ | session templates by id, under authz_check: every role and a stranger in t1160
[A-Z]+ ^/folders/[{]                         | a folder by name or id: generated below (every /folders/{name} route)
[A-Z]+ ^/folders                             | the caller's own folders, invitations, tokens: t1300, t3210, t3220
[A-Z]+ ^/admin/                              | admin tables by domain (admin_rows.c): every role in t1300
[A-Z]+ ^/manager/                            | the whole service's announcement and status: nobody's own, superadmins write (t1300, t1110)
[A-Z]+ ^/config/                             | the service's configuration, nobody's own (t1300, t1130)
[A-Z]+ ^/images$|^/resource/|^/projects$|^/scaling-groups$ | the caller's own scopes and usage (t1300, t1310, t1400)
EOF

test_expect_success 'every route of docs/openapi.json is generated here or listed with a reason' '
        jq -r ".paths | to_entries[] | .key as \$p | .value | keys[] | \"\(ascii_upcase) \(\$p)\"" "$OPENAPI" |
                sort -u >"$TMP/routes" &&
        test -s "$TMP/routes" &&
        missing=0 &&
        while read -r m p; do
                grep -qxF "$m $p" <(sed "s/ *|.*//" "$TMP/session-routes") && continue
                hit=
                while IFS= read -r line; do
                        rm=${line%% *} rest=${line#* } re=${rest%% |*}
                        re=$(echo "$re" | sed "s/ *$//")
                        [[ $m =~ ^($rm)$ ]] && [[ $p =~ $re ]] && { hit=1; break; }
                done <"$TMP/not-owned"
                [ -n "$hit" ] || { echo "not in the authorization matrix: $m $p"; missing=$((missing + 1)); }
        done <"$TMP/routes" &&
        while read -r m p _; do
                grep -qxF "$m $p" "$TMP/routes" || { echo "stale matrix row: $m $p"; missing=$((missing + 1)); }
        done < <(sed "s/ *|.*//" "$TMP/session-routes") &&
        test $missing = 0
'

# access METHOD PATH: the route's x-tessera-access in the document
access_of() {
        jq -r --arg p "$2" --arg m "$(echo "$1" | tr A-Z a-z)" ".paths[\$p][\$m][\"x-tessera-access\"]" "$OPENAPI"
}

# try CALLER METHOD PATH-TEMPLATE BODY OWNER NAMING REFNAME REFID: one
# request; sets CODE
try() {
        local caller=$1 method=$2 tpl=$3 body=$4 owner=$5 naming=$6 hdr=() q
        ref "$owner" "$naming" "$7" "$8"
        q=$Q
        case $tpl in
        */download_single) [ "$method" = GET ] && q=file=a${q:+&$q} ;;
        */tcpproxy) q=app=x${q:+&$q} ;; # an app the image does not declare: 400 for who may see it
        esac
        path=${tpl/\{name\}/$REF}${q:+?$q}
        [ "$body" = - ] && body=
        if [ "$body" = websocket ]; then
                body=
                hdr=("Connection: Upgrade" "Upgrade: websocket" "Sec-WebSocket-Version: 13"
                        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==")
        fi
        call "$caller" "$method" "$path" "$body" ${hdr[@]+"${hdr[@]}"}
}

test_expect_success 'every session route x every role x every naming x every owner' '
        bad=0 n=0
        while IFS="|" read -r spec body ok; do
                read -r method tpl <<<"$spec"
                body=$(echo $body) ok=$(echo $ok)
                [ "$method" = DELETE ] && continue
                acc=$(access_of "$method" "$tpl")
                for caller in "${CALLERS[@]}"; do
                        for owner in "${OWNERS[@]}"; do
                                for naming in "${NAMINGS[@]}"; do
                                        want=$(expect $caller $owner $naming "$acc" "$ok")
                                        try $caller "$method" "$tpl" "$body" $owner $naming "${NAME[$owner]}" "${SESS[$owner]}"
                                        n=$((n + 1))
                                        [ "$CODE" = "$want" ] && continue
                                        echo "$caller $method $tpl of $owner by $naming: got $CODE, want $want: $(head -c 200 "$TMP/out")"
                                        bad=$((bad + 1))
                                done
                        done
                done
        done <"$TMP/session-routes"
        echo "$n requests, $bad wrong"
        test $bad = 0
'

test_expect_success 'destroy: allowed ends the session, refused leaves it PENDING' '
        bad=0 i=0
        acc=$(access_of DELETE "/session/{name}")
        for caller in "${CALLERS[@]}"; do
                for owner in "${OWNERS[@]}"; do
                        for naming in "${NAMINGS[@]}"; do
                                want=$(expect $caller $owner $naming "$acc" 200)
                                name=${NAME[$owner]} id=${SESS[$owner]}
                                if [ "$want" = 200 ]; then
                                        i=$((i + 1))
                                        new_session $owner d-$i-$owner || return 1
                                        name=d-$i-$owner id=$SID
                                fi
                                try $caller DELETE "/session/{name}" - $owner $naming "$name" "$id"
                                got=$CODE
                                if [ "$got" != "$want" ]; then
                                        echo "$caller DELETE of $owner by $naming: got $CODE, want $want: $(head -c 200 "$TMP/out")"
                                        bad=$((bad + 1))
                                fi
                                call superadmin GET "/session/$id"
                                st=$(jq -r .status "$TMP/out")
                                if [ "$want" = 200 ] && [ "$st" != CANCELLED ]; then
                                        echo "$caller could destroy $owner: still $st"; bad=$((bad + 1))
                                elif [ "$want" != 200 ] && [ "$st" != PENDING ]; then
                                        echo "$caller could not destroy $owner ($got) yet it is $st"; bad=$((bad + 1))
                                fi
                        done
                done
        done
        test $bad = 0
'

test_expect_success 'session lists show exactly the sessions of owners the caller sees' '
        bad=0
        for caller in "${CALLERS[@]}"; do
                call $caller GET "/sessions?limit=100" && test "$CODE" = 200 || return 1
                for owner in "${OWNERS[@]}"; do
                        if jq -e --arg id "${SESS[$owner]}" "any(.items[]; .sessionId == \$id or .id == \$id)" \
                                "$TMP/out" >/dev/null; then got=yes; else got=no; fi
                        if sees $caller $owner; then want=yes; else want=no; fi
                        [ $got = $want ] || { echo "$caller lists $owner: $got, want $want"; bad=$((bad + 1)); }
                done
        done
        test $bad = 0
'

test_expect_success 'events: ownerAccessKey answers by the rule, streams carry only visible sessions' '
        bad=0 pids=()
        for caller in "${CALLERS[@]}"; do
                for owner in "${OWNERS[@]}"; do
                        want=$(expect $caller $owner name+ak read 200)
                        h=(); while IFS= read -r l; do h+=(-H "$l"); done < <("$TT" sign GET "/events/session?ownerAccessKey=${AK[$owner]}" "${BACKEND_ENDPOINT#http://}" "${AK[$caller]}" "${SK[$caller]}" text/plain)
                        CODE=$(curl -s -m 1 -o "$TMP/out" -w "%{http_code}" "${h[@]}" "$BACKEND_ENDPOINT/events/session?ownerAccessKey=${AK[$owner]}") || true
                        [ "$CODE" = "$want" ] || { echo "$caller events of $owner: got $CODE, want $want"; bad=$((bad + 1)); }
                done
        done
        for caller in "${CALLERS[@]}"; do
                for q in "" "?sessionName=*"; do
                        h=(); while IFS= read -r l; do h+=(-H "$l"); done < <("$TT" sign GET "/events/session$q" "${BACKEND_ENDPOINT#http://}" "${AK[$caller]}" "${SK[$caller]}" text/plain)
                        curl -sN -m 8 "${h[@]}" "$BACKEND_ENDPOINT/events/session$q" >"$TMP/ev-$caller${q:+-star}" &
                        pids+=($!)
                done
        done
        for _ in $(seq 1 100); do
                ok=1
                for f in "$TMP"/ev-*; do grep -q "^: open" "$f" || ok=; done
                [ -n "$ok" ] && [ $(ls "$TMP"/ev-* | wc -l) = 10 ] && break
                sleep 0.1
        done
        for owner in "${OWNERS[@]}"; do new_session $owner ev-$owner || return 1; done
        wait "${pids[@]}"
        for caller in "${CALLERS[@]}"; do
                for f in "$TMP/ev-$caller" "$TMP/ev-$caller-star"; do
                        for owner in "${OWNERS[@]}"; do
                                if grep -q "\"ev-$owner\"" "$f"; then got=yes; else got=no; fi
                                if sees $caller $owner; then want=yes; else want=no; fi
                                [ $got = $want ] || { echo "$caller stream ${f##*/} has $owner: $got, want $want"; bad=$((bad + 1)); }
                        done
                done
        done
        test $bad = 0
'

test_expect_success 'background tasks: a task of every owner, by id and by its event stream' '
        bad=0
        for owner in "${OWNERS[@]}"; do
                TASK[$owner]=$(cat /proc/sys/kernel/random/uuid)
                db_sql "INSERT INTO background_tasks(id, kind, status, user_id, domain_name, created_at, modified_at) VALUES ('\''${TASK[$owner]}'\'', '\''commit'\'', '\''done'\'', '\''${UID_[$owner]}'\'', '\''${DOM[$owner]}'\'', 1, 1)" || return 1
        done
        for caller in "${CALLERS[@]}"; do
                for owner in "${OWNERS[@]}"; do
                        want=$(expect $caller $owner id read 200)
                        call $caller GET "/background-tasks/${TASK[$owner]}"
                        [ "$CODE" = "$want" ] || { echo "$caller task of $owner: got $CODE, want $want"; bad=$((bad + 1)); }
                        call $caller GET "/events/background-task?taskId=${TASK[$owner]}"
                        [ "$CODE" = "$want" ] || { echo "$caller task events of $owner: got $CODE, want $want"; bad=$((bad + 1)); }
                done
        done
        test $bad = 0
'

test_expect_success 'create for an owner (owner_access_key): every role for every owner' '
        bad=0
        for caller in "${CALLERS[@]}"; do
                for owner in "${OWNERS[@]}"; do
                        want=$(expect $caller $owner name+ak write 201)
                        proj=default; [ "${DOM[$owner]}" = other ] && proj=oproj
                        call $caller POST /session "{\"name\": \"for-$caller-$owner\", \"image\": \"authz/img:1\", \"group\": \"$proj\", \"enqueueOnly\": true, \"owner_access_key\": \"${AK[$owner]}\"}"
                        [ "$CODE" = "$want" ] || { echo "$caller creates for $owner: got $CODE, want $want: $(head -c 200 "$TMP/out")"; bad=$((bad + 1)); }
                done
        done
        test $bad = 0
'

test_expect_success 'private images (session commits): of every owner, listed, shown and used by the rule' '
        bad=0
        for owner in "${OWNERS[@]}"; do
                db_sql "INSERT INTO images(id, name, tag, created_at, owner_id) VALUES ('\''$(cat /proc/sys/kernel/random/uuid)'\'', '\''priv/$owner'\'', '\''1'\'', 1, '\''${UID_[$owner]}'\'')" || return 1
        done
        for caller in "${CALLERS[@]}"; do
                call $caller GET /images && test "$CODE" = 200 || return 1
                cp "$TMP/out" "$TMP/images"
                for owner in "${OWNERS[@]}"; do
                        # /images: what the caller may start a session with (a monitor starts none)
                        if [ "$caller" = "$owner" ] || { sees $caller $owner && [ "${ROLE[$caller]}" != monitor ]; }; then
                                use=yes; else use=no; fi
                        if jq -e --arg n "priv/$owner" "any(.images[]; .name == \$n)" "$TMP/images" >/dev/null; then
                                got=yes; else got=no; fi
                        [ $got = $use ] || { echo "$caller /images has $owner: $got, want $use"; bad=$((bad + 1)); }
                        want=$(expect $caller $owner id read 200)
                        [ "${ROLE[$caller]}" = user ] && want=403
                        call $caller GET "/admin/images/priv%2F$owner:1"
                        [ "$CODE" = "$want" ] || { echo "$caller /admin/images of $owner: got $CODE, want $want"; bad=$((bad + 1)); }
                        proj=default; [ "${DOM[$caller]}" = other ] && proj=oproj
                        want=400; [ $use = yes ] && want=201; [ "${ROLE[$caller]}" = monitor ] && want=403
                        call $caller POST /session "{\"name\": \"img-$caller-$owner\", \"image\": \"priv/$owner:1\", \"group\": \"$proj\", \"enqueueOnly\": true}"
                        [ "$CODE" = "$want" ] || { echo "$caller starts the image of $owner: got $CODE, want $want: $(head -c 200 "$TMP/out")"; bad=$((bad + 1)); }
                done
        done
        test $bad = 0
'

# Folders keep their own rule (vf_find, docs/design/security.md): a user
# folder is its owner's and those it is shared with, even for admins and
# superadmins; a project folder its members', its domain's admins' (and
# monitors', to read) and superadmins'.  Generated: every /folders/{name} route of the document,
# by name and by id, for every caller that may not use the folder: 404
# (403 for a monitor's write), and the folder is left as it was.
test_expect_success 'every folder route x every role x name and id, for folders the caller may not use' '
        bad=0 n=0
        declare -A FID
        call superadmin PATCH /admin/domains/other "{\"allowed_vfolder_hosts\": {\"local\": [\"create-vfolder\", \"mount-in-session\"]}}" &&
        test "$CODE" = 200 || { echo "domain other: $CODE $(cat "$TMP/out")"; return 1; }
        for owner in user user2 superadmin ouser admin; do
                body="{\"name\": \"f-$owner\"}"
                [ $owner = admin ] && body="{\"name\": \"f-project\", \"group\": \"default\"}"
                call $owner POST /folders "$body" && test "$CODE" = 201 || { echo "folder of $owner: $CODE $(cat "$TMP/out")"; return 1; }
                FID[$owner]=$(jq -r .id "$TMP/out")
        done
        # may CALLER use the folder of OWNER ("admin" stands for the project folder)?
        uses() {
                [ "$1" = "$2" ] && return 0
                [ "$2" = admin ] || return 1
                case $1 in superadmin | admin | monitor | user) return 0 ;; esac
                return 1
        }
        # a valid body, so that the answer is that of the folder lookup
        declare -A FBODY=(
                [rename]="{\"new_name\": \"f-renamed\"}" [mkdir]="{\"path\": \"x\"}"
                [update-options]="{\"permission\": \"ro\"}"
                [rename-file]="{\"target_path\": \"a\", \"new_name\": \"b\"}" [move-file]="{\"src\": \"a\", \"dst\": \"b\"}"
                [delete-files]="{\"files\": [\"a\"]}" [request-upload]="{\"path\": \"a\", \"size\": 1}"
                [rename_file]="{\"target_path\": \"a\", \"new_name\": \"b\"}" [delete_files]="{\"files\": [\"a\"]}"
                [request-download]="{\"path\": \"a\"}"
                [invite]="{\"perm\": \"ro\", \"emails\": [\"user1@authz.test\"]}"
                [share]="{\"permission\": \"ro\", \"emails\": [\"user1@authz.test\"]}"
                [unshare]="{\"emails\": [\"user1@authz.test\"]}")
        jq -r ".paths | to_entries[] | .key as \$p | select(\$p | startswith(\"/folders/{\")) | .value | to_entries[] | \"\(.key|ascii_upcase) \(\$p) \(.value[\"x-tessera-access\"])\"" \
                "$OPENAPI" >"$TMP/folder-routes" && test -s "$TMP/folder-routes" &&
        while read -r method tpl acc; do
                for caller in "${CALLERS[@]}"; do
                        for owner in user user2 superadmin ouser admin; do
                                uses $caller $owner && continue
                                name=f-$owner; [ $owner = admin ] && name=f-project
                                for ref in "$name" "${FID[$owner]}"; do
                                        want=404
                                        [ "${ROLE[$caller]}" = monitor ] && [ "$acc" != read ] && want=403
                                        body=; [ "$method" = GET ] || body=${FBODY[${tpl##*/}]:-"{}"}
                                        call $caller "$method" "${tpl/\{name\}/$ref}" "$body"
                                        n=$((n + 1))
                                        [ "$CODE" = "$want" ] && continue
                                        echo "$caller $method $tpl of $owner by ${ref:0:8}: got $CODE, want $want: $(head -c 160 "$TMP/out")"
                                        bad=$((bad + 1))
                                done
                        done
                done
        done <"$TMP/folder-routes"
        for owner in user user2 superadmin ouser admin; do
                call $owner GET "/folders/${FID[$owner]}"
                [ "$CODE" = 200 ] && jq -e ".status == \"ready\"" "$TMP/out" >/dev/null ||
                        { echo "the folder of $owner changed: $CODE $(head -c 200 "$TMP/out")"; bad=$((bad + 1)); }
        done
        echo "$n requests, $bad wrong"
        test $bad = 0
'

test_done
