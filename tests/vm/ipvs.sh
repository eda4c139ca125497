# Guest program (busybox sh) of tests/integration/vm_ipvs_test.cpp, run with
# ip_vs and its schedulers insmod'ed: kube-proxy's IPVS layout -- the
# kube-ipvs0 dummy interface holding the VIPs, the virtual services of
# /files/services.ipvsadm-rules -- then what ipvsadm and ip print about it and
# dpscope's snapshot of the same state. Sections start with "=== NAME".
set -e
# busybox sh prefers its own applets to $PATH: iproute2's ip by its path.
ip=/usr/sbin/ip
uname -r | sed 's/^/=== kernel /'
$ip link add kube-ipvs0 type dummy
for vip in 10.0.0.1 10.0.0.10 10.0.0.20; do $ip addr add $vip/32 dev kube-ipvs0; done
$ip addr add fd00:10:96::a/128 dev kube-ipvs0 nodad
ipvsadm -R </files/services.ipvsadm-rules
echo "=== save"
# ipvsadm-save is a #!/bin/bash wrapper around "ipvsadm -S"; busybox sh runs it.
sh "$(command -v ipvsadm-save)" -n
echo "=== list"
ipvsadm -Ln
echo "=== addr"
$ip -o addr show dev kube-ipvs0
echo "=== snapshot"
dpscope snapshot --no-agents -o - 2>/tmp/err || true
echo
echo "=== stderr"
cat /tmp/err
echo "=== save after"
ipvsadm -S -n
echo "=== modules"
cut -d' ' -f1 /proc/modules | sort
echo "=== end"
