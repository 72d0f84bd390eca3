#!/bin/sh
# install-deps.sh build|test - install the Debian packages Tessera needs.
#
# build: what `make` and `make run` need (compiler, libraries, runc,
# iproute2 and nftables for the agent's containers (nft isolates sessions'
# networks: docs/agent.md, Session networks), busybox-static and jq for the first
# image the README builds, Node.js and npm for the web UI: Debian's nodejs
# and npm, unless `node` and `npm` are already there from elsewhere).
# test: that plus what `make check`
# needs (PostgreSQL server, sqlite3, curl, jq, xxd and openssl for the
# integration tests; haproxy in front of two managers (t2020,
# deploy/haproxy.cfg); docker-registry, skopeo, debootstrap and busybox-static
# to build test images and serve them on loopback, with apache2-utils
# (htpasswd) and python3 for the registry tests' Basic auth, token server
# and failing registry; chromium for the web UI's browser tests; faketime
# (libfaketime) for the chaos test's clock steps, tests/chaos; clang for
# libFuzzer and wrk for load tests, optional).  Only missing packages are
# installed, and `apt-get update` runs only when something is missing, so
# a second run is instant.  Needs root (or sudo) only when something is
# missing.
set -eu

BUILD_PKGS="gcc make pkg-config libmicrohttpd-dev libjansson-dev libsqlite3-dev libpq-dev libssl-dev libcurl4-openssl-dev libarchive-dev libyaml-dev zlib1g-dev libzstd-dev libisal-dev libwslay-dev runc crun iproute2 nftables e2fsprogs busybox-static jq"
TEST_PKGS="postgresql haproxy sqlite3 curl xxd openssl docker-registry skopeo debootstrap apache2-utils python3 chromium faketime bc"
# command:package - packages wanted only when the command is missing (a
# Node.js from elsewhere, NodeSource's say, brings npm and conflicts with
# Debian's npm package)
BUILD_CMDS="node:nodejs npm:npm"
OPTIONAL_PKGS="clang libclang-rt-dev wrk" # libFuzzer runtime, load tests: their absence fails nothing

case ${1:-} in
build) want=$BUILD_PKGS optional= ;;
test) want="$BUILD_PKGS $TEST_PKGS" optional=$OPTIONAL_PKGS ;;
*)
        echo "usage: $0 build|test" >&2
        exit 2
        ;;
esac

missing_of() {
        for p in "$@"; do
                if ! dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null | grep -q '^ii'; then
                        printf '%s ' "$p"
                fi
        done
}

# the packages of the commands in $BUILD_CMDS that are missing
missing_cmds() {
        for c in $BUILD_CMDS; do
                command -v "${c%%:*}" >/dev/null 2>&1 || printf '%s ' "${c#*:}"
        done
}

missing="$(missing_of $want)$(missing_cmds)"
missing_opt=$(missing_of $optional)
[ -z "$missing$missing_opt" ] && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
        echo "install-deps.sh: missing packages: $missing$missing_opt (no apt-get here: install them by hand)" >&2
        [ -z "$missing" ] && exit 0
        exit 1
fi
sudo=
if [ "$(id -u)" -ne 0 ]; then
        if command -v sudo >/dev/null 2>&1; then
                sudo=sudo
        else
                echo "install-deps.sh: missing packages: $missing$missing_opt (run as root)" >&2
                exit 1
        fi
fi

export DEBIAN_FRONTEND=noninteractive
echo "install-deps.sh: installing $missing$missing_opt" >&2
apt_get() {
        $sudo env DEBIAN_FRONTEND=noninteractive apt-get -qq -o=Dpkg::Use-Pty=0 "$@"
}
apt_get update >/dev/null
if [ -n "$missing" ]; then
        # (postgresql's own default cluster is not used: the tests start a
        # private one with scripts/pg-test.sh)
        apt_get install -y --no-install-recommends $missing >/dev/null
fi
for p in $missing_opt; do
        apt_get install -y --no-install-recommends "$p" >/dev/null 2>&1 ||
                echo "install-deps.sh: optional package '$p' could not be installed, going on" >&2
done
still="$(missing_of $want)$(missing_cmds)"
if [ -n "$still" ]; then
        echo "install-deps.sh: still missing: $still" >&2
        exit 1
fi
exit 0
