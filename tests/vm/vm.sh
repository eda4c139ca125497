#!/bin/sh
# The second-kernel tier: runs a test program on Debian's own 6.1 kernel in a
# small qemu VM (TCG: no KVM needed), for what this machine's kernel cannot
# show -- eBPF memory accounting of the 5.11-6.3 band today, IPVS later.
#
#   tests/vm/vm.sh kernel CACHE            fetch + extract the kernel and its modules into CACHE (once)
#                                          (run also keeps the last dpscope bundle there)
#   tests/vm/vm.sh run CACHE DPSCOPE PROG OUT
#       boots CACHE's kernel with an initramfs of busybox, bpftool, the dpscope
#       bundle (scripts/bundle.sh DPSCOPE) and PROG (a busybox sh script run as
#       /prog); what PROG writes to /dev/ttyS1 lands in OUT, the console in OUT.console.
#   VM_MODULES="ip_vs ip_vs_rr ..."  kernel modules insmod'ed before PROG, each after
#       the modules it depends on (the "depends=" of its .modinfo)
#   VM_TOOLS="ipvsadm ip ..."        host programs copied in with their libraries
#   VM_FILES="fixtures/a.txt ..."    files copied into the guest's /files/ (by base name)
#
# The kernel is the linux-image-6.1.0-*-cloud-amd64 package from Debian's archive,
# fetched with `apt-get download` and unpacked with `dpkg-deb -x`: never installed.
# Exit: 0 ran, 2 usage, 77 cannot run here (no qemu, no package: the caller skips
# and says why), anything else: the VM or PROG failed.
set -eu

die() { echo "vm.sh: $*" >&2; exit 2; }
cannot() { echo "vm.sh: cannot run: $*" >&2; exit 77; }
root=$(cd "$(dirname "$0")/../.." && pwd)

fetch_kernel() {
  cache=$1
  [ -e "$cache/vmlinuz" ] && [ -e "$cache/modules/version" ] && return 0
  command -v apt-get >/dev/null || cannot "no apt-get to fetch a Debian kernel"
  pkg=$(apt-cache search --names-only '^linux-image-6\.1\.0-[0-9]+-cloud-amd64$' 2>/dev/null |
        awk '{print $1}' | sort -V | tail -n 1)
  [ -n "$pkg" ] || cannot "no linux-image-6.1.0-*-cloud-amd64 package in the apt sources"
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/dps-vmk.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && apt-get download "$pkg" >/dev/null 2>"$tmp/err") || cannot "apt-get download $pkg: $(tail -n 1 "$tmp/err")"
  dpkg-deb -x "$tmp"/*.deb "$tmp/x"
  mkdir -p "$cache"
  # The modules of the parts a guest program may need (netfilter, IPVS, their
  # libraries, dummy interfaces): not the whole 6.1 tree.
  rm -rf "$cache/modules"
  kdir=$(ls -d "$tmp"/x/lib/modules/*)
  for part in kernel/net/netfilter kernel/net/ipv4/netfilter kernel/net/ipv6/netfilter kernel/net/ipv6 kernel/lib \
              kernel/drivers/net/dummy.ko kernel/crypto; do
    for f in "$kdir/$part" "$kdir/$part.xz"; do
      [ -e "$f" ] || continue
      mkdir -p "$cache/modules/$(dirname "$part")"
      cp -r "$f" "$cache/modules/$(dirname "$part")/"
    done
  done
  basename "$kdir" >"$cache/modules/version"
  cp "$tmp"/x/boot/vmlinuz-* "$cache/vmlinuz.tmp"
  echo "$pkg" >"$cache/package"
  mv "$cache/vmlinuz.tmp" "$cache/vmlinuz"
}

# module_file CACHE NAME: the .ko or .ko.xz of module NAME ('-' and '_' are one).
module_file() {
  local want n f
  want=$(echo "$2" | tr '-' '_')
  find "$1/modules" -name '*.ko*' | while read -r f; do
    n=$(basename "$f" | sed 's/\.ko.*$//' | tr '-' '_')
    [ "$n" = "$want" ] && { echo "$f"; break; }
  done
}

# add_module CACHE NAME DIR: NAME's dependencies, then NAME, into DIR (uncompressed),
# each listed once in DIR/order.
add_module() {
  local cache name dir f deps d  # recursive: its own variables per call (dash and busybox sh have local)
  cache=$1 name=$(echo "$2" | tr '-' '_') dir=$3
  grep -qx "$name" "$dir/order" 2>/dev/null && return 0
  f=$(module_file "$cache" "$name")
  [ -n "$f" ] || die "module $name not in the kernel package"
  case $f in
    *.xz) xz -dc "$f" >"$dir/$name.ko" ;;
    *) cp "$f" "$dir/$name.ko" ;;
  esac
  deps=$(tr '\000' '\n' <"$dir/$name.ko" | sed -n 's/^depends=//p' | tr ',' ' ')
  for d in $deps; do add_module "$cache" "$d" "$dir"; done
  echo "$name" >>"$dir/order"
}

# copy_with_libs BINARY DIR: BINARY and the shared libraries it loads, at their paths.
copy_with_libs() {
  bin=$1 dir=$2
  mkdir -p "$dir$(dirname "$bin")"
  cp -L "$bin" "$dir$bin"
  for lib in $(ldd "$bin" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }'); do
    mkdir -p "$dir$(dirname "$lib")"
    cp -L "$lib" "$dir$lib"
  done
}

run_vm() {
  cache=$1 dpscope=$2 prog=$3 out=$4
  [ -e "$cache/vmlinuz" ] || die "no kernel in $cache (run: vm.sh kernel $cache)"
  command -v qemu-system-x86_64 >/dev/null || cannot "qemu-system-x86_64 is not installed (Debian qemu-system-x86)"
  [ -x /bin/busybox ] && busybox --list 2>/dev/null | grep -qx poweroff || cannot "no busybox (Debian busybox-static)"
  command -v cpio >/dev/null || cannot "no cpio"
  bpftool=$(command -v bpftool || echo /usr/sbin/bpftool)
  [ -x "$bpftool" ] || cannot "no bpftool"
  work=$(mktemp -d "${TMPDIR:-/tmp}/dps-vm.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  # The bundle takes most of a run to build (40 s: a MANIFEST line per library
  # from dpkg); it is kept in CACHE for the dpscope binary and bundle.sh it
  # was built from, one at a time.
  key=$(cat "$dpscope" "$root/scripts/bundle.sh" | sha256sum | cut -c1-16)
  if [ ! -d "$cache/bundle-$key" ]; then
    rm -rf "$cache"/bundle-*
    "$root/scripts/bundle.sh" "$dpscope" "$work/bundle" >/dev/null
    cp -a "$work/bundle" "$cache/bundle-$key.tmp" && mv "$cache/bundle-$key.tmp" "$cache/bundle-$key"
  fi
  cp -a "$cache/bundle-$key" "$work/rootfs"
  r=$work/rootfs
  mkdir -p "$r/bin" "$r/dev" "$r/proc" "$r/sys" "$r/run"
  cp /bin/busybox "$r/bin/busybox"
  for a in $(busybox --list); do [ -e "$r/bin/$a" ] || ln -s busybox "$r/bin/$a"; done
  copy_with_libs "$bpftool" "$r"
  for tool in ${VM_TOOLS:-}; do
    path=$(command -v "$tool") || cannot "$tool is not installed here"
    copy_with_libs "$path" "$r"
  done
  mkdir -p "$r/etc" "$r/modules"
  for f in /etc/protocols /etc/services; do [ -e "$f" ] && cp "$f" "$r/etc/"; done
  : >"$r/modules/order"
  for m in ${VM_MODULES:-}; do add_module "$cache" "$m" "$r/modules"; done
  mkdir -p "$r/files"
  for f in ${VM_FILES:-}; do cp "$f" "$r/files/" || die "VM_FILES: cannot copy $f"; done
  cp "$prog" "$r/prog"
  cat >"$r/init" <<'INIT'
#!/bin/sh
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t bpf bpf /sys/fs/bpf
mount -t tmpfs tmp /tmp
# /bin/dpscope is the bundle's entry point (its loader and library path);
# /usr/local/bin/dpscope is the binary it runs, not a command of its own.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
for m in $(cat /modules/order); do
  insmod /modules/$m.ko >/dev/ttyS1 2>&1 || echo "vm.sh: insmod $m failed" >/dev/ttyS1
done
sh /prog >/dev/ttyS1 2>&1
echo "vm.sh: prog exited $?" >/dev/ttyS1
poweroff -f
INIT
  chmod 755 "$r/init" "$r/prog"
  (cd "$r" && find . | cpio -o -H newc 2>/dev/null) >"$work/initrd.cpio"
  : >"$out"
  # -no-reboot + panic=-1: a guest that panics ends the run instead of looping.
  # no_timer_check, noapic: under TCG on a loaded host the IO-APIC timer check
  # can fail and panic the boot.
  timeout 600 qemu-system-x86_64 -m 768 -display none -monitor none -no-reboot \
    -kernel "$cache/vmlinuz" -initrd "$work/initrd.cpio" -append "console=ttyS0 panic=-1 quiet no_timer_check noapic" \
    -serial "file:$out.console" -serial "file:$out" </dev/null
  # The guest's tty turns each \n into \r\n.
  tr -d '\r' <"$out" >"$out.tmp" && mv "$out.tmp" "$out"
  grep -q '^vm.sh: prog exited 0' "$out"
}

case ${1:-} in
  kernel) [ $# = 2 ] || die "usage: vm.sh kernel CACHE"; fetch_kernel "$2" ;;
  run) [ $# = 5 ] || die "usage: vm.sh run CACHE DPSCOPE PROG OUT"; run_vm "$2" "$3" "$4" "$5" ;;
  *) die "usage: vm.sh kernel CACHE | run CACHE DPSCOPE PROG OUT" ;;
esac
