#include "collectors/ipvs/ipvs.h"

#include <arpa/inet.h>
#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <linux/if_addr.h>
#include <linux/ip_vs.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sched.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <optional>
#include <vector>

#include "model/ipvs.h"
#include "util/error.h"
#include "util/netlink.h"
#include "util/netns.h"

namespace dpscope::ipvs {

namespace {

constexpr const char* kPermissionHint = "reading IPVS needs CAP_NET_ADMIN (run as root)";

// Opens `sock` now: a socket that cannot be opened is the section's error.
void open_socket(netlink::Socket& sock) {
  if (const int err = sock.open()) throw SystemError("opening a netlink socket", err);
}

nlmsghdr* genl_request(char* buf, uint16_t family, uint8_t cmd, uint8_t version, bool dump, uint32_t seq) {
  nlmsghdr* nlh = mnl_nlmsg_put_header(buf);
  nlh->nlmsg_type = family;
  nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | (dump ? NLM_F_DUMP : 0);
  nlh->nlmsg_seq = seq;
  auto* g = static_cast<genlmsghdr*>(mnl_nlmsg_put_extra_header(nlh, sizeof(genlmsghdr)));
  g->cmd = cmd;
  g->version = version;
  return nlh;
}

using netlink::parse_message;
using netlink::parse_nested;

template <size_t N>
netlink::Attrs<N> parse_genl(const nlmsghdr* m) {
  return parse_message<N>(m, sizeof(genlmsghdr));
}

std::string address_of(const nlattr* a, uint16_t af) {
  if (a == nullptr) return {};
  const size_t need = af == AF_INET6 ? 16 : 4;
  if (mnl_attr_get_payload_len(a) < need) return {};
  char text[INET6_ADDRSTRLEN] = {};
  if (inet_ntop(af, mnl_attr_get_payload(a), text, sizeof text) == nullptr) return {};
  return text;
}

// The IPVS family's id from a dump of every registered family; 0 when the
// kernel has none (ip_vs not loaded). A by-name CTRL_CMD_GETFAMILY would
// autoload the module.
uint16_t ipvs_family_id(netlink::Socket& genl) {
  char buf[MNL_SOCKET_BUFFER_SIZE];
  nlmsghdr* nlh = genl_request(buf, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1, true, genl.next_seq());
  uint16_t id = 0;
  const int err = genl.talk(nlh, [&](const nlmsghdr* m) {
    const auto a = parse_genl<CTRL_ATTR_MAX>(m);
    const nlattr* name = a[CTRL_ATTR_FAMILY_NAME];
    if (name != nullptr && std::strcmp(mnl_attr_get_str(name), IPVS_GENL_NAME) == 0) id = netlink::u16(a[CTRL_ATTR_FAMILY_ID]);
    return MNL_CB_OK;
  });
  if (err != 0) throw SystemError("listing generic netlink families (CTRL_CMD_GETFAMILY dump)", err);
  return id;
}

// ipvsadm's names for the scheduler flags (ipvsadm.c print_sched_flags, 1.31).
void add_flags(model::IpvsService& s, uint32_t flags) {
  if (flags & IP_VS_SVC_F_PERSISTENT) s.flags.push_back("persistent");
  if (flags & IP_VS_SVC_F_ONEPACKET) s.flags.push_back("one-packet");
  const bool sh = s.scheduler == "sh", mh = s.scheduler == "mh";
  if (flags & IP_VS_SVC_F_SCHED1) s.flags.push_back(sh ? "sh-fallback" : mh ? "mh-fallback" : "flag-1");
  if (flags & IP_VS_SVC_F_SCHED2) s.flags.push_back(sh ? "sh-port" : mh ? "mh-port" : "flag-2");
  if (flags & IP_VS_SVC_F_SCHED3) s.flags.push_back("flag-3");
}

std::string protocol_name(uint16_t p) {
  switch (p) {
    case IPPROTO_TCP: return "tcp";
    case IPPROTO_UDP: return "udp";
    case IPPROTO_SCTP: return "sctp";
    default: return "proto-" + std::to_string(p);
  }
}

std::string forward_name(uint32_t method) {
  switch (method & IP_VS_CONN_F_FWD_MASK) {
    case IP_VS_CONN_F_MASQ: return "masq";
    case IP_VS_CONN_F_LOCALNODE: return "local";
    case IP_VS_CONN_F_TUNNEL: return "tunnel";
    case IP_VS_CONN_F_DROUTE: return "route";
    case IP_VS_CONN_F_BYPASS: return "bypass";
    default: return "method-" + std::to_string(method & IP_VS_CONN_F_FWD_MASK);
  }
}

std::string tunnel_type_name(uint8_t t) {
  switch (t) {
    case IP_VS_CONN_F_TUNNEL_TYPE_IPIP: return "ipip";
    case IP_VS_CONN_F_TUNNEL_TYPE_GUE: return "gue";
    case IP_VS_CONN_F_TUNNEL_TYPE_GRE: return "gre";
    default: return "type-" + std::to_string(t);
  }
}

// A service as the kernel describes it, and what identifies it in a request.
struct RawService {
  model::IpvsService service;
  uint16_t af = 0, protocol = 0, port = 0;  // port in network order, as sent back
  std::vector<uint8_t> address;              // nf_inet_addr bytes, as sent back
  uint32_t fwmark = 0;
};

RawService decode_service(const nlattr* nest) {
  const auto a = parse_nested<IPVS_SVC_ATTR_MAX>(nest);
  RawService r;
  r.af = netlink::u16(a[IPVS_SVC_ATTR_AF]);
  auto& s = r.service;
  s.family = r.af == AF_INET6 ? "inet6" : "inet";
  s.scheduler = a[IPVS_SVC_ATTR_SCHED_NAME] ? mnl_attr_get_str(a[IPVS_SVC_ATTR_SCHED_NAME]) : "";
  r.fwmark = netlink::u32(a[IPVS_SVC_ATTR_FWMARK]);
  if (r.fwmark != 0) {
    s.fwmark = r.fwmark;
  } else {
    r.protocol = netlink::u16(a[IPVS_SVC_ATTR_PROTOCOL]);
    r.port = netlink::u16(a[IPVS_SVC_ATTR_PORT]);
    s.protocol = protocol_name(r.protocol);
    s.address = address_of(a[IPVS_SVC_ATTR_ADDR], r.af);
    s.port = ntohs(r.port);
    if (const nlattr* addr = a[IPVS_SVC_ATTR_ADDR]) {
      const auto* p = static_cast<const uint8_t*>(mnl_attr_get_payload(addr));
      r.address.assign(p, p + mnl_attr_get_payload_len(addr));
    }
  }
  uint32_t flags = 0;
  if (const nlattr* f = a[IPVS_SVC_ATTR_FLAGS]; f != nullptr && mnl_attr_get_payload_len(f) >= sizeof(ip_vs_flags)) {
    flags = static_cast<const ip_vs_flags*>(mnl_attr_get_payload(f))->flags;
  }
  add_flags(s, flags);
  if (flags & IP_VS_SVC_F_PERSISTENT) {
    s.persistence_timeout = netlink::u32(a[IPVS_SVC_ATTR_TIMEOUT]);
    const uint32_t mask = netlink::u32(a[IPVS_SVC_ATTR_NETMASK]);
    // ipvsadm -M: a dotted mask unless /32, a prefix length unless /128.
    if (r.af == AF_INET6) {
      if (mask != 128) s.persistence_netmask = std::to_string(mask);
    } else if (mask != 0xffffffffu) {
      char text[INET_ADDRSTRLEN] = {};
      inet_ntop(AF_INET, &mask, text, sizeof text);  // the kernel sends it in network order
      s.persistence_netmask = text;
    }
  }
  if (a[IPVS_SVC_ATTR_PE_NAME]) s.persistence_engine = mnl_attr_get_str(a[IPVS_SVC_ATTR_PE_NAME]);
  return r;
}

model::IpvsDestination decode_destination(const nlattr* nest, uint16_t service_af) {
  const auto a = parse_nested<IPVS_DEST_ATTR_MAX>(nest);
  model::IpvsDestination d;
  // A destination may be of the other family (IPv6 real servers of an IPv4
  // service, kernels >= 4.x): IPVS_DEST_ATTR_ADDR_FAMILY says which.
  const uint16_t af = a[IPVS_DEST_ATTR_ADDR_FAMILY] ? netlink::u16(a[IPVS_DEST_ATTR_ADDR_FAMILY]) : service_af;
  d.address = address_of(a[IPVS_DEST_ATTR_ADDR], af);
  d.port = ntohs(netlink::u16(a[IPVS_DEST_ATTR_PORT]));
  const uint32_t method = netlink::u32(a[IPVS_DEST_ATTR_FWD_METHOD]);
  d.forward = forward_name(method);
  d.weight = netlink::u32(a[IPVS_DEST_ATTR_WEIGHT]);
  d.upper_threshold = netlink::u32(a[IPVS_DEST_ATTR_U_THRESH]);
  d.lower_threshold = netlink::u32(a[IPVS_DEST_ATTR_L_THRESH]);
  if ((method & IP_VS_CONN_F_FWD_MASK) == IP_VS_CONN_F_TUNNEL && a[IPVS_DEST_ATTR_TUN_TYPE]) {
    d.tunnel_type = tunnel_type_name(mnl_attr_get_u8(a[IPVS_DEST_ATTR_TUN_TYPE]));
  }
  d.active_conns = netlink::u32(a[IPVS_DEST_ATTR_ACTIVE_CONNS]);
  d.inactive_conns = netlink::u32(a[IPVS_DEST_ATTR_INACT_CONNS]);
  d.persistent_conns = netlink::u32(a[IPVS_DEST_ATTR_PERSIST_CONNS]);
  return d;
}

void read_ipvs(netlink::Socket& genl, uint16_t family, model::Ipvs& out) {
  char buf[MNL_SOCKET_BUFFER_SIZE];
  nlmsghdr* nlh = genl_request(buf, family, IPVS_CMD_GET_INFO, IPVS_GENL_VERSION, false, genl.next_seq());
  int err = genl.talk(nlh, [&](const nlmsghdr* m) {
    const auto a = parse_genl<IPVS_INFO_ATTR_MAX>(m);
    const uint32_t v = netlink::u32(a[IPVS_INFO_ATTR_VERSION]);  // NVERSION(major, minor, patch)
    out.version = std::to_string(v >> 16) + "." + std::to_string((v >> 8) & 0xff) + "." + std::to_string(v & 0xff);
    out.conn_table_size = netlink::u32(a[IPVS_INFO_ATTR_CONN_TAB_SIZE]);
    return MNL_CB_OK;
  });
  if (err != 0) throw SystemError("IPVS_CMD_GET_INFO", err, err == EPERM ? kPermissionHint : "");

  std::vector<RawService> services;
  nlh = genl_request(buf, family, IPVS_CMD_GET_SERVICE, IPVS_GENL_VERSION, true, genl.next_seq());
  err = genl.talk(nlh, [&](const nlmsghdr* m) {
    const auto a = parse_genl<IPVS_CMD_ATTR_MAX>(m);
    if (a[IPVS_CMD_ATTR_SERVICE]) services.push_back(decode_service(a[IPVS_CMD_ATTR_SERVICE]));
    return MNL_CB_OK;
  });
  if (err != 0) throw SystemError("IPVS_CMD_GET_SERVICE dump", err, err == EPERM ? kPermissionHint : "");

  for (auto& r : services) {
    // The service is named the way the kernel's ip_vs_genl_find_service
    // looks it up: family and fwmark, or family, protocol, address and port.
    nlh = genl_request(buf, family, IPVS_CMD_GET_DEST, IPVS_GENL_VERSION, true, genl.next_seq());
    nlattr* nest = mnl_attr_nest_start(nlh, IPVS_CMD_ATTR_SERVICE);
    mnl_attr_put_u16(nlh, IPVS_SVC_ATTR_AF, r.af);
    if (r.fwmark != 0) {
      mnl_attr_put_u32(nlh, IPVS_SVC_ATTR_FWMARK, r.fwmark);
    } else {
      mnl_attr_put_u16(nlh, IPVS_SVC_ATTR_PROTOCOL, r.protocol);
      mnl_attr_put(nlh, IPVS_SVC_ATTR_ADDR, r.address.size(), r.address.data());
      mnl_attr_put_u16(nlh, IPVS_SVC_ATTR_PORT, r.port);
    }
    mnl_attr_nest_end(nlh, nest);
    err = genl.talk(nlh, [&](const nlmsghdr* m) {
      const auto a = parse_genl<IPVS_CMD_ATTR_MAX>(m);
      if (a[IPVS_CMD_ATTR_DEST]) r.service.destinations.push_back(decode_destination(a[IPVS_CMD_ATTR_DEST], r.af));
      return MNL_CB_OK;
    });
    // ESRCH: the service went away between the two dumps.
    if (err == ESRCH) continue;
    if (err != 0) throw SystemError("IPVS_CMD_GET_DEST dump of " + model::ipvs_service_key(r.service), err);
    out.services.push_back(std::move(r.service));
  }
}

// The addresses of kube-ipvs0 / kube-dummy-if, as `ip -o addr` lists them.
std::vector<model::IpvsInterfaceAddress> read_dummy_addresses() {
  netlink::Socket rt(NETLINK_ROUTE);
  open_socket(rt);
  char buf[MNL_SOCKET_BUFFER_SIZE];
  std::map<int, std::string> dummies;  // ifindex -> name
  nlmsghdr* nlh = mnl_nlmsg_put_header(buf);
  nlh->nlmsg_type = RTM_GETLINK;
  nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  nlh->nlmsg_seq = rt.next_seq();
  auto* link = static_cast<ifinfomsg*>(mnl_nlmsg_put_extra_header(nlh, sizeof(ifinfomsg)));
  link->ifi_family = AF_UNSPEC;
  int err = rt.talk(nlh, [&](const nlmsghdr* m) {
    const auto* ifi = static_cast<const ifinfomsg*>(mnl_nlmsg_get_payload(m));
    const auto a = parse_message<IFLA_MAX>(m, sizeof(ifinfomsg));
    if (a[IFLA_IFNAME] && model::is_ipvs_dummy_interface(mnl_attr_get_str(a[IFLA_IFNAME]))) {
      dummies[ifi->ifi_index] = mnl_attr_get_str(a[IFLA_IFNAME]);
    }
    return MNL_CB_OK;
  });
  if (err != 0) throw SystemError("RTM_GETLINK dump", err);
  std::vector<model::IpvsInterfaceAddress> out;
  if (dummies.empty()) return out;
  nlh = mnl_nlmsg_put_header(buf);
  nlh->nlmsg_type = RTM_GETADDR;
  nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  nlh->nlmsg_seq = rt.next_seq();
  auto* ifa = static_cast<ifaddrmsg*>(mnl_nlmsg_put_extra_header(nlh, sizeof(ifaddrmsg)));
  ifa->ifa_family = AF_UNSPEC;
  err = rt.talk(nlh, [&](const nlmsghdr* m) {
    const auto* msg = static_cast<const ifaddrmsg*>(mnl_nlmsg_get_payload(m));
    auto it = dummies.find(static_cast<int>(msg->ifa_index));
    if (it == dummies.end()) return MNL_CB_OK;
    const auto a = parse_message<IFA_MAX>(m, sizeof(ifaddrmsg));
    const nlattr *local = a[IFA_LOCAL], *address = a[IFA_ADDRESS];
    // ip(8) shows IFA_LOCAL when there is one (IPv4), else IFA_ADDRESS.
    const std::string text = address_of(local ? local : address, msg->ifa_family);
    if (!text.empty()) out.push_back({it->second, text, msg->ifa_prefixlen});
    return MNL_CB_OK;
  });
  if (err != 0) throw SystemError("RTM_GETADDR dump", err);
  return out;
}

model::Ipvs read_here() {
  model::Ipvs out;
  out.collected = true;
  out.interface_addresses = read_dummy_addresses();
  netlink::Socket genl(NETLINK_GENERIC);
  open_socket(genl);
  const uint16_t family = ipvs_family_id(genl);
  if (family == 0) {
    out.loaded = false;
    out.reason = "this kernel has no IPVS: no \"IPVS\" generic netlink family (the ip_vs module is not loaded)";
    return out;
  }
  out.loaded = true;
  read_ipvs(genl, family, out);
  model::canonicalize(out);
  return out;
}

}  // namespace

void collect(model::Snapshot& snapshot, const std::string& netns) {
  UniqueFd ns;
  if (!netns.empty()) ns = open_netns(netns);
  std::optional<model::Ipvs> read;
  std::optional<model::Unavailable> failed;
  const int err = run_in_namespace(ns, CLONE_NEWNET, [&] {
    try {
      read = read_here();
    } catch (const SystemError& e) {
      failed = model::Unavailable{"ipvs", e.what(), e.err(), e.hint().empty() ? kPermissionHint : e.hint()};
    }
  });
  if (err != 0) failed = model::Unavailable{"ipvs", netns_enter_failure(netns, err), err, kNetnsEnterHint};
  if (failed) {
    snapshot.unavailable.push_back(*failed);
    return;
  }
  snapshot.ipvs = std::move(*read);
}

}  // namespace dpscope::ipvs
