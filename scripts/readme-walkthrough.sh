#!/bin/bash
# scripts/readme-walkthrough.sh - the README's first screen, as a new user
# follows it: `make run` (in the background, its output in
# $WALK_LOG, default ./readme-walkthrough.log), then, once the manager
# answers, every command of the README's first-session block exactly as
# written there (the ```sh block after "To run a first session"), then the
# web UI's page at the printed URL.  Stops `tessera dev` at the end.
#
#   scripts/fresh-debian-check.sh 'scripts/readme-walkthrough.sh'
#
# Run it from a checkout with no ./tessera-data (it starts from nothing).
# Exit status 0 when every command succeeded and printed what the README
# says it does ("hello", "inside").
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

LOG=${WALK_LOG:-$PWD/readme-walkthrough.log}
URL=http://127.0.0.1:8090
[ -e tessera-data ] && { echo "$0: ./tessera-data exists: run it on a fresh checkout" >&2; exit 2; }

# http_get PATH [ACCEPT]: the manager's answer (status line, headers, body)
# through bash's /dev/tcp: a fresh machine after `make run` has no curl
http_get() {
        local answer
        exec 3<>/dev/tcp/127.0.0.1/8090 || return 1
        printf 'GET %s HTTP/1.0\r\nHost: 127.0.0.1:8090\r\nAccept: %s\r\n\r\n' "$1" "${2:-*/*}" >&3
        answer=$(timeout 10 cat <&3)
        exec 3<&-
        printf '%s\n' "$answer"
        [[ $answer == "HTTP/1."[01]" 200 "* ]]
}

make run >"$LOG" 2>&1 &
RUN=$!
stop() {
        # make execs tessera dev: one process to stop
        kill -TERM "$RUN" 2>/dev/null
        wait "$RUN" 2>/dev/null
}
trap stop EXIT

echo "# make run (log: $LOG)"
for ((i = 0; i < 1800; i++)); do
        kill -0 "$RUN" 2>/dev/null || { echo "make run ended early:"; tail -n 30 "$LOG"; exit 1; }
        [ -s tessera-data/admin-credentials ] && http_get /health >/dev/null 2>&1 && break
        sleep 1
done
[ -s tessera-data/admin-credentials ] || { echo "make run did not come up in 30 minutes"; tail -n 30 "$LOG"; exit 1; }
grep -q "$URL" "$LOG" || { echo "make run did not print $URL"; exit 1; }
echo "# up after ${i}s"

# The first-session block, verbatim.
BLOCK=$(awk '/To run a first/ { want = 1 } want && /^```sh$/ { inblock = 1; next }
             inblock && /^```$/ { exit } inblock { print }' README.md)
[ -n "$BLOCK" ] || { echo "no first-session block in README.md"; exit 1; }
echo "# the README's first session:"
printf '%s\n' "$BLOCK" | sed 's/^/    /'
OUT=$(bash -euo pipefail -c "$BLOCK" 2>&1)
rc=$?
printf '%s\n' "$OUT" | sed 's/^/> /'
[ $rc -eq 0 ] || { echo "the first-session block failed ($rc)"; exit 1; }
grep -qx hello <<<"$OUT" || { echo "no 'hello' from the batch session"; exit 1; }
grep -qx inside <<<"$OUT" || { echo "no 'inside' from the interactive session"; exit 1; }

page=$(http_get / text/html) || { echo "the web UI's page did not load: ${page:0:300}"; exit 1; }
grep -qi "<html" <<<"$page" || { echo "$URL/ is not the web UI"; exit 1; }
echo "# the web UI answers at $URL/"
echo "# walkthrough passed"
