#include "analysis/services.h"

#include <set>

#include "analysis/analysis.h"

namespace dpscope::analysis {

std::string ServiceProgramming::key() const {
  bool v6 = address.find(':') != std::string::npos;
  return (v6 ? "[" + address + "]" : address) + ":" + std::to_string(port) + "/" + protocol;
}

namespace {

uint16_t to_port(const std::string& s) {
  if (s.empty() || s.size() > 5 || s.find_first_not_of("0123456789") != std::string::npos) return 0;
  unsigned long v = std::stoul(s);
  return v > 65535 ? 0 : static_cast<uint16_t>(v);
}

// "kube-system/kube-dns:dns cluster IP" -> "kube-system/kube-dns:dns"
std::string service_name_of_comment(const std::string& comment) {
  auto sp = comment.find(' ');
  std::string name = comment.substr(0, sp);
  return name.find('/') == std::string::npos ? "" : name;
}

void add_iptables(const model::Table& t, std::vector<ServiceProgramming>& out) {
  const model::Chain* services = find_chain(t, "KUBE-SERVICES");
  if (!services) return;
  for (const auto& r : services->rules) {
    if (!r.match.destination || r.match.destination->negated || r.verdict_kind != "jump") continue;
    auto addr = single_address(r.match.destination->cidr);
    if (!addr) continue;
    ServiceProgramming sp;
    sp.dataplane = "iptables";
    sp.name = service_name_of_comment(r.match.comment);
    sp.address = *addr;
    sp.port = to_port(r.match.dport);
    sp.protocol = r.match.protocol;
    sp.rules = 1;
    std::set<std::string> seen;
    // Follow the jump (KUBE-SVC / KUBE-EXT / KUBE-FW) and what it jumps to, one
    // level of KUBE-SVC behind KUBE-EXT/FW, counting every chain once.
    std::vector<std::string> todo = {r.target};
    while (!todo.empty()) {
      std::string name = todo.back();
      todo.pop_back();
      if (!seen.insert(name).second) continue;
      const model::Chain* c = find_chain(t, name);
      if (!c) continue;
      sp.chains += 1;
      sp.rules += c->rule_count;
      if (name.rfind("KUBE-SEP-", 0) == 0) sp.endpoints += 1;
      for (const auto& cr : c->rules) {
        if (cr.verdict_kind != "jump") continue;
        for (const char* p : {"KUBE-SVC-", "KUBE-SVL-", "KUBE-SEP-", "KUBE-EXT-", "KUBE-FW-"}) {
          if (cr.target.rfind(p, 0) == 0) todo.push_back(cr.target);
        }
      }
    }
    out.push_back(std::move(sp));
  }
}

void add_nftables(const model::Table& t, std::vector<ServiceProgramming>& out) {
  for (const auto& set : t.sets) {
    if (set.name != "service-ips") continue;
    for (const auto& e : set.elements) {
      // key "172.30.0.41 . tcp . 80", value "goto service-ULMVA6XW-ns1/svc1/tcp/p80"
      std::vector<std::string> parts;
      for (size_t p = 0;;) {
        size_t d = e.key.find(" . ", p);
        parts.push_back(e.key.substr(p, d == std::string::npos ? std::string::npos : d - p));
        if (d == std::string::npos) break;
        p = d + 3;
      }
      if (parts.size() < 3) continue;
      ServiceProgramming sp;
      sp.dataplane = "nftables";
      sp.address = parts[0];
      sp.protocol = parts[1];
      sp.port = to_port(parts[2]);
      std::string chain = e.value.substr(e.value.find(' ') == std::string::npos ? 0 : e.value.find(' ') + 1);
      // service-HASH-ns/name/proto/portname -> ns/name:portname
      auto first = chain.find('-');
      auto second = first == std::string::npos ? first : chain.find('-', first + 1);
      if (second != std::string::npos) {
        std::string rest = chain.substr(second + 1);
        auto slash1 = rest.find('/');
        auto slash2 = slash1 == std::string::npos ? slash1 : rest.find('/', slash1 + 1);
        auto slash3 = slash2 == std::string::npos ? slash2 : rest.find('/', slash2 + 1);
        if (slash3 != std::string::npos) sp.name = rest.substr(0, slash2) + ":" + rest.substr(slash3 + 1);
      }
      if (const model::Chain* c = find_chain(t, chain)) {
        sp.chains = 1;
        sp.rules = c->rule_count;
        std::string ep_prefix = "endpoint-";
        for (const auto& ch : t.chains) {
          if (ch.name.rfind(ep_prefix, 0) == 0 && !sp.name.empty() &&
              ch.name.find(chain.substr(second + 1)) != std::string::npos) {
            sp.chains += 1;
            sp.endpoints += 1;
            sp.rules += ch.rule_count;
          }
        }
      }
      out.push_back(std::move(sp));
    }
  }
}

}  // namespace

std::vector<ServiceProgramming> services_of(const model::Snapshot& s) {
  std::vector<ServiceProgramming> out;
  for (const auto& t : s.netfilter.tables) {
    if (t.backend != model::Backend::Nftables && t.name == "nat") add_iptables(t, out);
    if (t.backend == model::Backend::Nftables && t.name == "kube-proxy") add_nftables(t, out);
  }
  for (const auto& svc : s.ebpf.services) {
    for (const auto& f : svc.frontends) {
      ServiceProgramming sp;
      sp.dataplane = svc.dataplane;
      sp.address = f.address;
      sp.port = f.port;
      sp.protocol = f.protocol;
      sp.endpoints = f.backends;
      out.push_back(std::move(sp));
    }
  }
  return out;
}

}  // namespace dpscope::analysis
