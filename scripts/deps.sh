#!/bin/sh
# Installs, with apt-get, the Debian packages dpscope needs:
#   scripts/deps.sh build   what building dpscope and running `make demo` need
#   scripts/deps.sh test    that and what the tests, fuzzing and benchmarks need
# (the default). Idempotent and silent when nothing is missing.
set -eu

# Compiler, build system and the libraries dpscope links.
BUILD_PACKAGES="build-essential cmake ninja-build pkg-config
  libnftnl-dev libmnl-dev libipset-dev libxtables-dev libbpf-dev libelf-dev zlib1g-dev libzstd-dev libcli11-dev nlohmann-json3-dev"

# gtest; clang/llvm for the BPF fixtures and libFuzzer, clang-tidy and
# clang-format for `make lint`; the standard tools the
# tests use as oracles; qemu for the kernel matrix; shells and man for the
# completion and man page tests; chromium for the HTML report tests.
TEST_PACKAGES="libgtest-dev
  clang llvm libclang-rt-14-dev clang-tidy clang-format
  iptables nftables iproute2 bpftool procps
  nfacct time
  jq zstd strace
  ipset ipvsadm
  qemu-system-x86 busybox-static cpio xz-utils
  zsh fish man-db bsdutils
  chromium chromium-driver"

case "${1:-test}" in
  build) PACKAGES="$BUILD_PACKAGES" ;;
  test) PACKAGES="$BUILD_PACKAGES $TEST_PACKAGES" ;;
  *)
    echo "usage: scripts/deps.sh [build|test]" >&2
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

if [ "$(id -u)" != 0 ]; then
  echo "dpscope: missing Debian packages:$missing" >&2
  echo "dpscope: run 'sudo make deps' (or install them with apt-get) and try again" >&2
  exit 2
fi
echo "dpscope: installing:$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
