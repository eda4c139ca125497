#!/bin/sh
# Runs the libFuzzer targets built in FUZZ_BUILD (make fuzz / make test), one at a time,
# in-process (one job; -jobs=N would write fuzz-N.log files into the current directory).
#   run.sh FUZZ_BUILD regress        each target: its corpus, then 500 fixed-seed runs (seconds; make test)
#   run.sh FUZZ_BUILD long SECONDS   each target for SECONDS, one after the other (make fuzz)
#   run.sh FUZZ_BUILD long SECONDS TARGET   one target
# Seeds: tests/fuzz/seeds/TARGET (checked in) plus the fixtures listed below;
# the growing corpus is kept in FUZZ_BUILD/corpus/TARGET. A crash, timeout
# (> 1 s for one input) or OOM leaves FUZZ_BUILD/findings/TARGET/crash-* and
# fails the run; turn each into a unit regression test (tests/unit/hardening_test.cpp).
# FUZZ_TIMEOUT=S: seconds one input may take (long: 1, regress: 10).
# Prints one line per target: "fuzz TARGET: ok|FAILED, N execs, cov C, ft F".
set -u
build=${1:?usage: run.sh FUZZ_BUILD regress|long [SECONDS] [TARGET]}
mode=${2:-regress}
seconds=${3:-600}
only=${4:-}
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)

targets="iptables_save restore iptables_S nft_json bpftool_prog bpftool_map bpftool_net bpftool_map_dump snapshot intent ipset_save ipvsadm_save ipvsadm_list ip_addr"

# Fixture files that seed each target (in the repository, so a fresh clone has them).
fixtures() {
  f=$src/fixtures
  case $1 in
    iptables_save) echo "$f"/upstream/kube-proxy-iptables/*.saved-*.txt "$f"/upstream/cilium/*.saved-nft.txt \
                        "$f"/bad-input/*.iptables-save.* "$f"/scenarios/*.iptables-save.txt ;;
    restore) echo "$f"/upstream/kube-proxy-iptables/syncrepeated-final-fullresync-with-X.saved-nft.txt ;;
    iptables_S) echo "$f"/upstream/cilium/*.iptables-S.txt "$f"/bad-input/*iptables-S* ;;
    nft_json) echo "$f"/upstream/kube-proxy-nftables/*.json "$f"/upstream/kube-proxy-iptables/*.json "$f"/bad-input/*.nft.json ;;
    bpftool_prog) echo "$f"/upstream/bpftool/*prog_show.json ;;
    bpftool_map) echo "$f"/upstream/bpftool/*map_show.json ;;
    bpftool_net) echo "$f"/upstream/bpftool/*net_show.json ;;
    bpftool_map_dump) echo "" ;;
    intent) echo "$f"/upstream/kube-proxy-intent/*.intent.json ;;
    ipset_save) echo "$f"/upstream/dataplanes/*.ipset-save.txt "$f"/bad-input/*ipset* ;;
    ipvsadm_save) echo "$f"/ipvs/services.ipvsadm-rules "$f"/ipvs/debian-6.1/ipvsadm-save-n.txt ;;
    ipvsadm_list) echo "$f"/upstream/ipvs/*.txt "$f"/ipvs/debian-6.1/ipvsadm-Ln.txt ;;
    ip_addr) echo "$f"/ipvs/debian-6.1/ip-o-addr.txt ;;
    snapshot) for x in "$f"/snapshots/clusters/*/*.json; do [ "$(wc -c < "$x")" -le 65536 ] && echo "$x"; done ;;
  esac
}

dict() {
  case $1 in
    iptables_save|restore|iptables_S) cat "$here/dict/iptables.dict" ;;
    nft_json) cat "$here/dict/json.dict" "$here/dict/nft_json.dict" ;;
    bpftool_*) cat "$here/dict/json.dict" "$here/dict/bpftool.dict" ;;
    snapshot) cat "$here/dict/json.dict" "$here/dict/snapshot.dict" ;;
    intent) cat "$here/dict/json.dict" "$here/dict/intent.dict" ;;
    ipset_save) cat "$here/dict/ipset.dict" ;;
    ipvsadm_*|ip_addr) cat "$here/dict/ipvs.dict" ;;
  esac
}

status=0
for t in $targets; do
  [ -n "$only" ] && [ "$only" != "$t" ] && continue
  bin=$build/tests/fuzz/fuzz_$t
  if [ ! -x "$bin" ]; then
    echo "fuzz $t: FAILED, not built ($bin)"
    status=1
    continue
  fi
  work=$build/fuzz-work/$t
  corpus=$build/corpus/$t
  findings=$build/findings/$t
  rm -rf "$work"
  mkdir -p "$work/seeds" "$corpus" "$findings"
  [ -d "$here/seeds/$t" ] && cp "$here/seeds/$t"/* "$work/seeds/" 2>/dev/null
  for file in $(fixtures "$t"); do [ -f "$file" ] && cp "$file" "$work/seeds/"; done
  dict "$t" >"$work/dict"
  if [ "$mode" = long ]; then
    timeout=${FUZZ_TIMEOUT:-1}
    budget="-max_total_time=$seconds"
    dirs="$corpus $work/seeds"
  else
    # A fixed number of runs from a fixed seed over the corpus: a regression
    # check of seconds, not a timed test. New inputs go to a scratch dir.
    mkdir -p "$work/new"
    # 10 s, not 1: on a loaded machine one input can stall past a second of
    # wall time (seen: 21 ms inputs reported as timeouts at load 14).
    timeout=${FUZZ_TIMEOUT:-10}
    budget="-runs=500 -seed=1"
    dirs="$work/new $work/seeds"
    [ -d "$here/regressions/$t" ] && dirs="$dirs $here/regressions/$t"
  fi
  # shellcheck disable=SC2086
  "$bin" $budget -timeout="$timeout" -rss_limit_mb=2048 -max_len=65536 -dict="$work/dict" \
    -artifact_prefix="$findings/" -print_final_stats=1 $dirs >"$work/log" 2>&1
  rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log" | tail -n1)
  cov=$(grep -oE 'cov: [0-9]+' "$work/log" | tail -n1 | cut -d' ' -f2)
  ft=$(grep -oE 'ft: [0-9]+' "$work/log" | tail -n1 | cut -d' ' -f2)
  if [ "$rc" = 0 ]; then
    echo "fuzz $t: ok, ${execs:-?} execs, cov ${cov:-?}, ft ${ft:-?}"
  else
    echo "fuzz $t: FAILED (exit $rc), ${execs:-?} execs; log $work/log:"
    grep -E 'ERROR|SUMMARY|Test unit written|runtime error|uncaught' "$work/log" | head -n 12 | sed 's/^/   /'
    status=1
  fi
done
exit $status
