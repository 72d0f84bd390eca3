#!/bin/bash
test_description='container registries in the manager: create, validate, keep the password to themselves; a rescan registers the images of the catalog (pages, indexes, labels, a project prefix, Basic auth) as a background task followed by events; forgotten images come back, gone ones are reported missing; the CLI'
. "$(dirname "$0")/../lib/test-lib.sh"
. "$(dirname "$0")/../lib/registry.sh"

for tool in docker-registry skopeo jq python3 curl; do
        command -v $tool >/dev/null 2>&1 || skip_all "needs $tool (scripts/install-deps.sh test)"
done
[ -x "$BUILD/test-tool" ] || skip_all "$BUILD/test-tool is not built"
TT=$BUILD/test-tool
REGS=/admin/container-registries

# variant SRC DST JQ: a copy of the OCI layout SRC at DST whose image config
# is changed by the jq filter JQ (new config, manifest and index.json)
variant() {
        local src=$1 dst=$2 b m cfg ncfg nm
        rm -rf "$dst" && mkdir -p "$dst" && cp -a "$src/." "$dst/" || return 1
        b=$dst/blobs/sha256
        m=$(jq -r '.manifests[0].digest' "$src/index.json") &&
        cfg=$(jq -r .config.digest "$b/${m#sha256:}") &&
        jq -c "$3" "$b/${cfg#sha256:}" | tr -d '\n' >"$TMP/cfg.json" &&
        ncfg=sha256:$(sha256sum <"$TMP/cfg.json" | cut -d' ' -f1) && cp "$TMP/cfg.json" "$b/${ncfg#sha256:}" &&
        jq -c --arg d "$ncfg" --argjson s "$(stat -c %s "$TMP/cfg.json")" '.config.digest = $d | .config.size = $s' \
                "$b/${m#sha256:}" | tr -d '\n' >"$TMP/man.json" &&
        nm=sha256:$(sha256sum <"$TMP/man.json" | cut -d' ' -f1) && cp "$TMP/man.json" "$b/${nm#sha256:}" &&
        jq --arg d "$nm" --argjson s "$(stat -c %s "$TMP/man.json")" \
                '.manifests[0].digest = $d | .manifests[0].size = $s' "$src/index.json" >"$dst/index.json"
}

# push_layout DIR REF [--all]: push the image of an OCI layout to $REGISTRY/REF
push_layout() {
        local own
        own=$(jq -r '.manifests[0].annotations["org.opencontainers.image.ref.name"]' "$1/index.json") &&
        skopeo copy --quiet --insecure-policy --dest-tls-verify=false ${REGISTRY_CREDS:+--dest-creds "$REGISTRY_CREDS"} \
                ${3:-} "oci:$1:$own" "docker://$REGISTRY/$2"
}

# proxy_start TARGET DELAY: a registry proxy on loopback in front of TARGET
# (host:port) that waits DELAY seconds before each answer and asks for pages
# of 2 names (n=100 -> n=2), logging requests; sets PROXY (127.0.0.1:PORT)
# and PROXY_LOG.  A TARGET nobody listens on makes a registry that hangs
# (DELAY 1000).
proxy_start() {
        local dir=$TMP/proxy.$RANDOM
        mkdir -p "$dir"
        cat >"$dir/proxy.py" <<'EOF'
import http.server, sys, time, urllib.error, urllib.request
target, delay, port_file = sys.argv[1], float(sys.argv[2]), sys.argv[3]
KEEP = ("content-type", "docker-content-digest", "link", "www-authenticate")
class Proxy(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        print(self.path, flush=True)
        time.sleep(delay)
        path = self.path.replace("n=100", "n=2")
        headers = {k: v for k, v in self.headers.items() if k.lower() in ("accept", "authorization")}
        try:
            r = urllib.request.urlopen(urllib.request.Request("http://" + target + path, headers=headers))
            status, hdrs, body = r.status, r.headers, r.read()
        except urllib.error.HTTPError as e:
            status, hdrs, body = e.code, e.headers, e.read()
        self.send_response(status)
        for k, v in hdrs.items():
            if k.lower() in KEEP:
                self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Proxy)
open(port_file, "w").write(str(server.server_address[1]))
server.serve_forever()
EOF
        python3 "$dir/proxy.py" "$1" "$2" "$dir/port" </dev/null >"$dir/requests.log" 2>&1 &
        REGISTRY_PIDS+=("$!")
        for _ in $(seq 1 100); do [ -s "$dir/port" ] && break; sleep 0.05; done
        [ -s "$dir/port" ] || { cat "$dir/requests.log"; return 1; }
        PROXY=127.0.0.1:$(cat "$dir/port") PROXY_LOG=$dir/requests.log
}

# sse TASK: the task's event stream (until the manager closes it) into $TMP/sse
sse() {
        local path="/events/background-task?taskId=$1" h=()
        while IFS= read -r l; do h+=(-H "$l"); done < <("$TT" sign GET "$path" "${BACKEND_ENDPOINT#http://}" \
                "$BACKEND_ACCESS_KEY" "$BACKEND_SECRET_KEY" text/plain)
        curl -sN -m 60 "${h[@]}" "$BACKEND_ENDPOINT$path" >"$TMP/sse"
}

# rescan NAME: POST .../rescan (202); TASK gets the task id
rescan() {
        api POST "$REGS/$1/rescan" &&
        { test "$CODE" = 202 || { echo "rescan $1: $CODE $(cat "$TMP/out")"; return 1; }; } &&
        TASK=$(jq -r .task_id "$TMP/out") && test -n "$TASK"
}

# task_done TASK: wait for the task to end; its JSON in $TMP/task; it must be done
task_done() {
        for _ in $(seq 1 300); do
                OUT=$TMP/task api GET "/background-tasks/$1"
                [ "$(jq -r .status "$TMP/task")" != ongoing ] && break
                sleep 0.1
        done
        jq -e '.status == "done"' "$TMP/task" >/dev/null || { echo "task $1: $(cat "$TMP/task")"; return 1; }
}

# result FILTER: a jq test of the last task's result
result() {
        jq -e ".result | $1" "$TMP/task" >/dev/null || { echo "result lacks $1: $(jq -c .result "$TMP/task")"; return 1; }
}

test_expect_success 'a registry with five repositories: tags, a label, a two-platform index' '
        registry_start &&
        BUSYBOX=$(test_image busybox) &&
        registry_push busybox busybox:latest &&
        registry_push busybox team/busybox:1 && registry_push busybox team/busybox:2 &&
        registry_push busybox team/busybox:3 && registry_push busybox team/tools/bb:2 &&
        variant "$BUSYBOX" "$TMP/labelled" ".config.Labels[\"org.example.flavour\"] = \"labelled\"" &&
        push_layout "$TMP/labelled" team/labelled:1 &&
        variant "$BUSYBOX" "$TMP/arm" ".architecture = \"arm64\" | .variant = \"v8\"" &&
        mkdir -p "$TMP/multi" && cp -a "$BUSYBOX/." "$TMP/multi/" && cp -a "$TMP/arm/blobs/." "$TMP/multi/blobs/" &&
        b=$TMP/multi/blobs/sha256 && A=$(jq -r ".manifests[0].digest" "$BUSYBOX/index.json") &&
        R=$(jq -r ".manifests[0].digest" "$TMP/arm/index.json") &&
        jq -cn --arg a "$A" --argjson asz $(stat -c %s "$b/${A#sha256:}") --arg r "$R" \
                --argjson rsz $(stat -c %s "$b/${R#sha256:}") "{schemaVersion: 2,
                mediaType: \"application/vnd.oci.image.index.v1+json\", manifests: [
                {mediaType: \"application/vnd.oci.image.manifest.v1+json\", digest: \$a, size: \$asz,
                 platform: {os: \"linux\", architecture: \"amd64\"}},
                {mediaType: \"application/vnd.oci.image.manifest.v1+json\", digest: \$r, size: \$rsz,
                 platform: {os: \"linux\", architecture: \"arm64\", variant: \"v8\"}},
                {mediaType: \"application/vnd.oci.image.manifest.v1+json\", digest: \$a, size: \$asz,
                 platform: {os: \"unknown\", architecture: \"unknown\"}}]}" | tr -d "\n" >"$TMP/index.json" &&
        I=sha256:$(sha256sum <"$TMP/index.json" | cut -d" " -f1) && cp "$TMP/index.json" "$b/${I#sha256:}" &&
        jq -n --arg d "$I" --argjson s $(stat -c %s "$TMP/index.json") "{schemaVersion: 2, manifests: [
                {mediaType: \"application/vnd.oci.image.index.v1+json\", digest: \$d, size: \$s,
                 annotations: {\"org.opencontainers.image.ref.name\": \"multi\"}}]}" >"$TMP/multi/index.json" &&
        push_layout "$TMP/multi" multi:1 --all &&
        echo "$A $R $REGISTRY $REGISTRY_DIR" >"$TMP/digests" &&
        start_manager
'
read -r A R ANON ANON_DIR <"$TMP/digests" 2>/dev/null || true

test_expect_success 'create, list and show registries; the password is write-only' '
        api POST $REGS "{\"name\": \"$ANON\", \"url\": \"http://$ANON\"}" && test "$CODE" = 201 &&
        jq -e ".name == \"$ANON\" and .url == \"http://$ANON\" and .project == \"\" and .has_password == false and .images == 0 and .last_scan_at == null" "$TMP/out" &&
        api POST $REGS "{\"name\": \"registry.example.com\", \"url\": \"https://registry.example.com/\", \"project\": \"team/stable\", \"username\": \"bob\", \"password\": \"Sekr1t-pw\"}" &&
        test "$CODE" = 201 && jq -e ".has_password == true and (has(\"password\") | not)" "$TMP/out" &&
        ! grep -q Sekr1t-pw "$TMP/out" &&
        api GET $REGS && test "$CODE" = 200 && jq -e ".total == 2" "$TMP/out" && ! grep -q "Sekr1t-pw\|password_sealed\|\"password\"" "$TMP/out" &&
        api GET $REGS/registry.example.com && test "$CODE" = 200 && ! grep -q "Sekr1t-pw\|\"password\"" "$TMP/out" &&
        api PATCH $REGS/registry.example.com "{\"password\": \"Other-pw-2\"}" && test "$CODE" = 200 &&
        jq -e ".has_password == true" "$TMP/out" && ! grep -q Other-pw-2 "$TMP/out" &&
        api PATCH $REGS/registry.example.com "{\"password\": null}" && test "$CODE" = 200 &&
        jq -e ".has_password == false" "$TMP/out" &&
        ! grep -rq "Sekr1t-pw\|Other-pw-2" "$MANAGER_STATE"/*.db* "$MANAGER_LOG" 2>/dev/null
'

# bad BODY STATUS WORDS: a create with BODY answers STATUS mentioning WORDS
bad() {
        api POST $REGS "$1"
        test "$CODE" = "$2" || { echo "$1: got $CODE $(cat "$TMP/out")"; return 1; }
        grep -q -- "$3" "$TMP/out" || { echo "$1: answer lacks $3: $(cat "$TMP/out")"; return 1; }
}

test_expect_success 'bad input is a 400 naming what is wrong; a duplicate a 409; an unknown registry a 404' '
        bad "{\"name\": \"r.example.com\", \"url\": \"ftp://r.example.com\"}" 400 "must start with http:// or https://" &&
        bad "{\"name\": \"r.example.com\", \"url\": \"https://r.example.com/v2/\"}" 400 "may not have a path" &&
        bad "{\"name\": \"r.example.com\", \"url\": \"https://u:p@r.example.com\"}" 400 "may not hold credentials" &&
        bad "{\"name\": \"r.example.com\", \"url\": \"https://bad_host\"}" 400 "is not a host\[:port\]" &&
        bad "{\"name\": \"r.example.com\", \"url\": \"https://r.example.com:99999\"}" 400 "is not a host\[:port\]" &&
        bad "{\"name\": \"r.example.com\", \"url\": 5}" 400 "must be a string" &&
        bad "{\"name\": \"r.example.com\"}" 400 "url.* is required" &&
        bad "{\"name\": \"noport\", \"url\": \"https://r.example.com\"}" 400 "must be a registry as image names start with it" &&
        bad "{\"name\": \"r.example.com/team\", \"url\": \"https://r.example.com\"}" 400 "must be a registry" &&
        bad "{\"name\": \"[::1]:5000\", \"url\": \"https://r.example.com\"}" 400 "must be a registry" &&
        bad "{\"name\": \"r.example.com\", \"url\": \"https://r.example.com\", \"project\": \"Team/\"}" 400 "repository path prefix" &&
        bad "{\"name\": \"r.example.com\", \"url\": \"https://r.example.com\", \"username\": \"a:b\"}" 400 "without .:." &&
        bad "{\"name\": \"r.example.com\", \"url\": \"https://r.example.com\", \"colour\": 1}" 400 "unknown field .colour." &&
        bad "{\"name\": \"$ANON\", \"url\": \"http://$ANON\"}" 409 "already exists" &&
        api PATCH $REGS/registry.example.com "{\"name\": \"x.example.com\"}" && test "$CODE" = 400 &&
        api PATCH $REGS/registry.example.com "{}" && test "$CODE" = 400 &&
        api GET $REGS/nope.example.com && test "$CODE" = 404 &&
        api POST $REGS/nope.example.com/rescan && test "$CODE" = 404 &&
        api POST $REGS/$ANON/rescan "{\"deep\": true}" && test "$CODE" = 400 &&
        api GET /background-tasks/00000000-0000-4000-8000-000000000000 && test "$CODE" = 404
'

test_expect_success 'users and domain admins get 403 on the registry routes' '
        api POST /admin/users "{\"email\": \"reg-user@rescan.test\", \"password\": \"rescan-pass-1\"}" &&
        test "$CODE" = 201 && UAK=$(jq -r .keypair.access_key "$TMP/out") && USK=$(jq -r .keypair.secret_key "$TMP/out") &&
        api POST /admin/users "{\"email\": \"reg-admin@rescan.test\", \"password\": \"rescan-pass-1\", \"role\": \"admin\"}" &&
        test "$CODE" = 201 && AAK=$(jq -r .keypair.access_key "$TMP/out") && ASK=$(jq -r .keypair.secret_key "$TMP/out") &&
        denied=0 &&
        for k in "$UAK:$USK" "$AAK:$ASK"; do
                ak=${k%%:*} sk=${k#*:} &&
                BACKEND_ACCESS_KEY=$ak BACKEND_SECRET_KEY=$sk api GET $REGS && test "$CODE" = 403 &&
                BACKEND_ACCESS_KEY=$ak BACKEND_SECRET_KEY=$sk api GET $REGS/$ANON && test "$CODE" = 403 &&
                BACKEND_ACCESS_KEY=$ak BACKEND_SECRET_KEY=$sk api POST $REGS "{\"name\": \"u.example.com\", \"url\": \"https://u.example.com\"}" &&
                test "$CODE" = 403 &&
                BACKEND_ACCESS_KEY=$ak BACKEND_SECRET_KEY=$sk api POST $REGS/$ANON/rescan && test "$CODE" = 403 &&
                BACKEND_ACCESS_KEY=$ak BACKEND_SECRET_KEY=$sk api DELETE $REGS/$ANON && test "$CODE" = 403 &&
                denied=$((denied + 1))
        done &&
        test $denied = 2
'

test_expect_success 'a rescan (through a slow proxy asking for pages of 2) registers every image; events follow it' '
        proxy_start "$ANON" 0.1 && SLOW=$PROXY && echo "$SLOW $PROXY_LOG" >"$TMP/proxy" &&
        api POST $REGS "{\"name\": \"$SLOW\", \"url\": \"http://$SLOW\"}" && test "$CODE" = 201 &&
        rescan "$SLOW" && sse "$TASK" &&
        grep -q "^event: bgtask_updated" "$TMP/sse" &&
        grep -q "^data: .*\"message\":\"scanned .*of 5 repositories)\"" "$TMP/sse" &&
        grep -q "^event: bgtask_done" "$TMP/sse" && tail -n 3 "$TMP/sse" | grep -q "^event: server_close" &&
        grep "^data: .*\"status\":\"done\"" "$TMP/sse" | grep -q "\"current_progress\":5,\"total_progress\":5" &&
        task_done "$TASK" &&
        jq -e ".kind == \"registry-rescan\" and .current_progress == 5 and .total_progress == 5" "$TMP/task" &&
        result ".repositories == 5 and .images == 8 and .added == 8 and .updated == 0 and .unchanged == 0 and .error_count == 0 and .missing == []" &&
        grep -q "^/v2/_catalog?last=.*&n=2" "$PROXY_LOG" # (docker-registry 2.8 sends tags lists whole)
'
read -r SLOW PROXY_LOG <"$TMP/proxy" 2>/dev/null || true

test_expect_success 'the images are in GET /admin/images and GET /images, with labels, architecture, digest and size' '
        api GET "/admin/images?registry=$SLOW&limit=100" && test "$CODE" = 200 && jq -e ".total == 8" "$TMP/out" &&
        jq -e "[.items[] | .name + \":\" + .tag + \"@\" + .architecture] | sort == [
                \"$SLOW/busybox:latest@x86_64\", \"$SLOW/multi:1@aarch64\", \"$SLOW/multi:1@x86_64\",
                \"$SLOW/team/busybox:1@x86_64\", \"$SLOW/team/busybox:2@x86_64\", \"$SLOW/team/busybox:3@x86_64\",
                \"$SLOW/team/labelled:1@x86_64\", \"$SLOW/team/tools/bb:2@x86_64\"]" "$TMP/out" &&
        jq -e ".items[] | select(.name == \"$SLOW/team/labelled\") | .labels[\"org.example.flavour\"] == \"labelled\" and .labels[\"ai.backend.kernelspec\"] == \"1\" and .registry == \"$SLOW\"" "$TMP/out" &&
        jq -e ".items[] | select(.name == \"$SLOW/multi\" and .architecture == \"aarch64\") | .digest == \"$R\"" "$TMP/out" &&
        jq -e ".items[] | select(.name == \"$SLOW/busybox\") | .digest == \"$A\" and (.size_bytes | tonumber) > 100000" "$TMP/out" &&
        api GET /images && test "$CODE" = 200 && grep -q "$SLOW/team/labelled" "$TMP/out" &&
        api GET $REGS/$SLOW && jq -e ".images == 8 and .last_scan_at != null" "$TMP/out"
'

test_expect_success 'a session can be created from a scanned image by name:tag' '
        api POST /session "{\"name\": \"from-scan\", \"image\": \"team/labelled:1\", \"enqueueOnly\": true}" &&
        test "$CODE" = 201 &&
        api GET /session/from-scan && grep -q "\"image\":\"$SLOW/team/labelled:1\"" "$TMP/out" &&
        api DELETE /session/from-scan && test "$CODE" = 200
'

test_expect_success 'a second rescan changes nothing; admin fields are kept; a forgotten image comes back' '
        api PATCH "/admin/images/$SLOW%2Fteam%2Fbusybox:2" "{\"hidden\": true, \"min_resources\": {\"cpu\": 2}}" &&
        test "$CODE" = 200 &&
        api GET "/admin/images/$SLOW%2Fteam%2Fbusybox:3" && ID3=$(jq -r .id "$TMP/out") &&
        api POST /admin/image-aliases "{\"alias\": \"bb3\", \"image_id\": \"$ID3\"}" && test "$CODE" = 201 &&
        api DELETE "/admin/images/$SLOW%2Fteam%2Fbusybox:1" && test "$CODE" = 200 &&
        rescan "$SLOW" && task_done "$TASK" &&
        result ".added == 1 and .updated == 0 and .unchanged == 7 and .missing == []" &&
        api GET "/admin/images/$SLOW%2Fteam%2Fbusybox:2" &&
        jq -e ".hidden == true and .min_resources.cpu == \"2\"" "$TMP/out" &&
        api GET /admin/image-aliases/bb3 && test "$CODE" = 200 && jq -e ".image_id == \"$ID3\"" "$TMP/out" &&
        api GET "/admin/images/$SLOW%2Fteam%2Fbusybox:1" && test "$CODE" = 200
'

test_expect_success 'a project prefix limits the scan; images the registry lost are reported missing, not removed' '
        api PATCH $REGS/$SLOW "{\"project\": \"team\"}" && test "$CODE" = 200 &&
        rescan "$SLOW" && task_done "$TASK" &&
        result ".repositories == 3 and .images == 5 and .unchanged == 5 and .missing == []" &&
        curl -sf -X DELETE -H "Accept: application/vnd.oci.image.manifest.v1+json" \
                "http://$ANON/v2/team/tools/bb/manifests/$A" &&
        rescan "$SLOW" && task_done "$TASK" &&
        result ".repositories == 3 and .images == 4 and .unchanged == 4 and (.missing | map(.image)) == [\"$SLOW/team/tools/bb:2\"] and .missing[0].architecture == \"x86_64\"" &&
        api GET "/admin/images/$SLOW%2Fteam%2Ftools%2Fbb:2" && test "$CODE" = 200
'

test_expect_success 'the CLI: registry create, list, show, rescan (progress and result), image forget' '
        "$TESSERA" admin registry create "localhost:$(echo $ANON | cut -d: -f2)" --url "http://$ANON" --project team/tools >"$TMP/cli" &&
        grep -q "^has_password: *no$" "$TMP/cli" &&
        "$TESSERA" admin registry list >"$TMP/cli" && grep -q "^localhost:" "$TMP/cli" && grep -q "team/tools" "$TMP/cli" &&
        "$TESSERA" admin registry rescan "$SLOW" >"$TMP/cli" 2>"$TMP/cli-err" &&
        cat "$TMP/cli" "$TMP/cli-err" &&
        grep -q "^rescan: task " "$TMP/cli-err" && grep -q "^rescan: \[[0-9]/3\] " "$TMP/cli-err" &&
        grep -qx "status: done" "$TMP/cli" && grep -qx "repositories: 3" "$TMP/cli" &&
        grep -qx "unchanged: 4" "$TMP/cli" && grep -qx "missing: $SLOW/team/tools/bb:2 (x86_64) .*" "$TMP/cli" &&
        "$TESSERA" --json admin registry rescan "$SLOW" >"$TMP/cli.json" 2>"$TMP/cli-err" &&
        jq -e ".status == \"done\" and .result.unchanged == 4" "$TMP/cli.json" && ! grep -q "\[" "$TMP/cli-err" &&
        "$TESSERA" admin image forget "$SLOW/team/tools/bb:2" >"$TMP/cli" &&
        grep -qx "image .$SLOW/team/tools/bb:2. forgotten" "$TMP/cli" &&
        api GET "/admin/images/$SLOW%2Fteam%2Ftools%2Fbb:2" && test "$CODE" = 404 &&
        "$TESSERA" admin registry delete "localhost:$(echo $ANON | cut -d: -f2)" >"$TMP/cli" &&
        test_must_fail "$TESSERA" admin registry rescan nope.example.com 2>"$TMP/cli-err" &&
        grep -q "not found" "$TMP/cli-err"
'

test_expect_success 'a repository that fails is reported and the rest registered' '
        api POST $REGS "{\"name\": \"$ANON\", \"url\": \"http://$ANON\"}" &&
        rm -rf "$ANON_DIR"/storage/docker/registry/v2/repositories/team/labelled/_manifests/tags/1/current &&
        rescan "$ANON" && task_done "$TASK" &&
        result ".repositories == 5 and .error_count == 1 and .errors[0].repository == \"team/labelled\" and .errors[0].tag == \"1\" and (.errors[0].error | test(\"404|unknown\"))" &&
        result ".added == 6 and .missing == []"
'

test_expect_success 'Basic auth: the password opens the registry; a wrong one fails the task' '
        registry_start --htpasswd alice:s3cret && registry_push busybox private/bb:1 &&
        api POST $REGS "{\"name\": \"$REGISTRY\", \"url\": \"http://$REGISTRY\", \"username\": \"alice\", \"password\": \"wrong\"}" &&
        test "$CODE" = 201 &&
        rescan "$REGISTRY" && ! task_done "$TASK" &&
        jq -e ".status == \"failed\" and (.message | test(\"authentication failed for user .alice.\"))" "$TMP/task" &&
        api PATCH $REGS/$REGISTRY "{\"password\": \"s3cret\"}" && test "$CODE" = 200 &&
        rescan "$REGISTRY" && task_done "$TASK" && result ".added == 1" &&
        ! grep -q s3cret "$TMP/task" "$MANAGER_LOG" &&
        registry_stop
'

test_expect_success 'a registry that hangs: a second rescan and a delete are 409s; its lease runs out after a restart' '
        port=$(test_free_port) && proxy_start "127.0.0.1:$port" 1000 && HANG=$PROXY &&
        api POST $REGS "{\"name\": \"$HANG\", \"url\": \"http://$HANG\"}" && test "$CODE" = 201 &&
        rescan "$HANG" && HUNG=$TASK &&
        api POST $REGS/$HANG/rescan && test "$CODE" = 409 && grep -q "is running: task $HUNG" "$TMP/out" &&
        api DELETE $REGS/$HANG && test "$CODE" = 409 && grep -q "being rescanned" "$TMP/out" &&
        OUT=$TMP/task api GET /background-tasks/$HUNG && jq -e ".status == \"ongoing\"" "$TMP/task" &&
        echo "task_lease = \"2s\"" >"$TMP/lease.conf" &&
        restart_manager --config "$TMP/lease.conf" &&
        OUT=$TMP/task api GET /background-tasks/$HUNG &&
        for _ in $(seq 1 100); do
                OUT=$TMP/task api GET /background-tasks/$HUNG
                jq -e ".status == \"ongoing\"" "$TMP/task" >/dev/null || break
                sleep 0.1
        done &&
        jq -e ".status == \"failed\" and (.message | test(\"interrupted\"))" "$TMP/task" &&
        api DELETE $REGS/$HANG && test "$CODE" = 200
'

test_done
