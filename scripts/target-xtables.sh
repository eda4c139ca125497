#!/bin/sh
# iptables' extension objects (xtables/*.so) and what they link, for another
# Debian architecture: the iptables package of one architecture cannot be
# installed beside another's (same /usr/sbin paths), so its .deb is downloaded
# (`apt-get download`, Debian's archive) and unpacked into ROOT, which
# scripts/bundle.sh searches before / (BUNDLE_SYSROOT). The versions are the
# build machine's own packages', so both architectures' bundles carry the same
# iptables. ROOT/PACKAGES lists each unpacked file's package and version.
#
# usage: scripts/target-xtables.sh ARCH ROOT      (e.g. arm64 build-arm64/xtables-root)
set -eu
arch=${1:?usage: target-xtables.sh ARCH ROOT}
root=${2:?usage: target-xtables.sh ARCH ROOT}
# The extension objects, libxtables, and libxt_connlabel's libnetfilter_conntrack.
packages="iptables libxtables12 libnetfilter-conntrack3 libnfnetlink0"

[ -f "$root/PACKAGES" ] && exit 0  # unpacked before (the versions are pinned)
tmp="$root.tmp.$$"
rm -rf "$tmp"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/debs"
specs=""
for p in $packages; do
  v=$(dpkg-query -W -f='${Version}' "$p:$(dpkg --print-architecture)" 2>/dev/null || dpkg-query -W -f='${Version}' "$p")
  [ -n "$v" ] || { echo "target-xtables: $p is not installed here (its version is the one to fetch)" >&2; exit 2; }
  specs="$specs $p:$arch=$v"
done
# shellcheck disable=SC2086
(cd "$tmp/debs" && apt-get download -q=2 $specs) || {
  echo "target-xtables: apt-get download$specs failed (dpkg --add-architecture $arch; apt-get update)" >&2
  exit 2
}
: >"$tmp/PACKAGES"
for d in "$tmp"/debs/*.deb; do
  dpkg-deb -x "$d" "$tmp"
  pv=$(dpkg-deb -f "$d" Package Version | paste -sd' ' - | sed 's/^Package: \(.*\) Version: \(.*\)$/\1:'"$arch"' \2/')
  dpkg-deb --fsys-tarfile "$d" | tar -t | sed -n 's|^\./|/|p' | grep -v '/$' | sed "s|\$| $pv|" >>"$tmp/PACKAGES"
done
rm -rf "$tmp/debs"
rm -rf "$root"
mv "$tmp" "$root"
trap - EXIT
echo "target-xtables: $arch$specs unpacked into $root" >&2
