// Migration gate: does a node match the dataplane it is supposed to run?
// Read-only; it only lists problems.
#pragma once

#include <string>
#include <vector>

#include "analysis/analysis.h"

namespace dpscope::analysis {

struct Problem {
  std::string id;       // stable: "stale-kube-proxy-iptables", "mixed-backends", "orphan-kube-proxy-nft-table",
                        // "double-programmed", "no-ebpf-service-map", "section-unavailable", ...
  std::string message;  // a plain sentence
};

// kube-proxy's objects left in one backend where it should be gone.
struct Leftovers {
  std::string backend;              // "iptables-nft", "iptables-legacy", "nftables"
  std::vector<std::string> names;   // chain names (iptables, each once over tables and families), or
                                    // tables ("ip kube-proxy") for nftables; sorted, all of them
};

// A cleanup its tool's authors document, as text to copy: dpscope runs nothing.
struct Cleanup {
  std::string command;  // "kube-proxy --cleanup"
  std::string source;   // who documents it, where, and what else it removes
};

struct CheckResult {
  std::string expect;                 // "kube-proxy-free" | "kube-proxy-iptables" | "kube-proxy-nftables"
  std::string node;
  std::string mode;                   // detected mode id
  std::vector<Problem> problems;
  std::vector<std::string> passed;    // what was checked and found right, as sentences
  std::vector<Leftovers> leftovers;   // per backend, when a problem is kube-proxy's objects left
  std::vector<Cleanup> cleanup;       // how to remove them
  bool ok() const { return problems.empty(); }
};

const std::vector<std::string>& check_expectations();

// Throws std::invalid_argument for an unknown expectation.
CheckResult check(const model::Snapshot& s, const std::string& expect);

// Service addresses programmed by two or more of netfilter (iptables
// service-IP rules, nft service-ips elements), an eBPF service map and IPVS
// virtual services, sorted: "10.96.0.1 (IPVS + eBPF)".
std::vector<std::string> double_programmed(const model::Snapshot& s);

}  // namespace dpscope::analysis
