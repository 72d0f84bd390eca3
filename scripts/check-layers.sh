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
# that folder may use; its own files always.  A header named alone also
# allows the symbols of the .c file beside it (common/utf8.h: utf8.c).
# Uses never go round in a cycle, and a folder never uses a folder that
# holds it, so no two folders depend on each other.  The files directly
# in SRC (the programs' mains) may use every folder.  Then:
#
#   - every include of a file under SRC names it by its path there, in
#     quotes ("manager/db/db.h"), and names one its folder may use;
#   - with --objects DIR (the build's objects, $(BUILD)/obj: DIR/SRC/x.o
#     compiled from SRC/x.c; build first, and objects whose source is gone
#     are ignored), every symbol an object takes from another object comes
#     from a folder it may use; the offence names the first line of the
#     source that names the symbol.  This catches what includes miss: a
#     prototype written by hand, a global declared extern.
#
# Paths under SRC hold no blanks.
set -eu

usage() {
        sed -n '2,4p' "$0" | sed 's/^# \{0,1\}//'
}

die() {
        echo "check-layers.sh: $*" >&2
        exit 2
}

objects= rules=0
while [ $# -gt 0 ]; do
        case $1 in
        --objects)
                [ $# -ge 2 ] || { usage >&2; exit 2; }
                objects=${2%/}
                shift 2
                ;;
        --rules)
                rules=1
                shift
                ;;
        -h | --help) usage; exit 0 ;;
        -*) usage >&2; exit 2 ;;
        *) break ;;
        esac
done
[ $# -le 1 ] || { usage >&2; exit 2; }
src=${1:-src}
src=${src%/}
[ -d "$src" ] || die "no folder $src"
if [ -n "$objects" ]; then
        [ -d "$objects/$src" ] || die "no objects in $objects/$src (build first)"
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/check-layers.XXXXXX")
trap 'rm -rf "$work"' EXIT

# What awk reads, one tagged line each, step by step (a step that fails
# stops the check: nothing may pass unread):
#   F <file>                    every file under SRC (relative to it)
#   U <folder> <uses line>      each source folder's rule ("-" when its
#                               README.md or the line is missing)
#   I <file>:<line>:<text>      every include
#   N <object>:<nm line>        the objects' symbols (with --objects)
(cd "$src" && find . -type f ! -path '*/node_modules/*') >"$work/files" || die "cannot list $src"
sed 's|^\./||; s/^/F /' "$work/files" >"$work/stream"
sed -n 's|^\./||; /\.[ch]$/{s|/[^/]*$||; s|^[^/]*\.[ch]$|.|; p;}' "$work/files" | sort -u >"$work/folders"
while read -r dir; do
        [ "$dir" = . ] && continue
        line=$(head -n 20 "$src/$dir/README.md" 2>/dev/null | grep -m 1 '^Uses:' || true)
        printf 'U %s %s\n' "$dir" "${line:--}"
done <"$work/folders" >>"$work/stream"
if [ "$rules" = 0 ]; then
        rc=0
        (cd "$src" && grep -rn --include='*.c' --include='*.h' '^[[:space:]]*#[[:space:]]*include[[:space:]]*["<]' .) \
                >"$work/includes" || rc=$?
        [ "$rc" -le 1 ] || die "cannot read the includes of $src"
        sed 's|^\./||; s/^/I /' "$work/includes" >>"$work/stream"
fi
if [ "$rules" = 0 ] && [ -n "$objects" ]; then
        find "$objects/$src" -name '*.o' >"$work/objects" || die "cannot list $objects/$src"
        [ -s "$work/objects" ] || die "no objects in $objects/$src (build first)"
        xargs nm -A <"$work/objects" >"$work/symbols" || die "nm failed on the objects of $objects/$src"
        [ -s "$work/symbols" ] || die "nm found no symbols in $objects/$src"
        sed 's/^/N /' "$work/symbols" >>"$work/stream"
fi

rc=0
awk -v src="$src" -v objects="$objects" -v rules="$rules" '
function dirname(p) { return p ~ /\// ? substr(p, 1, match(p, /\/[^\/]*$/) - 1) : "." }
function where(f) { return f == "." ? src : src "/" f }
function fail(msg) { print msg; errors++ }
# rule(f): what f says it may use, for messages
function rule(f) { return f == "." ? "" : " (" where(f) "/README.md: " uses_line[f] ")" }
# visit(f): reach[f, x] for every folder or file f may use.  A file named
# by a rule counts as its folder for cycles: a cycle is an error.
function visit(f,    i, d, via, k, parts, n, got) {
        state[f] = 1
        for (i = 1; i <= ndeps[f]; i++) {
                d = dep[f, i]
                reach[f, d] = 1
                via = (d in folders) ? d : dirname(d)
                if (!(via in folders))
                        continue
                if (state[via] == 1) {
                        fail(where(f) " and " where(via) " use each other: " uses_line[f] " / " uses_line[via])
                        continue
                }
                if (state[via] == 0)
                        visit(via)
                if (via != d)
                        continue
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
# may f use the file target, of folder t?  (a header allows its .c)
function may_use(f, t, target,    h) {
        h = target
        sub(/\.c$/, ".h", h)
        return f == "." || f == t || ((f, t) in reach) || ((f, target) in reach) || ((f, h) in reach)
}
# the first line of SRC/file that names sym, as ":N" ("" when none does)
function line_of(file, sym,    path, l, n) {
        path = src "/" file
        n = 0
        while ((getline l < path) > 0) {
                n++
                if (l ~ ("(^|[^A-Za-z0-9_])" sym "([^A-Za-z0-9_]|$)") && l !~ /^[ \t]*(\/\*|\*)/) {
                        close(path)
                        return ":" n
                }
        }
        close(path)
        return ""
}
$1 == "F" { files[$2] = 1; next }
$1 == "U" {
        f = $2
        folders[f] = 1
        line = $0
        sub(/^U [^ ]+ /, "", line)
        uses_line[f] = line
        if (line == "-") {
                if (!rules)
                        fail(where(f) ": its README.md must say what the folder may use (a \"Uses:\" line among its first 20)")
                next
        }
        sub(/^Uses:[ \t]*/, "", line)
        if (line == "nothing")
                next
        n = split(line, tok, /[ \t,]+/)
        for (i = 1; i <= n; i++)
                if (tok[i] != "")
                        dep[f, ++ndeps[f]] = tok[i]
        next
}
$1 == "I" { includes[++ni] = substr($0, 3); next }
$1 == "N" {
        rest = substr($0, 3)
        prefix = objects "/" src "/"
        if (index(rest, prefix) != 1)
                next
        rest = substr(rest, length(prefix) + 1)
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
        for (f in folders)
                for (a = dirname(f); a != "."; a = dirname(a))
                        if ((f, a) in reach)
                                fail(where(f) ": uses " a ", the folder that holds it" rule(f))
        for (i = 1; i <= ni; i++) {
                s = includes[i]
                file = substr(s, 1, index(s, ":") - 1)
                s = substr(s, index(s, ":") + 1)
                lineno = substr(s, 1, index(s, ":") - 1)
                s = substr(s, index(s, ":") + 1)
                angle = s ~ /^[ \t]*#[ \t]*include[ \t]*</
                s = substr(s, match(s, /["<]/) + 1)
                target = substr(s, 1, match(s, /[">]/) - 1)
                f = dirname(file)
                if (angle) {
                        if (target in files)
                                fail(where(file) ":" lineno ": includes <" target ">: name headers of " src " in quotes")
                        continue
                }
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
                        fail(where(obj) line_of(obj, sym) ": uses " sym " of " where(defined_in[sym]) ": " f \
                             " may not use " t rule(f))
        }
        exit (errors > 0)
}' "$work/stream" >"$work/offences" || rc=$?
[ "$rc" -le 1 ] || die "awk failed"
if [ "$rules" = 1 ]; then
        sort "$work/offences"
        exit 0
fi
if [ "$rc" = 1 ]; then
        n=$(wc -l <"$work/offences")
        sort "$work/offences"
        echo "$n offence$([ "$n" -gt 1 ] && echo s) against the layout (HACKING.md, \"Layout\")"
        exit 1
fi
