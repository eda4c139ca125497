#!/bin/sh
# A stand-in `kubectl` for the kubectl-dpscope tests: no cluster, just files.
# State lives in $FAKE_KUBECTL_DIR:
#   nodes                one node name per line (`get nodes -o name`)
#   snapshot.json        the snapshot dpscope writes in a pod (NODE replaced by the node name);
#                        the pod's file is it compressed as the file's name says (zstd, gzip)
#   node-file/NODE       (optional) NODE's snapshot as zstd: served as it is for a .zst
#                        file, recompressed for a .gz one
#   mode/NODE            how that node behaves (default: succeed):
#     debug-fails        kubectl debug itself fails (node not found)
#     image-pull         the pod waits forever with ErrImagePull
#     exit4              dpscope exits 4 with an error message, no file
#     incomplete         dpscope exits 3 after writing the snapshot
#     nothing            dpscope exits 5 after writing a snapshot of only unavailable sections
#     no-file            dpscope exits 0 but the file is missing
#     short-copy         `kubectl exec ... --cat` stops half way (a dropped connection)
#     corrupt-copy       one byte of the copy is changed (same size)
#     ends               the pod's container exits (an image without dpscope-once)
#     vanishes           the pod is gone right after creation (every get fails)
#   get-nodes-fails      (file) `get nodes` fails
#   intent.json          what `get services,endpointslices -A -o json` prints
#   contexts, namespaces one name per line (`config get-contexts -o name`, `get namespaces -o name`)
#   run_ms               how long a snapshot takes in a pod (default 200)
#   ds-pods              "POD NODE" lines: the DaemonSet's pods (`get pods -l ...`), whose
#                        file is /tmp/snapshot.json.zst. Modes for them: ok, exit4,
#                        incomplete, running (no snapshot yet), short-copy
# Container logs are kept as kubelet keeps them: rotated at 10 MiB
# (containerLogMaxSize), `kubectl logs` returns only the current file. A pod
# started the old way (`dpscope snapshot --host -o -`, the JSON on stdout)
# logs the plain JSON, so a large node's log loses its beginning.
# Written: calls.log (one line of arguments per call), pods/POD (live pods),
# max_live (most pods alive at once), deleted.log.
set -u
d=${FAKE_KUBECTL_DIR:?}
echo "$*" >>"$d/calls.log"

ONCE=/usr/local/bin/dpscope-once
LOG_MAX=10485760

now_ms() { echo $(($(date +%s%N) / 1000000)); }
lock() { while ! mkdir "$d/lock" 2>/dev/null; do sleep 0.01; done; }
unlock() { rmdir "$d/lock"; }

# The current log file of a container whose whole output is on stdin.
rotated() {
  cat >"$d/log.$$"
  size=$(wc -c <"$d/log.$$")
  if [ "$size" -gt "$LOG_MAX" ]; then
    tail -c +$(( (size - 1) / LOG_MAX * LOG_MAX + 1 )) "$d/log.$$"
  else
    cat "$d/log.$$"
  fi
  rm -f "$d/log.$$"
}

# pod_file NODE FILE: prints the path of the file NODE's pod wrote as FILE.
pod_file() {
  if [ -e "$d/node-file/$1" ] && [ "${2%.zst}" != "$2" ]; then
    echo "$d/node-file/$1"
    return
  fi
  mkdir -p "$d/files"
  f=$d/files/$1.$(basename "$2")
  if [ ! -e "$f" ]; then
    if [ -e "$d/node-file/$1" ]; then
      zstd -q -dc "$d/node-file/$1"
    else
      sed "s/NODE/$1/g" "$d/snapshot.json"
    fi | case $2 in
      *.zst) zstd -q -c ;;
      *.gz) gzip -c ;;
      *) cat ;;
    esac >"$f.tmp"
    mv "$f.tmp" "$f"
  fi
  echo "$f"
}

# The end of dpscope-once's log: "exited N; result FILE SIZE bytes".
end_line() {
  node=$1 code=$2 file=$3 mode=$4
  if [ "$mode" = exit4 ] || [ "$mode" = no-file ]; then
    echo "dpscope-once: /usr/local/bin/dpscope exited $code; result $file missing"
  else
    echo "dpscope-once: /usr/local/bin/dpscope exited $code; result $file $(wc -c <"$(pod_file "$node" "$file")" | tr -d ' ') bytes"
  fi
}

code_of() {
  case $1 in
    exit4) echo 4 ;;
    incomplete) echo 3 ;;
    nothing) echo 5 ;;
    *) echo 0 ;;
  esac
}

# Global flags come first (the plugin puts them there); they are only logged.
while [ $# -gt 0 ]; do
  case $1 in
    --kubeconfig | --context | --as | --request-timeout | --namespace | -n) shift 2 ;;
    *) break ;;
  esac
done

verb=${1:-}
shift || true
case $verb in
  get)
    what=$1
    shift
    if [ "$what" = services,endpointslices ]; then
      cat "$d/intent.json"  # the cluster's Services and EndpointSlices (kubectl get ... -A -o json)
      exit 0
    fi
    if [ "$what" = pods ]; then
      cat "$d/ds-pods"
      exit 0
    fi
    if [ "$what" = namespaces ]; then
      sed 's|^|namespace/|' "$d/namespaces"
      exit 0
    fi
    if [ "$what" = nodes ]; then
      if [ -e "$d/get-nodes-fails" ]; then
        echo "error: You must be logged in to the server (Unauthorized)" >&2
        exit 1
      fi
      sed 's|^|node/|' "$d/nodes"
      exit 0
    fi
    pod=$1
    [ -e "$d/pods/$pod" ] || { echo "Error from server (NotFound): pods \"$pod\" not found" >&2; exit 1; }
    node=$(sed -n 1p "$d/pods/$pod")
    started=$(sed -n 2p "$d/pods/$pod")
    kind=$(sed -n 4p "$d/pods/$pod")
    mode=$(cat "$d/mode/$node" 2>/dev/null || echo ok)
    run_ms=$(cat "$d/run_ms" 2>/dev/null || echo 200)
    if [ "$mode" = image-pull ]; then
      echo "Pending ErrImagePull"
    elif [ $(($(now_ms) - started)) -lt "$run_ms" ]; then
      echo "Running "
    elif [ "$kind" = legacy ] || [ "$mode" = ends ]; then
      echo "Succeeded 0"
    else
      echo "Running "  # dpscope-once keeps the container up
    fi
    ;;
  debug)
    target=$1
    node=${target#node/}
    case " $* " in
      *" --profile=sysadmin "*) ;;
      *) echo "fake kubectl: debug without --profile=sysadmin: $*" >&2; exit 1 ;;
    esac
    case " $* " in
      *" -- $ONCE --result /tmp/snapshot.json."*" /usr/local/bin/dpscope snapshot --host -o /tmp/snapshot.json."*)
        kind=once
        file=$(echo "$*" | sed -n 's/.* --result \([^ ]*\) .*/\1/p') ;;
      *" -- /usr/local/bin/dpscope snapshot --host -o - ") kind=legacy file=- ;;
      *) echo "fake kubectl: unexpected debug command: $*" >&2; exit 1 ;;
    esac
    mode=$(cat "$d/mode/$node" 2>/dev/null || echo ok)
    if [ "$mode" = debug-fails ]; then
      echo "error: nodes \"$node\" not found" >&2
      exit 1
    fi
    mkdir -p "$d/pods"
    pod="node-debugger-$node-$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')"
    if [ "$mode" = vanishes ]; then
      echo "Creating debugging pod $pod with container debugger on node $node."
      exit 0
    fi
    lock
    printf '%s\n%s\n%s\n%s\n' "$node" "$(now_ms)" "$file" "$kind" >"$d/pods/$pod"
    live=$(ls "$d/pods" | wc -l)
    max=$(cat "$d/max_live" 2>/dev/null || echo 0)
    [ "$live" -gt "$max" ] && echo "$live" >"$d/max_live"
    unlock
    echo "Creating debugging pod $pod with container debugger on node $node."
    ;;
  logs)
    pod=$1
    ds_node=$(awk -v p="$pod" '$1 == p { print $2 }' "$d/ds-pods" 2>/dev/null)
    if [ -n "$ds_node" ]; then
      [ "${2:-} ${3:-}" = "-c dpscope" ] || { echo "fake kubectl: logs of a DaemonSet pod without -c dpscope" >&2; exit 1; }
      mode=$(cat "$d/mode/$ds_node" 2>/dev/null || echo ok)
      {
        echo "dpscope: note: on node $ds_node"
        [ "$mode" = running ] && exit 0
        [ "$mode" = exit4 ] && echo "dpscope: internal error: boom on $ds_node"
        end_line "$ds_node" "$(code_of "$mode")" /tmp/snapshot.json.zst "$mode"
      } | rotated
      exit 0
    fi
    [ -e "$d/pods/$pod" ] || { echo "Error from server (NotFound): pods \"$pod\" not found" >&2; exit 1; }
    [ "${2:-} ${3:-}" = "-c debugger" ] || { echo "fake kubectl: logs of a debug pod without -c debugger" >&2; exit 1; }
    node=$(sed -n 1p "$d/pods/$pod")
    started=$(sed -n 2p "$d/pods/$pod")
    file=$(sed -n 3p "$d/pods/$pod")
    kind=$(sed -n 4p "$d/pods/$pod")
    mode=$(cat "$d/mode/$node" 2>/dev/null || echo ok)
    run_ms=$(cat "$d/run_ms" 2>/dev/null || echo 200)
    {
      echo "dpscope: kubectl-debug pod on node $node: entering /proc/1/ns/net"
      [ $(($(now_ms) - started)) -lt "$run_ms" ] && exit 0
      case $mode in
        exit4) echo "dpscope: internal error: boom on $node" ;;
        incomplete) echo "dpscope: snapshot incomplete: 1 section unavailable" ;;
        nothing) echo "dpscope: nothing could be read (netfilter, ebpf): EPERM: run as root" ;;
      esac
      if [ "$kind" = legacy ]; then
        # The old way: the snapshot itself on stdout, into the log.
        if [ -e "$d/node-file/$node" ]; then zstd -q -dc "$d/node-file/$node"; else sed "s/NODE/$node/g" "$d/snapshot.json"; fi
      elif [ "$mode" != ends ]; then
        end_line "$node" "$(code_of "$mode")" "$file" "$mode"
      fi
    } | rotated
    ;;
  exec)
    pod=$1
    ds_node=$(awk -v p="$pod" '$1 == p { print $2 }' "$d/ds-pods" 2>/dev/null)
    if [ -n "$ds_node" ]; then
      node=$ds_node container=dpscope
    else
      [ -e "$d/pods/$pod" ] || { echo "Error from server (NotFound): pods \"$pod\" not found" >&2; exit 1; }
      node=$(sed -n 1p "$d/pods/$pod") container=debugger
    fi
    [ "$2 $3 $4 $5 $6" = "-c $container -- $ONCE --cat" ] || { echo "fake kubectl: unexpected exec: $*" >&2; exit 1; }
    file=$7
    mode=$(cat "$d/mode/$node" 2>/dev/null || echo ok)
    case $mode in
      exit4 | no-file) echo "dpscope-once: $file: No such file or directory" >&2; echo "command terminated with exit code 1" >&2; exit 1 ;;
    esac
    f=$(pod_file "$node" "$file")
    size=$(wc -c <"$f" | tr -d ' ')
    case $mode in
      short-copy) head -c $((size / 2)) "$f" ;;
      corrupt-copy)
        half=$((size / 2))
        head -c "$half" "$f"
        byte=$(tail -c +$((half + 1)) "$f" | head -c 1 | od -An -tu1 | tr -d ' ')
        printf "\\$(printf '%03o' $(((byte + 1) % 256)))"
        tail -c +$((half + 2)) "$f" ;;
      *) cat "$f" ;;
    esac
    ;;
  config)
    [ "$*" = "get-contexts -o name" ] || { echo "fake kubectl: unexpected config: $*" >&2; exit 1; }
    cat "$d/contexts"
    ;;
  delete)
    pod=$2
    echo "$pod" >>"$d/deleted.log"
    rm -f "$d/pods/$pod"
    ;;
  *)
    echo "fake kubectl: unknown verb $verb" >&2
    exit 1
    ;;
esac
