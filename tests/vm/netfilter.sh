# Guest program (busybox sh) of tests/integration/vm_netfilter_test.cpp: the
# live netfilter checks on Debian's 6.1 kernel. kube-proxy's own golden
# rulesets (fixtures/upstream, SOURCES.md) are loaded with the real tools --
# iptables mode with iptables-nft-restore, nftables mode with nft -f -- then
# the tools print the state and dpscope snapshots it. Sections start with "=== NAME".
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
echo "=== end"
