#include "analysis/services.h"
#include "analysis/strings.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include "analysis/analysis.h"
#include "model/ipvs.h"

namespace dpscope::analysis {

std::string ServiceProgramming::key() const {
  bool v6 = address.find(':') != std::string::npos;
  return (v6 ? "[" + address + "]" : address) + ":" + std::to_string(port) + "/" + protocol;
}

// "kube-system/kube-dns:dns cluster IP" -> "kube-system/kube-dns:dns"
std::string service_name_of_comment(const std::string& comment) {
  auto sp = comment.find(' ');
  std::string name = comment.substr(0, sp);
  return name.find('/') == std::string::npos ? "" : name;
}

namespace {

uint16_t to_port(const std::string& s) {
  if (s.empty() || s.size() > 5 || s.find_first_not_of("0123456789") != std::string::npos) return 0;
  unsigned long v = std::stoul(s);
  return v > 65535 ? 0 : static_cast<uint16_t>(v);
}

std::vector<std::string> split_concat(const std::string& key);

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

// "service-HASH8-ns/svc/tcp/p80" -> "ns/svc/tcp/p80" (kube-proxy's port name; "" when not of that shape)
std::string nft_port_name(std::string_view chain) {
  if (kube_proxy_nft_chain_kind(chain) == "helper") return "";
  auto dash = chain.find('-');
  return std::string(chain.substr(dash + 10));
}

// "ns/svc/tcp/p80" -> "ns/svc:p80"; unnamed port "ns/svc/tcp/" -> "ns/svc", as
// kube-proxy's svcPortName prints it (and its iptables comments say).
std::string nft_service_label(const std::string& port_name) {
  auto s1 = port_name.find('/');
  auto s2 = s1 == std::string::npos ? s1 : port_name.find('/', s1 + 1);
  auto s3 = s2 == std::string::npos ? s2 : port_name.find('/', s2 + 1);
  if (s3 == std::string::npos) return "";
  std::string port = port_name.substr(s3 + 1);
  return port_name.substr(0, s2) + (port.empty() ? "" : ":" + port);
}

// "endpoint-HASH-ns/svc/tcp/p80__10.244.1.5/8080" -> "10.244.1.5:8080"; IPv6
// (kube-proxy writes the address's colons as dots: "fd00.10.180..2.1") ->
// "[fd00:10:180::2:1]:8080". "" when not of that shape.
std::string nft_endpoint_of_chain(const std::string& chain, bool v6) {
  auto dash = chain.find('-', 9);
  auto sep = chain.rfind("__");
  if (chain.rfind("endpoint-", 0) != 0 || dash == std::string::npos || sep == std::string::npos || sep < dash) return "";
  std::string ep = chain.substr(sep + 2);
  auto slash = ep.rfind('/');
  if (slash == std::string::npos) return "";
  std::string addr = ep.substr(0, slash);
  if (v6) std::replace(addr.begin(), addr.end(), '.', ':');
  return (v6 ? "[" + addr + "]" : addr) + ":" + ep.substr(slash + 1);
}

// "numgen random mod 5" -> 5: kube-proxy's endpoint pick in a service-/local-
// chain has one verdict-map element per endpoint (0 .. N-1).
std::optional<uint64_t> numgen_modulus(const std::string& args) {
  auto at = args.find(" mod ");
  if (args.rfind("numgen ", 0) != 0 || at == std::string::npos) return std::nullopt;
  std::string n = args.substr(at + 5, args.find(' ', at + 5) - at - 5);
  if (n.empty() || n.size() > 9 || n.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  return std::stoull(n);
}

// kube-proxy nftables mode, one service-ips element: the chain it goes to, and
// what that one reaches -- the same walk as the iptables side (external- ->
// service- / local- -> endpoint-, every chain once). The endpoint chains a
// service-/local- chain picks are those its anonymous verdict map names (in
// the rule's text). A light snapshot has no such text: its `numgen random
// mod N` then says how many for one policy chain, and a walk that reaches
// both (external traffic with a Local policy and its pod / host
// short-circuits to the cluster chain) is taken to reach every endpoint
// chain named after the service port, kube-proxy's union of the two.
void add_nftables(const model::Table& t, std::vector<ServiceProgramming>& out) {
  std::unordered_map<std::string_view, const model::Chain*> idx;
  std::unordered_map<std::string, std::vector<const model::Chain*>> endpoint_chains;  // by port name
  for (const auto& c : t.chains) {
    idx.emplace(c.name, &c);
    if (kube_proxy_nft_chain_kind(c.name) != "endpoint" || c.rule_count == 0) continue;
    std::string port_name = nft_port_name(c.name);
    endpoint_chains[port_name.substr(0, port_name.rfind("__"))].push_back(&c);
  }
  for (const auto& set : t.sets) {
    if (set.name != "service-ips") continue;
    for (const auto& e : set.elements) {
      // key "172.30.0.41 . tcp . 80", value "goto service-ULMVA6XW-ns1/svc1/tcp/p80"
      auto parts = split_concat(e.key);
      if (parts.size() < 3) continue;
      ServiceProgramming sp;
      sp.dataplane = "nftables";
      sp.address = parts[0];
      sp.protocol = parts[1];
      sp.port = to_port(parts[2]);
      const std::string first = e.value.substr(e.value.find(' ') == std::string::npos ? 0 : e.value.find(' ') + 1);
      const std::string port_name = nft_port_name(first);
      sp.name = nft_service_label(port_name);
      std::set<std::string> seen;
      std::vector<std::string> todo = {first};
      std::vector<const model::Chain*> policy;  // service- / local- chains reached
      while (!todo.empty()) {
        std::string name = todo.back();
        todo.pop_back();
        if (!seen.insert(name).second) continue;
        auto it = idx.find(name);
        if (it == idx.end()) continue;
        const model::Chain* c = it->second;
        sp.chains += 1;
        sp.rules += c->rule_count;
        std::string_view kind = kube_proxy_nft_chain_kind(name);
        if (kind == "service" || kind == "local") policy.push_back(c);
        for (const auto& r : c->rules) {
          if (r.verdict_kind != "jump" && r.verdict_kind != "goto") continue;
          std::string_view k = kube_proxy_nft_chain_kind(r.target);
          if (k == "service" || k == "local" || k == "firewall" || k == "external") todo.push_back(r.target);
        }
      }
      const auto& eps = endpoint_chains[port_name];
      std::set<std::string> picked;
      bool picks_known = !policy.empty();
      for (const model::Chain* c : policy) {
        ReachedEndpointChains r = endpoint_chains_reached(*c);
        picks_known = picks_known && r.known;
        picked.insert(r.chains.begin(), r.chains.end());
      }
      if (picks_known) {
        for (const std::string& name : picked) {
          auto it = idx.find(name);
          if (it == idx.end() || it->second->rule_count == 0) continue;
          sp.endpoints += 1;
          sp.chains += 1;
          sp.rules += it->second->rule_count;
        }
        out.push_back(std::move(sp));
        continue;
      }
      uint64_t reached = 0;
      if (policy.size() > 1) {
        reached = eps.size();
      } else if (policy.size() == 1) {
        for (const auto& r : policy[0]->rules) {
          if (auto n = r.verdict_kind == "vmap" ? numgen_modulus(r.target_args) : std::nullopt) reached = *n;
        }
      }
      // Each endpoint chain of one service port holds the same rules (kube-proxy
      // writes them from one template), so N of them hold N times one's rules.
      sp.endpoints = reached;
      sp.chains += reached;
      if (!eps.empty()) sp.rules += reached * eps.front()->rule_count;
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
  if (s.ipvs.collected && s.ipvs.loaded) {
    for (const auto& v : s.ipvs.services) {
      if (!v.address || !v.port || !v.protocol) continue;  // a fwmark service has no address of its own
      ServiceProgramming sp;
      sp.dataplane = "ipvs";
      sp.address = *v.address;
      sp.port = *v.port;
      sp.protocol = *v.protocol;
      for (const auto& d : v.destinations) sp.endpoints += d.weight > 0;
      out.push_back(std::move(sp));
    }
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

// ---------------------------------------------------------------- frontends

std::string FrontendProgramming::key() const {
  bool v6 = address.find(':') != std::string::npos;
  return (v6 ? "[" + address + "]" : address) + ":" + std::to_string(port) + "/" + protocol;
}

model::RuleDetail frontend_rule_detail(std::string_view chain) {
  auto starts = [&](std::string_view p) { return chain.substr(0, p.size()) == p; };
  // iptables: the frontend rules, the external and firewall chains (their
  // matches tell a short-circuit from the policy jump), the endpoint chains'
  // DNAT targets. nftables: the external chains (comments and gotos).
  if (chain == "KUBE-SERVICES" || chain == "KUBE-NODEPORTS" || chain == "KUBE-EXTERNAL-SERVICES") {
    return model::RuleDetail::Full;
  }
  for (std::string_view p : {"KUBE-EXT-", "KUBE-FW-", "external-"}) {
    if (starts(p)) return model::RuleDetail::Full;
  }
  for (std::string_view p : {"KUBE-SVC-", "KUBE-SVL-", "KUBE-SEP-"}) {
    if (starts(p)) return model::RuleDetail::Verdict;
  }
  return model::RuleDetail::None;
}

namespace {

using ChainIndex = std::unordered_map<std::string_view, const model::Chain*>;

ChainIndex index_chains(const model::Table& t) {
  ChainIndex idx;
  idx.reserve(t.chains.size());
  for (const auto& c : t.chains) idx.emplace(c.name, &c);
  return idx;
}

const model::Chain* lookup(const ChainIndex& idx, std::string_view name) {
  auto it = idx.find(name);
  return it == idx.end() ? nullptr : it->second;
}

std::string family_of_table(const model::Table& t) { return t.family == "ip6" ? "ipv6" : "ipv4"; }

// "--to-destination 10.244.1.5:8080" -> "10.244.1.5:8080" ("[fd00::5]:8080" stays).
std::string dnat_destination(const std::string& args) {
  auto at = args.find("--to-destination ");
  if (at == std::string::npos) return "";
  std::string rest = args.substr(at + 17);
  return rest.substr(0, rest.find(' '));
}

bool has_module(const model::Rule& r, std::string_view m) {
  return std::find(r.match.modules.begin(), r.match.modules.end(), m) != r.match.modules.end();
}

// kube-proxy iptables mode, one nat table (and the filter table of the same
// family and backend for its REJECT / DROP rules).
class IptablesResolver {
 public:
  IptablesResolver(const model::Table& nat, const model::Table* filter)
      : nat_(nat), filter_(filter), nat_idx_(index_chains(nat)) {
    dataplane_ = model::to_string(nat.backend);
    family_ = family_of_table(nat);
    prefix_ = nat.family + " nat ";
  }

  void run(std::vector<FrontendProgramming>& out) {
    size_t first = out.size();
    if (const model::Chain* services = lookup(nat_idx_, "KUBE-SERVICES")) {
      for (const auto& r : services->rules) {
        if (!r.match.destination || r.match.destination->negated || r.verdict_kind != "jump") continue;
        auto addr = single_address(r.match.destination->cidr);
        if (!addr || !is_service_chain(r.target)) continue;
        FrontendProgramming f = base(r, *addr);
        const std::string& c = r.match.comment;
        f.kind = c.ends_with(" cluster IP") ? "ClusterIP"
                 : c.ends_with(" external IP") ? "ExternalIP"
                 : c.ends_with(" loadbalancer IP") ? "LoadBalancer"
                 : "";
        f.where = prefix_ + "KUBE-SERVICES #" + std::to_string(r.position) + " -> " + r.target;
        follow(r.target, f);
        out.push_back(std::move(f));
      }
    }
    if (const model::Chain* nodeports = lookup(nat_idx_, "KUBE-NODEPORTS")) {
      for (const auto& r : nodeports->rules) {
        if (r.verdict_kind != "jump" || !is_service_chain(r.target) || r.match.dport.empty()) continue;
        FrontendProgramming f = base(r, "");
        f.kind = "NodePort";
        f.where = prefix_ + "KUBE-NODEPORTS #" + std::to_string(r.position) + " -> " + r.target;
        follow(r.target, f);
        out.push_back(std::move(f));
      }
    }
    if (filter_) add_filter_verdicts(out, first);
  }

 private:
  static bool is_service_chain(const std::string& c) {
    return starts_with(c, "KUBE-SVC-") || starts_with(c, "KUBE-SVL-") || starts_with(c, "KUBE-EXT-") ||
           starts_with(c, "KUBE-FW-");
  }

  FrontendProgramming base(const model::Rule& r, const std::string& address) const {
    FrontendProgramming f;
    f.dataplane = dataplane_;
    f.family = family_;
    f.address = address;
    f.port = to_port(r.match.dport);
    f.protocol = r.match.protocol;
    f.service = service_name_of_comment(r.match.comment);
    f.action = "forward";
    return f;
  }

  // KUBE-FW -> KUBE-EXT -> KUBE-SVC / KUBE-SVL -> KUBE-SEP --to-destination.
  void follow(const std::string& chain, FrontendProgramming& f) const {
    if (starts_with(chain, "KUBE-FW-")) {
      // Allowed sources jump to the EXT chain; the rest is dropped.
      const model::Chain* fw = lookup(nat_idx_, chain);
      if (!fw) return unresolved(f, chain);
      for (const auto& r : fw->rules) {
        if (r.verdict_kind == "jump" && is_service_chain(r.target) && !starts_with(r.target, "KUBE-FW-")) {
          return follow(r.target, f);
        }
      }
      return;  // no allowed source: nothing forwarded
    }
    if (starts_with(chain, "KUBE-EXT-")) {
      const model::Chain* ext = lookup(nat_idx_, chain);
      if (!ext) return unresolved(f, chain);
      // kube-proxy writes the policy jump last and unconditionally; the jumps
      // before it short-circuit pod and host traffic (-s / addrtype).
      const model::Rule* policy = nullptr;
      for (const auto& r : ext->rules) {
        if (r.verdict_kind == "jump" && (starts_with(r.target, "KUBE-SVC-") || starts_with(r.target, "KUBE-SVL-"))) {
          policy = &r;
        }
      }
      if (!policy || policy->match.source || has_module(*policy, "addrtype")) return;  // no external endpoints
      return follow(policy->target, f);
    }
    const model::Chain* svc = lookup(nat_idx_, chain);
    if (!svc) return unresolved(f, chain);
    f.policy = starts_with(chain, "KUBE-SVL-") ? "local" : "cluster";
    for (const auto& r : svc->rules) {
      if (r.verdict_kind != "jump" || !starts_with(r.target, "KUBE-SEP-")) continue;
      const model::Chain* sep = lookup(nat_idx_, r.target);
      if (!sep) {
        f.endpoints.push_back("(missing chain " + r.target + ")");
        continue;
      }
      if (!sep->rules_recorded) {
        f.endpoints_known = false;
        continue;
      }
      for (const auto& sr : sep->rules) {
        if (sr.target == "DNAT") f.endpoints.push_back(dnat_destination(sr.target_args));
      }
    }
    sort_unique(f.endpoints);
    f.endpoint_count = static_cast<uint32_t>(f.endpoints.size());
  }

  static void unresolved(FrontendProgramming& f, const std::string& chain) {
    f.where += " (chain " + chain + " missing)";
  }

  // filter KUBE-SERVICES (cluster IPs) and KUBE-EXTERNAL-SERVICES (external
  // IPs, LB IPs, node ports): REJECT when a Service has no endpoints, DROP when
  // its traffic policy is Local and this node has none.
  void add_filter_verdicts(std::vector<FrontendProgramming>& out, size_t first) const {
    std::map<std::string, size_t> by_key;
    for (size_t i = first; i < out.size(); ++i) by_key.emplace(out[i].key(), i);
    for (const char* name : {"KUBE-SERVICES", "KUBE-EXTERNAL-SERVICES"}) {
      const model::Chain* c = model::find_chain(*filter_, name);
      if (!c) continue;
      for (const auto& r : c->rules) {
        if (r.target != "REJECT" && r.target != "DROP") continue;
        std::string address;
        if (r.match.destination) {
          auto a = single_address(r.match.destination->cidr);
          if (!a || r.match.destination->negated) continue;
          address = *a;
        } else if (!has_module(r, "addrtype")) {
          continue;
        }
        FrontendProgramming f = base(r, address);
        f.action = r.target == "REJECT" ? "reject" : "drop";
        f.kind = address.empty() ? "NodePort" : std::string(name) == "KUBE-SERVICES" ? "ClusterIP" : "external";
        f.where = filter_->family + " filter " + name + " #" + std::to_string(r.position) + " -> " + r.target;
        auto it = by_key.find(f.key());
        if (it != by_key.end()) {
          // Local policy without local endpoints: outside traffic is dropped
          // here, after nat forwarded only the short-circuited part.
          FrontendProgramming& nat = out[it->second];
          nat.action = f.action;
          nat.where += "; " + f.where;
          nat.endpoints.clear();
          nat.endpoint_count = 0;
          continue;
        }
        by_key.emplace(f.key(), out.size());
        out.push_back(std::move(f));
      }
    }
  }

  const model::Table& nat_;
  const model::Table* filter_;
  ChainIndex nat_idx_;
  std::string dataplane_, family_, prefix_;
};

std::vector<std::string> split_concat(const std::string& key) {
  std::vector<std::string> parts;
  for (size_t p = 0;;) {
    size_t d = key.find(" . ", p);
    parts.push_back(key.substr(p, d == std::string::npos ? std::string::npos : d - p));
    if (d == std::string::npos) break;
    p = d + 3;
  }
  return parts;
}

// kube-proxy nftables mode: table ip|ip6 kube-proxy.
class NftablesResolver {
 public:
  explicit NftablesResolver(const model::Table& t) : t_(t), idx_(index_chains(t)) {
    family_ = family_of_table(t);
    // endpoint-HASH-ns/svc/proto/port__ADDR/PORT, grouped by "ns/svc/proto/port"
    // (a flushed chain -- kube-proxy empties a stale chain before deleting
    // it -- forwards nothing and is left out).
    for (const auto& c : t.chains) {
      if (!starts_with(c.name, "endpoint-") || c.rule_count == 0) continue;
      std::string ep = nft_endpoint_of_chain(c.name, family_ == "ipv6");
      if (ep.empty()) continue;
      auto dash = c.name.find('-', 9);
      endpoints_[c.name.substr(dash + 1, c.name.rfind("__") - dash - 1)].push_back(std::move(ep));
    }
    for (auto& [k, v] : endpoints_) sort_unique(v);
  }

  void run(std::vector<FrontendProgramming>& out) const {
    for (const auto& set : t_.sets) {
      bool nodeport = set.name == "service-nodeports" || set.name == "no-endpoint-nodeports";
      bool no_endpoint = set.name == "no-endpoint-services" || set.name == "no-endpoint-nodeports";
      if (!nodeport && set.name != "service-ips" && set.name != "no-endpoint-services") continue;
      for (const auto& e : set.elements) {
        auto parts = split_concat(e.key);
        if (parts.size() != (nodeport ? 2u : 3u)) continue;
        FrontendProgramming f;
        f.dataplane = "nftables";
        f.family = family_;
        f.address = nodeport ? "" : parts[0];
        f.protocol = parts[nodeport ? 0 : 1];
        f.port = to_port(parts[nodeport ? 1 : 2]);
        f.where = t_.family + " " + t_.name + " map " + set.name;
        if (no_endpoint) {
          f.action = e.value == "drop" ? "drop" : "reject";
          f.service = e.comment;
          f.kind = nodeport ? "NodePort" : "";
        } else {
          f.action = "forward";
          std::string chain = e.value.substr(e.value.find(' ') == std::string::npos ? 0 : e.value.find(' ') + 1);
          f.kind = nodeport ? "NodePort" : starts_with(chain, "external-") ? "external" : "ClusterIP";
          f.where += " -> " + chain;
          follow(chain, f);
        }
        out.push_back(std::move(f));
      }
    }
  }

 private:
  // "service-HASH-ns/svc/tcp/p80" -> "ns/svc/tcp/p80"
  static std::string port_name_of(const std::string& chain) {
    auto dash = chain.find('-');
    dash = dash == std::string::npos ? dash : chain.find('-', dash + 1);
    return dash == std::string::npos ? "" : chain.substr(dash + 1);
  }
  void follow(const std::string& chain, FrontendProgramming& f) const {
    const model::Chain* c = lookup(idx_, chain);
    if (!c) {
      f.where += " (chain missing)";
      return;
    }
    std::string target = chain;
    if (starts_with(chain, "external-")) {
      // The policy goto is the last one and carries no comment; the ones before
      // it short-circuit pod and host traffic ("short-circuit ... traffic").
      target.clear();
      if (!c->rules_recorded) f.endpoints_known = false;
      for (const auto& r : c->rules) {
        if ((r.verdict_kind == "goto" || r.verdict_kind == "jump") &&
            (starts_with(r.target, "service-") || starts_with(r.target, "local-"))) {
          target = r.match.comment.empty() ? r.target : "";
        }
      }
      if (target.empty()) {
        f.service = nft_service_label(port_name_of(chain));
        return;  // no external endpoints
      }
    }
    f.policy = starts_with(target, "local-") ? "local" : "cluster";
    std::string port_name = port_name_of(target);
    f.service = nft_service_label(port_name);
    // The endpoints are the chains the policy chain's pick reaches.
    if (const model::Chain* policy = lookup(idx_, target)) {
      const ReachedEndpointChains reached = endpoint_chains_reached(*policy);
      if (reached.known) {
        for (const std::string& name : reached.chains) {
          const model::Chain* ep = lookup(idx_, name);
          if (!ep || ep->rule_count == 0) continue;  // a flushed chain forwards nothing
          std::string address = nft_endpoint_of_chain(name, family_ == "ipv6");
          if (!address.empty()) f.endpoints.push_back(std::move(address));
        }
        sort_unique(f.endpoints);
        f.endpoint_count = static_cast<uint32_t>(f.endpoints.size());
        return;
      }
    }
    // A light snapshot: the endpoint chains named after the service port.
    f.endpoints_of_service_port = true;
    auto it = endpoints_.find(port_name);
    if (it != endpoints_.end()) f.endpoints = it->second;
    f.endpoint_count = static_cast<uint32_t>(f.endpoints.size());
  }

  const model::Table& t_;
  ChainIndex idx_;
  std::string family_;
  std::unordered_map<std::string, std::vector<std::string>> endpoints_;
};

}  // namespace

// The kernel's IPVS table, as kube-proxy's ipvs mode and kube-router program
// it: one virtual service per frontend, its real servers the endpoints.
// kube-proxy binds every ClusterIP, external IP and LoadBalancer IP to
// kube-ipvs0 and programs a node port once per node address, so a virtual
// service at an address that is not on the dummy interface is a NodePort
// (when the interface's addresses were read). Real servers of weight 0 are
// kube-proxy's terminating endpoints draining, not endpoints in use. A
// virtual service without a usable real server answers ICMP port
// unreachable (ip_vs_leave): a reject. fwmark services match a mark, not an
// address, and are no frontend of their own.
namespace {

void add_ipvs(const model::Ipvs& ipvs, std::vector<FrontendProgramming>& out) {
  if (!ipvs.collected || !ipvs.loaded) return;
  std::set<std::string> on_dummy;
  if (ipvs.interface_addresses) {
    for (const auto& a : *ipvs.interface_addresses) on_dummy.insert(a.address);
  }
  for (const auto& v : ipvs.services) {
    if (!v.address || !v.port || !v.protocol) continue;
    FrontendProgramming f;
    f.dataplane = "ipvs";
    f.family = v.family == "inet6" ? "ipv6" : "ipv4";
    const bool node_port = ipvs.interface_addresses && !on_dummy.count(*v.address);
    f.kind = node_port ? "NodePort" : "";
    f.address = node_port ? "" : *v.address;
    f.port = *v.port;
    f.protocol = *v.protocol;
    for (const auto& d : v.destinations) {
      if (d.weight == 0) continue;
      const bool v6 = d.address.find(':') != std::string::npos;
      f.endpoints.push_back((v6 ? "[" + d.address + "]" : d.address) + ":" + std::to_string(d.port));
    }
    sort_unique(f.endpoints);
    f.endpoint_count = static_cast<uint32_t>(f.endpoints.size());
    f.action = f.endpoints.empty() ? "reject" : "forward";
    f.where = "ipvs " + model::ipvs_service_key(v);
    out.push_back(std::move(f));
  }
}

}  // namespace

std::optional<std::vector<std::string>> anonymous_vmap_chains(const model::Rule& r) {
  const size_t open = r.text.find("vmap { ");
  if (open == std::string::npos) return std::nullopt;
  const size_t close = r.text.find(" }", open);
  if (close == std::string::npos) return std::nullopt;
  std::vector<std::string> out;
  for (size_t at = open; at < close;) {
    size_t g = r.text.find(": goto ", at), j = r.text.find(": jump ", at);
    size_t v = std::min(g, j);
    if (v == std::string::npos || v >= close) break;
    v += 7;
    size_t end = r.text.find_first_of(", }", v);
    out.push_back(r.text.substr(v, std::min(end, close) - v));
    at = end;
  }
  return out;
}

ReachedEndpointChains endpoint_chains_reached(const model::Chain& policy) {
  ReachedEndpointChains out;
  out.known = policy.rules_recorded || policy.rule_count == 0;
  for (const auto& r : policy.rules) {
    if ((r.verdict_kind == "goto" || r.verdict_kind == "jump") && kube_proxy_nft_chain_kind(r.target) == "endpoint") {
      out.chains.push_back(r.target);
    } else if (r.verdict_kind == "vmap" && r.target.empty()) {
      auto chains = anonymous_vmap_chains(r);
      if (!chains) {
        out.known = false;
        continue;
      }
      out.chains.insert(out.chains.end(), chains->begin(), chains->end());
    }
  }
  sort_unique(out.chains);
  return out;
}

std::vector<UnreachedEndpointChain> unreached_endpoint_chains(const model::Snapshot& s) {
  std::vector<UnreachedEndpointChain> out;
  for (const auto& t : s.netfilter.tables) {
    if (t.backend != model::Backend::Nftables || t.name != "kube-proxy") continue;
    std::set<std::string> reached;
    bool known = true;
    for (const auto& c : t.chains) {
      std::string_view kind = kube_proxy_nft_chain_kind(c.name);
      if (kind != "service" && kind != "local") continue;
      ReachedEndpointChains r = endpoint_chains_reached(c);
      known = known && r.known;
      reached.insert(r.chains.begin(), r.chains.end());
    }
    if (!known) continue;
    const bool v6 = family_of_table(t) == "ipv6";
    for (const auto& c : t.chains) {
      // A flushed chain is kube-proxy's own way to retire one (deleted later).
      if (kube_proxy_nft_chain_kind(c.name) != "endpoint" || c.rule_count == 0 || reached.count(c.name)) continue;
      const std::string port_name = nft_port_name(c.name);
      out.push_back({t.family + " " + t.name, c.name, nft_service_label(port_name.substr(0, port_name.rfind("__"))),
                     nft_endpoint_of_chain(c.name, v6), c.rule_count});
    }
  }
  return out;
}

std::vector<FrontendProgramming> frontends_of(const model::Snapshot& s) {
  std::vector<FrontendProgramming> out;
  for (const auto& t : s.netfilter.tables) {
    if (t.backend != model::Backend::Nftables && t.name == "nat") {
      IptablesResolver(t, model::find_table(s, t.backend, t.family, "filter")).run(out);
    }
    if (t.backend == model::Backend::Nftables && t.name == "kube-proxy") NftablesResolver(t).run(out);
  }
  add_ipvs(s.ipvs, out);
  for (const auto& svc : s.ebpf.services) {
    if (!svc.decoded) continue;
    // Backend addresses: Cilium by the id in each slot, Calico by service id.
    std::unordered_map<uint32_t, std::string> cilium_backend;
    std::unordered_map<uint32_t, std::vector<std::string>> calico_backends;
    for (const auto& b : svc.backends) {
      const bool v6 = b.address.find(':') != std::string::npos;
      std::string ep = (v6 ? "[" + b.address + "]" : b.address) + ":" + std::to_string(b.port);
      if (svc.dataplane == "calico") calico_backends[b.id].push_back(std::move(ep));
      else cilium_backend.emplace(b.id, std::move(ep));
    }
    for (const auto& fe : svc.frontends) {
      FrontendProgramming f;
      f.dataplane = svc.dataplane;
      f.family = fe.address.find(':') != std::string::npos ? "ipv6" : "ipv4";
      f.kind = fe.type;
      // A NodePort frontend is programmed per node address (and 0.0.0.0, the
      // surrogate); they are one node port.
      f.address = fe.type == "NodePort" ? "" : fe.address;
      f.port = fe.port;
      f.protocol = fe.protocol;
      f.action = fe.backends > 0 ? "forward" : "reject";
      f.endpoint_count = fe.backends;
      f.endpoints_known = svc.backends_linked;
      if (svc.backends_linked && svc.dataplane == "calico") {
        if (auto it = calico_backends.find(fe.service_id); it != calico_backends.end()) f.endpoints = it->second;
      } else if (svc.backends_linked) {
        for (uint32_t id : fe.backend_ids) {
          auto it = cilium_backend.find(id);
          f.endpoints.push_back(it != cilium_backend.end() ? it->second : "(missing backend " + std::to_string(id) + ")");
        }
      }
      sort_unique(f.endpoints);
      f.where = svc.dataplane + " service " + std::to_string(fe.service_id);
      out.push_back(std::move(f));
    }
  }
  return out;
}

}  // namespace dpscope::analysis
