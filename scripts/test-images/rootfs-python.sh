# shellcheck shell=bash
# rootfs-python.sh - sourced by build.sh: the python test image, Debian
# bookworm minbase plus python3 by debootstrap, from the Debian mirror this
# machine's apt uses (or $TESSERA_DEBIAN_MIRROR), with a `work` user.

SUITE=bookworm

# The first Debian (not -security) archive URI in the apt sources.
debian_mirror() {
        if [ -n "${TESSERA_DEBIAN_MIRROR:-}" ]; then
                echo "$TESSERA_DEBIAN_MIRROR"
                return
        fi
        local m
        m=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null |
                sed -nE 's/^[[:space:]]*(deb|URIs:)[[:space:]]+(\[[^]]*\][[:space:]]+)?(https?:\/\/[^[:space:]]*\/debian)\/?([[:space:]].*)?$/\3/p' |
                head -n 1) || true
        echo "${m:-http://deb.debian.org/debian}"
}

rootfs_inputs() {
        echo "suite=$SUITE mirror=$(debian_mirror)"
        dpkg-query -W -f='${Package} ${Version}\n' debootstrap
}

rootfs_build() {
        local r=$1 mirror
        mirror=$(debian_mirror)
        if [ "$(id -u)" -ne 0 ]; then
                echo "build.sh: the python image needs root (debootstrap)" >&2
                return 1
        fi
        echo "build.sh: debootstrap --variant=minbase --include=python3 $SUITE from $mirror (minutes)" >&2
        debootstrap --variant=minbase --include=python3 "$SUITE" "$r" "$mirror" >&2
        # what a container gets from its runtime, or what differs per build
        rm -rf "${r:?}"/dev/* "$r"/proc/* "$r"/sys/* "$r"/run/* "$r"/tmp/* "$r"/var/tmp/* \
                "$r"/var/cache/apt/*.bin "$r"/var/cache/apt/archives/*.deb "$r"/var/lib/apt/lists/* \
                "$r"/var/log/* "$r"/root/.bash_history
        : >"$r/etc/resolv.conf"
        : >"$r/etc/machine-id"
        echo python >"$r/etc/hostname"
        echo 'work:x:1000:1000:work:/home/work:/bin/bash' >>"$r/etc/passwd"
        echo 'work:x:1000:' >>"$r/etc/group"
        echo 'work:*:19000:0:99999:7:::' >>"$r/etc/shadow"
        mkdir -p "$r/home/work"
        chown 1000:1000 "$r/home/work"
}

rootfs_config() {
        jq -cn '{
                Env: ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C.UTF-8",
                      "HOME=/home/work"],
                Cmd: ["/usr/bin/python3"],
                WorkingDir: "/home/work",
                Labels: {
                        "ai.backend.kernelspec": "1",
                        "ai.backend.base-distro": "debian12",
                        "ai.backend.runtime-type": "python",
                        "ai.backend.runtime-path": "/usr/bin/python3",
                        "ai.backend.resource.min.cpu": "1",
                        "ai.backend.resource.min.mem": "256m"
                }
        }'
}
