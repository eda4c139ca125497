#!/bin/sh
# A simulated `kubectl debug node/NAME --profile=sysadmin` pod, for
# host_pod_test.cpp. Run it inside `unshare --mount --propagation private` so
# every mount below disappears with it.
#
#   host_pod.sh POD_ROOT HOST_ROOT NETNS UTS_NAME [dpscope arguments...]
#
# The "node": HOST_ROOT (etc/hostname, its own bpffs at sys/fs/bpf, /usr bound
# read-only so its init can run `sleep`; with DPS_PIN_MAP=NAME a map pinned
# there as NAME) and an init process that is PID 1 of a
# new PID namespace, chrooted into HOST_ROOT, in the network namespace NETNS
# (playing the node's) and in its own UTS namespace named UTS_NAME.
# The "pod": POD_ROOT (the dpscope bundle, i.e. the image) with the node's root
# bound recursively at /host, its own mount and network namespaces, the node's
# PID namespace (/proc mounted from inside it). dpscope runs there; its stdout
# is this script's stdout, everything else goes to stderr.
set -eu
pod=$1 host=$2 netns=$3 uts=$4
shift 4

mount -t bpf bpf "$host/sys/fs/bpf"
# A BPF map pinned on the node (freed with this bpffs when the namespaces go).
if [ -n "${DPS_PIN_MAP:-}" ]; then
  bpftool map create "$host/sys/fs/bpf/$DPS_PIN_MAP" type hash key 4 value 4 entries 8 name "$DPS_PIN_MAP" >&2
fi
mount --bind /usr "$host/usr"
mount -o remount,bind,ro "$host/usr"

# The node's init. `ip netns exec` puts it in NETNS; unshare --fork makes its
# child PID 1 of a new PID namespace (and kills it when unshare dies).
ip netns exec "$netns" unshare --pid --fork --kill-child --uts \
  /bin/sh -c 'hostname "$1" && exec chroot "$2" /usr/bin/sleep 60' init "$uts" "$host" </dev/null >/dev/null 2>&1 &
outer=$!
init=""
# Killing PID 1 of the PID namespace ends everything in it.
trap '[ -z "$init" ] || kill -9 "$init" 2>/dev/null; kill "$outer" 2>/dev/null; wait "$outer" 2>/dev/null || true' EXIT

# Its host-side PID, once it runs `sleep` inside the node root.
for _ in $(seq 1 200); do
  init=$(pgrep -P "$outer" || true)
  if [ -n "$init" ] && [ "$(cat "/proc/$init/comm" 2>/dev/null)" = sleep ]; then break; fi
  init=""
  sleep 0.05
done
[ -n "$init" ] || { echo "host_pod.sh: the node's init did not start" >&2; exit 90; }

# The pod: in the init's PID namespace, in new mount and network namespaces.
nsenter --target "$init" --pid -- unshare --mount --net /bin/sh -c '
  set -eu
  pod=$1 host=$2
  shift 2
  mount -t proc proc "$pod/proc"
  mount --rbind /sys "$pod/sys"
  mount --rbind "$host" "$pod/host"
  exec env -u NODE_NAME chroot "$pod" /usr/local/bin/dpscope "$@"
' pod "$pod" "$host" "$@"
