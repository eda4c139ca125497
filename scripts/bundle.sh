#!/bin/sh
# Makes a self-contained dpscope: the binary, every shared library it loads and
# the dynamic loader, laid out at the same absolute paths as on the build host,
# so the bundle directory *is* a root file system: `chroot BUNDLE /usr/local/bin/dpscope`
# works with nothing else in it but /proc and /sys, and `FROM scratch` + `COPY BUNDLE /`
# is a complete image.
#
# Why a bundle and not `-static`: Debian ships no libmnl.a (libmnl-dev has only
# the shared library), so a fully static link of dpscope cannot be made from
# Debian packages; glibc's static libc also warns about NSS. The bundle uses the
# same, tested, dynamically linked binary.
#
# Outside a chroot/image, run it through the bundled loader with bin/dpscope
# (a POSIX sh wrapper), e.g. after copying the bundle to a node's /tmp.
#
# usage: scripts/bundle.sh BINARY OUTDIR
#   a cross-built BINARY (arm64): BUNDLE_SYSROOT=DIR of that architecture's
#   iptables (scripts/target-xtables.sh); its libraries, loader, strip and
#   gcc are the multiarch/cross ones (crossbuild-essential-arm64, :arm64 libs)
set -eu

bin=${1:?usage: bundle.sh BINARY OUTDIR}
out=${2:?usage: bundle.sh BINARY OUTDIR}
[ -x "$bin" ] || { echo "bundle.sh: $bin is not an executable" >&2; exit 2; }

interp=$(readelf -l "$bin" | sed -n 's/.*Requesting program interpreter: \(.*\)\]/\1/p')
[ -n "$interp" ] || { echo "bundle.sh: $bin has no program interpreter (already static?)" >&2; exit 2; }
case $(readelf -h "$bin" | sed -n 's/^ *Machine: *//p') in
  *X86-64*) triplet=x86_64-linux-gnu ;;
  *AArch64*) triplet=aarch64-linux-gnu ;;
  *) echo "bundle.sh: $bin: an architecture this script does not know" >&2; exit 2 ;;
esac
# BUNDLE_SYSROOT: a directory searched before / (another architecture's
# iptables, scripts/target-xtables.sh), with its PACKAGES list.
sysroot=${BUNDLE_SYSROOT:-}

# Build into a fresh directory next to OUTDIR and swap it in at the end, so a
# failed run never leaves a half-made bundle behind.
tmp="$out.tmp.$$"
rm -rf "$tmp"
trap 'rm -rf "$tmp" "$tmp.owners" "$tmp.versions"' EXIT
mkdir -p "$tmp/usr/local/bin" "$tmp/bin" "$tmp/proc" "$tmp/sys"
# /tmp: where the snapshot is written in the pod (and fetched from with
# `kubectl exec ... dpscope-once --cat`), and the rule spool's home.
mkdir -m 1777 "$tmp/tmp"

# The file a path names: in BUNDLE_SYSROOT if it is there, else on this machine.
source_of() {
  if [ -n "$sysroot" ] && [ -e "$sysroot$1" ]; then echo "$sysroot$1"; else echo "$1"; fi
}
# A soname's path, in the loader's multiarch order (as ldd prints it; ldd
# cannot list a cross binary, so each file's DT_NEEDED is followed here).
# libc's DT_NEEDED names the loader too: it is bundled under that multiarch
# path as well as PT_INTERP's, because libxtables' dlmopen namespace loads its
# own libc, whose loader is found by soname (without it, no rule text in an
# image: tests/packaging, image-runc-snapshot).
resolve() {
  for d in /lib/$triplet /usr/lib/$triplet /lib /usr/lib; do
    [ -e "$(source_of "$d/$1")" ] && { echo "$d/$1"; return 0; }
  done
  return 1
}
needed() { readelf -d "$(source_of "$1")" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; }
# Every library FILES need, and theirs, once each.
closure() {
  todo=$* seen=""
  while [ -n "$todo" ]; do
    set -- $todo
    f=$1; shift; todo=$*
    for soname in $(needed "$f"); do
      lib=$(resolve "$soname") || { echo "bundle.sh: $f needs $soname, not found" >&2; return 1; }
      case " $seen " in *" $lib "*) continue ;; esac
      seen="$seen $lib" todo="$todo $lib"
    done
  done
  printf '%s\n' $seen
}
binlibs=$(closure "$bin") || exit 2
# libxtables and the iptables extension objects: dpscope dlmopens them (they are
# not in its DT_NEEDED) to print each rule as iptables-save does. Same paths as on
# the build host, so libxtables' compiled-in extension directory is right in an
# image; bin/dpscope points XTABLES_LIBDIR at the bundle's copy.
xtlibdir=/usr/lib/$triplet/xtables
xtables=$(resolve libxtables.so.12) && [ -d "$(source_of "$xtlibdir")" ] ||
  { echo "bundle.sh: libxtables.so.12 or $xtlibdir not found (libxtables-dev, iptables; another architecture's: BUNDLE_SYSROOT)" >&2; exit 2; }
extensions=$(cd "$(source_of "$xtlibdir")" && ls *.so | sed "s|^|$xtlibdir/|")
xtdeps=$(closure "$xtables" $extensions) || exit 2
libs=$(printf "%s\n" $binlibs "$xtables" $xtdeps | grep -vx "$interp" | sort -u)
all=$(printf "%s\n" $libs "$interp" $extensions | sort -u)
for lib in $all; do
  mkdir -p "$tmp$(dirname "$lib")"
  # -L: the file itself under its soname path, not a dangling symlink.
  cp -L "$(source_of "$lib")" "$tmp$lib"
done

cp "$bin" "$tmp/usr/local/bin/dpscope"
# Debug info is most of the binary's size and nothing a node needs.
"$triplet-strip" --strip-debug "$tmp/usr/local/bin/dpscope"

# dpscope-once: the DaemonSet's PID 1 (one snapshot, then wait). A static link
# of this small program is fine: it uses nothing but fork/exec/wait.
src=$(cd "$(dirname "$0")/.." && pwd)/packaging/dpscope-once.c
${CC:-$triplet-gcc} -static -O2 -Wall -Wextra -o "$tmp/usr/local/bin/dpscope-once" "$src"
"$triplet-strip" "$tmp/usr/local/bin/dpscope-once"

# bin/dpscope: runs the bundle from wherever it was copied, through its own loader.
libdirs=$(for lib in $libs; do dirname "$lib"; done | sort -u | sed 's|^|$here|' | paste -sd: -)
# (The extensions are loaded by path from XTABLES_LIBDIR, not from the library path.)
cat >"$tmp/bin/dpscope" <<EOF
#!/bin/sh
# Runs the bundled dpscope with the bundled loader and libraries (no host libraries).
here=\$(cd "\$(dirname "\$0")/.." && pwd)
export XTABLES_LIBDIR="\$here$xtlibdir"  # libxtables' extension objects
# Transparent huge pages for malloc's heap (glibc >= 2.35): a large snapshot is
# hundreds of MB of small objects, and their first-touch page faults were a
# third of loading one (BENCHMARKS.md, verify). A no-op where THP is off.
export GLIBC_TUNABLES="\${GLIBC_TUNABLES:+\$GLIBC_TUNABLES:}glibc.malloc.hugetlb=1"
exec "\$here$interp" --library-path "$libdirs" "\$here/usr/local/bin/dpscope" "\$@"
EOF
chmod 755 "$tmp/bin/dpscope"

# Provenance: every file with its sha256 and the Debian package it came from
# (one dpkg -S and one dpkg-query for all: per file they took most of the run).
host_files=$(for lib in $all; do [ "$(source_of "$lib")" = "$lib" ] && echo "$lib" && readlink -f "$lib"; done | sort -u)
# "pkg[, pkg...]: path" -> "path pkg" (the first owner)
dpkg -S $host_files 2>/dev/null | awk '{ i = index($0, ": /"); p = substr($0, 1, i - 1); sub(/,.*/, "", p); print substr($0, i + 2), p }' \
  >"$tmp.owners" || true
dpkg-query -W -f='${binary:Package} ${Version}\n' $(cut -d' ' -f2 "$tmp.owners" | sort -u) >"$tmp.versions" 2>/dev/null || true
{
  echo "# dpscope bundle: file, sha256, Debian package (version)"
  for lib in $all; do
    src=$(source_of "$lib")
    if [ "$src" != "$lib" ]; then
      # Unpacked from a downloaded .deb (scripts/target-xtables.sh): its list.
      real=$(readlink -f "$src" | sed "s|^$sysroot||")
      line=$(grep -m1 -E "^($lib|$real) " "$sysroot/PACKAGES" | cut -d' ' -f2- || true)
    else
      real=$(readlink -f "$lib")
      pkg=$(awk -v a="$lib" -v b="$real" '$1 == a || $1 == b { print $2; exit }' "$tmp.owners")
      line="${pkg:-unknown} $(awk -v p="$pkg" '$1 == p { print $2; exit }' "$tmp.versions")"
    fi
    echo "$lib $(sha256sum "$tmp$lib" | cut -d' ' -f1) ${line:-unknown }"
  done
  echo "/usr/local/bin/dpscope $(sha256sum "$tmp/usr/local/bin/dpscope" | cut -d' ' -f1) dpscope"
  echo "/usr/local/bin/dpscope-once $(sha256sum "$tmp/usr/local/bin/dpscope-once" | cut -d' ' -f1) dpscope (static)"
} >"$tmp/MANIFEST"
rm -f "$tmp.owners" "$tmp.versions"
# Licences: dpscope's, and the Debian copyright file of every package a
# bundled file came from (the image and the archive carry their binaries).
here_src=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$tmp/usr/share/doc/dpscope"
cp "$here_src/LICENSE" "$tmp/usr/share/doc/dpscope/LICENSE"
for pkg in $(awk '!/^#/ && NF >= 4 && $3 != "dpscope" { sub(/:.*/, "", $3); print $3 }' "$tmp/MANIFEST" | sort -u); do
  c=$(source_of "/usr/share/doc/$pkg/copyright")
  [ -f "$c" ] || { echo "bundle.sh: no /usr/share/doc/$pkg/copyright" >&2; exit 2; }
  mkdir -p "$tmp/usr/share/doc/$pkg"
  cp "$c" "$tmp/usr/share/doc/$pkg/copyright"
done

rm -rf "$out"
mv "$tmp" "$out"
trap - EXIT
echo "bundle: $out ($(du -sh "$out" | cut -f1), $(printf '%s\n' $all | grep -vcx "$interp") libraries + $interp)" >&2
