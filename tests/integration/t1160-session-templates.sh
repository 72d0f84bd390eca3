#!/bin/bash
test_description='Backend.AI'"'"'s session templates: YAML or JSON payloads as its client sends them, who sees them, and sessions made from them with the request overriding the template'
. "$(dirname "$0")/../lib/test-lib.sh"
. "$(dirname "$0")/../lib/roles.sh"

TEMPLATE='api_version: v1
kind: taskTemplate
metadata:
  name: trainer
  tag: nightly
spec:
  sessionType: batch
  kernel:
    image: tpl/python:3.11
    environ:
      EPOCHS: "10"
      MODE: fast
    run:
      bootstrap: |
        echo preparing
      startup_command: python3 train.py
    git:
      repository: https://example.test/lab/models.git
      branch: main
  resources:
    cpu: "2"
    mem: 1g
'

# create AS PAYLOAD: POST /template/session as the SDK sends it
create() {
        call "$1" POST /template/session "$(jq -cn --arg p "$2" '{payload: $p, group_name: "default", domain_name: "default", owner_access_key: null}')"
}

test_expect_success 'a manager, two users of one domain, an admin, an image' '
        start_manager &&
        AK[superadmin]=$BACKEND_ACCESS_KEY SK[superadmin]=$BACKEND_SECRET_KEY &&
        make_user user tpl1@tpl.test default user default &&
        make_user user2 tpl2@tpl.test default user default &&
        make_user admin tpladm@tpl.test default admin default &&
        call superadmin POST /admin/images "{\"name\": \"tpl/python\", \"tag\": \"3.11\"}" && test "$CODE" = 201 &&
        call superadmin POST /admin/images "{\"name\": \"tpl/other\", \"tag\": \"1\"}" && test "$CODE" = 201
'

test_expect_success 'create (YAML, as backend.ai sesstpl create): {id, user}' '
        create user "$TEMPLATE" && test "$CODE" = 200 &&
        TID=$(jq -r .id "$TMP/out") && test "$(jq -r .user "$TMP/out")" = "${UID_[user]}" &&
        echo "$TID" >"$TMP/tid"
'

test_expect_success 'get: the template as JSON, with its owner and project' '
        TID=$(cat "$TMP/tid") &&
        call user GET "/template/session/$TID?format=yaml" && test "$CODE" = 200 &&
        jq -e ".name == \"trainer\" and .user_uuid == \"${UID_[user]}\" and .domain_name == \"default\" and (.group_id | length == 36)" "$TMP/out" &&
        jq -e ".template.spec.kernel.environ == {\"EPOCHS\": \"10\", \"MODE\": \"fast\"} and .template.spec.resources.cpu == \"2\" and .template.kind == \"taskTemplate\"" "$TMP/out" &&
        call user GET "/template/session/$TID?format=xml" && test "$CODE" = 400
'

test_expect_success 'list: the caller'"'"'s own; all=true for an admin shows the domain'"'"'s' '
        TID=$(cat "$TMP/tid") &&
        call user GET /template/session "{\"all\": false}" && test "$CODE" = 200 &&
        jq -e "length == 1 and .[0].id == \"$TID\" and .[0].name == \"trainer\" and .[0].is_owner and .[0].user_email == \"tpl1@tpl.test\" and .[0].group_name == \"default\" and .[0].template.metadata.tag == \"nightly\"" "$TMP/out" &&
        call user2 GET /template/session && test "$CODE" = 200 && jq -e "length == 0" "$TMP/out" &&
        call user2 GET "/template/session?all=true" && jq -e "length == 0" "$TMP/out" &&
        call admin GET "/template/session?all=true" && test "$CODE" = 200 &&
        jq -e "map(.id) == [\"$TID\"] and (.[0].is_owner | not)" "$TMP/out"
'

test_expect_success 'create-from-template: the template'"'"'s request, overridden by the caller'"'"'s' '
        TID=$(cat "$TMP/tid") &&
        call user POST /session/_/create-from-template "{\"template_id\": \"$TID\", \"name\": \"from-tpl\", \"enqueueOnly\": true, \"maxWaitSeconds\": 0, \"reuseIfExists\": true, \"tag\": null, \"image\": null, \"domain\": \"default\", \"group\": \"default\", \"owner_access_key\": null, \"type\": null, \"starts_at\": null, \"config\": {\"mounts\": [], \"environ\": {\"MODE\": \"slow\"}, \"resources\": null, \"scalingGroup\": null}}" &&
        test "$CODE" = 201 || { cat "$TMP/out"; false; } &&
        call user GET /session/from-tpl && test "$CODE" = 200 &&
        jq -e ".image == \"tpl/python:3.11\" and .tag == \"nightly\" and .type == \"batch\" and (.environ | fromjson? // .) == {\"MODE\": \"slow\"}" "$TMP/out" &&
        jq -e "(.requestedSlots | fromjson? // .) | .cpu == \"2\" and .mem == \"1073741824\"" "$TMP/out" &&
        test "$(db_sql "SELECT startup_command FROM sessions WHERE name = '"'"'from-tpl'"'"'")" = "python3 train.py" &&
        db_sql "SELECT bootstrap_script FROM sessions WHERE name = '"'"'from-tpl'"'"'" >"$TMP/boot" &&
        grep -qF "git clone --branch '"'"'main'"'"' -- '"'"'https://example.test/lab/models.git'"'"' '"'"'/home/work/models'"'"'" "$TMP/boot" &&
        grep -qx "echo preparing" "$TMP/boot" &&
        call user POST /session/_/create-from-template "{\"template_id\": \"$TID\", \"name\": \"other-img\", \"image\": \"tpl/other:1\", \"type\": \"interactive\", \"enqueueOnly\": true, \"config\": {\"resources\": {\"cpu\": 1, \"mem\": \"512m\"}}}" &&
        test "$CODE" = 201 &&
        call user GET /session/other-img &&
        jq -e ".image == \"tpl/other:1\" and .type == \"interactive\" and ((.requestedSlots | fromjson? // .) | .cpu == \"1\")" "$TMP/out"
'

test_expect_success 'others cannot see, change, delete or start from a template (404); admins of its domain can' '
        TID=$(cat "$TMP/tid") &&
        call user2 GET "/template/session/$TID" && test "$CODE" = 404 &&
        call user2 PUT "/template/session/$TID" "$(jq -cn --arg p "$TEMPLATE" "{payload: \$p}")" && test "$CODE" = 404 &&
        call user2 DELETE "/template/session/$TID" && test "$CODE" = 404 &&
        call user2 POST /session/_/create-from-template "{\"template_id\": \"$TID\", \"name\": \"stolen\", \"enqueueOnly\": true}" &&
        test "$CODE" = 404 &&
        call admin GET "/template/session/$TID" && test "$CODE" = 200 &&
        call user GET "/template/session/$(cat /proc/sys/kernel/random/uuid)" && test "$CODE" = 404 &&
        call user GET /template/session/not-a-uuid && test "$CODE" = 404
'

test_expect_success 'bad payloads get a 400 that names what is wrong' '
        create user "kind: taskTemplate
metadata: [1" && test "$CODE" = 400 && grep -q "line" "$TMP/out" &&
        create user "{\"api_version\": \"v1\", \"kind\": \"pod\", \"metadata\": {\"name\": \"x\"}, \"spec\": {}}" &&
        test "$CODE" = 400 && grep -q "kind" "$TMP/out" &&
        create user "{\"api_version\": \"v1\", \"kind\": \"taskTemplate\", \"metadata\": {\"name\": \"x\"}, \"spec\": {\"kernel\": {}}}" &&
        test "$CODE" = 400 && grep -q "spec.kernel.image: required" "$TMP/out" &&
        create user "{\"api_version\": \"v1\", \"kind\": \"taskTemplate\", \"metadata\": {\"name\": \"x\"}, \"spec\": {\"kernel\": {\"image\": \"a:1\", \"git\": {\"repository\": \"r\", \"credential\": {\"username\": \"u\", \"password\": \"p\"}}}}}" &&
        test "$CODE" = 400 && grep -q "credential" "$TMP/out" &&
        create user "{\"api_version\": \"v1\", \"kind\": \"taskTemplate\", \"metadata\": {\"name\": \"x\"}, \"spec\": {\"kernel\": {\"image\": \"a:1\", \"environ\": {\"A\": [1]}}}}" &&
        test "$CODE" = 400 && grep -q "spec.kernel.environ.A" "$TMP/out" &&
        create user "a: &x 1
b: *x" && test "$CODE" = 400 && grep -q "aliases" "$TMP/out" &&
        create user "" && test "$CODE" = 400 &&
        call user POST /template/session "{}" && test "$CODE" = 400 &&
        call user POST /template/session "{\"payload\": \"x\", \"group_name\": \"nope\"}" && test "$CODE" = 400 &&
        call user POST /session/_/create-from-template "{\"name\": \"no-template\"}" && test "$CODE" = 400
'

test_expect_success 'Backend.AI'"'"'s list form: several templates, several ids' '
        create user "session_templates:
  - name: first
    template: {api_version: v1, kind: taskTemplate, metadata: {name: a}, spec: {kernel: {image: \"tpl/python:3.11\"}}}
  - template: {api_version: v1, kind: task_template, metadata: {name: second}, spec: {kernel: {image: \"tpl/other:1\"}}}
" && test "$CODE" = 200 &&
        jq -e "type == \"array\" and length == 2" "$TMP/out" &&
        call user GET /template/session && jq -e "map(.name) == [\"trainer\", \"first\", \"second\"]" "$TMP/out"
'

test_expect_success 'update replaces the content; delete removes it' '
        TID=$(cat "$TMP/tid") &&
        call user PUT "/template/session/$TID" "$(jq -cn --arg p "${TEMPLATE/nightly/weekly}" "{payload: \$p}")" &&
        test "$CODE" = 200 && jq -e ".success" "$TMP/out" &&
        call user GET "/template/session/$TID" && jq -e ".template.metadata.tag == \"weekly\"" "$TMP/out" &&
        call user DELETE "/template/session/$TID" && test "$CODE" = 200 &&
        call user GET "/template/session/$TID" && test "$CODE" = 404 &&
        call user POST /session/_/create-from-template "{\"template_id\": \"$TID\", \"name\": \"after-delete\", \"enqueueOnly\": true}" &&
        test "$CODE" = 404
'

test_done
