#!/bin/bash
test_description='POST /admin/gql mutations, as Backend.AI'"'"'s admin CLI and SDK 22.03 send them (admin keypair/user/domain/group/keypair-resource-policy/scaling-group/image add, update, delete, purge ...): each runs the /admin REST routes for the caller, with their roles, rules and audit entries; answers {ok, msg, object} as Backend.AI does; the single-object roots and list filters those commands read back with'
. "$(dirname "$0")/../lib/test-lib.sh"
. "$(dirname "$0")/../lib/roles.sh"

# gql KEY QUERY [VARIABLES]: POST /admin/gql as KEY; the answer in $TMP/out
gql() {
        call "$1" POST /admin/gql "$(jq -cn --arg q "$2" --argjson v "${3:-{\}}" '{query: $q, variables: $v}')"
}

# ok KEY QUERY VARIABLES ROOT: a mutation that must succeed
ok() {
        gql "$1" "$2" "$3" && test "$CODE" = 200 &&
                jq -e ".errors == null and .data.$4.ok == true and .data.$4.msg == \"success\"" "$TMP/out" ||
                { cat "$TMP/out"; return 1; }
}

# refused KEY QUERY VARIABLES ROOT REGEX: ok false, msg matching REGEX
refused() {
        gql "$1" "$2" "$3" && test "$CODE" = 200 &&
                jq -e ".errors == null and .data.$4.ok == false and (.data.$4.msg | test(\"$5\"))" "$TMP/out" ||
                { cat "$TMP/out"; return 1; }
}

sql() { db_sql "$1"; }

# The documents, as the SDK's func/*.py write them
CREATE_DOMAIN='mutation($name: String!, $input: DomainInput!) { create_domain(name: $name, props: $input) { ok msg domain { name description is_active total_resource_slots allowed_vfolder_hosts } } }'
MODIFY_DOMAIN='mutation($name: String!, $input: ModifyDomainInput!) { modify_domain(name: $name, props: $input) { ok msg } }'
DELETE_DOMAIN='mutation($name: String!) { delete_domain(name: $name) { ok msg } }'
PURGE_DOMAIN='mutation($name: String!) { purge_domain(name: $name) { ok msg } }'
CREATE_GROUP='mutation($name: String!, $input: GroupInput!) { create_group(name: $name, props: $input) { ok msg group { id domain_name name } } }'
MODIFY_GROUP='mutation($gid: UUID!, $input: ModifyGroupInput!) { modify_group(gid: $gid, props: $input) { ok msg } }'
DELETE_GROUP='mutation($gid: UUID!) { delete_group(gid: $gid) { ok msg } }'
PURGE_GROUP='mutation($gid: UUID!) { purge_group(gid: $gid) { ok msg } }'
CREATE_USER='mutation($email: String!, $input: UserInput!) { create_user(email: $email, props: $input) { ok msg user { domain_name email username uuid } } }'
MODIFY_USER='mutation($email: String!, $input: ModifyUserInput!) { modify_user(email: $email, props: $input) { ok msg } }'
DELETE_USER='mutation($email: String!) { delete_user(email: $email) { ok msg } }'
PURGE_USER='mutation($email: String!, $input: PurgeUserInput!) { purge_user(email: $email, props: $input) { ok msg } }'
CREATE_KEYPAIR='mutation($user_id: String!, $input: KeyPairInput!) {  create_keypair(user_id: $user_id, props: $input) {    ok msg keypair { access_key secret_key }  }}'
MODIFY_KEYPAIR='mutation($access_key: String!, $input: ModifyKeyPairInput!) {  modify_keypair(access_key: $access_key, props: $input) {    ok msg  }}'
DELETE_KEYPAIR='mutation($access_key: String!) {  delete_keypair(access_key: $access_key) {    ok msg  }}'
CREATE_POLICY='mutation($name: String!, $input: CreateKeyPairResourcePolicyInput!) {  create_keypair_resource_policy(name: $name, props: $input) {    ok msg resource_policy { name }  }}'
MODIFY_POLICY='mutation($name: String!, $input: ModifyKeyPairResourcePolicyInput!) {  modify_keypair_resource_policy(name: $name, props: $input) {    ok msg  }}'
DELETE_POLICY='mutation($name: String!) {  delete_keypair_resource_policy(name: $name) {    ok msg  }}'
CREATE_SGROUP='mutation($name: String!, $input: CreateScalingGroupInput!) { create_scaling_group(name: $name, props: $input) { ok msg scaling_group { name } } }'
MODIFY_SGROUP='mutation($name: String!, $input: ModifyScalingGroupInput!) { modify_scaling_group(name: $name, props: $input) { ok msg } }'
DELETE_SGROUP='mutation($name: String!) { delete_scaling_group(name: $name) { ok msg } }'
ASSOC_DOMAIN='mutation($scaling_group: String!, $domain: String!) { associate_scaling_group_with_domain(scaling_group: $scaling_group, domain: $domain) { ok msg } }'
DISSOC_DOMAIN='mutation($scaling_group: String!, $domain: String!) { disassociate_scaling_group_with_domain(scaling_group: $scaling_group, domain: $domain) { ok msg } }'
DISSOC_ALL_DOMAIN='mutation($domain: String!) { disassociate_all_scaling_groups_with_domain(domain: $domain) { ok msg } }'
ASSOC_GROUP='mutation($scaling_group: String!, $user_group: UUID!) { associate_scaling_group_with_user_group(scaling_group: $scaling_group, user_group: $user_group) { ok msg } }'
DISSOC_ALL_GROUP='mutation($group_id: UUID!) { disassociate_all_scaling_groups_with_group(user_group: $group_id) { ok msg } }'
ALIAS='mutation($alias: String!, $target: String!) {  alias_image(alias: $alias, target: $target) {   ok msg  }}'
DEALIAS='mutation($alias: String!) {  dealias_image(alias: $alias) {   ok msg  }}'
RESCAN='mutation($registry: String) {  rescan_images(registry:$registry) {   ok msg task_id  }}'

test_expect_success 'a manager, and a user of every role in two domains' '
        start_manager && make_every_role gqlm.test
'

test_expect_success 'create_domain with the CLI'"'"'s input (JSON text slots, a list of hosts), then modify, read back with domain(name)' '
        ok superadmin "$CREATE_DOMAIN" "{\"name\": \"lab\", \"input\": {\"description\": \"the lab\", \"is_active\": true, \"total_resource_slots\": \"{\\\"cpu\\\": \\\"8\\\"}\", \"allowed_vfolder_hosts\": [\"local\"], \"allowed_docker_registries\": null, \"integration_id\": null}}" create_domain &&
        jq -e ".data.create_domain.domain | .name == \"lab\" and .description == \"the lab\" and .is_active == true and (.total_resource_slots | fromjson) == {\"cpu\": \"8\"} and (.allowed_vfolder_hosts | fromjson | keys) == [\"local\"]" "$TMP/out" &&
        ok superadmin "$MODIFY_DOMAIN" "{\"name\": \"lab\", \"input\": {\"name\": null, \"description\": \"our lab\", \"is_active\": null}}" modify_domain &&
        gql superadmin "query(\$name: String) { domain(name: \$name) { name description } }" "{\"name\": \"lab\"}" &&
        jq -e ".errors == null and .data.domain == {\"name\": \"lab\", \"description\": \"our lab\"}" "$TMP/out" &&
        call superadmin GET /admin/domains/lab && jq -e ".description == \"our lab\" and .total_resource_slots.cpu != null" "$TMP/out"
'

test_expect_success 'what Tessera has no such thing for is refused, not dropped; a refusal is ok false with the route'"'"'s message' '
        refused superadmin "$CREATE_DOMAIN" "{\"name\": \"lab2\", \"input\": {\"integration_id\": \"x1\"}}" create_domain "integrations" &&
        jq -e ".data.create_domain.domain == null" "$TMP/out" &&
        refused superadmin "$CREATE_DOMAIN" "{\"name\": \"lab\", \"input\": {}}" create_domain "already exists" &&
        refused superadmin "$CREATE_DOMAIN" "{\"name\": \"bad name!\", \"input\": {}}" create_domain "name" &&
        test "$(sql "SELECT COUNT(*) FROM domains WHERE name IN ('"'"'lab2'"'"', '"'"'bad name!'"'"')")" = 0 &&
        gql superadmin "mutation { create_domain(name: \"x\", props: {colour: \"red\"}) { ok } }" &&
        jq -e ".data.create_domain == null and (.errors[0].message | test(\"no input field .colour.\")) and .errors[0].path == [\"create_domain\"]" "$TMP/out" &&
        gql superadmin "mutation { modify_domain(props: {}) { ok } }" &&
        jq -e ".data.modify_domain == null and (.errors[0].message | test(\"name:\"))" "$TMP/out" &&
        gql superadmin "mutation { no_such_thing { ok } }" &&
        jq -e ".errors[0].message | test(\"Cannot query field .no_such_thing. on type .Mutations.\")" "$TMP/out"
'

test_expect_success 'create_group in a domain; modify_group adds and removes members by user id; group(id) and groups_by_name' '
        ok superadmin "$CREATE_GROUP" "{\"name\": \"vision\", \"input\": {\"description\": \"cv\", \"is_active\": true, \"domain_name\": \"lab\", \"total_resource_slots\": null, \"allowed_vfolder_hosts\": null, \"integration_id\": null}}" create_group &&
        GID=$(jq -r .data.create_group.group.id "$TMP/out") &&
        test "$(sql "SELECT domain_name || '"'"'/'"'"' || name FROM projects WHERE id = '"'"'$GID'"'"'")" = lab/vision &&
        ok superadmin "$CREATE_USER" "{\"email\": \"alice@lab.test\", \"input\": {\"password\": \"alice-password-1\", \"username\": \"alice\", \"full_name\": \"Alice\", \"role\": \"user\", \"status\": \"active\", \"need_password_change\": false, \"description\": \"\", \"domain_name\": \"lab\", \"group_ids\": null}}" create_user &&
        ALICE=$(jq -r .data.create_user.user.uuid "$TMP/out") &&
        jq -e ".data.create_user.user == {\"domain_name\": \"lab\", \"email\": \"alice@lab.test\", \"username\": \"alice\", \"uuid\": \"$ALICE\"}" "$TMP/out" &&
        ok superadmin "$MODIFY_GROUP" "{\"gid\": \"$GID\", \"input\": {\"user_update_mode\": \"add\", \"user_uuids\": [\"$ALICE\"]}}" modify_group &&
        test "$(sql "SELECT COUNT(*) FROM project_members WHERE project_id = '"'"'$GID'"'"' AND user_id = '"'"'$ALICE'"'"'")" = 1 &&
        gql superadmin "query(\$status: String, \$group: UUID) { users(status: \$status, group_id: \$group) { email } }" "{\"status\": \"ACTIVE\", \"group\": \"$GID\"}" &&
        jq -e ".errors == null and .data.users == [{\"email\": \"alice@lab.test\"}]" "$TMP/out" &&
        ok superadmin "$MODIFY_GROUP" "{\"gid\": \"$GID\", \"input\": {\"name\": null, \"description\": \"computer vision\", \"is_active\": null}}" modify_group &&
        gql superadmin "query(\$gid: UUID!) { group(id: \$gid) { id name description domain_name } }" "{\"gid\": \"$GID\"}" &&
        jq -e ".data.group == {\"id\": \"$GID\", \"name\": \"vision\", \"description\": \"computer vision\", \"domain_name\": \"lab\"}" "$TMP/out" &&
        gql superadmin "query(\$name: String!, \$domain_name: String) { groups_by_name(name: \$name, domain_name: \$domain_name) { id } }" "{\"name\": \"vision\", \"domain_name\": \"lab\"}" &&
        jq -e ".data.groups_by_name == [{\"id\": \"$GID\"}]" "$TMP/out" &&
        gql superadmin "query(\$d: String) { groups(domain_name: \$d) { name } }" "{\"d\": \"lab\"}" &&
        jq -e ".data.groups == [{\"name\": \"vision\"}]" "$TMP/out" &&
        ok superadmin "$MODIFY_GROUP" "{\"gid\": \"$GID\", \"input\": {\"user_update_mode\": \"remove\", \"user_uuids\": [\"$ALICE\"]}}" modify_group &&
        test "$(sql "SELECT COUNT(*) FROM project_members WHERE project_id = '"'"'$GID'"'"'")" = 0
'

test_expect_success 'create_user hashes its password off the loop: the new user logs in with it; modify_user changes it' '
        curl -s -o /dev/null -w "%{http_code}" -H "Content-Type: application/json" --data "{\"username\": \"alice@lab.test\", \"password\": \"alice-password-1\"}" "$BACKEND_ENDPOINT/server/login" >"$TMP/code" &&
        test "$(cat "$TMP/code")" = 200 &&
        ok superadmin "$MODIFY_USER" "{\"email\": \"alice@lab.test\", \"input\": {\"password\": \"alice-password-2\", \"full_name\": \"Alice B\", \"role\": \"user\", \"status\": \"active\", \"group_ids\": null}}" modify_user &&
        test "$(sql "SELECT full_name FROM users WHERE email = '"'"'alice@lab.test'"'"'")" = "Alice B" &&
        curl -s -o /dev/null -w "%{http_code}" -H "Content-Type: application/json" --data "{\"username\": \"alice@lab.test\", \"password\": \"alice-password-1\"}" "$BACKEND_ENDPOINT/server/login" >"$TMP/code" &&
        test "$(cat "$TMP/code")" = 401 &&
        curl -s -o /dev/null -w "%{http_code}" -H "Content-Type: application/json" --data "{\"username\": \"alice@lab.test\", \"password\": \"alice-password-2\"}" "$BACKEND_ENDPOINT/server/login" >"$TMP/code" &&
        test "$(cat "$TMP/code")" = 200 &&
        refused superadmin "$MODIFY_USER" "{\"email\": \"alice@lab.test\", \"input\": {\"group_ids\": [\"$GID\"]}}" modify_user "modify_group"
'

test_expect_success 'several mutations in one document run in order, each answered on its own (one refused, the rest done)' '
        gql superadmin "mutation { a: create_keypair_resource_policy(name: \"gold\", props: {max_concurrent_sessions: 4, total_resource_slots: \"{\\\"cpu\\\": \\\"16\\\"}\", allowed_vfolder_hosts: \"local\"}) { ok msg } b: create_user(email: \"bob@lab.test\", props: {password: \"bob-password-1\", domain_name: \"lab\", role: \"user\"}) { ok msg user { email } } c: create_user(email: \"bob@lab.test\", props: {password: \"bob-password-1\", domain_name: \"lab\"}) { ok msg } d: create_keypair(user_id: \"bob@lab.test\", props: {resource_policy: \"gold\", rate_limit: 500, is_active: true, is_admin: false}) { ok msg keypair { access_key secret_key resource_policy rate_limit } } __typename }" &&
        test "$CODE" = 200 && jq -e ".errors == null and .data.__typename == \"Mutations\"" "$TMP/out" &&
        jq -e "[.data | keys_unsorted[]] == [\"a\", \"b\", \"c\", \"d\", \"__typename\"]" "$TMP/out" &&
        jq -e ".data.a.ok == true and .data.b.ok == true and .data.b.user.email == \"bob@lab.test\" and .data.c.ok == false and (.data.c.msg | test(\"already\")) and .data.d.ok == true" "$TMP/out" &&
        jq -e ".data.d.keypair | .resource_policy == \"gold\" and .rate_limit == 500 and (.secret_key | length) == 40" "$TMP/out" &&
        BOBAK=$(jq -r .data.d.keypair.access_key "$TMP/out") &&
        test "$(sql "SELECT max_concurrent_sessions FROM keypair_resource_policies WHERE name = '"'"'gold'"'"'")" = 4
'

test_expect_success 'keypairs: modify (deactivate, rate limit), the is_admin flag refused, list filters, delete' '
        ok superadmin "$MODIFY_KEYPAIR" "{\"access_key\": \"$BOBAK\", \"input\": {\"is_active\": false, \"is_admin\": null, \"resource_policy\": null, \"rate_limit\": null}}" modify_keypair &&
        test "$(sql "SELECT is_active FROM keypairs WHERE access_key = '"'"'$BOBAK'"'"'")" = 0 &&
        gql superadmin "query(\$email: String, \$is_active: Boolean) { keypairs(email: \$email, is_active: \$is_active) { access_key is_active } }" "{\"email\": \"bob@lab.test\", \"is_active\": false}" &&
        jq -e ".errors == null and .data.keypairs == [{\"access_key\": \"$BOBAK\", \"is_active\": false}]" "$TMP/out" &&
        ok superadmin "$MODIFY_KEYPAIR" "{\"access_key\": \"$BOBAK\", \"input\": {\"is_active\": true, \"rate_limit\": 900}}" modify_keypair &&
        test "$(sql "SELECT is_active || '"'"'/'"'"' || rate_limit FROM keypairs WHERE access_key = '"'"'$BOBAK'"'"'")" = 1/900 &&
        refused superadmin "$CREATE_KEYPAIR" "{\"user_id\": \"bob@lab.test\", \"input\": {\"is_admin\": true, \"resource_policy\": \"gold\"}}" create_keypair "no admin flag" &&
        ok superadmin "$MODIFY_POLICY" "{\"name\": \"gold\", \"input\": {\"max_concurrent_sessions\": 6, \"default_for_unspecified\": \"UNLIMITED\"}}" modify_keypair_resource_policy &&
        refused superadmin "$MODIFY_POLICY" "{\"name\": \"gold\", \"input\": {\"default_for_unspecified\": \"LIMITED\"}}" modify_keypair_resource_policy "UNLIMITED" &&
        refused superadmin "$DELETE_POLICY" "{\"name\": \"gold\"}" delete_keypair_resource_policy "used by keypairs" &&
        ok superadmin "$DELETE_KEYPAIR" "{\"access_key\": \"$BOBAK\"}" delete_keypair &&
        ok superadmin "$DELETE_POLICY" "{\"name\": \"gold\"}" delete_keypair_resource_policy &&
        test "$(sql "SELECT COUNT(*) FROM keypairs WHERE access_key = '"'"'$BOBAK'"'"'")" = 0
'

test_expect_success 'scaling groups: create, modify, associate with a domain and a project, disassociate all, delete' '
        ok superadmin "$CREATE_SGROUP" "{\"name\": \"gpu\", \"input\": {\"description\": \"gpus\", \"is_active\": true, \"driver\": \"static\", \"driver_opts\": \"{}\", \"scheduler\": \"fifo\", \"scheduler_opts\": \"{}\"}}" create_scaling_group &&
        jq -e ".data.create_scaling_group.scaling_group.name == \"gpu\"" "$TMP/out" &&
        ok superadmin "$MODIFY_SGROUP" "{\"name\": \"gpu\", \"input\": {\"description\": \"the gpus\", \"is_active\": true, \"driver\": null, \"driver_opts\": \"{}\", \"scheduler\": null, \"scheduler_opts\": \"{}\"}}" modify_scaling_group &&
        refused superadmin "$MODIFY_SGROUP" "{\"name\": \"gpu\", \"input\": {\"driver\": \"k8s\"}}" modify_scaling_group "static" &&
        ok superadmin "$ASSOC_DOMAIN" "{\"scaling_group\": \"gpu\", \"domain\": \"lab\"}" associate_scaling_group_with_domain &&
        ok superadmin "$ASSOC_GROUP" "{\"scaling_group\": \"gpu\", \"user_group\": \"$GID\"}" associate_scaling_group_with_user_group &&
        call superadmin GET /admin/resource-groups/gpu &&
        jq -e ".description == \"the gpus\" and .domains == [\"lab\"] and .projects == [\"lab/vision\"]" "$TMP/out" &&
        gql superadmin "query(\$name: String) { scaling_group(name: \$name) { name description } }" "{\"name\": \"gpu\"}" &&
        jq -e ".data.scaling_group == {\"name\": \"gpu\", \"description\": \"the gpus\"}" "$TMP/out" &&
        ok superadmin "$DISSOC_ALL_GROUP" "{\"group_id\": \"$GID\"}" disassociate_all_scaling_groups_with_group &&
        ok superadmin "$DISSOC_ALL_DOMAIN" "{\"domain\": \"lab\"}" disassociate_all_scaling_groups_with_domain &&
        call superadmin GET /admin/resource-groups/gpu && jq -e ".domains == [] and .projects == []" "$TMP/out" &&
        ok superadmin "$ASSOC_DOMAIN" "{\"scaling_group\": \"gpu\", \"domain\": \"lab\"}" associate_scaling_group_with_domain &&
        ok superadmin "$DISSOC_DOMAIN" "{\"scaling_group\": \"gpu\", \"domain\": \"lab\"}" disassociate_scaling_group_with_domain &&
        call superadmin GET /admin/resource-groups/gpu && jq -e ".domains == []" "$TMP/out" &&
        ok superadmin "$DELETE_SGROUP" "{\"name\": \"gpu\"}" delete_scaling_group &&
        test "$(sql "SELECT COUNT(*) FROM resource_groups WHERE name = '"'"'gpu'"'"'")" = 0
'

test_expect_success 'images: alias_image by reference, dealias_image; rescan_images with no registry says so' '
        call superadmin POST /admin/images "{\"name\": \"stable/python\", \"tag\": \"3.11\", \"registry\": \"cr.test\"}" &&
        test "$CODE" = 201 && IMG=$(jq -r .id "$TMP/out") &&
        ok superadmin "$ALIAS" "{\"alias\": \"py\", \"target\": \"cr.test/stable/python:3.11\"}" alias_image &&
        test "$(sql "SELECT image_id FROM image_aliases WHERE alias = '"'"'py'"'"'")" = "$IMG" &&
        refused superadmin "$ALIAS" "{\"alias\": \"py2\", \"target\": \"nothing:1\"}" alias_image "not registered" &&
        ok superadmin "$DEALIAS" "{\"alias\": \"py\"}" dealias_image &&
        test "$(sql "SELECT COUNT(*) FROM image_aliases")" = 0 &&
        refused superadmin "$RESCAN" "{\"registry\": null}" rescan_images "no container registry" &&
        jq -e ".data.rescan_images.task_id == null" "$TMP/out" &&
        refused superadmin "$RESCAN" "{\"registry\": \"nope\"}" rescan_images "not found"
'

test_expect_success 'the routes'"'"' roles and rules hold: a domain admin runs its own domain only, a user and a monitor nothing' '
        refused admin "$CREATE_DOMAIN" "{\"name\": \"mine\", \"input\": {}}" create_domain "may not" &&
        refused admin "$CREATE_USER" "{\"email\": \"x@lab.test\", \"input\": {\"password\": \"x-password-1\", \"domain_name\": \"lab\"}}" create_user "domain .lab. does not exist" &&
        refused admin "$MODIFY_USER" "{\"email\": \"alice@lab.test\", \"input\": {\"full_name\": \"Mallory\"}}" modify_user "not found" &&
        refused admin "$MODIFY_USER" "{\"email\": \"$TEST_ADMIN_EMAIL\", \"input\": {\"full_name\": \"Mallory\"}}" modify_user "not found" &&
        refused admin "$MODIFY_GROUP" "{\"gid\": \"$GID\", \"input\": {\"description\": \"mine now\"}}" modify_group "not found" &&
        ok admin "$CREATE_USER" "{\"email\": \"carol@gqlm.test\", \"input\": {\"password\": \"carol-password-1\", \"username\": \"\", \"role\": \"user\"}}" create_user &&
        jq -e ".data.create_user.user | .domain_name == \"default\" and .username == \"carol@gqlm.test\"" "$TMP/out" &&
        refused admin "$CREATE_USER" "{\"email\": \"eve@gqlm.test\", \"input\": {\"password\": \"eve-password-1\", \"role\": \"superadmin\"}}" create_user "superadmin" &&
        refused admin "$DISSOC_ALL_DOMAIN" "{\"domain\": \"default\"}" disassociate_all_scaling_groups_with_domain "may not" &&
        refused admin "$ALIAS" "{\"alias\": \"x\", \"target\": \"cr.test/stable/python:3.11\"}" alias_image "may not" &&
        refused user "$DELETE_USER" "{\"email\": \"user2@gqlm.test\"}" delete_user "may not" &&
        refused monitor "$DELETE_KEYPAIR" "{\"access_key\": \"${AK[user]}\"}" delete_keypair "may not" &&
        test "$(sql "SELECT full_name || '"'"'/'"'"' || status FROM users WHERE email = '"'"'alice@lab.test'"'"'")" = "Alice B/active" &&
        test "$(sql "SELECT COUNT(*) FROM users WHERE email = '"'"'eve@gqlm.test'"'"' OR role = '"'"'superadmin'"'"' AND email <> '"'"'$TEST_ADMIN_EMAIL'"'"'")" = 0
'

test_expect_success 'a user still makes its own keypair, as POST /admin/keypairs lets it (its password, its policy)' '
        call superadmin PATCH /admin/keypair-policies/default "{\"allow_user_keypairs\": true, \"max_keypairs_per_user\": 3}" &&
        test "$CODE" = 200 &&
        refused user "$CREATE_KEYPAIR" "{\"user_id\": \"user2@gqlm.test\", \"input\": {}}" create_keypair "only for themselves"
'

test_expect_success 'each mutation is in the audit log as the REST route it ran, with its path and outcome' '
        call superadmin GET "/admin/audit-log?action=PATCH%20/admin/users/%7Bemail%7D" && test "$CODE" = 200 &&
        jq -e "[.items[] | select(.path == \"/admin/users/alice@lab.test\" and .status == 200 and .access_key == \"$BACKEND_ACCESS_KEY\")] | length >= 1" "$TMP/out" &&
        call superadmin GET "/admin/audit-log?action=POST%20/admin/domains" &&
        jq -e "[.items[] | select(.path == \"/admin/domains\")] | map(.status) | sort == [201, 201, 400, 403, 409]" "$TMP/out"
'

test_expect_success 'a client that leaves while passwords are hashed: each user made once at most, the manager serves on' '
        q="mutation {" &&
        for i in 1 2 3 4 5 6; do
                q="$q m$i: create_user(email: \\\"gone$i@gqlm.test\\\", props: {password: \\\"gone-password-$i\\\"}) { ok }"
        done &&
        q="$q }" &&
        body="{\"query\": \"$q\"}" &&
        jq -e . <<<"$body" >/dev/null &&
        for _ in 1 2 3; do
                h=() &&
                while IFS= read -r l; do h+=(-H "$l"); done < <("$BUILD/test-tool" sign POST /admin/gql \
                        "${BACKEND_ENDPOINT#http://}" "${AK[superadmin]}" "${SK[superadmin]}" application/json) &&
                curl -s -m 0.05 -o /dev/null -X POST "${h[@]}" --data "$body" "$BACKEND_ENDPOINT/admin/gql" || true
        done &&
        sleep 2 &&
        n=$(sql "SELECT COUNT(DISTINCT email) || '"'"'/'"'"' || COUNT(*) FROM users WHERE email LIKE '"'"'gone%'"'"'") &&
        test "${n%/*}" = "${n#*/}" && test "${n#*/}" -le 6 &&
        gql superadmin "mutation { create_user(email: \"after@gqlm.test\", props: {password: \"after-password-1\"}) { ok } }" &&
        jq -e ".data.create_user.ok == true" "$TMP/out"
'

test_expect_success 'delete_* make inactive, purge_* delete: users, groups, domains' '
        ok superadmin "$DELETE_USER" "{\"email\": \"alice@lab.test\"}" delete_user &&
        test "$(sql "SELECT status FROM users WHERE email = '"'"'alice@lab.test'"'"'")" = inactive &&
        refused superadmin "$PURGE_USER" "{\"email\": \"alice@lab.test\", \"input\": {\"purge_shared_vfolders\": true}}" purge_user "folders" &&
        ok superadmin "$PURGE_USER" "{\"email\": \"alice@lab.test\", \"input\": {\"purge_shared_vfolders\": false}}" purge_user &&
        ok superadmin "$PURGE_USER" "{\"email\": \"bob@lab.test\", \"input\": {\"purge_shared_vfolders\": false}}" purge_user &&
        ok superadmin "$DELETE_GROUP" "{\"gid\": \"$GID\"}" delete_group &&
        test "$(sql "SELECT is_active FROM projects WHERE id = '"'"'$GID'"'"'")" = 0 &&
        refused superadmin "$PURGE_DOMAIN" "{\"name\": \"lab\"}" purge_domain "still has projects" &&
        ok superadmin "$PURGE_GROUP" "{\"gid\": \"$GID\"}" purge_group &&
        ok superadmin "$DELETE_DOMAIN" "{\"name\": \"lab\"}" delete_domain &&
        test "$(sql "SELECT is_active FROM domains WHERE name = '"'"'lab'"'"'")" = 0 &&
        ok superadmin "$PURGE_DOMAIN" "{\"name\": \"lab\"}" purge_domain &&
        test "$(sql "SELECT COUNT(*) FROM domains WHERE name = '"'"'lab'"'"'")" = 0
'

test_done
