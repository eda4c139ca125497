#!/bin/sh
# What the agents section costs `dpscope snapshot`, against `ps` reading the same /proc.
#
#   bench/agents.sh [DPSCOPE_BINARY [AGENT_STUB [OTHER_PROCESSES [RUNS]]]]
#
# Starts 4 agent stand-ins (tests/support/agent_stub.c copied as kube-proxy, cilium-agent,
# calico-node, flanneld: 48/96/32/16 MiB) and OTHER_PROCESSES idle `sleep`s (a node's other
# processes, which the scan lists and skips), then times RUNS snapshots with and without the section
# (--no-agents), the agents phase itself (DPSCOPE_TIMING=1), and `ps -e -o pid,rss,nlwp,comm` plus a
# read of every agent's smaps_rollup and cgroup files (what the section reads, by the standard tools).
# Root, read-only except for its own processes; everything it starts is killed on exit.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
dpscope=${1:-$root/build/dpscope}
stub=${2:-$root/build/tests/dps_agent_stub}
others=${3:-500}
runs=${4:-20}
tmp=$(mktemp -d /tmp/dps-agents-bench.XXXXXX)
pids=""
cleanup() { for p in $pids; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT INT TERM
for spec in kube-proxy:48:4 cilium-agent:96:9 calico-node:32:2 flanneld:16:1; do
  name=${spec%%:*}; rest=${spec#*:}
  cp "$stub" "$tmp/$name"
  "$tmp/$name" "${rest%%:*}" "${rest#*:}" > "$tmp/$name.ready" &
  pids="$pids $!"
done
i=0
while [ "$i" -lt "$others" ]; do sleep 3600 & pids="$pids $!"; i=$((i + 1)); done
sleep 1
echo "processes in /proc: $(ls -d /proc/[0-9]* | wc -l)"

ms() { python3 -c "import sys; v=sorted(float(x) for x in sys.argv[1:]); print('%.1f ms median (%.1f-%.1f) over %d' % (1000*v[len(v)//2], 1000*v[0], 1000*v[-1], len(v)))" "$@"; }
timed() {  # runs "$@" $runs times, prints the median wall time
  t=""
  k=0
  while [ "$k" -lt "$runs" ]; do
    s=$(date +%s.%N); "$@" > /dev/null 2>&1 || true; e=$(date +%s.%N)
    t="$t $(echo "$e - $s" | bc)"; k=$((k + 1))
  done
  ms $t
}
echo "dpscope snapshot --no-ebpf:              $(timed "$dpscope" snapshot -q --no-ebpf -o "$tmp/s.json")"
echo "dpscope snapshot --no-ebpf --no-agents:  $(timed "$dpscope" snapshot -q --no-ebpf --no-agents -o "$tmp/s.json")"
phases=""
k=0
while [ "$k" -lt "$runs" ]; do
  p=$(DPSCOPE_TIMING=1 "$dpscope" snapshot -q --no-ebpf -o "$tmp/s.json" 2>&1 | sed -n 's/^dpscope: timing: agents \([0-9.e-]*\) s.*/\1/p')
  phases="$phases $p"; k=$((k + 1))
done
echo "  agents phase alone:                    $(ms $phases)"
agent_pids=$(pgrep -d ' ' -x 'kube-proxy|cilium-agent|calico-node|flanneld' || true)
standard() {
  ps -e -o pid,rss,nlwp,comm > /dev/null
  for p in $agent_pids; do cat "/proc/$p/smaps_rollup" "/proc/$p/cgroup" > /dev/null; done
}
echo "ps -e -o pid,rss,nlwp,comm + smaps_rollup/cgroup of the agents: $(timed standard)"
python3 -c "import json,sys; a=json.load(open(sys.argv[1]))['agents']; print('agents found:', len(a['processes']), 'in', len(a['cgroups']), 'cgroups')" "$tmp/s.json"
