#!/bin/bash
test_description='folder clones as Backend.AI'"'"'s SDK 22.03 sends them: update-options cloneable, POST /folders/{name}/clone answered with bgtask_id, the copy (nested, empty, sparse, hard-linked files; symlinks as links, never followed; fifos left out), 4xx answers, quotas, failed clones leave nothing, the sweep of clones a manager left'
. "$(dirname "$0")/../lib/test-lib.sh"

for tool in jq sha256sum mkfifo; do
        command -v $tool >/dev/null 2>&1 || skip_all "needs $tool"
done

declare -A AK SK UID_OF EMAIL

# expect CODE: the last answer had that status
expect() {
        [ "$CODE" = "$1" ] || { echo "expected HTTP $1, got $CODE: $(cat "$TMP/out")"; return 1; }
}

# make_user WHO: a user of domain default with policy clpol, in project clproj
make_user() {
        EMAIL[$1]=cl-$1@walk.test
        as superadmin api POST /admin/users "{\"email\": \"${EMAIL[$1]}\", \"password\": \"walk-password-1\",
                \"role\": \"user\", \"resource_policy\": \"clpol\", \"projects\": [\"clproj\"]}"
        expect 201 || return 1
        AK[$1]=$(jq -r "[.. | objects | .access_key? // empty][0]" "$TMP/out")
        SK[$1]=$(jq -r "[.. | objects | .secret_key? // empty][0]" "$TMP/out")
        UID_OF[$1]=$(jq -r "[.. | objects | .id? // empty][0]" "$TMP/out")
}

# folder_dir TYPE OWNER ID: <state>/vfolders/<type>-<owner>/<hex 0-2>/<hex 2-4>/<hex 4->
folder_dir() {
        local hex=${3//-/}
        echo "$MANAGER_STATE/vfolders/$1-$2/${hex:0:2}/${hex:2:2}/${hex:4}"
}

# clone WHO SOURCE TARGET [HOST]: the body Backend.AI's SDK sends
# (VFolder(name).clone(target_name, target_host=None) with its defaults)
clone() {
        local host=null
        [ -n "${4:-}" ] && host="\"$4\""
        as "$1" api POST "/folders/$2/clone" \
                "{\"target_name\": \"$3\", \"target_host\": $host, \"usage_mode\": \"general\", \"permission\": \"rw\"}"
}

# task_end WHO TASK: wait for the task to end; its JSON in $TMP/task
task_end() {
        for _ in $(seq 1 300); do
                OUT=$TMP/task as "$1" api GET "/background-tasks/$2"
                [ "$CODE" = 200 ] || { echo "task $2: $CODE $(cat "$TMP/task")"; return 1; }
                [ "$(jq -r .status "$TMP/task")" != ongoing ] && return 0
                sleep 0.1
        done
        echo "task $2 did not end: $(cat "$TMP/task")"
        return 1
}

# sse WHO TASK: the task's event stream, until the manager closes it, into $TMP/sse
sse() {
        local path="/events/background-task?taskId=$2" h=()
        while IFS= read -r l; do h+=(-H "$l"); done < <("$BUILD/test-tool" sign GET "$path" \
                "${BACKEND_ENDPOINT#http://}" "${AK[$1]}" "${SK[$1]}" text/plain)
        curl -sN -m 60 "${h[@]}" "$BACKEND_ENDPOINT$path" >"$TMP/sse"
}

# listing DIR: every entry but fifos and sockets: path, type, mode, mtime, link target
listing() {
        (cd "$1" && find . -mindepth 1 ! -type p ! -type s -printf '%p %y %m %T@ %l\n' | sort)
}

# sums DIR: the sha256 of every regular file
sums() {
        (cd "$1" && find . -type f -print0 | sort -z | xargs -0 -r sha256sum)
}

test_expect_success 'a policy, a project, users a, b and c; a folder of a with files of every kind' '
        start_manager &&
        AK[superadmin]=$BACKEND_ACCESS_KEY && SK[superadmin]=$BACKEND_SECRET_KEY &&
        as superadmin api POST /admin/keypair-policies "{\"name\": \"clpol\"}" && expect 201 &&
        as superadmin api POST /admin/projects "{\"name\": \"clproj\"}" && expect 201 &&
        make_user a && make_user b && make_user c &&
        as a api POST /folders "{\"name\": \"src\"}" && expect 201 && SRC_ID=$(jq -r .id "$TMP/out") &&
        jq -e ".cloneable == false" "$TMP/out" &&
        SRC=$(folder_dir user "${UID_OF[a]}" "$SRC_ID") && test -d "$SRC" &&
        mkdir -p "$SRC/sub/deeper/deepest" "$SRC/emptydir" &&
        head -c 300000 /dev/urandom >"$SRC/big" && : >"$SRC/empty" && printf "hello\n" >"$SRC/sub/hello.txt" &&
        head -c 5000 /dev/urandom >"$SRC/sub/deeper/deepest/f" && chmod 751 "$SRC/sub/deeper/deepest/f" &&
        chmod 4755 "$SRC/sub/hello.txt" &&
        truncate -s 50M "$SRC/sparse" && printf tail >>"$SRC/sparse" &&
        ln "$SRC/big" "$SRC/sub/big-again" &&
        ln -s /etc/passwd "$SRC/sub/passwd" && ln -s ../big "$SRC/sub/rel" && ln -s /nowhere "$SRC/dangling" &&
        mkfifo "$SRC/pipe" &&
        touch -d "2001-02-03 04:05:06" "$SRC/sub/deeper" && sync
'

test_expect_success 'update-options: null changes nothing, cloneable round-trips into info and the list' '
        as a api POST /folders/src/update-options "{\"cloneable\": null, \"permission\": null}" && expect 200 &&
        jq -e ".cloneable == false" "$TMP/out" &&
        clone a src copy && expect 403 && grep -q "may not be cloned" "$TMP/out" &&
        test "$(db_sql "SELECT COUNT(*) FROM vfolders WHERE name = '"'"'copy'"'"'")" = 0 &&
        as a api POST /folders/src/update-options "{\"cloneable\": \"yes\"}" && expect 400 &&
        as b api POST /folders/src/update-options "{\"cloneable\": true}" && expect 404 &&
        as a api POST /folders/src/update-options "{\"cloneable\": true, \"permission\": null}" && expect 200 &&
        jq -e ".cloneable == true" "$TMP/out" &&
        as a api GET /folders/src && expect 200 && jq -e ".cloneable == true" "$TMP/out" &&
        as a api GET /folders && jq -e ".[] | select(.name == \"src\") | .cloneable == true" "$TMP/out" &&
        as a api POST /folders/src/update-options "{\"cloneable\": false}" && expect 200 &&
        as a api GET /folders/src && jq -e ".cloneable == false" "$TMP/out" &&
        as a api POST /folders/src/update-options "{\"cloneable\": true}" && expect 200 &&
        as a api POST /folders/src/update-options "{\"permission\": \"rw\"}" && expect 200 &&
        jq -e ".cloneable == true" "$TMP/out" &&
        as c api POST /folders "{\"name\": \"born\", \"host\": null, \"unmanaged_path\": null, \"group\": null,
                \"usage_mode\": \"general\", \"permission\": \"rw\", \"quota\": null, \"cloneable\": true}" &&
        expect 201 && jq -e ".cloneable == true" "$TMP/out" &&
        as c api GET /folders/born && jq -e ".cloneable == true" "$TMP/out"
'

test_expect_success 'clone: 201 at once with the new folder and bgtask_id; the task ends done (also on its event stream)' '
        clone a src copy && expect 201 &&
        jq -e ".name == \"copy\" and .host == \"local\" and .status == \"cloning\" and .cloneable == false and
                .is_owner and .user == \"${UID_OF[a]}\" and .ownership_type == \"user\" and
                (.bgtask_id | length) == 36 and (.id | length) == 36" "$TMP/out" &&
        COPY_ID=$(jq -r .id "$TMP/out") && TASK=$(jq -r .bgtask_id "$TMP/out") &&
        sse a "$TASK" && grep -q "^event: bgtask_done" "$TMP/sse" &&
        tail -n 3 "$TMP/sse" | grep -q "^event: server_close" &&
        task_end a "$TASK" && jq -e ".status == \"done\" and .kind == \"vfolder-clone\" and
                .result.vfolder_id == \"$COPY_ID\" and .result.source_id == \"$SRC_ID\" and .result.skipped == 1 and
                (.message | test(\"cloned folder .src. into .copy.\"))" "$TMP/task" &&
        OUT=$TMP/ctask as c api GET "/background-tasks/$TASK" && expect 404 &&
        as a api GET /folders/copy && expect 200 &&
        jq -e ".status == \"ready\" and .id == \"$COPY_ID\" and .cloneable == false and .usage_mode == \"general\"" "$TMP/out"
'

test_expect_success 'the clone has the same files and bytes; symlinks are links (never their targets), the fifo is left out' '
        COPY=$(folder_dir user "${UID_OF[a]}" "$COPY_ID") && test -d "$COPY" &&
        listing "$SRC" >"$TMP/want" && listing "$COPY" >"$TMP/got" &&
        sed "s/^\(\.\/sub\/hello.txt f\) 4755/\1 755/" "$TMP/want" >"$TMP/want.nosuid" &&
        test_cmp "$TMP/want.nosuid" "$TMP/got" &&
        sums "$SRC" >"$TMP/want.sum" && sums "$COPY" >"$TMP/got.sum" && test_cmp "$TMP/want.sum" "$TMP/got.sum" &&
        test -f "$COPY/empty" && test ! -s "$COPY/empty" && test -d "$COPY/emptydir" &&
        test -f "$COPY/sub/deeper/deepest/f" && test "$(stat -c %a "$COPY/sub/deeper/deepest/f")" = 751 &&
        test -L "$COPY/sub/passwd" && test "$(readlink "$COPY/sub/passwd")" = /etc/passwd &&
        test -L "$COPY/sub/rel" && test -L "$COPY/dangling" &&
        test ! -e "$COPY/pipe" &&
        test "$(stat -c %i "$COPY/big")" != "$(stat -c %i "$COPY/sub/big-again")" &&
        test "$(stat -c %s "$COPY/sparse")" = $((50 * 1024 * 1024 + 4)) &&
        test "$(stat -c %b "$COPY/sparse")" -lt 1024 &&
        if [ "$(id -u)" = 0 ]; then
                test -z "$(find "$COPY" -mindepth 1 ! -uid 1000)"
        fi &&
        as a api GET "/folders/copy/files?path=sub" && expect 200 &&
        jq -e "[.items[].name] | sort == [\"big-again\", \"deeper\", \"hello.txt\", \"passwd\", \"rel\"]" "$TMP/out"
'

test_expect_success 'clone: 4xx for every bad input' '
        as a api POST /folders/src/clone "{\"target_host\": null, \"usage_mode\": \"general\", \"permission\": \"rw\"}" &&
        expect 400 && grep -q "target_name" "$TMP/out" &&
        clone a src "../up" && expect 400 && clone a src ".ssh" && expect 400 &&
        clone a src src && expect 409 && clone a src copy && expect 409 &&
        clone a src other nohost && expect 400 && grep -q "target_host" "$TMP/out" &&
        as a api POST /folders/src/clone "{\"target_name\": \"x1\", \"usage_mode\": \"weird\"}" && expect 400 &&
        as a api POST /folders/src/clone "{\"target_name\": \"x1\", \"permission\": \"rx\"}" && expect 400 &&
        as a api POST /folders/src/clone "{\"target_name\": 5}" && expect 400 &&
        clone c src mine && expect 404 && clone c "$SRC_ID" mine && expect 404 &&
        clone a nosuch x1 && expect 404 &&
        as a api POST /folders/copy/clone "{\"target_name\": \"x1\"}" && expect 403 &&
        test "$(db_sql "SELECT COUNT(*) FROM vfolders WHERE name IN ('"'"'x1'"'"', '"'"'mine'"'"', '"'"'other'"'"')")" = 0
'

test_expect_success 'a user the folder is shared with (ro) clones it into a folder of its own; a project member clones a project folder' '
        as a api POST /folders/src/invite "{\"perm\": \"ro\", \"emails\": [\"${EMAIL[b]}\"]}" && expect 201 &&
        as b api GET /folders/invitations/list && INV=$(jq -r ".invitations[0].id" "$TMP/out") &&
        as b api POST /folders/invitations/accept "{\"inv_id\": \"$INV\"}" && expect 200 &&
        as b api POST /folders/src/clone "{\"target_name\": \"bcopy\", \"usage_mode\": \"model\", \"cloneable\": true}" &&
        expect 201 && jq -e ".user == \"${UID_OF[b]}\" and .cloneable == true and .usage_mode == \"model\"" "$TMP/out" &&
        BCOPY_ID=$(jq -r .id "$TMP/out") && task_end b "$(jq -r .bgtask_id "$TMP/out")" &&
        jq -e ".status == \"done\"" "$TMP/task" &&
        sums "$(folder_dir user "${UID_OF[b]}" "$BCOPY_ID")" >"$TMP/b.sum" && test_cmp "$TMP/want.sum" "$TMP/b.sum" &&
        as b api GET /folders/bcopy && jq -e ".is_owner and .status == \"ready\"" "$TMP/out" &&
        as a api GET /folders/bcopy && expect 404 &&
        as superadmin api POST /folders "{\"name\": \"pdata\", \"group\": \"clproj\"}" && expect 201 &&
        PDATA=$(folder_dir project "$(jq -r .group "$TMP/out")" "$(jq -r .id "$TMP/out")") &&
        printf "project\n" >"$PDATA/p.txt" &&
        clone c pdata pcopy && expect 403 &&
        as superadmin api POST /folders/pdata/update-options "{\"cloneable\": true}" && expect 200 &&
        clone c pdata pcopy && expect 201 && task_end c "$(jq -r .bgtask_id "$TMP/out")" &&
        jq -e ".status == \"done\"" "$TMP/task" &&
        as c api GET /folders/pcopy && expect 200 && jq -e ".user == \"${UID_OF[c]}\"" "$TMP/out" &&
        test "$(cat "$(folder_dir user "${UID_OF[c]}" "$(jq -r .id "$TMP/out")")/p.txt")" = project
'

# scope_used WHO: the bytes WHO's quota scope uses now
scope_used() { as "$1" api GET /folders/_/quota && jq .used_bytes "$TMP/out"; }

# gone_clone WHO NAME ID: the failed clone left no row, no folder, no directory
gone_clone() {
        as "$1" api GET "/folders/$2" && expect 404 &&
        as "$1" api GET /folders && jq -e "all(.[]; .name != \"$2\")" "$TMP/out" >/dev/null &&
        test "$(db_sql "SELECT COUNT(*) FROM vfolders WHERE id = '"'"'$3'"'"'")" = 0 &&
        test ! -e "$(folder_dir user "${UID_OF[$1]}" "$3")"
}

test_expect_success 'quota: a clone that does not fit fails at once, leaves nothing, and its name is free again' '
        SRC_BYTES=$(as a api GET /folders/src && jq .used_bytes "$TMP/out") && test "$SRC_BYTES" -gt 300000 &&
        USED=$(scope_used a) &&
        as superadmin api PATCH /admin/keypair-policies/clpol "{\"max_quota_scope_size\": $((USED + SRC_BYTES / 2))}" &&
        expect 200 &&
        clone a src qcopy && expect 201 && Q_ID=$(jq -r .id "$TMP/out") &&
        task_end a "$(jq -r .bgtask_id "$TMP/out")" &&
        jq -e ".status == \"failed\" and (.message | test(\"quota scope user:${UID_OF[a]} .*do not fit\"))" "$TMP/task" &&
        gone_clone a qcopy "$Q_ID"
'

test_expect_success 'quota: a copy that outgrows the room it measured (hard links become files) stops, and what it copied goes' '
        USED=$(scope_used a) &&
        as superadmin api PATCH /admin/keypair-policies/clpol "{\"max_quota_scope_size\": $((USED + SRC_BYTES + 100000))}" &&
        expect 200 &&
        clone a src qcopy && expect 201 && Q_ID=$(jq -r .id "$TMP/out") &&
        task_end a "$(jq -r .bgtask_id "$TMP/out")" &&
        jq -e ".status == \"failed\" and (.message | test(\"past the [0-9]+ bytes the quota leaves\"))" "$TMP/task" &&
        gone_clone a qcopy "$Q_ID" &&
        test "$(scope_used a)" = "$USED" &&
        as superadmin api PATCH /admin/keypair-policies/clpol "{\"max_quota_scope_size\": 0}" && expect 200 &&
        clone a src qcopy && expect 201 && task_end a "$(jq -r .bgtask_id "$TMP/out")" &&
        jq -e ".status == \"done\"" "$TMP/task"
'

test_expect_success 'max_vfolder_count applies to clones (412)' '
        as a api GET /folders && N=$(jq "[.[] | select(.is_owner)] | length" "$TMP/out") &&
        as superadmin api PATCH /admin/keypair-policies/clpol "{\"max_vfolder_count\": $N}" && expect 200 &&
        clone a src more && expect 412 &&
        as superadmin api PATCH /admin/keypair-policies/clpol "{\"max_vfolder_count\": 0}" && expect 200
'

test_expect_success 'a clone its manager left unfinished is removed by the sweep at the next start' '
        ORPHAN=$(cat /proc/sys/kernel/random/uuid) && NOW=$(($(date +%s) * 1000000)) &&
        db_sql "INSERT INTO vfolders(id, name, host, domain_name, ownership_type, owner_id, creator, usage_mode,
                permission, status, created_at, modified_at, clone_task) VALUES ('"'"'$ORPHAN'"'"', '"'"'orphan'"'"',
                '"'"'local'"'"', '"'"'default'"'"', '"'"'user'"'"', '"'"'${UID_OF[a]}'"'"', '"'"'x'"'"',
                '"'"'general'"'"', '"'"'wd'"'"', '"'"'cloning'"'"', $NOW, $NOW,
                '"'"'00000000-0000-4000-8000-000000000000'"'"')" &&
        ODIR=$(folder_dir user "${UID_OF[a]}" "$ORPHAN") && mkdir -p "$ODIR/half" && printf x >"$ODIR/half/f" &&
        as a api GET /folders && jq -e ".[] | select(.name == \"orphan\") | .status == \"cloning\"" "$TMP/out" &&
        as a api GET /folders/orphan && expect 404 &&
        as a api POST /folders "{\"name\": \"orphan\"}" && expect 409 &&
        restart_manager &&
        for _ in $(seq 1 50); do
                [ "$(db_sql "SELECT COUNT(*) FROM vfolders WHERE id = '"'"'$ORPHAN'"'"'")" = 0 ] && break
                sleep 0.1
        done &&
        gone_clone a orphan "$ORPHAN" &&
        as a api GET /folders/copy && expect 200
'

test_done
