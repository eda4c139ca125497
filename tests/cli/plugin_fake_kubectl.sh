#!/bin/sh
# A stand-in `kubectl` for the kubectl-dpscope tests: no cluster, just files.
# State lives in $FAKE_KUBECTL_DIR:
#   nodes                one node name per line (`get nodes -o name`)
#   snapshot.json        what dpscope prints on stdout in a pod (NODE replaced by the node name)
#   mode/NODE            how that node behaves (default: succeed):
#     debug-fails        kubectl debug itself fails (node not found)
#     image-pull         the pod waits forever with ErrImagePull
#     exit4              dpscope exits 4 with an error message, no JSON
#     incomplete         dpscope exits 3 after printing the snapshot
#     no-json            dpscope exits 0 but prints no JSON
#     interleaved        a stderr line lands inside the JSON in the log
#     vanishes           the pod is gone right after creation (every get fails)
#   get-nodes-fails      (file) `get nodes` fails
#   run_ms               how long a pod "runs" (default 200)
#   ds-pods              "POD NODE" lines: the DaemonSet's pods (`get pods -l ...`); their
#                        logs end with dpscope-once's "exited N" line. Modes for them:
#                        ok, exit4, incomplete, running (no snapshot yet), truncated
#                        (the log lost the JSON's end, as after log rotation)
# Written: calls.log (one line of arguments per call), pods/POD (live pods),
# max_live (most pods alive at once), deleted.log.
set -u
d=${FAKE_KUBECTL_DIR:?}
echo "$*" >>"$d/calls.log"

now_ms() { echo $(($(date +%s%N) / 1000000)); }
lock() { while ! mkdir "$d/lock" 2>/dev/null; do sleep 0.01; done; }
unlock() { rmdir "$d/lock"; }

# Global flags come first (the plugin puts them there); they are only logged.
while [ $# -gt 0 ]; do
  case $1 in
    --context | --namespace | -n) shift 2 ;;
    *) break ;;
  esac
done

verb=${1:-}
shift || true
case $verb in
  get)
    what=$1
    shift
    if [ "$what" = pods ]; then
      cat "$d/ds-pods"
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
    mode=$(cat "$d/mode/$node" 2>/dev/null || echo ok)
    run_ms=$(cat "$d/run_ms" 2>/dev/null || echo 200)
    if [ "$mode" = image-pull ]; then
      echo "Pending ErrImagePull"
    elif [ $(($(now_ms) - started)) -lt "$run_ms" ]; then
      echo "Running "
    else
      case $mode in
        exit4) echo "Failed 4" ;;
        incomplete) echo "Failed 3" ;;
        *) echo "Succeeded 0" ;;
      esac
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
      *" -- /usr/local/bin/dpscope snapshot --host -o - ") ;;
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
    printf '%s\n%s\n' "$node" "$(now_ms)" >"$d/pods/$pod"
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
      echo "dpscope: note: on node $ds_node"
      case $mode in
        running) exit 0 ;;
        exit4) echo "dpscope: internal error: boom on $ds_node"; code=4 ;;
        truncated) sed "s/NODE/$ds_node/g" "$d/snapshot.json" | head -n 3; code=0 ;;
        incomplete) sed "s/NODE/$ds_node/g" "$d/snapshot.json"; code=3 ;;
        *) sed "s/NODE/$ds_node/g" "$d/snapshot.json"; code=0 ;;
      esac
      echo "dpscope-once: /usr/local/bin/dpscope exited $code"
      exit 0
    fi
    [ -e "$d/pods/$pod" ] || { echo "Error from server (NotFound): pods \"$pod\" not found" >&2; exit 1; }
    node=$(sed -n 1p "$d/pods/$pod")
    mode=$(cat "$d/mode/$node" 2>/dev/null || echo ok)
    echo "dpscope: kubectl-debug pod on node $node: entering /proc/1/ns/net"
    case $mode in
      exit4) echo "dpscope: internal error: boom on $node" ;;
      no-json) ;;
      interleaved)
        sed "s/NODE/$node/g" "$d/snapshot.json" | awk 'NR == 3 { print "hint: run as root" } { print }' ;;
      *) sed "s/NODE/$node/g" "$d/snapshot.json" ;;
    esac
    if [ "$mode" = incomplete ]; then echo "dpscope: snapshot incomplete: 1 section unavailable"; fi
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
