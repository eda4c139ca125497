# Guest program (busybox sh) of tests/integration/vm_kernel_test.cpp: two hash
# maps of the same shape, one preallocated, one BPF_F_NO_PREALLOC (flags 1);
# bpftool's view before and after 200 entries go into the second. Then the
# build's Cilium- and Calico-shaped BPF objects (fixtures/bpf) loaded with
# bpftool prog loadall, bpftool's listing of every program and map, and
# dpscope's snapshot of the same state. Sections start with "=== NAME".
set -e
uname -r | sed 's/^/=== kernel /'
bpftool map create /sys/fs/bpf/dps_vm_pre type hash key 4 value 8 entries 4096 name dps_vm_pre
bpftool map create /sys/fs/bpf/dps_vm_np type hash key 4 value 8 entries 4096 name dps_vm_np flags 1
echo "=== before"
bpftool -j map show
echo
i=0
while [ $i -lt 200 ]; do
  bpftool map update pinned /sys/fs/bpf/dps_vm_np key $((i % 256)) $((i / 256)) 0 0 value 0 0 0 0 0 0 0 0
  i=$((i + 1))
done
echo "=== after"
bpftool -j map show
echo
for o in cilium_node calico_node; do
  mkdir -p /sys/fs/bpf/dps_vm_$o
  # Maps marked LIBBPF_PIN_BY_NAME are pinned by libbpf under /sys/fs/bpf.
  bpftool prog loadall /files/$o.o /sys/fs/bpf/dps_vm_$o
done
echo "=== progs"
bpftool -j -f prog show
echo
echo "=== maps"
bpftool -j -f map show
echo
echo "=== snapshot"
dpscope snapshot --no-agents -o - 2>/tmp/err || true
echo
echo "=== stderr"
cat /tmp/err
echo "=== end"
