#!/bin/sh
# Installs, with apt-get, the Debian packages dpscope needs:
#   scripts/deps.sh build    what building dpscope and running `make demo` need
#   scripts/deps.sh package  that and what `make deb`, `make image`, `make release` need
#   scripts/deps.sh cross    that and the arm64 cross toolchain and :arm64 libraries
#                            (adds the arm64 architecture to dpkg first)
#   scripts/deps.sh test     all of the above and what the tests, fuzzing and
#                            benchmarks need (the default)
# Idempotent and silent when nothing is missing.
set -eu

# Compiler, build system and the libraries dpscope links.
BUILD_PACKAGES="build-essential cmake ninja-build pkg-config
  libnftnl-dev libmnl-dev libipset-dev libxtables-dev libbpf-dev libelf-dev zlib1g-dev libzstd-dev libcli11-dev nlohmann-json3-dev"

# Packaging: dpkg-shlibdeps/dpkg-architecture (dpkg-dev), buildah for the
# image, jq for its OCI index, xz for the .deb, git for the commit and the
# source archive.
PACKAGE_PACKAGES="dpkg-dev buildah jq xz-utils git"

# The cross build (cmake/toolchain-aarch64-linux-gnu.cmake): the cross
# compiler and the -dev libraries of the target architecture (multiarch), and
# Debian's libstdc++6:arm64 (the cross compiler links its own copy under
# /usr/aarch64-linux-gnu; the .deb's Depends and the bundle need the package).
CROSS_ARCH=arm64
CROSS_PACKAGES="crossbuild-essential-arm64
  libnftnl-dev:arm64 libmnl-dev:arm64 libipset-dev:arm64 libxtables-dev:arm64 libbpf-dev:arm64
  libelf-dev:arm64 zlib1g-dev:arm64 libzstd-dev:arm64
  libstdc++6:arm64"

# gtest; clang/llvm for the BPF fixtures and libFuzzer, clang-tidy and
# clang-format for `make lint`; the standard tools the
# tests use as oracles; qemu for the kernel matrix; shells and man for the
# completion and man page tests; chromium for the HTML report tests; yq (YAML
# to JSON) for the Kubernetes manifest checks.
TEST_PACKAGES="libgtest-dev
  clang llvm libclang-rt-14-dev clang-tidy clang-format
  iptables nftables iproute2 bpftool procps
  nfacct time
  jq yq zstd strace
  ipset ipvsadm
  qemu-system-x86 busybox-static cpio xz-utils
  zsh fish man-db bsdutils
  chromium chromium-driver
  lintian umoci runc skopeo podman containerd qemu-user-static python3-yaml bash-completion file"

case "${1:-test}" in
  build) PACKAGES="$BUILD_PACKAGES" ;;
  package) PACKAGES="$BUILD_PACKAGES $PACKAGE_PACKAGES" ;;
  cross) PACKAGES="$BUILD_PACKAGES $PACKAGE_PACKAGES $CROSS_PACKAGES" ;;
  test) PACKAGES="$BUILD_PACKAGES $PACKAGE_PACKAGES $CROSS_PACKAGES $TEST_PACKAGES" ;;
  *)
    echo "usage: scripts/deps.sh [build|package|cross|test]" >&2
    exit 2
    ;;
esac

missing=""
for p in $PACKAGES; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  case "$status" in
    *"install ok installed"*) ;;
    *) missing="$missing $p" ;;
  esac
done
[ -z "$missing" ] && exit 0
add_arch=""
case " $PACKAGES " in
  *":$CROSS_ARCH "*) dpkg --print-foreign-architectures | grep -qx "$CROSS_ARCH" || add_arch=$CROSS_ARCH ;;
esac

if [ "$(id -u)" != 0 ]; then
  echo "dpscope: missing Debian packages:$missing" >&2
  echo "dpscope: run 'sudo make deps' (or install them with apt-get) and try again" >&2
  exit 2
fi
echo "dpscope: installing:$missing" >&2
export DEBIAN_FRONTEND=noninteractive
if [ -n "$add_arch" ]; then
  echo "dpscope: dpkg --add-architecture $add_arch (the cross build's libraries)" >&2
  dpkg --add-architecture "$add_arch"
fi
apt-get update -qq >/dev/null
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
