#!/bin/sh
# Builds the dpscope container image (packaging/Containerfile: scratch + the
# bundle) with buildah, or podman, from Debian; no Docker engine needed.
# Then checks the image runs (dpscope --version inside it) and exports it as an
# OCI archive that can be pushed (skopeo copy oci-archive:... docker://REGISTRY/dpscope:TAG)
# or loaded into kind (kind load image-archive ...).
#
# usage: scripts/image.sh BUNDLE_DIR TAG OCI_ARCHIVE
set -eu
bundle=${1:?usage: image.sh BUNDLE_DIR TAG OCI_ARCHIVE}
tag=${2:?usage: image.sh BUNDLE_DIR TAG OCI_ARCHIVE}
archive=${3:?usage: image.sh BUNDLE_DIR TAG OCI_ARCHIVE}
here=$(cd "$(dirname "$0")/.." && pwd)
containerfile=$here/packaging/Containerfile
# vfs works in any environment (also inside a container, where overlay often
# does not); the image is a few MB, so its copying cost does not matter.
driver=${STORAGE_DRIVER:-vfs}

if command -v buildah >/dev/null 2>&1; then
  tool=buildah
elif command -v podman >/dev/null 2>&1; then
  tool=podman
elif [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "image: installing buildah (Debian package)" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends buildah >/dev/null
  tool=buildah
else
  echo "image: neither buildah nor podman is installed; install one (apt-get install buildah) and run:" >&2
  echo "  buildah bud --layers=false -f $containerfile -t $tag $bundle" >&2
  exit 2
fi

[ -x "$bundle/usr/local/bin/dpscope" ] || { echo "image: no bundle at $bundle (make static)" >&2; exit 2; }

if [ "$tool" = buildah ]; then
  buildah --storage-driver "$driver" bud --isolation chroot --layers=false -q -f "$containerfile" -t "$tag" "$bundle" >/dev/null
  # Smoke test: the image starts dpscope with nothing else in it.
  ctr=$(buildah --storage-driver "$driver" from -q "$tag")
  trap 'buildah --storage-driver "$driver" rm "$ctr" >/dev/null 2>&1 || true' EXIT
  version=$(buildah --storage-driver "$driver" run --isolation chroot "$ctr" -- /usr/local/bin/dpscope --version)
  rm -f "$archive"
  buildah --storage-driver "$driver" push -q "$tag" "oci-archive:$archive:$tag" >/dev/null
else
  podman --storage-driver "$driver" build -q -f "$containerfile" -t "$tag" "$bundle" >/dev/null
  version=$(podman --storage-driver "$driver" run --rm "$tag" --version)
  rm -f "$archive"
  podman --storage-driver "$driver" save -q --format oci-archive -o "$archive" "$tag"
fi
echo "image: $tag built with $tool ($version), OCI archive $archive ($(du -h "$archive" | cut -f1))" >&2
