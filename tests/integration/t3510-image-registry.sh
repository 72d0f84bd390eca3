#!/bin/bash
test_description='the image registry in the manager: aliases, name:tag and full references, unregistered, hidden and not allowed images, minimum resources, the user listing'
. "$(dirname "$0")/../lib/test-lib.sh"

TT=$BUILD/test-tool

# expect_400 BODY WORDS: a create with BODY is a 400 whose answer mentions WORDS
expect_400() {
        api POST /session "$1"
        test "$CODE" = 400 || { echo "got $CODE: $(cat "$TMP/out")"; return 1; }
        grep -q -- "$2" "$TMP/out" || { echo "answer lacks '$2': $(cat "$TMP/out")"; return 1; }
}

# session NAME IMAGE [RESOURCES_JSON]: enqueue a session, 201
session() {
        local body="{\"name\": \"img-$1\", \"image\": \"$2\", \"enqueueOnly\": true"
        [ -z "${3:-}" ] || body="$body, \"config\": {\"resources\": $3}"
        api POST /session "$body}"
        test "$CODE" = 201 || { echo "create $1 ($2): $CODE $(cat "$TMP/out")"; return 1; }
}

test_expect_success 'start a manager with images registered' '
        start_manager &&
        api POST /admin/images "{\"name\": \"registry.test/stable/python\", \"tag\": \"3.11\", \"min_resources\": {\"cpu\": 1, \"mem\": \"2g\"}, \"max_resources\": {\"cpu\": 8}}" &&
        test "$CODE" = 201 && PY311=$(jq -r .id "$TMP/out") &&
        api POST /admin/images "{\"name\": \"registry.test/stable/python\", \"tag\": \"latest\"}" &&
        test "$CODE" = 201 &&
        api POST /admin/images "{\"name\": \"other.io/lab/torch\", \"tag\": \"2.1\", \"labels\": {\"ai.backend.resource.min.cpu\": \"2\", \"ai.backend.resource.min.mem\": \"3g\"}}" &&
        test "$CODE" = 201 && TORCH=$(jq -r .id "$TMP/out") &&
        api POST /admin/images "{\"name\": \"registry.test/stable/old\", \"tag\": \"1\"}" &&
        test "$CODE" = 201 && OLD=$(jq -r .id "$TMP/out") &&
        echo "$PY311 $TORCH $OLD" >"$TMP/ids"
'
read -r PY311 TORCH OLD <"$TMP/ids" 2>/dev/null || true

test_expect_success 'aliases: create, list, show; a bad alias or image is a 400; a duplicate is a 409' '
        read -r PY311 TORCH OLD <"$TMP/ids" &&
        api POST /admin/image-aliases "{\"alias\": \"py\", \"image_id\": \"$PY311\"}" && test "$CODE" = 201 &&
        api POST /admin/image-aliases "{\"alias\": \"torch\", \"image_id\": \"$TORCH\"}" && test "$CODE" = 201 &&
        api POST /admin/image-aliases "{\"alias\": \"py\", \"image_id\": \"$TORCH\"}" && test "$CODE" = 409 &&
        api POST /admin/image-aliases "{\"alias\": \"-x\", \"image_id\": \"$TORCH\"}" && test "$CODE" = 400 &&
        api POST /admin/image-aliases "{\"alias\": \"nope\", \"image_id\": \"no-such-id\"}" && test "$CODE" = 400 &&
        api GET /admin/image-aliases && test "$CODE" = 200 &&
        jq -e ".items | map(.alias) == [\"py\", \"torch\"]" "$TMP/out" &&
        api GET /admin/image-aliases/py && test "$CODE" = 200 &&
        jq -e ".image == \"registry.test/stable/python:3.11\"" "$TMP/out"
'

test_expect_success 'session create resolves an alias, name:tag, a name alone (latest) and a full reference' '
        session a1 py && api GET /session/img-a1 &&
        grep -q "\"image\":\"registry.test/stable/python:3.11\"" "$TMP/out" &&
        session a2 python:3.11 && api GET /session/img-a2 &&
        grep -q "\"image\":\"registry.test/stable/python:3.11\"" "$TMP/out" &&
        session a3 python && api GET /session/img-a3 &&
        grep -q "\"image\":\"registry.test/stable/python:latest\"" "$TMP/out" &&
        session a4 other.io/lab/torch:2.1 && api GET /session/img-a4 &&
        grep -q "\"image\":\"other.io/lab/torch:2.1\"" "$TMP/out"
'

test_expect_success 'an unregistered image is a 400 naming it' '
        expect_400 "{\"name\": \"img-u1\", \"image\": \"nothere:1.0\", \"enqueueOnly\": true}" "nothere:1.0" &&
        expect_400 "{\"name\": \"img-u2\", \"image\": \"registry.test/stable/python:9\", \"enqueueOnly\": true}" "not registered"
'

test_expect_success 'a deleted alias no longer resolves; deleting an image deletes its aliases' '
        api DELETE /admin/image-aliases/py && test "$CODE" = 204 -o "$CODE" = 200 &&
        api GET /admin/image-aliases/py && test "$CODE" = 404 &&
        expect_400 "{\"name\": \"img-d1\", \"image\": \"py\", \"enqueueOnly\": true}" "image .py. is not registered" &&
        api POST /admin/image-aliases "{\"alias\": \"old\", \"image_id\": \"$OLD\"}" && test "$CODE" = 201 &&
        api POST /admin/images "{\"name\": \"registry.test/stable/gone\", \"tag\": \"1\"}" && GONE=$(jq -r .id "$TMP/out") &&
        api POST /admin/image-aliases "{\"alias\": \"gone\", \"image_id\": \"$GONE\"}" && test "$CODE" = 201 &&
        api DELETE /admin/images/$GONE && test "$CODE" = 204 -o "$CODE" = 200 &&
        api GET /admin/image-aliases/gone && test "$CODE" = 404
'

test_expect_success 'a hidden image is a 400, by name and by alias; shown again it works' '
        api PATCH /admin/images/$OLD "{\"hidden\": true}" && test "$CODE" = 200 &&
        expect_400 "{\"name\": \"img-h1\", \"image\": \"old:1\", \"enqueueOnly\": true}" "hidden" &&
        expect_400 "{\"name\": \"img-h2\", \"image\": \"old\", \"enqueueOnly\": true}" "hidden"
'

test_expect_success 'a registry the domain does not allow is a 400 naming the image and registry' '
        api PATCH /admin/domains/default "{\"allowed_docker_registries\": [\"registry.test\"]}" && test "$CODE" = 200 &&
        expect_400 "{\"name\": \"img-r1\", \"image\": \"torch\", \"enqueueOnly\": true}" "registry .other.io. is not allowed" &&
        session r2 python:3.11 &&
        api GET /images && test "$CODE" = 200 &&
        jq -e "[.images[].name] == [\"registry.test/stable/python\"]" "$TMP/out" &&
        api PATCH /admin/domains/default "{\"allowed_docker_registries\": []}" && test "$CODE" = 200
'

test_expect_success 'image minimums: min_resources and ai.backend.resource.min labels raise a request' '
        session m1 python:3.11 "{\"cpu\": \"0.5\", \"mem\": \"1g\"}" && api GET /session/img-m1 &&
        grep -q "\"requestedSlots\":{\"cpu\":\"1\",\"mem\":\"2147483648\"}" "$TMP/out" &&
        session m2 torch "{\"cpu\": 1}" && api GET /session/img-m2 &&
        grep -q "\"requestedSlots\":{\"cpu\":\"2\",\"mem\":\"3221225472\"}" "$TMP/out" &&
        session m3 torch "{\"cpu\": 4, \"mem\": \"8g\"}" && api GET /session/img-m3 &&
        grep -q "\"requestedSlots\":{\"cpu\":\"4\",\"mem\":\"8589934592\"}" "$TMP/out"
'

test_expect_success 'more than the image maximum is a 400' '
        expect_400 "{\"name\": \"img-x1\", \"image\": \"python:3.11\", \"enqueueOnly\": true, \"config\": {\"resources\": {\"cpu\": 9}}}" "more than image"
'

test_expect_success 'GET /images: a user sees visible images grouped by name, with versions and aliases' '
        api POST /admin/users "{\"email\": \"img-user@example.com\", \"password\": \"image-password-1\", \"role\": \"user\"}" &&
        test "$CODE" = 201 &&
        UAK=$(jq -r ".. | .access_key? // empty" "$TMP/out" | head -n 1) &&
        USK=$(jq -r ".. | .secret_key? // empty" "$TMP/out" | head -n 1) &&
        BACKEND_ACCESS_KEY=$UAK BACKEND_SECRET_KEY=$USK api GET /images && test "$CODE" = 200 &&
        jq -e "[.images[].name] == [\"other.io/lab/torch\", \"registry.test/stable/python\"]" "$TMP/out" &&
        jq -e ".images[1].versions | map(.tag) == [\"3.11\", \"latest\"]" "$TMP/out" &&
        jq -e ".images[0].aliases == [\"torch\"] and .images[0].versions[0].architecture == \"x86_64\"" "$TMP/out" &&
        jq -e ".images[0].versions[0].labels[\"ai.backend.resource.min.cpu\"] == \"2\"" "$TMP/out" &&
        BACKEND_ACCESS_KEY=$UAK BACKEND_SECRET_KEY=$USK api GET /admin/image-aliases && test "$CODE" = 403 &&
        BACKEND_ACCESS_KEY=$UAK BACKEND_SECRET_KEY=$USK api POST /admin/image-aliases "{\"alias\": \"z\", \"image_id\": \"$TORCH\"}" &&
        test "$CODE" = 403
'

test_expect_success 'the CLI lists images and manages aliases' '
        "$TESSERA" image ls >"$TMP/ls" && grep -q "registry.test/stable/python" "$TMP/ls" && grep -q "3.11" "$TMP/ls" &&
        ! grep -q "stable/old" "$TMP/ls" && grep -q "other.io/lab/torch  *2.1  *torch" "$TMP/ls" &&
        "$TESSERA" admin image update registry.test/stable/old:1 --hidden false && "$TESSERA" image ls | grep -q "stable/old" &&
        "$TESSERA" admin image-alias create py2 --image-id "$PY311" &&
        "$TESSERA" admin image-alias list >"$TMP/al" && grep -q "py2 .*registry.test/stable/python:3.11" "$TMP/al" &&
        "$TESSERA" admin image-alias delete py2 &&
        "$TESSERA" admin image-alias list >"$TMP/al" && ! grep -q py2 "$TMP/al"
'

test_done
