#!/bin/sh
# The krew release of the kubectl plugin: the archive krew downloads and the
# manifest to submit (packaging/krew/dpscope.yaml with its placeholders filled).
#
# usage: scripts/krew-release.sh VERSION BASE_URL HOMEPAGE [OUTDIR]
#   BASE_URL: where the archive will be downloadable (…/kubectl-dpscope-VERSION.tar.gz)
set -eu
version=${1:?usage: krew-release.sh VERSION BASE_URL HOMEPAGE [OUTDIR]}
base=${2:?usage: krew-release.sh VERSION BASE_URL HOMEPAGE [OUTDIR]}
homepage=${3:?usage: krew-release.sh VERSION BASE_URL HOMEPAGE [OUTDIR]}
out=${4:-build/krew}
here=$(cd "$(dirname "$0")/.." && pwd)

plugin_version=$(sed -n 's/^PLUGIN_VERSION=//p' "$here/packaging/kubectl-dpscope")
[ "$plugin_version" = "$version" ] || {
  echo "krew-release: packaging/kubectl-dpscope says PLUGIN_VERSION=$plugin_version, not $version" >&2
  exit 2
}
mkdir -p "$out"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
cp "$here/packaging/kubectl-dpscope" "$here/README.md" "$here/LICENSE" "$stage/"
chmod 755 "$stage/kubectl-dpscope"
chmod 644 "$stage/README.md" "$stage/LICENSE"
archive=$out/kubectl-dpscope-$version.tar.gz
# Reproducible: fixed owner, order and time, no name or time in the gzip header.
tar -C "$stage" --owner=0 --group=0 --numeric-owner --mtime=@0 --sort=name -cf - LICENSE README.md kubectl-dpscope |
  gzip -n -9 >"$archive.tmp"
mv "$archive.tmp" "$archive"
sha=$(sha256sum "$archive" | cut -d' ' -f1)
sed -e "s|RELEASE_URI|$base/kubectl-dpscope-$version.tar.gz|" -e "s|RELEASE_SHA256|$sha|" \
    -e "s|RELEASE_HOMEPAGE|$homepage|" -e "s|^  version: v.*|  version: v$version|" \
    "$here/packaging/krew/dpscope.yaml" >"$out/dpscope.yaml"
if grep -n 'RELEASE_' "$out/dpscope.yaml" | grep -v '^[0-9]*:#' >&2; then
  echo "krew-release: placeholders left in $out/dpscope.yaml" >&2
  exit 4
fi
echo "krew-release: $archive (sha256 $sha) and $out/dpscope.yaml" >&2
