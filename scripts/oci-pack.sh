#!/bin/sh
# Packs an OCI image layout directory into an archive the same way every time
# (sorted names, owner 0, mtime SOURCE_DATE_EPOCH, no pax times): the
# dpscope-*.oci.tar that podman load, skopeo (oci-archive:), ctr images import
# and kind load image-archive read. REF (a full reference, e.g.
# localhost/dpscope:0.1.0) names every manifest of the index for podman/skopeo
# (org.opencontainers.image.ref.name) and for containerd (io.containerd.image.name).
#
# usage: scripts/oci-pack.sh LAYOUT_DIR REF ARCHIVE
set -eu
dir=${1:?usage: oci-pack.sh LAYOUT_DIR REF ARCHIVE}
ref=${2:?usage: oci-pack.sh LAYOUT_DIR REF ARCHIVE}
archive=${3:?usage: oci-pack.sh LAYOUT_DIR REF ARCHIVE}
: "${SOURCE_DATE_EPOCH:=0}"
jq -S --arg ref "$ref" '.manifests |= map(.annotations = ((.annotations // {}) + {
    "org.opencontainers.image.ref.name": $ref, "io.containerd.image.name": $ref }))' \
  "$dir/index.json" >"$dir/index.json.tmp"
mv "$dir/index.json.tmp" "$dir/index.json"
tar -C "$dir" --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$SOURCE_DATE_EPOCH" \
    --format=ustar --mode='u+rw,go+r,go-w' -cf "$archive.tmp" oci-layout index.json blobs
mv "$archive.tmp" "$archive"
