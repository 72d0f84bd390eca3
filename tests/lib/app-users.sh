# shellcheck shell=bash
# app-users.sh - the users of the app proxy's tests (t6100, t6110); source
# it after test-lib.sh.
#
# make_user WHO   a user WHO@apps.test (password apps-password-1) in the
#                 project default, made with the test's admin keypair; its
#                 keypair in AK[WHO] and SK[WHO]
# (as WHO CMD..., test-lib.sh, signs CMD with it)

declare -A AK SK

make_user() {
        api POST /admin/users "{\"email\": \"$1@apps.test\", \"password\": \"apps-password-1\", \"role\": \"user\", \"projects\": [\"default\"]}"
        [ "$CODE" = 201 ] || { echo "user $1: $CODE $(cat "$TMP/out")"; return 1; }
        AK[$1]=$(jq -r "[.. | objects | .access_key? // empty][0]" "$TMP/out")
        SK[$1]=$(jq -r "[.. | objects | .secret_key? // empty][0]" "$TMP/out")
}
