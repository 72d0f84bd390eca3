#!/bin/bash
# bench/sched-pass.sh - build and run bench/sched-pass.c, the scheduling
# library alone (src/sched, no database): one pass over 10,000 pending on
# 2,000 agents x 8 GPUs, placements per second, a pass on a full cluster.
# Not a test: nothing fails on timing.
#
# usage: bench/sched-pass.sh [-r ROUNDS] [-q] [-n] [-w]   (see bench/sched-pass.c)
#
# It builds release objects (-O2, as `make`) of src/sched and src/common into
# build/bench and links the program against an archive of them, which
# takes only the objects it calls (src/common/ws.o would want wslay):
#   make BUILD=build/bench -j2 <those .o> && ar rcs build/bench/libsched.a <them> &&
#   cc -std=gnu17 -O2 -Isrc $(pkg-config --cflags jansson) bench/sched-pass.c \
#     build/bench/libsched.a $(pkg-config --libs jansson) -lm
set -euo pipefail
cd "$(dirname "$0")/.."
B=build/bench
PKGS="libmicrohttpd jansson sqlite3 libpq openssl libcurl"
objs=()
for f in src/sched/*.c src/common/*.c; do objs+=("$B/obj/${f%.c}.o"); done
make -s BUILD=$B -j2 "${objs[@]}"
rm -f $B/libsched.a && ar rcs $B/libsched.a "${objs[@]}"
cc -std=gnu17 -O2 -g -Wall -Wextra -Isrc $(pkg-config --cflags $PKGS) -o $B/sched-pass bench/sched-pass.c \
        $B/libsched.a $(pkg-config --libs $PKGS) -lm
exec $B/sched-pass "$@"
