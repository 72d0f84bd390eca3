#!/bin/sh
# check-layers.sh [--objects DIR] [SRC] - check that the code keeps to the
# layout's rules (HACKING.md, "Layout"); exit 1, naming each offence, if not.
# check-layers.sh --rules [SRC] - print each folder and what it may use.
#
# Every folder of SRC (default src) that holds sources has a README.md
# with a line, among its first 20, that says which folders (or single
# files) its files may use:
#
#     Uses: manager/api manager/db
#     Uses: common/compat.h common/utf8.h
#     Uses: nothing
#
# A folder may use what it names and, through a folder it names, whatever
# that folder may use; its own files always.  A folder never names itself
# through others (a cycle of uses is refused), so no two folders depend on
# each other.  The files directly in SRC (the programs' mains) may use
# every folder.  Then:
#
#   - every `#include "..."` of a file names a file under SRC by its path
#     there ("manager/db/db.h"), and one its folder may use;
#   - with --objects DIR (the build's objects, $(BUILD)/obj: DIR/SRC/x.o
#     compiled from SRC/x.c; objects whose source is gone are ignored),
#     every symbol an object takes from another object comes from a
#     folder it may use.  This catches what includes
#     miss: a prototype written by hand, a global declared extern.
set -eu

usage() {
        sed -n '2,4p' "$0" | sed 's/^# \{0,1\}//'
}

objects= rules=0
while [ $# -gt 0 ]; do
        case $1 in
        --rules)
                rules=1
                shift
                ;;
        --objects)
                [ $# -ge 2 ] || { usage >&2; exit 2; }
                objects=$2
                shift 2
                ;;
        -h | --help) usage; exit 0 ;;
        -*) usage >&2; exit 2 ;;
        *) break ;;
        esac
done
[ $# -le 1 ] || { usage >&2; exit 2; }
src=${1:-src}
src=${src%/}
[ -d "$src" ] || { echo "check-layers.sh: no folder $src" >&2; exit 2; }
if [ -n "$objects" ] && [ ! -d "$objects/$src" ]; then
        echo "check-layers.sh: no objects in $objects/$src (build first)" >&2
        exit 2
fi

# One stream of tagged lines for awk:
#   F <file>                    every file under SRC (relative to it)
#   U <folder> <uses line>      each source folder's rule ("-" when its
#                               README.md or the line is missing)
#   I <file>:<line>:<text>      every quoted include
#   N <object>:<nm line>        the objects' symbols (with --objects)
stream() {
        (cd "$src" && find . -type f ! -path '*/node_modules/*' | sed 's|^\./||' | sort | sed 's/^/F /')
        (cd "$src" && find . -type f \( -name '*.c' -o -name '*.h' \) | sed 's|^\./||; s|/[^/]*$||; s|^[^/]*\.[ch]$|.|' |
                sort -u) | while read -r dir; do
                [ "$dir" = . ] && continue
                line=$(head -n 20 "$src/$dir/README.md" 2>/dev/null | grep -m 1 '^Uses:' || true)
                printf 'U %s %s\n' "$dir" "${line:--}"
        done
        (cd "$src" && grep -rn --include='*.c' --include='*.h' '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' . |
                sed 's|^\./||; s/^/I /')
        if [ -n "$objects" ]; then
                find "$objects/$src" -name '*.o' | sort | xargs nm -A 2>/dev/null | sed "s|^$objects/$src/||; s/^/N /"
        fi
}

# The rules, then the includes and the symbols against them.
check() {
        awk -v src="$src" -v rules="$rules" '
function dirname(p) { return p ~ /\// ? substr(p, 1, match(p, /\/[^\/]*$/) - 1) : "." }
function where(f) { return f == "." ? src : src "/" f }
function fail(msg) { print msg; errors++ }
# rule(f): what f says it may use, for messages
function rule(f) { return f == "." ? "" : " (" where(f) "/README.md: " uses_line[f] ")" }
# visit(f): reach[f, x] for every folder or file f may use; a cycle is an error
function visit(f,    i, d, k, parts, n, got) {
        state[f] = 1
        for (i = 1; i <= ndeps[f]; i++) {
                d = dep[f, i]
                reach[f, d] = 1
                if (!(d in folders))
                        continue
                if (state[d] == 1) {
                        fail(where(f) " and " where(d) " use each other: " uses_line[f] " / " uses_line[d])
                        continue
                }
                if (state[d] == 0)
                        visit(d)
                n = 0
                for (k in reach) {
                        split(k, parts, SUBSEP)
                        if (parts[1] == d)
                                got[++n] = parts[2]
                }
                while (n > 0)
                        reach[f, got[n--]] = 1
        }
        state[f] = 2
}
function may_use(f, tfolder, tfile) {
        return f == "." || f == tfolder || ((f, tfolder) in reach) || ((f, tfile) in reach)
}
$1 == "F" { files[$2] = 1; next }
$1 == "U" {
        f = $2
        folders[f] = 1
        line = $0
        sub(/^U [^ ]+ /, "", line)
        uses_line[f] = line
        if (line == "-") {
                fail(where(f) ": its README.md must say what the folder may use (a \"Uses:\" line among its first 20)")
                next
        }
        sub(/^Uses:[ \t]*/, "", line)
        if (line == "nothing")
                next
        n = split(line, tok, /[ \t,]+/)
        for (i = 1; i <= n; i++) {
                if (tok[i] == "")
                        continue
                dep[f, ++ndeps[f]] = tok[i]
        }
        next
}
$1 == "I" { includes[++ni] = substr($0, 3); next }
$1 == "N" {
        rest = substr($0, 3)
        obj = substr(rest, 1, index(rest, ":") - 1)
        sub(/\.o$/, ".c", obj)
        if (!(obj in files))
                next # left by a source since moved or removed
        n = split(substr(rest, index(rest, ":") + 1), w, /[ \t]+/)
        sym = w[n]
        type = w[n - 1]
        if (type == "U")
            wanted[obj, sym] = 1
        else if (type ~ /^[BCDGRSTVW]$/)
            defined_in[sym] = obj
        next
}
END {
        if (rules) {
                for (f in folders) {
                        line = uses_line[f]
                        sub(/^Uses:[ \t]*/, "", line)
                        print f, line
                }
                exit 0
        }
        for (f in folders) {
                for (i = 1; i <= ndeps[f]; i++) {
                        d = dep[f, i]
                        if (d == f)
                                fail(where(f) ": uses itself" rule(f))
                        else if (!(d in folders) && !(d in files))
                                fail(where(f) ": uses " d ", which is no folder or file of " src rule(f))
                }
        }
        for (f in folders)
                if (state[f] == 0)
                        visit(f)
        for (i = 1; i <= ni; i++) {
                s = includes[i]
                file = substr(s, 1, index(s, ":") - 1)
                s = substr(s, index(s, ":") + 1)
                lineno = substr(s, 1, index(s, ":") - 1)
                s = substr(s, index(s, "\"") + 1)
                target = substr(s, 1, index(s, "\"") - 1)
                f = dirname(file)
                if (!(target in files)) {
                        fail(where(file) ":" lineno ": includes \"" target "\", which is no file of " src \
                             ": name headers by their path under " src "/")
                        continue
                }
                t = dirname(target)
                if (!may_use(f, t, target))
                        fail(where(file) ":" lineno ": includes \"" target "\": " f " may not use " t rule(f))
        }
        for (k in wanted) {
                split(k, parts, SUBSEP)
                obj = parts[1]
                sym = parts[2]
                if (!(sym in defined_in) || defined_in[sym] == obj)
                        continue
                f = dirname(obj)
                t = dirname(defined_in[sym])
                if (!may_use(f, t, defined_in[sym]))
                        bad[where(obj) ": uses " sym " of " where(defined_in[sym]) ": " f " may not use " t rule(f)] = 1
        }
        for (msg in bad)
                fail(msg)
        if (errors) {
                print errors " offence" (errors > 1 ? "s" : "") " against the layout (HACKING.md, \"Layout\")"
                exit 1
        }
}'
}

if [ "$rules" = 1 ]; then
        stream | check | sort
else
        stream | check
fi
