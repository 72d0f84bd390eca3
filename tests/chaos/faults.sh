# shellcheck shell=bash
# faults.sh - inject and heal the chaos test's faults, and play a schedule
# (schedule.sh) of them.
#
# Every fault is logged in faults.log as "MS start KIND TARGET ARG" when it
# begins and "MS end KIND TARGET ARG" when it is healed; invariants.sh
# reads the log (when was which node down, which agent unreachable how
# long).  Kinds:
#
#   kill-manager M D   kill -9, restarted D s later
#   stop-manager M D   SIGSTOP, SIGCONT D s later
#   restart-managers m1+m2 D   every manager killed -9, all restarted D s
#                      later (an upgrade of the control plane)
#   kill-agent A D     the same for an agent (its containers keep running)
#   stop-agent A D
#   pg-restart pg D    PostgreSQL stopped (immediate), started D s later
#   cut-agent A D      the agent's veth down (cut from every manager) for D s
#   long-cut-agent A D the same, longer than agent_lost_timeout
#   cut-manager M D    the manager's veth down (cut from the front, the
#                      agents and PostgreSQL) for D s
#   cut-pair M-A D     blackhole routes between one manager and one agent
#                      (the agent still reaches the other manager) for D s
#   delay-agent A D    500 ms each way on the agent's connection to the
#                      managers (delay-relay.py: this kernel has no netem)
#   disk-full A D      the agent's state_dir (a tmpfs) filled up for D s
#   clock-step N S     the clock node's wall clock stepped by S s
#                      (libfaketime; CLOCK_MONOTONIC is not touched)

fault_log() { # start|end KIND TARGET ARG
        record faults.log "$@"
        say "fault $1: $2 $3 $4"
}

fault_inject() { # KIND TARGET ARG
        local kind=$1 target=$2 arg=$3 m
        case $kind in
        kill-manager | kill-agent) touch "$CHAOS_DIR/down-$target"; node_kill "$target" ;;
        restart-managers) for m in $MANAGERS; do touch "$CHAOS_DIR/down-$m"; node_kill "$m"; done ;;
        stop-manager | stop-agent) node_signal "$target" STOP ;;
        pg-restart) pg_stop immediate ;;
        cut-agent | long-cut-agent | cut-manager) ip link set "$(veth_of "$target")" down ;;
        cut-pair)
                ip -n "$(ns_of "${target%-*}")" route add blackhole "$(ip_of "${target#*-}")/32"
                ip -n "$(ns_of "${target#*-}")" route add blackhole "$(ip_of "${target%-*}")/32"
                ;;
        delay-agent) echo 500 >"$CHAOS_DIR/delay-$target" ;;
        disk-full) disk_fill "$target" ;;
        clock-step) clock_step "$target" "$arg" ;;
        *) echo "faults.sh: unknown fault '$kind'" >&2; return 1 ;;
        esac
}

fault_heal() { # KIND TARGET ARG
        local kind=$1 target=$2 m
        case $kind in
        kill-manager | kill-agent) node_start "$target"; rm -f "$CHAOS_DIR/down-$target" ;;
        restart-managers) for m in $MANAGERS; do node_start "$m"; rm -f "$CHAOS_DIR/down-$m"; done ;;
        stop-manager | stop-agent) node_signal "$target" CONT ;;
        pg-restart) pg_start ;;
        cut-agent | long-cut-agent | cut-manager) ip link set "$(veth_of "$target")" up ;;
        cut-pair)
                ip -n "$(ns_of "${target%-*}")" route del blackhole "$(ip_of "${target#*-}")/32"
                ip -n "$(ns_of "${target#*-}")" route del blackhole "$(ip_of "${target%-*}")/32"
                ;;
        delay-agent) echo 0 >"$CHAOS_DIR/delay-$target" ;;
        disk-full) rm -f "$CHAOS_DIR/$target/state/chaos-fill" ;;
        clock-step) ;;
        esac
}

# disk_fill AGENT: take every free byte of its state tmpfs
disk_fill() {
        local f=$CHAOS_DIR/$1/state/chaos-fill avail
        avail=$(df --output=avail -B1 "$CHAOS_DIR/$1/state" | tail -n 1)
        fallocate -l "$avail" "$f" 2>/dev/null
        # what fallocate left (rounding, blocks freed meanwhile)
        dd if=/dev/zero of="$f" bs=64k oflag=append conv=notrunc 2>/dev/null
        return 0
}

# clock_step NODE SECONDS: move the node's faked clock (libfaketime reads
# the file again within FAKETIME_CACHE_DURATION)
clock_step() {
        local f=$CHAOS_DIR/clock-$1 cur
        cur=$(tr -d '+' <"$f")
        cur=$((cur + $2))
        if [ "$cur" -ge 0 ]; then echo "+$cur" >"$f"; else echo "$cur" >"$f"; fi
}

# fault_run KIND TARGET ARG: one fault, start to end
fault_run() {
        local kind=$1 target=$2 arg=$3
        fault_log start "$kind" "$target" "$arg"
        fault_inject "$kind" "$target" "$arg"
        if [ "$kind" != clock-step ]; then
                sleep "$arg"
                fault_heal "$kind" "$target" "$arg"
        fi
        fault_log end "$kind" "$target" "$arg"
}

# faults_play SCHEDULE_FILE: run each fault at its offset (from now), each
# in the background; returns when the last one has been healed
faults_play() {
        local t0 off kind target arg pids=() n=0 now_s
        t0=$(date +%s)
        record faults.log play-start - - -
        while read -r off kind target arg; do
                case $off in '#'* | '') continue ;; esac
                now_s=$(date +%s)
                [ $((t0 + off)) -gt "$now_s" ] && sleep $((t0 + off - now_s))
                fault_run "$kind" "$target" "$arg" &
                pids+=($!)
                n=$((n + 1))
                set_pid "fault-$n" $!
        done <"$1"
        [ ${#pids[@]} -eq 0 ] || wait "${pids[@]}" 2>/dev/null
        record faults.log play-end - - -
}

# supervise: what systemd's Restart=always would do on a real node: a
# manager or agent that exited by itself (not killed by the schedule:
# down-NODE) is logged ("exited" in nodes.log, with its last words) and
# started again 5 s later.  Called from the checks' loop.
supervise() {
        local node pid
        for node in $MANAGERS $AGENTS; do
                [ -e "$CHAOS_DIR/down-$node" ] && continue
                pid=$(pid_of "$node")
                [ -n "$pid" ] || continue
                alive "$pid" && continue
                [ -e "$CHAOS_DIR/down-$node" ] && continue
                record nodes.log "exited $node $pid"
                say "node $node exited by itself: $(grep -v '^\s*$' "$CHAOS_DIR/$node.log" | tail -n 1 | cut -c1-200); restarting it in 5 s"
                sleep 5
                [ -e "$CHAOS_DIR/down-$node" ] || node_start "$node"
        done
}

# faults_heal_all: undo whatever may still be in effect (after an
# interrupted schedule): every node running and continued, links up, no
# blackhole, no delay, no fill, PostgreSQL up
faults_heal_all() {
        local node m a
        rm -f "$CHAOS_DIR"/down-*
        for node in $MANAGERS $AGENTS; do
                ip link set "$(veth_of "$node")" up 2>/dev/null
                node_signal "$node" CONT
                alive "$(pid_of "$node")" || node_start "$node"
        done
        for m in $MANAGERS; do
                for a in $AGENTS; do
                        ip -n "$(ns_of "$m")" route del blackhole "$(ip_of "$a")/32" 2>/dev/null
                        ip -n "$(ns_of "$a")" route del blackhole "$(ip_of "$m")/32" 2>/dev/null
                done
        done
        for a in $AGENTS; do
                echo 0 >"$CHAOS_DIR/delay-$a"
                rm -f "$CHAOS_DIR/$a/state/chaos-fill"
        done
        runuser -u postgres -- "$(pg_bindir)/pg_ctl" -D "$CHAOS_DIR/pg/data" status >/dev/null 2>&1 || pg_start
}
