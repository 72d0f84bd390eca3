#!/bin/bash
# schedule.sh SEED DURATION_S AGENT_LOST_TIMEOUT_S - print the fault
# schedule of a chaos run, one fault a line:
#
#     OFFSET_S KIND TARGET ARG
#
# OFFSET_S: seconds after the faults start; ARG: how long the fault lasts
# in seconds (clock-step: the step in seconds, + or -).  The first line is
# "# clock-node NODE": the node that runs under libfaketime.
#
# A pure function of its arguments (bash's RANDOM seeded with SEED): the
# same seed and duration give the same schedule, which is how a failing run
# is replayed.  The first faults are every kind once, in a seeded order, so
# even a short run sees each; then kinds are drawn by weight.  A node (or
# PostgreSQL) has at most one fault at a time; two different nodes may be
# down together (both managers, too).  Faults end by DURATION_S.
set -eu

seed=${1:?usage: schedule.sh SEED DURATION_S AGENT_LOST_TIMEOUT_S}
duration=${2:?}
lost=${3:?}
RANDOM=$seed

managers=(m1 m2)
agents=(a1 a2 a3)
nodes=(m1 m2 a1 a2 a3)

# kind weight min_s max_s
kinds=(
        "kill-manager 10 3 30"
        "restart-managers 4 10 50"
        "stop-manager 8 3 15"
        "kill-agent 10 3 30"
        "stop-agent 8 3 15"
        "pg-restart 6 2 15"
        "cut-agent 10 5 40"
        "cut-manager 6 5 25"
        "cut-pair 6 5 40"
        "delay-agent 8 10 40"
        "disk-full 8 10 40"
        "clock-step 6 0 0"
)
# agents unreachable past agent_lost_timeout: only long runs have room
if [ "$duration" -ge 600 ]; then
        kinds+=("long-cut-agent 2 $((lost + 20)) $((lost + 40))")
fi

# rand LOW HIGH: R = a number in [LOW, HIGH] (never in $(...): a subshell
# reseeds RANDOM)
rand() {
        R=$(($1 + RANDOM % ($2 - $1 + 1)))
}

clock_node=${nodes[$((RANDOM % ${#nodes[@]}))]}
echo "# clock-node $clock_node"

declare -A busy_until=()
free_at() { # TARGET T: is TARGET free at T?
        [ "${busy_until[$1]:-0}" -le "$2" ]
}

# pick_free T NODE...: target = a random one of them free at T, else empty
pick_free() {
        local t=$1 start i
        shift
        start=$((RANDOM % $#))
        target=
        for ((i = 0; i < $#; i++)); do
                local cand=("$@")
                cand=${cand[$(((start + i) % $#))]}
                if free_at "$cand" "$t"; then
                        target=$cand
                        return
                fi
        done
}

# the first round: every kind once (but the long ones), shuffled
order=()
for i in "${!kinds[@]}"; do
        case ${kinds[$i]} in long-*) ;; *) order+=("$i") ;; esac
done
for ((i = ${#order[@]} - 1; i > 0; i--)); do
        j=$((RANDOM % (i + 1)))
        tmp=${order[$i]} order[$i]=${order[$j]} order[$j]=$tmp
done

total=0
for k in "${kinds[@]}"; do
        set -- $k
        total=$((total + $2))
done

draw_kind() { # SPEC = a kind drawn by weight
        local r=$((RANDOM % total)) k
        for k in "${kinds[@]}"; do
                set -- $k
                if [ "$r" -lt "$2" ]; then
                        SPEC=$k
                        return
                fi
                r=$((r - $2))
        done
}

rand 2 5
t=$R
n=0
clock_offset=0
while [ "$t" -lt "$duration" ]; do
        # (a kind of the first round whose targets are busy is tried again
        # at the next step)
        if [ "$n" -lt "${#order[@]}" ]; then
                spec=${kinds[${order[$n]}]}
        else
                draw_kind
                spec=$SPEC
        fi
        set -- $spec
        kind=$1 lo=$3 hi=$4
        rand "$lo" "$hi"
        len=$R
        [ $((t + len)) -le "$duration" ] || len=$((duration - t))
        target= arg=$len
        case $kind in
        kill-manager | stop-manager | cut-manager)
                pick_free "$t" "${managers[@]}"
                ;;
        kill-agent | stop-agent | cut-agent | delay-agent | disk-full | long-cut-agent)
                pick_free "$t" "${agents[@]}"
                ;;
        cut-pair)
                m=${managers[$((RANDOM % 2))]} a=${agents[$((RANDOM % 3))]}
                target=$m-$a
                free_at "$m" "$t" && free_at "$a" "$t" || target=
                [ -z "$target" ] || busy_until[$m]=$((t + len + 1)) busy_until[$a]=$((t + len + 1))
                ;;
        restart-managers)
                target=m1+m2
                free_at m1 "$t" && free_at m2 "$t" || target=
                [ -z "$target" ] || busy_until[m1]=$((t + len + 1)) busy_until[m2]=$((t + len + 1))
                ;;
        pg-restart)
                target=pg
                free_at pg "$t" || target=
                ;;
        clock-step)
                target=$clock_node
                # +-120 s, the offset kept within +-240 s
                if [ $((RANDOM % 2)) = 0 ] && [ "$clock_offset" -lt 240 ] || [ "$clock_offset" -le -240 ]; then
                        arg=+120
                else
                        arg=-120
                fi
                clock_offset=$((clock_offset + arg))
                ;;
        esac
        if [ -n "$target" ] && [ "$len" -gt 0 -o "$kind" = clock-step ]; then
                echo "$t $kind $target $arg"
                n=$((n + 1))
                case $kind in
                cut-pair | restart-managers | clock-step) ;;
                *) busy_until[$target]=$((t + len + 1)) ;;
                esac
        fi
        rand 2 5
        t=$((t + R))
done
