#!/bin/bash
test_description='an agent pulls a session'"'"'s image from a registry that needs a password, with the credentials of the registered container registry; wrong ones fail the session with the registry'"'"'s answer'
. "$(dirname "$0")/../lib/test-lib.sh"
. "$(dirname "$0")/../lib/registry.sh"

test_with_containers

# session NAME: an interactive busybox session, enqueued
session() {
        api POST /session "{\"name\": \"$1\", \"image\": \"busybox:latest\", \"enqueueOnly\": true, \"config\": {\"resources\": {\"cpu\": 0.25, \"mem\": \"128m\"}}}"
        test "$CODE" = 201 || { echo "session $1: $CODE $(cat "$TMP/out")"; return 1; }
}

test_expect_success 'a registry with Basic authentication holds busybox; the image is registered from it' '
        registry_start --htpasswd alice:s3cret && registry_push busybox busybox:latest &&
        WITH_AGENT="--agent-network none" start_manager &&
        api POST /admin/container-registries "{\"name\": \"$REGISTRY\", \"url\": \"http://$REGISTRY\", \"username\": \"alice\", \"password\": \"wrong\"}" &&
        test "$CODE" = 201 &&
        api POST /admin/images "{\"name\": \"busybox\", \"tag\": \"latest\", \"registry\": \"$REGISTRY\"}" && test "$CODE" = 201
'

test_expect_success 'with a wrong password the pull fails and says why' '
        session badpw && wait_status badpw ERROR 300 &&
        OUT=$TMP/info api GET /session/badpw && grep -qi "unauthorized\|authentication\|denied" "$TMP/info"
'

test_expect_success 'with the right one the agent pulls it and the session runs' '
        api PATCH /admin/container-registries/$REGISTRY "{\"password\": \"s3cret\"}" && test "$CODE" = 200 &&
        session goodpw && wait_status goodpw RUNNING 300 &&
        ! grep -q s3cret "$MANAGER_LOG"
'

test_done
