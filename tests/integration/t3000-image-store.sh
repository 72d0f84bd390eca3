#!/bin/bash
test_description='agent image store: busybox as docker save and OCI layout tars; import, ls, inspect, rm, gc, runc'
. "$(dirname "$0")/../lib/test-lib.sh"

# No manager and no database: the store is local to the agent.
[ "$(id -u)" -eq 0 ] || skip_all 'needs root (unpacked layers keep their owners)'
[ -x /bin/busybox ] || skip_all 'needs busybox-static (/bin/busybox)'
# runc, and overlayfs mounts (not in every container a CI runs in)
if command -v runc >/dev/null 2>&1 && mkdir -p "$TMP/probe/l" "$TMP/probe/u" "$TMP/probe/w" "$TMP/probe/m" &&
        mount -t overlay overlay -o "lowerdir=$TMP/probe/l,upperdir=$TMP/probe/u,workdir=$TMP/probe/w" \
                "$TMP/probe/m" 2>/dev/null; then
        umount "$TMP/probe/m"
        test_set_prereq RUNC
fi

STORE=$TMP/store
img() {
        "$TESSERA" agent image --store "$STORE" "$@"
}

sha256() {
        sha256sum "$1" | cut -d" " -f1
}

# descriptor MEDIA_TYPE FILE: an OCI descriptor of FILE
descriptor() {
        printf '{"mediaType":"%s","digest":"sha256:%s","size":%s}' "$1" "$(sha256 "$2")" "$(stat -c %s "$2")"
}

# The image: one layer (bin/busybox, bin/sh and bin/echo as links to it),
# its config and, around them, a docker save archive (the layer as it is)
# and an OCI layout (the layer gzipped).  Sets DIFF_ID and CONFIG.
make_image() {
        local b=$TMP/build oci=application/vnd.oci.image
        mkdir -p "$b/rootfs/bin" "$b/save/layer0" "$b/oci/blobs/sha256" &&
                cp /bin/busybox "$b/rootfs/bin/busybox" &&
                ln -s busybox "$b/rootfs/bin/sh" && ln -s busybox "$b/rootfs/bin/echo" &&
                tar --numeric-owner --owner=0 --group=0 --mtime=@1700000000 -C "$b/rootfs" -cf "$b/layer.tar" . &&
                DIFF_ID=$(sha256 "$b/layer.tar") &&
                printf '{"architecture":"amd64","os":"linux","created":"2024-01-02T03:04:05Z",%s,%s}' \
                        '"config":{"Env":["PATH=/bin"],"Cmd":["/bin/sh"],"Labels":{"test":"t3000"}}' \
                        "\"rootfs\":{\"type\":\"layers\",\"diff_ids\":[\"sha256:$DIFF_ID\"]}" >"$b/config.json" &&
                CONFIG=$(sha256 "$b/config.json") &&

                cp "$b/layer.tar" "$b/save/layer0/layer.tar" &&
                cp "$b/config.json" "$b/save/$CONFIG.json" &&
                printf '[{"Config":"%s.json","RepoTags":["busybox:t3000"],"Layers":["layer0/layer.tar"]}]' \
                        "$CONFIG" >"$b/save/manifest.json" &&
                tar -C "$b/save" -cf "$TMP/busybox-save.tar" . &&

                gzip -n -c "$b/layer.tar" >"$b/layer.tar.gz" &&
                printf '{"schemaVersion":2,"mediaType":"%s","config":%s,"layers":[%s]}' "$oci.manifest.v1+json" \
                        "$(descriptor "$oci.config.v1+json" "$b/config.json")" \
                        "$(descriptor "$oci.layer.v1.tar+gzip" "$b/layer.tar.gz")" >"$b/manifest.json" &&
                for f in layer.tar.gz config.json manifest.json; do
                        cp "$b/$f" "$b/oci/blobs/sha256/$(sha256 "$b/$f")" || return 1
                done &&
                echo '{"imageLayoutVersion":"1.0.0"}' >"$b/oci/oci-layout" &&
                printf '{"schemaVersion":2,"manifests":[%s]}' \
                        "$(descriptor "$oci.manifest.v1+json" "$b/manifest.json" |
                                sed 's/}$/,"annotations":{"org.opencontainers.image.ref.name":"localhost\/busybox:oci"}}/')" \
                        >"$b/oci/index.json" &&
                tar -C "$b/oci" -cf "$TMP/busybox-oci.tar" .
}

test_expect_success 'help, usage errors and missing images' '
        img --help >"$TMP/help" && grep -q "import \[--ref REF\] PATH" "$TMP/help" &&
        { img frobnicate 2>"$TMP/err"; test $? = 2; } && grep -q "unknown command" "$TMP/err" &&
        { img rm 2>/dev/null; test $? = 2; } &&
        { img --ref x ls 2>/dev/null; test $? = 2; } &&
        { img inspect nothing:here 2>"$TMP/err"; test $? = 1; } &&
        grep -q "^error: no image .nothing:here." "$TMP/err" &&
        test -f "$STORE/oci-layout" && test -f "$STORE/index.json" && test -d "$STORE/blobs/sha256"
'

test_expect_success 'build a busybox image with tar' '
        make_image && test -s "$TMP/busybox-save.tar" && test -s "$TMP/busybox-oci.tar"
'

test_expect_success 'import a docker save archive' '
        img import "$TMP/busybox-save.tar" >"$TMP/out" &&
        grep -qx "imported busybox:t3000" "$TMP/out"
'

test_expect_success 'ls shows it: reference, short image id, size, creation time, last use (the import)' '
        img ls >"$TMP/ls" &&
        head -n 1 "$TMP/ls" | grep -q "^REFERENCE *IMAGE ID *SIZE *CREATED *LAST USED$" &&
        grep -q "^busybox:t3000 *${CONFIG:0:12} *[0-9.]*[kM]B *2024-01-02 03:04:05  20[0-9][0-9]-[0-9-]* [0-9:]*$" \
                "$TMP/ls" &&
        img ls --json >"$TMP/ls.json" && grep -q "\"id\": \"sha256:$CONFIG\"" "$TMP/ls.json" &&
        used=$(jq -r ".[0].last_used" "$TMP/ls.json") && echo "last used $used" &&
        test $(( $(date +%s) - $(date -d "$used" +%s) )) -lt 600
'

test_expect_success 'the unpacked layer holds bin/busybox' '
        L=$STORE/layers/sha256/$DIFF_ID &&
        test -x "$L/bin/busybox" && cmp /bin/busybox "$L/bin/busybox" &&
        test "$(readlink "$L/bin/sh")" = busybox &&
        test "$(stat -c %u:%g "$L/bin/busybox")" = 0:0
'

test_expect_success 'inspect prints the config and the layer dirs' '
        img inspect busybox:t3000 >"$TMP/inspect" &&
        grep -q "\"PATH=/bin\"" "$TMP/inspect" && grep -q "\"test\": \"t3000\"" "$TMP/inspect" &&
        grep -q "\"$STORE/layers/sha256/$DIFF_ID\"" "$TMP/inspect"
'

test_expect_success 'import an OCI layout tar under another name; the layer is shared' '
        img import --ref localhost/bb:2 "$TMP/busybox-oci.tar" >"$TMP/out" &&
        grep -qx "imported localhost/bb:2" "$TMP/out" &&
        img import "$TMP/busybox-oci.tar" | grep -qx "imported localhost/busybox:oci" &&
        test "$(ls "$STORE/layers/sha256" | wc -l)" = 1 &&
        test "$(img ls | wc -l)" = 4
'

test_expect_success 'a layer that is not what its config says is refused' '
        mkdir -p "$TMP/bad" && tar -C "$TMP/bad" -xf "$TMP/busybox-save.tar" &&
        echo extra >>"$TMP/bad/layer0/layer.tar" &&
        sed -i "s/busybox:t3000/bad:1/" "$TMP/bad/manifest.json" &&
        bad() { "$TESSERA" agent image --store "$TMP/store2" "$@"; } &&
        { bad import "$TMP/bad" 2>"$TMP/err"; test $? = 1; } &&
        grep -q "^error: importing .*diff_id" "$TMP/err" &&
        test_must_fail bad inspect bad:1 2>/dev/null &&
        test -z "$(ls "$TMP/store2/layers/sha256")" && test -z "$(ls "$TMP/store2/tmp")"
'

test_expect_success 'rm untags; gc frees the blobs and the layer' '
        img rm busybox:t3000 localhost/bb:2 localhost/busybox:oci >"$TMP/out" &&
        test "$(wc -l <"$TMP/out")" = 3 &&
        test "$(img ls | wc -l)" = 1 &&
        test -d "$STORE/layers/sha256/$DIFF_ID" &&
        img gc >"$TMP/gc" && grep -q "^freed [0-9.]*MB$" "$TMP/gc" &&
        test -z "$(ls "$STORE/blobs/sha256")" && test -z "$(ls "$STORE/layers/sha256")" &&
        img gc --json | grep -q "\"freed_bytes\": 0"
'

test_expect_success RUNC 'runc runs busybox on an overlay of the unpacked layer' '
        img import "$TMP/busybox-save.tar" >/dev/null &&
        B=$TMP/bundle && mkdir -p "$B/rootfs" "$TMP/upper" "$TMP/work" &&
        mount -t overlay overlay \
                -o "lowerdir=$STORE/layers/sha256/$DIFF_ID,upperdir=$TMP/upper,workdir=$TMP/work" "$B/rootfs" &&
        (
                cd "$B" && runc spec &&
                sed -i "s/\"terminal\": true/\"terminal\": false/; s|^\(\s*\)\"sh\"$|\1\"/bin/busybox\", \"echo\", \"hello\"|" \
                        config.json &&
                timeout 60 runc --root "$TMP/runc" run "t3000-$$" >"$TMP/runc.out" 2>&1
        )
        rc=$?
        umount "$B/rootfs"
        cat "$TMP/runc.out"
        test $rc = 0 && grep -qx hello "$TMP/runc.out"
'

test_done
