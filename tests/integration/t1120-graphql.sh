#!/bin/bash
test_description='POST /admin/gql, Backend.AI'"'"'s GraphQL, with the queries its SDK and CLI send (ps, session list and info, vfolder list, image list, keypair, admin agent, keypair-resource-policy and storage list and info): exactly the fields asked, aliases and fragments, variables, a caller sees what REST shows it and no more, errors as GraphQL answers them'
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
        jq -e ".errors[0].message | test(\"limit\")" "$TMP/out" &&
        gql superadmin "query { compute_session_list(limit: 20, offset: 0) { items { session_id containers { session_id cluster_idx } } } }" &&
        jq -e ".errors == null and (.data.compute_session_list.items | length) == 3" "$TMP/out" &&
        jq -e "[.data.compute_session_list.items[] | .session_id as \$s | (.containers | length == 1) and all(.containers[]; .session_id == \$s and .cluster_idx == 1)] | all" "$TMP/out" &&
        gql user "query { compute_session_list(limit: 20, offset: 0, group_id: \"00000000-0000-0000-0000-000000000000\") { items { name } total_count } }" &&
        jq -e ".errors == null and .data.compute_session_list == {\"items\": [], \"total_count\": 0}" "$TMP/out"
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

# The SDK's queries of `backend.ai admin agent list` and `admin agent info`
# (func/agent.py through pagination.py; cli/admin/agent.py's fields)
AGENT_LIST_Q='query($limit:Int!, $offset:Int!, $status: String, $scaling_group: String, $filter: String, $order: String) {
  agent_list(
      limit:$limit, offset:$offset, status:$status, scaling_group:$scaling_group, filter:$filter, order:$order) {
    items { id status architecture scaling_group region first_contact cpu_cur_pct mem_cur_bytes available_slots occupied_slots }
    total_count
  }
}'
AGENT_Q='query($agent_id: String!) {
    agent(agent_id: $agent_id) {id status region architecture first_contact cpu_cur_pct available_slots occupied_slots hardware_metadata live_stat}
}'

# wait_kernels AGENT N: wait (10 s at most) until the scheduler placed N kernels on AGENT
wait_kernels() {
        for _ in $(seq 1 100); do
                test "$(db_sql "SELECT COUNT(*) FROM kernels WHERE agent_id = '$1'")" = "$2" && return 0
                sleep 0.1
        done
        echo "agent $1 has $(db_sql "SELECT COUNT(*) FROM kernels WHERE agent_id = '$1'") kernels, not $2"
        return 1
}

# kstat MEM CPU_PCT: one kernel's statistics as agents send them
kstat() {
        echo "{\"cpu_used\": {\"current\": \"100.0\", \"unit_hint\": \"msec\"}, \"cpu_util\": {\"current\": \"$2\", \"capacity\": \"100.0\", \"unit_hint\": \"percent\"}, \"mem\": {\"current\": \"$1\", \"capacity\": \"1073741824\", \"unit_hint\": \"bytes\"}}"
}

test_expect_success 'agent_list as `backend.ai admin agent list` asks it: what the agents run now, as numbers' '
        gql superadmin "$AGENT_LIST_Q" "{\"status\": \"ALIVE\", \"scaling_group\": null, \"filter\": null, \"order\": null, \"limit\": 20, \"offset\": 0}" &&
        jq -e ".errors == null and .data.agent_list == {\"items\": [], \"total_count\": 0}" "$TMP/out" &&
        call superadmin POST /admin/resource-groups "{\"name\": \"rg2\"}" && test "$CODE" = 201 &&
        agent_register a1 "{\"cpu\": 8, \"mem\": \"32g\"}" &&
        agent_register a2 "{\"cpu\": 4, \"mem\": \"8g\"}" "[]" rg2 &&
        wait_kernels a1 3 &&
        agent_post a1 /agent/sync "{\"id\": \"a1\"}" && test "$AGENT_STATUS" = 200 &&
        K1=$(jq -r ".kernels[] | select(.session_name == \"mine-1\") | .id" "$TMP/agent-out") &&
        K3=$(jq -r ".kernels[] | select(.session_name == \"theirs\") | .id" "$TMP/agent-out") &&
        test -n "$K1" && test -n "$K3" &&
        agent_post a1 /agent/heartbeat "{\"id\": \"a1\", \"available_slots\": {\"cpu\": 8, \"mem\": \"32g\"}, \"runtime\": \"none\", \"heartbeat_interval\": 3600, \"stats\": {\"$K1\": $(kstat 1048576 12.5), \"$K3\": $(kstat 2097152 50.0)}}" &&
        test "$AGENT_STATUS" = 200 &&
        gql superadmin "$AGENT_LIST_Q" "{\"status\": \"ALIVE\", \"scaling_group\": null, \"filter\": null, \"order\": null, \"limit\": 20, \"offset\": 0}" &&
        jq -e ".errors == null and .data.agent_list.total_count == 2 and ([.data.agent_list.items[].id] == [\"a1\", \"a2\"])" "$TMP/out" &&
        jq -e ".data.agent_list.items[0] | keys_unsorted == [\"id\", \"status\", \"architecture\", \"scaling_group\", \"region\", \"first_contact\", \"cpu_cur_pct\", \"mem_cur_bytes\", \"available_slots\", \"occupied_slots\"]" "$TMP/out" &&
        jq -e ".data.agent_list.items[0] | .status == \"ALIVE\" and .architecture == \"x86_64\" and .scaling_group == \"default\" and .region == null and (.first_contact | test(\"^20\")) and .cpu_cur_pct == 62.5 and .mem_cur_bytes == 3145728" "$TMP/out" &&
        jq -e ".data.agent_list.items[0] | (.available_slots | fromjson) == {\"cpu\": \"8\", \"mem\": \"34359738368\"} and (.occupied_slots | fromjson | type) == \"object\"" "$TMP/out" &&
        jq -e ".data.agent_list.items[1] | .scaling_group == \"rg2\" and .cpu_cur_pct == 0 and .mem_cur_bytes == 0" "$TMP/out"
'

test_expect_success 'agent_list and agents filter by status and scaling_group, page; filter and order expressions are refused' '
        gql superadmin "$AGENT_LIST_Q" "{\"status\": null, \"scaling_group\": \"rg2\", \"limit\": 20, \"offset\": 0}" &&
        jq -e ".errors == null and .data.agent_list.total_count == 1 and .data.agent_list.items[0].id == \"a2\"" "$TMP/out" &&
        gql superadmin "$AGENT_LIST_Q" "{\"status\": \"LOST\", \"limit\": 20, \"offset\": 0}" &&
        jq -e ".errors == null and .data.agent_list == {\"items\": [], \"total_count\": 0}" "$TMP/out" &&
        gql superadmin "$AGENT_LIST_Q" "{\"status\": \"LOST,ALIVE\", \"limit\": 1, \"offset\": 1}" &&
        jq -e ".data.agent_list.total_count == 2 and [.data.agent_list.items[].id] == [\"a2\"]" "$TMP/out" &&
        gql superadmin "$AGENT_LIST_Q" "{\"filter\": \"status == \\\"ALIVE\\\"\", \"limit\": 20, \"offset\": 0}" &&
        jq -e ".data.agent_list == null and (.errors[0].message | test(\"filter:\"))" "$TMP/out" &&
        gql superadmin "query { agents(scaling_group: \"default\") { id container_count mem_cur_bytes } }" &&
        jq -e ".errors == null and .data.agents == [{\"id\": \"a1\", \"container_count\": 3, \"mem_cur_bytes\": 3145728}]" "$TMP/out"
'

test_expect_success 'agent as `backend.ai admin agent info` asks it: live_stat in the shape its CLI prints' '
        gql superadmin "$AGENT_Q" "{\"agent_id\": \"a1\"}" &&
        jq -e ".errors == null and .data.agent.id == \"a1\" and .data.agent.cpu_cur_pct == 62.5 and .data.agent.hardware_metadata == null" "$TMP/out" &&
        jq -e ".data.agent | keys_unsorted == [\"id\", \"status\", \"region\", \"architecture\", \"first_contact\", \"cpu_cur_pct\", \"available_slots\", \"occupied_slots\", \"hardware_metadata\", \"live_stat\"]" "$TMP/out" &&
        jq -e ".data.agent.live_stat | fromjson == {\"node\": {\"mem\": {\"current\": \"3145728\", \"capacity\": \"34359738368\", \"pct\": \"0.01\", \"unit_hint\": \"bytes\"}}, \"devices\": {}}" "$TMP/out" &&
        gql superadmin "$AGENT_Q" "{\"agent_id\": \"no-such-agent\"}" &&
        jq -e ".errors == null and .data.agent == null" "$TMP/out"
'

test_expect_success 'agents: refused to a user, as GET /admin/agents is; a monitor sees them' '
        call user GET /admin/agents && test "$CODE" = 403 &&
        gql user "$AGENT_LIST_Q" "{\"limit\": 20, \"offset\": 0}" &&
        jq -e ".data.agent_list == null and (.errors[0].message | test(\"your role \\\\(user\\\\) may not list agents\"))" "$TMP/out" &&
        gql user "$AGENT_Q" "{\"agent_id\": \"a1\"}" && jq -e ".data.agent == null and (.errors | length) == 1" "$TMP/out" &&
        gql monitor "query { agents { id } }" && jq -e ".errors == null and (.data.agents | length) == 2" "$TMP/out"
'

# `backend.ai admin keypair-resource-policy list` and `info NAME`
# (func/keypair_resource_policy.py: its default fields, its spacing)
POLICY_FIELDS='name created_at total_resource_slots max_concurrent_sessions max_vfolder_count max_vfolder_size idle_timeout max_containers_per_session allowed_vfolder_hosts'
POLICIES_Q="query {  keypair_resource_policies {    $POLICY_FIELDS  }}"
POLICY_Q="query(\$name: String) {  keypair_resource_policy(name: \$name) {    $POLICY_FIELDS  }}"

test_expect_success 'keypair_resource_policies and keypair_resource_policy: the /admin/keypair-policies rows in Backend.AI'"'"'s fields' '
        call superadmin POST /admin/keypair-policies "{\"name\": \"gold\", \"total_resource_slots\": {\"cpu\": 4, \"mem\": \"8g\"}, \"max_concurrent_sessions\": 7, \"max_containers_per_session\": 2, \"idle_timeout\": 600, \"max_vfolder_count\": 5, \"max_quota_scope_size\": \"1g\", \"allowed_vfolder_hosts\": {\"local\": [\"create-vfolder\"]}}" &&
        test "$CODE" = 201 &&
        gql superadmin "$POLICIES_Q" && jq -e ".errors == null and ([.data.keypair_resource_policies[].name] | sort) == [\"default\", \"gold\"]" "$TMP/out" &&
        jq -e ".data.keypair_resource_policies[] | select(.name == \"gold\") | keys_unsorted == [\"name\", \"created_at\", \"total_resource_slots\", \"max_concurrent_sessions\", \"max_vfolder_count\", \"max_vfolder_size\", \"idle_timeout\", \"max_containers_per_session\", \"allowed_vfolder_hosts\"]" "$TMP/out" &&
        jq -e ".data.keypair_resource_policies[] | select(.name == \"gold\") | (.created_at | test(\"^20\")) and (.total_resource_slots | fromjson) == {\"cpu\": \"4\", \"mem\": \"8589934592\"} and .max_concurrent_sessions == 7 and .max_vfolder_count == 5 and .max_vfolder_size == 1073741824 and .idle_timeout == 600 and .max_containers_per_session == 2 and .allowed_vfolder_hosts == [\"local\"]" "$TMP/out" &&
        gql superadmin "$POLICY_Q" "{\"name\": \"gold\"}" &&
        jq -e ".errors == null and .data.keypair_resource_policy.name == \"gold\" and .data.keypair_resource_policy.max_vfolder_size == 1073741824" "$TMP/out" &&
        gql superadmin "query { keypair_resource_policy { name default_for_unspecified max_session_lifetime } }" &&
        jq -e ".errors == null and .data.keypair_resource_policy == {\"name\": \"default\", \"default_for_unspecified\": \"UNLIMITED\", \"max_session_lifetime\": 0}" "$TMP/out" &&
        gql superadmin "$POLICY_Q" "{\"name\": \"no-such-policy\"}" &&
        jq -e ".errors == null and .data.keypair_resource_policy == null" "$TMP/out"
'

test_expect_success 'keypair resource policies: refused to a user, as GET /admin/keypair-policies is; a monitor sees them' '
        call user GET /admin/keypair-policies && test "$CODE" = 403 &&
        gql user "$POLICIES_Q" &&
        jq -e ".data.keypair_resource_policies == null and (.errors[0].message | test(\"may not list keypair-policies\"))" "$TMP/out" &&
        gql user "$POLICY_Q" "{\"name\": \"default\"}" &&
        jq -e ".data.keypair_resource_policy == null and (.errors | length) == 1" "$TMP/out" &&
        gql monitor "$POLICIES_Q" && jq -e ".errors == null and (.data.keypair_resource_policies | length) == 2" "$TMP/out"
'

# `backend.ai admin storage list` and `info HOST` (func/storage.py)
STORAGE_LIST_Q='query($limit:Int!, $offset:Int!, $filter: String, $order: String) {
  storage_volume_list(
      limit:$limit, offset:$offset, filter:$filter, order:$order) {
    items { id backend capabilities }
    total_count
  }
}'
STORAGE_Q='query($vfolder_host: String!) {
    storage_volume(id: $vfolder_host) {id backend capabilities path fsprefix hardware_metadata performance_metric}
}'

test_expect_success 'storage_volume_list and storage_volume: the folder hosts, JSON fields as JSON text' '
        gql superadmin "$STORAGE_LIST_Q" "{\"filter\": null, \"order\": null, \"limit\": 20, \"offset\": 0}" &&
        jq -e ".errors == null and .data.storage_volume_list == {\"items\": [{\"id\": \"local\", \"backend\": \"vfs\", \"capabilities\": [\"vfolder\", \"quota\"]}], \"total_count\": 1}" "$TMP/out" &&
        gql superadmin "$STORAGE_Q" "{\"vfolder_host\": \"local\"}" &&
        jq -e ".errors == null and .data.storage_volume.id == \"local\" and .data.storage_volume.path == \"$MANAGER_STATE/vfolders\" and .data.storage_volume.fsprefix == \".\"" "$TMP/out" &&
        jq -e ".data.storage_volume | (.hardware_metadata | fromjson) == {\"status\": \"healthy\", \"status_info\": null, \"metadata\": {}} and (.performance_metric | fromjson) == {}" "$TMP/out" &&
        gql superadmin "query { storage_volume(id: \"local\") { usage } }" &&
        jq -e ".data.storage_volume.usage | fromjson | .capacity_bytes > 0 and .used_bytes >= 0 and .used_bytes <= .capacity_bytes" "$TMP/out" &&
        gql superadmin "$STORAGE_Q" "{\"vfolder_host\": \"nowhere\"}" &&
        jq -e ".errors == null and .data.storage_volume == null" "$TMP/out" &&
        gql superadmin "$STORAGE_LIST_Q" "{\"limit\": 20, \"offset\": 1}" &&
        jq -e ".data.storage_volume_list == {\"items\": [], \"total_count\": 1}" "$TMP/out"
'

test_expect_success 'storage volumes: superadmins only, as GET /folders/_/all-hosts' '
        call monitor GET /folders/_/all-hosts && test "$CODE" = 403 &&
        gql monitor "$STORAGE_LIST_Q" "{\"limit\": 20, \"offset\": 0}" &&
        jq -e ".data.storage_volume_list == null and (.errors[0].message | test(\"your role \\\\(monitor\\\\) may not list storage volumes\"))" "$TMP/out" &&
        gql user "$STORAGE_Q" "{\"vfolder_host\": \"local\"}" &&
        jq -e ".data.storage_volume == null and (.errors[0].message | test(\"may not list storage volumes\"))" "$TMP/out"
'

test_done
