// The "ipvs" section: the kernel's IP Virtual Server table of the snapshot's
// network namespace (ipvsadm(8)): virtual services with their scheduler and
// flags, and their real servers (destinations), plus the addresses on the
// dummy interfaces IPVS proxies bind their VIPs to (kube-proxy's kube-ipvs0,
// kube-router's kube-dummy-if). Facts only; docs/snapshot-schema.md, "ipvs".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace dpscope::model {

struct IpvsDestination {
  std::string address;  // "10.244.0.2", "fd00::2" (no brackets)
  uint16_t port = 0;
  // "masq" | "local" | "tunnel" | "route" | "bypass". ipvsadm-save prints -g for
  // both "local" and "route", so an import says "route" for either.
  std::string forward;
  uint32_t weight = 0;  // 0: no new connections (kube-proxy's terminating endpoints)
  // Not in ipvsadm-save's text: unset for such an import.
  std::optional<uint32_t> upper_threshold;
  std::optional<uint32_t> lower_threshold;
  std::string tunnel_type;  // "ipip" | "gue" | "gre" for tunnel destinations, "" when not said
  // Volatile counters: unset when the input had none (ipvsadm-save).
  std::optional<uint32_t> active_conns;
  std::optional<uint32_t> inactive_conns;
  std::optional<uint32_t> persistent_conns;
  bool operator==(const IpvsDestination&) const = default;
};

struct IpvsService {
  std::string family;                 // "inet" | "inet6"
  std::optional<std::string> protocol;  // "tcp" | "udp" | "sctp"; unset for a fwmark service
  std::optional<std::string> address;   // unset for a fwmark service
  std::optional<uint16_t> port;
  std::optional<uint32_t> fwmark;
  std::string scheduler;              // "rr", "wrr", "sh", ...
  // The set flags by ipvsadm's names: "persistent", "one-packet", and the
  // scheduler flags ("sh-fallback", "sh-port", "mh-fallback", "mh-port", or
  // "flag-1".."flag-3" for other schedulers). The kernel-internal "hashed" is left out.
  std::vector<std::string> flags;
  std::optional<uint32_t> persistence_timeout;   // seconds, when persistent
  std::optional<std::string> persistence_netmask;  // when persistent and not /32 (/128): "255.255.255.0", "64"
  std::string persistence_engine;     // "sip" or ""
  std::vector<IpvsDestination> destinations;  // by (address, port)
  bool operator==(const IpvsService&) const = default;
};

struct IpvsInterfaceAddress {
  std::string interface;  // "kube-ipvs0" | "kube-dummy-if"
  std::string address;
  uint32_t prefix_len = 0;
  bool operator==(const IpvsInterfaceAddress&) const = default;
};

struct Ipvs {
  bool collected = false;  // false: section absent (not read, or an import without IPVS input)
  // false: the kernel has no IPVS (the ip_vs module is not loaded): `reason`
  // says so, and there is nothing else. Not an error: most nodes have none.
  bool loaded = false;
  std::string reason;
  std::string version;  // "1.2.1" (ipvsadm -Ln's header; unset for ipvsadm-save input)
  std::optional<uint32_t> conn_table_size;
  std::vector<IpvsService> services;
  // Unset: the addresses were not read (an import without --ip-addr).
  std::optional<std::vector<IpvsInterfaceAddress>> interface_addresses;
  bool operator==(const Ipvs&) const = default;
};

// The dummy interfaces IPVS proxies hold their VIPs on.
bool is_ipvs_dummy_interface(const std::string& name);

// Services by (fwmark, family, protocol, address, port), destinations by
// (address, port), numerically: the order ipvsadm sorts them in.
void canonicalize(Ipvs& s);

// `ipvsadm-save -n` (ipvsadm -S -n) text: -A / -a lines. `origin` names the
// input in errors: InputError(origin, line, what).
Ipvs parse_ipvsadm_save(const std::string& text, const std::string& origin);
// `ipvsadm -Ln` text, the default columns (Forward Weight ActiveConn InActConn):
// version and table size, services, real servers with their connection counts.
Ipvs parse_ipvsadm_list(const std::string& text, const std::string& origin);
// `ip -o addr show` text: the addresses of kube-ipvs0 / kube-dummy-if.
std::vector<IpvsInterfaceAddress> parse_ip_addr(const std::string& text, const std::string& origin);

// A service's frontend as ipvsadm-save names it: "-t 10.96.0.1:443", "-f 7".
std::string ipvs_service_key(const IpvsService& s);

nlohmann::json ipvs_to_json(const Ipvs& s);
Ipvs ipvs_from_json(const nlohmann::json& j, const std::string& pointer);

}  // namespace dpscope::model
