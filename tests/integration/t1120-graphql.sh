#!/bin/bash
test_description='POST /admin/gql, Backend.AI'"'"'s GraphQL, with the queries its SDK and CLI send (ps, session list and info, vfolder list, image list, keypair): exactly the fields asked, aliases and fragments, variables, a caller sees what REST shows it and no more, errors as GraphQL answers them'
. "$(dirname "$0")/../lib/test-lib.sh"
. "$(dirname "$0")/../lib/roles.sh"

# gql KEY QUERY [VARIABLES]: POST /admin/gql as KEY; the answer in $TMP/out
gql() {
        call "$1" POST /admin/gql "$(jq -cn --arg q "$2" --argjson v "${3:-{\}}" '{query: $q, variables: $v}')"
}

# The SDK's paginated list query (ai.backend.client.pagination), as it builds it
LIST_Q='query($limit:Int!, $offset:Int!, $status:String, $access_key:String, $group_id:UUID, $filter:String, $order:String) {
  compute_session_list(
      limit:$limit, offset:$offset, status:$status, access_key:$access_key, group_id:$group_id, filter:$filter, order:$order) {
    items { id name image type status status_info status_changed result session_id group_name access_key }
    total_count
  }
}'

test_expect_success 'a manager, two users, an image, sessions and folders' '
        start_manager &&
        AK[superadmin]=$BACKEND_ACCESS_KEY SK[superadmin]=$BACKEND_SECRET_KEY &&
        make_user user u1@gql.test default user default &&
        make_user user2 u2@gql.test default user default &&
        make_user monitor mon@gql.test default monitor &&
        call superadmin POST /admin/images "{\"name\": \"stable/python\", \"tag\": \"3.11\", \"registry\": \"cr.test\"}" &&
        test "$CODE" = 201 &&
        call user POST /session "{\"name\": \"mine-1\", \"image\": \"cr.test/stable/python:3.11\", \"enqueueOnly\": true}" &&
        test "$CODE" = 201 && S1=$(jq -r .sessionId "$TMP/out") &&
        call user POST /session "{\"name\": \"mine-2\", \"image\": \"cr.test/stable/python:3.11\", \"enqueueOnly\": true}" &&
        test "$CODE" = 201 &&
        call user2 POST /session "{\"name\": \"theirs\", \"image\": \"cr.test/stable/python:3.11\", \"enqueueOnly\": true}" &&
        test "$CODE" = 201 && S3=$(jq -r .sessionId "$TMP/out") &&
        call user POST /folders "{\"name\": \"data\"}" && test "$CODE" = 201 &&
        call user2 POST /folders "{\"name\": \"secret\"}" && test "$CODE" = 201
'

test_expect_success 'keypair: the caller'"'"'s own, with its secret (the request was signed with it)' '
        gql user "query { keypair { user_id access_key secret_key is_active is_admin resource_policy concurrency_used } }" &&
        test "$CODE" = 200 &&
        jq -e ".errors == null and .data.keypair.user_id == \"u1@gql.test\" and .data.keypair.access_key == \"${AK[user]}\" and .data.keypair.secret_key == \"${SK[user]}\" and .data.keypair.is_active == true and .data.keypair.is_admin == false and .data.keypair.concurrency_used == 2" "$TMP/out" &&
        jq -e ".data.keypair | keys == [\"access_key\", \"concurrency_used\", \"is_active\", \"is_admin\", \"resource_policy\", \"secret_key\", \"user_id\"]" "$TMP/out" &&
        gql user "query { keypair(access_key: \"${AK[user2]}\") { secret_key } }" &&
        jq -e ".data.keypair == null and (.errors[0].message | test(\"your own\"))" "$TMP/out"
'

test_expect_success 'compute_session_list as the SDK asks it: own sessions only, exactly the fields asked' '
        gql user "$LIST_Q" "{\"limit\": 20, \"offset\": 0, \"status\": \"PENDING,RUNNING\", \"access_key\": null, \"group_id\": null, \"filter\": null, \"order\": null}" &&
        test "$CODE" = 200 && jq -e ".errors == null" "$TMP/out" &&
        jq -e ".data.compute_session_list.total_count == 2" "$TMP/out" &&
        jq -e "[.data.compute_session_list.items[].name] | sort == [\"mine-1\", \"mine-2\"]" "$TMP/out" &&
        jq -e ".data.compute_session_list.items[0] | keys == ([\"id\", \"name\", \"image\", \"type\", \"status\", \"status_info\", \"status_changed\", \"result\", \"session_id\", \"group_name\", \"access_key\"] | sort)" "$TMP/out" &&
        jq -e "[.data.compute_session_list.items[] | select(.name == \"mine-1\")][0] | .id == \"$S1\" and .session_id == \"$S1\" and .type == \"INTERACTIVE\" and .status == \"PENDING\" and .group_name == \"default\" and .access_key == \"${AK[user]}\" and .result == \"UNDEFINED\" and (.status_changed | test(\"^20\"))" "$TMP/out"
'

test_expect_success 'compute_session_list pages and filters; the superadmin sees every session' '
        gql user "$LIST_Q" "{\"limit\": 1, \"offset\": 1}" &&
        jq -e ".data.compute_session_list.total_count == 2 and (.data.compute_session_list.items | length) == 1" "$TMP/out" &&
        gql user "$LIST_Q" "{\"limit\": 20, \"offset\": 0, \"status\": \"TERMINATED\"}" &&
        jq -e ".data.compute_session_list.total_count == 0" "$TMP/out" &&
        gql superadmin "$LIST_Q" "{\"limit\": 20, \"offset\": 0}" &&
        jq -e ".data.compute_session_list.total_count == 3" "$TMP/out" &&
        gql user "$LIST_Q" "{\"limit\": 1000, \"offset\": 0}" &&
        jq -e ".data.compute_session_list == null and (.errors[0].message | test(\"limit\"))" "$TMP/out" &&
        gql user "$LIST_Q" "{\"offset\": 0}" && test "$CODE" = 400 &&
        jq -e ".errors[0].message | test(\"limit\")" "$TMP/out"
'

test_expect_success 'compute_session: one of the caller'"'"'s with its containers; another user'"'"'s is null' '
        gql user "query(\$id: UUID!) { compute_session(id: \$id) { id name status containers { id role agent image registry status status_info status_data status_changed occupied_slots resource_opts live_stat last_stat cluster_role cluster_idx cluster_hostname } dependencies { name } } }" "{\"id\": \"$S1\"}" &&
        jq -e ".errors == null and .data.compute_session.name == \"mine-1\" and .data.compute_session.dependencies == [] and (.data.compute_session.containers | type) == \"array\"" "$TMP/out" &&
        gql user "query(\$id: UUID!) { compute_session(id: \$id) { id name } }" "{\"id\": \"$S3\"}" &&
        jq -e ".errors == null and .data.compute_session == null" "$TMP/out" &&
        gql monitor "query(\$id: UUID!) { compute_session(id: \$id) { name } }" "{\"id\": \"$S3\"}" &&
        jq -e ".data.compute_session.name == \"theirs\"" "$TMP/out"
'

test_expect_success 'vfolder_list: the caller'"'"'s folders, Backend.AI'"'"'s fields' '
        gql user "query(\$limit:Int!, \$offset:Int!, \$group_id:UUID) { vfolder_list(limit:\$limit, offset:\$offset, group_id:\$group_id) { items { host name created_at creator group permission ownership_type } total_count } }" "{\"limit\": 20, \"offset\": 0}" &&
        jq -e ".errors == null and .data.vfolder_list.total_count == 1 and .data.vfolder_list.items[0].name == \"data\" and .data.vfolder_list.items[0].ownership_type == \"user\" and .data.vfolder_list.items[0].creator == \"u1@gql.test\" and .data.vfolder_list.items[0].group == null" "$TMP/out"
'

test_expect_success 'images as `backend.ai admin image list` asks them; image(reference:)' '
        gql user "query { images(is_operation: false) { name registry architecture tag digest size_bytes aliases } }" &&
        jq -e ".errors == null and .data.images == [{\"name\": \"stable/python\", \"registry\": \"cr.test\", \"architecture\": \"x86_64\", \"tag\": \"3.11\", \"digest\": \"\", \"size_bytes\": 0, \"aliases\": []}]" "$TMP/out" &&
        gql user "query { image(reference: \"cr.test/stable/python:3.11\") { name tag labels { key value } } }" &&
        jq -e ".data.image == {\"name\": \"stable/python\", \"tag\": \"3.11\", \"labels\": []}" "$TMP/out"
'

test_expect_success 'aliases, fragments, @skip/@include and __typename, as GraphQL says' '
        gql user "query(\$full: Boolean!) { me: keypair { ...K ... on KeyPair { is_active } rl: rate_limit @include(if: \$full) ak: access_key @skip(if: true) } __typename }
                  fragment K on KeyPair { __typename user_id }" "{\"full\": true}" &&
        jq -e ".errors == null and .data == {\"me\": {\"__typename\": \"KeyPair\", \"user_id\": \"u1@gql.test\", \"is_active\": true, \"rl\": 10000}, \"__typename\": \"Queries\"}" "$TMP/out"
'

test_expect_success 'errors: unknown fields and roots, scalars with selections, objects without, bad documents' '
        gql user "query { keypair { user_id no_such_field } }" && test "$CODE" = 200 &&
        jq -e ".data.keypair.user_id == \"u1@gql.test\" and .errors[0].message == \"Cannot query field \\\"no_such_field\\\" on type \\\"KeyPair\\\".\" and .errors[0].path == [\"keypair\", \"no_such_field\"] and .errors[0].locations[0].line == 1" "$TMP/out" &&
        gql user "query { no_such_root }" && jq -e ".data.no_such_root == null and (.errors[0].message | test(\"no_such_root\"))" "$TMP/out" &&
        gql user "query { keypair { user_id { x } } }" && jq -e ".errors[0].message | test(\"scalar\")" "$TMP/out" &&
        gql user "query { keypair }" && jq -e ".errors[0].message | test(\"selection of subfields\")" "$TMP/out" &&
        gql user "query { keypair { " && test "$CODE" = 400 &&
        jq -e ".data == null and (.errors[0].message | test(\"^1:\"))" "$TMP/out" &&
        call user POST /admin/gql "{}" && test "$CODE" = 400 &&
        call user POST /admin/gql "{\"query\": \"{ keypair { user_id } }\", \"variables\": []}" && test "$CODE" = 400
'

test_expect_success 'admin lists (backend.ai admin user/keypair/agent/domain/group/scaling-group list): the /admin routes'"'"' rows and rules' '
        gql superadmin "query(\$limit:Int!, \$offset:Int!) { user_list(limit:\$limit, offset:\$offset) { items { email role is_active domain_name groups { name } } total_count } }" "{\"limit\": 20, \"offset\": 0}" &&
        jq -e ".errors == null and .data.user_list.total_count == 4" "$TMP/out" &&
        jq -e ".data.user_list.items[] | select(.email == \"u1@gql.test\") | .role == \"user\" and .is_active == true and .domain_name == \"default\" and .groups == [{\"name\": \"default\"}]" "$TMP/out" &&
        gql superadmin "query { keypair_list(limit: 10, offset: 0) { items { user_id access_key secret_key is_active } total_count } agent_list(limit: 10, offset: 0) { items { id status } total_count } domains { name is_active total_resource_slots } groups { id name domain_name } scaling_groups { name scheduler is_active } }" &&
        jq -e ".errors == null and .data.keypair_list.total_count == 4 and ([.data.keypair_list.items[].secret_key] | unique) == [null] and .data.agent_list.total_count == 0" "$TMP/out" &&
        jq -e ".data.domains == [{\"name\": \"default\", \"is_active\": true, \"total_resource_slots\": \"{}\"}] and .data.groups[0].name == \"default\" and .data.scaling_groups[0].name == \"default\"" "$TMP/out" &&
        gql user "query { user_list(limit: 10, offset: 0) { items { email } total_count } }" &&
        jq -e ".data.user_list == null and (.errors[0].message | test(\"may not list users\"))" "$TMP/out" &&
        gql monitor "query { domains { name } }" && jq -e ".errors == null and (.data.domains | length) == 1" "$TMP/out"
'

test_expect_success 'mutations answer an error pointing to the REST routes; nothing changes' '
        gql superadmin "mutation { delete_user(email: \"u2@gql.test\") { ok msg } }" && test "$CODE" = 200 &&
        jq -e ".data.delete_user == null and (.errors[0].message | test(\"REST admin routes\"))" "$TMP/out" &&
        test "$(db_sql "SELECT COUNT(*) FROM users WHERE email = '"'"'u2@gql.test'"'"'")" = 1
'

test_expect_success 'image references: registry/name:tag is one image, whichever way it was registered' '
        call superadmin POST /admin/images "{\"name\": \"cr.test/stable/python\", \"tag\": \"3.11\"}" &&
        test "$CODE" = 409 && jq -e ".title | test(\"cr.test/stable/python:3.11\")" "$TMP/out" &&
        call superadmin POST /admin/images "{\"name\": \"other.test/tool\", \"tag\": \"1\"}" && test "$CODE" = 201 &&
        call superadmin POST /admin/images "{\"name\": \"tool\", \"tag\": \"1\", \"registry\": \"other.test\"}" &&
        test "$CODE" = 409 &&
        call superadmin POST /admin/images "{\"name\": \"tool\", \"tag\": \"1\", \"registry\": \"third.test\"}" &&
        test "$CODE" = 201 &&
        call user POST /session "{\"name\": \"by-ref\", \"image\": \"other.test/tool:1\", \"enqueueOnly\": true}" &&
        test "$CODE" = 201 && jq -e ".sessionName == \"by-ref\"" "$TMP/out" &&
        call user DELETE /session/by-ref && test "$CODE" = 200
'

test_done
