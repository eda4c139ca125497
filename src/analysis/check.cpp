#include "analysis/check.h"
#include "analysis/ipvs.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>

namespace dpscope::analysis {

namespace {

std::string join(const std::vector<std::string>& v, size_t max = 8) {
  std::string out;
  for (size_t i = 0; i < v.size() && i < max; ++i) out += (i ? ", " : "") + v[i];
  if (v.size() > max) out += ", ... (" + std::to_string(v.size() - max) + " more)";
  return out;
}

std::string count(uint64_t n, const std::string& one, const std::string& many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// Addresses in kube-proxy's nftables service-ips maps ("10.96.0.1 . tcp . 443").
std::set<std::string> nft_service_addresses(const model::Snapshot& s) {
  std::set<std::string> out;
  for (const auto& t : s.netfilter.tables) {
    if (t.backend != model::Backend::Nftables || t.name != "kube-proxy") continue;
    for (const auto& set : t.sets) {
      if (set.name != "service-ips") continue;
      for (const auto& e : set.elements) out.insert(e.key.substr(0, e.key.find(' ')));
    }
  }
  return out;
}

// kube-proxy's KUBE-* chains in the iptables tables (of one backend when given).
std::vector<std::string> kube_proxy_chain_names(const model::Snapshot& s,
                                                std::optional<model::Backend> only = std::nullopt) {
  std::set<std::string> names;
  for (const auto& t : s.netfilter.tables) {
    if (t.backend == model::Backend::Nftables || (only && t.backend != *only)) continue;
    for (const auto& c : t.chains) {
      if (!c.base && family_of(c.name, false).owner == "kube-proxy") names.insert(c.name);
    }
  }
  return {names.begin(), names.end()};
}

// Which kube-proxy, if any, should still run: what a cleanup must keep.
enum class KubeProxyRuns { None, Iptables, Ipvs, Nftables };

// kube-proxy's objects left where they should not be, per backend, and the
// cleanups the tools' authors document for them (text to copy; never run).
// `families`: only chains of these families ({}: all of kube-proxy's);
// `nft_tables`: orphan kube-proxy nftables tables.
void add_leftovers(const model::Snapshot& s, const std::vector<std::string>& families,
                   const std::vector<std::string>& nft_tables, KubeProxyRuns runs, CheckResult& r) {
  std::set<std::pair<std::string, std::string>> saves;  // (backend tool, family) holding leftovers
  for (auto backend : {model::Backend::IptablesNft, model::Backend::IptablesLegacy}) {
    std::set<std::string> names;
    for (const auto& t : s.netfilter.tables) {
      if (t.backend != backend) continue;
      for (const auto& c : t.chains) {
        if (c.base) continue;
        const auto& fam = family_of(c.name, false);
        if (fam.owner != "kube-proxy") continue;
        if (!families.empty() && std::find(families.begin(), families.end(), fam.id) == families.end()) continue;
        names.insert(c.name);
        saves.insert({backend == model::Backend::IptablesLegacy ? "iptables-legacy" : "iptables", t.family});
      }
    }
    if (!names.empty()) r.leftovers.push_back({model::to_string(backend), {names.begin(), names.end()}});
  }
  if (!nft_tables.empty()) r.leftovers.push_back({"nftables", nft_tables});
  if (r.leftovers.empty()) return;
  if (!saves.empty() && runs != KubeProxyRuns::Iptables) {
    r.cleanup.push_back(
        {"kube-proxy --cleanup",
         "kube-proxy's own (kubernetes.io/docs/reference/command-line-tools-reference/kube-proxy/, --cleanup): "
         "removes the iptables, IPVS and nftables rules of every kube-proxy mode" +
             std::string(runs == KubeProxyRuns::None ? ""
                                                     : ", the running mode's too: restart kube-proxy after, so it "
                                                       "programs its own again")});
  }
  // The Cilium docs' line, per backend and family holding leftovers. Not next
  // to the ipvs mode: its own chains are KUBE-* too.
  if (runs == KubeProxyRuns::None || runs == KubeProxyRuns::Nftables) {
    for (const auto& [save, family] : saves) {
      const std::string tool = (family == "ip6" ? "ip6" : "") + save;  // ip6tables, ip6tables-legacy
      r.cleanup.push_back({tool + "-save | grep -v KUBE | " + tool + "-restore",
                           "the Cilium docs' kube-proxy replacement guide (docs.cilium.io/en/stable/network/kubernetes/"
                           "kubeproxy-free/, \"iptables-save | grep -v KUBE | iptables-restore\"): drops every KUBE-* "
                           "line, kubelet's KUBE-FIREWALL and KUBE-KUBELET-CANARY too (kubelet creates them again)"});
    }
  }
  for (const auto& t : nft_tables) {
    r.cleanup.push_back({"nft delete table " + t, "nft(8): the table and everything in it"});
  }
}

// A gate never passes on what it could not see: a missing, unreadable or
// partial section is a problem of its own.
void need_section(const Availability& a, const std::string& section, const std::string& why, CheckResult& r) {
  if (a.unavailable) {
    r.problems.push_back({"section-unavailable", section + " could not be read (" + a.reason + "), so " + why +
                                                     " cannot be checked"});
  } else if (!a.collected) {
    r.problems.push_back({"section-missing", "the snapshot does not hold " + section +
                                                 (a.reason.empty() ? "" : " (" + a.reason + ")") + ", so " + why +
                                                 " cannot be checked"});
  } else {
    for (const auto& i : a.incomplete) {
      r.problems.push_back({"section-incomplete", "part of " + section + " could not be read (" + i + "), so " + why +
                                                      " cannot be checked in full"});
    }
    // A gate concludes for the whole node: a part the import left out is missing, not empty.
    for (const auto& i : a.not_imported) {
      r.problems.push_back({"section-missing", "the snapshot does not hold " + i + ", so " + why +
                                                   " cannot be checked there"});
    }
  }
}

// kube-proxy iptables-mode objects of one backend.
struct BackendLeftovers {
  std::string backend;
  uint64_t svc = 0, sep = 0, kube_services = 0, service_ip = 0;
  bool any() const { return svc + sep + kube_services > 0; }
};

std::vector<BackendLeftovers> leftovers_by_backend(const NetfilterAnalysis& n, const model::Snapshot& s) {
  std::vector<BackendLeftovers> out;
  for (auto backend : {model::Backend::IptablesNft, model::Backend::IptablesLegacy}) {
    BackendLeftovers b;
    b.backend = model::to_string(backend);
    for (const auto& t : s.netfilter.tables) {
      if (t.backend != backend) continue;
      for (const auto& c : t.chains) {
        if (c.base) continue;
        const auto& fam = family_of(c.name, false);
        if (fam.id == "KUBE-SVC") b.svc += 1;
        if (fam.id == "KUBE-SEP") b.sep += 1;
        if (c.name == "KUBE-SERVICES") b.kube_services += c.rule_count;
      }
    }
    for (const auto& ts : n.tables) {
      if (ts.backend == backend) b.service_ip += ts.service_ip_rules;
    }
    if (b.any()) out.push_back(b);
  }
  return out;
}

// "iptables-nft: 5 KUBE-SVC chains, 8 KUBE-SEP chains, 5 rules in KUBE-SERVICES (4 of them
// service-IP rules, one per ClusterIP/external IP and port; the rest NodePort and other dispatch)"
std::string describe(const BackendLeftovers& b, bool service_ips_visible) {
  std::string out = b.backend + ": " + count(b.svc, "KUBE-SVC chain", "KUBE-SVC chains") + ", " +
                    count(b.sep, "KUBE-SEP chain", "KUBE-SEP chains") + ", " +
                    count(b.kube_services, "rule", "rules") + " in KUBE-SERVICES (filter and nat)";
  if (b.kube_services > 0 && service_ips_visible) {
    out += ": " + std::to_string(b.service_ip) + " of them service-IP rules (destination one address), " +
           std::to_string(b.kube_services - std::min(b.kube_services, b.service_ip)) +
           " other (NodePort jump, no-endpoint rejects, ...)";
  }
  return out;
}

// Virtual services in the kernel's IPVS table on a node whose expected
// service dataplane is not IPVS: left by kube-proxy's ipvs mode (or
// kube-router), and still answering for their addresses next to the new
// dataplane (projectcalico/calico#12476, cilium/cilium#27982).
void no_ipvs(const IpvsAnalysis& v, const std::string& instead, CheckResult& r) {
  if (!v.visible()) return;  // not read: nothing concluded (the section's gap is named by where/verify)
  if (v.loaded && v.services > 0) {
    r.problems.push_back({"stale-ipvs", "IPVS virtual services are left next to " + instead + " (" + describe(v) +
                                            "): kube-proxy's ipvs mode or kube-router programmed them, and IPVS still "
                                            "answers for their addresses"});
  } else {
    r.passed.push_back(v.loaded ? "the kernel's IPVS table is empty" : "no IPVS in this kernel (ip_vs not loaded)");
  }
}

// The IPVS table an IPVS proxy (kube-proxy's ipvs mode, kube-router) serves
// its Services from: there, loaded, and not empty.
void need_ipvs(const IpvsAnalysis& v, const std::string& proxy, CheckResult& r) {
  if (!v.visible()) {
    r.passed.push_back(ipvs_hidden(v, proxy) + ": the virtual services are not checked");
  } else if (!v.loaded) {
    r.problems.push_back({"ipvs-not-loaded", "this kernel has no IPVS (ip_vs not loaded): " + proxy +
                                                 " cannot serve a Service here"});
  } else if (v.services == 0) {
    r.problems.push_back({"ipvs-empty", "the kernel's IPVS table holds no virtual service: " + proxy +
                                            " serves no Service here (a cluster has at least the kubernetes Service)"});
  } else {
    r.passed.push_back(describe(v));
  }
}

// kube-proxy gone: none of its iptables rules, chains or nftables table left.
void no_kube_proxy(const model::Snapshot& s, const NetfilterAnalysis& n, bool stale_iptables,
                   const std::string& iptables_objects, bool nf_complete, CheckResult& r) {
  if (stale_iptables) {
    r.problems.push_back({"stale-kube-proxy-iptables", "kube-proxy iptables rules are still installed: " +
                                                           iptables_objects});
  } else if (nf_complete) {
    r.passed.push_back("no KUBE-SVC, KUBE-SEP or KUBE-SERVICES rules");
  }
  auto chains = kube_proxy_chain_names(s);
  if (!chains.empty() && !stale_iptables) {
    r.problems.push_back({"stale-kube-proxy-chains", count(chains.size(), "kube-proxy chain is", "kube-proxy chains are") +
                                                         " left (empty ones included): " + join(chains)});
  }
  if (n.kube_proxy_nft.present) {
    r.problems.push_back({"orphan-kube-proxy-nft-table", "nftables table " + join(n.kube_proxy_nft.tables) +
                                                             " is left with " +
                                                             count(n.kube_proxy_nft.services, "service-ips element",
                                                                   "service-ips elements")});
  }
  add_leftovers(s, {}, n.kube_proxy_nft.present ? n.kube_proxy_nft.tables : std::vector<std::string>{},
                KubeProxyRuns::None, r);
}

uint64_t lb_frontends(const EbpfAnalysis& e, std::string_view dataplane) {
  const LbSummary* l = e.lb_of(dataplane);
  return l ? l->frontends : 0;
}

// The replacement's eBPF service map: read in full, decoded, with frontends of `dataplane`.
void need_lb(const NodeAnalysis& a, const std::string& dataplane, const std::string& label, CheckResult& r) {
  need_section(a.ebpf.services_av, "the eBPF service maps' entries", label + "'s service map", r);
  if (!a.ebpf.services_av.complete()) return;
  const LbSummary* l = a.ebpf.lb_of(dataplane);
  if (l && !l->decoded) {
    r.problems.push_back({"section-incomplete", label + "'s service map was found but not decoded (" + l->note +
                                                    "), so its frontends cannot be checked"});
  } else if (lb_frontends(a.ebpf, dataplane) == 0) {
    r.problems.push_back({(dataplane == "calico" ? "calico-ebpf" : dataplane) + "-missing", "no " + label + " service map with frontends: " + label +
                                                                   " does not serve Services on this node (detected: " +
                                                                   a.mode.label + ")"});
  } else {
    r.passed.push_back(count(lb_frontends(a.ebpf, dataplane), "frontend", "frontends") + " in " + label +
                       "'s service map");
  }
}

// A dataplane that serves Services where dpscope cannot read (OVS, IPVS): found
// by its fingerprints; its Services themselves are not checked, and the result says so.
void need_dataplane(const NodeAnalysis& a, const std::string& id, const std::string& missing, bool complete,
                    CheckResult& r) {
  const Dataplane* d = find_dataplane(a.mode.dataplanes, id);
  if (d && (id != "kube-router" || d->serves_services)) {
    std::string ev;
    for (size_t i = 0; i < d->evidence.size() && i < 3; ++i) ev += (i ? "; " : "") + d->evidence[i];
    r.passed.push_back(d->label + " found: " + ev);
    if (!d->services_hidden.empty()) r.passed.push_back(d->services_hidden + ": its Services are not checked");
  } else if (complete) {
    r.problems.push_back({id + "-missing", missing + (d ? "" : " (detected: " + a.mode.label + ")")});
  }
}

}  // namespace

const std::vector<std::string>& check_expectations() {
  static const std::vector<std::string> kExpect = {
      "kube-proxy-free", "kube-proxy-iptables", "kube-proxy-nftables", "kube-proxy-ipvs", "kube-router",
      "calico-ebpf",     "calico-nftables",     "cilium",              "antrea-proxy",    "ovn-kubernetes"};
  return kExpect;
}

std::vector<std::string> double_programmed(const model::Snapshot& s) {
  // address -> the service dataplanes that program it
  std::map<std::string, std::set<std::string>> planes;
  auto a = analyze(s);
  for (const auto& ip : a.netfilter.service_ips) planes[ip].insert("netfilter");
  for (const auto& ip : nft_service_addresses(s)) planes[ip].insert("netfilter");
  for (const auto& svc : s.ebpf.services) {
    for (const auto& f : svc.frontends) planes[f.address].insert("eBPF");
  }
  // kube-proxy's ipvs mode matches its ClusterIPs by ipset in KUBE-SERVICES,
  // not by address, so its own rules never count here.
  if (a.ipvs.loaded) {
    for (const auto& ip : a.ipvs.addresses) planes[ip].insert("IPVS");
  }
  std::vector<std::string> out;
  for (const auto& [ip, where] : planes) {
    if (where.size() < 2) continue;
    std::string names;
    for (const auto& w : where) names += (names.empty() ? "" : " + ") + w;
    out.push_back(ip + " (" + names + ")");
  }
  return out;
}

CheckResult check(const model::Snapshot& s, const std::string& expect) {
  const auto& known = check_expectations();
  if (std::find(known.begin(), known.end(), expect) == known.end()) {
    std::string list;
    for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
    throw std::invalid_argument("unknown expectation '" + expect + "' (" + list + ")");
  }
  CheckResult r;
  r.expect = expect;
  r.node = s.node.name;
  NodeAnalysis a = analyze(s);
  r.mode = a.mode.id;
  const auto& n = a.netfilter;
  need_section(n.availability, "netfilter", "kube-proxy's rules", r);
  if (n.availability.usable() && !n.service_ips_visible()) {
    r.problems.push_back({"section-incomplete", n.service_ips_av().reason + ", so double-programmed services "
                                                                              "cannot be checked"});
  }
  const bool nf_complete = n.availability.whole();

  // Both iptables backends holding rules: two rule sets the kernel runs, one of
  // them usually forgotten.
  if (n.legacy_rules > 0 && n.iptables_nft_rules > 0) {
    r.problems.push_back({"mixed-backends", "rules in both iptables backends: " +
                                                count(n.iptables_nft_rules, "rule", "rules") + " in iptables-nft and " +
                                                count(n.legacy_rules, "rule", "rules") + " in iptables-legacy"});
  } else if (nf_complete && n.legacy_rules + n.iptables_nft_rules == 0) {
    r.passed.push_back(n.nftables_rules > 0 ? "no iptables backend holds rules (only native nftables: " +
                                                  count(n.nftables_rules, "rule", "rules") + ")"
                                            : "no iptables backend holds rules");
  } else if (nf_complete) {
    r.passed.push_back(std::string("only one iptables backend holds rules (") +
                       (n.legacy_rules > 0 ? "iptables-legacy" : "iptables-nft") + ")");
  }

  std::vector<std::string> dup = double_programmed(s);
  if (!dup.empty()) {
    r.problems.push_back({"double-programmed", count(dup.size(), "service address is", "service addresses are") +
                                                   " programmed by more than one service dataplane (netfilter rules, an eBPF service map, IPVS): " +
                                                   join(dup)});
  }

  bool stale_iptables = n.kube_svc_chains + n.kube_sep_chains + n.kube_services_rules > 0;
  std::string iptables_objects;
  for (const auto& b : leftovers_by_backend(n, s)) {
    iptables_objects += (iptables_objects.empty() ? "" : "; ") + describe(b, n.service_ips_visible());
  }

  const uint64_t ipvs_chains = n.families.count("KUBE-ipvs") ? n.families.at("KUBE-ipvs").chains : 0;
  if (expect == "kube-proxy-ipvs") {
    if (nf_complete && ipvs_chains == 0) {
      r.problems.push_back({"kube-proxy-missing", "no chain of kube-proxy's ipvs mode (KUBE-LOAD-BALANCER, KUBE-NODE-PORT, "
                                                  "KUBE-IPVS-FILTER, ...): kube-proxy does not run in ipvs mode"});
    } else if (ipvs_chains > 0) {
      r.passed.push_back(count(ipvs_chains, "chain", "chains") + " of kube-proxy's ipvs mode");
    }
    need_ipvs(a.ipvs, "kube-proxy's ipvs mode", r);
    if (n.kube_svc_chains + n.kube_sep_chains > 0) {
      r.problems.push_back({"stale-kube-proxy-iptables", "chains of kube-proxy's iptables mode are left: " +
                                                             iptables_objects});
    }
    if (n.kube_proxy_nft.present) {
      r.problems.push_back({"orphan-kube-proxy-nft-table", "nftables table " + join(n.kube_proxy_nft.tables) +
                                                               " exists next to the ipvs mode"});
    }
    if (n.kube_svc_chains + n.kube_sep_chains > 0 || n.kube_proxy_nft.present) {
      add_leftovers(s, n.kube_svc_chains + n.kube_sep_chains > 0 ? std::vector<std::string>{"KUBE-SVC", "KUBE-SEP"}
                                                                 : std::vector<std::string>{"-"},
                    n.kube_proxy_nft.present ? n.kube_proxy_nft.tables : std::vector<std::string>{},
                    KubeProxyRuns::Ipvs, r);
    }
    return r;
  }
  if (expect == "kube-router" || expect == "antrea-proxy" || expect == "ovn-kubernetes") {
    // Replacements whose Services dpscope cannot read: the gate checks that the
    // replacement is there and that kube-proxy is gone.
    no_kube_proxy(s, n, stale_iptables, iptables_objects, nf_complete, r);
    if (expect != "kube-router") no_ipvs(a.ipvs, expect == "antrea-proxy" ? "AntreaProxy" : "OVN-Kubernetes", r);
    if (expect == "kube-router") {
      need_dataplane(a, "kube-router",
                     "no kube-router service proxy chain (KUBE-ROUTER-SERVICES, KUBE-ROUTER-HAIRPIN): nothing "
                     "replaces kube-proxy on this node",
                     nf_complete, r);
      const Dataplane* router = find_dataplane(a.mode.dataplanes, "kube-router");
      if (router && router->serves_services) need_ipvs(a.ipvs, "kube-router", r);
    } else if (expect == "antrea-proxy") {
      need_dataplane(a, "antrea", "no Antrea chain (ANTREA-*) or nftables table ip/ip6 antrea: Antrea does not run here",
                     nf_complete && n.native.whole(), r);
    } else {
      need_dataplane(a, "ovn-kubernetes",
                     "no OVN-Kubernetes chain (OVN-KUBE-*) or nftables table inet ovn-kubernetes: OVN-Kubernetes "
                     "does not run here",
                     nf_complete && n.native.whole(), r);
    }
    return r;
  }
  if (expect == "cilium" || expect == "calico-ebpf") {
    no_kube_proxy(s, n, stale_iptables, iptables_objects, nf_complete, r);
    no_ipvs(a.ipvs, expect == "cilium" ? "Cilium" : "Calico eBPF", r);
    if (expect == "cilium") {
      need_lb(a, "cilium", "Cilium", r);
    } else {
      need_lb(a, "calico", "Calico eBPF", r);
    }
    return r;
  }
  if (expect == "calico-nftables") {
    need_section(n.native, "native nftables", "Calico's nftables tables", r);
    const Dataplane* nft = find_dataplane(a.mode.dataplanes, "calico-nftables");
    if (nft) {
      r.passed.push_back(nft->label + ": " + join(nft->evidence, 3));
    } else if (n.native.whole()) {
      r.problems.push_back({"calico-nftables-missing",
                            "no nftables table ip/ip6 calico with chains: Calico does not run its nftables dataplane" +
                                std::string(n.calico_chains > 0 ? " (" + count(n.calico_chains, "cali-* iptables chain",
                                                                                "cali-* iptables chains") +
                                                                      ": its iptables dataplane)"
                                                                : "")});
    }
    if (n.calico_chains > 0 && nft) {
      r.problems.push_back({"calico-iptables-left", count(n.calico_chains, "cali-* chain", "cali-* chains") +
                                                        " of Calico's iptables dataplane are left next to its "
                                                        "nftables tables"});
    }
    if (lb_frontends(a.ebpf, "calico") > 0) {
      r.problems.push_back({"calico-ebpf-active", "Calico's eBPF NAT map holds " +
                                                      count(lb_frontends(a.ebpf, "calico"), "frontend", "frontends") +
                                                      ": its eBPF dataplane, not nftables"});
    }
    return r;
  }

  if (expect == "kube-proxy-free") {
    no_kube_proxy(s, n, stale_iptables, iptables_objects, nf_complete, r);
    // kube-router replaces kube-proxy with IPVS: there its virtual services
    // are the replacement, not leftovers.
    const Dataplane* router = find_dataplane(a.mode.dataplanes, "kube-router");
    if (router && router->serves_services && a.ipvs.visible() && a.ipvs.loaded && a.ipvs.services > 0) {
      r.passed.push_back("kube-router serves Services in IPVS: " + describe(a.ipvs));
      return r;
    }
    if (!router || !router->serves_services) no_ipvs(a.ipvs, "the replacement", r);
    uint64_t any_frontends = 0;
    for (const auto& l : a.ebpf.lb) any_frontends += l.frontends;
    if (any_frontends == 0 && !a.mode.services_hidden.empty()) {
      // The replacement is one whose Services live where dpscope cannot read.
      r.problems.push_back({"replacement-not-visible", a.mode.services_hidden +
                                                           ", so the replacement cannot be checked" +
                                                           (a.mode.id.rfind("kube-proxy", 0) == 0
                                                                ? std::string()
                                                                : " (use --expect " +
                                                                      a.mode.id.substr(0, a.mode.id.find("-unconfirmed")) + ")")});
      return r;
    }
    need_section(a.ebpf.services_av, "the eBPF service maps' entries", "the replacement's service map", r);
    if (a.ebpf.services_av.complete()) {
      uint64_t frontends = 0;
      bool refused = false;
      for (const auto& l : a.ebpf.lb) {
        frontends += l.frontends;
        refused = refused || !l.decoded;
      }
      if (frontends == 0 && refused) {
        r.problems.push_back({"section-incomplete", "an eBPF service map was found but not decoded, so the "
                                                    "replacement's frontends cannot be checked"});
      } else if (frontends == 0) {
        r.problems.push_back({"no-ebpf-service-map", "no eBPF service map with frontends (Cilium or Calico) was "
                                                     "found: nothing replaces kube-proxy on this node"});
      } else {
        r.passed.push_back(count(frontends, "frontend", "frontends") + " in the eBPF service map");
      }
    }
  } else if (expect == "kube-proxy-iptables") {
    if (nf_complete && n.kube_services_rules == 0) {
      r.problems.push_back({"kube-proxy-missing", "KUBE-SERVICES has no rules: kube-proxy's iptables rules are "
                                                  "not installed"});
    } else if (nf_complete) {
      r.passed.push_back("kube-proxy iptables rules present: " + iptables_objects);
    }
    if (n.kube_proxy_nft.present) {
      r.problems.push_back({"orphan-kube-proxy-nft-table", "nftables table " + join(n.kube_proxy_nft.tables) +
                                                               " exists next to the iptables rules"});
      add_leftovers(s, {"-"}, n.kube_proxy_nft.tables, KubeProxyRuns::Iptables, r);
    }
    no_ipvs(a.ipvs, "kube-proxy's iptables mode", r);
  } else {  // kube-proxy-nftables
    no_ipvs(a.ipvs, "kube-proxy's nftables mode", r);
    if (nf_complete && !n.kube_proxy_nft.present) {
      r.problems.push_back({"kube-proxy-missing", "no nftables table ip/ip6 kube-proxy"});
    } else if (n.kube_proxy_nft.present) {
      r.passed.push_back("nftables table " + join(n.kube_proxy_nft.tables) + " with " +
                         count(n.kube_proxy_nft.services, "service-ips element", "service-ips elements"));
    }
    if (stale_iptables) {
      r.problems.push_back({"stale-kube-proxy-iptables", "iptables rules of kube-proxy's iptables mode are left: " +
                                                             iptables_objects});
    }
    // kube-proxy's own KUBE-* chains (empty ones too) in either iptables
    // backend: its iptables mode's leftovers, named per backend. kubelet's
    // chains (KUBE-FIREWALL, KUBE-KUBELET-CANARY, KUBE-IPTABLES-HINT) are not.
    for (auto backend : {model::Backend::IptablesNft, model::Backend::IptablesLegacy}) {
      auto chains = kube_proxy_chain_names(s, backend);
      if (chains.empty()) continue;
      r.problems.push_back({"stale-kube-proxy-chains", std::string(model::to_string(backend)) + ": " +
                                                           count(chains.size(), "chain of kube-proxy's iptables mode is",
                                                                 "chains of kube-proxy's iptables mode are") +
                                                           " left (empty ones included): " + join(chains)});
    }
    if (nf_complete && kube_proxy_chain_names(s).empty()) {
      r.passed.push_back("no chain of kube-proxy's iptables mode in either iptables backend");
    }
    add_leftovers(s, {}, {}, KubeProxyRuns::Nftables, r);
  }
  return r;
}

}  // namespace dpscope::analysis
