# shellcheck shell=bash
# workload.sh - what the chaos cluster does while faults hit it: three users
# (made through the admin API), each with a folder `data`, running
# interactive sessions (some on half a mock GPU: cuda.shares 0.5) and batch
# sessions that write a file into their folder, sleep, and exit 0 or 3;
# owners destroy some interactive sessions; everyone lists and reads.  A
# terminal (WebSocket, through the front) is opened on a long-lived session
# again and again, an SSE client (/events/session) stays connected, and a
# reader lists sessions and agents four times a second.
#
# What was asked and what was acknowledged goes to ledger.log, one line
# each, for invariants.sh:
#
#     MS create-sent USER NAME TYPE EXIT   (EXIT: the batch's exit code, - else)
#     MS create-ack  USER NAME TYPE EXIT
#     MS destroy-sent USER NAME
#     MS destroy-ack  USER NAME
#
# A request that got no answer, a 5xx or a 401 (an unreachable database
# can look like that today) is sent again (POST /session is
# create-or-get by name, DELETE is idempotent) a few times.  Names are
# never reused.  Every request is in requests.log (lib.sh's capi).

USERS="u1 u2 u3"
declare -A USER_AK=() USER_SK=()

# batch_file_lines: lines each batch session writes (its name and a number)
BATCH_FILE_LINES=400

# batch_command NAME SLEEP EXIT: the batch's startup command
batch_command() {
        echo "i=0; while [ \$i -lt $BATCH_FILE_LINES ]; do echo \"$1 \$i\"; i=\$((i+1)); done >/home/work/data/$1.tmp && mv /home/work/data/$1.tmp /home/work/data/$1.txt && sync && sleep $2; exit $3"
}

# batch_expected_sha NAME: the sha256 of the file batch NAME writes
batch_expected_sha() {
        local i
        for ((i = 0; i < BATCH_FILE_LINES; i++)); do echo "$1 $i"; done | sha256sum | cut -d' ' -f1
}

as_user() { # USER METHOD PATH [BODY]
        local u=$1
        shift
        capi "${USER_AK[$u]}" "${USER_SK[$u]}" "$@"
}

# workload_setup: users, their keypairs (users/NAME), their folders, and the
# terminal's session
workload_setup() {
        local u
        for u in $USERS; do
                admin_api POST /admin/users "{\"email\": \"$u@chaos.test\", \"password\": \"chaos-password-$u\", \"projects\": [\"default\"]}"
                [ "$CODE" = 201 ] || { echo "creating user $u: $CODE $(cat "$ANSWER")"; return 1; }
                USER_AK[$u]=$(jq -r .keypair.access_key "$ANSWER")
                USER_SK[$u]=$(jq -r .keypair.secret_key "$ANSWER")
                echo "${USER_AK[$u]} ${USER_SK[$u]}" >"$CHAOS_DIR/users/$u"
                as_user "$u" POST /folders '{"name": "data"}'
                [ "$CODE" = 201 ] || [ "$CODE" = 200 ] || { echo "folder of $u: $CODE $(cat "$ANSWER")"; return 1; }
        done
        session_create u1 term-u1 interactive - 0 || return 1
        for _ in $(seq 1 120); do
                [ "$(sql "SELECT status FROM sessions WHERE name = 'term-u1'")" = RUNNING ] && return 0
                sleep 0.5
        done
        echo "the terminal's session never ran: $(sql "SELECT status, status_info FROM sessions WHERE name = 'term-u1'")"
        return 1
}

# session_create USER NAME TYPE EXIT GPU [EXTRA_JSON]: create-or-get until
# acknowledged (5 tries); GPU 1: half a mock GPU; EXTRA_JSON goes into the
# body (startupCommand)
session_create() {
        local u=$1 name=$2 type=$3 exit=$4 gpu=$5 extra=${6:-} res body
        res='{"cpu": 0.25, "mem": "64m"}'
        [ "$gpu" = 1 ] && res='{"cpu": 0.25, "mem": "64m", "cuda.shares": "0.5"}'
        body="{\"name\": \"$name\", \"image\": \"busybox:latest\", \"type\": \"$type\", \"enqueueOnly\": true, \"config\": {\"resources\": $res, \"mounts\": [\"data\"]}${extra:+, $extra}}"
        record ledger.log create-sent "$u" "$name" "$type" "$exit"
        for _ in 1 2 3 4 5; do
                as_user "$u" POST /session "$body"
                case $CODE in
                200 | 201) record ledger.log create-ack "$u" "$name" "$type" "$exit"; return 0 ;;
                400 | 403 | 404 | 409 | 412) echo "create $name: $CODE $(head -c 300 "$ANSWER")" >>"$CHAOS_DIR/workload.log"; return 1 ;;
                esac
                sleep 2
        done
        return 1
}

session_destroy() { # USER NAME
        record ledger.log destroy-sent "$1" "$2"
        for _ in 1 2 3 4 5; do
                as_user "$1" DELETE "/session/$2"
                case $CODE in
                200 | 204) record ledger.log destroy-ack "$1" "$2"; return 0 ;;
                400 | 403 | 404 | 409 | 412) echo "destroy $2: $CODE $(head -c 300 "$ANSWER")" >>"$CHAOS_DIR/workload.log"; return 1 ;;
                esac
                sleep 2
        done
        return 1
}

# user_loop USER N: the user's actions until the file stop-workload
# appears; seeded (SEED and N), so the sequence of actions repeats
user_loop() {
        local u=$1 i=0 live=() gpu=0 r name s
        RANDOM=$((SEED * 7 + $2))
        while [ ! -e "$CHAOS_DIR/stop-workload" ]; do
                i=$((i + 1))
                r=$((RANDOM % 100))
                name=$u-$i
                if [ $r -lt 30 ] && [ ${#live[@]} -lt 3 ]; then
                        if [ $gpu -eq 0 ] && [ $((RANDOM % 3)) = 0 ]; then
                                session_create "$u" "$name-gpu" interactive - 1 && live+=("$name-gpu") && gpu=1
                        else
                                session_create "$u" "$name" interactive - 0 && live+=("$name")
                        fi
                elif [ $r -lt 55 ]; then
                        s=$((5 + RANDOM % 36))
                        local code=0
                        [ $((RANDOM % 4)) = 0 ] && code=3
                        session_create "$u" "$name-batch" batch "$code" 0 \
                                "\"startupCommand\": \"$(batch_command "$name-batch" "$s" "$code" | sed 's/"/\\"/g')\""
                elif [ $r -lt 70 ] && [ ${#live[@]} -ge 2 ]; then
                        case ${live[0]} in *-gpu) gpu=0 ;; esac
                        session_destroy "$u" "${live[0]}"
                        live=("${live[@]:1}")
                else
                        as_user "$u" GET "/sessions?limit=50"
                        [ ${#live[@]} -gt 0 ] && as_user "$u" GET "/session/${live[$((RANDOM % ${#live[@]}))]}"
                fi
                sleep $((1 + RANDOM % 3))
        done
}

# reader_loop: API load besides the users' actions: every half second a
# user lists its sessions or the admin lists the agents (four a second)
reader_loop() {
        local n=0 u
        while [ ! -e "$CHAOS_DIR/stop-workload" ]; do
                n=$((n + 1))
                case $((n % 4)) in
                0) admin_api GET /admin/agents ;;
                *) u=u$((n % 4)); as_user "$u" GET "/sessions?limit=20" ;;
                esac
                sleep 0.25
        done
}

# terminal_loop: a named terminal on term-u1 through the front, opened
# every 10 s, a command typed and its output awaited, kept open 10 s
terminal_loop() {
        local i=0 h=() l start rc target code
        while [ ! -e "$CHAOS_DIR/stop-workload" ]; do
                i=$((i + 1))
                target="/stream/session/term-u1/pty?terminal=chaosterminal1"
                h=()
                while IFS= read -r l; do h+=("-H" "$l"); done < <("$BUILD/test-tool" sign GET "$target" \
                        "$FRONT" "${USER_AK[u1]}" "${USER_SK[u1]}")
                start=$(now_ms)
                timeout 40 python3 "$CHAOS_ROOT/tests/lib/ws-pty.py" "ws://$FRONT$target" "${h[@]}" \
                        "send:echo chaos-mark-\$((40+$i))\\n" "expect:chaos-mark-$((40 + i))" sleep:10 close \
                        >>"$CHAOS_DIR/terminal.log" 2>&1
                rc=$?
                # 101: the round passed; a refused handshake's status; 000:
                # no answer, or the terminal broke after it opened
                code=000
                [ $rc = 0 ] && code=101
                [ $rc = 0 ] || code=$(tail -n 20 "$CHAOS_DIR/terminal.log" |
                        sed -n 's/.*handshake: HTTP\/1.1 \([0-9][0-9][0-9]\).*/\1/p' | tail -n 1)
                echo "$start $(now_ms) WS /stream/session/term-u1/pty ${code:-000}" >>"$CHAOS_DIR/requests.log"
                sleep 2
        done
}

# events_loop: an SSE client on /events/session, reconnecting when cut
events_loop() {
        local h=() l start code
        while [ ! -e "$CHAOS_DIR/stop-workload" ]; do
                h=()
                while IFS= read -r l; do h+=("-H" "$l"); done < <("$BUILD/test-tool" sign GET /events/session \
                        "$FRONT" "$ADMIN_AK" "$ADMIN_SK" text/plain)
                start=$(now_ms)
                code=$(curl -s -N -m 120 -o >(cat >>"$CHAOS_DIR/events.log") -w '%{http_code}' "${h[@]}" \
                        "http://$FRONT/events/session") || true
                echo "$start $(now_ms) SSE /events/session ${code:-000}" >>"$CHAOS_DIR/requests.log"
                sleep 1
        done
}

# workload_start: every loop in the background (pids/loop-*)
workload_start() {
        local u n=0
        for u in $USERS; do
                n=$((n + 1))
                user_loop "$u" "$n" &
                set_pid "loop-$u" $!
        done
        reader_loop &
        set_pid loop-reader $!
        terminal_loop &
        set_pid loop-terminal $!
        events_loop &
        set_pid loop-events $!
}

# workload_stop: ask the loops to stop; what is still running 15 s later
# (a request waiting on a dead manager, a terminal) is killed with its
# process group.  A request cut off so was "sent", never "acknowledged".
workload_stop() {
        local f pid deadline
        touch "$CHAOS_DIR/stop-workload"
        deadline=$(($(date +%s) + 15))
        for f in "$CHAOS_DIR"/pids/loop-*; do
                [ "$f" = "$CHAOS_DIR/pids/loop-checks" ] && continue
                pid=$(cat "$f")
                while alive "$pid" && [ "$(date +%s)" -lt "$deadline" ]; do sleep 0.2; done
                kill -- -"$pid" 2>/dev/null
                kill "$pid" 2>/dev/null
                rm -f "$f"
        done
        return 0
}
