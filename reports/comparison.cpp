#include "reports/comparison.h"

#include "reports/resident_cost.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <set>

namespace dpscope::reports {

using analysis::Availability;
using analysis::NodeAnalysis;

Cell Cell::num(uint64_t n, std::string display) {
  Cell c;
  c.kind = Kind::Number;
  c.number = n;
  c.display = std::move(display);
  return c;
}
Cell Cell::str(std::string s) {
  Cell c;
  c.kind = Kind::Text;
  c.text = std::move(s);
  return c;
}
Cell Cell::unavailable(std::string reason) {
  Cell c;
  c.kind = Kind::Unavailable;
  c.text = std::move(reason);
  return c;
}
Cell Cell::not_collected(std::string reason) {
  Cell c;
  c.text = std::move(reason);
  return c;
}

std::string Cell::shown() const {
  switch (kind) {
    case Kind::Number: {
      std::string s = display.empty() ? std::to_string(number) : display;
      if (incomplete) s += " (incomplete)";
      return s;
    }
    case Kind::Text: return text;
    // The reason is said once per section (section_gaps), not in every cell.
    case Kind::Unavailable:
      return text.rfind("not visible in this source", 0) == 0 ? "not visible in this source" : "unavailable";
    case Kind::NotCollected: return "not collected";
  }
  return {};
}

const Row* Comparison::find(const std::string& id) const {
  for (const auto& r : rows) {
    if (r.id == id) return &r;
  }
  return nullptr;
}

std::vector<SectionGap> Comparison::section_gaps() const {
  std::vector<SectionGap> out;
  for (const auto& r : rows) {
    for (size_t i = 0; i < r.values.size(); ++i) {
      const Cell& v = r.values[i];
      std::string text;
      if (v.kind == Cell::Kind::Unavailable) {
        text = v.text.rfind("not visible", 0) == 0 ? v.text : "unavailable: " + v.text;
      }
      if (v.kind == Cell::Kind::NotCollected && !v.text.empty()) text = "not collected: " + v.text;
      if (v.kind == Cell::Kind::Number && v.incomplete) text = "incomplete: " + v.incomplete_reason;
      if (text.empty()) continue;
      bool seen = false;
      for (const auto& g : out) seen = seen || (g.section == r.section && g.side == i && g.text == text);
      if (!seen) out.push_back({r.section, i, text});
    }
  }
  return out;
}

std::string human_bytes(uint64_t bytes) {
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024) return std::to_string(bytes) + " B";
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %s", v, kUnits[u]);
  return buf;
}

namespace {

// Wraps a number from a section so unavailable / not collected / incomplete
// show as such, never as 0.
Cell guarded(const Availability& a, uint64_t n, std::string display = {}) {
  if (a.unavailable) return Cell::unavailable(a.reason);
  if (!a.collected) return Cell::not_collected(a.reason);
  Cell c = Cell::num(n, std::move(display));
  // A total over a section with a part left out of the input is not the node's total.
  for (const auto* gaps : {&a.incomplete, &a.not_imported}) {
    for (const auto& i : *gaps) {
      c.incomplete = true;
      if (!c.incomplete_reason.empty()) c.incomplete_reason += "; ";
      c.incomplete_reason += i;
    }
  }
  return c;
}

class Builder {
 public:
  explicit Builder(const std::vector<NodeAnalysis>& nodes) : nodes_(nodes) {}

  void add(std::string id, std::string section, std::string label, const std::function<Cell(const NodeAnalysis&)>& f,
           std::string note = {}, bool headline = false) {
    Row r{std::move(id), std::move(section), std::move(label), {}, std::move(note), headline};
    for (const auto& n : nodes_) r.values.push_back(f(n));
    rows_.push_back(std::move(r));
  }
  std::vector<Row> take() { return std::move(rows_); }

 private:
  const std::vector<NodeAnalysis>& nodes_;
  std::vector<Row> rows_;
};

std::string presence(uint64_t n) { return n == 0 ? "none" : "present (" + std::to_string(n) + ")"; }

std::string n_of(uint64_t n, const std::string& one, const std::string& many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// "netfilter.iptables-legacy, netfilter.nftables-native" of an Availability's not_imported.
std::string not_imported_parts(const analysis::Availability& a) {
  std::string out;
  for (const auto& i : a.not_imported) out += (out.empty() ? "" : ", ") + i.substr(0, i.find(':'));
  return out;
}

// Findings conclude only from sections read in full: a count from a partial or
// unreadable section is never a fact to compare.
std::vector<std::string> findings(const std::vector<NodeAnalysis>& nodes, const std::vector<Side>& sides) {
  std::vector<std::string> out;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const auto& n = nodes[i];
    const auto& nf = n.netfilter;
    const std::string& who = sides[i].label;
    if (!nf.availability.complete()) {
      out.push_back(who + ": netfilter was " + nf.availability.gap() +
                    ", so no finding is drawn from its rule counts.");
    } else if (!nf.availability.whole() && nf.kube_svc_chains + nf.kube_sep_chains == 0 &&
               !nf.kube_proxy_nft.present) {
      out.push_back(who + ": " + not_imported_parts(nf.availability) +
                    " not imported, so no finding is drawn from the absence of rules there.");
    } else if (nf.kube_svc_chains + nf.kube_sep_chains > 0) {
      std::string service_ips = nf.service_ips_visible()
                                    ? n_of(nf.service_ip_rules, "service-IP rule", "service-IP rules") + " in KUBE-SERVICES"
                                    : "KUBE-SERVICES rules whose addresses are not visible in this source";
      std::string frontends = nf.service_ips_visible()
                                  ? n_of(nf.service_frontends, "service frontend", "service frontends") + " (" +
                                        std::to_string(nf.service_frontends_without_endpoints) +
                                        " without endpoints) in iptables: "
                                  : "services in iptables: ";
      out.push_back(who + " programs " + frontends + n_of(nf.kube_svc_chains, "KUBE-SVC chain", "KUBE-SVC chains") +
                    ", " + n_of(nf.kube_sep_chains, "KUBE-SEP chain", "KUBE-SEP chains") + " and " + service_ips +
                    "; a new connection walks up to " + n_of(nf.kube_services_walk, "rule", "rules") +
                    " there, one more for every service port.");
    } else if (nf.kube_proxy_nft.present) {
      const auto& k = nf.kube_proxy_nft;
      out.push_back(who + " programs " + n_of(k.frontends, "service frontend", "service frontends") + " (" +
                    std::to_string(k.frontends_without_endpoints) + " without endpoints) in kube-proxy's nftables " +
                    "maps: one verdict-map lookup per new connection (service-ips), whatever the number of services.");
    }
    if (n.ipvs.visible() && n.ipvs.loaded && n.ipvs.services > 0) {
      out.push_back(who + " programs " + n_of(n.ipvs.services, "IPVS virtual service", "IPVS virtual services") + " (" +
                    n_of(n.ipvs.real_servers, "real server", "real servers") +
                    "): one IPVS hash lookup per new connection, whatever the number of services.");
    }
    const auto* cil = n.ebpf.lb_of("cilium");
    if (!n.ebpf.services_av.complete() && !n.ebpf.service_maps_listed.empty()) {
      out.push_back(who + ": the eBPF service maps are listed but their entries were " + n.ebpf.services_av.gap() +
                    ", so the services they program are not known.");
    } else if (cil && cil->frontends > 0 && n.ebpf.services_av.complete()) {
      std::string iptables;
      if (nf.availability.whole() && nf.service_ips_visible() && nf.service_ip_rules == 0) {
        iptables = " and has no service-IP rule in iptables";
      }
      out.push_back(who + " programs " + n_of(cil->frontends, "service frontend", "service frontends") + " (" +
                    n_of(cil->backends, "backend", "backends") + ") in Cilium's eBPF service map" + iptables +
                    ": one hash lookup per new connection, whatever the number of services.");
    }
    if (nf.availability.whole() && nf.kube_proxy_chains == 0 && nf.kubelet_chains > 0) {
      out.push_back(who + "'s " + n_of(nf.kube_chains, "KUBE-* chain is", "KUBE-* chains are") +
                    " kubelet's or kube-proxy's housekeeping chains (KUBE-FIREWALL, which both create, "
                    "KUBE-KUBELET-CANARY, KUBE-IPTABLES-HINT), not service rules left by kube-proxy.");
    }
    if (nf.legacy.complete() && nf.nf_tables.complete() && nf.legacy_rules > 0 && nf.iptables_nft_rules > 0) {
      out.push_back(who + " has rules in both iptables backends (" + std::to_string(nf.iptables_nft_rules) +
                    " nft, " + std::to_string(nf.legacy_rules) + " legacy): both run, check which one is stale.");
    }
    if (n.ebpf.memory_av.complete() && n.ebpf.memlock_bytes > 0) {
      std::string top;
      uint64_t best = 0;
      for (const auto& [o, st] : n.ebpf.owners) {
        if (st.memlock_bytes > best) {
          best = st.memlock_bytes;
          top = o;
        }
      }
      out.push_back(who + " holds " + human_bytes(n.ebpf.memlock_bytes) + " of eBPF memory by fdinfo memlock (" +
                    human_bytes(best) + " " + top + "'s). What the figure is: " + n.ebpf.memlock.meaning +
                    ". Where it is charged: " + n.ebpf.memlock.cgroup + ".");
    }
  }
  // Across the sides, first: every rule the kernel holds (all tables, both
  // iptables backends and native nftables), then the same per dataplane -- an
  // iptables node and an nftables node compared like with like.
  if (nodes.size() >= 2) {
    bool whole = true;
    for (const auto& n : nodes) whole = whole && n.netfilter.availability.whole();
    if (whole) {
      auto signed_diff = [](uint64_t v, uint64_t base) {
        int64_t d = static_cast<int64_t>(v) - static_cast<int64_t>(base);
        return std::string(d > 0 ? "+" : "") + std::to_string(d);
      };
      std::string total = "rules in all tables and backends: ", per = "rules per dataplane: ";
      for (size_t i = 0; i < nodes.size(); ++i) {
        const auto& x = nodes[i].netfilter;
        total += (i ? ", " : "") + std::to_string(x.rules) + " on " + sides[i].label +
                 (i ? " (" + signed_diff(x.rules, nodes[0].netfilter.rules) + ")" : "");
        std::string iptables = std::to_string(x.iptables_rules) + " iptables";
        if (x.iptables_nft_rules > 0 && x.legacy_rules > 0) {
          iptables += " (" + std::to_string(x.iptables_nft_rules) + " nft, " + std::to_string(x.legacy_rules) + " legacy)";
        }
        per += std::string(i ? "; " : "") + sides[i].label + " " + iptables + ", " + std::to_string(x.nftables_rules) +
               " native nftables";
      }
      out.insert(out.begin(), {total + ".", per + "."});
    }
  }
  return out;
}

}  // namespace

AnalyzedInput analyze_input(const SideInput& in) {
  AnalyzedInput out{in.label, in.source, analysis::analyze(*in.snapshot), {}};
  for (const auto& u : in.snapshot->unavailable) out.unavailable.push_back(u.section + ": " + u.reason);
  return out;
}

Comparison compare(const std::vector<SideInput>& inputs) {
  std::vector<AnalyzedInput> analyzed;
  for (const auto& in : inputs) analyzed.push_back(analyze_input(in));
  return compare(std::move(analyzed));
}

Comparison compare(std::vector<AnalyzedInput> inputs) {
  Comparison cmp;
  std::vector<NodeAnalysis> nodes;
  for (auto& in : inputs) {
    nodes.push_back(std::move(in.analysis));
    const auto& a = nodes.back();
    Side side;
    side.node = a.node;
    side.source = in.source;
    side.label = !in.label.empty() ? in.label : !a.node.empty() ? a.node : in.source;
    side.mode = a.mode.id;
    side.mode_label = a.mode.label;
    side.evidence = a.mode.evidence;
    side.unavailable = std::move(in.unavailable);
    side.memlock_band = a.ebpf.memlock.id;
    if (a.ebpf.availability.usable()) {
      side.memory_notes.push_back("fdinfo memlock on this kernel: " + a.ebpf.memlock.meaning);
      side.memory_notes.push_back("memory cgroup: " + a.ebpf.memlock.cgroup);
    }
    for (size_t i = 0; i < a.ebpf.fullest_maps.size() && i < 5; ++i) {
      const auto& m = a.ebpf.fullest_maps[i];
      char pct[32];
      std::snprintf(pct, sizeof pct, "%.2f%%", 100.0 * static_cast<double>(m.entries) / m.max_entries);
      side.fullest_maps.push_back(m.name + " (" + m.type + ", " + m.owner + "): " + std::to_string(m.entries) +
                                  " / " + std::to_string(m.max_entries) + " entries (" + pct + ")");
    }
    cmp.sides.push_back(std::move(side));
  }

  Builder b(nodes);
  auto nf = [](auto get) {
    return [get](const NodeAnalysis& n) { return guarded(n.netfilter.availability, get(n.netfilter)); };
  };
  // Each row is guarded by the part of its section its facts come from.
  auto nf_part = [](analysis::Availability analysis::NetfilterAnalysis::*part, auto get) {
    return [part, get](const NodeAnalysis& n) { return guarded(n.netfilter.*part, get(n.netfilter)); };
  };
  auto eb = [](analysis::Availability analysis::EbpfAnalysis::*part, auto get) {
    return [part, get](const NodeAnalysis& n) { return guarded(n.ebpf.*part, get(n.ebpf)); };
  };
  using NA = analysis::NetfilterAnalysis;
  using EA = analysis::EbpfAnalysis;

  // ---- node
  b.add("node.name", "node", "node", [](const NodeAnalysis& n) { return Cell::str(n.node.empty() ? "-" : n.node); });
  b.add("node.source", "node", "snapshot source",
        [](const NodeAnalysis& n) { return Cell::str(n.source.empty() ? "-" : n.source); });
  b.add("node.kernel", "node", "kernel", [](const NodeAnalysis& n) { return Cell::str(n.kernel.empty() ? "-" : n.kernel); },
        "uname -r of the collecting host (- for imports)");
  b.add("mode", "node", "detected mode", [](const NodeAnalysis& n) { return Cell::str(n.mode.label); },
        "evidence per side in the mode section");

  // ---- services programmed per dataplane, and what a new connection costs
  auto lb_frontends = [](const std::string& d) {
    return [d](const NodeAnalysis& n) {
      const auto* l = n.ebpf.lb_of(d);
      if (l && !l->decoded) return Cell::unavailable("service map not decoded: " + l->note);
      return guarded(n.ebpf.services_av, l ? l->frontends : 0);
    };
  };
  // Like for like: a frontend (address, port, protocol) of kube-proxy's, with or
  // without endpoints, counted once, in either mode.
  b.add("services.iptables", "services", "iptables: kube-proxy service frontends",
        [](const NodeAnalysis& n) { return guarded(n.netfilter.service_ips_av(), n.netfilter.service_frontends); },
        "address:port/protocol, with or without endpoints: nat KUBE-SERVICES jumps + filter REJECT/DROP");
  b.add("services.iptables.without_endpoints", "services", "  without endpoints (REJECT/DROP only)",
        [](const NodeAnalysis& n) {
          return guarded(n.netfilter.service_ips_av(), n.netfilter.service_frontends_without_endpoints);
        });
  b.add("services.nftables", "services", "nftables: kube-proxy service frontends",
        nf_part(&NA::native, [](const auto& x) { return x.kube_proxy_nft.frontends; }),
        "keys of service-ips + no-endpoint-services, each once");
  b.add("services.nftables.without_endpoints", "services", "  without endpoints (no-endpoint-services)",
        nf_part(&NA::native, [](const auto& x) { return x.kube_proxy_nft.frontends_without_endpoints; }));
  b.add("services.cilium", "services", "Cilium eBPF: service frontends", lb_frontends("cilium"));
  b.add("services.calico", "services", "Calico eBPF: service frontends", lb_frontends("calico"));
  b.add("services.ipvs", "services", "IPVS: virtual services",
        [](const NodeAnalysis& n) {
          if (n.ipvs.visible() && !n.ipvs.loaded) return Cell::num(0, "0 (no IPVS in this kernel)");
          return guarded(n.ipvs.availability, n.ipvs.services);
        },
        "kube-proxy's ipvs mode, kube-router: one per frontend (fwmark services included)");
  b.add("services.ipvs.real_servers", "services", "  real servers",
        [](const NodeAnalysis& n) { return guarded(n.ipvs.availability, n.ipvs.real_servers); },
        "over all virtual services; weight 0 (draining) included");
  b.add("lookup.kube_services_walk", "services", "KUBE-SERVICES rules walked per new connection",
        nf([](const auto& x) { return x.kube_services_walk; }),
        "worst case, nat table; grows with every service port");
  b.add("lookup.method", "services", "service lookup per new connection", [](const NodeAnalysis& n) {
    if (n.mode.id == "kube-proxy-iptables") {
      return Cell::str("linear chain (" + std::to_string(n.netfilter.kube_services_walk) + " rules)");
    }
    if (n.mode.id == "kube-proxy-ipvs" || n.mode.id == "kube-router") return Cell::str("ipset + IPVS hash");
    if (n.mode.id == "antrea-proxy" || n.mode.id == "ovn-kubernetes") return Cell::str("OVS flows (not visible here)");
    if (n.mode.id == "kube-proxy-nftables") return Cell::str("1 nft map lookup");
    if (n.mode.id == "cilium-kpr" || n.mode.id == "calico-ebpf") return Cell::str("1 eBPF hash lookup");
    if (n.mode.id.find("unconfirmed") != std::string::npos) return Cell::str("unknown (see mode evidence)");
    return Cell::str("-");
  });

  // ---- netfilter: the seed measurement's rows first
  b.add("netfilter.rules.iptables", "netfilter", "iptables rules (-A), all tables",
        nf([](const auto& x) { return x.iptables_rules; }), "iptables-nft + iptables-legacy", true);
  b.add("netfilter.chains.kube", "netfilter", "KUBE-* chains", nf([](const auto& x) { return x.kube_chains; }),
        "counted once per table, as iptables-save lists them", true);
  b.add("netfilter.chains.kube_svc", "netfilter", "KUBE-SVC service chains",
        nf([](const auto& x) { return x.kube_svc_chains; }), "one per service port with endpoints", true);
  b.add("netfilter.chains.kube_sep", "netfilter", "KUBE-SEP endpoint chains",
        nf([](const auto& x) { return x.kube_sep_chains; }), "one per (service port, endpoint)", true);
  b.add(
      "netfilter.service_ip_rules", "netfilter", "service-IP rules in KUBE-SERVICES",
      [](const NodeAnalysis& n) {
        const auto& x = n.netfilter;
        return guarded(x.service_ips_av(), x.service_ip_rules, presence(x.service_ip_rules));
      },
      "rules whose destination is one address (/32, /128)", true);
  b.add("netfilter.chains.cilium", "netfilter", "CILIUM_* chains", nf([](const auto& x) { return x.cilium_chains; }),
        "", true);
  b.add("netfilter.rules", "netfilter", "rules in all tables and backends", nf([](const auto& x) { return x.rules; }),
        "iptables (both backends) + native nftables");
  b.add("netfilter.chains.kube_proxy", "netfilter", "KUBE-* chains owned by kube-proxy",
        nf([](const auto& x) { return x.kube_proxy_chains; }));
  b.add("netfilter.chains.kubelet", "netfilter", "KUBE-* chains owned by kubelet or kube-proxy",
        nf([](const auto& x) { return x.kubelet_chains; }),
        "KUBE-FIREWALL (both create it), KUBE-KUBELET-CANARY, KUBE-IPTABLES-HINT; not service rules");
  b.add("netfilter.chains.calico", "netfilter", "cali-* chains", nf([](const auto& x) { return x.calico_chains; }));
  b.add("netfilter.rules.iptables_nft", "netfilter", "rules, iptables-nft backend",
        nf_part(&NA::nf_tables, [](const auto& x) { return x.iptables_nft_rules; }));
  b.add("netfilter.rules.iptables_legacy", "netfilter", "rules, iptables-legacy backend",
        nf_part(&NA::legacy, [](const auto& x) { return x.legacy_rules; }));
  b.add("netfilter.rules.nftables", "netfilter", "rules, native nftables",
        nf_part(&NA::native, [](const auto& x) { return x.nftables_rules; }));

  // ---- per table, union over sides in first-seen order
  std::vector<std::string> table_keys;
  for (const auto& n : nodes) {
    for (const auto& t : n.netfilter.tables) {
      if (std::find(table_keys.begin(), table_keys.end(), t.key()) == table_keys.end()) table_keys.push_back(t.key());
    }
  }
  for (const auto& key : table_keys) {
    std::string id_key = key;
    std::replace(id_key.begin(), id_key.end(), ' ', '.');
    const bool legacy = key.rfind("iptables-legacy ", 0) == 0;
    b.add("netfilter.table." + id_key + ".rules", "netfilter.tables", "rules in " + key, [key, legacy](const NodeAnalysis& n) {
      const bool native = key.rfind("nftables ", 0) == 0;
      const auto& part = legacy ? n.netfilter.legacy : native ? n.netfilter.native : n.netfilter.nf_tables;
      for (const auto& t : n.netfilter.tables) {
        if (t.key() == key) return guarded(part, t.rules);
      }
      return guarded(part, 0);
    });
  }

  // ---- chain families, in pattern-table order
  std::vector<std::string> fam_ids;
  for (const auto& f : analysis::chain_families()) {
    std::string id(f.id);
    if (std::find(fam_ids.begin(), fam_ids.end(), id) != fam_ids.end()) continue;
    bool any = false;
    for (const auto& n : nodes) any = any || n.netfilter.families.count(id);
    if (any) fam_ids.push_back(id);
  }
  for (const char* extra : {"builtin", "other"}) {
    for (const auto& n : nodes) {
      if (n.netfilter.families.count(extra)) {
        fam_ids.push_back(extra);
        break;
      }
    }
  }
  for (const auto& id : fam_ids) {
    std::string what;
    for (const auto& f : analysis::chain_families()) {
      if (f.id == id) {
        what = std::string(f.owner) + ": " + std::string(f.what);
        break;
      }
    }
    if (id == "builtin") what = "built-in chains (INPUT, PREROUTING, ...)";
    if (id == "other") what = "chains no family pattern matches";
    auto count = [id](const NodeAnalysis& n, bool rules) {
      auto it = n.netfilter.families.find(id);
      uint64_t v = it == n.netfilter.families.end() ? 0 : rules ? it->second.rules : it->second.chains;
      return guarded(n.netfilter.availability, v);
    };
    b.add("netfilter.family." + id + ".chains", "netfilter.families", id + " chains",
          [count](const NodeAnalysis& n) { return count(n, false); }, what);
    b.add("netfilter.family." + id + ".rules", "netfilter.families", id + " rules",
          [count](const NodeAnalysis& n) { return count(n, true); });
  }

  // ---- kube-proxy nftables mode
  auto kpn = [](auto get) {
    return [get](const NodeAnalysis& n) { return guarded(n.netfilter.native, get(n.netfilter.kube_proxy_nft)); };
  };
  b.add("nftables.kube_proxy.services", "nftables", "kube-proxy nftables: service-ips elements",
        kpn([](const auto& k) { return k.services; }), "one per service port (table ip/ip6 kube-proxy)");
  b.add("nftables.kube_proxy.nodeports", "nftables", "kube-proxy nftables: service-nodeports elements",
        kpn([](const auto& k) { return k.nodeports; }));
  // Per-Service chains by kube-proxy's own prefixes, then its shared helper chains.
  static const std::map<std::string, std::string> kind_note = {
      {"service", "named PREFIX-HASH8-ns/name/proto/port; one per service port (cluster traffic policy)"},
      {"local", "one per service port with a Local traffic policy"},
      {"external", "one per service port with external IPs, load balancer IPs or a node port"},
      {"endpoint", "one per (service port, endpoint)"},
      {"firewall", "one per service port with loadBalancerSourceRanges"},
      {"helper", "kube-proxy's shared regular chains (services, service-endpoints-check, firewall-check, ...)"}};
  std::vector<std::string> kinds(analysis::kube_proxy_nft_service_chain_kinds().begin(),
                                 analysis::kube_proxy_nft_service_chain_kinds().end());
  kinds.push_back("helper");
  for (const auto& k : kinds) {
    std::string label = k == "helper" ? "helper chains" : k + "-* chains";
    b.add("nftables.kube_proxy.chains." + k, "nftables", "kube-proxy nftables: " + label,
          kpn([k](const auto& x) {
            auto it = x.chains_by_kind.find(k);
            return it == x.chains_by_kind.end() ? uint64_t{0} : it->second;
          }),
          kind_note.at(k));
  }
  b.add("nftables.kube_proxy.rules", "nftables", "kube-proxy nftables: rules", kpn([](const auto& k) { return k.rules; }));
  // The same rules by chain kind: the nftables side of "rules by chain family".
  kinds.push_back("base");
  for (const auto& k : kinds) {
    std::string label = k == "helper" ? "helper chains" : k == "base" ? "base chains" : k + "-* chains";
    b.add("nftables.kube_proxy.rules." + k, "nftables", "  rules in " + label, kpn([k](const auto& x) {
            auto it = x.rules_by_kind.find(k);
            return it == x.rules_by_kind.end() ? uint64_t{0} : it->second;
          }));
  }

  // ---- eBPF
  b.add("ebpf.programs", "ebpf", "eBPF programs", eb(&EA::programs_av, [](const auto& e) { return e.programs; }));
  b.add("ebpf.maps", "ebpf", "eBPF maps", eb(&EA::maps_av, [](const auto& e) { return e.maps; }));
  b.add(
      "ebpf.memlock_bytes", "ebpf", "eBPF memory (fdinfo memlock)",
      [](const NodeAnalysis& n) {
        return guarded(n.ebpf.memory_av, n.ebpf.memlock_bytes, human_bytes(n.ebpf.memlock_bytes));
      },
      "programs + maps; what it measures depends on the kernel (next row, and the memory notes)");
  b.add(
      "ebpf.memlock_band", "ebpf", "  fdinfo memlock on this kernel",
      [](const NodeAnalysis& n) {
        if (!n.ebpf.memory_av.usable()) return guarded(n.ebpf.memory_av, 0);
        const std::string& id = n.ebpf.memlock.id;
        return Cell::str(id == "rlimit-pages"    ? "RLIMIT_MEMLOCK pages (<5.11)"
                         : id == "estimate"      ? "max_entries estimate (5.11-6.3)"
                         : id == "map-mem-usage" ? "map_mem_usage (>=6.4)"
                                                 : "unknown kernel");
      },
      "<5.11 pages charged to RLIMIT_MEMLOCK; 5.11-6.3 an estimate from max_entries; >=6.4 the map's own accounting");
  std::set<std::string> owners;
  for (const auto& n : nodes) {
    for (const auto& [o, _] : n.ebpf.owners) owners.insert(o);
  }
  for (const auto& o : owners) {
    b.add("ebpf.memlock_bytes." + o, "ebpf", "  memlock owned by " + o, [o](const NodeAnalysis& n) {
      auto it = n.ebpf.owners.find(o);
      uint64_t v = it == n.ebpf.owners.end() ? 0 : it->second.memlock_bytes;
      return guarded(n.ebpf.memory_av, v, human_bytes(v));
    });
  }
  for (const auto& o : owners) {
    b.add("ebpf.programs." + o, "ebpf", "  programs owned by " + o, [o](const NodeAnalysis& n) {
      auto it = n.ebpf.owners.find(o);
      return guarded(n.ebpf.programs_av, it == n.ebpf.owners.end() ? 0 : it->second.programs);
    });
    b.add("ebpf.maps." + o, "ebpf", "  maps owned by " + o, [o](const NodeAnalysis& n) {
      auto it = n.ebpf.owners.find(o);
      return guarded(n.ebpf.maps_av, it == n.ebpf.owners.end() ? 0 : it->second.maps);
    });
  }
  auto keyed_rows = [&](const std::string& prefix, const std::string& label,
                        std::map<std::string, uint64_t> analysis::EbpfAnalysis::*field,
                        analysis::Availability analysis::EbpfAnalysis::*part) {
    std::set<std::string> keys;
    for (const auto& n : nodes) {
      for (const auto& [k, _] : n.ebpf.*field) keys.insert(k);
    }
    for (const auto& k : keys) {
      b.add(prefix + k, "ebpf", label + k, [k, field, part](const NodeAnalysis& n) {
        auto it = (n.ebpf.*field).find(k);
        return guarded(n.ebpf.*part, it == (n.ebpf.*field).end() ? 0 : it->second);
      });
    }
  };
  keyed_rows("ebpf.programs.type.", "  programs of type ", &EA::programs_by_type, &EA::programs_av);
  keyed_rows("ebpf.attachments.", "  attachments: ", &EA::attachments_by_kind, &EA::attachments_av);
  for (const char* dp : {"cilium", "calico"}) {
    std::string d = dp;
    auto lb = [d](bool backends) {
      return [d, backends](const NodeAnalysis& n) {
        const auto* l = n.ebpf.lb_of(d);
        if (l && !l->decoded) return Cell::unavailable("service map not decoded: " + l->note);
        uint64_t v = !l ? 0 : backends ? l->backends : l->frontends;
        return guarded(n.ebpf.services_av, v);
      };
    };
    std::string name = d == "cilium" ? "Cilium" : "Calico";
    b.add("ebpf." + d + ".frontends", "ebpf", name + " service frontends (eBPF map)", lb(false));
    b.add("ebpf." + d + ".backends", "ebpf", name + " service backends (eBPF map)", lb(true));
  }

  cmp.rows = b.take();
  cmp.findings = findings(nodes, cmp.sides);
  add_resident_cost(nodes, cmp);  // reports/resident_cost.cpp
  return cmp;
}

}  // namespace dpscope::reports
