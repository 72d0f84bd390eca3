# shellcheck shell=bash
# roles.sh - requests signed as one of the users a test made, by a name it
# chose (the role tests, t1300 and t1301); source it after test-lib.sh.
#
#     . "$(dirname "$0")/../lib/roles.sh"
#     AK[superadmin]=$BACKEND_ACCESS_KEY SK[superadmin]=$BACKEND_SECRET_KEY
#     make_user admin admin1@x.test default admin [PROJECT]
#     call admin GET /admin/users           CODE, the answer in $TMP/out
#
# call KEY METHOD PATH [BODY [HEADER...]]
#     signed with KEY's keypair (a JSON body when BODY is not empty); at
#     most 10 s, 1 s for /events/session, whose stream stays open after
#     its status
# make_every_role SITE
#     on a started manager: the superadmin's keys, id and domain in the
#     arrays, a domain "other", and users of every role: admin, monitor,
#     user and user2 (project default) in domain default, oadmin and ouser
#     in "other", with emails at SITE
# sees CALLER OWNER
#     whether CALLER may see what OWNER owns, as src/manager/api/authz.h
#     says (both keys of make_user)
# make_user KEY EMAIL DOMAIN ROLE [PROJECT]
#     a user made by the superadmin (AK[superadmin]) with password
#     $ROLES_PASSWORD, joined to PROJECT; its main keypair in AK[KEY] and
#     SK[KEY], its role in ROLE[KEY], domain in DOM[KEY], id in UID_[KEY]

declare -A AK SK ROLE DOM UID_
ROLES_PASSWORD=${ROLES_PASSWORD:-roles-password-1}

call() {
        local key=$1 method=$2 path=$3 body=${4:-} ct=text/plain h=() max=10 l
        shift 4 2>/dev/null || shift $#
        [ -n "$body" ] && ct=application/json
        while IFS= read -r l; do h+=(-H "$l"); done < <("$BUILD/test-tool" sign "$method" "$path" \
                "${BACKEND_ENDPOINT#http://}" "${AK[$key]}" "${SK[$key]}" "$ct")
        for l in "$@"; do h+=(-H "$l"); done
        [ "${path%%\?*}" = /events/session ] && max=1
        CODE=$(curl -s -m "$max" -X "$method" -o "$TMP/out" -w '%{http_code}' "${h[@]}" ${body:+--data "$body"} \
                "$BACKEND_ENDPOINT$path") || true
}

make_user() {
        local body="{\"email\": \"$2\", \"password\": \"$ROLES_PASSWORD\", \"domain\": \"$3\", \"role\": \"$4\"${5:+, \"projects\": [\"$5\"]}}"
        call superadmin POST /admin/users "$body"
        [ "$CODE" = 201 ] || { cat "$TMP/out"; return 1; }
        AK[$1]=$(jq -r .keypair.access_key "$TMP/out")
        SK[$1]=$(jq -r .keypair.secret_key "$TMP/out")
        [ ${#SK[$1]} = 40 ] || { echo "no secret key in: $(cat "$TMP/out")"; return 1; }
        ROLE[$1]=$4 DOM[$1]=$3
        UID_[$1]=$(db_sql "SELECT id FROM users WHERE email = '$2'")
}

sees() { # CALLER OWNER: the rule of src/manager/api/authz.h
        [ "${ROLE[$1]}" = superadmin ] && return 0
        [ "$1" = "$2" ] && return 0
        case ${ROLE[$1]} in
        admin | monitor) [ "${DOM[$1]}" = "${DOM[$2]}" ] && [ "${ROLE[$2]}" != superadmin ] ;;
        *) return 1 ;;
        esac
}

make_every_role() {
        AK[superadmin]=$BACKEND_ACCESS_KEY SK[superadmin]=$BACKEND_SECRET_KEY
        ROLE[superadmin]=superadmin DOM[superadmin]=default
        UID_[superadmin]=$(db_sql "SELECT id FROM users WHERE email = '$TEST_ADMIN_EMAIL'")
        call superadmin POST /admin/domains "{\"name\": \"other\"}" && test "$CODE" = 201 &&
                make_user admin "admin1@$1" default admin &&
                make_user monitor "mon1@$1" default monitor &&
                make_user user "user1@$1" default user default &&
                make_user user2 "user2@$1" default user default &&
                make_user oadmin "oadmin@$1" other admin &&
                make_user ouser "ouser@$1" other user
}
