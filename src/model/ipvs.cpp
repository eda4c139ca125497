#include "model/ipvs.h"

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include "model/text_fields.h"
#include "util/error.h"

namespace dpscope::model {

using nlohmann::json;

bool is_ipvs_dummy_interface(const std::string& name) { return name == "kube-ipvs0" || name == "kube-dummy-if"; }

namespace {

// An address as 16 bytes (IPv4 in the first 4), for ordering; zeros when unparsable.
std::array<unsigned char, 16> address_bytes(const std::string& a) {
  std::array<unsigned char, 16> b{};
  if (inet_pton(AF_INET, a.c_str(), b.data()) != 1) inet_pton(AF_INET6, a.c_str(), b.data());
  return b;
}

// The text inet_ntop gives, or "" when `a` is no address of `family` ("inet"/"inet6"/"" either).
std::string canonical_address(const std::string& a, const std::string& family = {}) {
  unsigned char b[16];
  char text[INET6_ADDRSTRLEN];
  if (family != "inet6" && inet_pton(AF_INET, a.c_str(), b) == 1) return inet_ntop(AF_INET, b, text, sizeof text);
  if (family != "inet" && inet_pton(AF_INET6, a.c_str(), b) == 1) return inet_ntop(AF_INET6, b, text, sizeof text);
  return {};
}

}  // namespace

void canonicalize(Ipvs& s) {
  for (auto& svc : s.services) {
    std::sort(svc.destinations.begin(), svc.destinations.end(), [](const IpvsDestination& a, const IpvsDestination& b) {
      return std::make_tuple(address_bytes(a.address), a.port) < std::make_tuple(address_bytes(b.address), b.port);
    });
  }
  auto key = [](const IpvsService& v) {
    return std::make_tuple(v.fwmark.value_or(0), v.family, v.protocol.value_or(""), address_bytes(v.address.value_or("")),
                           v.port.value_or(0));
  };
  std::stable_sort(s.services.begin(), s.services.end(),
                   [&](const IpvsService& a, const IpvsService& b) { return key(a) < key(b); });
  if (s.interface_addresses) {
    std::sort(s.interface_addresses->begin(), s.interface_addresses->end(),
              [](const IpvsInterfaceAddress& a, const IpvsInterfaceAddress& b) {
                return std::make_tuple(a.interface, address_bytes(a.address), a.prefix_len) <
                       std::make_tuple(b.interface, address_bytes(b.address), b.prefix_len);
              });
  }
}

std::string ipvs_service_key(const IpvsService& s) {
  if (s.fwmark) return "-f " + std::to_string(*s.fwmark) + (s.family == "inet6" ? " -6" : "");
  const std::string proto = s.protocol.value_or("");
  const std::string flag = proto == "tcp" ? "-t" : proto == "udp" ? "-u" : proto == "sctp" ? "--sctp-service" : "--xxx-service";
  const std::string addr = s.address.value_or("");
  const std::string host = s.family == "inet6" ? "[" + addr + "]" : addr;
  return flag + " " + host + ":" + std::to_string(s.port.value_or(0));
}

namespace {

using text::number;
using text::words;

struct Endpoint {
  std::string family;
  std::string address;
  uint16_t port = 0;
};

// "10.96.0.1:443" or "[fd00::1]:443" (ipvsadm's numeric form); nullopt when not.
std::optional<Endpoint> parse_endpoint(const std::string& s) {
  Endpoint e;
  std::string host, port;
  if (!s.empty() && s[0] == '[') {
    const size_t close = s.find(']');
    if (close == std::string::npos || close + 1 >= s.size() || s[close + 1] != ':') return std::nullopt;
    host = s.substr(1, close - 1);
    port = s.substr(close + 2);
    e.family = "inet6";
  } else {
    const size_t colon = s.rfind(':');
    if (colon == std::string::npos) return std::nullopt;
    host = s.substr(0, colon);
    port = s.substr(colon + 1);
    e.family = "inet";
  }
  e.address = canonical_address(host, e.family);
  const auto p = number(port);
  if (e.address.empty() || !p || *p > 65535) return std::nullopt;
  e.port = static_cast<uint16_t>(*p);
  return e;
}

std::string forward_of_switch(const std::string& w) {
  if (w == "-m" || w == "--masquerading") return "masq";
  if (w == "-g" || w == "--gatewaying") return "route";
  if (w == "-i" || w == "--ipip") return "tunnel";
  return {};
}

// A service's frontend from a -A/-a line's words at `i` (-t/-u/--sctp-service ADDR:PORT, -f MARK [-6]).
// Advances i past it. Throws InputError.
IpvsService parse_frontend(const std::vector<std::string>& w, size_t& i, const std::string& origin, size_t lineno,
                           const std::string& line) {
  IpvsService s;
  if (i >= w.size()) throw InputError(origin, lineno, "a virtual service (-t/-u/--sctp-service/-f) is missing: \"" + line + "\"");
  const std::string& flag = w[i];
  if (flag == "-f" || flag == "--fwmark-service") {
    if (i + 1 >= w.size() || !number(w[i + 1])) throw InputError(origin, lineno, "-f needs a firewall mark: \"" + line + "\"");
    s.fwmark = *number(w[i + 1]);
    s.family = "inet";
    i += 2;
    if (i < w.size() && (w[i] == "-6" || w[i] == "--ipv6")) {
      s.family = "inet6";
      ++i;
    }
    return s;
  }
  std::string proto = flag == "-t" || flag == "--tcp-service"   ? "tcp"
                      : flag == "-u" || flag == "--udp-service" ? "udp"
                      : flag == "--sctp-service"                ? "sctp"
                                                                : "";
  if (proto.empty()) throw InputError(origin, lineno, "expected -t, -u, --sctp-service or -f, got \"" + flag + "\": \"" + line + "\"");
  if (i + 1 >= w.size()) throw InputError(origin, lineno, flag + " needs ADDRESS:PORT: \"" + line + "\"");
  const auto e = parse_endpoint(w[i + 1]);
  if (!e) throw InputError(origin, lineno, "not a numeric ADDRESS:PORT (ipvsadm-save -n): \"" + w[i + 1] + "\"");
  s.family = e->family;
  s.protocol = proto;
  s.address = e->address;
  s.port = e->port;
  i += 2;
  return s;
}

void add_sched_flags(IpvsService& s, const std::string& list, const std::string& origin, size_t lineno) {
  std::string item;
  std::istringstream in(list);
  while (std::getline(in, item, ',')) {
    if (item.empty()) continue;
    if (item != "sh-fallback" && item != "sh-port" && item != "mh-fallback" && item != "mh-port" && item != "flag-1" &&
        item != "flag-2" && item != "flag-3") {
      throw InputError(origin, lineno, "unknown scheduler flag \"" + item + "\"");
    }
    s.flags.push_back(item);
  }
}

IpvsService* find_service(Ipvs& v, const IpvsService& key) {
  for (auto& s : v.services) {
    if (s.family == key.family && s.protocol == key.protocol && s.address == key.address && s.port == key.port &&
        s.fwmark == key.fwmark) {
      return &s;
    }
  }
  return nullptr;
}

// Flags in the order the model lists them, each once.
void tidy_flags(IpvsService& s) {
  static const char* order[] = {"persistent", "one-packet", "sh-fallback", "sh-port", "mh-fallback", "mh-port", "flag-1", "flag-2", "flag-3"};
  std::vector<std::string> out;
  for (const char* f : order) {
    if (std::find(s.flags.begin(), s.flags.end(), f) != s.flags.end()) out.push_back(f);
  }
  s.flags = std::move(out);
}

}  // namespace

Ipvs parse_ipvsadm_save(const std::string& text, const std::string& origin) {
  Ipvs out;
  out.collected = true;
  out.loaded = true;
  std::istringstream in(text);
  size_t lineno = 0;
  for (std::string line; std::getline(in, line);) {
    ++lineno;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const auto w = words(line);
    if (w.empty() || w[0][0] == '#') continue;
    size_t i = 1;
    if (w[0] == "-A" || w[0] == "--add-service") {
      IpvsService s = parse_frontend(w, i, origin, lineno, line);
      if (find_service(out, s)) throw InputError(origin, lineno, "virtual service " + ipvs_service_key(s) + " is added twice");
      while (i < w.size()) {
        const std::string& o = w[i++];
        if ((o == "-s" || o == "--scheduler") && i < w.size()) {
          s.scheduler = w[i++];
        } else if (o == "-p" || o == "--persistent") {
          s.flags.push_back("persistent");
          s.persistence_timeout = 300;  // ipvsadm's default when -p has no value
          if (i < w.size() && number(w[i])) s.persistence_timeout = *number(w[i++]);
        } else if ((o == "-M" || o == "--netmask") && i < w.size()) {
          s.persistence_netmask = w[i++];
        } else if ((o == "--pe" || o == "pe") && i < w.size()) {
          s.persistence_engine = w[i++];
        } else if ((o == "-b" || o == "--sched-flags") && i < w.size()) {
          add_sched_flags(s, w[i++], origin, lineno);
        } else if (o == "-o" || o == "--ops" || o == "ops") {
          s.flags.push_back("one-packet");
        } else {
          throw InputError(origin, lineno, "unexpected \"" + o + "\" in a virtual service line: \"" + line + "\"");
        }
      }
      if (s.scheduler.empty()) throw InputError(origin, lineno, "virtual service without -s SCHEDULER: \"" + line + "\"");
      tidy_flags(s);
      out.services.push_back(std::move(s));
    } else if (w[0] == "-a" || w[0] == "--add-server") {
      const IpvsService key = parse_frontend(w, i, origin, lineno, line);
      IpvsService* s = find_service(out, key);
      if (!s) throw InputError(origin, lineno, "real server of " + ipvs_service_key(key) + ", which no -A line added");
      IpvsDestination d;
      bool have_server = false;
      while (i < w.size()) {
        const std::string& o = w[i++];
        if ((o == "-r" || o == "--real-server") && i < w.size()) {
          const auto e = parse_endpoint(w[i]);
          if (!e) throw InputError(origin, lineno, "not a numeric ADDRESS:PORT (ipvsadm-save -n): \"" + w[i] + "\"");
          d.address = e->address;
          d.port = e->port;
          have_server = true;
          ++i;
        } else if (!forward_of_switch(o).empty()) {
          d.forward = forward_of_switch(o);
        } else if ((o == "-w" || o == "--weight") && i < w.size() && number(w[i])) {
          d.weight = *number(w[i++]);
        } else if ((o == "-x" || o == "--u-threshold") && i < w.size() && number(w[i])) {
          d.upper_threshold = *number(w[i++]);
        } else if ((o == "-y" || o == "--l-threshold") && i < w.size() && number(w[i])) {
          d.lower_threshold = *number(w[i++]);
        } else if (o == "--tun-type" && i < w.size()) {
          d.tunnel_type = w[i++];
        } else if (o == "--tun-port" && i < w.size() && number(w[i])) {
          ++i;  // tunnel options are not modelled
        } else if (o == "--tun-nocsum" || o == "--tun-csum" || o == "--tun-remcsum") {
        } else {
          throw InputError(origin, lineno, "unexpected \"" + o + "\" in a real server line: \"" + line + "\"");
        }
      }
      if (!have_server) throw InputError(origin, lineno, "real server line without -r ADDRESS:PORT: \"" + line + "\"");
      if (d.forward.empty()) d.forward = "route";  // ipvsadm's default forwarding method
      for (const auto& have : s->destinations) {
        if (have.address == d.address && have.port == d.port) {
          throw InputError(origin, lineno, "real server " + d.address + ":" + std::to_string(d.port) + " is added twice");
        }
      }
      s->destinations.push_back(std::move(d));
    } else {
      throw InputError(origin, lineno, "not an ipvsadm-save line (-A/-a): \"" + line.substr(0, 80) + "\"");
    }
  }
  canonicalize(out);
  return out;
}

Ipvs parse_ipvsadm_list(const std::string& text, const std::string& origin) {
  Ipvs out;
  out.collected = true;
  out.loaded = true;
  std::istringstream in(text);
  size_t lineno = 0;
  IpvsService* current = nullptr;
  bool header = false;
  for (std::string line; std::getline(in, line);) {
    ++lineno;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const auto w = words(line);
    if (w.empty()) continue;
    if (line.rfind("IP Virtual Server version ", 0) == 0) {
      // IP Virtual Server version 1.2.1 (size=4096)
      if (w.size() >= 5) out.version = w[4];
      const size_t at = line.find("(size=");
      if (at != std::string::npos) {
        const size_t end = line.find(')', at);
        out.conn_table_size = number(line.substr(at + 6, end == std::string::npos ? std::string::npos : end - at - 6));
      }
      header = true;
      continue;
    }
    if (w[0] == "Prot" || (w[0] == "->" && w.size() > 1 && w[1] == "RemoteAddress:Port")) continue;
    if (!header) throw InputError(origin, lineno, "not `ipvsadm -Ln` output (no \"IP Virtual Server version\" line first)");
    if (w[0] == "->") {
      if (!current) throw InputError(origin, lineno, "a real server before any virtual service");
      // -> ADDR:PORT Forward Weight ActiveConn InActConn
      if (w.size() != 6) throw InputError(origin, lineno, "expected \"-> ADDRESS:PORT Forward Weight ActiveConn InActConn\"");
      const auto e = parse_endpoint(w[1]);
      if (!e) throw InputError(origin, lineno, "not a numeric ADDRESS:PORT (ipvsadm -Ln): \"" + w[1] + "\"");
      IpvsDestination d;
      d.address = e->address;
      d.port = e->port;
      d.forward = w[2] == "Masq" ? "masq" : w[2] == "Local" ? "local" : w[2] == "Tunnel" ? "tunnel" : w[2] == "Route" ? "route" : "";
      if (d.forward.empty()) throw InputError(origin, lineno, "unknown forwarding method \"" + w[2] + "\"");
      const auto weight = number(w[3]), active = number(w[4]), inactive = number(w[5]);
      if (!weight || !active || !inactive) throw InputError(origin, lineno, "weight and connection counts must be numbers");
      d.weight = *weight;
      d.active_conns = *active;
      d.inactive_conns = *inactive;
      current->destinations.push_back(std::move(d));
      continue;
    }
    // TCP  10.96.0.1:443 rr [persistent N [mask M]] [pe X] [ops]   |   FWM  7 [IPv6] rr ...
    IpvsService s;
    size_t i = 2;
    if (w[0] == "FWM") {
      if (w.size() < 3 || !number(w[1])) throw InputError(origin, lineno, "expected \"FWM MARK [IPv6] SCHEDULER\"");
      s.fwmark = *number(w[1]);
      s.family = "inet";
      if (w[i] == "IPv6") {
        s.family = "inet6";
        ++i;
      }
    } else if (w[0] == "TCP" || w[0] == "UDP" || w[0] == "SCTP") {
      if (w.size() < 3) throw InputError(origin, lineno, "expected \"PROTOCOL ADDRESS:PORT SCHEDULER\"");
      const auto e = parse_endpoint(w[1]);
      if (!e) throw InputError(origin, lineno, "not a numeric ADDRESS:PORT (ipvsadm -Ln): \"" + w[1] + "\"");
      s.family = e->family;
      s.protocol = w[0] == "TCP" ? "tcp" : w[0] == "UDP" ? "udp" : "sctp";
      s.address = e->address;
      s.port = e->port;
    } else {
      throw InputError(origin, lineno, "not an `ipvsadm -Ln` line: \"" + line.substr(0, 80) + "\"");
    }
    if (i >= w.size()) throw InputError(origin, lineno, "virtual service without a scheduler");
    s.scheduler = w[i++];
    while (i < w.size()) {
      const std::string& o = w[i++];
      if (o == "persistent" && i < w.size() && number(w[i])) {
        s.flags.push_back("persistent");
        s.persistence_timeout = *number(w[i++]);
      } else if (o == "mask" && i < w.size()) {
        s.persistence_netmask = w[i++];
      } else if (o == "pe" && i < w.size()) {
        s.persistence_engine = w[i++];
      } else if (o == "ops") {
        s.flags.push_back("one-packet");
      } else if (o.find_first_of(",") != std::string::npos || o.rfind("sh-", 0) == 0 || o.rfind("mh-", 0) == 0 ||
                 o.rfind("flag-", 0) == 0) {
        std::string list = o;
        list.erase(std::remove(list.begin(), list.end(), '('), list.end());
        list.erase(std::remove(list.begin(), list.end(), ')'), list.end());
        add_sched_flags(s, list, origin, lineno);
      } else {
        throw InputError(origin, lineno, "unexpected \"" + o + "\" after the scheduler");
      }
    }
    tidy_flags(s);
    if (find_service(out, s)) throw InputError(origin, lineno, "virtual service " + ipvs_service_key(s) + " is listed twice");
    out.services.push_back(std::move(s));
    current = &out.services.back();
  }
  if (!header) throw InputError(origin, 0, "not `ipvsadm -Ln` output (no \"IP Virtual Server version\" line)");
  canonicalize(out);
  return out;
}

std::vector<IpvsInterfaceAddress> parse_ip_addr(const std::string& text, const std::string& origin) {
  // ip -o addr show: "5: kube-ipvs0    inet 10.96.0.1/32 scope global kube-ipvs0\       valid_lft forever ..."
  std::vector<IpvsInterfaceAddress> out;
  std::istringstream in(text);
  size_t lineno = 0;
  for (std::string line; std::getline(in, line);) {
    ++lineno;
    const auto w = words(line);
    if (w.empty()) continue;
    if (w.size() < 4 || w[0].empty() || w[0].back() != ':' || !number(w[0].substr(0, w[0].size() - 1))) {
      throw InputError(origin, lineno, "not an `ip -o addr show` line (\"N: IFACE inet|inet6 ADDRESS/LEN ...\")");
    }
    if (w[2] != "inet" && w[2] != "inet6") continue;  // link lines of `ip -o addr` with other families
    std::string ifname = w[1];
    if (const size_t at = ifname.find('@'); at != std::string::npos) ifname.resize(at);
    if (!is_ipvs_dummy_interface(ifname)) continue;
    const size_t slash = w[3].find('/');
    const std::string addr = canonical_address(w[3].substr(0, slash), w[2]);
    const auto len = slash == std::string::npos ? std::optional<uint32_t>(w[2] == "inet" ? 32 : 128) : number(w[3].substr(slash + 1));
    if (addr.empty() || !len || *len > (w[2] == "inet" ? 32u : 128u)) {
      throw InputError(origin, lineno, "not an ADDRESS/PREFIX: \"" + w[3] + "\"");
    }
    out.push_back({ifname, addr, *len});
  }
  return out;
}

json ipvs_to_json(const Ipvs& s) {
  json j = {{"collected", s.collected}, {"loaded", s.loaded}};
  // The dummy interfaces' addresses are facts of their own: a kube-ipvs0
  // left behind on a node without IPVS is a leftover worth seeing.
  auto put_addresses = [&] {
    if (!s.interface_addresses) return;
    json a = json::array();
    for (const auto& x : *s.interface_addresses) {
      a.push_back({{"interface", x.interface}, {"address", x.address}, {"prefix_len", x.prefix_len}});
    }
    j["interface_addresses"] = std::move(a);
  };
  if (!s.loaded) {
    j["reason"] = s.reason;
    put_addresses();
    return j;
  }
  if (!s.version.empty()) j["version"] = s.version;
  if (s.conn_table_size) j["conn_table_size"] = *s.conn_table_size;
  json services = json::array();
  for (const auto& v : s.services) {
    json dests = json::array();
    for (const auto& d : v.destinations) {
      json o = {{"address", d.address}, {"port", d.port}, {"forward", d.forward}, {"weight", d.weight}};
      if (d.upper_threshold) o["upper_threshold"] = *d.upper_threshold;
      if (d.lower_threshold) o["lower_threshold"] = *d.lower_threshold;
      if (!d.tunnel_type.empty()) o["tunnel_type"] = d.tunnel_type;
      if (d.active_conns) o["active_conns"] = *d.active_conns;
      if (d.inactive_conns) o["inactive_conns"] = *d.inactive_conns;
      if (d.persistent_conns) o["persistent_conns"] = *d.persistent_conns;
      dests.push_back(std::move(o));
    }
    json o = {{"family", v.family},
              {"protocol", v.protocol ? json(*v.protocol) : json(nullptr)},
              {"address", v.address ? json(*v.address) : json(nullptr)},
              {"port", v.port ? json(*v.port) : json(nullptr)},
              {"fwmark", v.fwmark ? json(*v.fwmark) : json(nullptr)},
              {"scheduler", v.scheduler},
              {"flags", v.flags}};
    if (v.persistence_timeout) o["persistence_timeout"] = *v.persistence_timeout;
    if (v.persistence_netmask) o["persistence_netmask"] = *v.persistence_netmask;
    if (!v.persistence_engine.empty()) o["persistence_engine"] = v.persistence_engine;
    o["destinations"] = std::move(dests);
    services.push_back(std::move(o));
  }
  j["services"] = std::move(services);
  put_addresses();
  return j;
}

namespace {

[[noreturn]] void bad(const std::string& at, const std::string& what) { throw std::invalid_argument(at + ": " + what); }

std::optional<std::string> opt_str(const json& j, const char* key, const std::string& at) {
  if (!j.contains(key) || j[key].is_null()) return std::nullopt;
  if (!j[key].is_string()) bad(at + "/" + key, "expected a string");
  return j[key].get<std::string>();
}

std::string str(const json& j, const char* key, const std::string& at, bool required = false) {
  auto v = opt_str(j, key, at);
  if (!v && required) bad(at + "/" + key, "missing");
  return v.value_or("");
}

template <typename T>
std::optional<T> num(const json& j, const char* key, const std::string& at) {
  if (!j.contains(key) || j[key].is_null()) return std::nullopt;
  const json& v = j[key];
  if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<int64_t>() >= 0)) {
    bad(at + "/" + key, "expected a non-negative integer");
  }
  const auto n = v.get<uint64_t>();
  if (n > std::numeric_limits<T>::max()) bad(at + "/" + key, "integer out of range");
  return static_cast<T>(n);
}

const json& array_at(const json& j, const char* key, const std::string& at) {
  static const json empty = json::array();
  if (!j.contains(key)) return empty;
  if (!j[key].is_array()) bad(at + "/" + key, "expected an array");
  return j[key];
}

}  // namespace

Ipvs ipvs_from_json(const json& j, const std::string& pointer) {
  if (!j.is_object()) bad(pointer, "expected an object");
  Ipvs s;
  for (const char* key : {"collected", "loaded"}) {
    if (j.contains(key) && !j[key].is_boolean()) bad(pointer + "/" + key, "expected true or false");
  }
  s.collected = j.value("collected", false);
  s.loaded = j.value("loaded", false);
  s.reason = str(j, "reason", pointer);
  s.version = str(j, "version", pointer);
  s.conn_table_size = num<uint32_t>(j, "conn_table_size", pointer);
  const json& services = array_at(j, "services", pointer);
  for (size_t i = 0; i < services.size(); ++i) {
    const json& o = services[i];
    const std::string at = pointer + "/services/" + std::to_string(i);
    if (!o.is_object()) bad(at, "expected an object");
    IpvsService v;
    v.family = str(o, "family", at, true);
    if (v.family != "inet" && v.family != "inet6") bad(at + "/family", "expected \"inet\" or \"inet6\"");
    v.protocol = opt_str(o, "protocol", at);
    v.address = opt_str(o, "address", at);
    v.port = num<uint16_t>(o, "port", at);
    v.fwmark = num<uint32_t>(o, "fwmark", at);
    if (!v.fwmark && !(v.protocol && v.address && v.port)) bad(at, "a service needs either fwmark or protocol, address and port");
    v.scheduler = str(o, "scheduler", at, true);
    const json& flags = array_at(o, "flags", at);
    for (size_t k = 0; k < flags.size(); ++k) {
      if (!flags[k].is_string()) bad(at + "/flags/" + std::to_string(k), "expected a string");
      v.flags.push_back(flags[k].get<std::string>());
    }
    v.persistence_timeout = num<uint32_t>(o, "persistence_timeout", at);
    v.persistence_netmask = opt_str(o, "persistence_netmask", at);
    v.persistence_engine = str(o, "persistence_engine", at);
    const json& dests = array_at(o, "destinations", at);
    for (size_t k = 0; k < dests.size(); ++k) {
      const json& d = dests[k];
      const std::string dat = at + "/destinations/" + std::to_string(k);
      if (!d.is_object()) bad(dat, "expected an object");
      IpvsDestination x;
      x.address = str(d, "address", dat, true);
      x.port = num<uint16_t>(d, "port", dat).value_or(0);
      x.forward = str(d, "forward", dat, true);
      x.weight = num<uint32_t>(d, "weight", dat).value_or(0);
      x.upper_threshold = num<uint32_t>(d, "upper_threshold", dat);
      x.lower_threshold = num<uint32_t>(d, "lower_threshold", dat);
      x.tunnel_type = str(d, "tunnel_type", dat);
      x.active_conns = num<uint32_t>(d, "active_conns", dat);
      x.inactive_conns = num<uint32_t>(d, "inactive_conns", dat);
      x.persistent_conns = num<uint32_t>(d, "persistent_conns", dat);
      v.destinations.push_back(std::move(x));
    }
    s.services.push_back(std::move(v));
  }
  if (j.contains("interface_addresses")) {
    const json& a = array_at(j, "interface_addresses", pointer);
    s.interface_addresses.emplace();
    for (size_t k = 0; k < a.size(); ++k) {
      const std::string at = pointer + "/interface_addresses/" + std::to_string(k);
      if (!a[k].is_object()) bad(at, "expected an object");
      s.interface_addresses->push_back(
          {str(a[k], "interface", at, true), str(a[k], "address", at, true), num<uint32_t>(a[k], "prefix_len", at).value_or(0)});
    }
  }
  return s;
}

}  // namespace dpscope::model
