#include "analysis/verify.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "analysis/analysis.h"
#include "analysis/strings.h"

namespace dpscope::analysis {

namespace {

std::string family_of_ip(const std::string& ip) { return ip.find(':') != std::string::npos ? "ipv6" : "ipv4"; }

std::string frontend_key(const std::string& address, uint16_t port, const std::string& protocol) {
  bool v6 = address.find(':') != std::string::npos;
  return (v6 ? "[" + address + "]" : address) + ":" + std::to_string(port) + "/" + protocol;
}

std::string service_key_of(const std::string& svc_port_name) { return svc_port_name.substr(0, svc_port_name.find(':')); }

// One endpoint of a service port as kube-proxy's endpointslicecache keeps it.
struct Ep {
  std::string id;  // "10.244.1.5:8080"
  bool ready = true, serving = true, terminating = false, local = false;
};

std::string describe(const std::string& key, const std::string& kind) {
  return key + (kind.empty() ? "" : " " + kind);
}

}  // namespace

std::string ExpectedFrontend::key() const { return frontend_key(address, port, protocol); }

// ---------------------------------------------------------------- expected

IntentIndex::IntentIndex(const model::Intent& intent) : intent_(intent) {
  std::unordered_map<std::string, size_t> by_key;
  by_key.reserve(intent.services.size());
  slices_of_.resize(intent.services.size());
  for (size_t i = 0; i < intent.services.size(); ++i) {
    const auto& s = intent.services[i];
    by_key.emplace(s.key(), i);
    service_keys_.push_back(s.key());
    bool programmable = s.type != "ExternalName" && !s.headless && !s.cluster_ips.empty() && !s.ports.empty();
    (programmable ? to_program_ : nothing_) += 1;
  }
  std::sort(service_keys_.begin(), service_keys_.end());
  for (const auto& es : intent.slices) {
    if (es.service.empty()) continue;  // not managed for a Service: kube-proxy ignores it
    auto it = by_key.find(es.ns + "/" + es.service);
    if (it != by_key.end()) slices_of_[it->second].push_back(&es);
    for (const auto& e : es.endpoints) hinted_ += e.has_hints ? 1 : 0;
  }
  // kube-proxy merges a Service's slices in name order.
  for (auto& v : slices_of_) {
    std::sort(v.begin(), v.end(), [](auto* a, auto* b) { return a->name < b->name; });
  }
}

bool IntentIndex::has_service(const std::string& service_key) const {
  return std::binary_search(service_keys_.begin(), service_keys_.end(), service_key);
}

std::vector<ExpectedFrontend> IntentIndex::expected_for(const std::string& node) const {
  std::vector<ExpectedFrontend> out;
  for (size_t si = 0; si < intent_.services.size(); ++si) {
    const auto& s = intent_.services[si];
    if (s.type == "ExternalName" || s.headless || s.cluster_ips.empty()) continue;
    const bool externally_accessible = !s.external_ips.empty() || !s.lb_ingress_ips.empty() ||
                                       std::any_of(s.ports.begin(), s.ports.end(), [](auto& p) { return p.node_port; });
    const bool itp_local = s.internal_traffic_policy == "Local";
    const bool etp_local = externally_accessible && s.external_traffic_policy == "Local";
    const bool uses_cluster = !itp_local || (externally_accessible && !etp_local);
    const bool uses_local = itp_local || etp_local;
    // One ClusterIP per family (dual-stack Services have two).
    std::set<std::string> families_done;
    for (const auto& cluster_ip : s.cluster_ips) {
      const std::string family = family_of_ip(cluster_ip);
      if (!families_done.insert(family).second) continue;
      const std::string address_type = family == "ipv6" ? "IPv6" : "IPv4";
      for (const auto& sp : s.ports) {
        const std::string svc_port_name = s.key() + (sp.name.empty() ? "" : ":" + sp.name);
        // endpointslicecache: the slices' endpoints for this port name and
        // protocol, the first address of each, a later slice's entry for the
        // same address:port replacing an earlier one.
        std::vector<Ep> eps;
        std::unordered_map<std::string, size_t> ep_at;
        for (const auto* es : slices_of_[si]) {
          if (es->address_type != address_type) continue;
          for (const auto& p : es->ports) {
            if (p.name != sp.name || p.protocol != sp.protocol || !p.port) continue;
            for (const auto& e : es->endpoints) {
              if (e.addresses.empty() || family_of_ip(e.addresses.front()) != family) continue;
              Ep ep;
              const std::string& a = e.addresses.front();
              ep.id = (family == "ipv6" ? "[" + a + "]" : a) + ":" + std::to_string(*p.port);
              ep.ready = e.ready.value_or(true);
              ep.serving = e.serving.value_or(true);
              ep.terminating = e.terminating.value_or(false);
              ep.local = !e.node_name.empty() && e.node_name == node;
              auto [it, fresh] = ep_at.emplace(ep.id, eps.size());
              if (fresh) eps.push_back(std::move(ep));
              else eps[it->second] = std::move(ep);
            }
          }
        }
        // topology.go CategorizeEndpoints (topology hints not applied).
        std::vector<std::string> cluster, local, known;
        bool has_any = false;
        for (const auto& e : eps) known.push_back(e.id);
        if (uses_cluster) {
          for (const auto& e : eps) if (e.ready) cluster.push_back(e.id);
          if (cluster.empty()) {
            for (const auto& e : eps) if (e.serving && e.terminating) cluster.push_back(e.id);
          }
          has_any = !cluster.empty();
        }
        if (uses_local) {
          bool local_ready = false, local_terminating = false;
          for (const auto& e : eps) {
            if (e.ready) {
              has_any = true;
              local_ready = local_ready || e.local;
            } else if (e.serving && e.terminating) {
              has_any = true;
              local_terminating = local_terminating || e.local;
            }
          }
          for (const auto& e : eps) {
            if (!e.local) continue;
            if (local_ready ? e.ready : local_terminating && e.serving && e.terminating) local.push_back(e.id);
          }
        }
        std::vector<std::string> reachable = cluster;
        reachable.insert(reachable.end(), local.begin(), local.end());
        sort_unique(cluster);
        sort_unique(local);
        sort_unique(reachable);
        sort_unique(known);
        const bool has_internal = has_any && !(itp_local && local.empty());
        const bool has_external = has_any && !(etp_local && local.empty());

        auto add = [&](const std::string& kind, const std::string& address, uint16_t port, bool external) {
          ExpectedFrontend f;
          f.service = svc_port_name;
          f.service_key = s.key();
          f.family = family;
          f.kind = kind;
          f.address = address;
          f.port = port;
          f.protocol = sp.protocol;
          const bool policy_local = external ? etp_local : itp_local;
          f.action = !has_any ? "reject" : !(external ? has_external : has_internal) ? "drop" : "forward";
          if (f.action == "forward") {
            f.policy = policy_local ? "local" : "cluster";
            f.endpoints = policy_local ? local : cluster;
          }
          f.reachable = reachable;
          f.known = known;
          out.push_back(std::move(f));
        };
        add("ClusterIP", cluster_ip, sp.port, false);
        for (const auto& ip : s.external_ips) {
          if (family_of_ip(ip) == family) add("ExternalIP", ip, sp.port, true);
        }
        for (const auto& ip : s.lb_ingress_ips) {
          if (family_of_ip(ip) == family) add("LoadBalancer", ip, sp.port, true);
        }
        if (sp.node_port) add("NodePort", "", sp.node_port, true);
      }
    }
  }
  return out;
}

// ---------------------------------------------------------------- comparison

std::string node_name_of(const model::Snapshot& s, const std::string& path) {
  if (!s.node.name.empty()) return s.node.name;
  const std::string file = std::filesystem::path(path).filename().string();
  return file.substr(0, file.find('.'));
}

model::RuleDetail verify_rule_detail(std::string_view chain) {
  return std::max(frontend_rule_detail(chain), rule_detail_for(chain));
}

namespace {

// Dataplanes a node has a service programming for (even an empty one).
std::vector<std::string> dataplanes_present(const model::Snapshot& s) {
  std::set<std::string> out;
  for (const auto& t : s.netfilter.tables) {
    // kube-proxy's ipvs mode has a KUBE-SERVICES chain too (ipset matches,
    // no KUBE-SVC chains): its Services are in IPVS, not in these rules.
    const bool ipvs_mode = model::find_chain(t, "KUBE-NODE-PORT") || model::find_chain(t, "KUBE-LOAD-BALANCER") ||
                           model::find_chain(t, "KUBE-LOOP-BACK");
    if (t.backend != model::Backend::Nftables && t.name == "nat" && model::find_chain(t, "KUBE-SERVICES") &&
        !ipvs_mode) {
      out.insert(model::to_string(t.backend));
    }
    if (t.backend == model::Backend::Nftables && t.name == "kube-proxy") out.insert("nftables");
  }
  for (const auto& l : s.ebpf.services) {
    if (l.decoded && !l.frontends.empty()) out.insert(l.dataplane);
  }
  if (s.ipvs.collected && s.ipvs.loaded && !s.ipvs.services.empty()) out.insert("ipvs");
  return {out.begin(), out.end()};
}

// Several entries for one frontend (a forward and a drop: Local policy with
// no local endpoint; a NodePort on several node addresses in eBPF): the drop
// or reject decides what outside traffic gets.
// Merged in place: the frontends of a 20k-Service node are ~100k records, and
// a second vector of them was verify's largest allocation after the snapshot.
std::vector<FrontendProgramming> merge_entries(std::vector<FrontendProgramming> in) {
  std::unordered_map<std::string, size_t> at;
  at.reserve(in.size());
  size_t kept = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    FrontendProgramming& f = in[i];
    auto [it, fresh] = at.emplace(f.dataplane + " " + f.family + " " + f.key(), kept);
    if (fresh) {
      if (kept != i) in[kept] = std::move(f);
      ++kept;
      continue;
    }
    FrontendProgramming& m = in[it->second];
    if (f.action != "forward" && m.action == "forward") {
      m.action = f.action;
      m.endpoints.clear();
      m.endpoint_count = 0;
      m.policy.clear();
      if (m.service.empty()) m.service = f.service;
      m.where += "; " + f.where;
    } else if (f.action == "forward" && m.action != "forward") {
      m.where += "; " + f.where;
      if (m.service.empty()) m.service = f.service;
    } else if (f.action == "forward" && !m.endpoints_known && !f.endpoints_known) {
      m.endpoint_count = std::max(m.endpoint_count, f.endpoint_count);
    }
  }
  in.erase(in.begin() + static_cast<std::ptrdiff_t>(kept), in.end());
  return in;
}

std::string join_or_none(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : " ") + x;
  return s.empty() ? "(none)" : s;
}

}  // namespace

NodeProgramming programming_of(const model::Snapshot& s) {
  NodeProgramming np;
  // What could not be read is named, never taken as "not programmed".
  const NodeAnalysis a = analyze(s);
  auto gap = [&](const Availability& av, const std::string& what) {
    // A section listed unavailable (not read at all, e.g. no CAP_NET_ADMIN) is a gap as much
    // as a partly read one: another dataplane on the node could be programmed there.
    if (av.unavailable || (av.collected && !av.complete())) np.not_verified.push_back(what + ": " + av.gap());
  };
  gap(a.netfilter.availability, "netfilter");
  gap(a.ebpf.services_av, "eBPF service maps");
  gap(a.ipvs.availability, "IPVS");
  // Without kube-ipvs0's addresses a NodePort's virtual services (one per
  // node address) cannot be told from a ClusterIP's.
  const bool ipvs_ports_unknown = a.ipvs.loaded && a.ipvs.services > 0 && !s.ipvs.interface_addresses;
  if (ipvs_ports_unknown) {
    np.not_verified.push_back("IPVS: the addresses of kube-ipvs0 / kube-dummy-if were not read (import --ip-addr), so "
                              "NodePort virtual services cannot be told from the others");
  }
  for (const auto& t : a.netfilter.service_rules_hidden) {
    np.not_verified.push_back(t + ": KUBE-SERVICES rules counted, not recorded (an nft -j import of iptables-nft)");
  }
  for (const auto& l : s.ebpf.services) {
    if (!l.decoded) np.not_verified.push_back(l.dataplane + " service maps not decoded: " + l.note);
  }
  // A dataplane whose source was not read in full is named above and not
  // compared: its gaps would read as missing frontends.
  const bool netfilter_gap = (a.netfilter.availability.collected && !a.netfilter.availability.complete()) ||
                             !a.netfilter.service_rules_hidden.empty();
  const bool ebpf_gap = a.ebpf.services_av.collected && !a.ebpf.services_av.complete();
  const std::vector<std::string> present = dataplanes_present(s);
  np.any_dataplane = !present.empty();
  for (const auto& p : present) {
    bool ebpf = p == "cilium" || p == "calico";
    if (p == "ipvs" ? !ipvs_ports_unknown : ebpf ? !ebpf_gap : !netfilter_gap) np.planes.push_back(p);
  }
  if (!np.planes.empty()) np.programmed = merge_entries(frontends_of(s));
  if (std::find(np.planes.begin(), np.planes.end(), "nftables") != np.planes.end()) {
    np.unreached = unreached_endpoint_chains(s);
  }
  return np;
}

NodeVerification verify_node(const IntentIndex& intent, const model::Snapshot& s, const std::string& node_name,
                             const std::string& source) {
  return verify_node(intent, programming_of(s), node_name, source);
}

NodeVerification verify_node(const IntentIndex& intent, const NodeProgramming& np, const std::string& node_name,
                             const std::string& source) {
  NodeVerification nv;
  nv.node = node_name;
  nv.source = source;
  const std::vector<ExpectedFrontend> expected = intent.expected_for(node_name);
  std::set<std::string> expected_services;
  for (const auto& e : expected) expected_services.insert(e.service_key);
  nv.services_expected = expected_services.size();
  nv.not_verified = np.not_verified;
  for (const auto& why : nv.not_verified) {
    nv.findings.push_back({"not-verified", node_name, "", "", "", "", "complete snapshot", why, ""});
  }
  const std::vector<std::string>& planes = np.planes;
  if (planes.empty() && np.any_dataplane) return nv;
  if (planes.empty()) {
    if (!expected.empty() && nv.not_verified.empty()) {
      nv.findings.push_back({"no-dataplane", node_name, "", "", "", "",
                             std::to_string(expected.size()) + " frontends of " +
                                 std::to_string(nv.services_expected) + " Services",
                             "no kube-proxy iptables / nftables rules, no IPVS virtual services and no eBPF service maps", ""});
    }
    return nv;
  }
  const std::vector<FrontendProgramming>& programmed = np.programmed;

  for (const auto& plane : planes) {
    DataplaneVerification dv;
    dv.dataplane = plane;
    std::vector<Finding> found;
    // This dataplane's entries by key; consumed as expected ones match them.
    std::unordered_map<std::string, size_t> by_key;
    std::vector<const FrontendProgramming*> mine;
    for (const auto& p : programmed) {
      if (p.dataplane != plane) continue;
      by_key.emplace(p.family + " " + p.key(), mine.size());
      mine.push_back(&p);
    }
    dv.frontends_programmed = mine.size();
    std::vector<bool> used(mine.size(), false);
    std::vector<const ExpectedFrontend*> missing;
    // nftables names endpoints per service port: one finding per endpoint, not per frontend.
    std::set<std::string> port_findings;
    for (const auto& e : expected) {
      dv.frontends_expected += 1;
      auto it = by_key.find(e.family + " " + e.key());
      if (it == by_key.end()) {
        missing.push_back(&e);
        continue;
      }
      used[it->second] = true;
      const FrontendProgramming& p = *mine[it->second];
      const std::string fe = describe(e.key(), e.kind);
      size_t before = found.size();
      // An eBPF service entry without backends does not say whether its
      // traffic is rejected or dropped (the agent's setting decides): both
      // are "no endpoints" there.
      // Nor does an IPVS virtual service without real servers: IPVS answers
      // ICMP unreachable whether kube-proxy meant a reject or a drop.
      const bool ebpf = plane == "cilium" || plane == "calico";
      const bool no_endpoints_alike = ebpf || plane == "ipvs";
      const bool same_action = p.action == e.action || (no_endpoints_alike && p.action != "forward" && e.action != "forward");
      if (!same_action) {
        found.push_back({"wrong-action", node_name, plane, e.service, fe, "",
                         e.action + (e.action == "forward" ? " to " + join_or_none(e.endpoints) : ""),
                         p.action, p.where});
      } else if (e.action == "forward") {
        if (!p.policy.empty() && p.policy != e.policy) {
          found.push_back({"wrong-policy", node_name, plane, e.service, fe, "", e.policy + " traffic policy",
                           p.policy + " traffic policy", p.where});
        }
        if (!p.endpoints_known) {
          dv.endpoints_checked += 1;
          if (p.endpoint_count != e.endpoints.size()) {
            found.push_back({"endpoint-count", node_name, plane, e.service, fe, "",
                             std::to_string(e.endpoints.size()) + " endpoints",
                             std::to_string(p.endpoint_count) + " backends", p.where});
          }
        } else {
          const auto& want = p.endpoints_of_service_port ? e.reachable : e.endpoints;
          dv.endpoints_checked += want.size();
          std::vector<std::string> lack, extra;
          std::set_difference(want.begin(), want.end(), p.endpoints.begin(), p.endpoints.end(), std::back_inserter(lack));
          std::set_difference(p.endpoints.begin(), p.endpoints.end(), want.begin(), want.end(), std::back_inserter(extra));
          auto add = [&](const std::string& id, const std::string& ep, const std::string& exp, const std::string& act) {
            if (p.endpoints_of_service_port && !port_findings.insert(id + " " + e.service + " " + ep).second) return;
            found.push_back({id, node_name, plane, e.service, p.endpoints_of_service_port ? e.service + " (every frontend)" : fe,
                             ep, exp, act, p.where});
          };
          for (const auto& ep : lack) add("missing-endpoint", ep, "programmed", "not programmed");
          for (const auto& ep : extra) {
            bool known = std::binary_search(e.known.begin(), e.known.end(), ep);
            add(known ? "stale-endpoint" : "extra-endpoint", ep,
                known ? "not used (not ready, terminating with ready ones, or not on this node under Local policy)"
                      : "not in the Service's EndpointSlices",
                "programmed");
          }
        }
      }
      if (found.size() == before) dv.frontends_ok += 1;
    }
    // Entries nobody expected: a port or protocol that changed, a frontend the
    // Service no longer has, or a Service that is gone.
    std::unordered_map<std::string, std::vector<size_t>> unused_by_service;
    for (size_t i = 0; i < mine.size(); ++i) {
      if (!used[i]) unused_by_service[mine[i]->service].push_back(i);
    }
    for (const ExpectedFrontend* e : missing) {
      const std::string fe = describe(e->key(), e->kind);
      const FrontendProgramming* pair = nullptr;
      std::string id;
      auto it = unused_by_service.find(e->service);
      for (int pass = 0; pass < 2 && !pair; ++pass) {
        // Pass 0: same service name; pass 1: an unnamed entry (eBPF) at the same address.
        const std::vector<size_t>* cands = nullptr;
        if (pass == 0 && it != unused_by_service.end()) cands = &it->second;
        if (pass == 1) {
          auto un = unused_by_service.find("");
          if (un != unused_by_service.end() && !e->address.empty()) cands = &un->second;
        }
        if (!cands) continue;
        for (size_t i : *cands) {
          const FrontendProgramming& p = *mine[i];
          if (used[i] || p.family != e->family || p.address != e->address) continue;
          if (p.protocol == e->protocol && p.port != e->port) id = "wrong-port";
          else if (p.protocol != e->protocol && p.port == e->port) id = "wrong-protocol";
          else continue;
          used[i] = true;
          pair = &p;
          break;
        }
      }
      if (pair) {
        found.push_back({id, node_name, plane, e->service, fe, "", e->key(), pair->key(), pair->where});
      } else {
        found.push_back({"missing-frontend", node_name, plane, e->service, fe, "",
                         e->action == "forward" ? "forward to " + join_or_none(e->endpoints) : e->action, "not programmed", ""});
      }
    }
    for (size_t i = 0; i < mine.size(); ++i) {
      if (used[i]) continue;
      const FrontendProgramming& p = *mine[i];
      bool known = p.service.empty() ? false : intent.has_service(service_key_of(p.service));
      if (p.service.empty()) {
        // eBPF frontends carry no name: known when some expected frontend has the address.
        known = std::any_of(expected.begin(), expected.end(), [&](auto& e) { return !p.address.empty() && e.address == p.address; });
      }
      found.push_back({known ? "extra-frontend" : "stale-service", node_name, plane, p.service,
                       describe(p.key(), p.kind), "", known ? "not a frontend of the Service" : "no such Service in the cluster",
                       p.action + (p.action == "forward" ? " to " + join_or_none(p.endpoints) : ""), p.where});
    }
    // An endpoint chain no service's pick reaches forwards nothing: stale
    // state (kube-proxy flushes a chain it retires, then deletes it).
    if (plane == "nftables") {
      for (const auto& u : np.unreached) {
        found.push_back({"stale-endpoint-chain", node_name, plane, u.service, "", u.endpoint,
                         "reached by the Service's endpoint pick, or removed",
                         "no verdict map reaches it (" + std::to_string(u.rules) + " rules)",
                         u.table + " chain " + u.chain});
      }
    }
    std::set<std::string> bad;
    for (const auto& f : found) bad.insert(service_key_of(f.service));
    for (const auto& k : expected_services) dv.services_ok += bad.count(k) ? 0 : 1;
    nv.dataplanes.push_back(dv);
    nv.findings.insert(nv.findings.end(), std::make_move_iterator(found.begin()), std::make_move_iterator(found.end()));
  }
  return nv;
}

bool ClusterVerification::ok() const {
  return std::all_of(nodes.begin(), nodes.end(), [](auto& n) { return n.ok(); });
}

ClusterVerification summarize(const IntentIndex& intent, std::vector<NodeVerification> nodes) {
  ClusterVerification c;
  c.intent_inputs = intent.intent().inputs;
  c.services_expected = intent.services_to_program();
  c.services_nothing_to_program = intent.services_nothing_to_program();
  c.hinted_endpoints = intent.hinted_endpoints();
  std::set<std::string> bad;
  bool node_wide_gap = false;
  for (const auto& n : nodes) {
    for (const auto& f : n.findings) {
      if (f.service.empty() && (f.id == "not-verified" || f.id == "no-dataplane")) node_wide_gap = true;
      if (!f.service.empty()) bad.insert(service_key_of(f.service));
    }
  }
  if (!node_wide_gap) {
    uint64_t bad_expected = 0;
    for (const auto& k : bad) bad_expected += intent.has_service(k) ? 1 : 0;
    c.services_ok_everywhere = c.services_expected - std::min(c.services_expected, bad_expected);
  }
  c.nodes = std::move(nodes);
  return c;
}

}  // namespace dpscope::analysis
