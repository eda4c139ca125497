#!/bin/sh
# Installs, with apt-get, the Debian packages dpscope needs to build and test.
# Idempotent and silent when nothing is missing.
set -eu

PACKAGES="build-essential cmake ninja-build pkg-config
  libnftnl-dev libmnl-dev libxtables-dev libbpf-dev libelf-dev zlib1g-dev libzstd-dev libcli11-dev nlohmann-json3-dev
  libgtest-dev
  clang llvm libclang-rt-14-dev
  iptables nftables iproute2 bpftool procps
  nfacct time
  jq zstd strace
  qemu-system-x86 busybox-static cpio
  zsh fish man-db bsdutils
  chromium chromium-driver"

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
