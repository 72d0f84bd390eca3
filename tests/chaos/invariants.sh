# shellcheck shell=bash
# invariants.sh - the six promises of issue 18, each a named check that
# prints what broke.  check_continuous runs every few seconds during the
# run (1-4, from the database, the admin API and the folders' files);
# check_final runs after the faults stopped (all six).  A broken promise is
# one line in violations.log, "INVARIANT KEY: what", written once per KEY.
#
#   I1 legit-end     a session ends only by its own exit (batch, with the
#                    exit code it was given), its owner (user-requested),
#                    a configured timeout (none is configured here), or its
#                    agent unreachable longer than agent_lost_timeout
#                    (agent-lost); a creation that failed with a clear
#                    "no space" reason on an agent whose disk the schedule
#                    filled is allowed too
#   I2 no-double-slot per agent and slot, sum of what kernels occupy <= what
#                    the agent has; per mock GPU, sum of shares <= its
#                    capacity; one live kernel per session (the database
#                    and GET /admin/agents, at every observation)
#   I3 exactly-once  every acknowledged create is one session, every
#                    acknowledged destroy ended it with its container;
#                    no session the workload did not ask for
#   I4 files-intact  every batch session that ran its command left its
#                    file in its folder with the expected sha256
#   I5 availability  >= 99 % of API requests answered (not 5xx, 401 or
#                    403, not unanswered) while at least one manager and
#                    PostgreSQL were up (windows from faults.log; terminal
#                    rounds also need the terminal's agent reachable)
#   I6 converged     within CONVERGE_S of the last fault's end: every agent
#                    ALIVE, no session in a transitional state, every
#                    RUNNING session's container running, no container of
#                    an ended session left running
# plus "sanitizer": no ASan/UBSan report in any daemon's log.

OCCUPYING="('SCHEDULED', 'PREPARING', 'PULLING', 'CREATING', 'RUNNING', 'TERMINATING')"
TRANSITIONAL="('SCHEDULED', 'PREPARING', 'PULLING', 'CREATING', 'TERMINATING')"

# violation INVARIANT KEY MESSAGE
violation() {
        local line="$1 $2: $3"
        grep -qF -- "$1 $2:" "$CHAOS_DIR/violations.log" 2>/dev/null && return 0
        echo "$line" >>"$CHAOS_DIR/violations.log"
        say "VIOLATION $line"
}

# ledger_field KIND NAME FIELD: a field (3 = user, 5 = type, 6 = exit) of
# the ledger's KIND line for session NAME
ledger_field() {
        awk -v k="$1" -v n="$2" -v f="$3" '$2 == k && $4 == n { print $f; exit }' "$CHAOS_DIR/ledger.log"
}

# fault_intervals KINDS TARGET: "START_MS END_MS" of each fault of those
# kinds (a regex) on TARGET; one still going ends now
fault_intervals() {
        awk -v k="^($1)\$" -v t="$2" -v now="$(now_ms)" '
                $2 == "start" && $3 ~ k && $4 == t { s[$3] = $1 }
                $2 == "end" && $3 ~ k && $4 == t && ($3 in s) { print s[$3], $1; delete s[$3] }
                END { for (x in s) print s[x], now }' "$CHAOS_DIR/faults.log" 2>/dev/null
}

# sessions_json WHERE: one JSON object a line per session (main kernel joined)
sessions_json() {
        sql "SELECT json_build_object('name', s.name, 'type', s.session_type, 'status', s.status,
                'info', COALESCE(s.status_info, ''), 'data', s.status_data, 'agent', COALESCE(k.agent_id, ''),
                'container', COALESCE(k.container_id, ''), 'ended', COALESCE(s.terminated_at, 0),
                'changed', s.status_changed_at, 'kexit', k.exit_code)
             FROM sessions s LEFT JOIN kernels k ON k.session_id = s.id AND k.cluster_role = 'main'
             WHERE $1"
}

# ---- I1 ----

# agent_unreachable_long AGENT ENDED_US: was the agent cut, stopped or dead
# for at least agent_lost_timeout, starting before the session ended?
# (An outage lasts 5 s past its fault, the time a restarted or reconnected
# agent takes to be heard again; outages that touch count as one.)
agent_unreachable_long() {
        local s e slack=30000
        [[ $CLOCK_NODE == m* ]] && slack=$((slack + 240000))
        while read -r s e; do
                [ $((e - s)) -ge $((AGENT_LOST_TIMEOUT * 1000)) ] && [ "$s" -le $(($2 / 1000 + slack)) ] && return 0
        done < <(fault_intervals 'kill-agent|stop-agent|cut-agent|long-cut-agent' "${1#chaos-}" |
                awk '{ printf "%.0f %.0f\n", $1, $2 + 5000 }' | sort -n |
                awk '{ if (n && $1 <= e + 5000) { if ($2 > e) e = $2 } else { if (n) printf "%.0f %.0f\n", s, e; s = $1; e = $2; n = 1 } }
                     END { if (n) printf "%.0f %.0f\n", s, e }')
        # (every manager down does not count: a manager judges agents only
        # after a grace period following its own start, issue 18)
        return 1
}

# disk_full_between AGENT FROM_MS ENDED_US: was the agent's disk full at
# any time between the session's creation and its recorded end? (The end
# is when a manager learned of it: an agent's report of a failure made
# while its disk was full can arrive minutes later, through outages.)
disk_full_between() {
        local s e slack=30000
        [[ $CLOCK_NODE == m* ]] && slack=$((slack + 240000))
        while read -r s e; do
                [ "$e" -ge $((${2:-0} - slack)) ] && [ "$s" -le $(($3 / 1000 + slack)) ] && return 0
        done < <(fault_intervals disk-full "${1#chaos-}")
        return 1
}

check_ends() {
        local row name type status info agent ended exit want destroyed code
        while IFS= read -r row; do
                name=$(jq -r .name <<<"$row") type=$(jq -r .type <<<"$row") status=$(jq -r .status <<<"$row")
                info=$(jq -r .info <<<"$row") agent=$(jq -r .agent <<<"$row") ended=$(jq -r .ended <<<"$row")
                grep -q " $name\$" "$CHAOS_DIR/ended-ok" 2>/dev/null && continue
                destroyed=$(ledger_field destroy-sent "$name" 4)
                want=$(ledger_field create-sent "$name" 6)
                case $status/$info in
                TERMINATED/user-requested | CANCELLED/user-requested | CANCELLED/)
                        [ -n "$destroyed" ] && { echo "ok $name" >>"$CHAOS_DIR/ended-ok"; continue; } ;;
                TERMINATED/task-finished | TERMINATED/task-failed)
                        code=$(jq -r '.data | fromjson? | .kernel.exit_code // empty' <<<"$row")
                        [ -n "$code" ] || code=$(jq -r '.kexit // empty' <<<"$row")
                        if [ "$type" = batch ] && [ "$code" = "$want" ]; then
                                echo "ok $name" >>"$CHAOS_DIR/ended-ok"
                                continue
                        fi
                        violation I1-legit-end "$name" "$type session ended $status ($info) with exit code '${code}', expected a batch's exit $want"
                        continue ;;
                ERROR/agent-lost)
                        if agent_unreachable_long "$agent" "$ended"; then
                                echo "ok $name" >>"$CHAOS_DIR/ended-ok"
                                continue
                        fi
                        violation I1-legit-end "$name" "ended ERROR (agent-lost) on $agent, which the schedule never made unreachable for ${AGENT_LOST_TIMEOUT}s (agent_lost_timeout)"
                        continue ;;
                ERROR/creation-failed)
                        if disk_full_between "$agent" "$(ledger_field create-sent "$name" 1)" "$ended" &&
                                jq -e '.data | fromjson? | .error.repr // "" | test("space|ENOSPC"; "i")' <<<"$row" >/dev/null; then
                                echo "ok $name" >>"$CHAOS_DIR/ended-ok"
                                continue
                        fi ;;
                esac
                violation I1-legit-end "$name" "$type session of $(ledger_field create-sent "$name" 3) ended $status ($info) on ${agent:-no agent}${destroyed:+ (a destroy was sent)}; status_data $(jq -c '.data | fromjson? | del(.scheduler)' <<<"$row" | head -c 300)"
        done < <(sessions_json "s.status IN ('TERMINATED', 'CANCELLED', 'ERROR')")
}

# ---- I2 ----

check_slots() {
        local rows
        rows=$(sql "SELECT k.agent_id || ' ' || e.key || ' ' || SUM(e.value::numeric) || ' > ' ||
                        COALESCE(a.available_slots::json->>e.key, '0')
                    FROM kernels k JOIN agents a ON a.id = k.agent_id, json_each_text(k.occupied_slots::json) e
                    WHERE k.status IN $OCCUPYING
                    GROUP BY k.agent_id, e.key, a.available_slots
                    HAVING SUM(e.value::numeric) > COALESCE((a.available_slots::json->>e.key)::numeric, 0)")
        [ -z "$rows" ] || violation I2-no-double-slot "db-agent-$(echo "$rows" | head -n 1 | cut -d' ' -f1,2 | tr ' ' -)" \
                "kernels occupy more than the agent has: $(echo "$rows" | tr '\n' ';')"
        rows=$(sql "SELECT k.agent_id || ' gpu ' || d.key || ' ' || SUM(d.value::numeric) || ' > ' || COALESCE(MAX(g.capacity), '?')
                    FROM kernels k JOIN agents a ON a.id = k.agent_id, json_each_text(k.device_alloc::json) d
                    LEFT JOIN LATERAL (SELECT x->>'capacity' AS capacity FROM json_array_elements(a.devices::json) x
                                       WHERE x->>'id' = d.key) g ON true
                    WHERE k.status IN $OCCUPYING
                    GROUP BY k.agent_id, d.key
                    HAVING SUM(d.value::numeric) > COALESCE(MAX(g.capacity)::numeric, 0)")
        [ -z "$rows" ] || violation I2-no-double-slot "db-gpu-$(echo "$rows" | head -n 1 | cut -d' ' -f1,3 | tr ' ' -)" \
                "GPU shares given more than once: $(echo "$rows" | tr '\n' ';')"
        rows=$(sql "SELECT s.name || ' ' || COUNT(*) FROM kernels k JOIN sessions s ON s.id = k.session_id
                    WHERE k.status IN $OCCUPYING GROUP BY s.name HAVING COUNT(*) > 1")
        [ -z "$rows" ] || violation I2-no-double-slot "db-kernels-$(echo "$rows" | head -n 1 | cut -d' ' -f1)" \
                "a session holds several live kernels: $(echo "$rows" | tr '\n' ';')"
        # what the API shows an administrator
        OUT=$CHAOS_DIR/check-agents.json CAPI_TIMEOUT=10 admin_api GET /admin/agents
        [ "$CODE" = 200 ] || return 0
        rows=$(jq -r '.items[] | .id as $a | (.available_slots // {}) as $av |
                ((.occupied_slots // {}) | to_entries[] | select((.value | tonumber) > (($av[.key] // "0") | tonumber)) |
                        "\($a) \(.key) occupied \(.value) > available \($av[.key] // 0)"),
                ((.devices // [])[] | select(((.occupied // "0") | tonumber) > ((.capacity // "0") | tonumber)) |
                        "\($a) gpu \(.id) occupied \(.occupied) > capacity \(.capacity)")' \
                "$CHAOS_DIR/check-agents.json" 2>/dev/null)
        [ -z "$rows" ] || violation I2-no-double-slot "api-$(echo "$rows" | head -n 1 | cut -d' ' -f1,2 | tr ' ' -)" \
                "GET /admin/agents: $(echo "$rows" | tr '\n' ';')"
        return 0
}

# ---- I3 ----

check_once() {
        local final=${1:-} name n
        # at most one session per name asked for; exactly one per
        # acknowledged create (the ledger read first: what it acknowledges
        # is committed before the database is read)
        cp "$CHAOS_DIR/ledger.log" "$CHAOS_DIR/check-ledger"
        sql "SELECT name || ' ' || COUNT(*) FROM sessions GROUP BY name" >"$CHAOS_DIR/check-names" || return 0
        awk '$2 == "create-sent" { print $4 }' "$CHAOS_DIR/ledger.log" | sort -u >"$CHAOS_DIR/check-sent"
        while read -r name n; do
                [ "$n" -gt 1 ] && violation I3-exactly-once "$name" "$n sessions named $name (one create asked)"
                grep -qx "$name" "$CHAOS_DIR/check-sent" ||
                        violation I3-exactly-once "$name" "session $name exists but the workload never asked for it"
        done <"$CHAOS_DIR/check-names"
        for name in $(awk '$2 == "create-ack" { print $4 }' "$CHAOS_DIR/check-ledger"); do
                grep -q "^$name " "$CHAOS_DIR/check-names" ||
                        violation I3-exactly-once "$name" "create of $name was acknowledged but there is no such session"
        done
        [ -n "$final" ] || return 0
        # every acknowledged destroy took effect: ended, its container gone
        local row status container
        for name in $(awk '$2 == "destroy-ack" { print $4 }' "$CHAOS_DIR/ledger.log"); do
                row=$(sessions_json "s.name = '$name'")
                status=$(jq -r .status <<<"$row")
                container=$(jq -r .container <<<"$row")
                case $status in
                TERMINATED | CANCELLED | ERROR) ;;
                *) violation I3-exactly-once "$name-destroy" "destroy of $name was acknowledged, it is $status" ;;
                esac
                [ -n "$container" ] && container_running "$container" &&
                        violation I3-exactly-once "$name-container" "destroy of $name acknowledged, its container $container still runs"
        done
        return 0
}

# container_running ID: the OCI runtime says it runs (any agent: one root)
container_running() {
        local st
        st=$("$OCI_RUNTIME" --root /run/tessera/runc state "$1" 2>/dev/null) &&
                jq -e '.status == "running"' <<<"$st" >/dev/null
}

# ---- I4 ----

check_files() {
        local name path want got
        for name in $(sql "SELECT name FROM sessions WHERE session_type = 'batch' AND status = 'TERMINATED'
                           AND status_info IN ('task-finished', 'task-failed')"); do
                grep -qx "$name" "$CHAOS_DIR/files-ok" 2>/dev/null && continue
                path=$(find "$CHAOS_DIR/vfolders" -name "$name.txt" 2>/dev/null | head -n 1)
                if [ -z "$path" ]; then
                        violation I4-files-intact "$name" "batch $name ran its command but $name.txt is not in its folder"
                        continue
                fi
                want=$(batch_expected_sha "$name")
                got=$(sha256sum <"$path" | cut -d' ' -f1)
                if [ "$want" = "$got" ]; then
                        echo "$name" >>"$CHAOS_DIR/files-ok"
                else
                        violation I4-files-intact "$name" "$path has sha256 $got, expected $want ($(wc -c <"$path") bytes)"
                fi
        done
}

# ---- I5 ----

# the windows "START_MS END_MS SCOPE" when no manager, or no database,
# could answer (SCOPE all): both managers down at once, or PostgreSQL
# down; and (SCOPE WS) when the terminal's session's agent was cut,
# stopped or dead, or cut from a manager.  5 s more after each, to come
# back.
unavailable_windows() {
        local agent
        agent=$(sql "SELECT k.agent_id FROM sessions s JOIN kernels k ON k.session_id = s.id WHERE s.name = 'term-u1'")
        agent=${agent#chaos-}
        {
                fault_intervals 'pg-restart' pg | awk '{ printf "%.0f %.0f all\n", $1, $2 + 5000 }'
                fault_intervals 'restart-managers' m1+m2 | awk '{ printf "%.0f %.0f all\n", $1, $2 + 5000 }'
                # both managers down: where their down intervals overlap
                awk 'FILENAME == ARGV[1] { s[++n] = $1; e[n] = $2; next }
                     { for (i = 1; i <= n; i++) { a = ($1 > s[i] ? $1 : s[i]); b = ($2 < e[i] ? $2 : e[i]); if (a < b) printf "%.0f %.0f all\n", a, b } }' \
                        <(fault_intervals 'kill-manager|stop-manager|cut-manager' m1 | awk '{ printf "%.0f %.0f\n", $1, $2 + 5000 }') \
                        <(fault_intervals 'kill-manager|stop-manager|cut-manager' m2 | awk '{ printf "%.0f %.0f\n", $1, $2 + 5000 }')
                if [ -n "$agent" ]; then
                        fault_intervals 'kill-agent|stop-agent|cut-agent|long-cut-agent' "$agent" |
                                awk '{ printf "%.0f %.0f WS\n", $1, $2 + 5000 }'
                        for m in $MANAGERS; do
                                fault_intervals cut-pair "$m-$agent" | awk '{ printf "%.0f %.0f WS\n", $1, $2 + 5000 }'
                        done
                fi
        } >"$CHAOS_DIR/unavailable.windows"
}

# a request failed: no answer, a 5xx, or refused credentials that are valid
check_availability() {
        unavailable_windows
        awk -v out="$CHAOS_DIR/availability.txt" '
                FILENAME == ARGV[1] { ws[++nw] = $1; we[nw] = $2; wscope[nw] = $3; next }
                {
                        for (i = 1; i <= nw; i++)
                                if ($1 <= we[i] && $2 >= ws[i] && (wscope[i] == "all" || wscope[i] == $3)) { excluded++; next }
                        counted++
                        if ($5 == "000" || $5 >= 500 || $5 == 401 || $5 == 403) { failed++; why[$3 " " $4 " " $5]++ }
                }
                END {
                        printf "%d %d %d\n", counted, failed, excluded > out
                        for (w in why) printf "  %s: %d\n", w, why[w] > out
                }' "$CHAOS_DIR/unavailable.windows" "$CHAOS_DIR/requests.log"
        local counted failed excluded
        read -r counted failed excluded <"$CHAOS_DIR/availability.txt"
        say "requests: $counted counted ($excluded while no manager, database or terminal agent could answer), $failed failed"
        [ "$counted" -gt 0 ] || return 0
        if [ $((failed * 100)) -gt "$counted" ]; then
                violation I5-availability requests "$failed of $counted requests failed with a manager up ($((failed * 10000 / counted)) / 10000 > 1 %): $(tail -n +2 "$CHAOS_DIR/availability.txt" | sort -t: -k2 -rn | head -n 8 | tr '\n' ';')"
        fi
}

# ---- I6 ----

converged() {
        local n
        OUT=$CHAOS_DIR/check-agents.json CAPI_TIMEOUT=10 admin_api GET /admin/agents
        n=$(jq '[.items[]? | select(.status == "ALIVE")] | length' "$CHAOS_DIR/check-agents.json" 2>/dev/null)
        [ "${n:-0}" = 3 ] || { CONVERGE_WHY="agents ALIVE: ${n:-?}"; return 1; }
        n=$(sql "SELECT string_agg(name || ' ' || status, ', ') FROM sessions WHERE status IN $TRANSITIONAL") ||
                { CONVERGE_WHY="database unreachable"; return 1; }
        [ -z "$n" ] || { CONVERGE_WHY="transitional: $n"; return 1; }
        local row name container now bad young
        now=$(now_ms)
        : >"$CHAOS_DIR/mismatch.now"
        while IFS= read -r row; do
                name=$(jq -r .name <<<"$row") container=$(jq -r .container <<<"$row")
                container_running "$container" || echo "$name(not-running)" >>"$CHAOS_DIR/mismatch.now"
        done < <(sessions_json "s.status = 'RUNNING'")
        while IFS= read -r row; do
                name=$(jq -r .name <<<"$row") container=$(jq -r .container <<<"$row")
                [ -n "$container" ] && container_running "$container" &&
                        echo "$name(ended,container-runs)" >>"$CHAOS_DIR/mismatch.now"
        done < <(sessions_json "s.status IN ('TERMINATED', 'CANCELLED', 'ERROR')")
        # A batch's container that just exited, or one being removed, is an
        # end in flight, seen again and again while batches end: only a
        # mismatch that lasts MISMATCH_S is stuck.  (Until MISMATCH_S after
        # the check began, a young one may be a stuck one not yet old.)
        awk -v now="$now" -v out="$CHAOS_DIR/mismatch.seen.new" '
                FILENAME == ARGV[1] { seen[$1] = $2; next }
                { print $1, (($1 in seen) ? seen[$1] : now) > out }' \
                "$CHAOS_DIR/mismatch.seen" "$CHAOS_DIR/mismatch.now"
        touch "$CHAOS_DIR/mismatch.seen.new" && mv "$CHAOS_DIR/mismatch.seen.new" "$CHAOS_DIR/mismatch.seen"
        bad=$(awk -v now="$now" -v lim=$((MISMATCH_S * 1000)) 'now - $2 >= lim { printf " %s", $1 }' "$CHAOS_DIR/mismatch.seen")
        young=$(awk -v now="$now" -v lim=$((MISMATCH_S * 1000)) 'now - $2 < lim { printf " %s", $1 }' "$CHAOS_DIR/mismatch.seen")
        [ -z "$bad" ] || { CONVERGE_WHY="containers:$bad"; return 1; }
        if [ -n "$young" ] && [ $((now - CONVERGE_START)) -lt $((MISMATCH_S * 1000)) ]; then
                CONVERGE_WHY="containers (for less than ${MISMATCH_S}s):$young"
                return 1
        fi
        return 0
}

check_converged() {
        local start=$(now_ms)
        CONVERGE_WHY= CONVERGE_START=$start
        : >"$CHAOS_DIR/mismatch.seen"
        while ! converged; do
                if [ $(($(now_ms) - start)) -gt $((CONVERGE_S * 1000)) ]; then
                        violation I6-converged cluster "not converged ${CONVERGE_S}s after the faults stopped: $CONVERGE_WHY"
                        return 1
                fi
                sleep 2
        done
        say "converged $(($(now_ms) - start)) ms after the faults stopped"
}

check_sanitizers() {
        local f
        for f in "$CHAOS_DIR"/m?.log "$CHAOS_DIR"/a?.log; do
                grep -qE 'ERROR: [A-Za-z]+Sanitizer|runtime error:' "$f" 2>/dev/null &&
                        violation sanitizer "$(basename "$f")" "a sanitizer report in $f: $(grep -m1 -E 'ERROR: [A-Za-z]+Sanitizer|runtime error:' "$f" | head -c 200)"
        done
        return 0
}

# check_continuous_loop: 1-4 every 5 s until the file stop-checks appears
# (and the supervisor's round, faults.sh)
check_continuous_loop() {
        while [ ! -e "$CHAOS_DIR/stop-checks" ]; do
                supervise
                check_slots
                check_ends
                check_once
                check_files
                sleep 5
        done
}

check_final() {
        check_converged
        check_slots
        check_ends
        check_once final
        check_files
        check_availability
        check_sanitizers
}
