// dpscope verify on the real kernel (issue 15): one generated 1k-Service
// cluster -- ClusterIP, NodePort and LoadBalancer Services, externalIPs,
// externalTrafficPolicy / internalTrafficPolicy Local, terminating-only
// endpoints, Services without endpoints -- written as its kubectl List and as
// what a node programs from it: kube-proxy iptables mode (iptables-restore into
// the nft and the legacy backend of a dps-* netns, the rule shapes of
// pkg/proxy/iptables/proxier.go v1.30 as in its goldens), nftables mode (nft -f,
// pkg/proxy/nftables/proxier.go v1.30) and Cilium's LB maps (services_v2 /
// backends_v3 created with bpftool in a private bpffs, entries per
// ../shared/cilium-calico-maps.md). Each node is snapshotted live; verify
// finds nothing on the clean intent and, for each mutation of the intent,
// exactly the findings it implies in each dataplane.
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>
#include <unistd.h>

#include "collectors/bpf/bpf.h"
#include "model/snapshot.h"
#include "model/snapshot_writer.h"
#include "tests/support/kernel.h"
#include "tests/support/process.h"
#include "tests/support/verify_findings.h"

namespace dpscope::test {
namespace {

using nlohmann::json;

const char* kNode = "dps-node";

struct Endpoint {
  std::string ip;
  bool local = false;  // on kNode
  bool ready = true, serving = true, terminating = false;
  std::string id(uint16_t port) const { return ip + ":" + std::to_string(port); }
};

struct Service {
  std::string ns, name, type = "ClusterIP", cluster_ip, protocol = "tcp", port_name;
  uint16_t port = 80, node_port = 0;
  std::vector<std::string> external_ips, lb_ips;
  bool etp_local = false, itp_local = false;
  std::vector<Endpoint> endpoints;
  std::string svc_port_name() const { return ns + "/" + name + ":" + port_name; }
  bool external() const { return node_port || !external_ips.empty() || !lb_ips.empty(); }
};

std::string ip4(int a, int v) {
  return std::to_string(a) + "." + std::to_string((v >> 16) & 255) + "." + std::to_string((v >> 8) & 255) + "." +
         std::to_string(v & 255);
}

// Service i of the generated cluster; the mix is by residue so each kind recurs.
std::vector<Service> make_cluster(int n) {
  std::vector<Service> out;
  for (int i = 0; i < n; ++i) {
    Service s;
    s.ns = "ns" + std::to_string(i % 20);
    s.name = "svc" + std::to_string(i);
    s.cluster_ip = ip4(172, 20 * 65536 + i + 1);
    if (i % 7 == 6) s.protocol = "udp", s.port = 53;
    s.port_name = "p" + std::to_string(s.port);
    if (i % 10 == 0) s.type = "NodePort", s.node_port = static_cast<uint16_t>(30000 + i / 10);
    if (i % 25 == 1) {
      s.type = "LoadBalancer";
      s.node_port = static_cast<uint16_t>(31000 + i / 25);
      s.lb_ips.push_back(ip4(5, i + 1));
    }
    if (i % 30 == 2) s.external_ips.push_back(ip4(198, 51 * 65536 + 100 * 256 + i + 1));  // unique per Service
    s.etp_local = s.external() && i % 4 == 0;
    s.itp_local = i % 40 == 3;
    const int kind = i % 17;  // 5: no endpoints; 7: terminating only; 9: none on this node
    const int count = kind == 5 ? 0 : 3;
    for (int e = 0; e < count; ++e) {
      Endpoint ep;
      ep.ip = ip4(10, 65536 + i * 4 + e + 1);
      ep.local = e == 0 && kind != 9;
      if (kind == 7) ep.ready = false, ep.terminating = true;
      s.endpoints.push_back(ep);
    }
    out.push_back(std::move(s));
  }
  return out;
}

json intent_of(const std::vector<Service>& cluster) {
  json items = json::array();
  for (const auto& s : cluster) {
    json port = {{"name", s.port_name}, {"protocol", s.protocol == "udp" ? "UDP" : "TCP"}, {"port", s.port},
                 {"targetPort", s.port}};
    if (s.node_port) port["nodePort"] = s.node_port;
    json spec = {{"type", s.type},
                 {"clusterIP", s.cluster_ip},
                 {"clusterIPs", {s.cluster_ip}},
                 {"ports", {port}},
                 {"sessionAffinity", "None"},
                 {"internalTrafficPolicy", s.itp_local ? "Local" : "Cluster"}};
    // Written for every Service with an external frontend (externalIPs on a ClusterIP too).
    if (s.external()) spec["externalTrafficPolicy"] = s.etp_local ? "Local" : "Cluster";
    if (!s.external_ips.empty()) spec["externalIPs"] = s.external_ips;
    json ingress = json::array();
    for (const auto& ip : s.lb_ips) ingress.push_back({{"ip", ip}, {"ipMode", "VIP"}});
    json status = {{"loadBalancer", ingress.empty() ? json::object() : json{{"ingress", ingress}}}};
    items.push_back({{"apiVersion", "v1"},
                     {"kind", "Service"},
                     {"metadata", {{"namespace", s.ns}, {"name", s.name}}},
                     {"spec", spec},
                     {"status", status}});
    json eps = json::array();
    for (const auto& e : s.endpoints) {
      eps.push_back({{"addresses", {e.ip}},
                     {"conditions", {{"ready", e.ready}, {"serving", e.serving}, {"terminating", e.terminating}}},
                     {"nodeName", e.local ? kNode : "dps-remote"}});
    }
    items.push_back({{"apiVersion", "discovery.k8s.io/v1"},
                     {"kind", "EndpointSlice"},
                     {"metadata",
                      {{"namespace", s.ns},
                       {"name", s.name + "-a1b2c"},
                       {"labels", {{"kubernetes.io/service-name", s.name}}}}},
                     {"addressType", "IPv4"},
                     {"endpoints", eps},
                     {"ports", {{{"name", s.port_name}, {"protocol", s.protocol == "udp" ? "UDP" : "TCP"}, {"port", s.port}}}}});
  }
  return {{"apiVersion", "v1"}, {"kind", "List"}, {"metadata", {{"resourceVersion", ""}}}, {"items", items}};
}

// What kube-proxy programs for one service port on kNode (pkg/proxy
// topology.go CategorizeEndpoints and the proxiers' has*Endpoints).
struct Plan {
  std::vector<Endpoint> cluster, local, reachable;
  bool has_endpoints = false, has_internal = false, has_external = false;
  bool uses_cluster = false, uses_local = false;
};

Plan plan_of(const Service& s) {
  Plan p;
  const bool etp = s.external() && s.etp_local;
  p.uses_cluster = !s.itp_local || (s.external() && !etp);
  p.uses_local = s.itp_local || etp;
  bool any_ready = false, local_ready = false, local_term = false;
  for (const auto& e : s.endpoints) {
    any_ready |= e.ready;
    local_ready |= e.ready && e.local;
    local_term |= e.serving && e.terminating && e.local;
  }
  for (const auto& e : s.endpoints) {
    if (any_ready ? e.ready : e.serving && e.terminating) p.cluster.push_back(e);
    if (e.local && (local_ready ? e.ready : local_term && e.serving && e.terminating)) p.local.push_back(e);
  }
  if (!p.uses_cluster) p.cluster.clear();
  if (!p.uses_local) p.local.clear();
  bool any_usable = false;
  for (const auto& e : s.endpoints) any_usable |= e.ready || (e.serving && e.terminating);
  p.has_endpoints = p.uses_cluster ? !p.cluster.empty() : any_usable;
  p.has_internal = p.has_endpoints && !(s.itp_local && p.local.empty());
  p.has_external = p.has_endpoints && !(etp && p.local.empty());
  std::set<std::string> seen;
  for (const auto* list : {&p.cluster, &p.local}) {
    for (const auto& e : *list) {
      if (seen.insert(e.ip).second) p.reachable.push_back(e);
    }
  }
  return p;
}

// kube-proxy's chain names hash the service port name; an index does as well here.
std::string suffix(int i, char kind, int e = 0) {
  char buf[32];
  snprintf(buf, sizeof buf, "%c%05d%02dDPSVERIFY", kind, i, e);
  return buf;
}

std::string q(const std::string& s) { return "\"" + s + "\""; }

// iptables-restore input, as iptables-save prints kube-proxy's rules.
std::string iptables_of(const std::vector<Service>& cluster) {
  std::string filter_rules, nat_chains, nat_rules, services_rules, nodeport_rules;
  for (size_t i = 0; i < cluster.size(); ++i) {
    const Service& s = cluster[i];
    const Plan p = plan_of(s);
    const std::string name = s.svc_port_name(), proto = s.protocol, dport = std::to_string(s.port);
    const std::string svc = "KUBE-SVC-" + suffix(int(i), 'C'), svl = "KUBE-SVL-" + suffix(int(i), 'L');
    const std::string ext = "KUBE-EXT-" + suffix(int(i), 'E');
    auto sep = [&](const Endpoint& e) {
      const auto at = std::find_if(s.endpoints.begin(), s.endpoints.end(), [&](auto& x) { return x.ip == e.ip; });
      return "KUBE-SEP-" + suffix(int(i), 'S', int(at - s.endpoints.begin()));
    };
    const std::string internal_chain = s.itp_local ? svl : svc;
    const std::string external_policy = s.etp_local ? svl : svc;
    const bool uses_cluster_chain = !p.cluster.empty();
    const bool uses_local_chain = !p.local.empty();
    const bool uses_ext = p.has_endpoints && s.external();
    const std::string no_ep_target = p.has_endpoints ? "DROP" : "REJECT";
    const std::string no_ep_comment = name + (p.has_endpoints ? " has no local endpoints" : " has no endpoints");
    const std::string reject = no_ep_target == "REJECT" ? " --reject-with icmp-port-unreachable" : "";
    // ClusterIP.
    if (p.has_internal) {
      services_rules += "-A KUBE-SERVICES -d " + s.cluster_ip + "/32 -p " + proto + " -m comment --comment " +
                        q(name + " cluster IP") + " -m " + proto + " --dport " + dport + " -j " + internal_chain + "\n";
    } else {
      filter_rules += "-A KUBE-SERVICES -d " + s.cluster_ip + "/32 -p " + proto + " -m comment --comment " +
                      q(no_ep_comment) + " -m " + proto + " --dport " + dport + " -j " + no_ep_target + reject + "\n";
    }
    auto external_ip = [&](const std::string& ip, const char* what) {
      if (p.has_endpoints) {
        services_rules += "-A KUBE-SERVICES -d " + ip + "/32 -p " + proto + " -m comment --comment " + q(name + what) +
                          " -m " + proto + " --dport " + dport + " -j " + ext + "\n";
      }
      if (!p.has_external) {
        filter_rules += "-A KUBE-EXTERNAL-SERVICES -d " + ip + "/32 -p " + proto + " -m comment --comment " +
                        q(no_ep_comment) + " -m " + proto + " --dport " + dport + " -j " + no_ep_target + reject + "\n";
      }
    };
    for (const auto& ip : s.external_ips) external_ip(ip, " external IP");
    for (const auto& ip : s.lb_ips) external_ip(ip, " loadbalancer IP");
    if (s.node_port) {
      const std::string np = std::to_string(s.node_port);
      if (p.has_endpoints) {
        nodeport_rules += "-A KUBE-NODEPORTS -p " + proto + " -m comment --comment " + q(name) + " -m " + proto +
                          " --dport " + np + " -j " + ext + "\n";
      }
      if (!p.has_external) {
        filter_rules += "-A KUBE-EXTERNAL-SERVICES -p " + proto + " -m comment --comment " + q(no_ep_comment) +
                        " -m addrtype --dst-type LOCAL -m " + proto + " --dport " + np + " -j " + no_ep_target + reject + "\n";
      }
    }
    if (uses_cluster_chain) nat_chains += ":" + svc + " - [0:0]\n";
    if (uses_local_chain) nat_chains += ":" + svl + " - [0:0]\n";
    if (uses_ext) nat_chains += ":" + ext + " - [0:0]\n";
    for (const auto& e : p.reachable) nat_chains += ":" + sep(e) + " - [0:0]\n";
    if (uses_ext) {
      if (!s.etp_local) {
        nat_rules += "-A " + ext + " -m comment --comment " + q("masquerade traffic for " + name + " external destinations") +
                     " -j KUBE-MARK-MASQ\n";
      } else {
        nat_rules += "-A " + ext + " -s 10.0.0.0/8 -m comment --comment " + q("pod traffic for " + name + " external destinations") +
                     " -j " + svc + "\n";
        nat_rules += "-A " + ext + " -m comment --comment " + q("masquerade LOCAL traffic for " + name + " external destinations") +
                     " -m addrtype --src-type LOCAL -j KUBE-MARK-MASQ\n";
        nat_rules += "-A " + ext + " -m comment --comment " + q("route LOCAL traffic for " + name + " external destinations") +
                     " -m addrtype --src-type LOCAL -j " + svc + "\n";
      }
      if (p.has_external) nat_rules += "-A " + ext + " -j " + external_policy + "\n";
    }
    auto policy_chain = [&](const std::string& chain, const std::vector<Endpoint>& eps) {
      if (p.has_internal && chain == internal_chain) {
        nat_rules += "-A " + chain + " ! -s 10.0.0.0/8 -d " + s.cluster_ip + "/32 -p " + proto + " -m comment --comment " +
                     q(name + " cluster IP") + " -m " + proto + " --dport " + dport + " -j KUBE-MARK-MASQ\n";
      }
      for (size_t k = 0; k < eps.size(); ++k) {
        const size_t left = eps.size() - k;
        char prob[64];
        snprintf(prob, sizeof prob, "%.10f", 1.0 / double(left));
        nat_rules += "-A " + chain + " -m comment --comment " + q(name + " -> " + eps[k].id(s.port)) +
                     (left > 1 ? std::string(" -m statistic --mode random --probability ") + prob : "") + " -j " +
                     sep(eps[k]) + "\n";
      }
    };
    if (uses_cluster_chain) policy_chain(svc, p.cluster);
    if (uses_local_chain) policy_chain(svl, p.local);
    for (const auto& e : p.reachable) {
      nat_rules += "-A " + sep(e) + " -s " + e.ip + "/32 -m comment --comment " + q(name) + " -j KUBE-MARK-MASQ\n";
      nat_rules += "-A " + sep(e) + " -p " + proto + " -m comment --comment " + q(name) + " -m " + proto +
                   " -j DNAT --to-destination " + e.id(s.port) + "\n";
    }
  }
  return "*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n"
         ":KUBE-EXTERNAL-SERVICES - [0:0]\n:KUBE-NODEPORTS - [0:0]\n:KUBE-SERVICES - [0:0]\n"
         "-A INPUT -m conntrack --ctstate NEW -m comment --comment \"kubernetes externally-visible service portals\" -j KUBE-EXTERNAL-SERVICES\n"
         "-A FORWARD -m conntrack --ctstate NEW -m comment --comment \"kubernetes service portals\" -j KUBE-SERVICES\n"
         "-A OUTPUT -m conntrack --ctstate NEW -m comment --comment \"kubernetes service portals\" -j KUBE-SERVICES\n" +
         filter_rules +
         "COMMIT\n*nat\n:PREROUTING ACCEPT [0:0]\n:INPUT ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:POSTROUTING ACCEPT [0:0]\n"
         ":KUBE-MARK-MASQ - [0:0]\n:KUBE-NODEPORTS - [0:0]\n:KUBE-POSTROUTING - [0:0]\n:KUBE-SERVICES - [0:0]\n" +
         nat_chains +
         "-A PREROUTING -m comment --comment \"kubernetes service portals\" -j KUBE-SERVICES\n"
         "-A OUTPUT -m comment --comment \"kubernetes service portals\" -j KUBE-SERVICES\n"
         "-A POSTROUTING -m comment --comment \"kubernetes postrouting rules\" -j KUBE-POSTROUTING\n"
         "-A KUBE-MARK-MASQ -j MARK --set-xmark 0x4000/0x4000\n"
         "-A KUBE-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN\n"
         "-A KUBE-POSTROUTING -j MARK --set-xmark 0x4000/0x0\n"
         "-A KUBE-POSTROUTING -m comment --comment \"kubernetes service traffic requiring SNAT\" -j MASQUERADE --random-fully\n" +
         nodeport_rules + services_rules +
         "-A KUBE-SERVICES -m comment --comment \"kubernetes service nodeports; NOTE: this must be the last rule in this "
         "chain\" -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS\n" +
         nat_rules + "COMMIT\n";
}

// nft -f input after gen-kube-proxy.sh's table skeleton (its sets, maps and base chains).
std::string nftables_of(const std::vector<Service>& cluster) {
  const std::string T = "ip kube-proxy";
  std::string out;
  for (size_t i = 0; i < cluster.size(); ++i) {
    const Service& s = cluster[i];
    const Plan p = plan_of(s);
    const std::string port_id = s.ns + "/" + s.name + "/" + s.protocol + "/" + s.port_name;
    const std::string svc = "service-" + suffix(int(i), 'C').substr(0, 8) + "-" + port_id;
    const std::string loc = "local-" + suffix(int(i), 'L').substr(0, 8) + "-" + port_id;
    const std::string ext = "external-" + suffix(int(i), 'E').substr(0, 8) + "-" + port_id;
    auto ep_chain = [&](const Endpoint& e) {
      return "endpoint-" + suffix(int(i), 'S').substr(0, 8) + "-" + port_id + "__" + e.ip + "/" + std::to_string(s.port);
    };
    const std::string internal_chain = s.itp_local ? loc : svc;
    const std::string external_policy = s.etp_local ? loc : svc;
    const std::string dport = std::to_string(s.port);
    const std::string no_ep = p.has_endpoints ? "drop" : "goto reject-chain";
    for (const auto& e : p.reachable) {
      out += "add chain " + T + " " + ep_chain(e) + "\n";
      out += "add rule " + T + " " + ep_chain(e) + " ip saddr " + e.ip + " jump mark-for-masquerade\n";
      out += "add rule " + T + " " + ep_chain(e) + " meta l4proto " + s.protocol + " dnat to " + e.id(s.port) + "\n";
    }
    auto policy_chain = [&](const std::string& chain, const std::vector<Endpoint>& eps) {
      out += "add chain " + T + " " + chain + "\n";
      if (p.has_internal && chain == internal_chain) {
        out += "add rule " + T + " " + chain + " ip daddr " + s.cluster_ip + " " + s.protocol + " dport " + dport +
               " ip saddr != 10.0.0.0/8 jump mark-for-masquerade\n";
      }
      std::string vm;
      for (size_t k = 0; k < eps.size(); ++k) vm += (k ? ", " : "") + std::to_string(k) + " : goto " + ep_chain(eps[k]);
      out += "add rule " + T + " " + chain + " numgen random mod " + std::to_string(eps.size()) + " vmap { " + vm + " }\n";
    };
    if (!p.cluster.empty()) policy_chain(svc, p.cluster);
    if (!p.local.empty()) policy_chain(loc, p.local);
    if (p.has_endpoints && s.external()) {
      out += "add chain " + T + " " + ext + "\n";
      if (!s.etp_local) {
        out += "add rule " + T + " " + ext + " jump mark-for-masquerade\n";
      } else {
        out += "add rule " + T + " " + ext + " ip saddr 10.0.0.0/8 goto " + svc + " comment " + q("short-circuit pod traffic") + "\n";
        out += "add rule " + T + " " + ext + " fib saddr type local jump mark-for-masquerade comment " + q("masquerade local traffic") + "\n";
        out += "add rule " + T + " " + ext + " fib saddr type local goto " + svc + " comment " + q("short-circuit local traffic") + "\n";
      }
      if (p.has_external) out += "add rule " + T + " " + ext + " goto " + external_policy + "\n";
    }
    out += "add element " + T + " cluster-ips { " + s.cluster_ip + " }\n";
    if (p.has_internal) {
      out += "add element " + T + " service-ips { " + s.cluster_ip + " . " + s.protocol + " . " + dport + " : goto " +
             internal_chain + " }\n";
    } else {
      out += "add element " + T + " no-endpoint-services { " + s.cluster_ip + " . " + s.protocol + " . " + dport +
             " comment " + q(s.svc_port_name()) + " : " + no_ep + " }\n";
    }
    std::vector<std::string> ext_ips = s.external_ips;
    ext_ips.insert(ext_ips.end(), s.lb_ips.begin(), s.lb_ips.end());
    for (const auto& ip : ext_ips) {
      if (p.has_endpoints) {
        out += "add element " + T + " service-ips { " + ip + " . " + s.protocol + " . " + dport + " : goto " + ext + " }\n";
      }
      if (!p.has_external) {
        out += "add element " + T + " no-endpoint-services { " + ip + " . " + s.protocol + " . " + dport + " comment " +
               q(s.svc_port_name()) + " : " + no_ep + " }\n";
      }
    }
    if (s.node_port) {
      const std::string np = std::to_string(s.node_port);
      if (p.has_endpoints) out += "add element " + T + " service-nodeports { " + s.protocol + " . " + np + " : goto " + ext + " }\n";
      if (!p.has_external) {
        out += "add element " + T + " no-endpoint-nodeports { " + s.protocol + " . " + np + " comment " +
               q(s.svc_port_name()) + " : " + no_ep + " }\n";
      }
    }
  }
  return out;
}

// Cilium's services_v2 / backends_v3 (lb4_key, lb4_service, lb4_backend of bpf/lib/common.h).
void program_cilium(const std::vector<Service>& cluster, int services_fd, int backends_fd) {
  std::map<std::string, uint32_t> backend_id;
  auto put = [](int fd, const void* k, const void* v) {
    ASSERT_EQ(bpf_map_update_elem(fd, k, v, BPF_ANY), 0) << strerror(errno);
  };
  uint16_t rev_nat = 0;
  for (const auto& s : cluster) {
    const Plan p = plan_of(s);
    const uint8_t proto = s.protocol == "udp" ? 17 : 6;
    auto backends_of = [&](const std::vector<Endpoint>& eps) {
      std::vector<uint32_t> ids;
      for (const auto& e : eps) {
        auto [it, fresh] = backend_id.emplace(e.id(s.port), static_cast<uint32_t>(backend_id.size() + 1));
        if (fresh) {
          uint8_t value[12] = {};
          inet_pton(AF_INET, e.ip.c_str(), value);
          const uint16_t port = htons(s.port);
          memcpy(value + 4, &port, 2);
          value[6] = proto;
          put(backends_fd, &it->second, value);
        }
        ids.push_back(it->second);
      }
      return ids;
    };
    ++rev_nat;
    auto frontend = [&](const std::string& addr, uint16_t port, uint8_t flags, const std::vector<uint32_t>& ids) {
      uint8_t key[12] = {};
      inet_pton(AF_INET, addr.c_str(), key);
      const uint16_t nport = htons(port), nrev = htons(rev_nat);
      memcpy(key + 4, &nport, 2);
      key[8] = proto;
      for (uint16_t slot = 1; slot <= ids.size(); ++slot) {
        memcpy(key + 6, &slot, 2);
        uint8_t value[12] = {};
        memcpy(value, &ids[slot - 1], 4);
        memcpy(value + 6, &nrev, 2);
        value[8] = flags;
        put(services_fd, key, value);
      }
      const uint16_t zero = 0, count = static_cast<uint16_t>(ids.size());
      memcpy(key + 6, &zero, 2);
      uint8_t master[12] = {};
      memcpy(master + 4, &count, 2);
      memcpy(master + 6, &nrev, 2);
      master[8] = flags;
      put(services_fd, key, master);
    };
    const std::vector<uint32_t> internal = p.has_internal ? backends_of(s.itp_local ? p.local : p.cluster) : std::vector<uint32_t>{};
    const std::vector<uint32_t> external = p.has_external ? backends_of(s.etp_local ? p.local : p.cluster) : std::vector<uint32_t>{};
    const uint8_t local = s.etp_local ? 0x04 : 0;  // SVC_FLAG_EXT_LOCAL_SCOPE
    frontend(s.cluster_ip, s.port, 0, internal);
    for (const auto& ip : s.external_ips) frontend(ip, s.port, 0x01 | local, external);
    for (const auto& ip : s.lb_ips) frontend(ip, s.port, 0x20 | local, external);
    if (s.node_port) {
      frontend("0.0.0.0", s.node_port, 0x02 | local, external);       // the surrogate
      frontend("192.168.0.2", s.node_port, 0x02 | local, external);   // the node's address
    }
  }
}

// The Service `name` or its slice (`name`-a1b2c).
bool is_named(const json& item, const std::string& name) {
  const std::string& n = item["metadata"]["name"].get_ref<const std::string&>();
  return n == name || n == name + "-a1b2c";
}

json& item(json& list, const std::string& kind, const std::string& ns, const std::string& name) {
  for (auto& i : list["items"]) {
    if (i["kind"] == kind && i["metadata"]["namespace"] == ns && is_named(i, name)) return i;
  }
  throw std::runtime_error("no " + kind + " " + ns + "/" + name);
}

class VerifyLive : public ::testing::Test {
 protected:
  void SetUp() override { DPS_REQUIRE_ROOT(); }
};

TEST_F(VerifyLive, GeneratedThousandServiceClusterInEveryDataplane) {
  const std::vector<Service> cluster = make_cluster(1000);
  TempDir dir;
  write_text(dir.file("intent.json"), intent_of(cluster).dump());
  std::vector<std::string> nodes;

  // iptables mode, each backend in its own namespace, snapshotted live.
  const std::string rules = iptables_of(cluster);
  for (const std::string backend : {"nft", "legacy"}) {
    Netns ns("verify-" + backend);
    ns.sh("iptables-" + backend + "-restore", rules);
    const std::string out = dir.file("iptables-" + backend + ".json");
    auto r = run({dpscope_bin(), "snapshot", "--netns", ns.name(), "--node", kNode, "--no-ebpf", "--no-agents", "-q", "-o", out});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    nodes.push_back(out);
  }
  {
    Netns ns("verify-nft");
    const std::string skeleton = run({"sh", source_path("fixtures/scenarios/gen-kube-proxy.sh"), "nftables", "0", "1"}).out;
    ns.sh("nft -f -", skeleton + nftables_of(cluster));
    const std::string out = dir.file("nftables.json");
    auto r = run({dpscope_bin(), "snapshot", "--netns", ns.name(), "--node", kNode, "--no-ebpf", "--no-agents", "-q", "-o", out});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    nodes.push_back(out);
  }
  {
    // Cilium: the two LB maps, made by bpftool in a private bpffs; the live
    // eBPF collector reads them (its service section is kept to this bpffs:
    // other tests on the machine may hold Cilium-named maps of their own).
    BpffsDir bpffs("verify");
    const std::string globals = bpffs.path() + "/tc/globals";
    ASSERT_EQ(run({"mkdir", "-p", globals}).exit_code, 0);
    for (const auto& [map, name, key] : std::vector<std::tuple<std::string, std::string, std::string>>{
             {"cilium_lb4_services_v2", "cilium_lb4_serv", "12"}, {"cilium_lb4_backends_v3", "cilium_lb4_back", "4"}}) {
      auto r = run({"bpftool", "map", "create", globals + "/" + map, "type", "hash", "key", key, "value", "12",
                    "entries", "65536", "name", name, "flags", "1"});
      ASSERT_EQ(r.exit_code, 0) << r.err;
    }
    const int services_fd = bpf_obj_get((globals + "/cilium_lb4_services_v2").c_str());
    const int backends_fd = bpf_obj_get((globals + "/cilium_lb4_backends_v3").c_str());
    ASSERT_GE(services_fd, 0);
    ASSERT_GE(backends_fd, 0);
    program_cilium(cluster, services_fd, backends_fd);
    close(services_fd);
    close(backends_fd);
    model::Snapshot snap;
    snap.node.name = kNode;
    bpf::Options opt;
    opt.bpffs_roots = {bpffs.path()};
    bpf::collect(snap, opt);
    auto& services = snap.ebpf.services;
    services.erase(std::remove_if(services.begin(), services.end(),
                                  [&](const model::LbServices& l) {
                                    return l.maps.empty() || l.maps.front().rfind(bpffs.path(), 0) != 0;
                                  }),
                   services.end());
    ASSERT_EQ(services.size(), 1u);
    ASSERT_TRUE(services[0].decoded) << services[0].note;
    model::canonicalize(snap);
    model::save_snapshot(snap, dir.file("cilium.json"));
    nodes.push_back(dir.file("cilium.json"));
    unlink((globals + "/cilium_lb4_services_v2").c_str());
    unlink((globals + "/cilium_lb4_backends_v3").c_str());
  }

  auto verify = [&](const json& intent) {
    write_text(dir.file("mutated.json"), intent.dump());
    std::vector<std::string> argv = {dpscope_bin(), "verify", dir.file("mutated.json")};
    argv.insert(argv.end(), nodes.begin(), nodes.end());
    argv.insert(argv.end(), {"--format", "json"});
    auto r = run(argv);
    EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.err;
    return std::make_pair(r.exit_code, json::parse(r.out.empty() ? "{}" : r.out));
  };

  const json clean = intent_of(cluster);
  {
    auto [code, report] = verify(clean);
    EXPECT_EQ(code, 0) << dump_keys(verify_finding_keys(report));
    EXPECT_EQ(verify_finding_keys(report).size(), 0u) << dump_keys(verify_finding_keys(report));
    // Every node verified every Service in its dataplane.
    ASSERT_EQ(report["nodes"].size(), 4u);
    std::set<std::string> planes;
    for (const auto& n : report["nodes"]) {
      ASSERT_EQ(n["dataplanes"].size(), 1u) << n.dump();
      planes.insert(n["dataplanes"][0]["dataplane"].get<std::string>());
      EXPECT_EQ(n["dataplanes"][0]["services_ok"], 1000) << n.dump();
    }
    EXPECT_EQ(planes, (std::set<std::string>{"iptables-nft", "iptables-legacy", "nftables", "cilium"}));
  }

  const std::vector<std::string> all = {"iptables-nft", "iptables-legacy", "nftables", "cilium"};
  auto expect = [&](const std::string& what, const json& intent, std::multiset<std::string> want) {
    auto [code, report] = verify(intent);
    std::multiset<std::string> got;
    for (const auto& n : report["nodes"]) {
      for (const auto& f : n["findings"]) {
        got.insert(f["id"].get<std::string>() + " " + f["dataplane"].get<std::string>() +
                   (f.contains("endpoint") ? " " + f["endpoint"].get<std::string>() : ""));
      }
    }
    EXPECT_EQ(code, 1) << what;
    EXPECT_EQ(got, want) << what << ":\n" << dump_keys(verify_finding_keys(report));
  };
  // "id endpoint" -> "id DATAPLANE endpoint" for each dataplane.
  auto each = [&](const std::string& finding) {
    const size_t space = std::min(finding.find(' '), finding.size());
    std::multiset<std::string> out;
    for (const auto& p : all) out.insert(finding.substr(0, space) + " " + p + finding.substr(space));
    return out;
  };
  // svc11: ClusterIP only, 3 ready endpoints (one local), tcp 80.
  ASSERT_EQ(cluster[11].type, "ClusterIP");
  ASSERT_TRUE(cluster[11].external_ips.empty());
  ASSERT_FALSE(cluster[11].itp_local);
  const std::string ep1 = cluster[11].endpoints[1].id(80);
  {
    json m = clean;  // an endpoint dropped from the slice: the node still sends to it
    auto& eps = item(m, "EndpointSlice", "ns11", "svc11")["endpoints"];
    eps.erase(eps.begin() + 1);
    expect("endpoint dropped", m, each("extra-endpoint " + ep1));
  }
  {
    json m = clean;  // an endpoint the nodes do not have
    item(m, "EndpointSlice", "ns11", "svc11")["endpoints"].push_back(
        {{"addresses", {"10.99.0.1"}}, {"conditions", {{"ready", true}}}, {"nodeName", "dps-remote"}});
    expect("extra endpoint", m, each("missing-endpoint 10.99.0.1:80"));
  }
  {
    json m = clean;  // a Service deleted: its frontend is stale on every node
    auto& items = m["items"];
    items.erase(std::remove_if(items.begin(), items.end(),
                               [](const json& i) { return i["metadata"]["namespace"] == "ns11" && is_named(i, "svc11"); }),
                items.end());
    expect("Service deleted", m, each("stale-service"));
  }
  {
    json m = clean;  // the Service's port changed
    item(m, "Service", "ns11", "svc11")["spec"]["ports"][0]["port"] = 8080;
    expect("port changed", m, each("wrong-port"));
  }
  {
    // svc10: NodePort, eTP Cluster, 3 ready endpoints, the first on this node.
    ASSERT_EQ(cluster[10].type, "NodePort");
    ASSERT_FALSE(cluster[10].etp_local);
    ASSERT_TRUE(cluster[10].endpoints[0].local);
    json m = clean;  // eTP flipped to Local: the NodePort must forward to the local endpoint only
    item(m, "Service", "ns10", "svc10")["spec"]["externalTrafficPolicy"] = "Local";
    const std::string e1 = cluster[10].endpoints[1].id(80), e2 = cluster[10].endpoints[2].id(80);
    // iptables: the NodePort goes to KUBE-SVC (cluster policy) with the two remote endpoints;
    // nftables names endpoints per service port (all still reachable), so only the policy;
    // Cilium keeps no policy, only the backends.
    expect("eTP flipped", m,
           {"wrong-policy iptables-nft", "stale-endpoint iptables-nft " + e1, "stale-endpoint iptables-nft " + e2,
            "wrong-policy iptables-legacy", "stale-endpoint iptables-legacy " + e1,
            "stale-endpoint iptables-legacy " + e2, "wrong-policy nftables", "stale-endpoint cilium " + e1,
            "stale-endpoint cilium " + e2});
  }
}

}  // namespace
}  // namespace dpscope::test
