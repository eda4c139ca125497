// Service-map decoders: one file per project (cilium_lb.cpp, calico_nat.cpp).
// Each names the versions whose layout it reads and refuses a map whose type or
// key/value sizes don't match that layout (LbServices::decoded = false + note).
// They are pure functions of map metadata and contents, so unit tests feed them
// synthetic entries. Frontends and backends come in map order; model::canonicalize()
// puts a snapshot in canonical order.
#pragma once

#include <string>
#include <vector>

#include "decoders/map_entries.h"
#include "model/snapshot.h"

namespace dpscope::bpf {

// A map a decoder asked for, with the entries read from it.
struct DumpedMap {
  model::BpfMap meta;
  MapEntries entries;
};

// Maps of one dataplane instance share a pin directory (…/tc/globals); unpinned
// maps form one group keyed "". Returns that key.
std::string pin_group(const model::BpfMap& m);
// What LbServices::maps lists for a map: its pin path, else "name (id N)".
std::string map_label(const model::BpfMap& m);

namespace cilium {
inline constexpr const char* kLayout =
    "Cilium 1.16-1.20 (main 26d721f0): lb4/lb6 services_v2 (hash 12/12, 24/12), backends_v3 (hash 4/12, 4/24), "
    "reverse_nat (hash 2/6, 2/18)";
// True when the map may be one of Cilium's LB maps (by pin name or by the
// 15-character kernel name); the decoder checks type and sizes.
bool wants(const model::BpfMap& m);
std::vector<model::LbServices> decode(const std::vector<DumpedMap>& maps);
}  // namespace cilium

namespace calico {
inline constexpr const char* kLayout =
    "Calico felix NAT maps version 3 (projectcalico/calico 87c15906): cali_v4_nat_fe3 (lpm_trie 16/20), "
    "cali_v4_nat_be (hash 8/8), cali_v6_nat_fe3 (lpm_trie 40/20), cali_v6_nat_be (hash 8/20)";
bool wants(const model::BpfMap& m);
std::vector<model::LbServices> decode(const std::vector<DumpedMap>& maps);
}  // namespace calico

}  // namespace dpscope::bpf
