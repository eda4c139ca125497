#!/bin/sh
# The release archive of one architecture, dpscope-VERSION-linux-ARCH.tar.gz:
# the self-contained bundle (scripts/bundle.sh: bin/dpscope runs it from
# wherever it is unpacked, with its own loader and libraries), the man page
# and completions (the build tree's share/), the kubectl plugin, LICENSE and
# README.md, under one directory dpscope-VERSION-linux-ARCH/. Reproducible:
# sorted, owner 0, mtime SOURCE_DATE_EPOCH, gzip -n.
#
# usage: scripts/archive.sh BUNDLE_DIR BUILD_DIR ARCHIVE
set -eu
bundle=${1:?usage: archive.sh BUNDLE_DIR BUILD_DIR ARCHIVE}
build=${2:?usage: archive.sh BUNDLE_DIR BUILD_DIR ARCHIVE}
archive=${3:?usage: archive.sh BUNDLE_DIR BUILD_DIR ARCHIVE}
here=$(cd "$(dirname "$0")/.." && pwd)
: "${SOURCE_DATE_EPOCH:=$(git -C "$here" log -1 --format=%ct 2>/dev/null || echo 0)}"
[ -x "$bundle/bin/dpscope" ] || { echo "archive: no bundle at $bundle (make static)" >&2; exit 2; }
[ -f "$build/share/man/man1/dpscope.1" ] || { echo "archive: no $build/share (the dpscope_docs target)" >&2; exit 2; }
name=$(basename "$archive" .tar.gz)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -a "$bundle" "$work/$name"
# proc, sys and tmp are the image's mount points; an unpacked archive needs none.
rmdir "$work/$name/proc" "$work/$name/sys" "$work/$name/tmp"
mkdir -p "$work/$name/share"
cp -r "$build/share/man" "$build/share/completions" "$work/$name/share/"
cp "$here/LICENSE" "$here/README.md" "$work/$name/"
cp "$here/packaging/kubectl-dpscope" "$work/$name/bin/"
chmod -R u+rwX,go+rX,go-w "$work/$name"
mkdir -p "$(dirname "$archive")"
tar -C "$work" --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$SOURCE_DATE_EPOCH" \
    --format=ustar -cf - "$name" | gzip -9n >"$archive.tmp"
mv "$archive.tmp" "$archive"
echo "archive: $archive ($(du -h "$archive" | cut -f1))" >&2
