# shellcheck shell=bash
# oci-layout.sh - sourced by build.sh: write a one-layer OCI image layout
# from a root filesystem directory with plain tools (tar, gzip, sha256sum, jq).

# oci_blob FILE LAYOUT: move FILE into LAYOUT/blobs/sha256/, print its digest.
oci_blob() {
        local hex
        hex=$(sha256sum "$1" | cut -d' ' -f1)
        mv "$1" "$2/blobs/sha256/$hex"
        echo "sha256:$hex"
}

# oci_layer_tar ROOTFS: a reproducible tar of ROOTFS on stdout: entries sorted
# by name and relative ("bin/sh", not "./bin/sh"), every mtime set to
# SOURCE_DATE_EPOCH, numeric owners, no atime/ctime/xattrs/ACLs.
oci_layer_tar() {
        local top=()
        local owner=()
        mapfile -t top < <(cd "$1" && LC_ALL=C ls -A)
        # not root: the files are ours, they become root's in the layer
        [ "$(id -u)" -eq 0 ] || owner=(--owner=0 --group=0)
        LC_ALL=C tar -C "$1" --sort=name --format=posix --numeric-owner "${owner[@]}" \
                --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime \
                --mtime="@$SOURCE_DATE_EPOCH" --no-acls --no-xattrs --no-selinux \
                -cf - -- "${top[@]}"
}

# oci_layout_write ROOTFS OUT REF CONFIG_JSON: OUT becomes an image layout
# whose index names the image REF; CONFIG_JSON is the image config's
# "config" object (Env, Cmd, Labels ...).
oci_layout_write() {
        local rootfs=$1 out=$2 ref=$3 runconf=$4 arch created diff_id layer layer_size
        local config config_size manifest manifest_size
        arch=$(dpkg --print-architecture)
        created=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)
        mkdir -p "$out/blobs/sha256"

        oci_layer_tar "$rootfs" >"$out/layer.tar"
        diff_id=sha256:$(sha256sum "$out/layer.tar" | cut -d' ' -f1)
        gzip -n -6 "$out/layer.tar"
        layer_size=$(stat -c %s "$out/layer.tar.gz")
        layer=$(oci_blob "$out/layer.tar.gz" "$out")

        jq -cnS --arg arch "$arch" --arg created "$created" --arg diff "$diff_id" --arg ref "$ref" \
                --argjson conf "$runconf" '{
                        architecture: $arch, os: "linux", created: $created, config: $conf,
                        rootfs: {type: "layers", diff_ids: [$diff]},
                        history: [{created: $created, created_by: ("scripts/test-images/build.sh " + $ref)}]
                }' | tr -d '\n' >"$out/config.json"
        config_size=$(stat -c %s "$out/config.json")
        config=$(oci_blob "$out/config.json" "$out")

        jq -cn --arg config "$config" --argjson config_size "$config_size" \
                --arg layer "$layer" --argjson layer_size "$layer_size" '{
                        schemaVersion: 2,
                        mediaType: "application/vnd.oci.image.manifest.v1+json",
                        config: {mediaType: "application/vnd.oci.image.config.v1+json",
                                 digest: $config, size: $config_size},
                        layers: [{mediaType: "application/vnd.oci.image.layer.v1.tar+gzip",
                                  digest: $layer, size: $layer_size}]
                }' | tr -d '\n' >"$out/manifest.json"
        manifest_size=$(stat -c %s "$out/manifest.json")
        manifest=$(oci_blob "$out/manifest.json" "$out")

        echo '{"imageLayoutVersion":"1.0.0"}' | tr -d '\n' >"$out/oci-layout"
        jq -n --arg m "$manifest" --argjson size "$manifest_size" --arg arch "$arch" --arg ref "$ref" '{
                schemaVersion: 2,
                mediaType: "application/vnd.oci.image.index.v1+json",
                manifests: [{mediaType: "application/vnd.oci.image.manifest.v1+json",
                             digest: $m, size: $size,
                             platform: {architecture: $arch, os: "linux"},
                             annotations: {"org.opencontainers.image.ref.name": $ref}}]
        }' >"$out/index.json"
}
