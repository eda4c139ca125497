// Calico eBPF dataplane NAT maps (felix/bpf/nat, felix/bpf-gpl/nat_types.h),
// map version 3 of the frontend map, read at projectcalico/calico 87c15906;
// see ../shared/cilium-calico-maps.md §2. Byte order: addresses network order,
// ports and the LPM prefix length host order.
#include <arpa/inet.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "decoders/service_maps.h"

namespace dpscope::bpf::calico {
namespace {

enum class Role { Frontends4, Frontends6, Backends4, Backends6 };

struct RoleSpec {
  Role role;
  const char* prefix;  // pin / kernel name prefix ("cali_v4_nat_fe3" is exactly 15 characters)
  const char* type;
  uint32_t key_size;
  uint32_t value_size;
};

constexpr RoleSpec kRoles[] = {
    {Role::Frontends4, "cali_v4_nat_fe", "lpm_trie", 16, 20},
    {Role::Frontends6, "cali_v6_nat_fe", "lpm_trie", 40, 20},
    {Role::Backends4, "cali_v4_nat_be", "hash", 8, 8},
    {Role::Backends6, "cali_v6_nat_be", "hash", 8, 20},
};

constexpr uint32_t kBlackhole = 0xffffffff;  // count: the service drops traffic

std::string basename_of(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::optional<RoleSpec> role_of(const model::BpfMap& m) {
  std::vector<std::string> names;
  for (const auto& p : m.pinned) names.push_back(basename_of(p));
  if (names.empty()) names.push_back(m.name);
  for (const auto& n : names) {
    for (const auto& r : kRoles) {
      if (n.rfind(r.prefix, 0) == 0) return r;
    }
  }
  return std::nullopt;
}

uint32_t host32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
uint16_t host16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}

std::string address(const uint8_t* p, bool v6) {
  char buf[INET6_ADDRSTRLEN];
  inet_ntop(v6 ? AF_INET6 : AF_INET, p, buf, sizeof buf);
  return buf;
}

std::string protocol_name(uint8_t proto) {
  switch (proto) {
    case 6: return "tcp";
    case 17: return "udp";
    case 132: return "sctp";
    default: return std::to_string(proto);
  }
}

// calico_nat_key: u32 prefixlen, addr, u16 port (host), u8 proto, saddr, pad.
void decode_frontends(const DumpedMap& dm, bool v6, model::LbServices& out, std::map<uint32_t, std::string>& proto_of) {
  const size_t alen = v6 ? 16 : 4;
  std::set<std::tuple<std::string, uint16_t, std::string>> seen;
  for (size_t i = 0; i < dm.entries.count; ++i) {
    const uint8_t* k = dm.entries.key(i);
    const uint8_t* v = dm.entries.value(i);
    model::LbFrontend f;
    f.address = address(k + 4, v6);
    f.port = host16(k + 4 + alen);
    f.protocol = protocol_name(k[4 + alen + 2]);
    // One entry per loadBalancerSourceRanges CIDR: the frontend is (addr, port, proto).
    if (!seen.emplace(f.address, f.port, f.protocol).second) continue;
    f.service_id = host32(v);
    const uint32_t count = host32(v + 4);
    f.backends = count == kBlackhole ? 0 : count;
    // Calico keeps no service type; its NodePort frontend uses 255.255.255.255.
    if (!v6 && f.address == "255.255.255.255") {
      f.type = "NodePort";
      f.surrogate = true;
    }
    proto_of[f.service_id] = f.protocol;
    out.frontends.push_back(std::move(f));
  }
}

// key {u32 service id, u32 ordinal}; calico_nat_dest: addr, u16 port (host), pad.
void decode_backends(const DumpedMap& dm, bool v6, model::LbServices& out,
                     const std::map<uint32_t, std::string>& proto_of) {
  for (size_t i = 0; i < dm.entries.count; ++i) {
    const uint8_t* k = dm.entries.key(i);
    const uint8_t* v = dm.entries.value(i);
    model::LbBackend b;
    b.id = host32(k);  // the service id: Calico backends have no id of their own
    b.address = address(v, v6);
    b.port = host16(v + (v6 ? 16 : 4));
    auto it = proto_of.find(b.id);
    b.protocol = it == proto_of.end() ? "" : it->second;
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
    model::LbServices s;
    s.dataplane = "calico";
    s.layout = kLayout;
    s.backends_linked = true;  // a backend's key holds its frontend's service id
    std::map<Role, const DumpedMap*> by_role;
    std::vector<std::string> problems;
    for (const auto& [spec, dm] : members) {
      const auto& m = dm->meta;
      s.maps.push_back(map_label(m));
      if (m.type != spec.type || m.key_size != spec.key_size || m.value_size != spec.value_size) {
        problems.push_back(map_label(m) + " is " + m.type + " " + std::to_string(m.key_size) + "/" +
                           std::to_string(m.value_size) + ", not " + spec.prefix + "* (" + spec.type + " " +
                           std::to_string(spec.key_size) + "/" + std::to_string(spec.value_size) + ")");
        continue;
      }
      if (by_role.count(spec.role)) {
        problems.push_back("two maps look like " + std::string(spec.prefix) + "*: " +
                           map_label(by_role[spec.role]->meta) + " and " + map_label(m));
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
    std::map<uint32_t, std::string> proto4, proto6;
    if (by_role.count(Role::Frontends4)) decode_frontends(*by_role[Role::Frontends4], false, s, proto4);
    if (by_role.count(Role::Frontends6)) decode_frontends(*by_role[Role::Frontends6], true, s, proto6);
    if (by_role.count(Role::Backends4)) decode_backends(*by_role[Role::Backends4], false, s, proto4);
    if (by_role.count(Role::Backends6)) decode_backends(*by_role[Role::Backends6], true, s, proto6);
    // Left in map order: model::canonicalize() sorts frontends and backends once for the snapshot.
    result.push_back(std::move(s));
  }
  return result;
}

}  // namespace dpscope::bpf::calico
