#!/bin/bash
test_description='POST /admin/gql as Backend.AI'"'"'s 23.09 and 24.03 clients send it (their exact documents, signed with v7 and v8): the fields they ask beyond 22.03 (main_kernel_id, idle_checks, preopen_ports, sudo_session_enabled, main_access_key, a keypair'"'"'s projects, use_host_network, the pending-session limits), their own-/invited-/project-folder lists and host permissions, and their mutations'"'"' inputs (PROXY:VOLUME host names, sudo sessions off, null fields of their own)'
. "$(dirname "$0")/../lib/test-lib.sh"
. "$(dirname "$0")/../lib/roles.sh"

# gql KEY VERSION QUERY [VARIABLES]: POST /admin/gql as KEY, signed with
# that API version; the answer in $TMP/out
gql() {
        local key=$1 ver=$2 body h=() l
        body=$(jq -cn --arg q "$3" --argjson v "${4:-{\}}" '{query: $q, variables: $v}')
        while IFS= read -r l; do h+=(-H "$l"); done < <(TESSERA_SIGN_VERSION=$ver "$BUILD/test-tool" sign POST /admin/gql \
                "${BACKEND_ENDPOINT#http://}" "${AK[$key]}" "${SK[$key]}" application/json)
        CODE=$(curl -s -m 10 -X POST -o "$TMP/out" -w '%{http_code}' "${h[@]}" --data "$body" \
                "$BACKEND_ENDPOINT/admin/gql") || true
}

no_errors() {
        test "$CODE" = 200 && jq -e ".errors == null" "$TMP/out" >/dev/null || { cat "$TMP/out"; return 1; }
}

test_expect_success 'a manager, users of every role, a session and folders' '
        start_manager && make_every_role newgql.test &&
        call superadmin POST /admin/images "{\"name\": \"python\", \"tag\": \"3\"}" && test "$CODE" = 201 &&
        call user POST /session "{\"name\": \"sess1\", \"image\": \"python:3\", \"enqueueOnly\": true}" &&
        test "$CODE" = 201 && S1=$(jq -r .sessionId "$TMP/out") &&
        K1=$(db_sql "SELECT id FROM kernels WHERE session_id = '"'"'$S1'"'"'") &&
        call user POST /folders "{\"name\": \"mine\"}" && test "$CODE" = 201 &&
        call user2 POST /folders "{\"name\": \"theirs\"}" && test "$CODE" = 201 &&
        call user2 POST /folders/theirs/invite "{\"perm\": \"ro\", \"emails\": [\"user1@newgql.test\"]}" &&
        test "$CODE" = 201 &&
        call user GET /folders/invitations/list && INV=$(jq -r ".invitations[0].id" "$TMP/out") &&
        call user POST /folders/invitations/accept "{\"inv_id\": \"$INV\"}" && test "$CODE" = 200 &&
        PID=$(db_sql "SELECT id FROM projects WHERE name = '"'"'default'"'"' AND domain_name = '"'"'default'"'"'") &&
        call superadmin POST /folders "{\"name\": \"team\", \"group\": \"default\"}" && test "$CODE" = 201
'

test_expect_success 'ps and session info (23.09): main_kernel_id, idle_checks, containers'"'"' preopen_ports' '
        gql user v7.20230615 "query(\$limit:Int!, \$offset:Int!, \$status: String, \$access_key: String, \$filter: String, \$order: String) { compute_session_list( limit:\$limit, offset:\$offset, status:\$status, access_key:\$access_key, filter:\$filter, order:\$order) { items { name access_key id group_name main_kernel_id image type status status_info status_changed result } total_count } }" \
                "{\"status\": \"PENDING,SCHEDULED,RUNNING\", \"access_key\": null, \"filter\": null, \"order\": null, \"limit\": 20, \"offset\": 0}" &&
        no_errors && jq -e ".data.compute_session_list.items == [.data.compute_session_list.items[0]] and .data.compute_session_list.items[0].main_kernel_id == \"$K1\"" "$TMP/out" &&
        gql user v8.20240315 "query(\$id: UUID!) { compute_session(id: \$id) { name id main_kernel_id image tag created_at terminated_at status status_info status_data occupying_slots idle_checks agent_ids scheduled_at containers { id cluster_role cluster_idx cluster_hostname session_id image registry status status_info status_data status_changed agent container_id resource_opts occupied_slots preopen_ports live_stat last_stat id } dependencies { name id } }}" "{\"id\": \"$S1\"}" &&
        no_errors &&
        jq -e ".data.compute_session | .id == \"$S1\" and .main_kernel_id == \"$K1\" and .idle_checks == null and .agent_ids == [] and .scheduled_at == null and .containers[0].preopen_ports == null and .containers[0].id == \"$K1\"" "$TMP/out"
'

test_expect_success 'user list and info: sudo_session_enabled false, main_access_key, groups with their ids' '
        gql superadmin v7.20230615 "query(\$limit:Int!, \$offset:Int!, \$status: String, \$group_id: UUID, \$filter: String, \$order: String) { user_list( limit:\$limit, offset:\$offset, status:\$status, group_id:\$group_id, filter:\$filter, order:\$order) { items { uuid username role email full_name need_password_change status status_info created_at domain_name groups { id name } allowed_client_ip sudo_session_enabled main_access_key } total_count } }" \
                "{\"status\": null, \"group_id\": null, \"filter\": null, \"order\": null, \"limit\": 20, \"offset\": 0}" &&
        no_errors &&
        jq -e ".data.user_list.items[] | select(.email == \"user1@newgql.test\") | .sudo_session_enabled == false and .main_access_key == \"${AK[user]}\" and .groups == [{\"id\": \"$PID\", \"name\": \"default\"}]" "$TMP/out" &&
        gql user v8.20240315 "query { user {uuid username email groups { id name } sudo_session_enabled main_access_key} }" &&
        no_errors && jq -e ".data.user | .email == \"user1@newgql.test\" and .main_access_key == \"${AK[user]}\" and .groups == [{\"id\": \"$PID\", \"name\": \"default\"}]" "$TMP/out"
'

test_expect_success 'keypair list: each keypair'"'"'s projects (its user'"'"'s), nothing of another domain to an admin' '
        gql admin v8.20240315 "query(\$limit:Int!, \$offset:Int!, \$is_active: Boolean, \$domain_name: String, \$filter: String, \$order: String) { keypair_list( limit:\$limit, offset:\$offset, is_active:\$is_active, domain_name:\$domain_name, filter:\$filter, order:\$order) { items { user_id projects user_info { full_name } access_key secret_key is_active is_admin created_at last_used resource_policy rate_limit concurrency_used } total_count } }" \
                "{\"is_active\": null, \"domain_name\": null, \"filter\": null, \"order\": null, \"limit\": 20, \"offset\": 0}" &&
        no_errors &&
        jq -e "[.data.keypair_list.items[] | select(.user_id == \"user1@newgql.test\")][0].projects == [\"default\"]" "$TMP/out" &&
        jq -e "[.data.keypair_list.items[].user_id] | index(\"ouser@newgql.test\") == null and index(\"$TEST_ADMIN_EMAIL\") == null" "$TMP/out"
'

test_expect_success 'scaling groups and keypair policies with the 24.03 fields' '
        gql superadmin v8.20240315 "query(\$name: String) { scaling_group(name: \$name) {name description is_active is_public created_at driver driver_opts scheduler scheduler_opts use_host_network wsproxy_addr wsproxy_api_token} }" "{\"name\": \"default\"}" &&
        no_errors && jq -e ".data.scaling_group | .use_host_network == false and .wsproxy_api_token == null" "$TMP/out" &&
        call superadmin PATCH /admin/keypair-policies/default "{\"max_pending_session_count\": 5, \"max_pending_session_resource_slots\": {\"cpu\": 8}}" &&
        test "$CODE" = 200 &&
        gql superadmin v8.20240315 "query { keypair_resource_policies { name max_session_lifetime max_pending_session_count max_pending_session_resource_slots max_concurrent_sftp_sessions } }" &&
        no_errors &&
        jq -e ".data.keypair_resource_policies[0] | .max_pending_session_count == 5 and (.max_pending_session_resource_slots | fromjson | .cpu != null) and .max_concurrent_sftp_sessions == null" "$TMP/out"
'

test_expect_success 'vfolder_own_list, vfolder_invited_list, vfolder_project_list split vfolder_list; vfolder_host_permissions' '
        for root in vfolder_own_list:mine vfolder_invited_list:theirs vfolder_project_list:team vfolder_list:mine,team,theirs; do
                gql user v7.20230615 "query(\$limit:Int!, \$offset:Int!, \$filter: String, \$order: String) { ${root%%:*}(limit:\$limit, offset:\$offset, filter:\$filter, order:\$order) { items { name ownership_type } total_count } }" \
                        "{\"filter\": null, \"order\": null, \"limit\": 20, \"offset\": 0}" &&
                no_errors &&
                jq -e "([.data.${root%%:*}.items[].name] | sort | join(\",\")) == \"${root#*:}\" and .data.${root%%:*}.total_count == (\"${root#*:}\" | split(\",\") | length)" "$TMP/out" ||
                return 1
        done &&
        gql user v7.20230615 "query { vfolder_own_list(limit: 20, offset: 0, filter: \"name == x\") { items { name } } }" &&
        jq -e ".data.vfolder_own_list == null and (.errors[0].message | test(\"query expressions\"))" "$TMP/out" &&
        gql user v7.20230615 "query { vfolder_host_permissions { vfolder_host_permission_list } }" && no_errors &&
        jq -e ".data.vfolder_host_permissions.vfolder_host_permission_list | index(\"mount-in-session\") != null and length == 8" "$TMP/out"
'

test_expect_success 'the 24.03 CLI'"'"'s inputs: PROXY:VOLUME hosts, sudo sessions off, new policy limits, null fields of its own' '
        gql superadmin v8.20240315 "mutation(\$name: String!, \$input: CreateKeyPairResourcePolicyInput!) { create_keypair_resource_policy(name: \$name, props: \$input) { ok msg resource_policy { name } }}" \
                "{\"name\": \"p1\", \"input\": {\"default_for_unspecified\": \"UNLIMITED\", \"total_resource_slots\": \"{}\", \"max_session_lifetime\": 0, \"max_concurrent_sessions\": 30, \"max_concurrent_sftp_sessions\": 30, \"max_containers_per_session\": 1, \"idle_timeout\": 1800, \"allowed_vfolder_hosts\": \"{\\\"local:volume1\\\": [\\\"create-vfolder\\\", \\\"mount-in-session\\\"]}\", \"max_pending_session_count\": null, \"max_pending_session_resource_slots\": null, \"some_future_field\": null}}" &&
        no_errors && jq -e ".data.create_keypair_resource_policy.ok == true" "$TMP/out" &&
        call superadmin GET /admin/keypair-policies/p1 &&
        jq -e ".allowed_vfolder_hosts == {\"local\": [\"create-vfolder\", \"mount-in-session\"]} and .idle_timeout == 1800" "$TMP/out" &&
        gql superadmin v8.20240315 "mutation(\$email: String!, \$input: UserInput!) { create_user(email: \$email, props: \$input) { ok msg user {domain_name email username uuid} } }" \
                "{\"email\": \"u1@x.test\", \"input\": {\"password\": \"pass-word-1\", \"role\": \"user\", \"status\": \"active\", \"need_password_change\": false, \"description\": \"\", \"domain_name\": \"default\", \"totp_activated\": false, \"sudo_session_enabled\": false, \"username\": \"\", \"full_name\": \"\", \"allowed_client_ip\": null, \"group_ids\": [\"$PID\"]}}" &&
        no_errors && jq -e ".data.create_user | .ok == true and .user.username == \"u1@x.test\"" "$TMP/out" &&
        test "$(db_sql "SELECT COUNT(*) FROM project_members m JOIN users u ON u.id = m.user_id WHERE u.email = '"'"'u1@x.test'"'"' AND m.project_id = '"'"'$PID'"'"'")" = 1 &&
        gql superadmin v8.20240315 "mutation(\$email: String!, \$input: UserInput!) { create_user(email: \$email, props: \$input) { ok msg } }" \
                "{\"email\": \"u2@x.test\", \"input\": {\"password\": \"pass-word-1\", \"sudo_session_enabled\": true}}" &&
        no_errors && jq -e ".data.create_user.ok == false and (.data.create_user.msg | test(\"root\"))" "$TMP/out" &&
        gql superadmin v8.20240315 "mutation(\$name: String!, \$input: CreateScalingGroupInput!) { create_scaling_group(name: \$name, props: \$input) { ok msg scaling_group {name} } }" \
                "{\"name\": \"sg1\", \"input\": {\"description\": \"\", \"is_active\": true, \"is_public\": true, \"driver\": \"static\", \"scheduler\": \"fifo\", \"use_host_network\": false, \"wsproxy_addr\": null, \"wsproxy_api_token\": null, \"driver_opts\": \"{}\", \"scheduler_opts\": \"{}\"}}" &&
        no_errors && jq -e ".data.create_scaling_group.ok == true" "$TMP/out" &&
        gql superadmin v8.20240315 "mutation { modify_scaling_group(name: \"sg1\", props: {use_host_network: true}) { ok msg } }" &&
        no_errors && jq -e ".data.modify_scaling_group.ok == false and (.data.modify_scaling_group.msg | test(\"never shares the host\"))" "$TMP/out"
'

test_done
