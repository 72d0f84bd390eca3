#!/bin/bash
test_description='every route with every role: users never see what is not theirs, admins stay in their domain, monitors only read'
. "$(dirname "$0")/../lib/test-lib.sh"

TT=$BUILD/test-tool
ROLES_PASSWORD=walk-password-1
. "$(dirname "$0")/../lib/roles.sh"

test_expect_success 'set up two domains with a superadmin, admins, a monitor and users' '
        start_manager &&
        AK[superadmin]=$BACKEND_ACCESS_KEY && SK[superadmin]=$BACKEND_SECRET_KEY &&
        call superadmin POST /admin/domains "{\"name\": \"other\"}" && test "$CODE" = 201 &&
        call superadmin POST /admin/projects "{\"name\": \"oproj\", \"domain\": \"other\"}" && test "$CODE" = 201 &&
        call superadmin POST /admin/resource-groups/default/access "{\"add\": {\"domains\": [\"other\"]}}" &&
        test "$CODE" = 200 &&
        make_user admin admin1@walk.test default admin &&
        make_user monitor mon1@walk.test default monitor &&
        make_user user user1@walk.test default user default &&
        make_user user2 user2@walk.test default user default &&
        make_user oadmin oadmin@walk.test other admin &&
        make_user ouser ouser@walk.test other user oproj &&
        call superadmin POST /admin/images "{\"name\": \"walk/img\", \"tag\": \"1\"}" && test "$CODE" = 201 &&
        call superadmin POST /admin/presets "{\"name\": \"small\", \"resource_slots\": {\"cpu\": 1, \"mem\": \"1g\"}}" &&
        test "$CODE" = 201 &&
        call user2 POST /session "{\"name\": \"victim\", \"image\": \"walk/img:1\", \"enqueueOnly\": true}" &&
        test "$CODE" = 201 && VICTIM=$(sed -n "s/.*\"sessionId\":\"\([^\"]*\)\".*/\1/p" "$TMP/out") &&
        call user2 POST /session "{\"name\": \"victim2\", \"image\": \"walk/img:1\", \"enqueueOnly\": true}" &&
        test "$CODE" = 201 && VICTIM2=$(sed -n "s/.*\"sessionId\":\"\([^\"]*\)\".*/\1/p" "$TMP/out") &&
        call ouser POST /session "{\"name\": \"osess\", \"image\": \"walk/img:1\", \"group\": \"oproj\", \"enqueueOnly\": true}" &&
        test "$CODE" = 201 && OSESS=$(sed -n "s/.*\"sessionId\":\"\([^\"]*\)\".*/\1/p" "$TMP/out") &&
        call user2 POST /folders "{\"name\": \"walkf\"}" &&
        test "$CODE" = 201 && VF=$(sed -n "s/.*\"id\":\"\([^\"]*\)\".*/\1/p" "$TMP/out") && test -n "$VF"
'

# METHOD PATH BODY | expected status for: oadmin user monitor admin superadmin
# (evaluated in that order on each line; "-" = not tried).  {ROLE} in a
# body is replaced by the caller's role, {U2AK} by user2's access key,
# {SAK} by the superadmin's, {VICTIM}/{VICTIM2}/{OSESS} by session ids.
cat >"$TMP/matrix" <<'MATRIX'
GET /                                   -                       | 200 200 200 200 200
GET /health                             -                       | 200 200 200 200 200
GET /metrics                            -                       | 200 200 200 200 200
GET /ui/nope.js                         -                       | 404 404 404 404 404
POST /server/login                      {"email":"nobody@walk.test","password":"nope-nope"} | 401 401 401 401 401
GET /server/session                     -                       | 401 401 401 401 401
GET /server/app-login                   -                       | 400 400 400 400 400
POST /server/logout                     -                       | 204 204 204 204 204
GET /openapi.json                       -                       | 200 200 200 200 200
POST /auth/authorize                    {"username":"user1@walk.test","password":"walk-password-1"} | 200 200 200 200 200
GET /auth/role                          -                       | 200 200 200 200 200
POST /auth/update-password              {"old_password":"wrong-password","new_password":"whatever-123"} | 401 401 401 401 401
GET /config/resource-slots              -                       | 200 200 200 200 200
GET /config/vfolder-types               -                       | 200 200 200 200 200
GET /config/docker-registries           -                       | 403 403 403 403 200
POST /config/get                        {"key":"config/docker"} | 403 403 403 403 501
POST /config/set                        {"key":"a","value":"b"} | 403 403 403 403 501
POST /config/delete                     {"key":"a"}             | 403 403 403 403 501
GET /resource/watcher                   -                       | 403 403 403 403 501
POST /resource/recalculate-usage        -                       | 403 403 403 403 200
GET /folders/_/mounts                   -                       | 403 403 403 403 200
POST /folders/_/mounts                  {"name":"x","fs_location":"y"} | 403 403 403 403 501
DELETE /folders/_/mounts                {"name":"x"}            | 403 403 403 403 501
GET /folders/_/fstab                    -                       | 403 403 403 403 501
GET /folders/_/perf-metric              -                       | 403 403 403 403 501
POST /resource/watcher/agent/restart    {"agent_id":"a1"}       | 403 403 403 403 501
GET /manager/announcement               -                       | 200 200 200 200 200
POST /manager/announcement              {"enabled":true,"message":"walk"} | 403 403 403 403 204
GET /manager/status                     -                       | 403 403 403 403 200
PUT /manager/status                     {"status":"running"}    | 403 403 403 403 204
POST /manager/scheduler/operation       {"op":"include-agents","args":[]} | 403 403 403 403 204
POST /logs/error                        {"severity":"error","source":"walk","message":"m","context_lang":"js","context_env":"{}"} | 200 200 200 200 200
GET /logs/error                         -                       | 200 200 200 200 200
GET /logs/error?page_size=0             -                       | 400 400 400 400 400
POST /logs/error/00000000-0000-4000-8000-000000000000/clear -   | 404 404 403 404 404
POST /user-config/dotfiles              {"data":"x","path":".walk-{ROLE}","permission":"644"} | 200 200 403 200 200
GET /user-config/dotfiles               -                       | 200 200 200 200 200
GET /user-config/dotfiles?owner_access_key={U2AK} -             | 404 403 200 200 200
GET /user-config/dotfiles?path=.walk-oadmin -                   | 200 404 404 404 404
PATCH /user-config/dotfiles             {"path":".walk-{ROLE}","data":"y"} | 200 200 403 200 200
PATCH /user-config/dotfiles?owner_access_key={U2AK} {"path":".walk-{ROLE}","data":"y"} | 404 403 403 404 404
DELETE /user-config/dotfiles?path=.walk-oadmin -                | 200 404 403 404 404
POST /session                           {"name":"walk-{ROLE}","image":"walk/img:1","enqueueOnly":true} | 400 201 403 201 201
POST /session/_/create                  {"name":"walk-{ROLE}","image":"walk/img:1","enqueueOnly":true} | 400 200 403 200 200
GET /sessions                           -                       | 200 200 200 200 200
GET /template/session                   -                       | 200 200 200 200 200
POST /template/session                  {"payload":"kind: x"}   | 400 400 403 400 400
GET /template/session/{VICTIM}          -                       | 404 404 404 404 404
PUT /template/session/{VICTIM}          {"payload":"x"}         | 404 404 403 404 404
DELETE /template/session/{VICTIM}       -                       | 404 404 403 404 404
POST /session/_/create-from-template    {"template_id":"x"}     | 404 404 403 404 404
GET /session/{VICTIM}                   -                       | 404 404 200 200 200
GET /session/victim?owner_access_key={U2AK} -                   | 404 403 200 200 200
GET /session/{OSESS}                    -                       | 200 404 404 404 200
GET /session/{VICTIM}/logs              -                       | 404 404 200 200 200
POST /session/{VICTIM}/rename?name=x     -                       | 404 404 403 400 400
POST /session/{VICTIM}                  {"mode":"query","code":"1"} | 404 404 403 409 409
POST /session/{VICTIM}/interrupt        {}                      | 404 404 403 409 409
POST /session/{VICTIM}/upload           -                       | 404 404 403 409 409
GET /session/{VICTIM}/download_single?file=a -                  | 404 404 403 409 409
POST /session/{VICTIM}/download_single  {"file":"a"}            | 404 404 403 409 409
GET /session/{VICTIM}/files             -                       | 404 404 403 409 409
GET /session/{VICTIM}/download          {"files":["a"]}         | 404 404 403 409 409
POST /session/{VICTIM}/complete         {"code":"pri"}          | 404 404 403 409 409
PATCH /session/{VICTIM}                 -                       | 404 404 403 409 409
GET /stream/session/{VICTIM}/apps       -                       | 404 404 409 409 409
GET /stream/session/{VICTIM}/tcpproxy?app=x -                   | 404 404 403 400 400
POST /session/{VICTIM}/commit          {"tag":"walk"}          | 404 404 403 409 409
GET /session/{VICTIM}/commit           -                       | 404 404 200 200 200
GET /events/background-task?taskId=nope -                      | 404 404 404 404 404
GET /events/background-task            -                       | 400 400 400 400 400
GET /background-tasks/nope             -                       | 404 404 404 404 404
GET /stream/session/{VICTIM}/pty        -                       | 400 400 403 400 400
GET /stream/session/{VICTIM}/execute    -                       | 400 400 403 400 400
POST /session/{VICTIM}/start-service    {"app":"jupyter"}       | 404 404 403 409 409
POST /session/{VICTIM}/shutdown-service {"service_name":"jupyter"} | 404 404 403 409 409
GET /apps/_/open?token=x                -                       | 421 421 421 421 421
GET /apps/{VICTIM}/jupyter              -                       | 421 421 421 421 421
GET /apps/{VICTIM}/jupyter/api/status   -                       | 421 421 421 421 421
POST /apps/{VICTIM}/jupyter             -                       | 421 421 421 421 421
POST /apps/{VICTIM}/jupyter/api/kernels {}                      | 421 421 421 421 421
PUT /apps/{VICTIM}/jupyter              -                       | 421 421 421 421 421
PATCH /apps/{VICTIM}/jupyter            -                       | 421 421 421 421 421
DELETE /apps/{VICTIM}/jupyter           -                       | 421 421 421 421 421
OPTIONS /apps/{VICTIM}/jupyter          -                       | 421 421 421 421 421
OPTIONS /apps/{VICTIM}/jupyter/x        -                       | 421 421 421 421 421
DELETE /session/{VICTIM2}               -                       | 404 404 403 200 -
GET /events/session                     -                       | 200 200 200 200 200
GET /resource/presets                   -                       | 200 200 200 200 200
GET /projects                           -                       | 200 200 200 200 200
GET /scaling-groups?group=default       -                       | 404 200 200 200 200
POST /resource/check-presets            {}                      | 404 200 200 200 200
POST /agent/heartbeat                   {"id":"walk"}           | 401 401 401 401 401
POST /agent/sync                        {"id":"walk"}           | 401 401 401 401 401
POST /agent/events                      {"id":"walk","events":[]} | 401 401 401 401 401
GET /resource/usage/period?start_date=20250101&end_date=20250102 - | 200 200 200 200 200
GET /resource/usage/month?month=202501   -                       | 403 403 403 403 200
GET /resource/stats/user/month          -                       | 200 200 200 200 200
GET /admin/usage                        -                       | 200 403 200 200 200
GET /admin/domains                      -                       | 200 403 200 200 200
GET /admin/domains/other                -                       | 200 403 404 404 200
GET /admin/domains/default              -                       | 404 403 200 200 200
POST /admin/gql                         {"query":"{ keypair { access_key } }"} | 200 200 200 200 200
POST /admin/domains                     {"name":"walkdom-{ROLE}"} | 403 403 403 403 201
PATCH /admin/domains/other              {"description":"x"}     | 403 403 403 403 200
DELETE /admin/domains/nope              -                       | 403 403 403 403 404
GET /admin/projects                     -                       | 200 403 200 200 200
GET /admin/projects/default             -                       | 404 403 200 200 200
POST /admin/projects                    {"name":"walkp-{ROLE}"} | 201 403 403 201 201
PATCH /admin/projects/default           {"description":"x"}     | 404 403 403 200 200
DELETE /admin/projects/nope             -                       | 404 403 403 404 404
GET /admin/projects/default/members     -                       | 404 403 200 200 200
POST /admin/projects/default/members    {"add":["user1@walk.test"]} | 404 403 403 200 200
GET /admin/users                        -                       | 200 403 200 200 200
GET /admin/users/user2@walk.test        -                       | 404 403 200 200 200
GET /admin/users/ouser@walk.test        -                       | 200 403 404 404 200
GET /admin/users/admin@tessera.local    -                       | 404 403 404 404 200
PATCH /admin/users/admin@tessera.local  {"full_name":"x"}       | 404 403 403 404 200
POST /admin/users                       {"email":"walk-{ROLE}@walk.test","password":"walk-password-2"} | 201 403 403 201 201
PATCH /admin/users/user2@walk.test      {"full_name":"x"}       | 404 403 403 200 200
DELETE /admin/users/nope@walk.test      -                       | 404 403 403 404 404
GET /admin/keypairs                     -                       | 200 200 200 200 200
GET /admin/keypairs/{U2AK}              -                       | 404 404 200 200 200
GET /admin/keypairs/{SAK}               -                       | 404 404 404 404 200
POST /admin/keypairs                    {}                      | 201 403 403 201 201
PATCH /admin/keypairs/{U2AK}            {"is_active":true}      | 404 404 403 200 200
DELETE /admin/keypairs/AKIANOPENOPENOPENOPE -                   | 404 404 403 404 404
GET /admin/keypair-policies             -                       | 200 403 200 200 200
GET /admin/keypair-policies/default     -                       | 200 403 200 200 200
POST /admin/keypair-policies            {"name":"walkpol-{ROLE}"} | 403 403 403 403 201
PATCH /admin/keypair-policies/default   {"idle_timeout":0}      | 403 403 403 403 200
DELETE /admin/keypair-policies/nope     -                       | 403 403 403 403 404
GET /admin/resource-groups              -                       | 200 403 200 200 200
GET /admin/resource-groups/default      -                       | 200 403 200 200 200
POST /admin/resource-groups             {"name":"walkrg-{ROLE}"} | 403 403 403 403 201
PATCH /admin/resource-groups/default    {"description":"x"}     | 403 403 403 403 200
DELETE /admin/resource-groups/nope      -                       | 403 403 403 403 404
POST /admin/resource-groups/walkrg-superadmin/access {"add":{"domains":["default"]}} | 403 403 403 403 200
GET /admin/presets                      -                       | 200 403 200 200 200
GET /admin/presets/small                -                       | 200 403 200 200 200
POST /admin/presets                     {"name":"walkpre-{ROLE}","resource_slots":{"cpu":1}} | 403 403 403 403 201
PATCH /admin/presets/small              {"shared_memory":"64m"} | 403 403 403 403 200
DELETE /admin/presets/nope              -                       | 403 403 403 403 404
GET /admin/images                       -                       | 200 403 200 200 200
GET /admin/images/walk%2Fimg:1          -                       | 200 403 200 200 200
POST /admin/images                      {"name":"walk/{ROLE}","tag":"1"} | 403 403 403 403 201
PATCH /admin/images/walk%2Fimg:1        {"labels":{"a":"b"}}    | 403 403 403 403 200
DELETE /admin/images/nope:1             -                       | 403 403 403 403 404
GET /admin/image-aliases                -                       | 200 403 200 200 200
GET /admin/image-aliases/nope           -                       | 404 403 404 404 404
POST /admin/image-aliases               {"alias":"a-{ROLE}","image_id":"nope"} | 403 403 403 403 400
DELETE /admin/image-aliases/nope        -                       | 403 403 403 403 404
GET /images                             -                       | 200 200 200 200 200
GET /admin/image-blobs/sha256:0000000000000000000000000000000000000000000000000000000000000000 - | 403 403 403 403 200
PATCH /admin/image-blobs/sha256:0000000000000000000000000000000000000000000000000000000000000000?offset=0 - | 403 403 403 403 200
PUT /admin/image-blobs/sha256:0000000000000000000000000000000000000000000000000000000000000000?offset=0 - | 403 403 403 403 400
POST /admin/image-imports               {"reference":"walk/imp:1","manifest":"sha256:0000000000000000000000000000000000000000000000000000000000000000"} | 403 403 403 403 400
GET /v2/walk                            -                       | 401 401 401 401 401
POST /v2/walk                           -                       | 401 401 401 401 401
PATCH /v2/walk                          -                       | 401 401 401 401 401
PUT /v2/walk                            -                       | 401 401 401 401 401
GET /admin/container-registries         -                       | 403 403 403 403 200
GET /admin/container-registries/nope.example.com -              | 403 403 403 403 404
POST /admin/container-registries        {"name":"{ROLE}.example.com","url":"https://r.example.com"} | 403 403 403 403 201
PATCH /admin/container-registries/nope.example.com {"project":"x"} | 403 403 403 403 404
DELETE /admin/container-registries/nope.example.com -           | 403 403 403 403 404
POST /admin/container-registries/nope.example.com/rescan -      | 403 403 403 403 404
GET /admin/agents                       -                       | 200 403 200 200 200
GET /admin/agents/nope                  -                       | 404 403 404 404 404
PATCH /admin/agents/nope                {"schedulable":false}   | 403 403 403 403 404
DELETE /admin/agents/nope               -                       | 403 403 403 403 404
GET /folders/_/hosts                    -                       | 200 200 200 200 200
GET /folders/_/all-hosts                -                       | 403 403 403 403 200
GET /folders/_/allowed-types            -                       | 200 200 200 200 200
GET /folders/_/all_hosts                -                       | 403 403 403 403 200
GET /folders/_/allowed_types            -                       | 200 200 200 200 200
GET /folders/_/usage?folder_name=walkf  -                       | 404 404 404 404 404
GET /folders/_/quota                    -                       | 200 200 200 200 200
GET /folders                            -                       | 200 200 200 200 200
POST /folders                           {"name":"walkf-{ROLE}"} | 403 201 403 201 201
GET /folders/walkf                      -                       | 404 404 404 404 404
GET /folders/{VF}                       -                       | 404 404 404 404 404
GET /folders/walkf/files                -                       | 404 404 404 404 404
DELETE /folders/walkf                   -                       | 404 404 403 404 404
DELETE /folders                         {"id":"{VF}"}           | 404 404 403 404 404
POST /folders/walkf/rename              {"new_name":"walkg"}    | 404 404 403 404 404
POST /folders/walkf/update-options      {"permission":"ro"}     | 404 404 403 404 404
POST /folders/walkf/clone               {"target_name":"walkc"} | 404 404 403 404 404
POST /folders/walkf/restore             {}                      | 404 404 403 404 404
POST /folders/walkf/purge               {}                      | 404 404 403 404 404
POST /folders/purge                     {"vfolder_id":"{VF}"}   | 404 404 403 404 404
DELETE /folders/delete-from-trash-bin   {"vfolder_id":"{VF}"}   | 404 404 403 404 404
POST /folders/restore-from-trash-bin    {"vfolder_id":"{VF}"}   | 404 404 403 404 404
POST /folders/walkf/mkdir               {"path":"x"}            | 404 404 403 404 404
POST /folders/walkf/rename-file         {"target_path":"a","new_name":"b"} | 404 404 403 404 404
POST /folders/walkf/rename_file         {"target_path":"a","new_name":"b"} | 404 404 403 404 404
POST /folders/walkf/move-file           {"src":"a","dst":"b"}   | 404 404 403 404 404
DELETE /folders/walkf/delete-files      {"files":["a"]}         | 404 404 403 404 404
POST /folders/walkf/delete-files        {"files":["a"]}         | 404 404 403 404 404
DELETE /folders/walkf/delete_files      {"files":["a"]}         | 404 404 403 404 404
POST /folders/walkf/delete_files        {"files":["a"]}         | 404 404 403 404 404
POST /folders/walkf/request-upload      {"path":"a","size":1}   | 404 404 403 404 404
POST /folders/walkf/request-download    {"path":"a"}            | 404 404 403 404 404
POST /folders/walkf/invite              {"perm":"ro","emails":["user1@walk.test"]} | 404 404 403 404 404
POST /folders/walkf/share               {"permission":"ro","emails":["user1@walk.test"]} | 404 404 403 404 404
DELETE /folders/walkf/unshare           {"emails":["user1@walk.test"]} | 404 404 403 404 404
POST /folders/walkf/unshare             {"emails":["user1@walk.test"]} | 404 404 403 404 404
POST /folders/walkf/leave               {}                      | 404 404 403 404 404
GET /folders/invitations/list           -                       | 200 200 200 200 200
GET /folders/invitations/list-sent      -                       | 200 200 200 200 200
GET /folders/invitations/list_sent      -                       | 200 200 200 200 200
GET /folders/_/shared                   -                       | 200 200 200 200 200
POST /folders/invitations/accept        {"inv_id":"00000000-0000-4000-8000-000000000000"} | 404 404 403 404 404
DELETE /folders/invitations/delete      {"inv_id":"00000000-0000-4000-8000-000000000000"} | 404 404 403 404 404
POST /folders/invitations/delete        {"inv_id":"00000000-0000-4000-8000-000000000000"} | 404 404 403 404 404
OPTIONS /folders/_/upload               -                       | 204 204 204 204 204
POST /folders/_/upload?token=x          -                       | 412 412 412 412 412
GET /folders/_/upload?token=x           -                       | 412 412 412 412 412
PATCH /folders/_/upload?token=x         -                       | 412 412 412 412 412
GET /folders/_/download?token=x         -                       | 403 403 403 403 403
GET /admin/audit-log                    -                       | 200 403 200 200 200
MATRIX

ROLES=(oadmin user monitor admin superadmin)

test_expect_success 'each route answers each role as the matrix says' '
        bad=0
        while IFS= read -r line; do
                [ -n "$line" ] || continue
                spec=${line%%|*} want=(${line#*|})
                method=$(echo "$spec" | awk "{print \$1}")
                path=$(echo "$spec" | awk "{print \$2}")
                body=$(echo "$spec" | awk "{\$1=\"\"; \$2=\"\"; print}" | sed "s/^ *//; s/ *$//")
                [ "$body" = - ] && body=
                path=${path//\{U2AK\}/${AK[user2]}}
                path=${path//\{SAK\}/${AK[superadmin]}}
                path=${path//\{VICTIM\}/$VICTIM}
                path=${path//\{VICTIM2\}/$VICTIM2}
                path=${path//\{OSESS\}/$OSESS}
                path=${path//\{VF\}/$VF}
                body=${body//\{VF\}/$VF}
                for i in 0 1 2 3 4; do
                        [ "${want[$i]}" = - ] && continue
                        role=${ROLES[$i]}
                        call $role "$method" "$path" "${body//\{ROLE\}/$role}"
                        if [ "$CODE" != "${want[$i]}" ]; then
                                echo "$role $method $path: got $CODE, want ${want[$i]}: $(head -c 300 "$TMP/out")"
                                bad=$((bad + 1))
                        fi
                done
        done <"$TMP/matrix"
        test $bad = 0
'

test_expect_success 'the matrix covers every route of /openapi.json' '
        curl -sf "$BACKEND_ENDPOINT/openapi.json" >"$TMP/openapi.json" &&
        jq -r ".paths | to_entries[] | .key as \$p | .value | keys[] | \"\(ascii_upcase) \(\$p)\"" \
                "$TMP/openapi.json" | sort -u >"$TMP/routes" &&
        awk "{print \$1, \$2}" "$TMP/matrix" | sed -E "s#\{(U2AK|SAK|VICTIM|VICTIM2|OSESS|VF)\}#X#g" >"$TMP/tried" &&
        missing=0 &&
        while read -r m p; do
                re=$(echo "$p" | sed -E "s#\{[^}]*\}#[^/]+#g") &&
                grep -qE "^$m $re(\?.*)?$" "$TMP/tried" || { echo "not covered: $m $p"; missing=$((missing + 1)); }
        done <"$TMP/routes" &&
        test $missing = 0
'

test_expect_success 'lists show a user only its own sessions and keypairs, never secrets' '
        call user GET /sessions && test "$CODE" = 200 &&
        ! grep -q victim "$TMP/out" && grep -q walk-user "$TMP/out" &&
        call user GET /admin/keypairs && test "$CODE" = 200 &&
        ! grep -q "${AK[user2]}" "$TMP/out" && grep -q "${AK[user]}" "$TMP/out" &&
        ! grep -q secret "$TMP/out" &&
        call superadmin GET /admin/keypairs?limit=1000 && ! grep -q secret "$TMP/out" &&
        call superadmin GET /admin/users?limit=1000 && ! grep -qE "scrypt|password\"|password_hash" "$TMP/out"
'

test_expect_success 'a domain admin sees nothing of another domain in lists, nor the superadmins of its own' '
        call oadmin GET /sessions && ! grep -q "\"domainName\":\"default\"" "$TMP/out" && grep -q osess "$TMP/out" &&
        call oadmin GET "/admin/users?limit=1000" && ! grep -q "@walk.test\",\"username\":\"user" "$TMP/out" &&
        ! grep -q user2@walk.test "$TMP/out" &&
        call admin GET /sessions && ! grep -q osess "$TMP/out" &&
        call admin GET "/admin/users?limit=1000" && grep -q user2@walk.test "$TMP/out" &&
        ! grep -q "$TEST_ADMIN_EMAIL" "$TMP/out" &&
        call monitor GET "/admin/keypairs?limit=1000" && grep -q "${AK[user2]}" "$TMP/out" &&
        ! grep -q "${AK[superadmin]}" "$TMP/out" &&
        call superadmin GET "/admin/audit-log?limit=1000" && grep -q "\"user_email\":\"$TEST_ADMIN_EMAIL\"" "$TMP/out" &&
        call admin GET "/admin/audit-log?limit=1000" && grep -q "\"user_email\":\"user2@walk.test\"" "$TMP/out" &&
        ! grep -q "\"user_email\":\"$TEST_ADMIN_EMAIL\"" "$TMP/out" &&
        call monitor GET /sessions && ! grep -q osess "$TMP/out" && grep -q victim "$TMP/out"
'

test_expect_success 'events reach only those who may see the session' '
        h=(); while IFS= read -r l; do h+=(-H "$l"); done < <("$TT" sign GET "/events/session" "${BACKEND_ENDPOINT#http://}" "${AK[user]}" "${SK[user]}" text/plain)
        curl -sN -m 5 "${h[@]}" "$BACKEND_ENDPOINT/events/session" >"$TMP/user-events" &
        p1=$!
        h2=(); while IFS= read -r l; do h2+=(-H "$l"); done < <("$TT" sign GET "/events/session" "${BACKEND_ENDPOINT#http://}" "${AK[admin]}" "${SK[admin]}" text/plain)
        curl -sN -m 5 "${h2[@]}" "$BACKEND_ENDPOINT/events/session" >"$TMP/admin-events" &
        p2=$!
        # both streams open with ": open": subscribed from then on
        for i in $(seq 1 50); do grep -q "^: open" "$TMP/user-events" && grep -q "^: open" "$TMP/admin-events" && break; sleep 0.1; done
        grep -q "^: open" "$TMP/admin-events" &&
        call user2 POST /session "{\"name\": \"secret-one\", \"image\": \"walk/img:1\", \"enqueueOnly\": true}" &&
        call user POST /session "{\"name\": \"mine-one\", \"image\": \"walk/img:1\", \"enqueueOnly\": true}" &&
        wait $p1 $p2
        grep -q mine-one "$TMP/user-events" && ! grep -q secret-one "$TMP/user-events" &&
        grep -q secret-one "$TMP/admin-events" && grep -q mine-one "$TMP/admin-events"
'

test_done
