#!/bin/sh
# The README's demo excerpt, made from the real output: the report's header and its
# first three sections, as `make demo` prints them on a pipe (100 columns).
#   scripts/readme-demo.sh           print the excerpt (tests/cli/first_use_test.cpp
#                                    compares it with README.md's)
#   scripts/readme-demo.sh --write   put it into README.md between its demo-excerpt markers
# DPSCOPE names the binary (default build/dpscope).
set -eu
cd "$(dirname "$0")/.."
bin=${DPSCOPE:-build/dpscope}

excerpt() {
  echo '$ make demo'
  "$bin" compare fixtures/snapshots/kind-kube-proxy.json fixtures/snapshots/kind-cilium-kpr.json |
    awk '/^[^ ]/ && NR > 1 { if (++titles > 3) exit }   # a section title starts at column 0
         /^$/ { blank++; next }                         # blank lines only between kept lines
         { while (blank > 0) { print ""; blank-- } print }'
}

if [ "${1:-}" = "--write" ]; then
  text=$(excerpt)
  tmp=$(mktemp README.md.XXXXXX)
  EXCERPT="$text" awk '
    /^<!-- demo-excerpt:begin/ { print; print "```"; print ENVIRON["EXCERPT"]; print "```"; skip = 1; next }
    /^<!-- demo-excerpt:end/ { skip = 0 }
    !skip { print }' README.md > "$tmp"
  chmod --reference=README.md "$tmp"
  mv "$tmp" README.md
else
  excerpt
fi
