#!/bin/bash
# shellcheck disable=SC2016
test_description='containers through runc: output and exit codes, limits, isolation, network, restart survival'
. "$(dirname "$0")/../lib/test-lib.sh"

CT_TOOL=$BUILD/container-tool
test_have_prereq ROOT || skip_all 'needs root'
command -v runc >/dev/null 2>&1 || skip_all 'needs runc'
[ -x /bin/busybox ] || skip_all 'needs busybox-static'
[ -x "$CT_TOOL" ] || skip_all "needs $CT_TOOL (make tests)"

cd "$TMP" || exit 1

# Everything of this run has its own name: the state, runc's root and the
# namespace files live in $TMP; cgroups under a parent of our own; a bridge
# and a subnet no other test uses.
STATE=$TMP/agent
CG=tessera-t3020-$$
BR=tt3020$(($$ % 100000))
SUBNET=10.$((200 + $$ % 50)).$((($$ / 50) % 250))
CT=("$CT_TOOL" --state "$STATE" --runc-root "$TMP/runc" --cgroup-parent "$CG" --netns-dir "$TMP/netns"
        --bridge "$BR" --cidr "$SUBNET.1/24")
ct() {
        "${CT[@]}" "$@"
}

# kill -9 of a backgrounded driver ("the agent") without bash's notice
HELD_PIDS=
hold_create() { # OUT ID ARGS...: create with --hold in the background, wait for "created"
        local out=$1 id=$2
        shift 2
        # a simple command, so that $! is the driver itself
        "${CT[@]}" create "$id" --hold "$@" >"$out" 2>&1 &
        HELD_PIDS="$HELD_PIDS $!"
        echo $! >"$out.pid"
        for _ in $(seq 1 200); do
                grep -q '^created' "$out" && return 0
                grep -q '^error' "$out" && { cat "$out"; return 1; }
                sleep 0.05
        done
        cat "$out"
        return 1
}

# Keep each monitor's log (sanitizer reports land there) before removing.
ct_remove() {
        cat "$STATE/containers/$1/monitor.log" >>"$TMP/monitors.log" 2>/dev/null
        ct remove "$1"
}

cleanup_containers() {
        local id f pid c
        for pid in $HELD_PIDS; do kill -9 "$pid" 2>/dev/null; done
        for id in $(ls "$STATE/containers" 2>/dev/null); do
                ct destroy "$id" 0 >/dev/null 2>&1
        done
        for f in "$STATE"/containers/*/monitor.pid; do
                [ -f "$f" ] && kill -9 "$(cut -d' ' -f1 "$f")" 2>/dev/null
        done
        for id in $(runc --root "$TMP/runc" list -q 2>/dev/null); do
                runc --root "$TMP/runc" delete --force "$id" >/dev/null 2>&1
        done
        grep -F " $TMP/" /proc/mounts | awk '{print $2}' | sort -r | while read -r m; do umount -l "$m"; done
        ip link del "$BR" 2>/dev/null
        nft delete table bridge "tessera-$BR" 2>/dev/null
        nft delete table inet "tessera-$BR" 2>/dev/null
        for c in /sys/fs/cgroup/*/"$CG" /sys/fs/cgroup/"$CG"; do
                [ -d "$c" ] || continue
                find "$c" -mindepth 1 -depth -type d -exec rmdir {} + 2>/dev/null
                rmdir "$c" 2>/dev/null
        done
}
trap 'rc=$?; cleanup_containers; (exit $rc); test_cleanup_' EXIT

# A busybox root filesystem (with /lib and /lib64 links so that the host's
# /usr can be bound in for python3), and a second layer on top of it.
LOWER=$TMP/lower
mkdir -p "$LOWER/bin" "$LOWER/etc" "$LOWER/usr" "$LOWER/tmp" "$TMP/layer2/etc"
cp /bin/busybox "$LOWER/bin/"
for a in $(/bin/busybox --list); do
        [ "$a" = busybox ] || ln -s busybox "$LOWER/bin/$a"
done
ln -s usr/lib "$LOWER/lib"
ln -s usr/lib64 "$LOWER/lib64"
echo low >"$LOWER/etc/msg"
echo base >"$LOWER/etc/base"
echo high >"$TMP/layer2/etc/msg"
L="--layer $LOWER"
[ -x /usr/bin/python3 ] && test_set_prereq PYTHON
[ "$(nproc)" -ge 2 ] && test_set_prereq TWO_CORES

test_expect_success 'echo hello: its output is logged and exit code 0 recorded' '
        ct create hello $L --net none -- echo hello &&
        ct wait hello 20 >state &&
        echo "exited code=0 signal=0 oom=0" >expect &&
        test_cmp expect state &&
        ct log hello >out &&
        echo hello >expect &&
        test_cmp expect out &&
        ct_remove hello &&
        test_must_fail test -d "$STATE/containers/hello"
'

test_expect_success 'exit code 7 is recorded' '
        ct create seven $L --net none -- sh -c "echo to-stderr >&2; exit 7" &&
        ct wait seven 20 >state &&
        grep -x "exited code=7 signal=0 oom=0" state &&
        grep -x to-stderr "$STATE/containers/seven/log" &&
        grep "\"exit_code\": 7" "$STATE/containers/seven/exit.json" &&
        ct_remove seven
'

test_expect_success 'layers: the top-most wins, writes go to the container only' '
        ct create layers --layer "$LOWER" --layer "$TMP/layer2" --net none -- \
                sh -c "cat /etc/msg /etc/base; echo mine >/etc/msg; echo new >/newfile; rm /etc/base" &&
        ct wait layers 20 &&
        ct log layers >out &&
        printf "high\nbase\n" >expect &&
        test_cmp expect out &&
        test "$(cat "$TMP/layer2/etc/msg")" = high &&
        test -f "$LOWER/etc/base" &&
        test "$(cat "$STATE/containers/layers/rw/upper/newfile")" = new &&
        ct_remove layers
'

test_expect_success 'a command runc cannot start fails with its message and leaves nothing' '
        test_must_fail ct create nocmd $L --net none -- /no/such/program >out &&
        grep -i "no such file or directory" out &&
        test_must_fail test -e "$STATE/containers/nocmd" &&
        test_must_fail grep -F "$STATE/containers/nocmd" /proc/mounts &&
        test -z "$(runc --root "$TMP/runc" list -q)"
'

test_expect_success 'ids are checked; a taken id is refused' '
        test_must_fail ct create ../evil $L -- true >out &&
        grep "invalid container id" out &&
        ct create taken $L --net none -- sleep 1000 &&
        test_must_fail ct create taken $L --net none -- true >out &&
        grep "exists" out &&
        ct destroy taken 0 &&
        ct_remove taken
'

test_expect_success 'memory limit: a process that needs more is OOM-killed, and exit.json says so' '
        ct create oom $L --net none --memory $((32 << 20)) -- dd if=/dev/zero of=/dev/null bs=64M count=1 &&
        ct wait oom 20 >state &&
        grep -x "exited code=137 signal=9 oom=1" state &&
        grep "\"oom_killed\": true" "$STATE/containers/oom/exit.json" &&
        ct_remove oom
'

test_expect_success 'a child OOM-killed while init exits normally still counts as OOM' '
        ct create oom2 $L --net none --memory $((32 << 20)) -- \
                sh -c "dd if=/dev/zero of=/dev/null bs=64M count=1; echo dd=\$?" &&
        ct wait oom2 20 >state &&
        grep -x "exited code=0 signal=0 oom=1" state &&
        grep -x dd=137 "$STATE/containers/oom2/log" &&
        ct_remove oom2
'

test_expect_success 'pids limit: a fork bomb stops at 64 and the host is fine' '
        ct create bomb $L --net none --pids 64 -- \
                sh -c "(while :; do sleep 100 & done) 2>/dev/null; echo stopped; exec sleep 100" &&
        for _ in $(seq 1 100); do grep -q stopped "$STATE/containers/bomb/log" && break; sleep 0.1; done &&
        grep -x stopped "$STATE/containers/bomb/log" &&
        ct stats bomb >stats &&
        pids=$(sed -n "s/^pids=//p" stats) &&
        test "$pids" -gt 32 && test "$pids" -le 64 &&
        ct state bomb | grep "^running" &&
        /bin/true &&
        ct destroy bomb 0 &&
        ct wait bomb 20 | grep "exited code=137" &&
        ct_remove bomb
'

test_expect_success 'one allotted core: nproc, cpu/online, OMP_NUM_THREADS say 1' '
        ct create core1 $L --net none --cores 0 --cpu 1 -- \
                sh -c "nproc; cat /sys/devices/system/cpu/online /sys/devices/system/cpu/possible; echo \$OMP_NUM_THREADS \$MKL_NUM_THREADS" &&
        ct wait core1 20 &&
        ct log core1 >out &&
        printf "1\n0\n0\n1 1\n" >expect &&
        test_cmp expect out &&
        ct_remove core1
'

test_expect_success TWO_CORES 'two allotted cores: 2 and 0-1' '
        ct create core2 $L --net none --cores 0,1 --cpu 2 -- \
                sh -c "nproc; cat /sys/devices/system/cpu/online" &&
        ct wait core2 20 &&
        ct log core2 >out &&
        printf "2\n0-1\n" >expect &&
        test_cmp expect out &&
        ct_remove core2
'

test_expect_success 'half a core: a CFS quota of 50 ms per 100 ms, and one core told' '
        ct create half $L --net none --cores 0 --cpu 0.5 -- \
                sh -c "nproc; cat /sys/devices/system/cpu/online; exec sleep 100" &&
        q=$(cat /sys/fs/cgroup/cpu/$CG/half/cpu.cfs_quota_us 2>/dev/null ||
                cut -d" " -f1 /sys/fs/cgroup/$CG/half/cpu.max) &&
        test "$q" = 50000 &&
        ct destroy half 0 &&
        printf "1\n0\n" >expect &&
        ct log half >out &&
        test_cmp expect out &&
        ct_remove half
'

test_expect_success PYTHON 'python3 os.cpu_count() sees the allotted cores' '
        ct create py $L --net none --cores 0 --cpu 1 --bind /usr:/usr:ro -- \
                /usr/bin/python3 -c "import os; print(os.cpu_count(), len(os.sched_getaffinity(0)))" &&
        ct wait py 30 | grep "code=0" &&
        ct log py >out &&
        echo "1 1" >expect &&
        test_cmp expect out &&
        ct_remove py
'

test_expect_success 'security: reduced capabilities, no_new_privs, seccomp, masked and read-only paths' '
        ct create sec $L --net none -- sh -c "
                grep -E \"^(CapEff|CapBnd|NoNewPrivs|Seccomp):\" /proc/self/status
                unshare -U true 2>/dev/null && echo userns-allowed
                mount -t tmpfs none /mnt 2>/dev/null && echo mount-allowed
                echo 1 2>/dev/null >/proc/sys/kernel/ns_last_pid && echo proc-sys-writable
                test -s /proc/kcore && echo kcore-visible
                mknod /tmp/null c 1 3 2>/dev/null && echo mknod-allowed
                echo done" &&
        ct wait sec 20 &&
        ct log sec >out &&
        printf "CapEff:\t00000000a00405fb\nCapBnd:\t00000000a00405fb\nNoNewPrivs:\t1\nSeccomp:\t2\ndone\n" >expect &&
        test_cmp expect out &&
        grep "\"SCMP_ACT_ALLOW\"" "$STATE/containers/sec/bundle/config.json" &&
        ct_remove sec
'

test_expect_success 'isolation: two containers see only their own processes and files' '
        ct create iso-a $L --net none -- sh -c "echo a >/only-in-a; exec sleep 1000" &&
        ct create iso-b $L --net none -- sh -c "sleep 0.3; ps -o pid,args; ls /only-in-a 2>&1; ls /proc | grep -c \"^[0-9]\"" &&
        ct wait iso-b 20 &&
        ct log iso-b >out &&
        test_must_fail grep "sleep 1000" out &&
        grep "No such file" out &&
        test "$(tail -n 1 out)" -le 3 &&
        ct state iso-a | grep "^running" &&
        ct destroy iso-a 0 &&
        ct_remove iso-a &&
        ct_remove iso-b
'

test_expect_success 'network none: loopback only' '
        ct create nonet $L --net none -- sh -c "ip -o link | cut -d: -f2" &&
        ct wait nonet 20 &&
        ct log nonet >out &&
        echo " lo" >expect &&
        test_cmp expect out &&
        ct_remove nonet
'

test_expect_success 'network: two containers of one group on the bridge talk over TCP (busybox httpd and wget)' '
        ct create web $L --group pair -- sh -c "mkdir /www; echo from-web >/www/index.html; exec httpd -f -p 8080 -h /www" &&
        ct state web >state &&
        ip=$(sed -n "s/.* ip=//p" state) &&
        test -n "$ip" &&
        case $ip in $SUBNET.*) ;; *) false ;; esac &&
        ct create client $L --group pair -- sh -c "for i in 1 2 3 4 5 6 7 8 9 10; do wget -q -O - http://$ip:8080/ && exit 0; sleep 0.2; done; exit 1" &&
        ct wait client 30 >state &&
        grep "code=0" state &&
        grep -x from-web "$STATE/containers/client/log" &&
        printf "web\npair\n1\n" >expect &&
        test_cmp expect "$STATE/ipam/$BR/$ip"
'

test_expect_success 'network: a container of another group reaches neither them nor a host service on the bridge address' '
        mkdir -p www && echo from-host >www/index.html &&
        HP=$(test_free_port) &&
        { busybox httpd -f -p "$SUBNET.1:$HP" -h www & echo $! >host-httpd.pid; } &&
        for _ in $(seq 1 50); do curl -s -m 3 "http://$SUBNET.1:$HP/" >/dev/null 2>&1 && break; sleep 0.1; done &&
        curl -s -m 3 "http://$SUBNET.1:$HP/" | grep -qx from-host &&
        ct create stranger $L -- sh -c "timeout 5 wget -q -O - http://$ip:8080/ || echo refused-web; timeout 5 wget -q -O - http://$SUBNET.1:$HP/ || echo refused-host" &&
        ct wait stranger 30 >state &&
        kill "$(cat host-httpd.pid)" &&
        grep -x refused-web "$STATE/containers/stranger/log" &&
        grep -x refused-host "$STATE/containers/stranger/log" &&
        ct_remove stranger &&
        nft list map bridge "tessera-$BR" port_group >map &&
        grep -q "$(sed -n "s/.*\"veth\": \"\(.*\)\".*/\1/p" "$STATE/containers/web/container.json")\" : 0x00000001" map
'

test_expect_success 'stats: cpu, memory, pids and network counters of a running container' '
        ct stats web >stats &&
        cat stats &&
        test "$(sed -n "s/^cpu_usage_ns=//p" stats)" -gt 0 &&
        test "$(sed -n "s/^mem_usage_bytes=//p" stats)" -gt 0 &&
        test "$(sed -n "s/^pids=//p" stats)" -ge 1 &&
        test "$(sed -n "s/^net_rx_bytes=//p" stats)" -gt 0 &&
        test "$(sed -n "s/^net_tx_bytes=//p" stats)" -gt 0
'

test_expect_success 'destroy: TERM, grace, KILL; exit recorded; address, veth, group rules, netns and rootfs released' '
        veth=$(sed -n "s/.*\"veth\": \"\(.*\)\".*/\1/p" "$STATE/containers/web/container.json") &&
        test -n "$veth" &&
        ip link show "$veth" &&
        ct destroy web 1 &&
        ct state web >state &&
        grep -x "exited code=137 signal=9 oom=0" state &&
        test_must_fail ip link show "$veth" &&
        nft list map bridge "tessera-$BR" port_group >map &&
        test_must_fail grep -q "\"$veth\"" map &&
        test_must_fail test -e "$TMP/netns/web" &&
        test_must_fail test -e "$STATE/ipam/$BR/$ip" &&
        test_must_fail grep -F "$STATE/containers/web/" /proc/mounts &&
        ct_remove web &&
        ct_remove client
'

test_expect_success 'restart: a container outlives its agent, is re-adopted and destroyed' '
        hold_create held.out survivor $L -- sleep 1000 &&
        kill -9 "$(cat held.out.pid)" &&
        sleep 0.2 &&
        ct list >list &&
        cat list &&
        grep "^survivor running pid=[1-9]" list &&
        pid=$(sed -n "s/^survivor running pid=\([0-9]*\).*/\1/p" list) &&
        kill -0 "$pid" &&
        ct destroy survivor 0 &&
        ct state survivor | grep -x "exited code=137 signal=9 oom=0" &&
        test_must_fail kill -0 "$pid" 2>/dev/null &&
        ct_remove survivor
'

test_expect_success 'a container that ends while no agent runs gets its exit code recorded' '
        hold_create held2.out orphan $L --net none -- sh -c "sleep 1; exit 5" &&
        kill -9 "$(cat held2.out.pid)" &&
        ct wait orphan 20 >state &&
        grep -x "exited code=5 signal=0 oom=0" state &&
        ct_remove orphan
'

test_expect_success 'a lost monitor: the state says so, destroy still stops and records it' '
        ct create lost $L --net none -- sleep 1000 &&
        kill -9 "$(cut -d" " -f1 "$STATE/containers/lost/monitor.pid")" &&
        sleep 0.1 &&
        ct state lost | grep "^running monitor-lost pid=[1-9]" &&
        test_must_fail ct remove lost >out &&
        grep "is running" out &&
        ct destroy lost 0 &&
        ct state lost | grep -x "exited code=-1 signal=0 oom=0" &&
        grep "\"monitor_lost\": true" "$STATE/containers/lost/exit.json" &&
        test_must_fail runc --root "$TMP/runc" state lost 2>/dev/null &&
        ct_remove lost
'

test_expect_success 'log rotation keeps the tail, readers follow by offset' '
        ct --log-max 8192 create chatty $L --net none -- seq 1 20000 &&
        ct wait chatty 20 &&
        ct log chatty >out 2>next &&
        total=$(seq 1 20000 | wc -c) &&
        grep -x "next=$total" next &&
        tail -n 1 out | grep -x 20000 &&
        size=$(wc -c <out) &&
        test "$size" -ge 4096 && test "$size" -le 8192 &&
        seq 1 20000 | tail -c "$size" >expect &&
        test_cmp expect out &&
        ct log chatty $((total - 6)) >out 2>/dev/null &&
        printf "20000\n" >expect &&
        test_cmp expect out &&
        ct_remove chatty
'

test_expect_success 'nothing is left: no containers, mounts, namespaces, veths or runc state' '
        ct list >list &&
        cat list &&
        test_must_be_empty_() { test ! -s "$1"; } &&
        test_must_be_empty_ list &&
        test -z "$(runc --root "$TMP/runc" list -q)" &&
        test_must_fail grep -F " $TMP/" /proc/mounts &&
        test -z "$(ls "$TMP/netns" 2>/dev/null)" &&
        test -z "$(ls "$STATE/ipam/$BR" | grep -v "^lock$")"
'

test_expect_success 'no sanitizer report in any monitor log' '
        test -f "$TMP/monitors.log" &&
        test_must_fail grep -E "ERROR: [A-Za-z]+Sanitizer|runtime error:" "$TMP/monitors.log"
'

test_done
