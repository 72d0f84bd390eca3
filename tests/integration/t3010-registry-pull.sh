#!/bin/bash
test_description='the registry client pulls the busybox test image from docker-registry on loopback (anonymous, Basic, Bearer token), and copes with a registry that fails'
. "$(dirname "$0")/../lib/test-lib.sh"
. "$(dirname "$0")/../lib/registry.sh"

# (the pull does not touch the database: both passes run the same)
for tool in docker-registry skopeo jq python3 openssl; do
        command -v $tool >/dev/null 2>&1 || skip_all "needs $tool (scripts/install-deps.sh test)"
done
[ -x "$BUILD/test-tool" ] || skip_all "$BUILD/test-tool is not built"
T=$BUILD/test-tool
Q="'"
ZERO=sha256:0000000000000000000000000000000000000000000000000000000000000000

# blob_ok STORE DIGEST: the store holds the blob, and its bytes have that digest
blob_ok() {
        local f=$1/blobs/sha256/${2#sha256:}
        test -f "$f" && test "sha256:$(sha256sum <"$f" | cut -d' ' -f1)" = "$2" ||
                { echo "blob $2 missing or wrong in $1"; return 1; }
}

# image_blobs DIR: manifest, config and layer digests of the test image at DIR
image_blobs() {
        local m
        m=$(jq -r '.manifests[0].digest' "$1/index.json")
        echo "$m"
        jq -r '.config.digest, .layers[].digest' "$1/blobs/sha256/${m#sha256:}"
}

# blob_gets: how many blob GETs the registry has answered
blob_gets() {
        grep -c '"GET /v2/[^ ]*/blobs/sha256:' "$REGISTRY_LOG"
}

test_expect_success 'the busybox test image builds (once: then it is cached)' '
        IMAGE=$(test_image busybox) &&
        test -f "$IMAGE/oci-layout" &&
        jq -e ".manifests[0].annotations[\"org.opencontainers.image.ref.name\"] == \"busybox:latest\"" "$IMAGE/index.json" &&
        image_blobs "$IMAGE" >"$TMP/blobs" &&
        test $(wc -l <"$TMP/blobs") = 3 &&
        MANIFEST=$(head -n 1 "$TMP/blobs") &&
        CONFIG=$(sed -n 2p "$TMP/blobs") &&
        LAYER=$(sed -n 3p "$TMP/blobs") &&
        jq -e ".config.Labels[\"ai.backend.runtime-type\"] == \"app\" and .config.Labels[\"ai.backend.kernelspec\"] == \"1\"" \
                "$IMAGE/blobs/sha256/${CONFIG#sha256:}" &&
        tar -tzf "$IMAGE/blobs/sha256/${LAYER#sha256:}" >"$TMP/files" &&
        grep -qx bin/busybox "$TMP/files" && grep -qx bin/sh "$TMP/files" && grep -qx etc/passwd "$TMP/files"
'

# (a few seconds: once, in the SQLite pass)
test_expect_success SQLITE 'a second build, in an empty cache, gives the same digests' '
        TESSERA_IMAGE_CACHE=$TMP/cache2 "$TEST_ROOT/scripts/test-images/build.sh" busybox >"$TMP/again" &&
        image_blobs "$(tail -n 1 "$TMP/again")" >"$TMP/blobs2" &&
        test_cmp "$TMP/blobs" "$TMP/blobs2"
'

test_expect_success 'docker-registry starts on loopback and takes a push' '
        registry_start &&
        registry_push busybox busybox:latest &&
        ANON=$REGISTRY ANON_LOG=$REGISTRY_LOG ANON_DIR=$REGISTRY_DIR
'

test_expect_success 'a pull stores the manifest, the config and the layer' '
        $T registry-pull "$ANON/busybox:latest" "$TMP/store" >"$TMP/out" &&
        cat "$TMP/out" &&
        grep -qx "pulled $ANON/busybox:latest $MANIFEST" "$TMP/out" &&
        grep -q "^fetched $LAYER " "$TMP/out" && grep -q "^fetched $CONFIG " "$TMP/out" &&
        for d in $MANIFEST $CONFIG $LAYER; do blob_ok "$TMP/store" $d || return 1; done
'

test_expect_success 'a second pull fetches the manifest only' '
        before=$(blob_gets) &&
        $T registry-pull "$ANON/busybox:latest" "$TMP/store" >"$TMP/out" &&
        grep -qx "pulled $ANON/busybox:latest $MANIFEST" "$TMP/out" &&
        ! grep -q "^fetched" "$TMP/out" &&
        test "$(blob_gets)" = "$before"
'

test_expect_success 'a pull by digest' '
        $T registry-pull "$ANON/busybox@$MANIFEST" "$TMP/store-digest" >"$TMP/out" &&
        grep -qx "pulled $ANON/busybox@$MANIFEST $MANIFEST" "$TMP/out" &&
        blob_ok "$TMP/store-digest" $LAYER
'

test_expect_success 'unknown digests, tags and repositories fail clearly' '
        test_must_fail $T registry-pull "$ANON/busybox@$ZERO" "$TMP/s1" 2>"$TMP/err" &&
        grep -qx "error: pulling $ANON/busybox@$ZERO: manifest unknown (404)" "$TMP/err" &&
        test_must_fail $T registry-pull "$ANON/busybox:nope" "$TMP/s1" 2>"$TMP/err" &&
        grep -qx "error: pulling $ANON/busybox:nope: manifest unknown (404)" "$TMP/err" &&
        test_must_fail $T registry-pull "$ANON/nothere" "$TMP/s1" 2>"$TMP/err" &&
        grep -q "error: pulling $ANON/nothere:latest: .*(404)" "$TMP/err" &&
        test_must_fail $T registry-pull "$ANON/busybox@sha256:abc" "$TMP/s1" 2>"$TMP/err" &&
        grep -q "error: invalid reference .*: invalid digest" "$TMP/err" &&
        test_must_fail $T registry-pull "$ANON/BusyBox" "$TMP/s1" 2>"$TMP/err" &&
        grep -q "repository name must be lowercase" "$TMP/err"
'

test_expect_success 'a bare name pulls from the default registry' '
        $T registry-pull --default-registry "$ANON" busybox "$TMP/s2" >"$TMP/out" &&
        grep -qx "pulled busybox $MANIFEST" "$TMP/out"
'

test_expect_success 'an index picks linux/amd64, or the platform asked for' '
        mkdir -p "$TMP/multi" && cp -a "$IMAGE/." "$TMP/multi/" &&
        m=$TMP/multi/blobs/sha256 &&
        jq -c ". + {annotations: {\"test.variant\": \"arm64\"}}" "$m/${MANIFEST#sha256:}" | tr -d "\n" >"$TMP/arm.json" &&
        ARM=sha256:$(sha256sum <"$TMP/arm.json" | cut -d" " -f1) && cp "$TMP/arm.json" "$m/${ARM#sha256:}" &&
        jq -cn --arg a "$MANIFEST" --argjson asz $(stat -c %s "$m/${MANIFEST#sha256:}") \
                --arg b "$ARM" --argjson bsz $(stat -c %s "$TMP/arm.json") "{
                schemaVersion: 2, mediaType: \"application/vnd.oci.image.index.v1+json\",
                manifests: [
                  {mediaType: \"application/vnd.oci.image.manifest.v1+json\", digest: \$b, size: \$bsz,
                   platform: {os: \"linux\", architecture: \"arm64\", variant: \"v8\"}},
                  {mediaType: \"application/vnd.oci.image.manifest.v1+json\", digest: \$a, size: \$asz,
                   platform: {os: \"linux\", architecture: \"amd64\"}}]}" | tr -d "\n" >"$TMP/index.json" &&
        INDEX=sha256:$(sha256sum <"$TMP/index.json" | cut -d" " -f1) && cp "$TMP/index.json" "$m/${INDEX#sha256:}" &&
        jq -n --arg d "$INDEX" --argjson s $(stat -c %s "$TMP/index.json") "{schemaVersion: 2, manifests: [
                {mediaType: \"application/vnd.oci.image.index.v1+json\", digest: \$d, size: \$s,
                 annotations: {\"org.opencontainers.image.ref.name\": \"multi\"}}]}" >"$TMP/multi/index.json" &&
        skopeo copy --quiet --all --insecure-policy --dest-tls-verify=false "oci:$TMP/multi:multi" \
                "docker://$ANON/busybox:multi" &&
        $T registry-pull "$ANON/busybox:multi" "$TMP/s3" >"$TMP/out" &&
        grep -qx "pulled $ANON/busybox:multi $MANIFEST" "$TMP/out" &&
        $T registry-pull --arch arm64 "$ANON/busybox:multi" "$TMP/s3" >"$TMP/out" &&
        grep -qx "pulled $ANON/busybox:multi $ARM" "$TMP/out" && blob_ok "$TMP/s3" $ARM &&
        $T registry-pull --arch arm64/v8 "$ANON/busybox@$INDEX" "$TMP/s4" >"$TMP/out" &&
        grep -qx "pulled $ANON/busybox@$INDEX $ARM" "$TMP/out" &&
        test_must_fail $T registry-pull --arch s390x "$ANON/busybox:multi" "$TMP/s3" 2>"$TMP/err" &&
        grep -q "no image for linux/s390x in the index (it has: linux/arm64, linux/amd64)" "$TMP/err"
'

test_expect_success 'a layer whose bytes do not match its digest is refused' '
        data=$ANON_DIR/storage/docker/registry/v2/blobs/sha256/$(echo ${LAYER#sha256:} | cut -c1-2)/${LAYER#sha256:}/data &&
        test -f "$data" &&
        printf "XXXX" | dd of="$data" bs=1 seek=1000 conv=notrunc 2>/dev/null &&
        test_must_fail $T registry-pull "$ANON/busybox:latest" "$TMP/s5" 2>"$TMP/err" &&
        cat "$TMP/err" &&
        grep -q "error: pulling $ANON/busybox:latest: digest mismatch for layer $LAYER" "$TMP/err" &&
        test ! -e "$TMP/s5/blobs/sha256/${LAYER#sha256:}" &&
        test -z "$(ls "$TMP/s5/tmp")"
'

test_expect_success 'Basic auth: a wrong password fails with 401, the right one works' '
        registry_start --htpasswd alice:s3cret &&
        registry_push busybox team/busybox:1 &&
        test_must_fail $T registry-pull --user alice --password wrong "$REGISTRY/team/busybox:1" "$TMP/s6" 2>"$TMP/err" &&
        grep -qx "error: pulling $REGISTRY/team/busybox:1: authentication failed for user ${Q}alice${Q}: authentication required (401)" "$TMP/err" &&
        test_must_fail $T registry-pull "$REGISTRY/team/busybox:1" "$TMP/s6" 2>"$TMP/err" &&
        grep -q "authentication required (401): the registry asks for a username and password" "$TMP/err" &&
        $T registry-pull --user alice --password s3cret "$REGISTRY/team/busybox:1" "$TMP/s6" >"$TMP/out" &&
        grep -qx "pulled $REGISTRY/team/busybox:1 $MANIFEST" "$TMP/out" &&
        blob_ok "$TMP/s6" $LAYER &&
        registry_stop
'

test_expect_success 'Bearer tokens: the token flow with credentials' '
        registry_start --token alice:s3cret &&
        registry_push busybox busybox:latest &&
        $T registry-pull --user alice --password s3cret "$REGISTRY/busybox:latest" "$TMP/s7" >"$TMP/out" &&
        grep -qx "pulled $REGISTRY/busybox:latest $MANIFEST" "$TMP/out" &&
        blob_ok "$TMP/s7" $LAYER &&
        grep -q "GET /token?service=tessera-test-registry&scope=repository%3Abusybox%3Apull HTTP/1.1\" 200" \
                "$REGISTRY_DIR/token-server.log" &&
        test_must_fail $T registry-pull --user alice --password wrong "$REGISTRY/busybox:latest" "$TMP/s8" 2>"$TMP/err" &&
        grep -qx "error: pulling $REGISTRY/busybox:latest: getting a token from ${Q}http://127.0.0.1:$REGISTRY_TOKEN_PORT/token${Q}: authentication failed for user ${Q}alice${Q}: invalid username or password (401)" "$TMP/err" &&
        registry_stop
'

test_expect_success 'Bearer tokens: anonymous, answered as "access_token"' '
        registry_start --token --access-token-only &&
        registry_push busybox busybox:latest &&
        $T registry-pull "$REGISTRY/busybox:latest" "$TMP/s9" >"$TMP/out" &&
        grep -qx "pulled $REGISTRY/busybox:latest $MANIFEST" "$TMP/out" &&
        registry_stop
'

test_expect_success 'retries 503s, follows redirects, resumes a dropped blob with Range' '
        fake_registry_start busybox --redirect --fail 2 --drop &&
        $T registry-pull "$FAKE_REGISTRY/busybox:latest" "$TMP/s10" >"$TMP/out" &&
        cat "$FAKE_REGISTRY_LOG" &&
        grep -qx "pulled $FAKE_REGISTRY/busybox:latest $MANIFEST" "$TMP/out" &&
        for d in $MANIFEST $CONFIG $LAYER; do blob_ok "$TMP/s10" $d || return 1; done &&
        grep -q "^GET /storage/$LAYER bytes=[1-9][0-9]*-$" "$FAKE_REGISTRY_LOG"
'

test_expect_success 'gives up on a registry that keeps failing' '
        fake_registry_start busybox --fail 100 &&
        test_must_fail $T registry-pull "$FAKE_REGISTRY/busybox:latest" "$TMP/s11" 2>"$TMP/err" &&
        grep -qx "error: pulling $FAKE_REGISTRY/busybox:latest: try again later (503), after 4 attempts" "$TMP/err"
'

test_expect_success 'a manifest whose bytes do not match the digest pulled is refused' '
        fake_registry_start busybox --corrupt-manifest &&
        test_must_fail $T registry-pull "$FAKE_REGISTRY/busybox@$MANIFEST" "$TMP/s12" 2>"$TMP/err" &&
        grep -q "error: pulling $FAKE_REGISTRY/busybox@$MANIFEST: digest mismatch for manifest $MANIFEST: got sha256:" "$TMP/err" &&
        test ! -e "$TMP/s12/blobs/sha256/${MANIFEST#sha256:}"
'

test_expect_success 'a registry that is not there fails clearly' '
        port=$(test_free_port) &&
        test_must_fail $T registry-pull "127.0.0.1:$port/busybox" "$TMP/s13" 2>"$TMP/err" &&
        grep -q "error: pulling 127.0.0.1:$port/busybox:latest: GET http://127.0.0.1:$port/v2/busybox/manifests/latest: .*, after 4 attempts$" "$TMP/err"
'

test_done
