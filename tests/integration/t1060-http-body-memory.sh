#!/bin/bash
test_description='request bodies: refused on their headers when not authenticated (no byte read), bounded per client address and in total (429/503), so that half-sent unauthenticated uploads do not pin the manager'"'"'s memory; large upload bodies go to disk (507 when it is full); real uploads still work'
. "$(dirname "$0")/../lib/test-lib.sh"

command -v python3 >/dev/null || skip_all 'python3 is needed'

rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$MANAGER_PID/status"; }

# half_send N METHOD PATH LENGTH SEND [HEADER...]: N connections each send
# the headers of a request with Content-Length LENGTH, wait up to 3 s for an
# early answer, then send SEND bytes of it (or what the manager still takes)
# and hold the connections open until $TMP/release exists.  Each early
# answer's status line (or "none") goes to $TMP/answers; $TMP/sent appears
# once all is sent.
half_send() {
        rm -f "$TMP/release" "$TMP/sent" "$TMP/answers"
        python3 - "$MANAGER_PORT" "$TMP" "$@" <<'PY' &
import os, select, socket, sys, time
port, tmp, n, method, path, length, send = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5], int(sys.argv[6]), int(sys.argv[7])
extra = "".join(h + "\r\n" for h in sys.argv[8:])
socks, answers = [], []
for i in range(n):
    s = socket.create_connection(("127.0.0.1", int(port)))
    s.sendall(f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: {length}\r\n{extra}\r\n".encode())
    socks.append(s)
for s in socks:
    r, _, _ = select.select([s], [], [], 3)
    line = s.recv(4096).split(b"\r\n")[0].decode(errors="replace") if r else ""
    answers.append(line or "none")
chunk = b"x" * (1 << 20)
for s in socks:
    s.settimeout(2)
    try:
        for _ in range(send >> 20):
            s.sendall(chunk)
    except OSError:
        pass
open(os.path.join(tmp, "answers"), "w").write("\n".join(answers) + "\n")
open(os.path.join(tmp, "sent"), "w").close()
for _ in range(600):
    if os.path.exists(os.path.join(tmp, "release")):
        break
    time.sleep(0.1)
PY
        HALF_PID=$!
        test_at_exit "kill $HALF_PID"
        for _ in $(seq 1 1200); do
                [ -e "$TMP/sent" ] && break
                kill -0 "$HALF_PID" 2>/dev/null || break
                sleep 0.1
        done
        cat "$TMP/answers"
        [ -e "$TMP/sent" ]
}

release() {
        touch "$TMP/release"
        wait "$HALF_PID" 2>/dev/null
        return 0
}

test_expect_success 'start a manager with a folder' '
        cat >"$TMP/manager.conf" <<-EOC &&
	max_inflight_per_client = 40m
	max_inflight = 100m
	max_spool_per_client = 40m
	max_spool = 100m
	EOC
        start_manager --config "$TMP/manager.conf" &&
        api POST /folders "{\"name\": \"box\"}" && test "$CODE" = 201 &&
        for _ in 1 2 3; do api GET /sessions; done &&
        BASE=$(rss_kib) && echo "base VmRSS $BASE KiB"
'

test_expect_success '8 half-sent tus PATCHes with a bad token: 403 on the headers, memory stays put' '
        half_send 8 PATCH "/folders/_/upload?token=bogus" $((64 << 20)) $((32 << 20)) \
                "Tus-Resumable: 1.0.0" "Content-Type: application/offset+octet-stream" &&
        test "$(grep -c " 40[13] " "$TMP/answers")" = 8 &&
        now=$(rss_kib) && echo "VmRSS $now KiB (base $BASE)" &&
        test $((now - BASE)) -lt $((64 << 10)) &&
        release
'

test_expect_success '8 half-sent unsigned uploads to signed routes: 401 on the headers, memory stays put' '
        half_send 4 PATCH "/admin/image-blobs/sha256:0000" $((64 << 20)) $((32 << 20)) &&
        half_send 4 POST "/session/nothing/upload" $((64 << 20)) $((32 << 20)) "Content-Type: multipart/form-data; boundary=x" &&
        now=$(rss_kib) && echo "VmRSS $now KiB (base $BASE)" &&
        test $((now - BASE)) -lt $((64 << 10)) &&
        release
'

test_expect_success 'a body larger than the route takes is a 413 on its headers' '
        half_send 1 POST /session $((8 << 20)) 0 && grep -q " 413 " "$TMP/answers" && release
'

# A signed request's headers, for python to send with a body of its own.
signed_headers() { # METHOD PATH
        "$BUILD/test-tool" sign "$1" "$2" "127.0.0.1:$MANAGER_PORT" "$BACKEND_ACCESS_KEY" "$BACKEND_SECRET_KEY" \
                application/octet-stream
}

# spooled: the manager's open files in its spool folder (unlinked)
spooled() { ls -l "/proc/$MANAGER_PID/fd" | grep -c "$MANAGER_STATE/spool/.*(deleted)"; }

test_expect_success 'three half-sent authenticated uploads of 12 MiB: their bodies go to disk, not memory' '
        mapfile -t H < <(signed_headers PATCH "/admin/image-blobs/sha256:$(printf %064d 0)") &&
        half_send 3 PATCH "/admin/image-blobs/sha256:$(printf %064d 0)" $((12 << 20)) $((11 << 20)) "${H[@]}" \
                "Content-Type: application/octet-stream" &&
        test "$(grep -c none "$TMP/answers")" = 3 &&
        now=$(rss_kib) && echo "VmRSS $now KiB (base $BASE), $(spooled) bodies on disk" &&
        test $((now - BASE)) -lt $((16 << 10)) &&
        test "$(spooled)" = 3 &&
        release &&
        for _ in $(seq 1 50); do test "$(spooled)" = 0 && break; sleep 0.1; done &&
        test "$(spooled)" = 0
'

test_expect_success 'an authenticated client past max_spool_per_client: 429 with Retry-After' '
        mapfile -t H < <(signed_headers PATCH "/admin/image-blobs/sha256:$(printf %064d 0)") &&
        half_send 1 PATCH "/admin/image-blobs/sha256:$(printf %064d 0)" $((48 << 20)) 0 "${H[@]}" \
                "Content-Type: application/octet-stream" &&
        grep -q " 429 " "$TMP/answers" && release &&
        curl -s -D "$TMP/h" -o "$TMP/b" -X PATCH --data-binary @<(head -c $((48 << 20)) /dev/zero) \
                "${H[@]/#/-H}" -H "Content-Type: application/octet-stream" \
                "$BACKEND_ENDPOINT/admin/image-blobs/sha256:$(printf %064d 0)" ;
        grep -qi "^Retry-After: " "$TMP/h" && grep -q "in flight from your address" "$TMP/b"
'

test_expect_success 'two bodies that fit one by one but not together: the second is a 429' '
        mapfile -t H < <(signed_headers PATCH "/admin/image-blobs/sha256:$(printf %064d 0)") &&
        half_send 2 PATCH "/admin/image-blobs/sha256:$(printf %064d 0)" $((30 << 20)) $((1 << 20)) "${H[@]}" \
                "Content-Type: application/octet-stream" &&
        test "$(sed -n 1p "$TMP/answers")" = none && grep -q " 429 " "$TMP/answers" && release
'

test_expect_success 'a refusal without a body keeps the connection (keep-alive)' '
        curl -sv -o /dev/null -o /dev/null "$BACKEND_ENDPOINT/nope" "$BACKEND_ENDPOINT/sessions" 2>"$TMP/v" &&
        grep -q "Re-using existing connection" "$TMP/v" && grep -q "HTTP/1.1 401" "$TMP/v"
'

test_expect_success 'a tus upload still works, chunk by chunk' '
        api POST /folders/box/request-upload "{\"path\": \"up.bin\", \"size\": 3000000}" && test "$CODE" = 200 &&
        T=$(jq -r .token "$TMP/out") &&
        head -c 3000000 /dev/urandom >"$TMP/up.bin" &&
        http POST "/folders/_/upload?token=$T" -H "Tus-Resumable: 1.0.0" -H "Upload-Length: 3000000" &&
        test "$HTTP_STATUS" = 201 &&
        head -c 2000000 "$TMP/up.bin" >"$TMP/c1" && tail -c +2000001 "$TMP/up.bin" >"$TMP/c2" &&
        http PATCH "/folders/_/upload?token=$T" -H "Tus-Resumable: 1.0.0" -H "Upload-Offset: 0" \
                -H "Content-Type: application/offset+octet-stream" --data-binary @"$TMP/c1" &&
        test "$HTTP_STATUS" = 204 &&
        http PATCH "/folders/_/upload?token=$T" -H "Tus-Resumable: 1.0.0" -H "Upload-Offset: 2000000" \
                -H "Content-Type: application/offset+octet-stream" --data-binary @"$TMP/c2" &&
        test "$HTTP_STATUS" = 204 &&
        api POST /folders/box/request-download "{\"path\": \"up.bin\"}" && test "$CODE" = 200 &&
        T=$(jq -r .token "$TMP/out") &&
        http GET "/folders/_/download?token=$T" && cmp "$HTTP_BODY" "$TMP/up.bin"
'

test_expect_success 'the bytes held were let go: the same body is admitted again' '
        mapfile -t H < <(signed_headers PATCH "/admin/image-blobs/sha256:$(printf %064d 0)") &&
        half_send 1 PATCH "/admin/image-blobs/sha256:$(printf %064d 0)" $((30 << 20)) 0 "${H[@]}" \
                "Content-Type: application/octet-stream" &&
        test "$(cat "$TMP/answers")" = none && release
'

test_expect_success 'no room left for a body on disk: 507, and the next one fits again' '
        test "$(id -u)" = 0 || { echo "# (needs root to mount a small tmpfs)"; return 0; }
        mount -t tmpfs -o size=2m tmpfs "$MANAGER_STATE/spool" &&
        test_at_exit "umount $MANAGER_STATE/spool 2>/dev/null" &&
        mapfile -t H < <(signed_headers PATCH "/admin/image-blobs/sha256:$(printf %064d 0)") &&
        head -c $((4 << 20)) /dev/zero >"$TMP/4m" &&
        code=$(curl -s -o "$TMP/b" -w "%{http_code}" -X PATCH --data-binary @"$TMP/4m" "${H[@]/#/-H}" \
                -H "Content-Type: application/octet-stream" \
                "$BACKEND_ENDPOINT/admin/image-blobs/sha256:$(printf %064d 0)") ;
        echo "full disk: $code $(cat "$TMP/b")" && test "$code" = 507 && grep -q "no room on disk" "$TMP/b" &&
        umount "$MANAGER_STATE/spool" &&
        code=$(curl -s -o "$TMP/b" -w "%{http_code}" -X PATCH --data-binary @"$TMP/4m" "${H[@]/#/-H}" \
                -H "Content-Type: application/octet-stream" \
                "$BACKEND_ENDPOINT/admin/image-blobs/sha256:$(printf %064d 0)") ;
        echo "then: $code" && test "$code" != 507 && test "$code" != 503
'

test_done
