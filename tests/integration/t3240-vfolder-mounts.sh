#!/bin/bash
test_description='virtual folders mounted into sessions: by name at /home/work/<name>, by mount_map, project folders read-only, dot-folders automatically; folders the owner cannot use are refused; symlinks planted in a folder stay inside the container'
. "$(dirname "$0")/../lib/test-lib.sh"
. "$(dirname "$0")/../lib/registry.sh"

test_with_containers

# session NAME [CONFIG_EXTRA]: an interactive busybox session, its config
# extended with CONFIG_EXTRA (e.g. "mounts": ["data"]), RUNNING
session() {
        api POST /session "{\"name\": \"$1\", \"image\": \"busybox:latest\", \"enqueueOnly\": true, \"config\": {\"resources\": {\"cpu\": 0.25, \"mem\": \"128m\"}${2:+, $2}}}"
        test "$CODE" = 201 || { echo "session $1: $CODE $(cat "$TMP/out")"; return 1; }
        wait_status "$1" RUNNING
}

# run NAME CMD: session_run (test-lib.sh)
run() {
        session_run "$@"
}

# host_dir SESSION FOLDER: the folder's directory on the host, from the
# session's resolved mounts
host_dir() {
        OUT=$TMP/info api GET "/session/$1"
        echo "$MANAGER_STATE/vfolders/$(jq -r --arg n "$2" '.vfolder_mounts[] | select(.name == $n) | .path' "$TMP/info")"
}

as_admin() {
        BACKEND_ACCESS_KEY=$TEST_ADMIN_ACCESS_KEY
        BACKEND_SECRET_KEY=$TEST_ADMIN_SECRET_KEY
}

as_user() {
        BACKEND_ACCESS_KEY=$(sed -n 1p "$TMP/user.keys")
        BACKEND_SECRET_KEY=$(sed -n 2p "$TMP/user.keys")
}

test_expect_success 'tessera dev with busybox; a folder of the admin, a user of project default' '
        start_dev_with_busybox &&
        grep -q "^vfolder_hosts = \"local=$MANAGER_STATE/vfolders\"" "$MANAGER_STATE/agent.conf" &&
        api POST /folders "{\"name\": \"data\"}" && test "$CODE" = 201 &&
        OUT=$TMP/user api POST /admin/users "{\"email\": \"member@t.test\", \"password\": \"member-pass\", \"projects\": [\"default\"]}" &&
        test "$CODE" = 201 &&
        jq -r ".keypair.access_key, .keypair.secret_key" "$TMP/user" >"$TMP/user.keys" &&
        test "$(wc -l <"$TMP/user.keys")" = 2
'

test_expect_success 'a folder is mounted read-write at /home/work/<name>: what the session writes is in the folder' '
        session sess1 "\"mounts\": [\"data\"]" &&
        OUT=$TMP/info api GET /session/sess1 &&
        jq -e ".mounts == [\"data\"] and (.vfolder_mounts | length) == 1 and .vfolder_mounts[0].target == \"/home/work/data\"
                and .vfolder_mounts[0].perm == \"wd\" and .vfolder_mounts[0].host == \"local\"" "$TMP/info" &&
        run sess1 "echo hello >/home/work/data/hello.txt && grep -c /home/work/data /proc/mounts" &&
        test "$EXIT" = 0 && test "$(cat "$TMP/console")" = 1 &&
        D=$(host_dir sess1 data) &&
        test "$(cat "$D/hello.txt")" = hello &&
        api GET /folders/data/files && test "$CODE" = 200 && grep -q hello.txt "$TMP/out"
'

test_expect_success 'the mount is nosuid and nodev' '
        run sess1 "grep \" /home/work/data \" /proc/mounts" && test "$EXIT" = 0 &&
        grep -q nosuid "$TMP/console" && grep -q nodev "$TMP/console"
'

test_expect_success 'mount_map puts a folder elsewhere (/data/x); a map key not in mounts is mounted too' '
        session sess2 "\"mounts\": [\"data\"], \"mount_map\": {\"data\": \"/data/x\"}" &&
        run sess2 "cat /data/x/hello.txt; test -e /home/work/data" &&
        test "$(cat "$TMP/console")" = hello && test "$EXIT" != 0 &&
        destroy_sessions sess2 &&
        session sess3 "\"mount_map\": {\"data\": \"sub/dir\"}" &&
        run sess3 "cat /home/work/sub/dir/hello.txt" && test "$(cat "$TMP/console")" = hello &&
        destroy_sessions sess3
'

test_expect_success 'bad mounts: outside the allowed roots, two on one target, a folder the owner cannot use' '
        api POST /session "{\"name\": \"badsess1\", \"image\": \"busybox:latest\", \"enqueueOnly\": true, \"config\": {\"mounts\": [\"data\"], \"mount_map\": {\"data\": \"/etc/x\"}}}" &&
        test "$CODE" = 400 &&
        api POST /folders "{\"name\": \"data2\"}" && test "$CODE" = 201 &&
        api POST /session "{\"name\": \"badsess2\", \"image\": \"busybox:latest\", \"enqueueOnly\": true, \"config\": {\"mounts\": [\"data\", \"data2\"], \"mount_map\": {\"data2\": \"data\"}}}" &&
        test "$CODE" = 400 && grep -q "both mounted" "$TMP/out" &&
        api POST /session "{\"name\": \"badsess3\", \"image\": \"busybox:latest\", \"enqueueOnly\": true, \"config\": {\"mounts\": [\"nosuch\"]}}" &&
        test "$CODE" = 404 && grep -q nosuch "$TMP/out" &&
        (
                as_user &&
                api POST /session "{\"name\": \"badsess4\", \"image\": \"busybox:latest\", \"enqueueOnly\": true, \"config\": {\"mounts\": [\"data\"]}}" &&
                test "$CODE" = 404 && grep -q "folder .data. not found" "$TMP/out"
        ) &&
        OUT=$TMP/l api GET "/sessions?status=PENDING" && test "$(jq .total "$TMP/l")" = 0
'

test_expect_success 'a project folder with permission ro is mounted read-only for a member' '
        api POST /folders "{\"name\": \"shared\", \"group\": \"default\", \"permission\": \"ro\"}" && test "$CODE" = 201 &&
        F=$(jq -r .id "$TMP/out") && H=$(echo "$F" | tr -d -) &&
        P=$(ls -d "$MANAGER_STATE"/vfolders/project-*/"${H:0:2}/${H:2:2}/${H:4}") &&
        echo readable >"$P/readme" &&
        (
                as_user &&
                session sess4 "\"mounts\": [\"shared\"]" &&
                OUT=$TMP/info api GET /session/sess4 &&
                jq -e ".vfolder_mounts[0].perm == \"ro\"" "$TMP/info" &&
                run sess4 "cat /home/work/shared/readme" && test "$EXIT" = 0 &&
                test "$(cat "$TMP/console")" = readable &&
                run sess4 "echo no >/home/work/shared/new" && test "$EXIT" != 0 &&
                grep -qi "read-only" "$TMP/console" &&
                test ! -e "$P/new" &&
                destroy_sessions sess4
        )
'

test_expect_success 'a dot-folder is mounted without being asked for, and keeps files between sessions' '
        (
                as_user &&
                api POST /folders "{\"name\": \".local\"}" && test "$CODE" = 201 &&
                session sess5 &&
                OUT=$TMP/info api GET /session/sess5 &&
                jq -e ".mounts == [\".local\"] and .vfolder_mounts[0].target == \"/home/work/.local\"" "$TMP/info" &&
                run sess5 "echo kept >/home/work/.local/x" && test "$EXIT" = 0 &&
                destroy_sessions sess5 &&
                session sess6 &&
                run sess6 "cat /home/work/.local/x" && test "$(cat "$TMP/console")" = kept &&
                destroy_sessions sess6
        )
'

test_expect_success 'a folder mounted by a live session cannot go to the trash' '
        api DELETE /folders/data &&
        test "$CODE" = 409 &&
        grep -q "mounted" "$TMP/out" &&
        api GET /folders/data && test "$CODE" = 200
'

test_expect_success 'a symlink planted in the folder resolves inside the container, not on the host' '
        D=$(host_dir sess1 data) &&
        mkdir -p "$TMP/host-only" && echo secret >"$TMP/host-only/secret" &&
        ln -s "$TMP/host-only" "$D/leak" &&
        run sess1 "cat /home/work/data/leak/secret" && test "$EXIT" != 0 &&
        test_must_fail grep -qx secret "$TMP/console"
'

test_expect_success 'a nested mount under a folder on the host does not show inside (plain bind)' '
        D=$(host_dir sess1 data) &&
        mkdir -p "$D/nested" && mount -t tmpfs tmpfs "$D/nested" && echo under >"$D/nested/f" &&
        test_at_exit "umount -l \"$D/nested\"" &&
        session sess7 "\"mounts\": [\"data\"]" &&
        run sess7 "ls /home/work/data/nested" && test "$EXIT" = 0 &&
        test_must_fail grep -q "^f$" "$TMP/console" &&
        umount -l "$D/nested" && destroy_sessions sess7
'

test_expect_success 'a folder whose directory became a symlink fails the kernel, naming the folder' '
        api POST /folders "{\"name\": \"evil\"}" && test "$CODE" = 201 &&
        F=$(jq -r .id "$TMP/out") && H=$(echo "$F" | tr -d -) &&
        P=$(ls -d "$MANAGER_STATE"/vfolders/user-*/"${H:0:2}/${H:2:2}/${H:4}") &&
        rmdir "$P" && ln -s /etc "$P" &&
        api POST /session "{\"name\": \"sess8\", \"image\": \"busybox:latest\", \"enqueueOnly\": true, \"config\": {\"mounts\": [\"evil\"]}}" &&
        test "$CODE" = 201 &&
        for _ in $(seq 1 300); do
                st=$(field sess8 status) && case $st in ERROR | TERMINATED | CANCELLED) break ;; esac; sleep 0.1
        done &&
        test "$st" = ERROR &&
        OUT=$TMP/info api GET /session/sess8 &&
        grep -q "evil" "$TMP/info" && grep -q "not a directory beneath" "$TMP/info" &&
        rm "$P" && mkdir "$P"
'

test_expect_success 'after the session ends the folder may go to the trash' '
        destroy_sessions sess1 &&
        api DELETE /folders/data && test "$CODE" = 200
'

test_expect_success 'every kernel of a cluster session gets the same mounts (two kernels: the two cores, once the others are gone)' '
        api PATCH /admin/keypair-policies/default "{\"max_containers_per_session\": 2}" && test "$CODE" = 200 &&
        api POST /folders "{\"name\": \"clus\"}" && test "$CODE" = 201 &&
        api POST /session "{\"name\": \"sessc\", \"image\": \"busybox:latest\", \"enqueueOnly\": true, \"clusterSize\": 2, \"clusterMode\": \"single-node\", \"config\": {\"resources\": {\"cpu\": 0.25, \"mem\": \"128m\"}, \"mounts\": [\"clus\"]}}" &&
        test "$CODE" = 201 && wait_status sessc RUNNING &&
        n=$(find "$MANAGER_STATE/agent" -path "*bundle/config.json" -exec grep -l "\"/home/work/clus\"" {} + | wc -l) &&
        echo "kernels with the mount: $n" && test "$n" = 2 &&
        run sessc "echo from-main >/home/work/clus/m" && test "$EXIT" = 0 &&
        destroy_sessions sessc
'

test_done
