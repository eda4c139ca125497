#!/bin/sh
# The packaging tier: the artifacts a user downloads, built by `make release`
# from the trees `make test` has already built (no compile here), then run as
# a user runs them. One line per test: "NAME: ok (N s)", "NAME: FAILED ..." or
# "NAME: SKIPPED (why)"; the last line "packaging: N passed, N failed, N skipped".
#
#   release-builds           make release twice (DIST a and b), every artifact, SHA256SUMS
#   release-reproducible     the two releases are the same bytes (or which file differs and how)
#   install-destdir          make install DESTDIR= PREFIX=: binary, man page, completions, plugin,
#                            docs run from there; make uninstall leaves no file
#   deb-fields-and-contents  dpkg-deb --info/--contents of both .debs; Depends from the libraries
#   deb-lintian              lintian: no error or warning (overrides: packaging/debian/lintian-overrides)
#   deb-install-remove       dpkg -i / dpscope version, man, completion from the package / dpkg --purge
#   deb-arm64-runs           the arm64 .deb's dpscope under qemu-user: version
#   image-oci-archives       labels, platforms, the multi-arch index; podman load and skopeo read them
#   image-ctr-import         containerd (its own, private) imports both: ctr images import, as kind load does
#   image-runc-snapshot      the amd64 image run by runc in a dps-* netns: its snapshot == the host binary's
#   image-runc-compare       the image's compare of fixtures/snapshots == the host binary's, byte for byte
#   image-arm64-compare      the arm64 image's file system as a chroot, its dpscope under qemu-user:
#                            the same compare
#   archive-amd64-cli        the amd64 release archive's bin/dpscope: cli-commands.txt == build/dpscope
#   arm64-cli-equals-amd64   the arm64 release archive under qemu-user: cli-commands.txt == amd64
#   krew-manifest            the released manifest against krew's schema and its archive
#
# usage: tests/packaging/run.sh BUILD ARM64_BUILD
set -u
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:?usage: run.sh BUILD ARM64_BUILD}" && pwd)
arm64=${2:?usage: run.sh BUILD ARM64_BUILD}
case $arm64 in /*) ;; *) arm64=$src/$arm64 ;; esac
work=$(mktemp -d /tmp/dps-packaging.XXXXXX)
cleanup() {
  [ -f "$work/manifest.saved" ] && cp "$work/manifest.saved" "$build/install_manifest.txt"
  rm -rf "$work"
}
trap cleanup EXIT
version=$(sed -n 's/^project(dpscope VERSION \([^ ]*\).*/\1/p' "$src/CMakeLists.txt")
host_arch=$(dpkg --print-architecture)
dist=$work/a/dist
qemu=$(command -v qemu-aarch64-static || command -v qemu-aarch64 || true)
passed=0 failed=0 skipped=0

# run_test NAME: runs test_NAME (a function), 0 ok, 77 skipped (its last line
# says why), anything else failed (its last lines say what).
run_test() {
  t0=$(date +%s)
  log=$work/$1.log
  ( set -eu; "test_$(echo "$1" | tr - _)" ) >"$log" 2>&1
  rc=$?
  dt=$(($(date +%s) - t0))
  case $rc in
    0) echo "   $1: ok ($dt s)"; passed=$((passed + 1)) ;;
    77) echo "   $1: SKIPPED ($(tail -n1 "$log"))"; skipped=$((skipped + 1)) ;;
    *) echo "   $1: FAILED ($dt s, exit $rc):"; tail -n 25 "$log" | cut -c1-300 | sed 's/^/      /'
       failed=$((failed + 1)) ;;
  esac
}
skip() { echo "$*"; exit 77; }
fail() { echo "FAILED: $*"; exit 1; }
need_root() { [ "$(id -u)" = 0 ] || skip "SKIPPED: needs root ($*)"; }
# The fields of a file's text that must be there (grep -F, one a line).
has() { file=$1; shift; for s in "$@"; do grep -qF -- "$s" "$file" || fail "$file lacks: $s"; done; }

# --- the release, twice ------------------------------------------------------
release() {
  make -C "$src" --no-print-directory release DIST="$1" BUILD="$build" ARM64_BUILD="$arm64" RELEASE_DIRTY=1
}
test_release_builds() {
  release "$dist"
  for f in "dpscope_${version}_amd64.deb" "dpscope_${version}_arm64.deb" \
           "dpscope-$version-linux-amd64.tar.gz" "dpscope-$version-linux-arm64.tar.gz" \
           "dpscope-$version-amd64.oci.tar" "dpscope-$version-arm64.oci.tar" "dpscope-$version.oci.tar" \
           "kubectl-dpscope-$version.tar.gz" dpscope.yaml "dpscope-$version.tar.gz" SHA256SUMS; do
    [ -s "$dist/$f" ] || fail "no $f in dist/"
  done
  (cd "$dist" && sha256sum -c --quiet SHA256SUMS) || fail "SHA256SUMS does not match"
  [ "$(wc -l <"$dist/SHA256SUMS")" = "$(($(ls "$dist" | wc -l) - 1))" ] || fail "SHA256SUMS does not list every file"
  # Every archive carries the licence.
  tar -tzf "$dist/dpscope-$version-linux-amd64.tar.gz" | grep -qx "dpscope-$version-linux-amd64/LICENSE" || fail "no LICENSE in the archive"
  tar -tzf "$dist/dpscope-$version-linux-arm64.tar.gz" | grep -qx "dpscope-$version-linux-arm64/usr/share/doc/libc6/copyright" ||
    fail "no copyright file of the bundled libc6 in the arm64 archive"
  tar -tzf "$dist/kubectl-dpscope-$version.tar.gz" | grep -qx LICENSE || fail "no LICENSE in the krew archive"
}
test_release_reproducible() {
  [ -f "$dist/SHA256SUMS" ] || fail "no first release"
  # Another moment, another directory: only SOURCE_DATE_EPOCH may set a time.
  sleep 1
  release "$work/b/dist"
  if ! cmp "$dist/SHA256SUMS" "$work/b/dist/SHA256SUMS"; then
    diff "$dist/SHA256SUMS" "$work/b/dist/SHA256SUMS" || true
    for f in $(diff "$dist/SHA256SUMS" "$work/b/dist/SHA256SUMS" | sed -n 's/^< [0-9a-f]*  //p'); do
      echo "== $f differs:"
      case $f in
        *.deb) dpkg-deb -c "$dist/$f" >"$work/a.list"; dpkg-deb -c "$work/b/dist/$f" >"$work/b.list"
               diff "$work/a.list" "$work/b.list" | head ;;
        *) cmp -l "$dist/$f" "$work/b/dist/$f" | head -n 5 ;;
      esac
    done
    fail "two releases of one tree differ"
  fi
}

# --- make install / uninstall ------------------------------------------------
test_install_destdir() {
  dest=$work/destdir
  [ -f "$build/install_manifest.txt" ] && cp "$build/install_manifest.txt" "$work/manifest.saved"
  make -C "$src" --no-print-directory install BUILD="$build" DESTDIR="$dest" PREFIX=/opt/dps
  p=$dest/opt/dps
  "$p/bin/dpscope" version >"$work/version.txt" || fail "the installed dpscope version"
  has "$work/version.txt" "dpscope $version"
  [ -x "$p/bin/kubectl-dpscope" ] || fail "no kubectl plugin in bin"
  sh -n "$p/bin/kubectl-dpscope" || fail "kubectl-dpscope is not sh"
  MANWIDTH=80 MANPAGER=cat man -l "$p/share/man/man1/dpscope.1" >"$work/man.txt" 2>"$work/man.err" || fail "man -l: $(cat "$work/man.err")"
  has "$work/man.txt" "DPSCOPE(1)" "compare"
  # bash-completion's own loader finds it by the command's name in DATADIR.
  bash -c ". '$p/share/bash-completion/completions/dpscope' && complete -p dpscope" >"$work/complete.txt" || fail "bash completion"
  has "$work/complete.txt" "dpscope"
  zsh -n "$p/share/zsh/site-functions/_dpscope" || fail "zsh: _dpscope in site-functions"
  head -n1 "$p/share/zsh/site-functions/_dpscope" | grep -q '^#compdef dpscope' || fail "_dpscope is not a #compdef file"
  fish -c "source '$p/share/fish/vendor_completions.d/dpscope.fish'; complete -C 'dpscope comp'" >"$work/fish.txt" || fail "fish completion"
  has "$work/fish.txt" "compare"
  for f in README.md LICENSE docs/cli.md docs/kubectl-debug.md examples/daemonset.yaml; do
    [ -f "$p/share/doc/dpscope/$f" ] || fail "no share/doc/dpscope/$f"
  done
  cmp "$p/share/doc/dpscope/LICENSE" "$src/LICENSE" || fail "LICENSE differs"
  grep -qx "/opt/dps/share/zsh/site-functions/_dpscope" "$build/install_manifest.txt" || fail "the manifest lacks _dpscope"
  make -C "$src" --no-print-directory uninstall BUILD="$build" DESTDIR="$dest" >/dev/null
  left=$(find "$dest" -type f)
  [ -z "$left" ] || fail "make uninstall left: $left"
  [ ! -e "$p/share/doc/dpscope" ] || fail "make uninstall left share/doc/dpscope"
}

# --- the Debian packages -----------------------------------------------------
test_deb_fields_and_contents() {
  for arch in amd64 arm64; do
    deb=$dist/dpscope_${version}_$arch.deb
    dpkg-deb --info "$deb" >"$work/info.$arch"
    has "$work/info.$arch" " Package: dpscope" " Version: $version" " Architecture: $arch" " Section: net" \
      " Maintainer: " " Installed-Size: " " Description: snapshot and compare"
    depends=$(dpkg-deb -f "$deb" Depends)
    # From the binary's DT_NEEDED (dpkg-shlibdeps), and the dlmopened libxtables and iptables.
    for p in libc6 libstdc++6 libgcc-s1 libbpf1 libnftnl11 libmnl0 libipset13 libzstd1 zlib1g "libxtables12 (>=" "iptables (>="; do
      case ", $depends" in *", $p"*) ;; *) fail "$arch Depends lacks $p: $depends" ;; esac
    done
    dpkg-deb --contents "$deb" >"$work/contents.$arch"
    has "$work/contents.$arch" "-rwxr-xr-x root/root" \
      " ./usr/bin/dpscope" " ./usr/bin/kubectl-dpscope" " ./usr/share/man/man1/dpscope.1.gz" \
      " ./usr/share/bash-completion/completions/dpscope" " ./usr/share/zsh/vendor-completions/_dpscope" \
      " ./usr/share/fish/vendor_completions.d/dpscope.fish" " ./usr/share/doc/dpscope/copyright" \
      " ./usr/share/doc/dpscope/changelog.gz" " ./usr/share/doc/dpscope/README.md"
    if grep -v " root/root " "$work/contents.$arch"; then fail "a file not owned by root"; fi
    if grep -q "/usr/share/doc/dpscope/LICENSE" "$work/contents.$arch"; then fail "LICENSE beside copyright"; fi
    dpkg-deb -x "$deb" "$work/x.$arch"
    m=$(readelf -h "$work/x.$arch/usr/bin/dpscope" | sed -n 's/^ *Machine: *//p')
    case $arch:$m in amd64:*X86-64*|arm64:*AArch64*) ;; *) fail "$arch package holds a $m binary" ;; esac
    has "$work/x.$arch/usr/share/doc/dpscope/copyright" "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/" \
      "License: Apache-2.0" "/usr/share/common-licenses/Apache-2.0"
  done
}
test_deb_lintian() {
  command -v lintian >/dev/null || skip "SKIPPED: no lintian (scripts/deps.sh test installs it)"
  for arch in amd64 arm64; do
    lintian --fail-on error,warning --display-info "$dist/dpscope_${version}_$arch.deb" >"$work/lintian.$arch" 2>&1 ||
      { cat "$work/lintian.$arch"; fail "lintian $arch"; }
    # Informational tags are not failures, but say them.
    cat "$work/lintian.$arch"
  done
}
test_deb_install_remove() {
  need_root "dpkg -i"
  if dpkg-query -W -f='${Status}' dpscope 2>/dev/null | grep -q "installed"; then
    skip "SKIPPED: a dpscope package is installed on this machine already (not ours to remove)"
  fi
  deb=$dist/dpscope_${version}_$host_arch.deb
  # dpkg's lock may be held by another apt-get for a while.
  n=0
  until dpkg -i "$deb" >"$work/dpkg-i.log" 2>&1; do
    n=$((n + 1))
    grep -q "lock" "$work/dpkg-i.log" && [ $n -lt 30 ] || { cat "$work/dpkg-i.log"; dpkg --purge dpscope >/dev/null 2>&1; fail "dpkg -i"; }
    sleep 5
  done
  ok=1
  /usr/bin/dpscope version >"$work/v.txt" || ok=0
  grep -q "dpscope $version" "$work/v.txt" || { echo "dpscope version: $(cat "$work/v.txt")"; ok=0; }
  [ "$(man -w dpscope)" = /usr/share/man/man1/dpscope.1.gz ] || { echo "man -w: $(man -w dpscope 2>&1)"; ok=0; }
  bash -c '. /usr/share/bash-completion/bash_completion && _completion_loader dpscope; complete -p dpscope' >/dev/null 2>&1 ||
    { echo "bash-completion does not load dpscope's completion"; ok=0; }
  zsh -fc 'fpath=(/usr/share/zsh/vendor-completions $fpath); autoload -Uz compinit && compinit -u -D && (( $+_comps[dpscope] ))' ||
    { echo "zsh compinit does not find _dpscope"; ok=0; }
  command -v kubectl-dpscope >/dev/null || { echo "kubectl-dpscope not on PATH"; ok=0; }
  n=0
  until dpkg --purge dpscope >"$work/dpkg-r.log" 2>&1; do
    n=$((n + 1))
    grep -q "lock" "$work/dpkg-r.log" && [ $n -lt 30 ] || { cat "$work/dpkg-r.log"; fail "dpkg --purge"; }
    sleep 5
  done
  [ ! -e /usr/bin/dpscope ] && [ ! -e /usr/share/doc/dpscope ] || fail "dpkg --purge left files"
  [ $ok = 1 ] || fail "the installed package"
}
test_deb_arm64_runs() {
  [ -n "$qemu" ] || skip "SKIPPED: no qemu-user (qemu-user-static) to run arm64 binaries"
  [ -d "$work/x.arm64" ] || dpkg-deb -x "$dist/dpscope_${version}_arm64.deb" "$work/x.arm64"
  # The :arm64 libraries its Depends name are installed here (multiarch).
  "$qemu" "$work/x.arm64/usr/bin/dpscope" version >"$work/v.arm64" || fail "arm64 dpscope version"
  has "$work/v.arm64" "dpscope $version"
}

# --- the images --------------------------------------------------------------
# The image's config (jq), from an OCI archive with one image or an index of them.
oci_config() {
  d=$work/oci.$$.$(basename "$1")
  rm -rf "$d"; mkdir -p "$d"; tar -C "$d" -xf "$1"
  blob() { echo "$d/blobs/sha256/${1#sha256:}"; }
  m=$(jq -r '.manifests[0].digest' "$d/index.json")
  jq -r '.config.digest' "$(blob "$m")" | { read -r c; cat "$(blob "$c")"; }
}
test_image_oci_archives() {
  for arch in amd64 arm64; do
    a=$dist/dpscope-$version-$arch.oci.tar
    oci_config "$a" >"$work/config.$arch"
    [ "$(jq -r .architecture "$work/config.$arch")" = "$arch" ] || fail "$a: architecture $(jq -r .architecture "$work/config.$arch")"
    [ "$(jq -r '.config.Entrypoint[0]' "$work/config.$arch")" = /usr/local/bin/dpscope ] || fail "$a: entrypoint"
    labels=$(jq -r '.config.Labels | to_entries[] | "\(.key)=\(.value)"' "$work/config.$arch")
    echo "$labels"
    for l in "org.opencontainers.image.version=$version" "org.opencontainers.image.licenses=Apache-2.0" \
             "org.opencontainers.image.revision=$(git -C "$src" rev-parse HEAD)" "org.opencontainers.image.source=http"; do
      echo "$labels" | grep -qF "$l" || fail "$a: no label $l"
    done
    pk=$(echo "$labels" | sed -n 's/^dpscope.debian-packages=//p')
    for p in libc6 libstdc++6 libbpf1 libnftnl11 libmnl0 libzstd1 zlib1g libxtables12 iptables; do
      echo " $pk" | grep -q " $p=[0-9]" || fail "$a: the Debian packages label lacks $p: $pk"
    done
    # dpscope's licence and the copyright files of the Debian packages in it.
    layer=$(jq -r '.layers[0].digest' "$d/blobs/sha256/$(jq -r '.manifests[0].digest' "$d/index.json" | sed 's/^sha256://')" | sed 's/^sha256://')
    tar -tzf "$d/blobs/sha256/$layer" | sed 's|^\./||' >"$work/layer.$arch"
    for f in usr/share/doc/dpscope/LICENSE usr/share/doc/libc6/copyright usr/share/doc/iptables/copyright; do
      grep -qx "$f" "$work/layer.$arch" || fail "$a: no $f in the image"
    done
    tar -xOf "$a" index.json | jq -e --arg r "localhost/dpscope:$version" \
      '.manifests[0].annotations["org.opencontainers.image.ref.name"] == $r and .manifests[0].annotations["io.containerd.image.name"] == $r' \
      >/dev/null || fail "$a: index.json does not name the image $r"
  done
  # The multi-arch index: one reference, both platforms.
  d=$work/index; mkdir -p "$d"; tar -C "$d" -xf "$dist/dpscope-$version.oci.tar"
  i=$(jq -r '.manifests[0].digest' "$d/index.json" | sed 's/^sha256://')
  jq -r '[.manifests[].platform | .os + "/" + .architecture] | sort | join(" ")' "$d/blobs/sha256/$i" >"$work/platforms"
  [ "$(cat "$work/platforms")" = "linux/amd64 linux/arm64" ] || fail "index platforms: $(cat "$work/platforms")"
  # skopeo (what `skopeo copy ... docker://REGISTRY/...` reads) takes each archive and the index (--all).
  for a in "dpscope-$version-amd64.oci.tar" "dpscope-$version.oci.tar"; do
    rm -rf "$work/copy"
    skopeo copy -q --all "oci-archive:$dist/$a" "oci:$work/copy:t" || fail "skopeo copy oci-archive:$a"
  done
  # podman load, into a storage of its own (not the machine's).
  if command -v podman >/dev/null; then
    for a in "dpscope-$version-amd64.oci.tar" "dpscope-$version.oci.tar"; do
      pod="podman --root $work/podman/root --runroot $work/podman/run --storage-driver vfs"
      $pod load -q -i "$dist/$a" >"$work/podman.load" 2>&1 || { cat "$work/podman.load"; fail "podman load $a"; }
      $pod images --format '{{.Repository}}:{{.Tag}}' | grep -qx "localhost/dpscope:$version" || fail "podman load $a: no localhost/dpscope:$version"
      $pod rmi -a -f >/dev/null 2>&1 || true
    done
  else
    echo "(podman not installed: load not tried)"
  fi
}

# containerd's own import (`ctr images import`, what `kind load image-archive`
# runs inside a kind node, and how a node's containerd is fed by hand): a
# containerd of its own (root, state and socket under $work, nothing of the
# machine's), the namespace kubelet uses (k8s.io), the amd64 archive and the
# multi-arch index; the image must be listed by its reference, the index with
# both platforms.
test_image_ctr_import() {
  command -v containerd >/dev/null && command -v ctr >/dev/null || skip "SKIPPED: containerd is not installed (apt-get install containerd)"
  need_root "containerd"
  c=$work/containerd
  mkdir -p "$c"
  printf 'version = 2\nroot = "%s/root"\nstate = "%s/state"\n[grpc]\n  address = "%s/ctr.sock"\n' "$c" "$c" "$c" >"$c/config.toml"
  containerd -c "$c/config.toml" --log-level error >"$c/log" 2>&1 &
  cpid=$!
  trap 'kill $cpid 2>/dev/null; wait $cpid 2>/dev/null' EXIT
  i=0
  while [ ! -S "$c/ctr.sock" ]; do
    i=$((i + 1))
    [ $i -lt 100 ] || { cat "$c/log"; fail "containerd did not start in 10 s"; }
    sleep 0.1
  done
  ctr="ctr -a $c/ctr.sock -n k8s.io"
  for a in "dpscope-$version-amd64.oci.tar" "dpscope-$version.oci.tar"; do
    $ctr images import --all-platforms "$dist/$a" >"$c/import" 2>&1 || { cat "$c/import"; fail "ctr images import $a"; }
    $ctr images ls -q | grep -qx "localhost/dpscope:$version" || fail "ctr images import $a: no localhost/dpscope:$version"
    if [ "$a" = "dpscope-$version-amd64.oci.tar" ]; then $ctr images rm "localhost/dpscope:$version" >/dev/null; fi
  done
  $ctr images ls | grep -F "localhost/dpscope:$version" | grep -qF "linux/amd64,linux/arm64" ||
    { $ctr images ls; fail "the multi-arch index is not listed with both platforms"; }
}

# An image's file system and a runc bundle for it: what kubectl debug
# --profile=sysadmin gives (privileged: every capability this session has, no
# seccomp, no masked or read-only paths), the network namespace inherited (runc is
# started under nsenter --net), no rlimits (setting them needs
# CAP_SYS_RESOURCE, which this session lacks; packaging-notes), and
# fixtures/snapshots bound read-only at /fixtures.
runc_bundle() {
  archive=$1 b=$2
  rm -rf "$b" "$b.layout"
  skopeo copy -q "oci-archive:$archive" "oci:$b.layout:run"
  umoci unpack --image "$b.layout:run" "$b" >/dev/null
  last=$(cat /proc/sys/kernel/cap_last_cap)
  caps=$(echo CAP_CHOWN CAP_DAC_OVERRIDE CAP_DAC_READ_SEARCH CAP_FOWNER CAP_FSETID CAP_KILL CAP_SETGID CAP_SETUID \
    CAP_SETPCAP CAP_LINUX_IMMUTABLE CAP_NET_BIND_SERVICE CAP_NET_BROADCAST CAP_NET_ADMIN CAP_NET_RAW CAP_IPC_LOCK \
    CAP_IPC_OWNER CAP_SYS_MODULE CAP_SYS_RAWIO CAP_SYS_CHROOT CAP_SYS_PTRACE CAP_SYS_PACCT CAP_SYS_ADMIN CAP_SYS_BOOT \
    CAP_SYS_NICE CAP_SYS_RESOURCE CAP_SYS_TIME CAP_SYS_TTY_CONFIG CAP_MKNOD CAP_LEASE CAP_AUDIT_WRITE CAP_AUDIT_CONTROL \
    CAP_SETFCAP CAP_MAC_OVERRIDE CAP_MAC_ADMIN CAP_SYSLOG CAP_WAKE_ALARM CAP_BLOCK_SUSPEND CAP_AUDIT_READ CAP_PERFMON \
    CAP_BPF CAP_CHECKPOINT_RESTORE | tr ' ' '\n' | head -n $((last + 1)) |
    # ... that this session has itself (a container cannot get more: here
    # CAP_SYS_RESOURCE, for one, is not in the bounding set).
    awk -v bnd="$(sed -n 's/^CapBnd:[[:space:]]*//p' /proc/self/status)" '
      BEGIN { for (i = 1; i <= 16; i++) { h = substr(bnd, i, 1); v = index("0123456789abcdef", h) - 1
                for (b = 0; b < 4; b++) bit[(16 - i) * 4 + b] = int(v / 2 ^ b) % 2 } }
      bit[NR - 1] { print }' | jq -R . | jq -s -c .)
  jq --argjson caps "$caps" --arg fx "$src/fixtures/snapshots" '
      del(.process.rlimits) | .process.terminal = false
    | .process.capabilities = {bounding: $caps, effective: $caps, permitted: $caps}
    | del(.linux.seccomp) | del(.linux.maskedPaths) | del(.linux.readonlyPaths)
    | .linux.namespaces |= map(select(.type != "network"))
    | .mounts |= map(if .destination == "/sys" then .options |= map(select(. != "ro")) else . end)
    | .mounts += [{destination: "/fixtures", type: "bind", source: $fx, options: ["rbind", "ro"]}]
    | .hostname = "dps-image"' "$b/config.json" >"$b/config.json.tmp"
  mv "$b/config.json.tmp" "$b/config.json"
}
# runc_run BUNDLE NETNS ARGS...: the image's dpscope with ARGS; stdout to stdout.
runc_run() {
  b=$1 ns=$2; shift 2
  jq --argjson args "$(printf '%s\n' /usr/local/bin/dpscope "$@" | jq -R . | jq -s -c .)" '.process.args = $args' \
    "$b/config.json" >"$b/config.json.tmp" && mv "$b/config.json.tmp" "$b/config.json"
  nsenter --net="/var/run/netns/$ns" runc --root "$work/runc" run --bundle "$b" "dps-pkg-$$-$(date +%s%N)"
}
# The fields of a snapshot that change from one run to the next.
volatile_fields='del(.node.taken_at)'
test_image_runc_snapshot() {
  need_root "runc, a network namespace"
  command -v runc >/dev/null && command -v umoci >/dev/null || skip "SKIPPED: no runc or umoci (scripts/deps.sh test)"
  ns=dps-packaging-$$
  ip netns add "$ns" || fail "ip netns add $ns"
  # kube-proxy's rules of the kind fixture (iptables-nft: libxtables and its
  # extension objects print them) and a native nftables table.
  ok=0
  {
    ip netns exec "$ns" iptables-nft-restore <"$src/fixtures/scenarios/kind-kube-proxy.iptables-save.txt" &&
    ip netns exec "$ns" nft -f - <<'NFT' &&
table inet dps_image {
  set ports { type inet_service; elements = { 80, 443, 8080 } }
  chain input {
    type filter hook input priority 0; policy accept;
    tcp dport @ports counter accept
    ip saddr 10.0.0.0/8 drop
  }
}
NFT
    runc_bundle "$dist/dpscope-$version-$host_arch.oci.tar" "$work/bundle" &&
    runc_run "$work/bundle" "$ns" snapshot --node pkg --no-ebpf --no-agents -q -o - >"$work/image.json" &&
    nsenter --net="/var/run/netns/$ns" "$build/dpscope" snapshot --node pkg --no-ebpf --no-agents -q -o - >"$work/host.json" &&
    ok=1
  } || true
  ip netns delete "$ns"
  [ $ok = 1 ] || fail "loading the namespace or a snapshot"
  jq -S "$volatile_fields" "$work/image.json" >"$work/image.cmp"
  jq -S "$volatile_fields" "$work/host.json" >"$work/host.cmp"
  jq -e '[.netfilter | .. | objects | select(has("text")) ] | length > 20' "$work/host.json" >/dev/null ||
    fail "the host's snapshot has no rule text"
  diff "$work/host.cmp" "$work/image.cmp" | head -n 40
  cmp "$work/host.cmp" "$work/image.cmp" || fail "the image's snapshot differs from the host binary's (above)"
}
compare_args="compare /fixtures/kind-kube-proxy.json /fixtures/kind-cilium-kpr.json --width 120"
test_image_runc_compare() {
  need_root "runc"
  [ -f "$work/bundle/config.json" ] || skip "SKIPPED: no runc bundle (image-runc-snapshot did not make one)"
  ns=dps-packaging-$$-c
  ip netns add "$ns"
  runc_run "$work/bundle" "$ns" $compare_args >"$work/image-compare.txt" || true
  ip netns delete "$ns"
  (cd "$src/fixtures/snapshots" && "$build/dpscope" compare kind-kube-proxy.json kind-cilium-kpr.json --width 120) \
    >"$work/host-compare.txt" || true
  # The reports name the files as given: the image's /fixtures/X, the host's X.
  sed 's|/fixtures/||g' "$work/image-compare.txt" >"$work/image-compare.cmp"
  [ -s "$work/host-compare.txt" ] || fail "no host report"
  diff "$work/host-compare.txt" "$work/image-compare.cmp" | head -n 20
  cmp "$work/host-compare.txt" "$work/image-compare.cmp" || fail "the image's compare differs"
}
test_image_arm64_compare() {
  [ -n "$qemu" ] || skip "SKIPPED: no qemu-user (qemu-user-static) to run arm64 binaries"
  rm -rf "$work/arm64-layout" "$work/arm64-image"
  skopeo copy -q "oci-archive:$dist/dpscope-$version-arm64.oci.tar" "oci:$work/arm64-layout:run"
  umoci unpack --rootless --image "$work/arm64-layout:run" "$work/arm64-image" >/dev/null
  root=$work/arm64-image/rootfs
  # The image's ENV, as a runtime would set it.
  env_args=$(jq -r '.process.env[]' "$work/arm64-image/config.json" | tr '\n' ' ')
  if [ "$(id -u)" = 0 ] && file -L "$qemu" | grep -Eq 'static(ally|-pie) linked'; then
    # The image's file system alone (a chroot with the static qemu in it): a
    # library the image lacks cannot come from this machine.
    cp "$qemu" "$root/qemu-aarch64-static"
    mkdir -p "$root/fixtures"
    unshare -m sh -c 'mount --bind "$1" "$2/fixtures" && cd "$2" &&
        exec env -i $3 "$4" "$2" /qemu-aarch64-static /usr/local/bin/dpscope \
          compare /fixtures/kind-kube-proxy.json /fixtures/kind-cilium-kpr.json --width 120' \
      sh "$src/fixtures/snapshots" "$root" "$env_args" "$(command -v chroot)" | sed 's|/fixtures/||g' >"$work/arm64-compare.txt" || true
  else
    (cd "$src/fixtures/snapshots" && env -i $env_args "$qemu" -L "$root" "$root/usr/local/bin/dpscope" \
        compare kind-kube-proxy.json kind-cilium-kpr.json --width 120) >"$work/arm64-compare.txt" || true
  fi
  (cd "$src/fixtures/snapshots" && "$build/dpscope" compare kind-kube-proxy.json kind-cilium-kpr.json --width 120) \
    >"$work/host-compare.txt" || true
  [ -s "$work/host-compare.txt" ] || fail "no host report"
  cmp "$work/host-compare.txt" "$work/arm64-compare.txt" || { diff "$work/host-compare.txt" "$work/arm64-compare.txt" | head; fail "differs"; }
}

# --- the release archives: cli-commands.txt, one binary against another ------
# run_commands OUTDIR DPSCOPE...: each line of cli-commands.txt, from the source
# tree; OUTDIR/N.{out,err,rc} and the files it wrote (OUTDIR/scratch).
run_commands() {
  o=$1; shift
  mkdir -p "$o/scratch"
  n=0
  grep -v '^#' "$src/tests/packaging/cli-commands.txt" | grep -v '^$' | while read -r line; do
    n=$((n + 1))
    # shellcheck disable=SC2046
    rc=0
    (cd "$src" && set -f && exec "$@" $(echo "$line" | sed "s|@|$o/scratch|g") >"$o/$n.out" 2>"$o/$n.err") || rc=$?
    echo $rc >"$o/$n.rc"
    # Where a message names the scratch directory, it is the run's own.
    sed -i "s|$o/scratch|@|g" "$o/$n.out" "$o/$n.err"
  done
  for f in "$o"/scratch/*.json; do
    [ -f "$f" ] && jq -S "$volatile_fields" "$f" >"$f.cmp" && rm "$f"
  done
  for f in "$o"/scratch/*.zst; do
    [ -f "$f" ] && zstd -dc "$f" | jq -S "$volatile_fields" >"$f.cmp" && rm "$f"
  done
  return 0
}
same_outputs() {
  diff -r "$1" "$2" | head -n 30
  diff -r -q "$1" "$2" >/dev/null || fail "outputs differ (above)"
  # (the exit codes of the commands vary: 0, 1 and 2 are all there)
  [ "$(cat "$1"/*.rc | sort -u | paste -sd' ' -)" = "0 1 2" ] || fail "cli-commands.txt no longer covers exit codes 0, 1, 2"
}
unpack_archive() {
  rm -rf "$work/archive.$1"; mkdir -p "$work/archive.$1"
  tar -C "$work/archive.$1" -xzf "$dist/dpscope-$version-linux-$1.tar.gz"
  echo "$work/archive.$1/dpscope-$version-linux-$1"
}
test_archive_amd64_cli() {
  [ "$host_arch" = amd64 ] || skip "SKIPPED: not an amd64 machine"
  a=$(unpack_archive amd64)
  "$a/bin/dpscope" version | grep -q "dpscope $version" || fail "the archive's bin/dpscope version"
  run_commands "$work/cli.host" "$build/dpscope"
  run_commands "$work/cli.archive" "$a/bin/dpscope"
  same_outputs "$work/cli.host" "$work/cli.archive"
}
test_arm64_cli_equals_amd64() {
  [ -n "$qemu" ] || skip "SKIPPED: no qemu-user (apt-get install qemu-user-static): the arm64 binary is not run"
  a=$(unpack_archive arm64)
  [ -d "$work/cli.host" ] || run_commands "$work/cli.host" "$build/dpscope"
  # The archive's bin/dpscope is a sh wrapper around its loader; qemu-user
  # runs the ELF with the archive as its root for every absolute path (-L).
  # (qemu falls back to this machine's file where the archive has none: the
  # :arm64 libraries here could hide one missing from it; image-arm64-compare
  # runs the image's file system as a chroot, where nothing else is.)
  export XTABLES_LIBDIR=/usr/lib/aarch64-linux-gnu/xtables
  run_commands "$work/cli.arm64" "$qemu" -L "$a" "$a/usr/local/bin/dpscope"
  same_outputs "$work/cli.host" "$work/cli.arm64"
  "$qemu" -L "$a" "$a/usr/local/bin/dpscope" version >"$work/v.arm64.txt"
  has "$work/v.arm64.txt" "dpscope $version"
}

# --- krew ---------------------------------------------------------------------
test_krew_manifest() {
  command -v python3 >/dev/null && python3 -c 'import yaml' 2>/dev/null || skip "SKIPPED: no python3-yaml"
  m=$dist/dpscope.yaml a=$dist/kubectl-dpscope-$version.tar.gz
  python3 "$src/tests/packaging/krew_manifest_check.py" "$m" "$a" || fail "krew's schema"
  # linux and darwin, amd64 and arm64, one archive for all.
  python3 -c 'import sys, yaml; d = yaml.safe_load(open(sys.argv[1]))
print(" ".join(sorted(p["selector"]["matchLabels"]["os"] + "/" + p["selector"]["matchLabels"]["arch"] for p in d["spec"]["platforms"])))' \
    "$m" >"$work/krew.platforms"
  [ "$(cat "$work/krew.platforms")" = "darwin/amd64 darwin/arm64 linux/amd64 linux/arm64" ] || fail "platforms: $(cat "$work/krew.platforms")"
  has "$m" "dpscope-VERSION.oci.tar" "kind load image-archive" "ctr -n k8s.io images import" "skopeo copy"
  # The check finds what is wrong: a sha256 that is not the archive's, a bin not installed.
  mkdir -p "$work/krew-bad"
  sed 's/sha256: [0-9a-f]\{8\}/sha256: 00000000/; s/bin: kubectl-dpscope/bin: kubectl-other/' "$m" >"$work/krew-bad/dpscope.yaml"
  if python3 "$src/tests/packaging/krew_manifest_check.py" "$work/krew-bad/dpscope.yaml" "$a" >"$work/krew-bad.out"; then
    fail "a wrong sha256 passed the check"
  fi
  has "$work/krew-bad.out" "is not the archive's" "is not one of the files installed"
}

# PACKAGING_TESTS="NAME ...": only those (by hand; a release is made first
# where one of them needs it, in DIST if that is given: PACKAGING_DIST=dir).
all="release-builds release-reproducible install-destdir deb-fields-and-contents deb-lintian deb-install-remove
  deb-arm64-runs image-oci-archives image-ctr-import image-runc-snapshot image-runc-compare image-arm64-compare
  archive-amd64-cli arm64-cli-equals-amd64 krew-manifest"
if [ -n "${PACKAGING_DIST:-}" ]; then dist=$PACKAGING_DIST; fi
for t in ${PACKAGING_TESTS:-$all}; do
  if [ "$t" != release-builds ] && [ "$t" != install-destdir ] && [ ! -f "$dist/SHA256SUMS" ]; then
    echo "   $t: FAILED (no release to test: release-builds failed)"; failed=$((failed + 1)); continue
  fi
  run_test "$t"
done
echo "   packaging: $passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
