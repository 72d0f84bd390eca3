#!/bin/bash
# build.sh NAME [OUTDIR] - build an OCI image for tests, without a container
# engine, and cache it outside the repository.
#
#   NAME    busybox  one layer: Debian's busybox-static and its applets (seconds)
#           python   images/python3.11.recipe built by `tessera image build`
#                    (Debian bookworm minbase + python3 by debootstrap; minutes,
#                    needs root, the Debian archive and $TESSERA, default
#                    build/tessera; cached by tessera, docs/images.md)
#           jupyter  images/jupyter.recipe the same way (Jupyter Notebook and
#                    NumPy: the app proxy's test image, docs/app-proxy.md)
#   OUTDIR  optional: copy the image layout there too
#
# The image is an OCI image layout (oci-layout, index.json, blobs/sha256/)
# whose one manifest is annotated org.opencontainers.image.ref.name=NAME:latest,
# so `skopeo copy oci:DIR:NAME:latest docker://...` pushes it.  It is built
# once into ${TESSERA_IMAGE_CACHE:-/var/cache/tessera/test-images}/NAME-<key>/,
# where <key> hashes these scripts and the inputs (package versions, the
# mirror, SOURCE_DATE_EPOCH, the architecture); later calls reuse it.  The
# last line of stdout is the image directory.  Layers are reproducible: the
# same inputs give the same digests (fixed mtimes, sorted entries, numeric
# owners, gzip -n).
set -euo pipefail
umask 022

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$HERE/oci-layout.sh"

usage() {
        echo "usage: $0 busybox|python|jupyter [OUTDIR]" >&2
        exit 2
}
[ $# -ge 1 ] && [ $# -le 2 ] || usage
NAME=$1
OUTDIR=${2:-}
case $NAME in busybox | python | jupyter) ;; *) usage ;; esac

# python, jupyter: one builder for recipes and tests (docs/images.md)
declare -A RECIPES=([python]=python3.11 [jupyter]=jupyter)
if [ -n "${RECIPES[$NAME]:-}" ]; then
        ROOT=$(cd "$HERE/../.." && pwd)
        TESSERA=${TESSERA:-$ROOT/build/tessera}
        [ -x "$TESSERA" ] || { echo "build.sh: $TESSERA is missing (make)" >&2; exit 1; }
        "$TESSERA" image build ${OUTDIR:+--output "$OUTDIR"} "$ROOT/images/${RECIPES[$NAME]}.recipe" | tail -n 1
        exit "${PIPESTATUS[0]}"
fi
. "$HERE/rootfs-$NAME.sh"

export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-1700000000}
ARCH=$(dpkg --print-architecture)

cache_root() {
        local d=${TESSERA_IMAGE_CACHE:-/var/cache/tessera/test-images}
        if [ -z "${TESSERA_IMAGE_CACHE:-}" ] && ! mkdir -p "$d" 2>/dev/null; then
                d=${XDG_CACHE_HOME:-$HOME/.cache}/tessera/test-images # not root
        fi
        mkdir -p "$d" && echo "$d"
}

# The cache key: these scripts plus what the rootfs builder names as inputs.
cache_key() {
        {
                cat "$HERE"/*.sh
                echo "name=$NAME arch=$ARCH epoch=$SOURCE_DATE_EPOCH"
                rootfs_inputs
        } | sha256sum | cut -c1-16
}

CACHE=$(cache_root)
IMAGE=$CACHE/$NAME-$(cache_key)

if [ ! -f "$IMAGE/index.json" ]; then
        # one builder at a time per image (sibling checkouts share the cache)
        exec 9>"$CACHE/.$NAME.lock"
        flock 9
        if [ ! -f "$IMAGE/index.json" ]; then
                work=$(mktemp -d "$CACHE/.build-$NAME.XXXXXX")
                trap 'rm -rf "$work"' EXIT
                start=$(date +%s)
                echo "build.sh: building $NAME into $IMAGE" >&2
                mkdir "$work/rootfs"
                rootfs_build "$work/rootfs"
                oci_layout_write "$work/rootfs" "$work/image" "$NAME:latest" "$(rootfs_config)"
                rm -rf "$IMAGE"
                mv -T "$work/image" "$IMAGE"
                echo "build.sh: built $NAME in $(($(date +%s) - start)) s" >&2
        fi
        exec 9>&-
fi

if [ -n "$OUTDIR" ]; then
        mkdir -p "$OUTDIR"
        cp -a "$IMAGE/." "$OUTDIR/"
        echo "$OUTDIR"
else
        echo "$IMAGE"
fi
