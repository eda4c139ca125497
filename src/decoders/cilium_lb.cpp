// Cilium's load-balancer maps, as written by the agent (pkg/loadbalancer) and
// read by the datapath (bpf/lib/lb.h). Layouts: Cilium 1.16 to 1.20-dev (main at
// 26d721f0fe1a); see ../shared/cilium-calico-maps.md §1.3. Byte order: address
// and ports network order, rev_nat_index stored swapped (network order),
// backend_slot / count / qcount / backend_id host order.
#include <arpa/inet.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>

#include "decoders/service_maps.h"

namespace dpscope::bpf {

std::string pin_group(const model::BpfMap& m) {
  if (m.pinned.empty()) return "";
  const std::string& p = *std::min_element(m.pinned.begin(), m.pinned.end());
  auto slash = p.rfind('/');
  return slash == std::string::npos ? "" : p.substr(0, slash);
}

std::string map_label(const model::BpfMap& m) {
  if (!m.pinned.empty()) return *std::min_element(m.pinned.begin(), m.pinned.end());
  return m.name + " (id " + std::to_string(m.id) + ")";
}

namespace cilium {
namespace {

enum class Role { Services4, Services6, Backends4, Backends6, RevNat4, RevNat6 };

struct RoleSpec {
  Role role;
  const char* full;     // pin name
  const char* legacy;   // older pin name with the same layout of the fields read ("" none)
  const char* cut;      // kernel name (15 characters)
  uint32_t key_size;
  uint32_t value_size;
};

constexpr RoleSpec kRoles[] = {
    {Role::Services4, "cilium_lb4_services_v2", "", "cilium_lb4_serv", 12, 12},
    {Role::Services6, "cilium_lb6_services_v2", "", "cilium_lb6_serv", 24, 12},
    // backends_v2 (Cilium <= 1.15) differs from v3 only after byte 8 (zone), which is not read.
    {Role::Backends4, "cilium_lb4_backends_v3", "cilium_lb4_backends_v2", "cilium_lb4_back", 4, 12},
    {Role::Backends6, "cilium_lb6_backends_v3", "cilium_lb6_backends_v2", "cilium_lb6_back", 4, 24},
    {Role::RevNat4, "cilium_lb4_reverse_nat", "", "cilium_lb4_reve", 2, 6},
    {Role::RevNat6, "cilium_lb6_reverse_nat", "", "cilium_lb6_reve", 2, 18},
};

std::string basename_of(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::optional<RoleSpec> role_of(const model::BpfMap& m) {
  if (!m.pinned.empty()) {
    // A pin name is exact; a pinned map under another name (reverse_sk, a
    // legacy v1 map kept for cleanup) is not a service map.
    for (const auto& path : m.pinned) {
      const std::string base = basename_of(path);
      for (const auto& r : kRoles) {
        if (base == r.full) return r;
        if (r.legacy[0] && base == r.legacy) {
          RoleSpec legacy = r;
          legacy.full = r.legacy;  // named after the map it is
          return legacy;
        }
      }
    }
    return std::nullopt;
  }
  for (const auto& r : kRoles) {
    if (m.name != r.cut) continue;
    // cilium_lb4_reve is also the cut name of lb4_reverse_sk (lru_hash 16/8).
    if ((r.role == Role::RevNat4 || r.role == Role::RevNat6) && !(m.type == "hash" && m.key_size == 2)) {
      return std::nullopt;
    }
    return r;
  }
  return std::nullopt;
}

uint16_t be16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return ntohs(v);
}
uint16_t host16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}
uint32_t host32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// Dotted quad without printf: a services map holds tens of thousands of them.
std::string address(const uint8_t* p, bool v6) {
  if (v6) {
    char buf[INET6_ADDRSTRLEN];
    inet_ntop(AF_INET6, p, buf, sizeof buf);
    return buf;
  }
  char buf[16];
  char* o = buf;
  for (int i = 0; i < 4; ++i) {
    unsigned v = p[i];
    if (v >= 100) *o++ = static_cast<char>('0' + v / 100);
    if (v >= 10) *o++ = static_cast<char>('0' + v / 10 % 10);
    *o++ = static_cast<char>('0' + v % 10);
    if (i < 3) *o++ = '.';
  }
  return std::string(buf, o);
}

bool is_zero(const uint8_t* p, size_t n) {
  return std::all_of(p, p + n, [](uint8_t b) { return b == 0; });
}

std::string protocol_name(uint8_t proto) {
  switch (proto) {
    case 0: return "any";
    case 6: return "tcp";
    case 17: return "udp";
    case 132: return "sctp";
    default: return std::to_string(proto);
  }
}

// pkg/loadbalancer ServiceFlags.SVCType(): the first matching bit wins, ClusterIP has none.
std::string service_type(uint8_t flags, uint8_t flags2) {
  if (flags & 0x01) return "ExternalIP";
  if (flags & 0x02) return "NodePort";
  if (flags & 0x20) return "LoadBalancer";
  if (flags & 0x08) return "HostPort";
  if (flags2 & 0x01) return "LocalRedirect";
  return "ClusterIP";
}

std::string backend_state(uint8_t flags) {
  switch (flags) {
    case 0: return "active";
    case 1: return "terminating";
    case 2: return "quarantined";
    case 3: return "maintenance";
    default: return "unknown(" + std::to_string(flags) + ")";
  }
}

struct SlotTally {
  uint64_t slot_entries = 0;
  uint64_t referenced = 0;
};

void decode_services(const DumpedMap& dm, bool v6, model::LbServices& out, SlotTally& tally) {
  const size_t alen = v6 ? 16 : 4;
  // The frontend key with its backend_slot zeroed: its master entry's key.
  auto master_key = [&](const uint8_t* k) {
    std::string key(reinterpret_cast<const char*>(k), dm.meta.key_size);
    key[alen + 2] = key[alen + 3] = 0;
    return key;
  };
  // Slot entries (backend_slot 1..count+qcount) hold the backend id of each slot.
  std::map<std::string, std::map<uint16_t, uint32_t>> slots;
  for (size_t i = 0; i < dm.entries.count; ++i) {
    const uint8_t* k = dm.entries.key(i);
    const uint16_t slot = host16(k + alen + 2);
    if (slot != 0) slots[master_key(k)][slot] = host32(dm.entries.value(i));
  }
  out.frontends.reserve(out.frontends.size() + dm.entries.count / 2);
  for (size_t i = 0; i < dm.entries.count; ++i) {
    const uint8_t* k = dm.entries.key(i);
    const uint8_t* v = dm.entries.value(i);
    const uint16_t dport = be16(k + alen);
    const uint16_t slot = host16(k + alen + 2);
    const uint8_t proto = k[alen + 4];
    const uint8_t scope = k[alen + 5];
    if (slot != 0) {
      ++tally.slot_entries;
      continue;
    }
    if (dport == 0 && proto == 0) {
      // LB-IPAM wildcard: drops unknown ports of a VIP, not a service.
      ++out.wildcard_skipped;
      continue;
    }
    const uint16_t count = host16(v + 4);
    const uint16_t qcount = host16(v + 10);
    const uint8_t flags = v[8];
    const uint8_t flags2 = v[9];
    model::LbFrontend f;
    f.address = address(k, v6);
    f.port = dport;
    f.protocol = protocol_name(proto);
    f.type = service_type(flags, flags2);
    f.scope = scope == 1 ? "internal" : "external";
    f.backends = static_cast<uint32_t>(count) + qcount;
    f.service_id = be16(v + 6);
    // NodePort/HostPort surrogate: the 0.0.0.0:port ([::]:port) frontend.
    f.surrogate = is_zero(k, alen);
    // bpf/lib/lb.h picks slot 1..count (then the quarantined ones): its backend ids, 0 where a slot is missing.
    f.backend_ids.assign(f.backends, 0);
    if (auto it = slots.find(master_key(k)); it != slots.end()) {
      for (const auto& [n, id] : it->second) {
        if (n <= f.backends) f.backend_ids[n - 1] = id;
      }
    }
    tally.referenced += f.backends;
    out.frontends.push_back(std::move(f));
  }
}

void decode_backends(const DumpedMap& dm, bool v6, model::LbServices& out) {
  const size_t alen = v6 ? 16 : 4;
  for (size_t i = 0; i < dm.entries.count; ++i) {
    const uint8_t* k = dm.entries.key(i);
    const uint8_t* v = dm.entries.value(i);
    model::LbBackend b;
    b.id = host32(k);
    b.address = address(v, v6);
    b.port = be16(v + alen);
    b.protocol = protocol_name(v[alen + 2]);
    b.state = backend_state(v[alen + 3]);
    out.backends.push_back(std::move(b));
  }
}

}  // namespace

bool wants(const model::BpfMap& m) { return role_of(m).has_value(); }

std::vector<model::LbServices> decode(const std::vector<DumpedMap>& maps) {
  std::map<std::string, std::vector<std::pair<RoleSpec, const DumpedMap*>>> groups;
  for (const auto& dm : maps) {
    if (auto r = role_of(dm.meta)) groups[pin_group(dm.meta)].push_back({*r, &dm});
  }
  std::vector<model::LbServices> result;
  for (const auto& [group, members] : groups) {
    const bool has_lb = std::any_of(members.begin(), members.end(), [](const auto& m) {
      return m.first.role != Role::RevNat4 && m.first.role != Role::RevNat6;
    });
    if (!has_lb) continue;
    model::LbServices s;
    s.dataplane = "cilium";
    s.layout = kLayout;
    s.backends_linked = true;
    std::map<Role, const DumpedMap*> by_role;
    std::vector<std::string> problems;
    for (const auto& [spec, dm] : members) {
      s.maps.push_back(map_label(dm->meta));
      const auto& m = dm->meta;
      if (m.type != "hash" || m.key_size != spec.key_size || m.value_size != spec.value_size) {
        problems.push_back(map_label(m) + " is " + m.type + " " + std::to_string(m.key_size) + "/" +
                           std::to_string(m.value_size) + ", not " + spec.full + " (hash " +
                           std::to_string(spec.key_size) + "/" + std::to_string(spec.value_size) + ")");
        continue;
      }
      if (by_role.count(spec.role)) {
        // backends_v2 left behind by an upgrade next to backends_v3: the datapath reads v3.
        const std::string other = map_label(by_role[spec.role]->meta);
        const bool this_is_legacy = std::string(spec.full).find("backends_v2") != std::string::npos;
        const bool other_is_legacy = other.find("backends_v2") != std::string::npos;
        if (this_is_legacy != other_is_legacy) {
          if (other_is_legacy) by_role[spec.role] = dm;
          continue;
        }
        problems.push_back("two maps look like " + std::string(spec.full) + ": " + other + " and " + map_label(m));
        continue;
      }
      if (!dm->entries.complete) {
        problems.push_back(map_label(m) + ": " + dm->entries.note);
        continue;
      }
      by_role[spec.role] = dm;
    }
    std::sort(s.maps.begin(), s.maps.end());
    if (!problems.empty()) {
      s.decoded = false;
      s.note = "not decoded (layout read: " + std::string(kLayout) + "): ";
      for (size_t i = 0; i < problems.size(); ++i) s.note += (i ? "; " : "") + problems[i];
      result.push_back(std::move(s));
      continue;
    }
    SlotTally tally;
    if (by_role.count(Role::Services4)) decode_services(*by_role[Role::Services4], false, s, tally);
    if (by_role.count(Role::Services6)) decode_services(*by_role[Role::Services6], true, s, tally);
    if (by_role.count(Role::Backends4)) decode_backends(*by_role[Role::Backends4], false, s);
    if (by_role.count(Role::Backends6)) decode_backends(*by_role[Role::Backends6], true, s);
    if (tally.referenced != tally.slot_entries) {
      // The agent writes slots before the master entry; a read in between sees this.
      s.note = std::to_string(tally.slot_entries) + " backend slot entries, but frontends reference " +
               std::to_string(tally.referenced) + " (map updated while read?)";
    }
    // Left in map order: model::canonicalize() sorts frontends and backends once for the snapshot.
    result.push_back(std::move(s));
  }
  return result;
}

}  // namespace cilium
}  // namespace dpscope::bpf
