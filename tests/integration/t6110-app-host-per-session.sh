#!/bin/bash
test_description='a host name per session (app_url = http://*.apps.test:PORT): start-service links each session'"'"'s app to <session id>.apps.test on the app listener, never the API'"'"'s origin; the link, through the web UI'"'"'s login check, serves the app there with a host-only cookie; one session'"'"'s cookie gets nothing of another session'"'"'s app; the app listener refuses a Host that is not the session'"'"'s own, the API'"'"'s origin every /apps/; a link opens only for its own user; in chromium a page of one session'"'"'s app cannot read another'"'"'s'
. "$(dirname "$0")/../lib/test-lib.sh"
. "$(dirname "$0")/../lib/registry.sh"

test_with_containers
command -v jq >/dev/null 2>&1 || skip_all "needs jq (scripts/install-deps.sh test)"

# the busybox image with an app `web`: busybox httpd serving /tmp/www
LABELS='{"ai.backend.service-ports": "web:http:8080",
         "ai.backend.service-start.web": "[\"/bin/busybox\", \"httpd\", \"-f\", \"-p\", \"127.0.0.1:{port}\", \"-h\", \"/tmp/www\"]"}'

# The API (and web UI) on one port, the app listener on another; browsers
# reach the app listener as <session id>.apps.test (curl --connect-to and
# chromium's --host-resolver-rules send every *.apps.test to 127.0.0.1).
MANAGER_LISTEN_PORT=$(test_free_port)
APP_PORT=$(test_free_port)
while [ "$APP_PORT" = "$MANAGER_LISTEN_PORT" ]; do APP_PORT=$(test_free_port); done
WEB=http://127.0.0.1:$MANAGER_LISTEN_PORT
cat >"$TMP/manager.conf" <<EOF
web_url = "$WEB"
app_url = "http://*.apps.test:$APP_PORT"
EOF
MANAGER_ARGS="--config $TMP/manager.conf --app-listen 127.0.0.1:$APP_PORT"

. "$(dirname "$0")/../lib/app-users.sh"
declare -A SID HOST APPS SECRET LINK

# web_login JAR EMAIL PASSWORD: a fresh browser (cookie jar JAR) logs in
# to the web UI
web_login() {
        local code
        : >"$1"
        code=$(curl -s -o /dev/null -w '%{http_code}' -b "$1" -c "$1" -H 'Content-Type: application/json' \
                --data "{\"email\": \"$2\", \"password\": \"$3\"}" "$WEB/server/login")
        test "$code" = 200 || { echo "login $2: $code"; return 1; }
}

# browse JAR URL: GET URL as the browser of JAR does, following redirects
# (at most 8) with its cookies, every *.apps.test at 127.0.0.1: "STATUS
# URL" per hop in $TMP/hops, each hop's headers in $TMP/heads, the last
# body in $TMP/body
browse() {
        local jar=$1 url=$2 out code
        : >"$TMP/hops"
        : >"$TMP/heads"
        for _ in 1 2 3 4 5 6 7 8; do
                out=$(curl -s -o "$TMP/body" -D "$TMP/head" -w '%{http_code} %{redirect_url}' -b "$jar" -c "$jar" \
                        --connect-to ::127.0.0.1: "$url") || { echo "curl $url failed"; return 1; }
                code=${out%% *}
                echo "$code $url" >>"$TMP/hops"
                cat "$TMP/head" >>"$TMP/heads"
                case $code in 301 | 302 | 303 | 307 | 308) ;; *) break ;; esac
                url=${out#* }
                [ -n "$url" ] || break
        done
        cat "$TMP/hops"
}

# jar_cookie JAR HOST NAME: "SUBDOMAINS PATH VALUE" of the cookie NAME the
# jar holds for HOST (SUBDOMAINS FALSE: host-only)
jar_cookie() {
        awk -F'\t' -v h="$2" -v n="$3" '{ d = $1; sub(/^#HttpOnly_/, "", d) } NF == 7 && d == h && $6 == n { print $2, $3, $7 }' "$1"
}

# at HOSTPORT PATH [CURL ARGS...]: GET http://HOSTPORT/PATH at the app
# listener (Host: HOSTPORT, whatever its name and port); prints the
# status, the body in $TMP/r
at() {
        local host=$1 path=$2
        shift 2
        curl -s -o "$TMP/r" -w '%{http_code}' --connect-to "::127.0.0.1:$APP_PORT" "$@" "http://$host$path"
}

# refused WANT HOSTPORT PATH [CURL ARGS...]: `at` answers WANT (a refusal)
# and nothing of either session's page
refused() {
        local want=$1 code
        shift
        code=$(at "$@")
        test "$code" = "$want" || { echo "$1$2: wanted $want, got $code: $(head -c 300 "$TMP/r")"; return 1; }
        ! grep -q -e "${SECRET[a]}" -e "${SECRET[b]}" "$TMP/r" || { echo "$1$2: the app answered"; return 1; }
}

# start_app WHO X: WHO's start-service of app web in session X (a or b);
# LINK[X] its url, the answer in $TMP/out
start_app() {
        local who=$1 x=$2
        as "$who" api POST "/session/${SID[$x]}/start-service" '{"app": "web"}'
        [ "$CODE" = 200 ] || { echo "start-service $x as $who: $CODE $(cat "$TMP/out")"; return 1; }
        LINK[$x]=$(jq -r .url "$TMP/out")
}

test_expect_success 'a host name per session needs web_url (where the link checks the login)' '
        printf "app_url = \"http://*.apps.test:%s\"\n" "$APP_PORT" >"$TMP/no-web.conf" &&
        test_must_fail "$TESSERA" dev --config "$TMP/no-web.conf" --state-dir "$TMP/no-web" --print-config 2>"$TMP/err" &&
        grep -q "app_url: a host name per session (\*) needs web_url" "$TMP/err" &&
        "$TESSERA" dev --config "$TMP/manager.conf" --state-dir "$TMP/no-web" --print-config >"$TMP/conf.out" &&
        grep -q "^app_url = \"http://\*.apps.test:$APP_PORT\"" "$TMP/conf.out"
'

test_expect_success 'a manager with app_url http://*.apps.test and an agent; alice and bob each run a session with an HTTP app' '
        registry_start && registry_push busybox busybox:latest &&
        WITH_AGENT="--agent-network none" start_manager &&
        test "$BACKEND_ENDPOINT" = "$WEB" &&
        api POST /admin/images "{\"name\": \"busybox\", \"tag\": \"latest\", \"registry\": \"$REGISTRY\", \"labels\": $LABELS}" &&
        { test "$CODE" = 201 || { echo "image: $CODE $(cat "$TMP/out")"; false; }; } &&
        AK[admin]=$TEST_ADMIN_ACCESS_KEY SK[admin]=$TEST_ADMIN_SECRET_KEY &&
        make_user alice && make_user bob &&
        as alice create_session pageA interactive && SID[a]=$(jq -r .sessionId "$TMP/out") &&
        as bob create_session pageB interactive && SID[b]=$(jq -r .sessionId "$TMP/out") &&
        as alice wait_status pageA RUNNING && as bob wait_status pageB RUNNING &&
        for x in a b; do
                HOST[$x]=${SID[$x]}.apps.test:$APP_PORT && APPS[$x]=http://${HOST[$x]} &&
                SECRET[$x]=$(head -c 12 /dev/urandom | od -An -tx1 | tr -d " \n") || return 1
        done &&
        as alice session_run pageA "mkdir -p /tmp/www/apps/${SID[a]}/web && echo \"page of session a ${SECRET[a]}\" >/tmp/www/apps/${SID[a]}/web/index.html && echo \"secret of a ${SECRET[a]}\" >/tmp/www/apps/${SID[a]}/web/secret.txt" &&
        test "$EXIT" = 0 &&
        as bob session_run pageB "mkdir -p /tmp/www/apps/${SID[b]}/web && echo \"page of session b ${SECRET[b]}\" >/tmp/www/apps/${SID[b]}/web/index.html && echo \"secret of b ${SECRET[b]}\" >/tmp/www/apps/${SID[b]}/web/secret.txt" &&
        test "$EXIT" = 0
'

test_expect_success 'start-service: the link names the session'"'"'s own host on the app listener, never the API'"'"'s origin' '
        start_app alice a &&
        TOKEN=$(jq -r .token "$TMP/out") && test ${#TOKEN} = 64 &&
        test "$(jq -r .wsproxy_addr "$TMP/out")" = "${APPS[a]}" &&
        test "${LINK[a]}" = "${APPS[a]}/apps/_/open?token=$TOKEN" &&
        test "$(jq -r .path "$TMP/out")" = "/apps/${SID[a]}/web/" &&
        ! grep -q -e "127.0.0.1" -e ":$MANAGER_PORT" "$TMP/out" &&
        start_app bob b &&
        test "$(jq -r .wsproxy_addr "$TMP/out")" = "${APPS[b]}" &&
        case "${LINK[b]}" in "${APPS[b]}/apps/_/open?token="*) ;; *) false ;; esac &&
        as alice "$TESSERA" session app start pageA web >"$TMP/cli" 2>"$TMP/cli.err" &&
        case "$(cat "$TMP/cli")" in "${APPS[a]}/apps/_/open?token="*) ;; *) cat "$TMP/cli" "$TMP/cli.err"; false ;; esac
'

test_expect_success 'alice'"'"'s browser follows her link: the web UI'"'"'s login check, then her app'"'"'s page on her session'"'"'s host' '
        web_login "$TMP/alice" alice@apps.test apps-password-1 &&
        browse "$TMP/alice" "${LINK[a]}" &&
        test "$(wc -l <"$TMP/hops")" = 4 &&
        sed -n 1p "$TMP/hops" | grep -qxF "302 ${LINK[a]}" &&
        sed -n 2p "$TMP/hops" | grep -q "^302 $WEB/server/app-login?token=$TOKEN&state=[0-9a-f]*\$" &&
        sed -n 3p "$TMP/hops" | grep -q "^302 ${APPS[a]}/apps/_/open?code=[0-9a-f]*\$" &&
        sed -n 4p "$TMP/hops" | grep -qxF "200 ${APPS[a]}/apps/${SID[a]}/web/" &&
        grep -qx "page of session a ${SECRET[a]}" "$TMP/body"
'

test_expect_success 'the app cookie (and the state cookie) are host-only for that session'"'"'s host, the app'"'"'s path' '
        grep -i "^Set-Cookie: tessera_app=" "$TMP/heads" >"$TMP/set" && test "$(wc -l <"$TMP/set")" = 1 &&
        grep -q "Path=/apps/${SID[a]}/web/;" "$TMP/set" && grep -q HttpOnly "$TMP/set" && grep -q "SameSite=Lax" "$TMP/set" &&
        ! grep -i "^Set-Cookie:" "$TMP/heads" | grep -qi "domain=" &&
        set -- $(jar_cookie "$TMP/alice" "${SID[a]}.apps.test" tessera_app) &&
        test "$1" = FALSE && test "$2" = "/apps/${SID[a]}/web/" && test ${#3} = 64 && COOKIE_A=$3 &&
        test "$(grep -c "	tessera_app	" "$TMP/alice")" = 1 &&
        grep -i "^Set-Cookie: tessera_app_state=" "$TMP/heads" | head -n 1 | grep -q "Path=/apps/_/;" &&
        test -z "$(jar_cookie "$TMP/alice" "${SID[a]}.apps.test" tessera_app_state)"
'

test_expect_success 'bob opens his app on his own host: his page, his own host-only cookie' '
        web_login "$TMP/bob" bob@apps.test apps-password-1 &&
        browse "$TMP/bob" "${LINK[b]}" &&
        tail -n 1 "$TMP/hops" | grep -qxF "200 ${APPS[b]}/apps/${SID[b]}/web/" &&
        grep -qx "page of session b ${SECRET[b]}" "$TMP/body" &&
        set -- $(jar_cookie "$TMP/bob" "${SID[b]}.apps.test" tessera_app) &&
        test "$1" = FALSE && test "$2" = "/apps/${SID[b]}/web/" && test ${#3} = 64 && COOKIE_B=$3 &&
        test "$COOKIE_B" != "$COOKIE_A"
'

test_expect_success 'each cookie on its own host and path reaches its app' '
        code=$(at "${HOST[a]}" "/apps/${SID[a]}/web/secret.txt" -H "Cookie: tessera_app=$COOKIE_A") && test "$code" = 200 &&
        grep -qx "secret of a ${SECRET[a]}" "$TMP/r" &&
        code=$(at "${HOST[b]}" "/apps/${SID[b]}/web/secret.txt" -H "Cookie: tessera_app=$COOKIE_B") && test "$code" = 200 &&
        grep -qx "secret of b ${SECRET[b]}" "$TMP/r"
'

test_expect_success 'alice'"'"'s browser gets nothing of bob'"'"'s app: its cookie stays on her host, bob'"'"'s host refuses her (403)' '
        browse "$TMP/alice" "${APPS[b]}/apps/${SID[b]}/web/secret.txt" &&
        test "$(cat "$TMP/hops")" = "403 ${APPS[b]}/apps/${SID[b]}/web/secret.txt" &&
        ! grep -q "${SECRET[b]}" "$TMP/body" && grep -q "no valid app cookie" "$TMP/body" &&
        ! grep -q "${SID[b]}" "$TMP/alice"
'

test_expect_success 'session a'"'"'s cookie on session b'"'"'s host: b'"'"'s path 403, a'"'"'s path 421; and the other way round' '
        refused 403 "${HOST[b]}" "/apps/${SID[b]}/web/secret.txt" -H "Cookie: tessera_app=$COOKIE_A" &&
        refused 403 "${HOST[b]}" "/apps/${SID[b]}/web/" -H "Cookie: tessera_app=$COOKIE_A" &&
        refused 421 "${HOST[b]}" "/apps/${SID[a]}/web/secret.txt" -H "Cookie: tessera_app=$COOKIE_A" &&
        grep -q "its own host name" "$TMP/r" &&
        refused 403 "${HOST[a]}" "/apps/${SID[a]}/web/secret.txt" -H "Cookie: tessera_app=$COOKIE_B" &&
        refused 421 "${HOST[a]}" "/apps/${SID[b]}/web/secret.txt" -H "Cookie: tessera_app=$COOKIE_B" &&
        refused 421 "${HOST[a]}" "/apps/${SID[b]}/web/secret.txt" -H "Cookie: tessera_app=$COOKIE_A; tessera_app=$COOKIE_B"
'

test_expect_success 'the app listener refuses (421) a Host that is not the session'"'"'s: the bare domain, other names, the API'"'"'s host, none' '
        for h in "apps.test:$APP_PORT" apps.test "www.apps.test:$APP_PORT" "other.example:$APP_PORT" \
                "127.0.0.1:$APP_PORT" "127.0.0.1:$MANAGER_PORT" "localhost:$APP_PORT" "${HOST[b]}" \
                "x${SID[a]}.apps.test:$APP_PORT" "${SID[a]}:$APP_PORT"; do
                refused 421 "$h" "/apps/${SID[a]}/web/secret.txt" -H "Cookie: tessera_app=$COOKIE_A" || return 1
        done &&
        refused 421 "${HOST[a]}" "/apps/${SID[a]}/web/secret.txt" -H "Host: apps.test:$APP_PORT" \
                -H "Cookie: tessera_app=$COOKIE_A" &&
        refused 421 "${HOST[a]}" "/apps/${SID[a]}/web/secret.txt" -0 -H "Host:" -H "Cookie: tessera_app=$COOKIE_A"
'

test_expect_success 'the app listener refuses (421) the session'"'"'s id under another domain (its own host is the id under app_url'"'"'s domain, nothing else)' '
        refused 421 "${SID[a]}.evil.example:$APP_PORT" "/apps/${SID[a]}/web/secret.txt" -H "Cookie: tessera_app=$COOKIE_A" &&
        refused 421 "${SID[a]}.apps.test.evil.example:$APP_PORT" "/apps/${SID[a]}/web/secret.txt" \
                -H "Cookie: tessera_app=$COOKIE_A"
'

test_expect_success 'a link opens on its own session'"'"'s host only (421 elsewhere); the session hosts serve no API, no web UI' '
        start_app alice a &&
        refused 421 "${HOST[b]}" "/apps/_/open?token=${LINK[a]##*token=}" &&
        grep -q "another host name" "$TMP/r" &&
        refused 421 "apps.test:$APP_PORT" "/apps/_/open?token=${LINK[a]##*token=}" &&
        refused 421 "127.0.0.1:$APP_PORT" "/apps/_/open?token=${LINK[a]##*token=}" &&
        code=$(at "${HOST[a]}" "/apps/_/open?token=${LINK[a]##*token=}") && test "$code" = 302 &&
        for path in / /server/session /server/login /sessions /openapi.json /metrics "/apps/${SID[a]}/web"; do
                code=$(at "${HOST[a]}" "$path" -b "$TMP/alice") || return 1
                case $path in /apps/*) test "$code" = 301 ;; *) test "$code" = 404 ;; esac ||
                        { echo "$path: $code"; return 1; }
        done
'

test_expect_success 'the API'"'"'s origin still refuses every /apps/ (421), whatever the cookie, token or Host' '
        start_app alice a &&
        for path in "/apps/${SID[a]}/web/" "/apps/${SID[a]}/web/secret.txt" "/apps/_/open?token=${LINK[a]##*token=}"; do
                code=$(curl -s -o "$TMP/r" -w "%{http_code}" -H "Cookie: tessera_app=$COOKIE_A" "$WEB$path") &&
                test "$code" = 421 && grep -q "never served on the API" "$TMP/r" &&
                code=$(curl -s -o "$TMP/r" -w "%{http_code}" -H "Host: ${HOST[a]}" -H "Cookie: tessera_app=$COOKIE_A" \
                        "$WEB$path") &&
                test "$code" = 421 && ! grep -q "${SECRET[a]}" "$TMP/r" || { echo "$path: $code"; return 1; }
        done
'

test_expect_success 'the link is its user'"'"'s: bob'"'"'s login, no login, the admin'"'"'s login open nothing of alice'"'"'s app' '
        start_app alice a &&
        browse "$TMP/bob" "${LINK[a]}" &&
        tail -n 1 "$TMP/hops" | grep -q "^403 $WEB/server/app-login?token=" && grep -q "someone else" "$TMP/body" &&
        test -z "$(jar_cookie "$TMP/bob" "${SID[a]}.apps.test" tessera_app)" &&
        browse "$TMP/bob" "${APPS[a]}/apps/${SID[a]}/web/secret.txt" && grep -q "^403 " "$TMP/hops" &&
        : >"$TMP/anon" && browse "$TMP/anon" "${LINK[a]}" &&
        tail -n 1 "$TMP/hops" | grep -q "^401 $WEB/server/app-login?token=" &&
        test -z "$(jar_cookie "$TMP/anon" "${SID[a]}.apps.test" tessera_app)" &&
        web_login "$TMP/admin" "$TEST_ADMIN_EMAIL" "$TEST_ADMIN_PASSWORD" &&
        browse "$TMP/admin" "${LINK[a]}" && tail -n 1 "$TMP/hops" | grep -q "^403 $WEB/server/app-login" &&
        ! grep -q "${SECRET[a]}" "$TMP/body" &&
        test -z "$(jar_cookie "$TMP/admin" "${SID[a]}.apps.test" tessera_app)"
'

test_expect_success 'alice'"'"'s code, taken to bob'"'"'s browser, opens nothing there' '
        start_app alice a &&
        code=$(curl -s -o /dev/null -w "%{http_code} %{redirect_url}" -b "$TMP/alice" -c "$TMP/alice" \
                --connect-to ::127.0.0.1: "${LINK[a]}") && test "${code%% *}" = 302 &&
        code=$(curl -s -o /dev/null -w "%{http_code} %{redirect_url}" -b "$TMP/alice" -c "$TMP/alice" "${code#* }") &&
        test "${code%% *}" = 302 && CODE_URL=${code#* } &&
        case "$CODE_URL" in "${APPS[a]}/apps/_/open?code="*) ;; *) false ;; esac &&
        browse "$TMP/bob" "$CODE_URL" && test "$(cut -d" " -f1 "$TMP/hops")" = 403 &&
        test -z "$(jar_cookie "$TMP/bob" "${SID[a]}.apps.test" tessera_app)"
'

# In chromium: the admin opens both apps (its own links); on session a's
# page, scripts read a's app (same origin) but not b's (another origin),
# though the browser holds b's cookie and b's page loads in a frame.
BROWSER_JS=$TMP/cross-origin.mjs
cat >"$BROWSER_JS" <<'EOF'
import { createRequire } from 'node:module';
import path from 'node:path';

const E = process.env;
const require = createRequire(path.join(E.NODE_MODULES, 'noop.js'));
const { chromium } = require('playwright-core');
const browser = await chromium.launch({
  executablePath: E.CHROMIUM,
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--host-resolver-rules=MAP *.apps.test 127.0.0.1'],
});
const out = {};
try {
  const context = await browser.newContext();
  const login = await context.request.post(`${E.WEB}/server/login`, { data: { email: E.EMAIL, password: E.PASSWORD } });
  out.login = login.status();
  const open = async (link) => {
    const page = await context.newPage();
    const r = await page.goto(link, { timeout: 30_000 });
    return { page, status: r.status(), url: page.url(), text: (await page.textContent('body')).trim() };
  };
  const a = await open(E.LINK_A), b = await open(E.LINK_B);
  out.a = { status: a.status, url: a.url, text: a.text };
  out.b = { status: b.status, url: b.url, text: b.text };
  out.cookies = (await context.cookies()).filter((c) => c.name === 'tessera_app')
    .map((c) => ({ domain: c.domain, path: c.path })).sort((x, y) => x.domain.localeCompare(y.domain));
  out.origin = await a.page.evaluate(() => location.origin);
  out.read = await a.page.evaluate(async ({ own, other, otherPage }) => {
    const r = {};
    const get = async (url) => {
      try {
        const x = await fetch(url, { credentials: 'include' });
        return { status: x.status, text: (await x.text()).trim() };
      } catch (e) {
        return { error: String(e) };
      }
    };
    r.own = await get(own);
    r.other = await get(other);
    const f = document.createElement('iframe');
    f.src = otherPage;
    const loaded = new Promise((res) => { f.onload = res; setTimeout(res, 15_000); });
    document.body.appendChild(f);
    await loaded;
    try {
      r.frame = { text: f.contentWindow.document.body.textContent.trim() };
    } catch (e) {
      r.frame = { error: String(e) };
    }
    return r;
  }, { own: E.OWN, other: E.OTHER, otherPage: E.OTHER_PAGE });
  /* what the frame holds, as the browser (not the page) sees it */
  const frame = a.page.frames().find((fr) => fr !== a.page.mainFrame());
  out.frame_seen = frame ? (await frame.textContent('body')).trim() : null;
} finally {
  await browser.close();
}
console.log(JSON.stringify(out));
EOF

CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
if [ -x "$CHROMIUM" ] && command -v node >/dev/null 2>&1 &&
        NODE_MODULES=$("$TEST_ROOT/scripts/web-deps.sh" 2>/dev/null) && [ -d "$NODE_MODULES/playwright-core" ]; then
        test_set_prereq BROWSER
fi

test_expect_success BROWSER 'chromium: on session a'"'"'s page scripts read a'"'"'s app but not b'"'"'s, whose cookie the browser holds' '
        start_app admin a && start_app admin b &&
        env NODE_MODULES="$NODE_MODULES" CHROMIUM="$CHROMIUM" WEB="$WEB" EMAIL="$TEST_ADMIN_EMAIL" \
                PASSWORD="$TEST_ADMIN_PASSWORD" LINK_A="${LINK[a]}" LINK_B="${LINK[b]}" \
                OWN="/apps/${SID[a]}/web/secret.txt" OTHER="${APPS[b]}/apps/${SID[b]}/web/secret.txt" \
                OTHER_PAGE="${APPS[b]}/apps/${SID[b]}/web/" timeout 120 node "$BROWSER_JS" >"$TMP/browser.json" &&
        jq . "$TMP/browser.json" &&
        jq -e --arg a "${APPS[a]}" --arg sa "${SID[a]}" --arg sb "${SID[b]}" --arg xa "${SECRET[a]}" --arg xb "${SECRET[b]}" "
                .login == 200 and
                .a.status == 200 and .a.url == \"\(\$a)/apps/\(\$sa)/web/\" and .a.text == \"page of session a \(\$xa)\" and
                .b.status == 200 and .b.text == \"page of session b \(\$xb)\" and
                (.cookies | sort) == ([{domain: \"\(\$sa).apps.test\", path: \"/apps/\(\$sa)/web/\"},
                                       {domain: \"\(\$sb).apps.test\", path: \"/apps/\(\$sb)/web/\"}] | sort) and
                .origin == \$a and
                .read.own == {status: 200, text: \"secret of a \(\$xa)\"} and
                (.read.other | has(\"error\")) and (.read.other | tostring | contains(\$xb) | not) and
                (.read.frame.error | test(\"SecurityError|cross-origin\")) and
                .frame_seen == \"page of session b \(\$xb)\"" "$TMP/browser.json"
'

test_done
