#!/bin/bash
test_description='request signing exactly as Backend.AI, password login, rate limits, the API description'
. "$(dirname "$0")/../lib/test-lib.sh"

TT=$BUILD/test-tool
HOSTPORT=

# raw METHOD PATH CURL-ARGS...: CODE and $TMP/out
raw() {
        local m=$1 p=$2
        shift 2
        CODE=$(curl -s -m 10 -X "$m" -o "$TMP/out" -w '%{http_code}' "$@" "$BACKEND_ENDPOINT$p") || true
}

# Build the signature ourselves, as Backend.AI's client does, with openssl:
# k1 = HMAC(secret, YYYYMMDD), k2 = HMAC(k1, host), sig = HMAC(k2, string).
openssl_sig() { # DATE STRING-TO-SIGN [SECRET] [HASH]
        local hash=${4:-sha256} secret=${3:-$BACKEND_SECRET_KEY} ymd k1 k2
        ymd=$(echo "$1" | cut -c1-10 | tr -d -)
        k1=$(printf %s "$ymd" | openssl dgst -$hash -mac HMAC -macopt "key:$secret" -binary | xxd -p -c 256)
        k2=$(printf %s "$HOSTPORT" | openssl dgst -$hash -mac HMAC -macopt "hexkey:$k1" -binary | xxd -p -c 256)
        printf %s "$2" | openssl dgst -$hash -mac HMAC -macopt "hexkey:$k2" | sed "s/.*= //"
}

signed_get() { # PATH DATE [HASH] [VERSION] [DATE-HEADER]
        local hash=${3:-sha256} ver=${4:-v6.20220315} dh=${5:-Date} empty s sig
        empty=$(printf "" | openssl dgst -$hash | sed "s/.*= //")
        s=$(printf "GET\n%s\n%s\nhost:%s\ncontent-type:text/plain\nx-backendai-version:%s\n%s" "$1" "$2" "$HOSTPORT" "$ver" "$empty")
        sig=$(openssl_sig "$2" "$s" "" "$hash")
        HASHNAME=$(echo "$hash" | tr a-z A-Z)
        raw GET "$1" -H "$dh: $2" -H "X-BackendAI-Version: $ver" -H "Content-Type: text/plain" \
                -H "Authorization: BackendAI signMethod=HMAC-$HASHNAME, credential=$BACKEND_ACCESS_KEY:$sig"
}

now_iso() { date -u -d "${1:-now}" +%Y-%m-%dT%H:%M:%S.%6N+00:00; }

test_expect_success 'start' '
        start_manager && HOSTPORT=${BACKEND_ENDPOINT#http://} &&
        tessera_api POST /admin/images --data "{\"name\": \"a/b\", \"tag\": \"1\"}" >/dev/null &&
        tessera_api POST /session --data "{\"name\": \"mine\", \"image\": \"a/b:1\", \"enqueueOnly\": true}" >/dev/null
'

test_expect_success 'GET / answers, without auth, the version clients negotiate to (SDK 22.03'"'"'s, the newest run against Tessera); requests of newer versions are still accepted' '
        raw GET / && test "$CODE" = 200 &&
        grep -q "{\"version\":\"v8.20240315\",\"manager\":\"" "$TMP/out"
'

test_expect_success 'a request signed independently with openssl is accepted (what a Backend.AI client sends)' '
        signed_get /session/mine "$(now_iso)" && test "$CODE" = 200 && grep -q "\"sessionName\":\"mine\"" "$TMP/out"
'

# without_type TYPE: GET /sessions signed with content type TYPE, sent
# with no Content-Type header; CODE
without_type() {
        local h=() l
        while IFS= read -r l; do case $l in Content-Type:*) ;; *) h+=(-H "$l") ;; esac; done < <("$TT" sign GET \
                /sessions "${BACKEND_ENDPOINT#http://}" "$BACKEND_ACCESS_KEY" "$BACKEND_SECRET_KEY" "$1")
        CODE=$(curl -s -o "$TMP/out" -w "%{http_code}" "${h[@]}" "$BACKEND_ENDPOINT/sessions") || true
}

test_expect_success 'no Content-Type sent: signed with none, as application/octet-stream (what aiohttp reports) or application/json (the SDK'"'"'s app tunnel), but no other type' '
        without_type "" && test "$CODE" = 200 &&
        without_type application/octet-stream && test "$CODE" = 200 &&
        without_type application/json && test "$CODE" = 200 &&
        without_type text/plain && test "$CODE" = 401 && grep -q "signature mismatch" "$TMP/out"
'

test_expect_success 'X-BackendAI-Date, HMAC-SHA1 and HMAC-SHA512, versions v4.20181215 and v9.20250722' '
        signed_get /session/mine "$(now_iso)" sha256 v6.20220315 X-BackendAI-Date && test "$CODE" = 200 &&
        signed_get /session/mine "$(now_iso)" sha1 && test "$CODE" = 200 &&
        signed_get /session/mine "$(now_iso)" sha512 && test "$CODE" = 200 &&
        signed_get /session/mine "$(now_iso)" sha256 v4.20181215 && test "$CODE" = 200 &&
        signed_get /session/mine "$(now_iso)" sha256 v9.20250722 && test "$CODE" = 200
'

test_expect_success 'dates with another offset sign with the date as written' '
        d=$(TZ=Asia/Seoul date +%Y-%m-%dT%H:%M:%S+09:00) &&
        signed_get /session/mine "$d" && test "$CODE" = 200
'

test_expect_success 'skewed dates, bad signatures, unknown keys and versions answer 401 problem+json' '
        signed_get /session/mine "$(now_iso "16 minutes ago")" && test "$CODE" = 401 && grep -q "15 minutes" "$TMP/out" &&
        signed_get /session/mine "$(now_iso "16 minutes")" && test "$CODE" = 401 &&
        signed_get /session/mine "$(now_iso "14 minutes ago")" && test "$CODE" = 200 &&
        signed_get /session/mine "$(now_iso)" sha256 v3.20170101 && test "$CODE" = 401 && grep -q "version" "$TMP/out" &&
        signed_get /session/mine "$(now_iso)" sha256 v9.20990101 && test "$CODE" = 401 &&
        d=$(now_iso) &&
        raw GET /session/mine -H "Date: $d" -H "X-BackendAI-Version: v9.20250722" \
                -H "Authorization: BackendAI signMethod=HMAC-SHA256, credential=$BACKEND_ACCESS_KEY:0000" &&
        test "$CODE" = 401 && grep -q "signature mismatch" "$TMP/out" &&
        raw GET /session/mine -H "Date: $d" -H "X-BackendAI-Version: v9.20250722" \
                -H "Authorization: BackendAI signMethod=HMAC-SHA256, credential=AKIANOTAKEYNOTAKEY00:0000" &&
        test "$CODE" = 401 && grep -q "unknown or inactive" "$TMP/out" &&
        raw GET /session/mine -H "Date: $d" -H "X-BackendAI-Version: v9.20250722" -H "Authorization: Basic Zm9vOmJhcg==" &&
        test "$CODE" = 401 &&
        raw GET /session/mine -H "Date: not a date" -H "X-BackendAI-Version: v9.20250722" \
                -H "Authorization: BackendAI signMethod=HMAC-SHA256, credential=$BACKEND_ACCESS_KEY:00" &&
        test "$CODE" = 401 && grep -q "malformed date" "$TMP/out" &&
        raw GET /session/mine && test "$CODE" = 401 && grep -q "missing Authorization" "$TMP/out" &&
        curl -s -o /dev/null -w "%{content_type}" "$BACKEND_ENDPOINT/session/mine" | grep -q "application/problem+json"
'

test_expect_success 'the signature covers the path: a signed request replayed on another path fails' '
        d=$(now_iso) && empty=$(printf "" | sha256sum | cut -d" " -f1) &&
        s=$(printf "GET\n/session/mine\n%s\nhost:%s\ncontent-type:text/plain\nx-backendai-version:v9.20250722\n%s" "$d" "$HOSTPORT" "$empty") &&
        sig=$(openssl_sig "$d" "$s") &&
        raw GET /session/mine/logs -H "Date: $d" -H "X-BackendAI-Version: v9.20250722" -H "Content-Type: text/plain" \
                -H "Authorization: BackendAI signMethod=HMAC-SHA256, credential=$BACKEND_ACCESS_KEY:$sig" &&
        test "$CODE" = 401
'

test_expect_success 'password login answers the main keypair; wrong passwords and inactive users do not' '
        raw POST /auth/authorize -H "Content-Type: application/json" \
                --data "{\"type\": \"keypair\", \"domain\": \"default\", \"username\": \"admin@tessera.local\", \"password\": \"$TEST_ADMIN_PASSWORD\"}" &&
        test "$CODE" = 200 && grep -q "\"access_key\":\"$BACKEND_ACCESS_KEY\"" "$TMP/out" &&
        grep -q "\"secret_key\":\"$BACKEND_SECRET_KEY\"" "$TMP/out" && grep -q "\"role\":\"superadmin\"" "$TMP/out" &&
        raw POST /auth/authorize -H "Content-Type: application/json" \
                --data "{\"type\": \"keypair\", \"domain\": \"default\", \"username\": \"admin@tessera.local\", \"password\": \"wrong\"}" &&
        test "$CODE" = 401 &&
        tessera_api POST /admin/users --data "{\"email\": \"bob@t.test\", \"password\": \"bob-password\", \"status\": \"inactive\"}" >/dev/null &&
        raw POST /auth/authorize -H "Content-Type: application/json" \
                --data "{\"type\": \"keypair\", \"domain\": \"default\", \"username\": \"bob@t.test\", \"password\": \"bob-password\"}" &&
        test "$CODE" = 401 &&
        raw POST /auth/authorize -H "Content-Type: application/json" --data "{\"type\": \"jwt\"}" && test "$CODE" = 400
'

test_expect_success 'passwords and secrets are not stored in the clear' '
        if [ "$TESSERA_TEST_DB" = sqlite ]; then
                sqlite3 "$MANAGER_STATE/tessera.db" "SELECT password_hash FROM users; SELECT secret_key_sealed FROM keypairs" >"$TMP/stored"
        else
                psql -X -A -t "$TEST_DB_URL" -c "SELECT password_hash FROM users" -c "SELECT secret_key_sealed FROM keypairs" >"$TMP/stored"
        fi &&
        ! grep -q "$TEST_ADMIN_PASSWORD" "$TMP/stored" && ! grep -q "$BACKEND_SECRET_KEY" "$TMP/stored" &&
        grep -q "^scrypt\\$" "$TMP/stored" && grep -q "^v1:" "$TMP/stored"
'

test_expect_success 'update-password checks the old one and takes effect' '
        tessera_api POST /auth/update-password --data "{\"old_password\": \"nope-nope\", \"new_password\": \"new-admin-pw\"}" >"$TMP/out" && false ||
        grep -q "old password" "$TMP/out" &&
        tessera_api POST /auth/update-password --data "{\"old_password\": \"$TEST_ADMIN_PASSWORD\", \"new_password\": \"new-admin-pw\", \"new_password2\": \"new-admin-pw\"}" &&
        raw POST /auth/authorize -H "Content-Type: application/json" \
                --data "{\"type\": \"keypair\", \"domain\": \"default\", \"username\": \"admin@tessera.local\", \"password\": \"new-admin-pw\"}" &&
        test "$CODE" = 200
'

test_expect_success 'the per-keypair rate limit answers 429 with X-RateLimit headers' '
        tessera_api POST /admin/keypairs --data "{}" >"$TMP/kp" &&
        rak=$(sed -n "s/.*\"access_key\": *\"\([A-Z0-9]*\)\".*/\1/p" "$TMP/kp") &&
        rsk=$(sed -n "s/.*\"secret_key\": *\"\([A-Za-z0-9]*\)\".*/\1/p" "$TMP/kp") &&
        tessera_api PATCH /admin/keypairs/$rak --data "{\"rate_limit\": 5}" >/dev/null &&
        for i in 1 2 3 4 5 6 7; do
                h=(); while IFS= read -r l; do h+=(-H "$l"); done < <("$TT" sign GET /auth/role "$HOSTPORT" "$rak" "$rsk" text/plain)
                curl -s -D "$TMP/h$i" -o "$TMP/b$i" "${h[@]}" "$BACKEND_ENDPOINT/auth/role"
        done &&
        grep -qi "^X-RateLimit-Limit: 5" "$TMP/h1" && grep -qi "^X-RateLimit-Window: 900" "$TMP/h1" &&
        grep -qi "^X-RateLimit-Remaining: 4" "$TMP/h1" &&
        grep -q "^HTTP/1.1 200" "$TMP/h5" &&
        grep -q "^HTTP/1.1 429" "$TMP/h7" && grep -qi "^X-RateLimit-Remaining: 0" "$TMP/h7" &&
        grep -q "too-many-requests" "$TMP/b7" &&
        tessera_api GET /auth/role >/dev/null
'

test_expect_success '/openapi.json is the committed docs/openapi.json and is OpenAPI 3' '
        curl -sf "$BACKEND_ENDPOINT/openapi.json" | jq -S . >"$TMP/served" &&
        jq -S . "$TEST_ROOT/docs/openapi.json" >"$TMP/committed" &&
        test_cmp "$TMP/committed" "$TMP/served" &&
        jq -e ".openapi | startswith(\"3.\")" "$TMP/served" >/dev/null &&
        jq -e ".paths[\"/session/{name}\"].get" "$TMP/served" >/dev/null
'

test_expect_success 'metrics count requests by route and status and sessions by status' '
        curl -sf "$BACKEND_ENDPOINT/metrics" >"$TMP/metrics" &&
        grep -q "^tessera_http_requests_total{route=\"/session/{name}\",method=\"GET\",status=\"200\"} [1-9]" "$TMP/metrics" &&
        grep -q "^tessera_http_requests_total{route=\"/session/{name}\",method=\"GET\",status=\"401\"} [1-9]" "$TMP/metrics" &&
        grep -q "^tessera_sessions{status=\"PENDING\"} 1" "$TMP/metrics" &&
        grep -q "^tessera_http_request_duration_seconds_bucket{route=\"/session/{name}\",le=\"+Inf\"}" "$TMP/metrics" &&
        grep -q "^tessera_db_queries_total" "$TMP/metrics"
'

test_expect_success 'the audit log records who changed what, from where, with what outcome' '
        tessera_api GET "/admin/audit-log?action=POST%20/admin/users" >"$TMP/audit" &&
        grep -q "\"remote_addr\":\"127.0.0.1\"" "$TMP/audit" && grep -q "\"status\":201" "$TMP/audit" &&
        grep -q "\"access_key\":\"$BACKEND_ACCESS_KEY\"" "$TMP/audit"
'

test_expect_success 'X-Forwarded-For is ignored from any peer but a trusted front' '
        API_HEADER="X-Forwarded-For: 203.0.113.7" api POST /admin/keypair-policies "{\"name\": \"xff-a\"}" &&
        test "$CODE" = 201 &&
        OUT=$TMP/audit api GET "/admin/audit-log?action=POST%20/admin/keypair-policies" &&
        jq -e "[.items[].remote_addr] | index(\"203.0.113.7\") == null and index(\"127.0.0.1\") != null" "$TMP/audit"
'

test_expect_success 'behind a trusted front (trusted_proxies) the client is the address it appended last' '
        stop_manager &&
        printf "trusted_proxies = \"10.9.9.9, 127.0.0.1\"\n" >"$TMP/front.conf" &&
        start_manager --config "$TMP/front.conf" &&
        API_HEADER="X-Forwarded-For: 198.51.100.1, 203.0.113.9" api POST /admin/keypair-policies "{\"name\": \"xff-b\"}" &&
        test "$CODE" = 201 &&
        API_HEADER="X-Forwarded-For: not-an-address" api POST /admin/keypair-policies "{\"name\": \"xff-c\"}" &&
        test "$CODE" = 201 &&
        OUT=$TMP/audit api GET "/admin/audit-log?action=POST%20/admin/keypair-policies" &&
        jq -c "[.items[] | {remote_addr, ts}]" "$TMP/audit" &&
        jq -e "[.items[].remote_addr] | index(\"203.0.113.9\") != null and index(\"198.51.100.1\") == null
                and index(\"not-an-address\") == null" "$TMP/audit"
'

# signed_headers METHOD PATH HOST [CONTENT_TYPE [BODY]]: h=(-H ...) of a
# request signed (by test-tool) for HOST, which it also carries
signed_headers() {
        h=(-H "Host: $3")
        while IFS= read -r l; do h+=(-H "$l"); done < <("$TT" sign "$1" "$2" "$3" "$BACKEND_ACCESS_KEY" \
                "$BACKEND_SECRET_KEY" "${4:-text/plain}" ${5:+"$5"})
}

test_expect_success 'a request signed for a host name that is not the manager'"'"'s is refused (public_hosts)' '
        port=${HOSTPORT##*:} &&
        signed_headers GET /auth/role "evil.example:$port" && raw GET /auth/role "${h[@]}" &&
        test "$CODE" = 401 && grep -q "signed for host .evil.example:$port., which is not this manager" "$TMP/out" &&
        signed_headers GET /auth/role "localhost:$port" && raw GET /auth/role "${h[@]}" && test "$CODE" = 200 &&
        signed_headers GET /auth/role "LOCALHOST.:$port" && raw GET /auth/role "${h[@]}" && test "$CODE" = 200
'

test_expect_success 'a signature that binds the body (X-Tessera-Content-Hash) holds for that body only' '
        signed_headers POST /folders "$HOSTPORT" application/json "{\"name\": \"bound-a\"}" &&
        grep -q "X-Tessera-Content-Hash: [0-9a-f]\{64\}\$" <<<"${h[*]}" &&
        raw POST /folders "${h[@]}" --data "{\"name\": \"bound-b\"}" && test "$CODE" = 401 &&
        grep -q "body does not match the signed X-Tessera-Content-Hash" "$TMP/out" &&
        raw POST /folders "${h[@]}" --data "{\"name\": \"bound-a\"}" && test "$CODE" = 201 &&
        api GET /folders && jq -e "[.[].name] | index(\"bound-a\") != null and index(\"bound-b\") == null" "$TMP/out" >/dev/null &&
        # a Backend.AI client signs the empty body'"'"'s hash: its requests with a body still work
        signed_headers POST /folders "$HOSTPORT" application/json &&
        raw POST /folders "${h[@]}" --data "{\"name\": \"bound-c\"}" && test "$CODE" = 201 &&
        # and the CLI binds its bodies
        "$TESSERA" vfolder create bound-d >/dev/null &&
        api GET /folders && jq -e "[.[].name] | index(\"bound-d\") != null" "$TMP/out" >/dev/null
'

test_done
