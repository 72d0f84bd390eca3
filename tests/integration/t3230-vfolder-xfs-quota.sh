#!/bin/bash
test_description='virtual folder quotas enforced by XFS project quotas: the scope directory gets a project id and the policy'"'"'s hard limit; a write past it fails with EDQUOT; a raised limit follows'
. "$(dirname "$0")/../lib/test-lib.sh"

command -v jq >/dev/null 2>&1 || skip_all "needs jq (scripts/install-deps.sh test)"
[ "$(id -u)" = 0 ] || skip_all "needs root (a loop device and mount)"
for tool in mkfs.xfs losetup mount umount; do
        command -v $tool >/dev/null 2>&1 || skip_all "needs $tool (apt-get install -y xfsprogs)"
done

# An XFS filesystem in a file, mounted with project quotas; the manager's
# state directory (so the default storage host `local`) lives on it.
MNT=$TMP/xfs
truncate -s 320M "$TMP/xfs.img" && mkfs.xfs -q -f "$TMP/xfs.img" >"$TMP/mkfs.out" 2>&1 ||
        skip_all "mkfs.xfs failed: $(head -c 300 "$TMP/mkfs.out")"
mkdir -p "$MNT"
if ! mount -o loop,prjquota "$TMP/xfs.img" "$MNT" >"$TMP/mount.out" 2>&1; then
        why=$(dmesg 2>/dev/null | grep -E 'XFS \(loop[0-9]+\)' | tail -n 1 | sed 's/^\[[^]]*\] *//')
        skip_all "this kernel cannot mount XFS with prjquota (${why:-$(head -n 1 "$TMP/mount.out")}): quotas are accounting only here"
fi
test_at_exit "umount -l '$MNT'"

declare -A AK SK

expect() {
        [ "$CODE" = "$1" ] || { echo "expected HTTP $1, got $CODE: $(cat "$TMP/out")"; return 1; }
}

folder_dir() { # TYPE OWNER ID
        local hex=${3//-/}
        echo "$MANAGER_STATE/vfolders/$1-$2/${hex:0:2}/${hex:2:2}/${hex:4}"
}

test_expect_success 'a manager whose storage host is on XFS with prjquota; a user with a 4 MiB scope' '
        MANAGER_STATE=$MNT/state start_manager &&
        AK[superadmin]=$BACKEND_ACCESS_KEY && SK[superadmin]=$BACKEND_SECRET_KEY &&
        as superadmin api POST /admin/keypair-policies "{\"name\": \"xq\", \"max_quota_scope_size\": 4194304}" &&
        expect 201 &&
        as superadmin api POST /admin/users "{\"email\": \"xq@walk.test\", \"password\": \"walk-password-1\",
                \"role\": \"user\", \"resource_policy\": \"xq\"}" && expect 201 &&
        AK[u]=$(jq -r "[.. | objects | .access_key? // empty][0]" "$TMP/out") &&
        SK[u]=$(jq -r "[.. | objects | .secret_key? // empty][0]" "$TMP/out") &&
        U=$(jq -r "[.. | objects | .id? // empty][0]" "$TMP/out")
'

test_expect_success 'creating a folder gives its scope directory an XFS project id and the limit' '
        as u api POST /folders "{\"name\": \"q\"}" && expect 201 && Q=$(folder_dir user "$U" "$(jq -r .id "$TMP/out")") &&
        test -d "$Q" &&
        PROJID=$(xfs_io -c "lsproj" "$MANAGER_STATE/vfolders/user-$U" | sed -n "s/.*projid = //p") &&
        test -n "$PROJID" && test "$PROJID" -gt 0 &&
        xfs_quota -x -c "report -p -n -b" "$MNT" >"$TMP/report" && cat "$TMP/report" &&
        test "$(awk -v id="#$PROJID" "\$1 == id { print \$4 }" "$TMP/report")" = 4096
'

test_expect_success 'a process writing into the folder stops at the limit with EDQUOT' '
        test_must_fail dd if=/dev/zero of="$Q/big" bs=1M count=8 2>"$TMP/dd.err" &&
        cat "$TMP/dd.err" && grep -q "Disk quota exceeded" "$TMP/dd.err" &&
        test "$(stat -c %s "$Q/big")" -le 4194304 && rm -f "$Q/big"
'

test_expect_success 'a raised limit reaches the filesystem on the next create' '
        as superadmin api PATCH /admin/keypair-policies/xq "{\"max_quota_scope_size\": 16777216}" && expect 200 &&
        as u api POST /folders "{\"name\": \"q2\"}" && expect 201 &&
        dd if=/dev/zero of="$Q/big" bs=1M count=8 && rm -f "$Q/big"
'

test_done
