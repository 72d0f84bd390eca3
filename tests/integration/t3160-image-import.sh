#!/bin/bash
test_description='tessera image import: a superadmin gives the cluster an image (OCI layout, docker save archive) through the manager; an agent that never had it pulls it from the manager and runs it'
. "$(dirname "$0")/../lib/test-lib.sh"
. "$(dirname "$0")/../lib/registry.sh"

test_with_containers
for tool in skopeo jq sha256sum; do
        command -v $tool >/dev/null 2>&1 || skip_all "needs $tool (scripts/install-deps.sh test)"
done

BLOBS=/admin/image-blobs

# layer_of DIR: the (first) layer digest of the test image layout at DIR
layer_of() {
        local m
        m=$(jq -r '.manifests[0].digest' "$1/index.json")
        jq -r '.layers[0].digest' "$1/blobs/sha256/${m#sha256:}"
}

# images_named NAME: how many images of that name the manager lists
images_named() {
        OUT=$TMP/imgs api GET "/admin/images?name=$1"
        jq -r .total "$TMP/imgs"
}

test_expect_success 'the busybox test image, and a docker save archive of it under another name' '
        IMAGE=$(test_image busybox) && test -f "$IMAGE/index.json" &&
        skopeo copy --quiet "oci:$IMAGE:busybox:latest" "docker-archive:$TMP/bb.tar:imported/bb:v2" &&
        tar -tf "$TMP/bb.tar" | grep -q manifest.json
'

test_expect_success 'the manager runs with one agent whose image store is empty' '
        WITH_AGENT="--agent-network none" start_manager &&
        for _ in $(seq 1 100); do
                OUT=$TMP/agents api GET /admin/agents
                [ "$(jq ".items | length" "$TMP/agents")" = 1 ] && break
                sleep 0.1
        done &&
        "$TESSERA" agent image --store "$MANAGER_STATE/agent/images" ls >"$TMP/agent-images" &&
        ! grep -q busybox "$TMP/agent-images"
'

test_expect_success 'a user who is not a superadmin gets 403 and nothing is registered' '
        api POST /admin/users "{\"email\": \"imp@walk.test\", \"password\": \"walk-password-1\", \"role\": \"user\"}" &&
        test "$CODE" = 201 &&
        UAK=$(jq -r "[.. | objects | .access_key? // empty][0]" "$TMP/out") &&
        USK=$(jq -r "[.. | objects | .secret_key? // empty][0]" "$TMP/out") &&
        test_must_fail env BACKEND_ACCESS_KEY=$UAK BACKEND_SECRET_KEY=$USK "$TESSERA" image import "$IMAGE" \
                >"$TMP/denied" 2>&1 &&
        cat "$TMP/denied" && grep -q "HTTP 403" "$TMP/denied" &&
        test "$(images_named busybox)" = 0
'

test_expect_success 'a corrupted layer is refused (400), nothing is registered and no upload is left' '
        cp -r "$IMAGE" "$TMP/corrupt" && chmod -R u+w "$TMP/corrupt" &&
        L=$(layer_of "$TMP/corrupt") && f=$TMP/corrupt/blobs/sha256/${L#sha256:} &&
        printf "\377\377\377\377" | dd of="$f" bs=1 seek=200 conv=notrunc 2>/dev/null &&
        test_must_fail "$TESSERA" image import --ref corrupt/bb:1 "$TMP/corrupt" >"$TMP/corrupt.out" 2>&1 &&
        cat "$TMP/corrupt.out" &&
        grep -q "does not match its digest" "$TMP/corrupt.out" && grep -q "HTTP 400" "$TMP/corrupt.out" &&
        test "$(images_named corrupt/bb)" = 0 &&
        test ! -e "$MANAGER_STATE/images/uploads/${L#sha256:}" &&
        test ! -e "$MANAGER_STATE/images/blobs/sha256/${L#sha256:}"
'

test_expect_success 'bad commits are 400s with clear messages' '
        api POST /admin/image-imports "{\"manifest\": \"sha256:$(printf %064d 0)\"}" && test "$CODE" = 400 &&
        grep -q "reference" "$TMP/out" &&
        api POST /admin/image-imports "{\"reference\": \"bad:1\", \"manifest\": \"sha256:$(printf %064d 0)\"}" &&
        test "$CODE" = 400 && grep -q "has not been uploaded" "$TMP/out" &&
        printf "{\"schemaVersion\": 2, \"layers\": 3}" >"$TMP/badmanifest" &&
        M=sha256:$(sha256sum <"$TMP/badmanifest" | cut -d" " -f1) &&
        "$TESSERA" api PUT "$BLOBS/$M?offset=0" --data @"$TMP/badmanifest" &&
        api POST /admin/image-imports "{\"reference\": \"bad:1\", \"manifest\": \"$M\"}" && test "$CODE" = 400 &&
        grep -q "config" "$TMP/out" &&
        api POST /admin/image-imports "{\"reference\": \"Bad Name\", \"manifest\": \"$M\"}" && test "$CODE" = 400 &&
        grep -q "not an image reference" "$TMP/out" &&
        test "$(images_named bad)" = 0
'

test_expect_success 'an upload cut short resumes where the manager'"'"'s copy ends' '
        L=$(layer_of "$IMAGE") && f=$IMAGE/blobs/sha256/${L#sha256:} &&
        head -c 1000 "$f" >"$TMP/part" &&
        "$TESSERA" api PATCH "$BLOBS/$L?offset=0" --data @"$TMP/part" >"$TMP/patch" &&
        jq -e ".offset == 1000 and .complete == false" "$TMP/patch" &&
        test_must_fail "$TESSERA" api PATCH "$BLOBS/$L?offset=0" --data @"$TMP/part" &&
        "$TESSERA" api GET "$BLOBS/$L" | jq -e ".offset == 1000" &&
        "$TESSERA" image import --chunk-size 65536 "$IMAGE" >"$TMP/import.out" 2>&1 &&
        cat "$TMP/import.out" &&
        grep -q "resuming $L at byte 1000" "$TMP/import.out" &&
        grep -q "imported busybox:latest" "$TMP/import.out" &&
        test "$(sha256sum <"$MANAGER_STATE/images/blobs/sha256/${L#sha256:}" | cut -d" " -f1)" = "${L#sha256:}"
'

test_expect_success 'the images API lists it: no registry, its manifest digest, labels and size' '
        M=$(jq -r ".manifests[0].digest" "$IMAGE/index.json") &&
        OUT=$TMP/imgs api GET "/admin/images?name=busybox" &&
        jq -e ".total == 1 and (.items[0] | .tag == \"latest\" and .registry == \"\" and .digest == \"$M\"
                and .architecture == \"x86_64\" and .size_bytes > 0
                and .labels[\"ai.backend.kernelspec\"] == \"1\")" "$TMP/imgs" &&
        "$TESSERA" admin image list >"$TMP/list" && grep -q busybox "$TMP/list"
'

test_expect_success 'importing it again sends nothing' '
        "$TESSERA" image import "$IMAGE" >"$TMP/again.out" && cat "$TMP/again.out" &&
        grep -q "0 of 3 blobs sent" "$TMP/again.out"
'

test_expect_success 'a session naming it at once runs on the agent, which pulls it from the manager' '
        create_session imp-bb batch "echo hello from the imported image" &&
        wait_status imp-bb TERMINATED &&
        test "$(field imp-bb result)" = SUCCESS &&
        OUT=$TMP/logs api GET /session/imp-bb/logs &&
        jq -r .result.logs "$TMP/logs" | grep -q "hello from the imported image" &&
        "$TESSERA" agent image --store "$MANAGER_STATE/agent/images" ls >"$TMP/agent-images" &&
        grep -q "busybox:latest" "$TMP/agent-images"
'

test_expect_success 'a docker save archive is imported under the name it records, and runs' '
        "$TESSERA" image import "$TMP/bb.tar" >"$TMP/tar.out" 2>&1 && cat "$TMP/tar.out" &&
        grep -q "imported imported/bb:v2" "$TMP/tar.out" &&
        test "$(images_named imported/bb)" = 1 &&
        api POST /session "{\"name\": \"imp-tar\", \"image\": \"imported/bb:v2\", \"enqueueOnly\": true,
                \"type\": \"batch\", \"startupCommand\": \"echo from the archive\",
                \"config\": {\"resources\": {\"cpu\": 1, \"mem\": \"256m\"}}}" &&
        test "$CODE" = 201 &&
        wait_status imp-tar TERMINATED && test "$(field imp-tar result)" = SUCCESS &&
        OUT=$TMP/logs api GET /session/imp-tar/logs &&
        jq -r .result.logs "$TMP/logs" | grep -q "from the archive"
'

test_expect_success 'the registry routes answer agents only' '
        api GET /v2/busybox/manifests/latest && test "$CODE" = 401 &&
        http GET /v2/busybox/manifests/latest && test "$HTTP_STATUS" = 401
'

test_done
