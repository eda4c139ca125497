// Test support: loading a real kube-proxy nftables node's saved listing
// (fixtures/upstream/real-kube-proxy/nftables-*/nft-ruleset.txt.zst) into a
// dps-* namespace as kube-proxy left that state. The one way to do it is
// fixtures/upstream/real-kube-proxy/load-nft.sh (benchmarks use it too): it
// drops the affinity-* sets' `size 65535` lines, which loaded as printed
// pre-size each set's hash table (2 MiB of kernel memory a set).
#pragma once

#include <string>

#include "tests/support/kernel.h"
#include "tests/support/process.h"

namespace dpscope::test {

// The shell command that loads `fixture` (a path relative to the source
// tree, or absolute) with nft -f in the namespace it runs in.
inline std::string kube_proxy_nft_load(const std::string& fixture) {
  const std::string file = fixture.rfind('/', 0) == 0 ? fixture : source_path(fixture);
  return "'" + source_path("fixtures/upstream/real-kube-proxy/load-nft.sh") + "' '" + file + "'";
}

inline void load_kube_proxy_nft(const Netns& ns, const std::string& fixture) { ns.sh(kube_proxy_nft_load(fixture)); }

}  // namespace dpscope::test
