#!/bin/sh
# web-deps.sh - print the node_modules directory that web/package-lock.json
# pins, running `npm ci` into it first when it is not there yet.
#
# The packages never go inside the repository: they live in
#   ${TESSERA_NPM_CACHE:-/var/cache/tessera/npm}/<hash of package-lock.json>/node_modules
# (~/.cache/tessera/npm when /var/cache/tessera cannot be written), one
# directory per lock file: reused while the lock is unchanged, so that a
# build needs no network then, and made anew when the lock changes.  An
# install goes to a temporary directory renamed into place at the end, so
# that an interrupted or concurrent install never leaves half of one.
set -eu

if ! command -v npm >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1; then
        echo "web-deps.sh: node and npm are needed for the web UI (scripts/install-deps.sh build)" >&2
        exit 1
fi
root=$(cd "$(dirname "$0")/.." && pwd)
lock=$root/web/package-lock.json

cache=${TESSERA_NPM_CACHE:-}
if [ -z "$cache" ]; then
        cache=/var/cache/tessera/npm
        if ! mkdir -p "$cache" 2>/dev/null || [ ! -w "$cache" ]; then
                cache=${XDG_CACHE_HOME:-$HOME/.cache}/tessera/npm
        fi
fi
hash=$(sha256sum "$lock" | cut -c1-16)
dir=$cache/$hash
if [ -d "$dir/node_modules" ]; then
        echo "$dir/node_modules"
        exit 0
fi

mkdir -p "$cache"
tmp=$(mktemp -d "$cache/.install.XXXXXX")
chmod 755 "$tmp"
trap 'rm -rf "$tmp"' EXIT
cp "$root/web/package.json" "$lock" "$tmp/"
echo "web-deps.sh: npm ci into $dir" >&2
(cd "$tmp" && npm ci --no-audit --no-fund --loglevel=error >&2) || {
        echo "web-deps.sh: npm ci failed (is the npm registry reachable?)" >&2
        exit 1
}
# another install may have finished first: then keep that one
mv -T "$tmp" "$dir" 2>/dev/null || true
echo "$dir/node_modules"
