#!/bin/bash
test_description='make check-images: every recipe of images/ built (cached), pushed to a loopback registry, pulled by the dev agent and checked in a session: the Python version, torch.__version__, the data science and Jupyter imports'
# Usage: BUILD=build tests/images/check-images.sh [RECIPE...]   (default: images/*.recipe)
# Prints a summary table (recipe, image, build seconds, layer MiB, session
# seconds, what the session printed) after the TAP lines; needs root, runc,
# debootstrap and the Debian archive.
. "$(dirname "$0")/../lib/test-lib.sh"
. "$(dirname "$0")/../lib/registry.sh"

test_with_containers
command -v debootstrap >/dev/null || skip_all 'needs debootstrap'
WAIT_TENTHS=3000 # large images pull and unpack for minutes

RECIPES=("$@")
[ ${#RECIPES[@]} -gt 0 ] || RECIPES=("$TEST_ROOT"/images/*.recipe)

# the check for a recipe, and the pattern its output must match
check_of() {
        case $(basename "$1") in
        pytorch-*) echo "python3 -c 'import torch; print(torch.__version__)'" ;;
        jupyter*) echo "python3 -c 'import numpy, notebook; print(\"numpy\", numpy.__version__, \"notebook\", notebook.__version__)'" ;;
        datascience*) echo "python3 -c 'import numpy, scipy, pandas, sklearn, matplotlib, notebook; print(\"numpy\", numpy.__version__, \"pandas\", pandas.__version__, \"sklearn\", sklearn.__version__)'" ;;
        *) echo "python3 -c 'import sys; print(sys.version.split()[0])'" ;;
        esac
}
expect_of() {
        case $(basename "$1") in
        pytorch-bullseye*) echo '^1\.7\.' ;;
        pytorch-bookworm*) echo '^1\.13\.' ;;
        pytorch-trixie*) echo '^2\.' ;;
        datascience* | jupyter*) echo '^numpy ' ;;
        python3.9*) echo '^3\.9\.' ;;
        python3.11*) echo '^3\.11\.' ;;
        python3.13*) echo '^3\.13\.' ;;
        *) echo . ;;
        esac
}

test_expect_success 'a registry and tessera dev with its agent' '
        registry_start && WITH_AGENT="--agent-network none" start_manager
'

SUMMARY=$TMP/summary
printf '%-26s %-32s %8s %9s %9s  %s\n' recipe image "build s" "layer MiB" "session s" "printed" >"$SUMMARY"
n=0
for recipe in "${RECIPES[@]}"; do
        n=$((n + 1))
        name=$(sed -n "s/^name *= *//p" "$recipe")
        tag=$(sed -n "s/^tag *= *//p" "$recipe")
        RECIPE=$recipe NAME=$name TAG=$tag N=$n
        test_expect_success "$(basename "$recipe"): $name:$tag builds, pushes, runs and answers" '
                start=$(date +%s) &&
                "$TESSERA" image build --push "$REGISTRY/$NAME:$TAG" "$RECIPE" >"$TMP/build.$N" 2>"$TMP/build.$N.err" &&
                build_s=$(($(date +%s) - start)) &&
                layout=$(tail -n 1 "$TMP/build.$N") &&
                m=$(jq -r ".manifests[0].digest" "$layout/index.json" | cut -c8-) &&
                size=$(jq ".layers | map(.size) | add" "$layout/blobs/sha256/$m") &&
                api POST /admin/images "{\"name\": \"$NAME\", \"tag\": \"$TAG\", \"registry\": \"$REGISTRY\"}" &&
                { test "$CODE" = 201 || test "$CODE" = 409; } &&
                start=$(date +%s) &&
                api POST /session "{\"name\": \"image$N\", \"image\": \"$NAME:$TAG\", \"enqueueOnly\": true, \"config\": {\"resources\": {\"cpu\": 1, \"mem\": \"2g\"}}}" &&
                test "$CODE" = 201 &&
                wait_status image$N RUNNING &&
                "$TESSERA" session exec image$N "$(check_of "$RECIPE")" >"$TMP/check.$N" 2>&1 &&
                session_s=$(($(date +%s) - start)) &&
                printf "%-26s %-32s %8s %9.1f %9s  %s\n" "$(basename "$RECIPE")" "$NAME:$TAG" "$build_s" \
                        "$(awk "BEGIN { print $size / 1048576 }")" "$session_s" "$(tail -n 1 "$TMP/check.$N")" >>"$SUMMARY" &&
                grep -q "$(expect_of "$RECIPE")" "$TMP/check.$N" &&
                api DELETE /session/image$N
        '
        # (a row is written once the session answered: none means the build, push or session failed)
        grep -q "^$(basename "$recipe") " "$SUMMARY" || printf '%-26s %-32s FAILED: %s\n' "$(basename "$recipe")" \
                "$name:$tag" "$(tail -n 1 "$TMP/build.$n.err" 2>/dev/null)" >>"$SUMMARY"
done

echo "# summary ($(date -u +%Y-%m-%d), $(uname -m), $(nproc) cores)"
sed 's/^/# /' "$SUMMARY"
test_done
