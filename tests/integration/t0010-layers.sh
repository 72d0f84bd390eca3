#!/bin/bash
test_description='the layout'"'"'s rules (scripts/check-layers.sh): the tree keeps them, and an include or a call that crosses a forbidden direction, a cycle of uses or a folder without a rule is refused, naming where'
. "$(dirname "$0")/../lib/test-lib.sh"

[ "$TESSERA_TEST_DB" = postgresql ] && skip_all 'no database here: the sqlite run covers it'

CHECK=$TEST_ROOT/scripts/check-layers.sh

# The block of HACKING.md that lists each folder's Uses: line.
hacking_directions() {
        awk '/^The directions/ { on = 1 } on && /^```/ { if (++fence == 2) exit; next } fence == 1' \
                "$TEST_ROOT/HACKING.md"
}

# folder DIR USES: a folder of the fixture tree $TMP/src with its rule
folder() {
        mkdir -p "$TMP/src/$1"
        printf '# src/%s\n\nA part of the fixture.\n\nUses: %s\n' "$1" "$2" >"$TMP/src/$1/README.md"
}

test_expect_success 'the tree keeps its rules, includes and the objects of the build' '
        (cd "$TEST_ROOT" && "$CHECK" --objects "$BUILD/obj" src) >"$TMP/out" 2>&1 &&
        test ! -s "$TMP/out"
'

test_expect_success 'HACKING.md lists the directions the READMEs give, no more, no fewer' '
        (cd "$TEST_ROOT" && "$CHECK" --rules src) >"$TMP/rules" &&
        hacking_directions |
                grep -v "^src/\*\.c " | tr -s " " | sort >"$TMP/hacking" &&
        test -s "$TMP/hacking" &&
        test_cmp "$TMP/rules" "$TMP/hacking"
'

test_expect_success 'a fixture: c uses b, b uses a; c may include a header of a through b' '
        folder a nothing && folder b a && folder c b &&
        printf "int a_fn(void);\n" >"$TMP/src/a/a.h" &&
        printf "#include \"a/a.h\"\nint a_fn(void) { return 1; }\n" >"$TMP/src/a/a.c" &&
        printf "#include \"a/a.h\"\nint b_fn(void);\n" >"$TMP/src/b/b.h" &&
        printf "#include \"b/b.h\"\nint b_fn(void) { return a_fn(); }\n" >"$TMP/src/b/b.c" &&
        printf "#include \"b/b.h\"\n#include \"a/a.h\"\nint c_fn(void) { return a_fn() + b_fn(); }\n" \
                >"$TMP/src/c/c.c" &&
        (cd "$TMP" && "$CHECK" src)
'

test_expect_success 'an include against the direction is refused, with its file, line and rule' '
        printf "#include \"a/a.h\"\n#include \"c/c.h\"\nint a2(void) { return 0; }\n" >"$TMP/src/a/a2.c" &&
        printf "int c_gn(void);\n" >"$TMP/src/c/c.h" &&
        (cd "$TMP" && test_must_fail "$CHECK" src) >"$TMP/out" &&
        grep -F "src/a/a2.c:2: includes \"c/c.h\": a may not use c (src/a/README.md: Uses: nothing)" "$TMP/out" &&
        grep -F "1 offence against the layout" "$TMP/out" &&
        rm "$TMP/src/a/a2.c"
'

test_expect_success 'a header named relative to its folder is refused: headers are named from src/' '
        printf "#include \"b.h\"\n" >"$TMP/src/b/b3.c" &&
        (cd "$TMP" && test_must_fail "$CHECK" src) >"$TMP/out" &&
        grep -F "src/b/b3.c:1: includes \"b.h\", which is no file of src" "$TMP/out" &&
        rm "$TMP/src/b/b3.c"
'

test_expect_success 'a call against the direction with no include at all is refused from the objects' '
        printf "int c_gn(void) { return 2; }\n" >"$TMP/src/c/c2.c" &&
        printf "int c_gn(void); /* written by hand */\nint a3(void) { return c_gn(); }\n" >"$TMP/src/a/a3.c" &&
        for f in a/a.c a/a3.c b/b.c c/c.c c/c2.c; do
                mkdir -p "$TMP/obj/src/$(dirname $f)" &&
                cc -c -I"$TMP/src" -o "$TMP/obj/src/${f%.c}.o" "$TMP/src/$f" || return 1
        done &&
        (cd "$TMP" && "$CHECK" src) &&
        (cd "$TMP" && test_must_fail "$CHECK" --objects obj src) >"$TMP/out" &&
        grep -F "src/a/a3.c:1: uses c_gn of src/c/c2.c: a may not use c (src/a/README.md: Uses: nothing)" "$TMP/out" &&
        rm "$TMP/src/a/a3.c" && (cd "$TMP" && "$CHECK" --objects obj src)
'

test_expect_success 'folders that use each other are refused' '
        folder a c &&
        (cd "$TMP" && test_must_fail "$CHECK" src) >"$TMP/out" &&
        grep -E "src/(a|b|c) and src/(a|b|c) use each other" "$TMP/out" &&
        folder a nothing
'

test_expect_success 'a folder whose README.md says nothing of what it uses, or names what is not there, is refused' '
        mkdir -p "$TMP/src/d" && printf "int d;\n" >"$TMP/src/d/d.c" &&
        (cd "$TMP" && test_must_fail "$CHECK" src) >"$TMP/out" &&
        grep -F "src/d: its README.md must say what the folder may use" "$TMP/out" &&
        folder d "a nowhere" &&
        (cd "$TMP" && test_must_fail "$CHECK" src) >"$TMP/out" &&
        grep -F "src/d: uses nowhere, which is no folder or file of src" "$TMP/out" &&
        folder d a && (cd "$TMP" && "$CHECK" src)
'

test_expect_success 'a rule may name single files: b may use a/a.h (and what a/a.c defines), not a/x.h' '
        folder b a/a.h &&
        printf "int x;\n" >"$TMP/src/a/x.h" &&
        printf "#include \"a/a.h\"\n#include \"a/x.h\"\n" >"$TMP/src/b/b4.c" &&
        (cd "$TMP" && test_must_fail "$CHECK" src) >"$TMP/out" &&
        grep -F "src/b/b4.c:2: includes \"a/x.h\": b may not use a" "$TMP/out" &&
        ! grep -F "b4.c:1:" "$TMP/out" &&
        rm "$TMP/src/b/b4.c" "$TMP/src/a/x.h" &&
        (cd "$TMP" && "$CHECK" --objects obj src)
'

test_expect_success 'a cycle through a file rule is refused: a uses b/b.h while b uses a' '
        folder a b/b.h &&
        (cd "$TMP" && test_must_fail "$CHECK" src) >"$TMP/out" &&
        grep -E "src/(a|b) and src/(a|b) use each other" "$TMP/out" &&
        folder a nothing
'

test_expect_success 'a folder never uses the folder that holds it' '
        folder a/sub a &&
        printf "int s;\n" >"$TMP/src/a/sub/s.c" &&
        (cd "$TMP" && test_must_fail "$CHECK" src) >"$TMP/out" &&
        grep -F "src/a/sub: uses a, the folder that holds it" "$TMP/out" &&
        folder a/sub nothing && (cd "$TMP" && "$CHECK" src)
'

test_expect_success 'a header of src named in angle brackets is refused; system headers are not its business' '
        printf "#include <stdio.h>\n#include <a/a.h>\n" >"$TMP/src/b/b5.c" &&
        (cd "$TMP" && test_must_fail "$CHECK" src) >"$TMP/out" &&
        grep -F "src/b/b5.c:2: includes <a/a.h>: name headers of src in quotes" "$TMP/out" &&
        ! grep -F "stdio.h" "$TMP/out" &&
        rm "$TMP/src/b/b5.c"
'

test_expect_success 'no objects where objects are asked for is an error, not a pass' '
        mkdir -p "$TMP/empty/src" &&
        rc=0 && { (cd "$TMP" && "$CHECK" --objects empty src) 2>"$TMP/err" || rc=$?; } &&
        test "$rc" = 2 &&
        grep -F "no objects in empty/src" "$TMP/err"
'

test_done
