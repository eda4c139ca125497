#!/bin/sh
# Runs every test tier and ends with one line: "N passed, N failed, N skipped".
#   unit         ASan+UBSan build, no root needed
#   cli          the real binary on files
#   integration  real kernel state in dps-* namespaces; skips loudly without root
#   fuzz         each libFuzzer target's regression runs (FUZZ_BUILD)
#   packaging    the release artifacts built from BUILD and ARM64_BUILD and run
#                as a user runs them (tests/packaging/run.sh)
# usage: tests/run.sh [BUILD [ASAN_BUILD [FUZZ_BUILD [ARM64_BUILD]]]]
set -u
build=${1:-build}
asan=${2:-build-asan}
fuzz=${3:-}
arm64=${4:-}
logdir=$(mktemp -d /tmp/dpscope-tests.XXXXXX)
trap 'rm -rf "$logdir"' EXIT

passed=0 failed=0 skipped=0 status=0
run_tier() {
  tier=$1 bin=$2
  if [ ! -x "$bin" ]; then
    echo "== $tier: no tests built ($bin)"
    return
  fi
  echo "== $tier: $bin"
  "$bin" --gtest_brief=1 --gtest_output="json:$logdir/$tier.json" >"$logdir/$tier.log" 2>&1
  rc=$?
  # gtest's own summary lines are the source of the counts.
  p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) tests\{0,1\}\..*/\1/p' "$logdir/$tier.log" | tail -n1)
  # --gtest_brief prints no "N tests, listed below" line: count the failed tests' own lines.
  # (a parameterized test's line carries ", where GetParam() = ..." before its time)
  f=$(grep -E '^\[  FAILED  \] [^ ]+(, where GetParam\(\) = .*)? \([0-9]+ ms\)$' "$logdir/$tier.log" | sort -u | wc -l)
  # (--gtest_brief's summary: "[  SKIPPED ] N tests." with no list)
  s=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) tests\{0,1\}[.,].*/\1/p' "$logdir/$tier.log" | tail -n1)
  p=${p:-0} f=${f:-0} s=${s:-0}
  if [ "$rc" != 0 ] && [ "$f" = 0 ]; then
    f=1  # crashed or sanitizer abort before gtest could count
    echo "   $tier exited $rc without a gtest failure summary:"
  fi
  if [ "$rc" != 0 ] || [ "$f" != 0 ] || [ "$s" != 0 ]; then
    # A failure's own message follows its "Failure" line: two lines of it, cut to 300 characters.
    grep -E -A2 '^\[  (FAILED|SKIPPED) |Failure|SKIPPED:|ERROR|runtime error|Sanitizer' "$logdir/$tier.log" |
      grep -v '^\[ RUN' | cut -c1-300 | head -n 90 | sed 's/^/   /'
  fi
  [ "$rc" = 0 ] || status=1
  echo "   $tier: $p passed, $f failed, $s skipped"
  passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
}

if [ "$(id -u)" != 0 ]; then
  echo "NOTE: not root: integration tests that need kernel state will be SKIPPED"
fi
run_tier unit "$asan/tests/dpscope_unit_tests"
run_tier cli "$build/tests/dpscope_cli_tests"
run_tier integration "$build/tests/dpscope_integration_tests"

# fuzz: each libFuzzer target over its corpus plus 500 fixed-seed runs
# (tests/fuzz/run.sh regress); one test per target.
if [ -n "$fuzz" ]; then
  echo "== fuzz: $fuzz/tests/fuzz"
  "$(dirname "$0")/fuzz/run.sh" "$fuzz" regress >"$logdir/fuzz.log" 2>&1
  sed 's/^/   /' "$logdir/fuzz.log"
  p=$(grep -c ': ok,' "$logdir/fuzz.log")
  f=$(grep -c ': FAILED' "$logdir/fuzz.log")
  [ "$f" = 0 ] || status=1
  echo "   fuzz: $p passed, $f failed, 0 skipped"
  passed=$((passed + p)) failed=$((failed + f))
fi

# packaging: one test per artifact check (tests/packaging/run.sh says each).
if [ -n "$arm64" ]; then
  echo "== packaging: tests/packaging/run.sh $build $arm64"
  t0=$(date +%s)
  "$(dirname "$0")/packaging/run.sh" "$build" "$arm64" >"$logdir/packaging.log" 2>&1
  rc=$?
  grep '^   ' "$logdir/packaging.log"
  p=$(sed -n 's/^   packaging: \([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped$/\1/p' "$logdir/packaging.log")
  f=$(sed -n 's/^   packaging: \([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped$/\2/p' "$logdir/packaging.log")
  s=$(sed -n 's/^   packaging: \([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped$/\3/p' "$logdir/packaging.log")
  if [ -z "$p" ]; then
    echo "   packaging exited $rc without its summary:"; tail -n 20 "$logdir/packaging.log" | sed 's/^/   /'
    p=0 f=1 s=0
  fi
  [ "$rc" = 0 ] || status=1
  echo "   (packaging tier: $(($(date +%s) - t0)) s)"
  passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
fi

echo
echo "tests: $passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ] || status=1
exit $status
