# shellcheck shell=bash
# app-users.sh - the users of the app proxy's tests (t6100, t6110); source
# it after test-lib.sh.
#
# make_user WHO   a user WHO@apps.test (password apps-password-1) in the
#                 project default, made with the test's admin keypair; its
#                 keypair in AK[WHO] and SK[WHO]
# as WHO CMD...   CMD with WHO's keypair as BACKEND_ACCESS_KEY/_SECRET_KEY

declare -A AK SK

as() {
        local who=$1
        shift
        BACKEND_ACCESS_KEY=${AK[$who]} BACKEND_SECRET_KEY=${SK[$who]} "$@"
}

make_user() {
        api POST /admin/users "{\"email\": \"$1@apps.test\", \"password\": \"apps-password-1\", \"role\": \"user\", \"projects\": [\"default\"]}"
        [ "$CODE" = 201 ] || { echo "user $1: $CODE $(cat "$TMP/out")"; return 1; }
        AK[$1]=$(jq -r "[.. | objects | .access_key? // empty][0]" "$TMP/out")
        SK[$1]=$(jq -r "[.. | objects | .secret_key? // empty][0]" "$TMP/out")
}
