// Where is one service address programmed on a node? Every rule, nft map
// element and eBPF LB entry that names it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/snapshot.h"

namespace dpscope::analysis {

struct AddressQuery {
  std::string address;            // "10.96.0.1", "fd00::1"
  std::optional<uint16_t> port;   // only entries for this port (entries without a port still match)
  std::string protocol;           // "tcp", "udp", "sctp"; "" = any (entries without one still match)
};

// "10.96.0.1", "10.96.0.1:443", "[fd00::1]:443", "fd00::1", and with a
// protocol as where prints its places: "10.96.0.1:443/tcp", "[fd00::1]:53/udp".
// Throws std::invalid_argument on anything else.
AddressQuery parse_address_query(const std::string& text);

struct Place {
  std::string dataplane;   // "iptables-nft", "iptables-legacy", "nftables", "cilium", "calico", "ipset", "ipvs"
  std::string where;       // "ip nat KUBE-SERVICES #3", "map service-ips", "frontend", "backend"
  std::string field;       // "destination", "source", "DNAT target", "map key", "map value", "set element", "frontend", "backend",
                           // "virtual service", "real server", "interface address" (IPVS)
  std::string detail;      // the rule / element / entry in short
  // The same place as separate fields (JSON): table "ip nat", chain "KUBE-SERVICES",
  // position 3; set "service-ips" for a map element; empty / 0 where not applicable.
  std::string table;
  std::string chain;
  uint32_t position = 0;
  std::string set;
};

// An nft set or map element whose key names the address without a port is
// resolved through the rules of its table that use the set (`@name`): with a
// port asked, it is a place only when one of them takes that port (`tcp dport
// 8080` does not take 9999); the rules are named in its detail.
std::vector<Place> find_address(const model::Snapshot& s, const AddressQuery& q);

// Where find_address could not look in a snapshot: sections not read, chains
// whose rules were counted but not recorded, sets without their elements.
// "programmed nowhere" only holds for the rest.
std::vector<std::string> not_searched(const model::Snapshot& s);

}  // namespace dpscope::analysis
