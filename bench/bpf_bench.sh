#!/bin/sh
# eBPF benchmark (issue 4): LB map decode vs `bpftool map dump -j`, and the
# whole eBPF section of a 100-map / 200-program node. Needs root and bpftool.
#   bench/bpf_bench.sh [BUILD_DIR] [RUNS]
# Prints a Markdown table; exit 1 when a target is missed.
set -eu
build=${1:-build}
runs=${2:-5}
bin="$build/bench/dpscope_bpf_bench"
if [ ! -x "$bin" ]; then
  echo "bpf_bench: $bin not built (cmake --build $build --target dpscope_bpf_bench)" >&2
  exit 2
fi
if [ "$(id -u)" != 0 ]; then
  echo "bpf_bench: SKIPPED: needs root" >&2
  exit 0
fi
exec "$bin" "$runs"
