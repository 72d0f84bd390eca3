#!/bin/bash
test_description='committing a running session to a private image: what root and the session user changed is in the new image (files added, files deleted), /home/work and mounted folders are not; the session keeps running; progress and the end come as background-task events; the image is private to its owner, counted against their policy, listed and deleted by admins, pulled by an agent that lacks it'
. "$(dirname "$0")/../lib/test-lib.sh"
. "$(dirname "$0")/../lib/registry.sh"

test_with_containers

AGENT_STATE=$MANAGER_STATE/agent

# session NAME IMAGE [CONFIG_EXTRA]: an interactive session, RUNNING
session() {
        api POST /session "{\"name\": \"$1\", \"image\": \"$2\", \"enqueueOnly\": true, \"config\": {\"resources\": {\"cpu\": 0.25, \"mem\": \"128m\"}${3:+, $3}}}"
        test "$CODE" = 201 || { echo "session $1: $CODE $(cat "$TMP/out")"; return 1; }
        wait_status "$1" RUNNING
}

# rootfs NAME: the session's container root as root on the host sees it
# (the overlay mount: read-only to host root in a user namespace, whose
# idmapped upper layer has no id for it; as_root writes)
rootfs() {
        echo "$AGENT_STATE/containers/$(kernel_id "$1")/bundle/rootfs"
}

# as_root NAME CMD: run a shell command as root in the session's container
as_root() {
        runc --root "$RUNC_ROOT" exec "$(kernel_id "$1")" /bin/sh -c "$2"
}

# wait_task ID: poll GET /background-tasks/ID until it ends; the task in $TMP/task
wait_task() {
        for _ in $(seq 1 600); do
                OUT=$TMP/task api GET "/background-tasks/$1"
                test "$CODE" = 200 || { echo "task $1: $CODE $(cat "$TMP/task")"; return 1; }
                case $(jq -r .status "$TMP/task") in
                ongoing) sleep 0.1 ;;
                *) return 0 ;;
                esac
        done
        echo "task $1 never ended"
        return 1
}

as_user() {
        BACKEND_ACCESS_KEY=$(sed -n 1p "$TMP/user.keys")
        BACKEND_SECRET_KEY=$(sed -n 2p "$TMP/user.keys")
}

test_expect_success 'tessera dev with busybox; a folder; another user' '
        start_dev_with_busybox &&
        api POST /folders "{\"name\": \"data\"}" && test "$CODE" = 201 &&
        OUT=$TMP/user api POST /admin/users "{\"email\": \"other@t.test\", \"password\": \"other-pass-1\", \"projects\": [\"default\"]}" &&
        test "$CODE" = 201 &&
        jq -r ".keypair.access_key, .keypair.secret_key" "$TMP/user" >"$TMP/user.keys"
'

test_expect_success 'a session changes its filesystem as root and as its user, in its home and in a folder' '
        session source busybox:latest "\"mounts\": [\"data\"]" &&
        R=$(rootfs source) && test -d "$R/bin" &&
        as_root source "mkdir -p /usr/local/bin &&
                printf \"#!/bin/sh\\necho hello from the commit\\n\" >/usr/local/bin/hello &&
                chmod 755 /usr/local/bin/hello && rm /etc/group" &&
        test -x "$R/usr/local/bin/hello" && test ! -e "$R/etc/group" &&
        session_run source "echo note >/tmp/note && echo home >/home/work/home.txt && echo folder >/home/work/data/in-folder.txt" &&
        test "$EXIT" = 0 &&
        session_run source "/usr/local/bin/hello" && test "$(cat "$TMP/console")" = "hello from the commit"
'

test_expect_success 'bad commits: a bad tag is 400, another user sees no such session' '
        api POST /session/source/commit "{\"tag\": \"-bad\"}" && test "$CODE" = 400 &&
        api POST /session/source/commit "{\"tag\": 5}" && test "$CODE" = 400 &&
        (as_user && api POST /session/source/commit "{\"tag\": \"x\"}" && test "$CODE" = 404) &&
        api GET /session/source/commit && test "$CODE" = 200 && jq -e ".status == \"idle\"" "$TMP/out"
'

test_expect_success 'POST /session/source/commit: 202 with a task; its events stream progress and the end' '
        api POST /session/source/commit "{\"tag\": \"v1\"}" && test "$CODE" = 202 &&
        T=$(jq -r .task_id "$TMP/out") && echo "$T" >"$TMP/task1" &&
        jq -e ".image == \"custom/admin/busybox:v1\" and .status == \"ongoing\"" "$TMP/out" &&
        { OUT=$TMP/sse api GET "/events/background-task?taskId=$T" & } && sse=$! &&
        wait_task "$T" && wait $sse &&
        jq -e ".status == \"done\" and .result.image == \"custom/admin/busybox:v1\" and .kind == \"session-commit\"" "$TMP/task" &&
        grep -q "^event: bgtask_done" "$TMP/sse" && grep -q "^event: server_close" "$TMP/sse" &&
        grep "^data:" "$TMP/sse" | head -n 1 | grep -q "\"status\":\"" &&
        api GET /session/source/commit && jq -e ".status == \"done\"" "$TMP/out"
'

test_expect_success 'the session kept running, untouched' '
        test "$(field source status)" = RUNNING &&
        session_run source "cat /tmp/note /home/work/home.txt" && test "$EXIT" = 0 &&
        grep -qx note "$TMP/console" && grep -qx home "$TMP/console"
'

test_expect_success 'the image is registered: private to its owner, the base labels and the commit labels' '
        api GET /images && test "$CODE" = 200 &&
        jq -e ".images[] | select(.name == \"custom/admin/busybox\") | .versions[0] | .tag == \"v1\" and .private == true
                and .labels[\"ai.backend.customized-image.owner\"] != null
                and .labels[\"ai.backend.base-distro\"] == \"busybox\"" "$TMP/out" &&
        (as_user && api GET /images && test "$CODE" = 200 && ! grep -q custom/admin "$TMP/out") &&
        api GET "/admin/images?private=true" && test "$CODE" = 200 &&
        jq -e "[.items[].name] == [\"custom/admin/busybox\"] and .items[0].owner_id != null and .items[0].owner == \"$TEST_ADMIN_EMAIL\"" "$TMP/out" &&
        api GET "/admin/images?private=false" && ! grep -q custom/admin "$TMP/out"
'

# The owner here is a superadmin: no domain admin sees its image, not even
# of its domain (docs/design/security.md, Authorization; t1301 shows an
# admin its domain users' private images).
test_expect_success 'the private image of a superadmin: admins of its domain and of another do not see it' '
        api POST /admin/domains "{\"name\": \"far\"}" && test "$CODE" = 201 &&
        OUT=$TMP/far api POST /admin/users "{\"email\": \"far@t.test\", \"password\": \"far-pass-1\", \"domain\": \"far\", \"role\": \"admin\"}" &&
        test "$CODE" = 201 &&
        OUT=$TMP/near api POST /admin/users "{\"email\": \"near@t.test\", \"password\": \"near-pass-1\", \"role\": \"admin\"}" &&
        test "$CODE" = 201 &&
        (export BACKEND_ACCESS_KEY=$(jq -r .keypair.access_key "$TMP/far") BACKEND_SECRET_KEY=$(jq -r .keypair.secret_key "$TMP/far") &&
                api GET /images && test "$CODE" = 200 && ! grep -q custom/admin "$TMP/out" &&
                api GET "/admin/images?private=true" && test "$CODE" = 200 && jq -e ".items == []" "$TMP/out") &&
        (export BACKEND_ACCESS_KEY=$(jq -r .keypair.access_key "$TMP/near") BACKEND_SECRET_KEY=$(jq -r .keypair.secret_key "$TMP/near") &&
                api GET /images && test "$CODE" = 200 && ! grep -q custom/admin "$TMP/out" &&
                api GET "/admin/images?private=true" && test "$CODE" = 200 && jq -e ".items == []" "$TMP/out")
'

test_expect_success 'a new session of the image has what was added and lacks what was deleted, left out or mounted' '
        session derived custom/admin/busybox:v1 &&
        session_run derived "/usr/local/bin/hello; cat /tmp/note; ls /etc/group /home/work/home.txt /home/work/data 2>&1; true" &&
        grep -q "hello from the commit" "$TMP/console" && grep -q "^note$" "$TMP/console" &&
        grep -q "/etc/group.*No such file" "$TMP/console" &&
        grep -q "home.txt.*No such file" "$TMP/console" && grep -q "/home/work/data.*No such file" "$TMP/console" &&
        session_run derived "id -un" && test "$(cat "$TMP/console")" = work
'

test_expect_success 'another user cannot start a session of the private image' '
        (as_user && api POST /session "{\"name\": \"steal\", \"image\": \"custom/admin/busybox:v1\", \"enqueueOnly\": true}" &&
         test "$CODE" = 400 && grep -q "not registered" "$TMP/out")
'

test_expect_success 'the CLI commits and follows the task; a tag that exists is 409' '
        "$TESSERA" session commit source --tag v2 >"$TMP/cli.out" 2>"$TMP/cli.err" &&
        test "$(cat "$TMP/cli.out")" = custom/admin/busybox:v2 &&
        grep -q "committing source to custom/admin/busybox:v2" "$TMP/cli.err" &&
        api POST /session/source/commit "{\"tag\": \"v2\"}" && test "$CODE" = 409 && grep -q "exists already" "$TMP/out"
'

test_expect_success 'an agent that lacks the image pulls it from the manager' '
        destroy_sessions derived && wait_status derived TERMINATED &&
        "$TESSERA" agent image --store "$AGENT_STATE/images" rm custom/admin/busybox:v2 &&
        ! "$TESSERA" agent image --store "$AGENT_STATE/images" ls | grep -q "busybox:v2" &&
        session again custom/admin/busybox:v2 &&
        session_run again "/usr/local/bin/hello" && test "$(cat "$TMP/console")" = "hello from the commit" &&
        "$TESSERA" agent image --store "$AGENT_STATE/images" ls | grep -q "custom/admin/busybox:v2"
'

test_expect_success 'the policy limits private images: past max_customized_image_count is 412' '
        api PATCH /admin/keypair-policies/default "{\"max_customized_image_count\": 2}" && test "$CODE" = 200 &&
        api POST /session/source/commit "{\"tag\": \"v3\"}" && test "$CODE" = 412 &&
        api PATCH /admin/keypair-policies/default "{\"max_customized_image_count\": 3}" && test "$CODE" = 200 &&
        api POST /session/source/commit "{\"tag\": \"v3\"}" && test "$CODE" = 202 &&
        T=$(jq -r .task_id "$TMP/out") && wait_task "$T" && jq -e ".status == \"done\"" "$TMP/task"
'

test_expect_success 'admins delete a private image; it is gone for its owner too' '
        api GET "/admin/images?private=true" && ID=$(jq -r ".items[] | select(.tag == \"v3\") | .id" "$TMP/out") &&
        api DELETE "/admin/images/$ID" && test "$CODE" = 204 -o "$CODE" = 200 &&
        api GET /images && ! grep -q "\"tag\":\"v3\"" "$TMP/out" &&
        api POST /session "{\"name\": \"gone\", \"image\": \"custom/admin/busybox:v3\", \"enqueueOnly\": true}" &&
        test "$CODE" = 400
'

test_expect_success 'a session that is not running cannot be committed' '
        destroy_sessions again && wait_status again TERMINATED &&
        api POST /session/again/commit "{\"tag\": \"late\"}" && test "$CODE" = 409 -o "$CODE" = 404
'

test_done
