#!/bin/bash
test_description='where a caller may start sessions: GET /projects lists the projects it belongs to (admins: all of the domain), GET /scaling-groups the resource groups of its domain, project and keypair'
. "$(dirname "$0")/../lib/test-lib.sh"

as_user() {
        BACKEND_ACCESS_KEY=$(sed -n 1p "$TMP/user.keys")
        BACKEND_SECRET_KEY=$(sed -n 2p "$TMP/user.keys")
}

test_expect_success 'a manager, two projects, a user in one of them' '
        start_manager &&
        api POST /admin/projects "{\"name\": \"lab\", \"description\": \"the lab\"}" && test "$CODE" = 201 &&
        api POST /admin/projects "{\"name\": \"other\"}" && test "$CODE" = 201 &&
        OUT=$TMP/user api POST /admin/users "{\"email\": \"scope@t.test\", \"password\": \"scope-pass-1\", \"projects\": [\"lab\"]}" &&
        test "$CODE" = 201 && jq -r ".keypair.access_key, .keypair.secret_key" "$TMP/user" >"$TMP/user.keys"
'

test_expect_success 'GET /projects: the user sees its own, the admin all' '
        (as_user && api GET /projects && test "$CODE" = 200 &&
         jq -e "[.projects[].name] == [\"lab\"] and .projects[0].description == \"the lab\"" "$TMP/out") &&
        api GET /projects && test "$CODE" = 200 && jq -e "[.projects[].name] == [\"default\", \"lab\", \"other\"]" "$TMP/out"
'

test_expect_success 'GET /scaling-groups: the domain'"'"'s group; a project'"'"'s and a keypair'"'"'s join it; inactive ones do not' '
        (as_user && api GET "/scaling-groups?group=lab" && test "$CODE" = 200 &&
         jq -e "[.scaling_groups[].name] == [\"default\"]" "$TMP/out") &&
        api POST /admin/resource-groups "{\"name\": \"gpu-lab\", \"description\": \"GPUs\"}" && test "$CODE" = 201 &&
        api POST /admin/resource-groups/gpu-lab/access "{\"add\": {\"projects\": [\"default/lab\"]}}" && test "$CODE" = 200 &&
        api POST /admin/resource-groups "{\"name\": \"mine\"}" && test "$CODE" = 201 &&
        api POST /admin/resource-groups/mine/access "{\"add\": {\"keypairs\": [\"$(sed -n 1p "$TMP/user.keys")\"]}}" &&
        test "$CODE" = 200 &&
        api POST /admin/resource-groups "{\"name\": \"off\", \"is_active\": false}" && test "$CODE" = 201 &&
        api POST /admin/resource-groups/off/access "{\"add\": {\"domains\": [\"default\"]}}" && test "$CODE" = 200 &&
        (as_user && api GET "/scaling-groups?group=lab" && test "$CODE" = 200 &&
         jq -e "[.scaling_groups[].name] == [\"default\", \"gpu-lab\", \"mine\"]" "$TMP/out" &&
         jq -e ".scaling_groups[1].description == \"GPUs\"" "$TMP/out")
'

test_expect_success 'a project the user is not in, or that does not exist, is a 404' '
        (as_user && api GET "/scaling-groups?group=other" && test "$CODE" = 404 &&
         api GET "/scaling-groups?group=nope" && test "$CODE" = 404 &&
         api GET "/scaling-groups" && test "$CODE" = 404) &&
        api GET "/scaling-groups?group=other" && test "$CODE" = 200
'

test_done
