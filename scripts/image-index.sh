#!/bin/sh
# The multi-architecture image: one OCI archive whose index lists the
# per-architecture images of scripts/image.sh (each manifest with its
# platform), their blobs shared. `podman load`/`ctr images import` pick the
# machine's platform; `skopeo copy --all oci-archive:FILE docker://...` pushes
# every architecture under one tag.
#
# usage: scripts/image-index.sh REF ARCHIVE ARCH_ARCHIVE...
set -eu
ref=${1:?usage: image-index.sh REF ARCHIVE ARCH_ARCHIVE...}
archive=${2:?usage: image-index.sh REF ARCHIVE ARCH_ARCHIVE...}
shift 2
[ $# -ge 1 ] || { echo "image-index: no per-architecture archives" >&2; exit 2; }
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/layout/blobs/sha256"
printf '{"imageLayoutVersion":"1.0.0"}' >"$work/layout/oci-layout"
n=0
for a in "$@"; do
  n=$((n + 1))
  mkdir "$work/$n"
  tar -C "$work/$n" -xf "$a"
  cp -n "$work/$n"/blobs/sha256/* "$work/layout/blobs/sha256/"
  # The image's platform, from its config (what buildah --platform set).
  manifest=$(jq -r '.manifests[0].digest' "$work/$n/index.json" | sed 's/^sha256://')
  config=$(jq -r '.config.digest' "$work/$n/blobs/sha256/$manifest" | sed 's/^sha256://')
  jq -c --slurpfile cfg "$work/$n/blobs/sha256/$config" \
    '.manifests[0] | del(.annotations) | .platform = {architecture: $cfg[0].architecture, os: $cfg[0].os}' \
    "$work/$n/index.json" >>"$work/descriptors"
done
# The image index is a blob, and index.json names it: one reference, every platform.
jq -cS -s '{schemaVersion: 2, mediaType: "application/vnd.oci.image.index.v1+json", manifests: .}' \
  "$work/descriptors" >"$work/image-index.json"
digest=$(sha256sum "$work/image-index.json" | cut -d' ' -f1)
cp "$work/image-index.json" "$work/layout/blobs/sha256/$digest"
jq -n --arg d "sha256:$digest" --argjson size "$(stat -c %s "$work/image-index.json")" \
  '{schemaVersion: 2, manifests: [{mediaType: "application/vnd.oci.image.index.v1+json", digest: $d, size: $size}]}' \
  >"$work/layout/index.json"
"$here/scripts/oci-pack.sh" "$work/layout" "$ref" "$archive"
echo "image-index: $archive ($(jq -r '[.manifests[].platform | .os + "/" + .architecture] | join(", ")' "$work/image-index.json"))" >&2
