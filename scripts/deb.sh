#!/bin/sh
# Builds dpscope_VERSION_ARCH.deb from a build tree whose dpscope (and man
# page and completions: the dpscope_docs target) are built: `cmake --install`
# of that tree with prefix /usr into a staging root, Debian's files around it,
# dpkg-deb. Works for a cross build tree too (ARCH from the binary's ELF header).
#
# Depends: dpkg-shlibdeps on the binary (the libraries it links, from their
# shlibs/symbols files), plus what dpscope loads with dlmopen and so no ELF
# header names: libxtables (its soname) and iptables' extension objects
# (xtables/*.so, shipped by the iptables package), which print each rule as
# iptables-save does (collectors/netfilter/xt_save.cpp).
#
# Reproducible: every mtime is SOURCE_DATE_EPOCH (default: the commit's time),
# dpkg-deb sorts the members and uses SOURCE_DATE_EPOCH for the ar headers.
#
# usage: scripts/deb.sh BUILD_DIR OUT_DIR [HOMEPAGE]
set -eu
build=${1:?usage: deb.sh BUILD_DIR OUT_DIR [HOMEPAGE]}
out=${2:?usage: deb.sh BUILD_DIR OUT_DIR [HOMEPAGE]}
homepage=${3:-https://example.org/dpscope}
here=$(cd "$(dirname "$0")/.." && pwd)
deb=$here/packaging/debian

[ -x "$build/dpscope" ] || { echo "deb.sh: no $build/dpscope (build it first)" >&2; exit 2; }
version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build/CMakeCache.txt")
[ -n "$version" ] || { echo "deb.sh: no project version in $build/CMakeCache.txt" >&2; exit 2; }
case $(readelf -h "$build/dpscope" | sed -n 's/^ *Machine: *//p') in
  *X86-64*) arch=amd64 ;;
  *AArch64*) arch=arm64 ;;
  *) echo "deb.sh: $build/dpscope: unknown machine" >&2; exit 2 ;;
esac
changelog_version=$(sed -n '1s/^dpscope (\([^)]*\)).*/\1/p' "$deb/changelog")
[ "$changelog_version" = "$version" ] || {
  echo "deb.sh: packaging/debian/changelog's first entry is $changelog_version, the project $version" >&2
  exit 2
}
: "${SOURCE_DATE_EPOCH:=$(git -C "$here" log -1 --format=%ct 2>/dev/null || echo 0)}"
export SOURCE_DATE_EPOCH

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root=$work/root
# The dpscope component only: install_manifest_dpscope.txt, so the user's own
# `make install` manifest (install_manifest.txt) is left as it was.
DESTDIR=$root cmake --install "$build" --prefix /usr --component dpscope --strip >/dev/null
# As dh_strip does: no .comment (the compiler's version strings) or .note.
case $arch in amd64) triplet=x86_64-linux-gnu ;; arm64) triplet=aarch64-linux-gnu ;; esac
"$triplet-strip" --remove-section=.comment --remove-section=.note "$root/usr/bin/dpscope"
doc=$root/usr/share/doc/dpscope
# Debian's form: copyright instead of LICENSE (the licence text is in
# /usr/share/common-licenses), gzip -9n man page and changelog.
rm "$doc/LICENSE"
sed "s|@HOMEPAGE@|$homepage|" "$deb/copyright" >"$doc/copyright"
date=$(date -u -R -d "@$SOURCE_DATE_EPOCH")
# A native package (no Debian revision): its changelog is changelog.gz.
sed "s|@DATE@|$date|" "$deb/changelog" | gzip -9n >"$doc/changelog.gz"
gzip -9n "$root/usr/share/man/man1/dpscope.1"
mkdir -p "$root/usr/share/lintian/overrides"
cp "$deb/lintian-overrides" "$root/usr/share/lintian/overrides/dpscope"

# dpkg-shlibdeps reads debian/control of the package being built.
mkdir -p "$work/src/debian"
printf 'Source: dpscope\n\nPackage: dpscope\nArchitecture: any\n' >"$work/src/debian/control"
shlibs=$(cd "$work/src" && dpkg-architecture -a "$arch" -c dpkg-shlibdeps -O "$root/usr/bin/dpscope" 2>"$work/shlibdeps.err" |
  sed -n 's/^shlibs:Depends=//p') || { cat "$work/shlibdeps.err" >&2; exit 2; }
[ -n "$shlibs" ] || { echo "deb.sh: dpkg-shlibdeps gave no Depends" >&2; cat "$work/shlibdeps.err" >&2; exit 2; }
# libxtables: the dependency its own shlibs file gives a binary that links it;
# the extension objects: the package that ships the host's xtables directory.
xtables=$(dpkg-query --control-show "libxtables12:$arch" shlibs 2>/dev/null | awk '$1 == "libxtables" { $1 = $2 = ""; sub(/^ +/, ""); print; exit }')
[ -n "$xtables" ] || { echo "deb.sh: no shlibs of libxtables12:$arch (libxtables-dev:$arch)" >&2; exit 2; }
xtlibdir=$(pkg-config --variable=xtlibdir xtables)
extensions=$(dpkg -S "$xtlibdir" | sed 's/:.*//' | head -n1)
extensions_version=$(dpkg-query -W -f='${Version}' "$extensions" | sed 's/-[^-]*$//')
depends="$shlibs, $xtables, $extensions (>= $extensions_version)"

find "$root" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
mkdir -p "$root/DEBIAN"
(cd "$root" && find usr -type f | LC_ALL=C sort | xargs md5sum) >"$root/DEBIAN/md5sums"
size=$(du -sk --apparent-size "$root/usr" | cut -f1)
sed -e "s|@VERSION@|$version|" -e "s|@ARCH@|$arch|" -e "s|@INSTALLED_SIZE@|$size|" \
    -e "s|@DEPENDS@|$depends|" -e "s|@HOMEPAGE@|$homepage|" "$deb/control.in" >"$root/DEBIAN/control"
chmod 644 "$root/DEBIAN/control" "$root/DEBIAN/md5sums"
touch -h -d "@$SOURCE_DATE_EPOCH" "$root/DEBIAN" "$root/DEBIAN/control" "$root/DEBIAN/md5sums"
mkdir -p "$out"
file=$out/dpscope_${version}_$arch.deb
dpkg-deb --root-owner-group -Zxz --build "$root" "$file.tmp" >/dev/null
mv "$file.tmp" "$file"
echo "deb: $file ($(du -h "$file" | cut -f1)); Depends: $depends" >&2
