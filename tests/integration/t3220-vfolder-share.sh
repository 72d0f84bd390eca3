#!/bin/bash
test_description='virtual folders shared: invitations (accept, reject, cancel), project folders with per-member overrides, unshare, leave, trash; max_vfolder_count; usage and quota numbers'
. "$(dirname "$0")/../lib/test-lib.sh"

command -v jq >/dev/null 2>&1 || skip_all "needs jq (scripts/install-deps.sh test)"

declare -A AK SK EMAIL UID_OF

# make_user WHO: a user of domain default with policy vfpol, in vfproj for a and b
make_user() {
        local proj=
        [ "$1" = c ] || proj=', "projects": ["vfproj"]'
        EMAIL[$1]=vf-$1@walk.test
        as superadmin api POST /admin/users "{\"email\": \"${EMAIL[$1]}\", \"password\": \"walk-password-1\",
                \"role\": \"user\", \"resource_policy\": \"vfpol\"$proj}"
        [ "$CODE" = 201 ] || { cat "$TMP/out"; return 1; }
        AK[$1]=$(jq -r "[.. | objects | .access_key? // empty][0]" "$TMP/out")
        SK[$1]=$(jq -r "[.. | objects | .secret_key? // empty][0]" "$TMP/out")
        UID_OF[$1]=$(jq -r "[.. | objects | .id? // empty][0]" "$TMP/out")
        [ ${#SK[$1]} = 40 ] || { echo "no secret key in: $(cat "$TMP/out")"; return 1; }
}

# expect CODE: the last answer had that status
expect() {
        [ "$CODE" = "$1" ] || { echo "expected HTTP $1, got $CODE: $(cat "$TMP/out")"; return 1; }
}

# the directory of a folder: <state>/vfolders/<type>-<owner>/<hex 0-2>/<hex 2-4>/<hex 4->
folder_dir() { # TYPE OWNER ID
        local hex=${3//-/}
        echo "$MANAGER_STATE/vfolders/$1-$2/${hex:0:2}/${hex:2:2}/${hex:4}"
}

# allocated bytes under DIR (each inode once) and the number of entries
du_bytes() { find "$1" -mindepth 1 -printf '%i %b\n' | sort -u -k1,1 | awk '{ s += $2 } END { print s * 512 }'; }
du_files() { find "$1" -mindepth 1 | wc -l; }

# gone WHO REF: WHO gets 404 on the folder, and on its files once that route exists
gone() {
        as "$1" api GET "/folders/$2" && expect 404 || return 1
        as a api GET "/folders/$DATA_ID/files"
        [ "$CODE" = 501 ] && return 0 # the files routes are not on this branch
        as "$1" api GET "/folders/$2/files" && expect 404
}

# the pending invitation of WHO to folder NAME
inv_of() {
        as "$1" api GET /folders/invitations/list &&
                jq -r --arg n "$2" '.invitations[] | select(.vfolder_name == $n) | .id' "$TMP/out"
}

test_expect_success 'a policy, a project, users a and b in it, c outside' '
        start_manager &&
        AK[superadmin]=$BACKEND_ACCESS_KEY && SK[superadmin]=$BACKEND_SECRET_KEY &&
        as superadmin api POST /admin/keypair-policies "{\"name\": \"vfpol\"}" && expect 201 &&
        as superadmin api POST /admin/projects "{\"name\": \"vfproj\"}" && expect 201 &&
        make_user a && make_user b && make_user c
'

test_expect_success 'a makes a folder; b and c do not see it' '
        as a api POST /folders "{\"name\": \"data\"}" && expect 201 &&
        DATA_ID=$(jq -r .id "$TMP/out") && test "$(jq -r .user "$TMP/out")" = "${UID_OF[a]}" &&
        DATA_DIR=$(folder_dir user "${UID_OF[a]}" "$DATA_ID") && test -d "$DATA_DIR" &&
        gone b data && gone c "$DATA_ID"
'

test_expect_success 'invite: only the owner, users of its domain, not the owner, not twice' '
        as a api POST /folders/data/invite "{\"perm\": \"ro\", \"emails\": [\"${EMAIL[b]}\"]}" && expect 201 &&
        test "$(jq -c .invited_ids "$TMP/out")" = "[\"${EMAIL[b]}\"]" &&
        as a api POST /folders/data/invite "{\"perm\": \"rw\", \"user_ids\": [\"${UID_OF[c]}\"]}" && expect 201 &&
        as a api POST /folders/data/invite "{\"perm\": \"ro\", \"emails\": [\"${EMAIL[c]}\"]}" && expect 201 &&
        as a api POST /folders/data/invite "{\"perm\": \"ro\", \"emails\": [\"${EMAIL[a]}\"]}" && expect 400 &&
        as a api POST /folders/data/invite "{\"perm\": \"ro\", \"emails\": [\"nobody@walk.test\"]}" && expect 404 &&
        as a api POST /folders/data/invite "{\"perm\": \"xx\", \"emails\": [\"${EMAIL[b]}\"]}" && expect 400 &&
        as a api POST /folders/data/invite "{\"perm\": \"ro\"}" && expect 400 &&
        as b api POST /folders/data/invite "{\"perm\": \"ro\", \"emails\": [\"${EMAIL[c]}\"]}" && expect 404
'

test_expect_success 're-inviting a pending invitee updates its invitation' '
        as c api GET /folders/invitations/list && expect 200 &&
        test "$(jq ".invitations | length" "$TMP/out")" = 1 &&
        test "$(jq -r ".invitations[0].perm" "$TMP/out")" = ro &&
        test "$(jq -r ".invitations[0].inviter" "$TMP/out")" = "${EMAIL[a]}" &&
        test "$(jq -r ".invitations[0].invitee" "$TMP/out")" = "${EMAIL[c]}" &&
        test "$(jq -r ".invitations[0].vfolder_id" "$TMP/out")" = "$DATA_ID" &&
        test "$(jq -r ".invitations[0].state" "$TMP/out")" = pending &&
        as a api GET /folders/invitations/list-sent && expect 200 &&
        jq -e "[.invitations[] | select(.vfolder_name == \"data\") | .invitee] | sort == [\"${EMAIL[b]}\", \"${EMAIL[c]}\"]" "$TMP/out" &&
        as c api GET /folders/invitations/list-sent && expect 200 && jq -e ".invitations == []" "$TMP/out"
'

test_expect_success 'b accepts: it sees the folder read-only and may not rename, delete or invite' '
        INV_B=$(inv_of b data) && test -n "$INV_B" &&
        as c api POST /folders/invitations/accept "{\"inv_id\": \"$INV_B\"}" && expect 404 &&
        as b api POST /folders/invitations/accept "{\"inv_id\": \"$INV_B\"}" && expect 200 &&
        as b api POST /folders/invitations/accept "{\"inv_id\": \"$INV_B\"}" && expect 400 &&
        as a api GET "/folders/_/shared?vfolder_id=$DATA_ID" && expect 200 &&
        jq -e "[.shared[] | .shared_to.email] == [\"${EMAIL[b]}\"] and .shared[0].perm == \"ro\" and .shared[0].vfolder_name == \"data\"" "$TMP/out" &&
        as b api GET /folders/_/shared && expect 200 && jq -e ".shared == []" "$TMP/out" &&
        as b api GET /folders/invitations/list && test "$(jq ".invitations | length" "$TMP/out")" = 0 &&
        as b api GET /folders && expect 200 &&
        test "$(jq -r ".[] | select(.name == \"data\") | .permission" "$TMP/out")" = ro &&
        test "$(jq -r ".[] | select(.name == \"data\") | .is_owner" "$TMP/out")" = false &&
        as b api GET /folders/data && expect 200 &&
        as b api POST /folders/data/rename "{\"new_name\": \"mine\"}" && expect 403 &&
        as b api DELETE /folders/data && expect 403 &&
        as b api POST /folders/data/invite "{\"perm\": \"ro\", \"emails\": [\"${EMAIL[c]}\"]}" && expect 403 &&
        as a api POST /folders/data/invite "{\"perm\": \"rw\", \"emails\": [\"${EMAIL[b]}\"]}" && expect 409
'

test_expect_success 'c rejects; a invites again and cancels' '
        INV_C=$(inv_of c data) && test -n "$INV_C" &&
        as c api DELETE /folders/invitations/delete "{\"inv_id\": \"$INV_C\"}" && expect 200 &&
        test "$(jq -r .state "$TMP/out")" = rejected &&
        test -z "$(inv_of c data)" && gone c data &&
        as a api POST /folders/data/invite "{\"perm\": \"rw\", \"emails\": [\"${EMAIL[c]}\"]}" && expect 201 &&
        INV_C=$(inv_of c data) && test -n "$INV_C" &&
        as b api POST /folders/invitations/delete "{\"inv_id\": \"$INV_C\"}" && expect 404 &&
        as a api POST /folders/invitations/delete "{\"inv_id\": \"$INV_C\"}" && expect 200 &&
        test "$(jq -r .state "$TMP/out")" = canceled &&
        test -z "$(inv_of c data)" &&
        as c api POST /folders/invitations/accept "{\"inv_id\": \"$INV_C\"}" && expect 400 && gone c data
'

test_expect_success 'a name clash: c keeps its own "data" by name and reaches the shared one by id' '
        as c api POST /folders "{\"name\": \"data\"}" && expect 201 && C_DATA=$(jq -r .id "$TMP/out") &&
        as a api POST /folders/data/invite "{\"perm\": \"rw\", \"emails\": [\"${EMAIL[c]}\"]}" && expect 201 &&
        INV_C=$(inv_of c data) && test -n "$INV_C" &&
        as c api POST /folders/invitations/accept "{\"inv_id\": \"$INV_C\"}" && expect 200 &&
        as c api GET /folders/data && expect 200 && test "$(jq -r .id "$TMP/out")" = "$C_DATA" &&
        test "$(jq -r .is_owner "$TMP/out")" = true &&
        as c api GET "/folders/$DATA_ID" && expect 200 && test "$(jq -r .permission "$TMP/out")" = rw &&
        as c api GET /folders && test "$(jq "[.[] | select(.name == \"data\")] | length" "$TMP/out")" = 2
'

test_expect_success 'unshare takes a user'"'"'s access away; only the owner unshares' '
        as b api POST /folders/data/unshare "{\"emails\": [\"${EMAIL[c]}\"]}" && expect 403 &&
        as a api DELETE /folders/data/unshare "{\"emails\": [\"${EMAIL[c]}\"]}" && expect 200 &&
        gone c "$DATA_ID" &&
        as a api POST /folders/data/unshare "{\"emails\": [\"${EMAIL[c]}\"]}" && expect 400 &&
        as b api GET /folders/data && expect 200
'

test_expect_success 'leave: b drops the folder; the owner cannot leave' '
        as a api POST /folders/data/leave && expect 400 &&
        as b api POST /folders/data/leave && expect 200 && gone b data &&
        as b api POST /folders/data/leave && expect 404 &&
        as a api GET /folders/data && expect 200
'

test_expect_success 'trash makes it vanish for the invitee, restore brings it back' '
        as a api POST /folders/data/invite "{\"perm\": \"ro\", \"emails\": [\"${EMAIL[b]}\"]}" && expect 201 &&
        INV_B=$(inv_of b data) && as b api POST /folders/invitations/accept "{\"inv_id\": \"$INV_B\"}" &&
        expect 200 && as b api GET /folders/data && expect 200 &&
        as a api DELETE /folders/data && expect 200 && gone b data &&
        as b api GET /folders && test "$(jq "[.[] | select(.id == \"$DATA_ID\")] | length" "$TMP/out")" = 0 &&
        as a api POST /folders/data/restore && expect 200 && as b api GET /folders/data && expect 200
'

test_expect_success 'a trashed folder'"'"'s pending invitations are not listed nor accepted' '
        as a api POST /folders/data/invite "{\"perm\": \"ro\", \"emails\": [\"${EMAIL[c]}\"]}" && expect 201 &&
        INV_C=$(inv_of c data) && test -n "$INV_C" &&
        as a api DELETE /folders/data && expect 200 &&
        test -z "$(inv_of c data)" &&
        as c api POST /folders/invitations/accept "{\"inv_id\": \"$INV_C\"}" && expect 404 &&
        as a api POST /folders/data/restore && expect 200 && test -n "$(inv_of c data)"
'

test_expect_success 'project folders: members get its permission, share overrides it, unshare reverts' '
        as superadmin api POST /folders "{\"name\": \"pf\", \"group\": \"vfproj\", \"permission\": \"ro\"}" &&
        expect 201 && PF_ID=$(jq -r .id "$TMP/out") && PROJ_ID=$(jq -r .group "$TMP/out") &&
        as a api GET /folders/pf && expect 200 && test "$(jq -r .permission "$TMP/out")" = ro &&
        as b api GET /folders/pf && expect 200 && test "$(jq -r .permission "$TMP/out")" = ro &&
        gone c pf &&
        as a api POST /folders/pf/share "{\"permission\": \"rw\", \"emails\": [\"${EMAIL[a]}\"]}" && expect 403 &&
        as superadmin api POST /folders/pf/share "{\"permission\": \"rw\", \"emails\": [\"${EMAIL[c]}\"]}" &&
        expect 400 &&
        as superadmin api POST /folders/pf/share "{\"permission\": \"rw\", \"emails\": [\"${EMAIL[a]}\"]}" &&
        expect 200 &&
        as a api GET /folders/pf && test "$(jq -r .permission "$TMP/out")" = rw &&
        as b api GET /folders/pf && test "$(jq -r .permission "$TMP/out")" = ro &&
        as superadmin api POST /folders/pf/unshare "{\"emails\": [\"${EMAIL[a]}\"]}" && expect 200 &&
        as a api GET /folders/pf && expect 200 && test "$(jq -r .permission "$TMP/out")" = ro &&
        as superadmin api POST /folders/pf/invite "{\"perm\": \"ro\", \"emails\": [\"${EMAIL[c]}\"]}" &&
        expect 400 &&
        as superadmin api POST /folders/data/share "{\"permission\": \"rw\", \"emails\": [\"${EMAIL[a]}\"]}" &&
        expect 404 &&
        as a api POST /folders/data/share "{\"permission\": \"rw\", \"emails\": [\"${EMAIL[b]}\"]}" && expect 400 &&
        as a api POST /folders/pf/leave && expect 400
'

test_expect_success 'max_vfolder_count: 412 on the next create, fine again when raised' '
        as a api GET /folders && N=$(jq "[.[] | select(.is_owner)] | length" "$TMP/out") && test "$N" -ge 1 &&
        as superadmin api PATCH /admin/keypair-policies/vfpol "{\"max_vfolder_count\": $N}" && expect 200 &&
        as a api POST /folders "{\"name\": \"more\"}" && expect 412 &&
        as superadmin api PATCH /admin/keypair-policies/vfpol "{\"max_vfolder_count\": $((N + 1))}" &&
        expect 200 && as a api POST /folders "{\"name\": \"more\"}" && expect 201 &&
        as superadmin api PATCH /admin/keypair-policies/vfpol "{\"max_vfolder_count\": 0}" && expect 200
'

test_expect_success 'usage: allocated bytes and entries of files written straight into the folder' '
        as a api GET "/folders/_/usage?folder_name=data" && expect 200 &&
        test "$(jq .used_bytes "$TMP/out")" = 0 && test "$(jq .file_count "$TMP/out")" = 0 &&
        head -c 100000 /dev/urandom >"$DATA_DIR/big" && printf hello >"$DATA_DIR/small" &&
        mkdir -p "$DATA_DIR/sub/deeper" && head -c 20000 /dev/urandom >"$DATA_DIR/sub/deeper/f" &&
        ln "$DATA_DIR/big" "$DATA_DIR/sub/big-again" && ln -s /etc "$DATA_DIR/sub/etc" &&
        sync && WANT_BYTES=$(du_bytes "$DATA_DIR") && WANT_FILES=$(du_files "$DATA_DIR") &&
        test "$WANT_FILES" = 7 && test "$WANT_BYTES" -ge 120000 &&
        as a api GET "/folders/_/usage?folder_name=data" && expect 200 &&
        test "$(jq .used_bytes "$TMP/out")" = "$WANT_BYTES" && test "$(jq .file_count "$TMP/out")" = 7 &&
        as a api GET /folders/data && test "$(jq .used_bytes "$TMP/out")" = "$WANT_BYTES" &&
        test "$(jq .num_files "$TMP/out")" = 7 &&
        as b api GET "/folders/_/usage?folder_name=$DATA_ID" && expect 200 &&
        test "$(jq .used_bytes "$TMP/out")" = "$WANT_BYTES" &&
        as c api GET "/folders/_/usage?folder_name=$DATA_ID" && expect 404 &&
        as a api GET "/folders/_/usage" && expect 400
'

test_expect_success 'quota: the user scope'"'"'s limit from its keypair policy, use of all its folders' '
        SCOPE=$MANAGER_STATE/vfolders/user-${UID_OF[a]} &&
        as a api GET "/folders/_/quota?folder_name=data" && expect 200 &&
        test "$(jq -r .quota_scope_id "$TMP/out")" = "user:${UID_OF[a]}" &&
        test "$(jq .limit_bytes "$TMP/out")" = 0 &&
        test "$(jq .used_bytes "$TMP/out")" = "$(du_bytes "$SCOPE")" &&
        as superadmin api PATCH /admin/keypair-policies/vfpol "{\"max_quota_scope_size\": 1048576}" &&
        expect 200 &&
        as a api GET "/folders/_/quota" && expect 200 && test "$(jq .limit_bytes "$TMP/out")" = 1048576 &&
        test "$(jq -r .quota_scope_id "$TMP/out")" = "user:${UID_OF[a]}" &&
        as b api GET "/folders/_/quota?folder_name=$DATA_ID" && expect 200 &&
        test "$(jq .limit_bytes "$TMP/out")" = 1048576 &&
        test "$(jq -r .quota_scope_id "$TMP/out")" = "user:${UID_OF[a]}" &&
        test "$(jq .used_bytes "$TMP/out")" = "$(du_bytes "$SCOPE")"
'

test_expect_success 'quota: trashed folders still count; a project scope has the project'"'"'s limit' '
        as a api DELETE /folders/more && expect 200 &&
        head -c 30000 /dev/urandom >"$(folder_dir user "${UID_OF[a]}" "$(jq -r .id "$TMP/out")")/x" &&
        as a api GET "/folders/_/quota" && test "$(jq .used_bytes "$TMP/out")" = "$(du_bytes "$SCOPE")" &&
        as superadmin api PATCH /admin/projects/vfproj "{\"max_quota_scope_size\": 2000000}" && expect 200 &&
        head -c 50000 /dev/urandom >"$(folder_dir project "$PROJ_ID" "$PF_ID")/p" &&
        as a api GET "/folders/_/quota?group_id=vfproj" && expect 200 &&
        test "$(jq -r .quota_scope_id "$TMP/out")" = "project:$PROJ_ID" &&
        test "$(jq .limit_bytes "$TMP/out")" = 2000000 &&
        test "$(jq .used_bytes "$TMP/out")" = "$(du_bytes "$MANAGER_STATE/vfolders/project-$PROJ_ID")" &&
        as a api GET "/folders/_/quota?folder_name=pf" && expect 200 &&
        test "$(jq .limit_bytes "$TMP/out")" = 2000000 &&
        as c api GET "/folders/_/quota?group_id=$PROJ_ID" && expect 404 &&
        as c api GET "/folders/_/quota?folder_name=pf" && expect 404
'

test_expect_success 'quota: request-upload refuses what would go past the limit (412)' '
        as a api POST /folders/data/request-upload "{\"path\": \"huge\", \"size\": 2000000}" &&
        if [ "$CODE" = 501 ]; then
                echo "request-upload is not on this branch: checked by GET /folders/_/quota above"
        else
                expect 412 && grep -q 1048576 "$TMP/out" &&
                as a api POST /folders/data/request-upload "{\"path\": \"small2\", \"size\": 1000}" && expect 200
        fi
'

test_expect_success 'quota: an upload under way counts as its whole size, so uploads begun together cannot pass the limit (412)' '
        as a api GET "/folders/_/quota" && used=$(jq .used_bytes "$TMP/out") &&
        each=$(( (1048576 - used) * 2 / 3 )) &&
        as a api POST /folders/data/request-upload "{\"path\": \"part1\", \"size\": $each}" && expect 200 &&
        T1=$(jq -r .token "$TMP/out") && URL=$(jq -r .url "$TMP/out") &&
        as a api POST /folders/data/request-upload "{\"path\": \"part2\", \"size\": $each}" && expect 200 &&
        T2=$(jq -r .token "$TMP/out") &&
        code=$(curl -s -o "$TMP/tus" -w "%{http_code}" -X POST -H "Tus-Resumable: 1.0.0" \
                -H "Upload-Length: $each" "$URL?token=$T1") && test "$code" = 201 &&
        code=$(curl -s -o "$TMP/tus" -w "%{http_code}" -X POST -H "Tus-Resumable: 1.0.0" \
                -H "Upload-Length: $each" "$URL?token=$T2") && test "$code" = 412 &&
        grep -q "limited to 1048576 bytes" "$TMP/tus" &&
        # the first, never finished, counts in the scope as its whole size
        sleep 4 && as a api GET "/folders/_/quota" && test "$(jq .used_bytes "$TMP/out")" -ge $((used + each)) &&
        # and POST again resumes it: no second reservation
        code=$(curl -s -D "$TMP/tus.h" -o /dev/null -w "%{http_code}" -X POST -H "Tus-Resumable: 1.0.0" \
                -H "Upload-Length: $each" "$URL?token=$T1") && test "$code" = 201 &&
        grep -qi "^Upload-Offset: 0" "$TMP/tus.h"
'

test_done
