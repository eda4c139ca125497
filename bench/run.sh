#!/bin/sh
# `make bench`: dpscope snapshot against the standard tools on generated
# kube-proxy nodes (fixtures/scenarios/gen-kube-proxy.sh, N services x 5
# endpoints), each in its own dps-bench-* network namespace, in the same run:
#   iptables-nft:  dpscope snapshot --netns NS   vs  iptables-nft-save
#   legacy:        dpscope snapshot --netns NS   vs  iptables-legacy-save
#   nftables mode: dpscope snapshot --netns NS   vs  nft -j list ruleset
# plus the receive-only floor (the same per-chain nf_tables dumps, messages only
# counted): one socket (--threads 1) and the default sockets. Median wall time
# and peak RSS (/usr/bin/time -f '%e %M') over BENCH_RUNS interleaved runs.
#
#   bench/run.sh [BUILD_DIR]
#   BENCH_SIZES="1000 5000 20000" BENCH_NFT_SIZES="1000 5000" BENCH_RUNS=5 BENCH_ENDPOINTS=5 BENCH_BPF=1
#   BENCH_MODES="iptables-nft legacy nftables" (a subset runs only those)
# (loading 20k services takes minutes per backend, and iptables-nft-save 1.8.9
# alone takes minutes at 20k here: the whole run is ~30 min; BENCH_SIZES="1000 5000" for a quick one.)
# Needs root. Prints a Markdown table; also written to $BENCH_OUT (default bench/results.md).
set -eu
build=${1:-build}
sizes=${BENCH_SIZES:-"1000 5000 20000"}
nft_sizes=${BENCH_NFT_SIZES:-"1000 5000"}
runs=${BENCH_RUNS:-5}
endpoints=${BENCH_ENDPOINTS:-5}
out=${BENCH_OUT:-bench/results.md}
modes=${BENCH_MODES:-"iptables-nft legacy nftables"}
want() { case " $modes " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
here=$(cd "$(dirname "$0")/.." && pwd)
dps=$(cd "$build" && pwd)/dpscope
gen=$here/fixtures/scenarios/gen-kube-proxy.sh

[ "$(id -u)" = 0 ] || { echo "bench: needs root (network namespaces, nf_tables)" >&2; exit 2; }
[ -x "$dps" ] || { echo "bench: $dps not built (make build)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "bench: /usr/bin/time missing (apt-get install time)" >&2; exit 2; }

work=$(mktemp -d /tmp/dps-bench.XXXXXX)
namespaces=""
cleanup() {
  for ns in $namespaces; do ip netns del "$ns" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT INT TERM

# Sets $ns (not in a subshell, so the cleanup trap knows every namespace).
new_ns() {
  ns=dps-bench-$$-$1
  ip netns add "$ns"
  namespaces="$namespaces $ns"
}

. "$here/bench/samples.sh"

row() {  # row MODE SIZE TOOL_LABEL TOOL_NAME
  mode=$1 size=$2 tool=$3 name=$4
  tw=$(median "$tool" 2) tr=$(median "$tool" 3) tc=$(median "$tool" cpu)
  dw=$(median dpscope 2) dr=$(median dpscope 3) dc=$(median dpscope cpu)
  f1=$(median floor1 2) fn=$(median floorN 2)
  awk -v mode="$mode" -v size="$size" -v name="$name" -v tw="$tw" -v tr="$tr" -v dw="$dw" -v dr="$dr" \
      -v tc="$tc" -v dc="$dc" -v f1="$f1" -v fn="$fn" -v runs="$runs" 'BEGIN {
    printf "| %s | %d | %d | `%s` %.2f s, %.0f MB, cpu %.2f s | %.2f s, %.0f MB, cpu %.2f s | %.2f | %.2f | %.2f | %s | %s |\n",
      mode, size, runs, name, tw, tr / 1024, tc, dw, dr / 1024, dc, dw / tw, dr / tr, (tc > 0 ? dc / tc : 0),
      (f1 == "-" ? "-" : sprintf("%.2f s", f1)), (fn == "-" ? "-" : sprintf("%.2f s", fn)) }' | tee -a "$work/table"
}

bench_ns() {  # bench_ns MODE SIZE NS TOOL_NAME TOOL_CMD...
  mode=$1 size=$2 ns=$3 name=$4
  shift 4
  : >"$work/samples"
  snap="$work/snap.json"
  i=0
  while [ $i -lt "$runs" ]; do
    measure tool ip netns exec "$ns" "$@"
    measure dpscope "$dps" snapshot --netns "$ns" --no-ebpf -q -o "$snap"
    if [ "$mode" != legacy ]; then
      measure floor1 "$dps" snapshot --netns "$ns" --no-ebpf -q --bench-receive-only --threads 1 -o "$work/floor.json"
      measure floorN "$dps" snapshot --netns "$ns" --no-ebpf -q --bench-receive-only -o "$work/floor.json"
    fi
    i=$((i + 1))
  done
  rules=$(awk '/"rule_count"/ { gsub(/[^0-9]/, ""); s += $0 } END { print s }' "$snap")
  echo "   $mode $size: $rules rules in the snapshot" >&2
  row "$mode" "$size" tool "$name"
}

echo "bench: $(nproc) cores, kernel $(uname -r), runs=$runs, endpoints=$endpoints; load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
: >"$work/table"
for n in $sizes; do
  "$gen" iptables "$n" "$endpoints" >"$work/rules.ipt"
  if want iptables-nft; then
    new_ns "ipt$n"
    echo "bench: loading $n services into iptables-nft ($ns)" >&2
    ip netns exec "$ns" iptables-nft-restore <"$work/rules.ipt"
    bench_ns iptables-nft "$n" "$ns" iptables-save iptables-nft-save
    ip netns del "$ns"
  fi
  if want legacy; then
    new_ns "leg$n"
    echo "bench: loading $n services into iptables-legacy ($ns)" >&2
    ip netns exec "$ns" iptables-legacy-restore <"$work/rules.ipt"
    bench_ns legacy "$n" "$ns" iptables-legacy-save iptables-legacy-save
    ip netns del "$ns"
  fi
done
want nftables || nft_sizes=""
for n in $nft_sizes; do
  "$gen" nftables "$n" "$endpoints" >"$work/rules.nft"
  new_ns "nft$n"
  echo "bench: loading $n services into nftables ($ns)" >&2
  ip netns exec "$ns" nft -f "$work/rules.nft"
  bench_ns nftables "$n" "$ns" "nft -j list ruleset" nft -j list ruleset
  ip netns del "$ns"
done

{
  echo "Generated $(date -u +%Y-%m-%dT%H:%MZ) by \`bench/run.sh\` (runs=$runs, endpoints=$endpoints, $(nproc) cores, kernel $(uname -r))."
  echo
  echo "| mode | services | runs | standard tool (median wall, peak RSS, user+sys CPU) | dpscope snapshot (same) | time ratio | RSS ratio | CPU ratio | floor, 1 socket | floor, default sockets |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
  cat "$work/table"
} >"$out"
echo
cat "$out"

# The eBPF section's own benchmark (issue 4), when built: BENCH_BPF=0 skips it.
if [ "${BENCH_BPF:-1}" != 0 ] && [ -x "$here/bench/bpf_bench.sh" ]; then
  echo
  "$here/bench/bpf_bench.sh" "$build" || echo "bench: bpf_bench.sh exited $? (see above)" >&2
fi
