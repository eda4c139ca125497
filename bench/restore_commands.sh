#!/bin/sh
# Restore-command import (issue 18, case 4): `dpscope import --iptables-save`
# of iptables-restore input made of commands, at two sizes each, to show the
# growth is O(n log n) (doubling n about doubles the time) and not quadratic:
#   insert:  N x `-I INPUT 1 ...` (each rule lands first)
#   new+del: N x `-N CHAIN` then N x `-X CHAIN`
#   flush:   N x `-N CHAIN`, one rule each, then N x `-F CHAIN`
#   delete:  N x `-A INPUT ...`, then N/2 x `-D INPUT 1` and N/2 x
#            `-D INPUT rule-spec` (the last rule each time)
# With root, `iptables-restore --test` of the same text in a fresh network
# namespace (unshare -n) is the standard tool's figure.
# Median wall and peak RSS (/usr/bin/time -f '%e %M') over BENCH_RUNS runs.
#
#   bench/restore_commands.sh [BUILD_DIR]      BENCH_RUNS=3 BENCH_SIZES="20000 40000" BENCH_KINDS=delete
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
case $build in /*) ;; *) build=$root/$build ;; esac
dpscope=$build/dpscope
runs=${BENCH_RUNS:-3}
sizes=${BENCH_SIZES:-20000 40000 80000}
[ -x "$dpscope" ] || { echo "bench/restore_commands.sh: $dpscope not built (make build)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "bench/restore_commands.sh: needs /usr/bin/time" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/dps-bench-restore.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM

gen() {  # gen KIND N > file
  awk -v kind="$1" -v n="$2" 'BEGIN {
    print "*filter"; print ":INPUT ACCEPT [0:0]"
    if (kind == "insert") for (i = 0; i < n; i++) printf "-I INPUT 1 -s 10.%d.%d.%d/32 -m comment --comment \"r%d\" -j ACCEPT\n", i / 65536 % 256, i / 256 % 256, i % 256, i
    if (kind == "new+del") { for (i = 0; i < n; i++) printf "-N C%d\n", i; for (i = 0; i < n; i++) printf "-X C%d\n", i }
    if (kind == "flush") { for (i = 0; i < n; i++) printf "-N C%d\n-A C%d -j ACCEPT\n", i, i; for (i = 0; i < n; i++) printf "-F C%d\n", i }
    if (kind == "delete") {
      for (i = 0; i < n; i++) printf "-A INPUT -s 10.%d.%d.%d/32 -m comment --comment \"r%d\" -j ACCEPT\n", i / 65536 % 256, i / 256 % 256, i % 256, i
      for (i = 0; i < n / 2; i++) print "-D INPUT 1"
      for (i = n - 1; i >= n / 2; i--) printf "-D INPUT -s 10.%d.%d.%d/32 -m comment --comment \"r%d\" -j ACCEPT\n", i / 65536 % 256, i / 256 % 256, i % 256, i
    }
    print "COMMIT" }'
}

median_of() {
  : > "$work/t"
  i=0
  while [ "$i" -lt "$runs" ]; do
    /usr/bin/time -a -o "$work/t" -f '%e %M' "$@" > /dev/null 2>&1
    i=$((i + 1))
  done
  sort -n "$work/t" | awk -v n="$runs" '{ w[NR] = $1; if ($2 > m) m = $2 } END { printf "%s s, %d MB", w[int((n + 1) / 2)], m / 1024 }'
}

echo "| input | lines | dpscope import (median wall, peak RSS) | iptables-restore --test |"
echo "|---|---|---|---|"
for kind in ${BENCH_KINDS:-insert new+del flush delete}; do
  for n in $sizes; do
    gen "$kind" "$n" > "$work/in.txt"
    lines=$(wc -l < "$work/in.txt")
    ours=$(median_of "$dpscope" import --iptables-save "$work/in.txt" -o "$work/out.json")
    theirs="-"
    if [ "$(id -u)" = 0 ] && command -v iptables-restore >/dev/null; then
      theirs=$(median_of unshare -n sh -c "iptables-restore --test < '$work/in.txt'")
    fi
    echo "| $kind $n | $lines | $ours | $theirs |"
  done
done
