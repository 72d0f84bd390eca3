#!/bin/bash
# shellcheck disable=SC2016
test_description='a session writes at most its writable layer'"'"'s size outside its folders: its resource policy'"'"'s max_container_disk (or less, asked in resource_opts.disk) is a filesystem of its own; past it "No space left on device", for the work user and for root, and the node'"'"'s disk does not fill'
. "$(dirname "$0")/../lib/test-lib.sh"
. "$(dirname "$0")/../lib/registry.sh"

test_with_containers
command -v mkfs.ext4 >/dev/null || skip_all 'needs mkfs.ext4 (apt-get install -y e2fsprogs)'

# a user on a policy of 16 MiB writable layers
user_api() { BACKEND_ACCESS_KEY=$USER_AK BACKEND_SECRET_KEY=$USER_SK api "$@"; }

# fill NAME: write 32 MiB into /tmp as the work user; the output in $TMP/console
fill() {
        session_run "$1" 'df -k / | tail -n 1; dd if=/dev/zero of=/tmp/fill bs=1M count=32 2>&1; echo "dd=$?"'
}

# layer_dir NAME: the container directory of the session's main kernel
layer_dir() { echo "$MANAGER_STATE/agent/containers/$(kernel_id "$1")"; }

test_expect_success 'a busybox image, a policy of 16 MiB writable layers and a user on it' '
        start_dev_with_busybox &&
        api POST /admin/keypair-policies "{\"name\": \"small-disk\", \"max_container_disk\": \"16m\"}" &&
        test "$CODE" = 201 && jq -e ".max_container_disk == \"16777216\"" "$TMP/out" &&
        api POST /admin/users "{\"email\": \"d@disk.test\", \"password\": \"disk-password-1\", \"projects\": [\"default\"], \"resource_policy\": \"small-disk\"}" &&
        test "$CODE" = 201 &&
        USER_AK=$(jq -r .keypair.access_key "$TMP/out") && USER_SK=$(jq -r .keypair.secret_key "$TMP/out")
'

test_expect_success 'a policy value under 8 MiB, or not a size, is a 400 naming the field' '
        api PATCH /admin/keypair-policies/small-disk "{\"max_container_disk\": \"4m\"}" &&
        test "$CODE" = 400 && grep -q max_container_disk "$TMP/out" &&
        api PATCH /admin/keypair-policies/small-disk "{\"max_container_disk\": \"lots\"}" &&
        test "$CODE" = 400 && grep -q max_container_disk "$TMP/out"
'

test_expect_success 'asking for more than the policy, or for less than 8 MiB, is a 400 naming it' '
        user_api POST /session "{\"name\": \"bigdisk\", \"image\": \"busybox:latest\", \"enqueueOnly\": true,
                \"config\": {\"resources\": {\"cpu\": 1, \"mem\": \"128m\"}, \"resource_opts\": {\"disk\": \"32m\"}}}" &&
        test "$CODE" = 400 && grep -q "max_container_disk" "$TMP/out" && grep -q "resource_opts.disk" "$TMP/out" &&
        user_api POST /session "{\"name\": \"tinydisk\", \"image\": \"busybox:latest\", \"enqueueOnly\": true,
                \"config\": {\"resources\": {\"cpu\": 1, \"mem\": \"128m\"}, \"resource_opts\": {\"disk\": \"1m\"}}}" &&
        test "$CODE" = 400 && grep -q "resource_opts.disk" "$TMP/out"
'

test_expect_success 'the user'"'"'s session sees a 16 MiB root and cannot write 32 MiB into /tmp' '
        user_api POST /session "{\"name\": \"disk1\", \"image\": \"busybox:latest\", \"enqueueOnly\": true, \"type\": \"interactive\",
                \"config\": {\"resources\": {\"cpu\": 1, \"mem\": \"128m\"}}}" &&
        test "$CODE" = 201 &&
        wait_status disk1 RUNNING &&
        BACKEND_ACCESS_KEY=$USER_AK BACKEND_SECRET_KEY=$USER_SK fill disk1 &&
        cat "$TMP/console" &&
        size=$(head -n 1 "$TMP/console" | awk "{print \$2}") &&
        test "$size" -gt 8192 && test "$size" -le 16384 &&
        grep -q "No space left on device" "$TMP/console" &&
        ! grep -qx "dd=0" "$TMP/console"
'

test_expect_success 'the node'"'"'s disk holds what the layer holds, no more; root in the container is held too' '
        dir=$(layer_dir disk1) &&
        findmnt -n -o FSTYPE "$dir/rw" >"$TMP/fstype" && test "$(cat "$TMP/fstype")" = ext4 &&
        test "$(du -k "$dir/rw.img" | cut -f1)" -le 17408 &&
        test_must_fail runc --root "$RUNC_ROOT" exec "$(kernel_id disk1)" /bin/sh -c "dd if=/dev/zero of=/root-fill bs=1M count=32" 2>"$TMP/root-dd" &&
        grep -q "No space left on device" "$TMP/root-dd"
'

test_expect_success 'a session may ask for less than its policy (resource_opts.disk)' '
        user_api POST /session "{\"name\": \"disk2\", \"image\": \"busybox:latest\", \"enqueueOnly\": true, \"type\": \"interactive\",
                \"config\": {\"resources\": {\"cpu\": 1, \"mem\": \"128m\"}, \"resource_opts\": {\"disk\": \"10m\"}}}" &&
        test "$CODE" = 201 &&
        wait_status disk2 RUNNING &&
        BACKEND_ACCESS_KEY=$USER_AK BACKEND_SECRET_KEY=$USER_SK session_run disk2 "df -k / | tail -n 1" &&
        size=$(awk "{print \$2}" "$TMP/console") &&
        test "$size" -gt 8192 && test "$size" -le 10240
'

test_expect_success 'a session ended: its layer unmounted, its loop device free, its file gone' '
        dir=$(layer_dir disk1) &&
        loop=$(findmnt -n -o SOURCE "$dir/rw") &&
        user_api DELETE /session/disk1 && test "$CODE" = 200 &&
        user_api DELETE /session/disk2 && test "$CODE" = 200 &&
        for _ in $(seq 1 300); do [ -e "$dir" ] || break; sleep 0.1; done &&
        test ! -e "$dir" &&
        ! grep -q "$dir" /proc/mounts &&
        for _ in $(seq 1 50); do losetup "$loop" 2>/dev/null | grep -q "$dir" || break; sleep 0.1; done &&
        ! losetup "$loop" 2>/dev/null | grep -q "$dir"
'

test_done
