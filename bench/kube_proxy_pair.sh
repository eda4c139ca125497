#!/bin/sh
# The real kube-proxy pair (fixtures' upstream: ../shared/upstream/real-kube-proxy/, kube-proxy v1.30.3,
# one cluster state programmed once in iptables mode and once in nftables mode), each side loaded with the
# real tools into its own dps-bench-* network namespace, then timed against the standard tools in the
# same run, interleaved:
#   nftables node:     dpscope snapshot --netns NS   vs  nft -j list ruleset
#                      (the default is complete: every rule's text, every set's elements;
#                      and dpscope snapshot --light: no anonymous or dynamic sets' elements)
#   iptables-nft node: dpscope snapshot --netns NS   vs  iptables-nft-save + ip6tables-nft-save
# plus the receive-only floor on the nftables node (the same dumps, messages only counted).
# Median wall time, peak RSS and user+sys CPU (/usr/bin/time) over BENCH_RUNS runs.
#
#   bench/kube_proxy_pair.sh [BUILD_DIR] [SIZE]      SIZE: 3000x8 (default) or 300x5
#   BENCH_RUNS=3 BENCH_UPSTREAM=../shared/upstream/real-kube-proxy BENCH_SIDES="nft ipt" (nft: the
#   nftables node only)
# Loading 3000x8 takes ~1 min per side. Needs root. Prints a Markdown table (also $BENCH_OUT,
# default bench/results-kube-proxy-pair.md).
set -eu
build=${1:-build}
size=${2:-3000x8}
runs=${BENCH_RUNS:-3}
here=$(cd "$(dirname "$0")/.." && pwd)
upstream=${BENCH_UPSTREAM:-$here/../shared/upstream/real-kube-proxy}
out=${BENCH_OUT:-bench/results-kube-proxy-pair.md}
dps=$(cd "$build" && pwd)/dpscope
sides=${BENCH_SIDES:-"nft ipt"}
want() { case " $sides " in *" $1 "*) return 0 ;; esac; return 1; }

[ "$(id -u)" = 0 ] || { echo "bench: needs root (network namespaces, nf_tables)" >&2; exit 2; }
[ -x "$dps" ] || { echo "bench: $dps not built (make build)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "bench: /usr/bin/time missing (apt-get install time)" >&2; exit 2; }
[ -d "$upstream/nftables-$size" ] && { ! want ipt || [ -d "$upstream/iptables-$size" ]; } ||
  { echo "bench: $upstream/{iptables,nftables}-$size not found (BENCH_UPSTREAM)" >&2; exit 2; }

work=$(mktemp -d /tmp/dps-bench.XXXXXX)
nft_ns=dps-bench-$$-nft
ipt_ns=dps-bench-$$-ipt
cleanup() {
  ip netns del "$nft_ns" 2>/dev/null || true
  ip netns del "$ipt_ns" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT INT TERM

# The files are stored compressed at 3000x8 and plain at 300x5.
unpack() {  # unpack DIR NAME -> stdout
  if [ -f "$1/$2.xz" ]; then xz -dc "$1/$2.xz"
  elif [ -f "$1/$2.gz" ]; then gzip -dc "$1/$2.gz"
  else cat "$1/$2"; fi
}

. "$here/bench/samples.sh"

samples() {  # samples LABEL: every wall time, in run order
  awk -v l="$1" '$1 == l { printf "%s%s", sep, $2; sep = " / " }' "$work/samples"
}

row() {  # row NODE TOOL_NAME TOOL_LABEL DPSCOPE_LABEL
  awk -v node="$1" -v name="$2" -v tw="$(median "$3" 2)" -v tr="$(median "$3" 3)" -v tc="$(median "$3" cpu)" \
      -v dw="$(median "$4" 2)" -v dr="$(median "$4" 3)" -v dc="$(median "$4" cpu)" \
      -v ts="$(samples "$3")" -v ds="$(samples "$4")" 'BEGIN {
    printf "| %s | %s %.2f s, %.0f MB, cpu %.2f s (%s) | %.2f s, %.0f MB, cpu %.2f s (%s) | **%.3f** | %.3f | %.3f |\n",
      node, name, tw, tr / 1024, tc, ts, dw, dr / 1024, dc, ds, dw / tw, dr / tr, dc / tc }' | tee -a "$work/table"
}

split() {  # split LABEL NAME: median wall, user CPU, kernel CPU, peak RSS of one command
  awk -v name="$2" -v w="$(median "$1" 2)" -v u="$(median "$1" 4)" -v k="$(median "$1" 5)" -v r="$(median "$1" 3)" \
    'BEGIN { printf "| %s | %.2f s | %.2f s | %.2f s | %.1f MB |\n", name, w, u, k, r / 1024 }' | tee -a "$work/split"
}

echo "bench: $(nproc) cores, kernel $(uname -r), runs=$runs, size $size; load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
ip netns add "$nft_ns"
want ipt && ip netns add "$ipt_ns"
# As kube-proxy left it: load-nft.sh drops the affinity sets' `size 65535` lines (loaded as
# printed, each pre-sizes a 2 MiB hash table: ~12 GB of kernel memory at 3000x8, and a GC worker
# that holds a core during the runs).
echo "bench: loading nftables-$size into $nft_ns (load-nft.sh: nft -f without size 65535)" >&2
unpack "$upstream/nftables-$size" nft-ruleset.txt >"$work/ruleset.nft"
ip netns exec "$nft_ns" "$here/fixtures/upstream/real-kube-proxy/load-nft.sh" "$work/ruleset.nft"
if want ipt; then
  echo "bench: loading iptables-$size into $ipt_ns (iptables-nft-restore, ip6tables-nft-restore)" >&2
  unpack "$upstream/iptables-$size" iptables-save.txt | ip netns exec "$ipt_ns" iptables-nft-restore
  unpack "$upstream/iptables-$size" ip6tables-save.txt | ip netns exec "$ipt_ns" ip6tables-nft-restore
fi

: >"$work/samples"
: >"$work/table"
i=0
while [ $i -lt "$runs" ]; do
  measure nft ip netns exec "$nft_ns" nft -j list ruleset
  measure dps_nft "$dps" snapshot --netns "$nft_ns" --no-ebpf --no-agents -q -o "$work/nft.json"
  measure dps_nft_light "$dps" snapshot --netns "$nft_ns" --no-ebpf --no-agents --light -q -o "$work/nft-light.json"
  measure floor1 "$dps" snapshot --netns "$nft_ns" --no-ebpf --no-agents -q --bench-receive-only --threads 1 -o "$work/floor.json"
  measure floorN "$dps" snapshot --netns "$nft_ns" --no-ebpf --no-agents -q --bench-receive-only -o "$work/floor.json"
  if want ipt; then
    measure ipt ip netns exec "$ipt_ns" sh -c 'iptables-nft-save && ip6tables-nft-save'
    measure dps_ipt "$dps" snapshot --netns "$ipt_ns" --no-ebpf --no-agents -q -o "$work/ipt.json"
  fi
  i=$((i + 1))
done

{
  echo "Generated $(date -u +%Y-%m-%dT%H:%MZ) by \`bench/kube_proxy_pair.sh $build $size\` (runs=$runs, $(nproc) cores,"
  echo "kernel $(uname -r), load at end $(cut -d' ' -f1-3 /proc/loadavg), real kube-proxy v1.30.3 $size pair)."
  echo
  echo "| node | standard tool (median wall, peak RSS, user+sys CPU; each run's wall) | dpscope snapshot (same) | time ratio | RSS ratio | CPU ratio |"
  echo "|---|---|---|---|---|---|"
} >"$out"
row "nftables mode (complete default)" '`nft -j list ruleset`' nft dps_nft
row "nftables mode, \`--light\`" '`nft -j list ruleset`' nft dps_nft_light
want ipt && row "iptables mode (nft backend)" '`iptables-nft-save` + `ip6tables-nft-save`' ipt dps_ipt
: >"$work/split"
split nft '`nft -j list ruleset`'
split dps_nft 'dpscope snapshot (complete default)'
split dps_nft_light 'dpscope snapshot --light'
split floorN 'receive-only floor (the same dumps, not decoded)'
{
  cat "$work/table"
  echo
  echo "nftables node, medians: where the time goes (user = the process's own CPU, kernel = its system time: the"
  echo "dumps, set lookups by name included)"
  echo
  echo "| command | wall | user CPU | kernel CPU | peak RSS |"
  echo "|---|---|---|---|---|"
  cat "$work/split"
  echo
  echo "Receive-only floor on the nftables node (\`--bench-receive-only\`): $(median floor1 2) s with one socket,"
  echo "$(median floorN 2) s with the default sockets (medians)."
} >>"$out"
echo
cat "$out"
