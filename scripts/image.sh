#!/bin/sh
# Builds the dpscope container image from a bundle (scripts/bundle.sh) with
# buildah (vfs storage, no daemon): packaging/Containerfile, FROM scratch plus
# the bundle, for the bundle's architecture, labelled with the version, the
# commit, the source, the licence and the Debian version of every library in
# it (the bundle's MANIFEST). Writes an OCI archive, ARCHIVE
# (dpscope-VERSION-ARCH.oci.tar), reproducibly: the layer's files and the
# image's created time are SOURCE_DATE_EPOCH (buildah --timestamp) and the
# archive is packed by scripts/oci-pack.sh.
# A native image is started once (buildah run: dpscope --version).
#
# usage: scripts/image.sh BUNDLE_DIR REF ARCHIVE [HOMEPAGE]
#   REF: the image's name in the archive, e.g. localhost/dpscope:0.1.0
set -eu
bundle=${1:?usage: image.sh BUNDLE_DIR REF ARCHIVE [HOMEPAGE]}
ref=${2:?usage: image.sh BUNDLE_DIR REF ARCHIVE [HOMEPAGE]}
archive=${3:?usage: image.sh BUNDLE_DIR REF ARCHIVE [HOMEPAGE]}
homepage=${4:-https://example.org/dpscope}
here=$(cd "$(dirname "$0")/.." && pwd)
containerfile=$here/packaging/Containerfile
# vfs works in any environment (also inside a container, where overlay often
# does not); the image is a few MB, so its copying cost does not matter.
driver=${STORAGE_DRIVER:-vfs}
command -v buildah >/dev/null 2>&1 || {
  echo "image: buildah is not installed (scripts/deps.sh package installs it)" >&2
  exit 2
}
buildah() { command buildah --storage-driver "$driver" "$@"; }
[ -x "$bundle/usr/local/bin/dpscope" ] || { echo "image: no bundle at $bundle (make static)" >&2; exit 2; }
case $(readelf -h "$bundle/usr/local/bin/dpscope" | sed -n 's/^ *Machine: *//p') in
  *X86-64*) arch=amd64 ;;
  *AArch64*) arch=arm64 ;;
  *) echo "image: $bundle: unknown architecture" >&2; exit 2 ;;
esac
: "${SOURCE_DATE_EPOCH:=$(git -C "$here" log -1 --format=%ct 2>/dev/null || echo 0)}"
export SOURCE_DATE_EPOCH
version=$(sed -n 's/^project(dpscope VERSION \([^ ]*\).*/\1/p' "$here/CMakeLists.txt")
commit=$(git -C "$here" rev-parse HEAD 2>/dev/null || echo unknown)
# "package=version" of every Debian package a bundled file came from.
packages=$(awk '!/^#/ && NF >= 4 && $3 != "dpscope" { sub(/:.*/, "", $3); print $3 "=" $4 }' "$bundle/MANIFEST" |
  sort -u | paste -sd' ' -)

tag=localhost/dpscope-build:$arch-$$
buildah bud --isolation chroot --layers=false --timestamp "$SOURCE_DATE_EPOCH" --platform "linux/$arch" -q \
  --label "org.opencontainers.image.version=$version" \
  --label "org.opencontainers.image.revision=$commit" \
  --label "org.opencontainers.image.source=$homepage" \
  --label "org.opencontainers.image.licenses=Apache-2.0" \
  --label "org.opencontainers.image.created=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)" \
  --label "org.opencontainers.image.base.name=scratch" \
  --label "dpscope.debian-packages=$packages" \
  -f "$containerfile" -t "$tag" "$bundle" >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"; buildah rmi -f "$tag" >/dev/null 2>&1 || true' EXIT
version_out="(not started: $arch on $(dpkg --print-architecture))"
if [ "$arch" = "$(dpkg --print-architecture)" ]; then
  # Smoke test: the image starts dpscope with nothing else in it.
  ctr=$(buildah from -q "$tag")
  version_out=$(buildah run --isolation chroot "$ctr" -- /usr/local/bin/dpscope --version | head -n1) || {
    buildah rm "$ctr" >/dev/null; exit 4; }
  buildah rm "$ctr" >/dev/null
fi
buildah push -q --format oci "$tag" "oci:$work/layout:$ref" >/dev/null
mkdir -p "$(dirname "$archive")"
"$here/scripts/oci-pack.sh" "$work/layout" "$ref" "$archive"
echo "image: $ref for linux/$arch ($version_out), OCI archive $archive ($(du -h "$archive" | cut -f1))" >&2
