# shellcheck shell=bash
# rootfs-busybox.sh - sourced by build.sh: the busybox test image, one layer
# made of Debian's busybox-static, its applets as symlinks, a root and a
# `work` (uid 1000) user.

rootfs_inputs() {
        dpkg-query -W -f='${Package} ${Version}\n' busybox-static
        sha256sum </bin/busybox
}

rootfs_build() {
        local r=$1 applet
        mkdir -p "$r"/{bin,etc,dev,proc,sys,root,tmp,home/work}
        install -m 0755 /bin/busybox "$r/bin/busybox"
        for applet in $("$r/bin/busybox" --list); do
                [ "$applet" = busybox ] || ln -s busybox "$r/bin/$applet"
        done
        printf '%s\n' 'root:x:0:0:root:/root:/bin/sh' 'work:x:1000:1000:work:/home/work:/bin/sh' \
                'nobody:x:65534:65534:nobody:/nonexistent:/bin/false' >"$r/etc/passwd"
        printf '%s\n' 'root:x:0:' 'work:x:1000:' 'nogroup:x:65534:' >"$r/etc/group"
        chmod 0700 "$r/root"
        chmod 1777 "$r/tmp"
        if [ "$(id -u)" -eq 0 ]; then
                chown -R 0:0 "$r"
                chown 1000:1000 "$r/home/work"
        else
                echo "build.sh: not root: /home/work stays owned by uid $(id -u) in the layer" >&2
        fi
}

# The image config's "config" object.
rootfs_config() {
        jq -cn '{
                Env: ["PATH=/bin", "HOME=/home/work"],
                Cmd: ["/bin/sh"],
                WorkingDir: "/home/work",
                Labels: {
                        "ai.backend.kernelspec": "1",
                        "ai.backend.base-distro": "busybox",
                        "ai.backend.runtime-type": "app",
                        "ai.backend.runtime-path": "/bin/sh",
                        "ai.backend.resource.min.cpu": "0.1",
                        "ai.backend.resource.min.mem": "32m"
                }
        }'
}
