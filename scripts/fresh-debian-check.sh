#!/bin/bash
# scripts/fresh-debian-check.sh - run a command as a new user would, in a
# fresh Debian 12 root: debootstrap's minbase (plus make, ca-certificates,
# git), a clean copy of this checkout's HEAD (git archive) in /root/project;
# in a mount and PID namespace of their own, the root bind-mounted on
# itself and made the namespace's root (pivot_root: a chroot would forbid
# the user namespaces the agent's containers need), /proc, /sys and /dev
# mounted, /run a tmpfs; then `bash -lc 'cd /root/project && CI=true COMMAND'`.
#
#   scripts/fresh-debian-check.sh 'make check'       the README's test command
#   scripts/fresh-debian-check.sh -k 'make build'    keep the root afterwards
#
#   -k        keep ROOT (its path is printed) instead of removing it
#   -r ROOT   where to make the root (default: a new /var/tmp/tessera-fresh.*;
#             an existing root is used again, with a fresh copy of HEAD)
#
# The minbase tree is cached as a tarball in $FRESH_CACHE (default
# /var/cache/tessera-fresh) so that a second run skips the download.  The
# host's extra CA certificates (/usr/local/share/ca-certificates) and its
# resolv.conf are copied in, for hosts that reach the archive through a
# proxy.  Nothing outlives the run, also when interrupted: the mounts are
# the namespace's, and its processes die with its first one.  Needs root,
# debootstrap and unshare (util-linux).  Exit status: the command's.
set -uo pipefail

KEEP=0
ROOT=
while getopts kr: o; do
        case $o in
        k) KEEP=1 ;;
        r) ROOT=$OPTARG ;;
        *) echo "usage: $0 [-k] [-r ROOT] COMMAND" >&2; exit 2 ;;
        esac
done
shift $((OPTIND - 1))
[ $# -eq 1 ] || { echo "usage: $0 [-k] [-r ROOT] COMMAND" >&2; exit 2; }
COMMAND=$1
[ "$(id -u)" = 0 ] || { echo "$0: needs root" >&2; exit 1; }
command -v debootstrap >/dev/null || { echo "$0: needs debootstrap (apt-get install debootstrap)" >&2; exit 1; }
cd "$(dirname "$0")/.." || exit 1
SRC=$PWD
MIRROR=${FRESH_MIRROR:-http://deb.debian.org/debian}
CACHE=${FRESH_CACHE:-/var/cache/tessera-fresh}
TARBALL=$CACHE/bookworm-minbase.tgz
[ -n "$ROOT" ] || ROOT=$(mktemp -d /var/tmp/tessera-fresh.XXXXXX)
ROOT=$(realpath "$ROOT")
chmod 0755 "$ROOT" # mktemp's 0700 would shut every user but root out of /, as no real machine does
case $ROOT in / | "") echo "$0: refusing ROOT=$ROOT" >&2; exit 2 ;; esac

cleanup() {
        trap - EXIT INT TERM
        # unshare ignores SIGTERM while its child runs, and the namespace's
        # first process ignores what it has no handler for; SIGKILL from
        # here ends it, and with it every process of the namespace
        if [ -n "${PID:-}" ]; then
                pkill -KILL -P "$PID" 2>/dev/null
                wait "$PID" 2>/dev/null
        fi
        # the mounts were the private mount namespace's, gone with it
        if findmnt -rn -o TARGET | grep -qE "^$ROOT(/|$)"; then
                echo "$0: mounts left under $ROOT, not removing it:" >&2
                findmnt -rn -o TARGET | grep -E "^$ROOT(/|$)" >&2
        elif [ $KEEP = 1 ]; then
                echo "# kept $ROOT"
        else
                rm -rf --one-file-system "$ROOT"
        fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [ ! -e "$ROOT/usr/bin/make" ]; then
        mkdir -p "$CACHE"
        if [ ! -s "$TARBALL" ]; then
                echo "# debootstrap: caching the minbase tree in $TARBALL"
                debootstrap --variant=minbase --include=make,ca-certificates,git --make-tarball="$TARBALL.part" \
                        bookworm "$ROOT.tarball" "$MIRROR" >/dev/null || exit 1
                rm -rf "$ROOT.tarball"
                mv "$TARBALL.part" "$TARBALL"
        fi
        echo "# debootstrap: a fresh root in $ROOT"
        debootstrap --variant=minbase --include=make,ca-certificates,git --unpack-tarball="$TARBALL" \
                bookworm "$ROOT" "$MIRROR" >"$ROOT.log" 2>&1 || { tail -n 20 "$ROOT.log" >&2; exit 1; }
        rm -f "$ROOT.log"
fi
rm -rf "$ROOT/root/project"
mkdir -p "$ROOT/root/project"
git -C "$SRC" archive HEAD | tar -x -C "$ROOT/root/project" || exit 1
cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
if ls /usr/local/share/ca-certificates/*.crt >/dev/null 2>&1; then
        cp /usr/local/share/ca-certificates/*.crt "$ROOT/usr/local/share/ca-certificates/"
fi

echo "# in $ROOT: $COMMAND"
start=$(date +%s)
# A mount and a PID namespace of their own: every mount below (and the
# command's) vanishes with them, every process of the command dies with
# the namespace's first one (unshare --kill-child).  pivot_root, not
# chroot: in a chroot the kernel refuses user namespaces, which the agent's
# containers need.
ROOT=$ROOT COMMAND=$COMMAND unshare --mount --pid --fork --kill-child -- /bin/bash -c '
        set -e
        mount --bind "$ROOT" "$ROOT"
        mount --rbind /sys "$ROOT/sys"
        mount --rbind /dev "$ROOT/dev"
        mount -t tmpfs -o mode=0755 tmpfs "$ROOT/run"
        cd "$ROOT"
        mkdir -p .host
        pivot_root . .host
        mount -t proc proc /proc
        umount -l /.host
        rmdir /.host
        exec /usr/bin/env -i HOME=/root TERM="${TERM:-dumb}" CI=true \
                PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
                NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt \
                bash -lc "update-ca-certificates >/dev/null 2>&1; cd /root/project && $COMMAND"
' &
PID=$!
wait $PID
rc=$?
PID=
echo "# \"$COMMAND\" exited $rc after $(($(date +%s) - start)) s"
exit $rc
