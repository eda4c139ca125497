// Fingerprints of the dataplanes a migration review meets besides kube-proxy,
// Cilium and Calico eBPF service maps: the chain, nftables-table and BPF
// object names each project's own sources create (each row names the release
// it was read from). Pure functions of the snapshot, like the rest of analysis.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "model/snapshot.h"

namespace dpscope::analysis {

// One name a dataplane creates. Kinds:
//   "chain"         an iptables chain, exact name or prefix ending in '*'
//   "nft-table"     a native nftables table, "FAMILY NAME"
//   "bpf-program"   a BPF program name prefix (kernel names are cut to 15 characters)
//   "bpf-map"       a BPF map name prefix
//   "bpf-pin"       a bpffs path prefix of a pinned program, map or link
//   "ipset"         an IP set name prefix (kube-router's IPv6 sets carry "inet6:" before it)
// Roles say what the object proves: "services" (the dataplane serves Services
// there), "policy" (network policy / CNI plumbing), "marker" (created in more
// than one mode, so evidence of the project but of no mode).
struct FingerprintRule {
  std::string_view dataplane;  // "kube-router", "calico", "antrea", "ovn-kubernetes", "aws-network-policy-agent"
  std::string_view kind;
  std::string_view value;
  std::string_view role;
  std::string_view source;     // project, release, file
};
const std::vector<FingerprintRule>& fingerprint_rules();

// What the snapshot shows of one dataplane.
struct Dataplane {
  std::string id;                        // as FingerprintRule::dataplane, Calico split: "calico-nftables",
                                         // "calico-ebpf" (pins/links), "calico" (markers only)
  std::string label;                     // "kube-router", "Calico nftables dataplane", ...
  std::vector<std::string> evidence;     // plain sentences, one per kind of object found
  uint64_t chains = 0;                   // iptables chains and native nftables chains it owns
  bool serves_services = false;          // evidence of role "services"
  // Where its Services live when dpscope cannot read them ("" when they are
  // visible or it serves none): "services handled by Antrea in OVS; not visible here".
  std::string services_hidden;
};

// Every dataplane with at least one fingerprint, in fingerprint_rules() order.
std::vector<Dataplane> detect_dataplanes(const model::Snapshot& s);
const Dataplane* find_dataplane(const std::vector<Dataplane>& v, std::string_view id);

// The owner of a native nftables table ("calico", "kube-router", "antrea",
// "ovn-kubernetes", "kube-proxy"), "" when no project is known to create it.
std::string nft_table_owner(const std::string& family, const std::string& name);

}  // namespace dpscope::analysis
