# Guest program (busybox sh) of tests/integration/vm_netfilter_test.cpp: the
# live netfilter checks on Debian's 6.1 kernel. kube-proxy's own golden
# rulesets (fixtures/upstream, SOURCES.md) are loaded with the real tools --
# iptables mode with iptables-nft-restore, nftables mode with nft -f -- then
# the tools print the state and dpscope snapshots it; then a flowtable.
# Sections start with "=== NAME".
set -e
uname -r | sed 's/^/=== kernel /'
# kube-proxy's -m nfacct matches need their objects first.
nfacct add ct_state_invalid_dropped_pkts
nfacct add localhost_nps_accepted_pkts
iptables-nft-restore </files/overall-iptables-rules.saved-nft.txt
nft -f /files/overall-nftables-rules.listed-ruleset.nft
echo "=== iptables-save"
iptables-nft-save
echo "=== ip6tables-save"
ip6tables-nft-save
echo "=== nft -j"
nft -j list ruleset
echo
echo "=== snapshot"
dpscope snapshot --no-agents --no-ebpf -o - 2>/tmp/err || true
echo
echo "=== stderr"
cat /tmp/err
echo "=== iptables-save after"
iptables-nft-save
# A flowtable and the rule that offloads to it (nf_flow_table, which the
# kernel dpscope's other tests run on lacks): nft's listing, and dpscope's
# export of a live snapshot of the same state.
ip link add dps0 type dummy
ip link add dps1 type dummy
ip link add dps2 type dummy
nft flush ruleset
nft -f - <<'RULESET'
table inet dps-flow {
	flowtable f {
		hook ingress priority filter
		devices = { dps0, dps1 }
		counter
	}
	flowtable g {
		hook ingress priority filter + 10
		devices = { dps2 }
	}
	chain forward {
		type filter hook forward priority filter; policy accept;
		ip protocol { tcp, udp } flow add @f
		meta l4proto tcp flow add @g counter
		ct state established counter accept
	}
}
RULESET
echo "=== flowtable nft"
nft list ruleset
echo "=== flowtable export"
dpscope snapshot --no-agents --no-ebpf --rules -o /tmp/flow.json 2>/tmp/err
dpscope export /tmp/flow.json --format nft
echo "=== end"
