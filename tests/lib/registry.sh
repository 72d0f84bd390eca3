# shellcheck shell=bash
# registry.sh - a Docker registry on loopback for integration tests; source
# it after test-lib.sh.
#
#     . "$(dirname "$0")/../lib/registry.sh"
#     registry_start                        anonymous
#     registry_push busybox busybox:latest  build (cached) and push a test image
#     ... $REGISTRY/busybox:latest ...
#     registry_stop
#     start_dev_with_busybox                tessera dev + agent, busybox registered
#
# registry_start [--htpasswd USER:PASSWORD] [--token [USER:PASSWORD]] [--access-token-only]
#     starts Debian's docker-registry on 127.0.0.1 on a free port with its
#     storage in $TMP, waits until GET /v2/ answers, and exports REGISTRY
#     (127.0.0.1:PORT), REGISTRY_DIR (config.yml, storage/, registry.log),
#     REGISTRY_LOG and REGISTRY_CREDS (USER:PASSWORD, for pushes).
#     --htpasswd: HTTP Basic authentication with a bcrypt htpasswd file.
#     --token: the Docker token flow: a token server (token-server.py, on its
#     own free port; with USER:PASSWORD it wants those Basic credentials)
#     signs JWTs with a key whose self-signed certificate the registry
#     trusts (auth: token: rootcertbundle); --access-token-only makes it
#     answer {"access_token": ...} instead of {"token": ...}.
# registry_stop: stop the last registry started (and its token server);
#     every registry still running is stopped at exit.
# registry_push NAME REF [SKOPEO OPTIONS...]: push the test image NAME
#     (scripts/test-images/build.sh, cached) to $REGISTRY/REF with skopeo.
# test_image NAME: print the directory of the (cached) test image NAME.
# fake_registry_start NAME [fake-registry.py options]: serve the test image
#     NAME from tests/lib/fake-registry.py, a registry that fails on purpose
#     (503s, dropped connections, redirects, corrupt manifests); exports
#     FAKE_REGISTRY (127.0.0.1:PORT) and FAKE_REGISTRY_LOG (its requests).

REGISTRY_PIDS=()
registry_runs=0

test_image() {
        TESSERA=$TESSERA "$TEST_ROOT/scripts/test-images/build.sh" "$1" | tail -n 1
}

# bcrypt htpasswd line: htpasswd (apache2-utils), else python3's crypt
registry_htpasswd_line_() {
        local user=${1%%:*} pass=${1#*:}
        if command -v htpasswd >/dev/null 2>&1; then
                htpasswd -nbB "$user" "$pass" | head -n 1
        else
                python3 -W ignore -c 'import crypt, sys
print(sys.argv[1] + ":" + crypt.crypt(sys.argv[2], crypt.mksalt(crypt.METHOD_BLOWFISH)))' "$user" "$pass"
        fi
}

# registry_token_server_ DIR USER:PASSWORD EXTRA: start the token server;
# sets REGISTRY_TOKEN_PORT.
registry_token_server_() {
        local dir=$1 user=$2 extra=$3 pid
        openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=tessera-test-token \
                -keyout "$dir/token-key.pem" -out "$dir/token-cert.pem" >/dev/null 2>&1 || return 1
        python3 "$TEST_ROOT/tests/lib/token-server.py" --key "$dir/token-key.pem" --cert "$dir/token-cert.pem" \
                --issuer tessera-test-issuer --service tessera-test-registry --port-file "$dir/token.port" \
                ${user:+--user "$user"} $extra </dev/null >>"$dir/token-server.log" 2>&1 &
        pid=$!
        REGISTRY_PIDS+=("$pid")
        for _ in $(seq 1 100); do
                [ -s "$dir/token.port" ] && break
                kill -0 "$pid" 2>/dev/null || break
                sleep 0.05
        done
        REGISTRY_TOKEN_PORT=$(cat "$dir/token.port" 2>/dev/null)
        REGISTRY_TOKEN_PID=$pid
        [ -n "$REGISTRY_TOKEN_PORT" ] || { echo "registry_start: the token server did not start:" >&2;
                cat "$dir/token-server.log" >&2; return 1; }
}

registry_start() {
        local htpasswd= token= token_user= extra= dir auth= port pid code
        while [ $# -gt 0 ]; do
                case $1 in
                --htpasswd) htpasswd=$2; shift 2 ;;
                --token)
                        token=1
                        case ${2:-} in --* | '') shift ;; *) token_user=$2; shift 2 ;; esac ;;
                --access-token-only) extra=--access-token-only; shift ;;
                *) echo "registry_start: unknown option '$1'" >&2; return 1 ;;
                esac
        done
        registry_runs=$((registry_runs + 1))
        dir=$TMP/registry.$registry_runs
        mkdir -p "$dir/storage"
        REGISTRY_CREDS=
        REGISTRY_TOKEN_PID=
        if [ -n "$htpasswd" ]; then
                registry_htpasswd_line_ "$htpasswd" >"$dir/htpasswd" || return 1
                auth=$(printf 'auth:\n  htpasswd:\n    realm: tessera-test\n    path: %s\n' "$dir/htpasswd")
                REGISTRY_CREDS=$htpasswd
        elif [ -n "$token" ]; then
                registry_token_server_ "$dir" "$token_user" "$extra" || return 1
                auth=$(printf 'auth:\n  token:\n    realm: http://127.0.0.1:%s/token\n    service: %s\n    issuer: %s\n    rootcertbundle: %s\n' \
                        "$REGISTRY_TOKEN_PORT" tessera-test-registry tessera-test-issuer "$dir/token-cert.pem")
                REGISTRY_CREDS=$token_user
        fi
        for _ in 1 2 3 4 5; do
                port=$(test_free_port) || return 1
                cat >"$dir/config.yml" <<EOF
version: 0.1
log:
  level: info
  fields:
    service: registry
storage:
  filesystem:
    rootdirectory: $dir/storage
  delete:
    enabled: true
http:
  addr: 127.0.0.1:$port
$auth
EOF
                # (docker-registry reads REGISTRY_* variables as configuration)
                env -i PATH="$PATH" HOME="${HOME:-/}" docker-registry serve "$dir/config.yml" \
                        </dev/null >>"$dir/registry.log" 2>&1 &
                pid=$!
                for _ in $(seq 1 100); do
                        code=$(curl -s -o /dev/null -D "$dir/probe.headers" -w '%{http_code}' "http://127.0.0.1:$port/v2/")
                        if { [ "$code" = 200 ] || [ "$code" = 401 ]; } &&
                                grep -qi '^docker-distribution-api-version' "$dir/probe.headers"; then
                                REGISTRY=127.0.0.1:$port
                                REGISTRY_PID=$pid
                                REGISTRY_PIDS+=("$pid")
                                REGISTRY_DIR=$dir
                                REGISTRY_LOG=$dir/registry.log
                                export REGISTRY REGISTRY_DIR REGISTRY_LOG REGISTRY_CREDS
                                return 0
                        fi
                        kill -0 "$pid" 2>/dev/null || break
                        sleep 0.1
                done
                kill "$pid" 2>/dev/null
                wait "$pid" 2>/dev/null
                # a port taken in the meantime is worth another try
                grep -qi 'address already in use' "$dir/registry.log" || break
        done
        echo "registry_start: docker-registry did not come up; its log:" >&2
        tail -n 20 "$dir/registry.log" >&2
        return 1
}

registry_kill_() {
        local pid=$1
        kill "$pid" 2>/dev/null || return 0
        for _ in $(seq 1 50); do
                kill -0 "$pid" 2>/dev/null || return 0
                sleep 0.1
        done
        kill -KILL "$pid" 2>/dev/null
}

registry_stop() {
        local pid keep=()
        for pid in ${REGISTRY_PID:-} ${REGISTRY_TOKEN_PID:-}; do
                registry_kill_ "$pid"
                wait "$pid" 2>/dev/null
        done
        for pid in "${REGISTRY_PIDS[@]}"; do
                [ "$pid" = "${REGISTRY_PID:-}" ] || [ "$pid" = "${REGISTRY_TOKEN_PID:-}" ] || keep+=("$pid")
        done
        REGISTRY_PIDS=("${keep[@]}")
        REGISTRY_PID= REGISTRY_TOKEN_PID=
        return 0
}

registry_push() {
        local name=$1 ref=$2 image own
        shift 2
        image=$(test_image "$name") || return 1
        # the name the layout gives its image (python:3.11 for python)
        own=$(jq -r '.manifests[0].annotations["org.opencontainers.image.ref.name"]' "$image/index.json") || return 1
        skopeo copy --quiet --insecure-policy --dest-tls-verify=false \
                ${REGISTRY_CREDS:+--dest-creds "$REGISTRY_CREDS"} "$@" \
                "oci:$image:$own" "docker://$REGISTRY/$ref"
}

fake_registry_start() {
        local name=$1 image dir pid
        shift
        image=$(test_image "$name") || return 1
        registry_runs=$((registry_runs + 1))
        dir=$TMP/fake-registry.$registry_runs
        mkdir -p "$dir"
        python3 "$TEST_ROOT/tests/lib/fake-registry.py" --layout "$image" --port-file "$dir/port" "$@" \
                </dev/null >"$dir/requests.log" 2>&1 &
        pid=$!
        REGISTRY_PIDS+=("$pid")
        for _ in $(seq 1 100); do
                [ -s "$dir/port" ] && break
                kill -0 "$pid" 2>/dev/null || break
                sleep 0.05
        done
        [ -s "$dir/port" ] || { echo "fake_registry_start: it did not start:" >&2; cat "$dir/requests.log" >&2; return 1; }
        FAKE_REGISTRY=127.0.0.1:$(cat "$dir/port")
        FAKE_REGISTRY_LOG=$dir/requests.log
        export FAKE_REGISTRY FAKE_REGISTRY_LOG
}

# start_dev_with_busybox [DEV_AGENT_OPTIONS]: a registry with the busybox
# test image, tessera dev with its agent (WITH_AGENT=DEV_AGENT_OPTIONS,
# default "--agent-network none"), busybox:latest registered from the registry
start_dev_with_busybox() {
        start_dev_with_image busybox latest "$@"
}

# start_dev_with_image IMAGE TAG [DEV_AGENT_OPTIONS]: the same for a test
# image of scripts/test-images (busybox, python), registered as IMAGE:TAG
start_dev_with_image() {
        registry_start && registry_push "$1" "$1:$2" &&
                WITH_AGENT="${3:---agent-network none}" start_manager || return 1
        api POST /admin/images "{\"name\": \"$1\", \"tag\": \"$2\", \"registry\": \"$REGISTRY\"}"
        test "$CODE" = 201 || { echo "registering $1: $CODE $(cat "$TMP/out")"; return 1; }
}

registry_cleanup_() {
        local pid
        for pid in "${REGISTRY_PIDS[@]}"; do
                registry_kill_ "$pid"
        done
}
# (test-lib.sh's EXIT trap runs after ours, with the script's exit status)
trap 'registry_rc_=$?; registry_cleanup_; (exit $registry_rc_); test_cleanup_' EXIT
