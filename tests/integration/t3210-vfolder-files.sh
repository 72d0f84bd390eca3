#!/bin/bash
test_description='folder files: list, mkdir, rename, move and delete with each permission; tus uploads (resumed too), downloads with Range and as tar archives; tokens bound to their folder, path and lifetime; no path leaves its folder'
. "$(dirname "$0")/../lib/test-lib.sh"

for tool in jq sha256sum tar; do
        command -v $tool >/dev/null 2>&1 || skip_all "needs $tool"
done

TT=$BUILD/test-tool
declare -A AK SK

# as ROLE METHOD PATH [BODY]: api signed with ROLE's keypair.

make_user() { # ROLE EMAIL
        api POST /admin/users "{\"email\": \"$2\", \"password\": \"walk-password-1\", \"role\": \"user\", \"projects\": [\"default\"]}"
        [ "$CODE" = 201 ] || { cat "$TMP/out"; return 1; }
        AK[$1]=$(jq -r "[.. | objects | .access_key? // empty][0]" "$TMP/out")
        SK[$1]=$(jq -r "[.. | objects | .secret_key? // empty][0]" "$TMP/out")
}

# dir_of ID: the folder's directory on disk
dir_of() {
        local hex
        hex=$(echo "$1" | tr -d -)
        ls -d "$MANAGER_STATE"/vfolders/*/"${hex:0:2}/${hex:2:2}/${hex:4}"
}

# token ROLE FOLDER KIND BODY: request-KIND; sets TOKEN and URL
token() {
        api_as "$1" POST "/folders/$2/request-$3" "$4"
        [ "$CODE" = 200 ] || { cat "$TMP/out"; echo; return 1; }
        TOKEN=$(jq -r .token "$TMP/out") && URL=$(jq -r .url "$TMP/out")
}

# tus METHOD [curl args]: a tus request to the upload URL with TOKEN
tus() {
        local m=$1
        shift
        curl -sS -o "$TMP/tus.body" -D "$TMP/tus.h" -w '%{http_code}' -X "$m" -H "Tus-Resumable: 1.0.0" "$@" \
                "$URL?token=$TOKEN" >"$TMP/tus.code"
        TUS=$(cat "$TMP/tus.code")
        OFFSET=$(sed -n 's/^Upload-Offset: *\([0-9]*\).*/\1/ip' "$TMP/tus.h")
}

# patch FILE OFFSET LEN: PATCH LEN bytes of FILE from OFFSET
patch() {
        dd if="$1" bs=1M iflag=skip_bytes,count_bytes skip="$2" count="$3" status=none >"$TMP/chunk" &&
        tus PATCH -H "Content-Type: application/offset+octet-stream" -H "Upload-Offset: $2" \
                --data-binary @"$TMP/chunk"
}

test_expect_success 'a manager, a folder of user1, a read-only and a read-write project folder' '
        start_manager &&
        AK[admin]=$BACKEND_ACCESS_KEY && SK[admin]=$BACKEND_SECRET_KEY &&
        make_user u1 u1@walk.test && make_user u2 u2@walk.test &&
        api_as u1 POST /folders "{\"name\": \"mine\"}" && test "$CODE" = 201 &&
        MINE=$(jq -r .id "$TMP/out") && D=$(dir_of "$MINE") && test -d "$D" &&
        api_as admin POST /folders "{\"name\": \"pro\", \"group\": \"default\", \"permission\": \"ro\"}" &&
        test "$CODE" = 201 && PRO=$(jq -r .id "$TMP/out") &&
        api_as admin POST /folders "{\"name\": \"prw\", \"group\": \"default\", \"permission\": \"rw\"}" &&
        test "$CODE" = 201 && PRW=$(jq -r .id "$TMP/out")
'

test_expect_success 'hosts and types under Backend.AI'"'"'s SDK spellings too (_/all_hosts, _/allowed_types): the same answers' '
        OUT=$TMP/h1 api_as admin GET /folders/_/all-hosts && test "$CODE" = 200 &&
        OUT=$TMP/h2 api_as admin GET /folders/_/all_hosts && test "$CODE" = 200 &&
        test "$(jq -S "del(.volume_info[].usage)" "$TMP/h1")" = "$(jq -S "del(.volume_info[].usage)" "$TMP/h2")" &&
        OUT=$TMP/t1 api_as u1 GET /folders/_/allowed-types && test "$CODE" = 200 &&
        OUT=$TMP/t2 api_as u1 GET /folders/_/allowed_types && test "$CODE" = 200 && cmp "$TMP/t1" "$TMP/t2" &&
        jq -e "index(\"user\")" "$TMP/t2" >/dev/null &&
        api_as u1 GET /folders/_/all_hosts && test "$CODE" = 403
'

test_expect_success 'mkdir, list, rename, move, delete in the own folder' '
        api_as u1 POST /folders/mine/mkdir "{\"path\": \"a/b/c\", \"parents\": true}" && test "$CODE" = 201 &&
        api_as u1 POST /folders/mine/mkdir "{\"path\": \"a/b\"}" && test "$CODE" = 409 &&
        api_as u1 POST /folders/mine/mkdir "{\"path\": [\"a/b\", \"x\"], \"exist_ok\": true}" && test "$CODE" = 201 &&
        api_as u1 POST /folders/mine/mkdir "{\"path\": \"no/such\"}" && test "$CODE" = 404 &&
        echo hello >"$D/a/f.txt" &&
        api_as u1 GET "/folders/mine/files?path=a" && test "$CODE" = 200 &&
        test "$(jq -r "[.items[] | .name + \":\" + .type] | sort | join(\",\")" "$TMP/out")" = "b:DIRECTORY,f.txt:FILE" &&
        test "$(jq -r ".items[] | select(.name == \"f.txt\") | .size" "$TMP/out")" = 6 &&
        api_as u1 GET /folders/mine/files "{\"path\": \"a/b\"}" && test "$CODE" = 200 &&
        test "$(jq -r ".items[0].name" "$TMP/out")" = c &&
        api_as u1 POST /folders/mine/rename-file "{\"target_path\": \"a/f.txt\", \"new_name\": \"g.txt\"}" &&
        test "$CODE" = 200 && test -f "$D/a/g.txt" &&
        api_as u1 POST /folders/mine/rename-file "{\"target_path\": \"a/g.txt\", \"new_name\": \"../g.txt\"}" &&
        test "$CODE" = 400 &&
        api_as u1 POST /folders/mine/move-file "{\"src\": \"a/g.txt\", \"dst\": \"x\"}" && test "$CODE" = 200 &&
        test -f "$D/x/g.txt" &&
        api_as u1 POST /folders/mine/move-file "{\"src\": \"x/g.txt\", \"dst\": \"a/b/h.txt\"}" && test "$CODE" = 200 &&
        test -f "$D/a/b/h.txt" &&
        api_as u1 DELETE /folders/mine/delete-files "{\"files\": [\"a\"]}" && test "$CODE" = 409 &&
        api_as u1 DELETE /folders/mine/delete-files "{\"files\": [\"a\", \"x\"], \"recursive\": true}" &&
        test "$CODE" = 200 && test ! -e "$D/a" && test ! -e "$D/x" &&
        api_as u1 POST /folders/mine/delete-files "{\"files\": [\"a\"]}" && test "$CODE" = 404
'

test_expect_success 'Backend.AI'"'"'s client shapes: "files" as JSON text beside items, numFiles, rename_file, delete_files, DELETE /folders {id}' '
        api_as u1 POST /folders/mine/mkdir "{\"path\": \"bai\"}" && test "$CODE" = 201 &&
        printf 12345 >"$D/bai/five.bin" && chmod 640 "$D/bai/five.bin" && touch -d @1700000000 "$D/bai/five.bin" &&
        api_as u1 GET /folders/mine/files "{\"path\": \"bai\"}" && test "$CODE" = 200 &&
        jq -r .files "$TMP/out" | jq -e "length == 1 and .[0].filename == \"five.bin\" and .[0].size == 5 and .[0].mode == \"-rw-r-----\" and (.[0].mtime | floor) == 1700000000" &&
        api_as u1 GET /folders/mine && test "$CODE" = 200 &&
        jq -e ".numFiles == .num_files and .numFiles >= 1" "$TMP/out" &&
        api_as u1 POST /folders/mine/rename_file "{\"target_path\": \"bai/five.bin\", \"new_name\": \"5.bin\"}" &&
        test "$CODE" = 200 && test -f "$D/bai/5.bin" &&
        api_as u1 DELETE /folders/mine/delete_files "{\"files\": [\"bai\"], \"recursive\": true}" &&
        test "$CODE" = 200 && test ! -e "$D/bai" &&
        api_as u1 POST /folders "{\"name\": \"bye\"}" && test "$CODE" = 201 && BYE=$(jq -r .id "$TMP/out") &&
        api_as u2 DELETE /folders "{\"id\": \"$BYE\"}" && test "$CODE" = 404 &&
        api_as u1 DELETE /folders "{}" && test "$CODE" = 400 &&
        api_as u1 DELETE /folders "{\"id\": \"$BYE\"}" && test "$CODE" = 200 && jq -e ".status == \"delete-pending\"" "$TMP/out" &&
        api_as u1 GET /folders/invitations/list_sent && test "$CODE" = 200 &&
        api_as u1 POST /folders/mine/update-options "{\"permission\": \"ro\", \"cloneable\": null}" && test "$CODE" = 200 &&
        test "$(db_sql "SELECT permission FROM vfolders WHERE name = '"'"'mine'"'"'")" = ro &&
        api_as u1 POST /folders/mine/update-options "{\"permission\": \"rx\"}" && test "$CODE" = 400 &&
        api_as u1 POST /folders/mine/update-options "{\"cloneable\": true}" && test "$CODE" = 200 &&
        jq -e ".cloneable == true" "$TMP/out" && api_as u1 GET /folders/mine && jq -e ".cloneable == true" "$TMP/out" &&
        api_as u1 POST /folders/mine/update-options "{\"cloneable\": 1}" && test "$CODE" = 400 &&
        api_as u1 POST /folders/mine/update-options "{\"cloneable\": false}" && test "$CODE" = 200 &&
        jq -e ".cloneable == false" "$TMP/out" &&
        api_as u2 POST /folders/mine/update-options "{\"permission\": \"rw\"}" && test "$CODE" = 404 &&
        api_as u1 POST /folders/mine/update-options "{\"permission\": \"rw\"}" && test "$CODE" = 200
'

test_expect_success 'permissions: none (404), ro lists only, rw changes but does not delete' '
        api_as u2 GET "/folders/$MINE/files" && test "$CODE" = 404 &&
        api_as u2 POST "/folders/$MINE/mkdir" "{\"path\": \"z\"}" && test "$CODE" = 404 &&
        api_as admin POST /folders/pro/mkdir "{\"path\": \"d\"}" && test "$CODE" = 201 &&
        api_as u2 GET /folders/pro/files && test "$CODE" = 200 && test "$(jq -r ".items[0].name" "$TMP/out")" = d &&
        api_as u2 POST /folders/pro/mkdir "{\"path\": \"e\"}" && test "$CODE" = 403 &&
        api_as u2 POST /folders/pro/rename-file "{\"target_path\": \"d\", \"new_name\": \"e\"}" && test "$CODE" = 403 &&
        api_as u2 POST /folders/pro/move-file "{\"src\": \"d\", \"dst\": \"e\"}" && test "$CODE" = 403 &&
        api_as u2 POST /folders/pro/delete-files "{\"files\": [\"d\"]}" && test "$CODE" = 403 &&
        api_as u2 POST /folders/pro/request-upload "{\"path\": \"f\", \"size\": 1}" && test "$CODE" = 403 &&
        api_as u2 POST /folders/prw/mkdir "{\"path\": \"e\"}" && test "$CODE" = 201 &&
        api_as u2 POST /folders/prw/rename-file "{\"target_path\": \"e\", \"new_name\": \"f\"}" && test "$CODE" = 200 &&
        api_as u2 POST /folders/prw/move-file "{\"src\": \"f\", \"dst\": \"g\"}" && test "$CODE" = 200 &&
        api_as u2 POST /folders/prw/delete-files "{\"files\": [\"g\"]}" && test "$CODE" = 403 &&
        api_as admin POST /folders/prw/delete-files "{\"files\": [\"g\"]}" && test "$CODE" = 200
'

test_expect_success 'a tus upload in chunks: OPTIONS, create, HEAD, PATCH, 409 on a wrong offset' '
        head -c 3000000 /dev/urandom >"$TMP/big" &&
        token u1 mine upload "{\"path\": \"up/big.bin\", \"size\": 3000000}" &&
        curl -sS -X OPTIONS -D "$TMP/opt.h" -o /dev/null "$URL" && grep -qi "^Tus-Version: 1.0.0" "$TMP/opt.h" &&
        grep -qi "^Tus-Extension: creation" "$TMP/opt.h" &&
        tus POST -H "Upload-Length: 5" && test "$TUS" = 400 &&
        tus POST -H "Upload-Length: 3000000" && test "$TUS" = 201 && grep -qi "^Location: " "$TMP/tus.h" &&
        tus HEAD && test "$TUS" = 200 && test "$OFFSET" = 0 && grep -qi "^Cache-Control: no-store" "$TMP/tus.h" &&
        patch "$TMP/big" 0 1000000 && test "$TUS" = 204 && test "$OFFSET" = 1000000 &&
        patch "$TMP/big" 0 1000000 && test "$TUS" = 409 &&
        tus PATCH -H "Content-Type: text/plain" -H "Upload-Offset: 1000000" --data x && test "$TUS" = 415 &&
        test ! -e "$D/up/big.bin" &&
        patch "$TMP/big" 1000000 1000000 && test "$TUS" = 204 &&
        patch "$TMP/big" 2000000 1000000 && test "$TUS" = 204 && test "$OFFSET" = 3000000 &&
        test "$(sha256sum <"$D/up/big.bin")" = "$(sha256sum <"$TMP/big")" &&
        test -z "$(find "$MANAGER_STATE"/vfolders/*/.uploads -type f)"
'

test_expect_success 'tus without the creation step (Backend.AI'"'"'s aiotusclient): HEAD says offset 0, a PATCH at 0 makes the upload' '
        head -c 1500000 /dev/urandom >"$TMP/nocreate" &&
        token u1 mine upload "{\"path\": \"nocreate.bin\", \"size\": 1500000}" &&
        tus HEAD && test "$TUS" = 200 && test "$OFFSET" = 0 &&
        grep -qi "^Upload-Length: 1500000" "$TMP/tus.h" &&
        patch "$TMP/nocreate" 500000 500000 && test "$TUS" = 404 &&
        patch "$TMP/nocreate" 0 1000000 && test "$TUS" = 204 && test "$OFFSET" = 1000000 &&
        tus HEAD && test "$OFFSET" = 1000000 &&
        patch "$TMP/nocreate" 1000000 500000 && test "$TUS" = 204 &&
        test "$(sha256sum <"$D/nocreate.bin")" = "$(sha256sum <"$TMP/nocreate")" &&
        token u1 mine upload "{\"path\": \"empty.txt\", \"size\": 0}" &&
        tus PATCH -H "Content-Type: application/offset+octet-stream" -H "Upload-Offset: 0" --data-binary "" &&
        test "$TUS" = 204 && test -f "$D/empty.txt" && test ! -s "$D/empty.txt"
'

test_expect_success 'an interrupted upload resumes with a new token, identical at the end' '
        head -c 2500000 /dev/urandom >"$TMP/res" &&
        token u1 mine upload "{\"path\": \"res.bin\", \"size\": 2500000}" &&
        tus POST -H "Upload-Length: 2500000" && test "$TUS" = 201 &&
        patch "$TMP/res" 0 1000000 && test "$TUS" = 204 &&
        token u1 mine upload "{\"path\": \"res.bin\", \"size\": 2500000}" &&
        tus POST -H "Upload-Length: 2500000" && test "$TUS" = 201 && test "$OFFSET" = 1000000 &&
        tus HEAD && test "$OFFSET" = 1000000 &&
        patch "$TMP/res" 1000000 1500000 && test "$TUS" = 204 &&
        test "$(sha256sum <"$D/res.bin")" = "$(sha256sum <"$TMP/res")"
'

test_expect_success 'downloads: whole, by Range (206), past the end (416)' '
        token u1 mine download "{\"path\": \"up/big.bin\"}" &&
        curl -sS -o "$TMP/dl" -D "$TMP/dl.h" "$URL?token=$TOKEN" && cmp "$TMP/dl" "$TMP/big" &&
        grep -qi "^Accept-Ranges: bytes" "$TMP/dl.h" && grep -qi "^Content-Disposition: .*big.bin" "$TMP/dl.h" &&
        test "$(curl -sS -o "$TMP/part" -D "$TMP/part.h" -w "%{http_code}" -H "Range: bytes=100-199" "$URL?token=$TOKEN")" = 206 &&
        cmp "$TMP/part" <(dd if="$TMP/big" bs=1 skip=100 count=100 status=none) &&
        grep -qi "^Content-Range: bytes 100-199/3000000" "$TMP/part.h" &&
        test "$(curl -sS -o "$TMP/part" -w "%{http_code}" -H "Range: bytes=-10" "$URL?token=$TOKEN")" = 206 &&
        cmp "$TMP/part" <(tail -c 10 "$TMP/big") &&
        test "$(curl -sS -o /dev/null -D "$TMP/416.h" -w "%{http_code}" -H "Range: bytes=3000000-" "$URL?token=$TOKEN")" = 416 &&
        grep -qi "^Content-Range: bytes \*/3000000" "$TMP/416.h"
'

test_expect_success 'a directory downloads as a tar with its content' '
        mkdir -p "$D/tree/sub" && echo one >"$D/tree/one" && echo two >"$D/tree/sub/two" &&
        ln -s one "$D/tree/link" &&
        token u1 mine download "{\"path\": \"tree\"}" &&
        curl -sS -o "$TMP/tree.tar" -D "$TMP/tar.h" "$URL?token=$TOKEN" && grep -qi "tree.tar" "$TMP/tar.h" &&
        mkdir "$TMP/x" && tar -xf "$TMP/tree.tar" -C "$TMP/x" &&
        test "$(cat "$TMP/x/tree/one")" = one && test "$(cat "$TMP/x/tree/sub/two")" = two &&
        test "$(readlink "$TMP/x/tree/link")" = one &&
        token u1 mine download "{\"path\": \"res.bin\", \"archive\": true}" &&
        curl -sS "$URL?token=$TOKEN" | tar -xO res.bin | cmp - "$TMP/res"
'

test_expect_success 'tokens: bound to folder and path, tamper-proof, expiring, for their operation' '
        api_as admin POST /folders/prw/mkdir "{\"path\": \"secret\"}" && test "$CODE" = 201 &&
        token u1 mine download "{\"path\": \"res.bin\"}" && T1=$TOKEN &&
        http GET "/folders/_/download?token=${T1%.*}.AAAA" && test "$HTTP_STATUS" = 403 &&
        P=$(echo "${T1%.*}" | tr "A-Za-z" "B-ZAb-za") &&
        http GET "/folders/_/download?token=$P.${T1#*.}" && test "$HTTP_STATUS" = 403 &&
        http GET "/folders/_/download" && test "$HTTP_STATUS" = 403 &&
        http GET "/folders/_/upload?token=$T1" -H "Tus-Resumable: 1.0.0" && test "$HTTP_STATUS" = 403 &&
        token u1 mine download "{\"path\": \"res.bin\", \"ttl\": 1}" && sleep 2 &&
        http GET "/folders/_/download?token=$TOKEN" && test "$HTTP_STATUS" = 403 && grep -q expired "$HTTP_BODY" &&
        token u1 mine download "{\"path\": \"nope\", \"ttl\": 100000}" 2>/dev/null; test "$CODE" = 400 &&
        api_as u1 POST /folders/prw/request-download "{\"path\": \"secret\"}" && test "$CODE" = 200 &&
        api_as u1 POST /folders/pro/request-download "{\"path\": \"d\"}" && test "$CODE" = 200
'

test_expect_success 'paths never leave the folder: .., absolute, symlinks planted inside' '
        echo outside >"$TMP/outside.txt" && mkdir -p "$TMP/outdir" && echo o >"$TMP/outdir/o" &&
        ln -s "$TMP/outside.txt" "$D/evil" && ln -s "$TMP/outdir" "$D/evildir" && ln -s ../../../.. "$D/upper" &&
        api_as u1 GET "/folders/mine/files?path=../" && test "$CODE" = 400 &&
        api_as u1 GET "/folders/mine/files?path=evildir" && test "$CODE" = 403 &&
        api_as u1 GET "/folders/mine/files?path=upper" && test "$CODE" = 403 &&
        api_as u1 GET "/folders/mine/files?path=/etc" && test "$CODE" = 404 &&
        api_as u1 POST /folders/mine/mkdir "{\"path\": \"evildir/new\"}" && test "$CODE" = 403 && test ! -e "$TMP/outdir/new" &&
        api_as u1 POST /folders/mine/move-file "{\"src\": \"res.bin\", \"dst\": \"evildir/x\"}" && test "$CODE" = 403 &&
        api_as u1 POST /folders/mine/delete-files "{\"files\": [\"evildir/o\"]}" && test "$CODE" = 403 &&
        test -f "$TMP/outdir/o" &&
        api_as u1 POST /folders/mine/delete-files "{\"files\": [\"evildir\"], \"recursive\": true}" && test "$CODE" = 200 &&
        test -f "$TMP/outdir/o" && test ! -e "$D/evildir" &&
        api_as u1 POST /folders/mine/request-download "{\"path\": \"../../x\"}" && test "$CODE" = 400 &&
        token u1 mine download "{\"path\": \"evil\"}" &&
        test "$(curl -sS -o "$TMP/evil" -w "%{http_code}" "$URL?token=$TOKEN")" = 403 && ! grep -q outside "$TMP/evil" &&
        token u1 mine download "{\"path\": \"\", \"archive\": true}" &&
        curl -sS -o "$TMP/all.tar" "$URL?token=$TOKEN" && tar -tvf "$TMP/all.tar" >"$TMP/all.lst" &&
        grep -q "mine/evil -> " "$TMP/all.lst" && ! tar -xOf "$TMP/all.tar" 2>/dev/null | grep -q outside &&
        token u1 mine upload "{\"path\": \"up/x\", \"size\": 3}" &&
        tus POST -H "Upload-Length: 3" && test "$TUS" = 201 &&
        rm -rf "$D/up" && ln -s "$TMP/outdir" "$D/up" &&
        printf abc >"$TMP/abc" && patch "$TMP/abc" 0 3 && test "$TUS" = 403 && test ! -e "$TMP/outdir/x"
'

test_expect_success 'a partial upload left alone past vfolder_upload_keep is removed; one still growing is kept' '
        echo "vfolder_upload_keep = \"3s\"" >"$TMP/keep.conf" &&
        restart_manager --config "$TMP/keep.conf" &&
        head -c 1000000 /dev/urandom >"$TMP/part" &&
        token u1 mine upload "{\"path\": \"left.bin\", \"size\": 1000000}" && LEFT=$TOKEN &&
        tus POST -H "Upload-Length: 1000000" && test "$TUS" = 201 &&
        patch "$TMP/part" 0 100000 && test "$TUS" = 204 &&
        token u1 mine upload "{\"path\": \"live.bin\", \"size\": 1000000}" &&
        tus POST -H "Upload-Length: 1000000" && test "$TUS" = 201 &&
        test "$(find "$MANAGER_STATE"/vfolders/*/.uploads -type f -size 100000c | wc -l)" = 1 &&
        for i in 1 2 3 4 5 6 7; do
                patch "$TMP/part" $((i * 100000 - 100000)) 100000 && test "$TUS" = 204 || return 1
                sleep 1
        done &&
        test "$(find "$MANAGER_STATE"/vfolders/*/.uploads -type f | wc -l)" = 1 &&
        tus HEAD && test "$TUS" = 200 && test "$OFFSET" = 700000 &&
        grep -q "removed a partial upload of 100000 bytes" "$MANAGER_LOG" &&
        TOKEN=$LEFT && tus HEAD && test "$TUS" = 200 && test "$OFFSET" = 0 &&
        tus POST -H "Upload-Length: 1000000" && test "$TUS" = 201 && test "$OFFSET" = 0
'

test_done
