#include "model/snapshot.h"

#include <algorithm>
#include <functional>
#include <stdexcept>
#include <tuple>

namespace dpscope::model {

const char* to_string(Backend b) {
  switch (b) {
    case Backend::IptablesNft:
      return "iptables-nft";
    case Backend::IptablesLegacy:
      return "iptables-legacy";
    case Backend::Nftables:
      return "nftables";
  }
  return "?";
}

Backend backend_from_string(const std::string& s) {
  if (s == "iptables-nft") return Backend::IptablesNft;
  if (s == "iptables-legacy") return Backend::IptablesLegacy;
  if (s == "nftables") return Backend::Nftables;
  throw std::invalid_argument("unknown backend '" + s + "'");
}

namespace {

// Netfilter hook order, so base chains print in packet order as iptables-save does.
int hook_rank(const std::string& hook) {
  static const char* order[] = {"ingress", "prerouting", "input", "forward", "output", "postrouting", "egress"};
  for (int i = 0; i < 7; ++i) {
    if (hook == order[i]) return i;
  }
  return 7;
}

int family_rank(const std::string& f) {
  static const char* order[] = {"ip", "ip6", "inet", "arp", "bridge", "netdev"};
  for (int i = 0; i < 6; ++i) {
    if (f == order[i]) return i;
  }
  return 6;
}

}  // namespace

bool chain_order_less(const Chain& a, const Chain& b) {
  auto key = [](const Chain& c) {
    return std::make_tuple(c.base ? 0 : 1, c.base ? hook_rank(c.base->hook) : 0, c.base ? c.base->priority : 0,
                           std::cref(c.name));  // no copy per comparison
  };
  return key(a) < key(b);
}

bool table_order_less(const Table& a, const Table& b) {
  return std::make_tuple(static_cast<int>(a.backend), family_rank(a.family), std::cref(a.family), std::cref(a.name)) <
         std::make_tuple(static_cast<int>(b.backend), family_rank(b.family), std::cref(b.family), std::cref(b.name));
}

void canonicalize(Snapshot& s) {
  auto& tables = s.netfilter.tables;
  std::sort(tables.begin(), tables.end(), table_order_less);
  for (auto& t : tables) {
    if (!std::is_sorted(t.chains.begin(), t.chains.end(), chain_order_less)) {  // importers give them in order
      std::sort(t.chains.begin(), t.chains.end(), chain_order_less);
    }
    for (auto& c : t.chains) {
      auto by_position = [](const Rule& a, const Rule& b) { return a.position < b.position; };
      if (!std::is_sorted(c.rules.begin(), c.rules.end(), by_position)) {  // collectors give them in order
        std::stable_sort(c.rules.begin(), c.rules.end(), by_position);
      }
    }
    std::sort(t.sets.begin(), t.sets.end(), [](const NftSet& a, const NftSet& b) { return a.name < b.name; });
    for (auto& set : t.sets) {
      // A set read with its declaration is in the order nft lists it (the
      // live collector's), which export gives back: kept.
      if (set.declaration) continue;
      std::sort(set.elements.begin(), set.elements.end(), [](const SetElement& a, const SetElement& b) {
        return std::tie(a.key, a.value) < std::tie(b.key, b.value);
      });
    }
  }
  canonicalize(s.agents);
  canonicalize(s.ipsets);
  canonicalize(s.ipvs);
  auto by_id = [](const auto& a, const auto& b) { return a.id < b.id; };
  std::sort(s.ebpf.programs.begin(), s.ebpf.programs.end(), by_id);
  std::sort(s.ebpf.maps.begin(), s.ebpf.maps.end(), by_id);
  std::sort(s.ebpf.links.begin(), s.ebpf.links.end(), by_id);
  for (auto& p : s.ebpf.programs) std::sort(p.pinned.begin(), p.pinned.end());
  for (auto& m : s.ebpf.maps) std::sort(m.pinned.begin(), m.pinned.end());
  for (auto& l : s.ebpf.links) std::sort(l.pinned.begin(), l.pinned.end());
  std::sort(s.ebpf.attachments.begin(), s.ebpf.attachments.end(), [](const BpfAttachment& a, const BpfAttachment& b) {
    return std::tie(a.kind, a.target, a.direction, a.priority, a.handle, a.prog_id) <
           std::tie(b.kind, b.target, b.direction, b.priority, b.handle, b.prog_id);
  });
  std::sort(s.ebpf.services.begin(), s.ebpf.services.end(),
            [](const LbServices& a, const LbServices& b) {
              return std::tie(a.dataplane, a.maps) < std::tie(b.dataplane, b.maps);  // one per pin directory
            });
  for (auto& svc : s.ebpf.services) {
    std::sort(svc.frontends.begin(), svc.frontends.end(), [](const LbFrontend& a, const LbFrontend& b) {
      // scope: a Cilium two-scopes frontend has an external and an internal entry.
      return std::tie(a.address, a.port, a.protocol, a.type, a.scope) <
             std::tie(b.address, b.port, b.protocol, b.type, b.scope);
    });
    // Calico backends share their service's id: address and port break the tie.
    std::sort(svc.backends.begin(), svc.backends.end(), [](const LbBackend& a, const LbBackend& b) {
      return std::tie(a.id, a.address, a.port) < std::tie(b.id, b.address, b.port);
    });
  }
  std::sort(s.unavailable.begin(), s.unavailable.end(),
            [](const Unavailable& a, const Unavailable& b) { return a.section < b.section; });
}

void refresh_counts(Snapshot& s) {
  for (auto& t : s.netfilter.tables) {
    for (auto& c : t.chains) {
      if (c.rules_recorded) c.rule_count = c.rules.size();
    }
    for (auto& set : t.sets) {
      if (set.elements_recorded) set.element_count = set.elements.size();
    }
  }
}

template <typename S, typename T>
static T* find_table_impl(S& s, Backend b, const std::string& family, const std::string& name) {
  for (auto& t : s.netfilter.tables) {
    if (t.backend == b && t.family == family && t.name == name) return &t;
  }
  return nullptr;
}

Table* find_table(Snapshot& s, Backend b, const std::string& family, const std::string& name) {
  return find_table_impl<Snapshot, Table>(s, b, family, name);
}
const Table* find_table(const Snapshot& s, Backend b, const std::string& family, const std::string& name) {
  return find_table_impl<const Snapshot, const Table>(s, b, family, name);
}

Chain* find_chain(Table& t, const std::string& name) {
  for (auto& c : t.chains) {
    if (c.name == name) return &c;
  }
  return nullptr;
}
const Chain* find_chain(const Table& t, const std::string& name) {
  for (const auto& c : t.chains) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

bool is_unavailable(const Snapshot& s, const std::string& section) {
  return std::any_of(s.unavailable.begin(), s.unavailable.end(),
                     [&](const Unavailable& u) { return u.section == section; });
}

}  // namespace dpscope::model
