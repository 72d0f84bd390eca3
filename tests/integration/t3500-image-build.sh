#!/bin/bash
test_description='tessera image build: a recipe debootstrapped into a reproducible OCI layout (cached), pushed to a registry with tessera image push, pulled by the dev agent and run in a session'
. "$(dirname "$0")/../lib/test-lib.sh"
. "$(dirname "$0")/../lib/registry.sh"

test_with_containers
command -v debootstrap >/dev/null || skip_all 'needs debootstrap'
curl -s -m 10 -o /dev/null "${TESSERA_DEBIAN_MIRROR:-http://deb.debian.org/debian}/dists/bookworm/InRelease" ||
        skip_all 'needs the Debian archive'
WAIT_TENTHS=900 # a Debian image: pulls and starts under ASan on a loaded machine

# digests LAYOUT: the manifest digest and the layer digests of a built layout
digests() {
        local m
        m=$(jq -r '.manifests[0].digest' "$1/index.json") &&
                echo "$m" && jq -r '.layers[].digest, .config.digest' "$1/blobs/sha256/${m#sha256:}"
}

test_expect_success 'a recipe builds twice into the same digests (the second build ignores the cache)' '
        "$TESSERA" image build "$TEST_ROOT/tests/data/tiny.recipe" >"$TMP/one.out" 2>"$TMP/one.err" &&
        digests "$(tail -n 1 "$TMP/one.out")" >"$TMP/one.digests" &&
        "$TESSERA" image build --rebuild -o "$TMP/tiny" "$TEST_ROOT/tests/data/tiny.recipe" >"$TMP/two.out" 2>"$TMP/two.err" &&
        test "$(tail -n 1 "$TMP/two.out")" = "$TMP/tiny" &&
        grep -q "^\[1/5 .*debootstrap bookworm (minbase)" "$TMP/two.err" &&
        grep -q "Configuring: [0-9]* packages" "$TMP/two.err" &&
        digests "$TMP/tiny" >"$TMP/two.digests" &&
        test_cmp "$TMP/one.digests" "$TMP/two.digests" &&
        test "$(jq -r ".manifests[0].annotations[\"org.opencontainers.image.ref.name\"]" "$TMP/tiny/index.json")" = tiny:test
'

test_expect_success 'a bad recipe is refused with its file and line' '
        printf "name = x\nsuite = bookworm\nlabel.a = 1\nbogus = 2\n" >"$TMP/bad.recipe" &&
        test_must_fail "$TESSERA" image build "$TMP/bad.recipe" 2>"$TMP/bad.err" &&
        grep -q "bad.recipe:4: unknown key .bogus." "$TMP/bad.err"
'

test_expect_success 'python 3.11 builds (from the cache when there) and is pushed to a loopback registry' '
        registry_start &&
        "$TESSERA" image build --push "$REGISTRY/python:3.11" "$TEST_ROOT/images/python3.11.recipe" \
                >"$TMP/py.out" 2>"$TMP/py.err" &&
        PY=$(tail -n 1 "$TMP/py.out") &&
        grep -q "pushed $REGISTRY/python:3.11" "$TMP/py.err" &&
        jq -r ".config.Labels[\"ai.backend.runtime-path\"]" "$PY/blobs/sha256/$(jq -r ".config.digest" \
                "$PY/blobs/sha256/$(jq -r ".manifests[0].digest" "$PY/index.json" | cut -c8-)" | cut -c8-)" >"$TMP/rp" &&
        test "$(cat "$TMP/rp")" = /usr/bin/python3 &&
        curl -sf "http://$REGISTRY/v2/python/tags/list" | grep -q "\"3.11\""
'

test_expect_success 'tessera image push again sends nothing the registry has' '
        "$TESSERA" image push "$PY" "$REGISTRY/python:again" >"$TMP/push.out" &&
        grep -q "0 of 2 blobs sent" "$TMP/push.out" &&
        curl -sf "http://$REGISTRY/v2/python/tags/list" | grep -q "\"again\""
'

test_expect_success 'a blob uploaded while it is being written arrives whole, chunk by chunk' '
        head -c 3000000 /dev/urandom >"$TMP/stream.src" &&
        "$BUILD/test-tool" push-stream "$REGISTRY/stream:x" "$TMP/stream.src" "$TMP/stream.out" 262144 >"$TMP/stream.res" &&
        d=$(sha256sum <"$TMP/stream.src" | cut -d" " -f1) &&
        test "$(cat "$TMP/stream.res")" = "streamed sha256:$d 3000000" &&
        cmp "$TMP/stream.src" "$TMP/stream.out" &&
        curl -sf -o "$TMP/stream.got" "http://$REGISTRY/v2/stream/blobs/sha256:$d" &&
        cmp "$TMP/stream.src" "$TMP/stream.got" &&
        test "$(grep -c "PATCH /v2/stream/blobs/uploads/" "$REGISTRY_LOG")" -ge 11
'

test_expect_success 'a blob its writer gives up on is never finished in the registry' '
        head -c 1000000 /dev/urandom >"$TMP/gone.src" &&
        "$BUILD/test-tool" push-stream --cancel "$REGISTRY/stream:x" "$TMP/gone.src" "$TMP/gone.out" 65536 >"$TMP/gone.res" &&
        test "$(cat "$TMP/gone.res")" = cancelled &&
        d=$(sha256sum <"$TMP/gone.src" | cut -d" " -f1) &&
        test "$(curl -s -o /dev/null -w "%{http_code}" -I "http://$REGISTRY/v2/stream/blobs/sha256:$d")" = 404
'

test_expect_success 'a push through the token flow asks for push access with the credentials' '
        registry_stop && registry_start --token pusher:secret &&
        test_must_fail "$TESSERA" image push "$PY" "$REGISTRY/python:3.11" 2>"$TMP/noauth.err" &&
        TESSERA_REGISTRY_USER=pusher TESSERA_REGISTRY_PASSWORD=secret \
                "$TESSERA" image push "$PY" "$REGISTRY/python:3.11" >"$TMP/push.out" &&
        grep -q "2 of 2 blobs sent" "$TMP/push.out"
'

test_expect_success 'the dev agent pulls the pushed image and runs Python 3.11 in a session' '
        registry_stop && registry_start &&
        "$TESSERA" image push "$PY" "$REGISTRY/python:3.11" >/dev/null &&
        WITH_AGENT="--agent-network none" start_manager &&
        api POST /admin/images "{\"name\": \"python\", \"tag\": \"3.11\", \"registry\": \"$REGISTRY\"}" &&
        test "$CODE" = 201 &&
        api POST /session "{\"name\": \"py311\", \"image\": \"python:3.11\", \"enqueueOnly\": true, \"config\": {\"resources\": {\"cpu\": 1, \"mem\": \"512m\"}}}" &&
        test "$CODE" = 201 &&
        wait_status py311 RUNNING &&
        "$TESSERA" session exec py311 "python3 -c \"import sys; print(sys.version)\"" >"$TMP/version" &&
        grep -q "^3\.11\." "$TMP/version" &&
        test "$("$TESSERA" session exec py311 "id -un")" = work
'

test_done
