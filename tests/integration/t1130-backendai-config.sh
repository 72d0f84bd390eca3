#!/bin/bash
test_description='Backend.AI'"'"'s read-only /config routes: the resource slots sessions may ask for, the folder types, the scanned registries (superadmins); and GraphQL user(email), the caller'"'"'s own or, for admins, another'"'"'s'
. "$(dirname "$0")/../lib/test-lib.sh"
. "$(dirname "$0")/../lib/roles.sh"

test_expect_success 'a manager with mock GPUs reported by an agent, a registry, a user' '
        start_manager &&
        AK[superadmin]=$BACKEND_ACCESS_KEY SK[superadmin]=$BACKEND_SECRET_KEY &&
        make_user user cfg@config.test default user default &&
        agent_register cfgagent "{\"cpu\": \"4\", \"mem\": \"8g\", \"cuda.shares\": \"2\"}" "$(gpus 2 1)" &&
        call superadmin POST /admin/container-registries "{\"name\": \"cr.test\", \"url\": \"https://cr.test\"}" && test "$CODE" = 201
'

test_expect_success 'resource-slots: cpu and mem always, and the slots agents offer, with their kinds' '
        call user GET /config/resource-slots && test "$CODE" = 200 &&
        jq -e ". == {\"cpu\": \"count\", \"mem\": \"bytes\", \"cuda.shares\": \"count\"}" "$TMP/out"
'

test_expect_success 'vfolder-types: what /folders/_/allowed-types says' '
        call user GET /config/vfolder-types && test "$CODE" = 200 && cp "$TMP/out" "$TMP/types" &&
        call user GET /folders/_/allowed-types && cmp "$TMP/out" "$TMP/types"
'

test_expect_success 'docker-registries: {name: url}, superadmins only' '
        call superadmin GET /config/docker-registries && test "$CODE" = 200 &&
        jq -e ".[\"cr.test\"] == \"https://cr.test\"" "$TMP/out" &&
        call user GET /config/docker-registries && test "$CODE" = 403
'

test_expect_success 'GraphQL user: the caller'"'"'s own; another'"'"'s only for who may list users' '
        call user POST /admin/gql "{\"query\": \"query { user { email username role is_active domain_name groups { name } } }\"}" &&
        test "$CODE" = 200 &&
        jq -e ".errors == null and .data.user == {\"email\": \"cfg@config.test\", \"username\": \"cfg@config.test\", \"role\": \"user\", \"is_active\": true, \"domain_name\": \"default\", \"groups\": [{\"name\": \"default\"}]}" "$TMP/out" ||
        { cat "$TMP/out"; false; } &&
        call superadmin POST /admin/gql "{\"query\": \"query(\$e: String) { user(email: \$e) { email role } }\", \"variables\": {\"e\": \"cfg@config.test\"}}" &&
        jq -e ".data.user == {\"email\": \"cfg@config.test\", \"role\": \"user\"}" "$TMP/out" &&
        call user POST /admin/gql "{\"query\": \"query { user(email: \\\"admin@tessera.local\\\") { email } }\"}" &&
        jq -e ".data.user == null and (.errors[0].message | test(\"may not list users\"))" "$TMP/out"
'

test_expect_success 'etcd (/config/get|set|delete) and the agent watcher (/resource/watcher...): 501 saying what Tessera has instead' '
        call superadmin POST /config/get "{\"key\": \"config/docker/registry\", \"prefix\": true}" && test "$CODE" = 501 &&
        jq -e ".type | endswith(\"not-implemented\")" "$TMP/out" && jq -e ".title | test(\"no etcd\") and test(\"--config\")" "$TMP/out" &&
        call superadmin POST /config/set "{\"key\": \"a\", \"value\": \"b\"}" && test "$CODE" = 501 &&
        call superadmin GET /resource/watcher "{\"agent_id\": \"i-1\"}" && test "$CODE" = 501 &&
        jq -e ".title | test(\"no watcher\") and test(\"/admin/agents\")" "$TMP/out" &&
        call superadmin POST /resource/watcher/agent/restart "{\"agent_id\": \"i-1\"}" && test "$CODE" = 501 &&
        call user POST /config/get "{\"key\": \"a\"}" && test "$CODE" = 403 &&
        call superadmin POST /folders/_/mounts "{\"name\": \"nfs1\", \"fs_location\": \"10.0.0.1:/x\"}" &&
        test "$CODE" = 501 && jq -e ".title | test(\"mounts nothing\") and test(\"fstab\")" "$TMP/out" &&
        call superadmin DELETE /folders/_/mounts "{\"name\": \"nfs1\"}" && test "$CODE" = 501 &&
        call superadmin GET /folders/_/fstab && test "$CODE" = 501 &&
        call superadmin GET /folders/_/perf-metric "{\"folder_host\": \"local\"}" && test "$CODE" = 501 &&
        jq -e ".title | test(\"all-hosts\")" "$TMP/out"
'

test_expect_success 'list-mounts (GET /folders/_/mounts): the folder hosts, NAME: PATH, superadmins only' '
        call superadmin GET /folders/_/mounts && test "$CODE" = 200 &&
        jq -e ".manager.success == true and .manager.message == \"\" and (.manager.mounts | length) >= 1 and .agents == {}" "$TMP/out" &&
        jq -e ".manager.mounts[0] | test(\"^local: /\")" "$TMP/out" &&
        call user GET /folders/_/mounts && test "$CODE" = 403
'

test_done
