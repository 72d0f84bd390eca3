#!/bin/bash
test_description='a user'"'"'s dotfiles land in every new session'"'"'s home directory: the work user'"'"'s, with their permission, before the bootstrap script runs; directories on the way as the image has them; the user may change or remove them; one where a folder is mounted is left out; a later change reaches new sessions only; their layer goes with the container'
. "$(dirname "$0")/../lib/test-lib.sh"
. "$(dirname "$0")/../lib/registry.sh"

test_with_containers

# dotfile PATH DATA PERM: POST /user-config/dotfiles as the SDK sends it
dotfile() {
        api POST /user-config/dotfiles "$(jq -cn --arg p "$1" --arg d "$2" --arg m "$3" '{data: $d, path: $p, permission: $m}')"
        test "$CODE" = 200 || { echo "dotfile $1: $CODE $(cat "$TMP/out")"; return 1; }
}

# session NAME [EXTRA_FIELDS]: a busybox session, RUNNING
session() {
        api POST /session "{\"name\": \"$1\", \"image\": \"busybox:latest\", \"enqueueOnly\": true, \"config\": {\"resources\": {\"cpu\": 0.25, \"mem\": \"128m\"}, \"mounts\": [\"data\"]}${2:+, $2}}"
        test "$CODE" = 201 || { echo "session $1: $CODE $(cat "$TMP/out")"; return 1; }
        wait_status "$1" RUNNING
}

layer_of() { # SESSION: its kernel's dotfiles layer on the host
        echo "$MANAGER_STATE/agent/images/layers/tessera-dotfiles/$(kernel_id "$1")"
}

BASHRC='export EDITOR=vi
alias ll="ls -l"
'
SETTINGS='{"theme": "dark"}'

test_expect_success 'tessera dev with busybox; a folder "data"; the admin'"'"'s dotfiles, one where the folder goes' '
        start_dev_with_busybox &&
        api POST /folders "{\"name\": \"data\"}" && test "$CODE" = 201 &&
        dotfile .bashrc "$BASHRC" 644 &&
        dotfile .config/app/settings.json "$SETTINGS" 600 &&
        dotfile /home/work/bin/hello.sh "#!/bin/sh
echo hello from a dotfile
" 750 &&
        dotfile data "not a folder" 644 &&
        dotfile data2/x "beside the folder" 644
'

test_expect_success 'a session starts with them; the bootstrap script already sees them' '
        session sess1 "\"bootstrap_script\": \"cat .config/app/settings.json >boot-saw.txt\"" &&
        session_run sess1 "cat boot-saw.txt" && test "$EXIT" = 0 &&
        test "$(cat "$TMP/console")" = "$SETTINGS"
'

test_expect_success 'each is the work user'"'"'s, with its permission and its data' '
        session_run sess1 "stat -c \"%a %u %g %n\" .bashrc .config/app/settings.json bin/hello.sh data2/x" &&
        test "$EXIT" = 0 &&
        printf "%s\n" "644 1000 1000 .bashrc" "600 1000 1000 .config/app/settings.json" \
                "750 1000 1000 bin/hello.sh" "644 1000 1000 data2/x" >"$TMP/want" &&
        test "$(cat "$TMP/want")" = "$(cat "$TMP/console")" &&
        session_run sess1 "cat .bashrc" && test "$(cat "$TMP/console")" = "$(printf "%s" "$BASHRC")" &&
        session_run sess1 "./bin/hello.sh" && test "$EXIT" = 0 && test "$(cat "$TMP/console")" = "hello from a dotfile"
'

test_expect_success 'the directories on the way: the home as the image has it, new ones the work user'"'"'s 0755' '
        session_run sess1 "stat -c \"%a %u %g %n\" /home /home/work .config .config/app bin data2" &&
        printf "%s\n" "755 0 0 /home" "755 1000 1000 /home/work" "755 1000 1000 .config" "755 1000 1000 .config/app" \
                "755 1000 1000 bin" "755 1000 1000 data2" >"$TMP/want" &&
        test "$(cat "$TMP/want")" = "$(cat "$TMP/console")"
'

test_expect_success 'one where a folder is mounted is left out: the folder is there, the session ran' '
        session_run sess1 "test -d data && grep -c \" /home/work/data \" /proc/mounts" &&
        test "$EXIT" = 0 && test "$(cat "$TMP/console")" = 1 &&
        grep -q "dotfile .data. is where a folder is mounted: left out" "$MANAGER_LOG"
'

test_expect_success 'the user may change and remove them; the layer on the host stays as it was' '
        L=$(layer_of sess1) && test -d "$L" &&
        test "$(stat -c "%a %u %g" "$L/home/work/.bashrc")" = "644 1000 1000" &&
        session_run sess1 "echo more >>.bashrc && rm bin/hello.sh && mkdir -p .config/app/more && tail -n 1 .bashrc" &&
        test "$EXIT" = 0 && test "$(cat "$TMP/console")" = more &&
        test "$(cat "$L/home/work/.bashrc")" = "$(printf "%s" "$BASHRC")" && test -f "$L/home/work/bin/hello.sh" &&
        ! test -e "$L/home/work/data"
'

test_expect_success 'a change reaches new sessions, not those that run' '
        api PATCH /user-config/dotfiles "{\"path\": \".bashrc\", \"data\": \"changed\n\", \"permission\": \"600\"}" &&
        test "$CODE" = 200 &&
        session sess2 &&
        session_run sess2 "stat -c %a .bashrc && cat .bashrc" && printf "600\nchanged\n" >"$TMP/want" &&
        test "$(cat "$TMP/want")" = "$(cat "$TMP/console")" &&
        session_run sess1 "head -n 1 .bashrc" && test "$(cat "$TMP/console")" = "export EDITOR=vi"
'

test_expect_success 'the layer goes with the container' '
        L1=$(layer_of sess1) L2=$(layer_of sess2) && test -d "$L1" && test -d "$L2" &&
        destroy_sessions sess1 sess2 &&
        for _ in $(seq 1 300); do test -e "$L1" || test -e "$L2" || break; sleep 0.1; done &&
        ! test -e "$L1" && ! test -e "$L2"
'

test_expect_success 'without dotfiles: no layer, the home as the image has it' '
        for p in .bashrc .config/app/settings.json bin/hello.sh data data2/x; do
                api DELETE "/user-config/dotfiles?path=$(jq -rn --arg s "$p" "\$s | @uri")" && test "$CODE" = 200 || return 1
        done &&
        session sess3 &&
        ! test -e "$(layer_of sess3)" &&
        session_run sess3 "stat -c \"%a %u %g\" /home/work; ls -A /home/work | grep -v \"^data\$\" | wc -l" &&
        printf "755 1000 1000\n0\n" >"$TMP/want" && test "$(cat "$TMP/want")" = "$(cat "$TMP/console")" &&
        destroy_sessions sess3
'

test_done
