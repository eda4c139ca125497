#include "analysis/where.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <optional>
#include <stdexcept>

#include "analysis/analysis.h"
#include "model/ipvs.h"

namespace dpscope::analysis {

namespace {

// `address` equals `member`, or lies in the prefix `member` ("10.0.0.0/24", "fd00::/64").
bool address_in(const std::string& member, const std::string& address) {
  const size_t slash = member.find('/');
  if (slash == std::string::npos) return member == address;
  const bool v6 = address.find(':') != std::string::npos;
  unsigned char a[16], b[16];
  if (inet_pton(v6 ? AF_INET6 : AF_INET, address.c_str(), a) != 1) return false;
  if (inet_pton(v6 ? AF_INET6 : AF_INET, member.substr(0, slash).c_str(), b) != 1) return false;
  const std::string len_text = member.substr(slash + 1);
  if (len_text.empty() || len_text.size() > 3 || len_text.find_first_not_of("0123456789") != std::string::npos) return false;
  const unsigned len = static_cast<unsigned>(std::stoul(len_text));
  if (len > (v6 ? 128u : 32u)) return false;
  for (unsigned bit = 0; bit < len; ++bit) {
    const unsigned mask = 0x80u >> (bit % 8);
    if ((a[bit / 8] & mask) != (b[bit / 8] & mask)) return false;
  }
  return true;
}

}  // namespace

namespace {

bool valid_ip(const std::string& s) {
  unsigned char buf[16];
  return inet_pton(AF_INET, s.c_str(), buf) == 1 || inet_pton(AF_INET6, s.c_str(), buf) == 1;
}

uint16_t parse_port(const std::string& p, const std::string& text) {
  if (p.empty() || p.size() > 5 || p.find_first_not_of("0123456789") != std::string::npos || std::stoul(p) > 65535) {
    throw std::invalid_argument("'" + text + "': bad port '" + p + "'");
  }
  return static_cast<uint16_t>(std::stoul(p));
}

// "--to-destination 10.244.1.2:80" names ADDR (and PORT) when a token is ADDR,
// ADDR:PORT or [ADDR]:PORT.
bool args_name(const std::string& args, const AddressQuery& q) {
  size_t pos = 0;
  while (pos < args.size()) {
    size_t end = args.find(' ', pos);
    std::string tok = args.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
    pos = end == std::string::npos ? args.size() : end + 1;
    if (tok == q.address || tok == "[" + q.address + "]") return !q.port;
    for (const std::string& host : {q.address, "[" + q.address + "]"}) {
      if (tok.rfind(host + ":", 0) == 0) {
        std::string port = tok.substr(host.size() + 1);
        return !q.port || port == std::to_string(*q.port) || port.find('-') != std::string::npos;
      }
    }
  }
  return false;
}

bool port_ok(const std::string& dport, const AddressQuery& q) {
  return !q.port || dport.empty() || dport == std::to_string(*q.port);
}

bool protocol_ok(const std::string& protocol, const AddressQuery& q) {
  return q.protocol.empty() || protocol.empty() || protocol == "any" || protocol == q.protocol;
}

// Does a rule's port match (iptables --dport, nft `tcp dport 80`, a range
// "30000:30100" or "30000-30100", negated or not) take `port`? nullopt when the
// rule names a port the record does not hold (`tcp dport { 80, 443 }`, `th
// dport @ports`): undecided, never "no".
std::optional<bool> rule_takes_port(const model::Rule& r, uint16_t port) {
  const std::string& d = r.match.dport;
  if (d.empty()) {
    if (r.text.find("dport") != std::string::npos) return std::nullopt;
    return true;
  }
  bool in = false;
  const size_t sep = d.find_first_of(":-");
  try {
    if (sep == std::string::npos) {
      in = std::stoul(d) == port;
    } else {
      in = std::stoul(d.substr(0, sep)) <= port && port <= std::stoul(d.substr(sep + 1));
    }
  } catch (const std::exception&) {
    return std::nullopt;
  }
  return in != r.match.dport_negated;
}

// "@name" as a whole word of an nft rule's text.
bool uses_set(const std::string& text, const std::string& name) {
  const std::string needle = "@" + name;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
    const size_t end = at + needle.size();
    if (end == text.size() || !(std::isalnum(static_cast<unsigned char>(text[end])) || text[end] == '_' ||
                                text[end] == '-' || text[end] == '.')) {
      return true;
    }
  }
  return false;
}

struct SetUser {
  const model::Chain* chain;
  const model::Rule* rule;
};

std::vector<SetUser> rules_using(const model::Table& t, const std::string& set) {
  std::vector<SetUser> out;
  for (const auto& c : t.chains) {
    for (const auto& r : c.rules) {
      if (uses_set(r.text, set)) out.push_back({&c, &r});
    }
  }
  return out;
}

std::string rule_place(const model::Table& t, const SetUser& u) {
  return t.family + " " + t.name + " " + u.chain->name + " #" + std::to_string(u.rule->position);
}

}  // namespace

AddressQuery parse_address_query(const std::string& input) {
  AddressQuery q;
  std::string text = input;
  // "ADDR:PORT/proto", as places are printed (a prefix's "/24" has no port before it).
  const size_t slash = text.rfind('/');
  if (slash != std::string::npos && slash + 1 < text.size() && std::isalpha(static_cast<unsigned char>(text[slash + 1]))) {
    const std::string proto = text.substr(slash + 1);
    if (proto != "tcp" && proto != "udp" && proto != "sctp") {
      throw std::invalid_argument("'" + input + "': bad protocol '" + proto + "' (tcp, udp, sctp)");
    }
    q.protocol = proto;
    text = text.substr(0, slash);
  }
  if (!text.empty() && text.front() == '[') {
    auto close = text.find(']');
    if (close == std::string::npos) throw std::invalid_argument("'" + text + "': missing ]");
    q.address = text.substr(1, close - 1);
    if (close + 1 < text.size()) {
      if (text[close + 1] != ':') throw std::invalid_argument("'" + text + "': expected :PORT after ]");
      q.port = parse_port(text.substr(close + 2), text);
    }
  } else if (std::count(text.begin(), text.end(), ':') == 1) {
    q.address = text.substr(0, text.find(':'));
    q.port = parse_port(text.substr(text.find(':') + 1), text);
  } else {
    q.address = text;
  }
  if (!q.protocol.empty() && !q.port) {
    throw std::invalid_argument("'" + input + "': a protocol goes after a port (IP:PORT/proto, [IPv6]:PORT/proto)");
  }
  if (!valid_ip(q.address)) {
    throw std::invalid_argument("'" + input + "' is not an IP address (IP, IP:PORT, [IPv6]:PORT, IP:PORT/tcp)");
  }
  return q;
}

std::vector<Place> find_address(const model::Snapshot& s, const AddressQuery& q) {
  std::vector<Place> out;
  for (const auto& t : s.netfilter.tables) {
    const std::string backend = model::to_string(t.backend);
    for (const auto& c : t.chains) {
      for (const auto& r : c.rules) {
        std::string field;
        auto is_addr = [&](const model::HeapOptional<model::Prefix>& p) {
          return p && !p->negated && single_address(p->cidr) == q.address;
        };
        if (!protocol_ok(r.match.protocol_negated ? "" : r.match.protocol, q)) continue;
        if (is_addr(r.match.destination) && port_ok(r.match.dport, q)) {
          field = "destination";
        } else if (is_addr(r.match.source)) {
          field = "source";
        } else if (args_name(r.target_args, q)) {
          field = r.target + " target";
        }
        if (field.empty()) continue;
        std::string detail = r.verdict_kind == "none" ? "(no target)" : "-> " + r.target;
        if (!r.target_args.empty()) detail += " " + r.target_args;
        if (!r.match.comment.empty()) detail += "  /* " + r.match.comment + " */";
        Place p{backend, t.family + " " + t.name + " " + c.name + " #" + std::to_string(r.position), field, detail,
                {}, {}, 0, {}};
        p.table = t.family + " " + t.name;
        p.chain = c.name;
        p.position = r.position;
        out.push_back(std::move(p));
      }
    }
    for (const auto& set : t.sets) {
      for (const auto& e : set.elements) {
        // nft prints concatenations as "10.96.0.1 . tcp . 443".
        std::vector<std::string> parts;
        for (size_t p = 0; p <= e.key.size();) {
          size_t d = e.key.find(" . ", p);
          parts.push_back(e.key.substr(p, d == std::string::npos ? std::string::npos : d - p));
          if (d == std::string::npos) break;
          p = d + 3;
        }
        // "ADDR . tcp . PORT", "ADDR . PORT": the last part is the port when it is a number.
        const bool key_has_port = parts.size() >= 2 && !parts.back().empty() &&
                                  parts.back().find_first_not_of("0123456789") == std::string::npos;
        const bool key_has_protocol = parts.size() >= 3;
        bool key_match = !parts.empty() && parts.front() == q.address &&
                         (!q.port || !key_has_port || parts.back() == std::to_string(*q.port)) &&
                         (!key_has_protocol || protocol_ok(parts[1], q));
        bool value_match = e.value.find(q.address) != std::string::npos;
        if (!key_match && !value_match) continue;
        std::string used_by;
        if (key_match && !key_has_port) {
          // The port is in the rules that look the set up, not in the element.
          std::vector<std::string> taking;
          const auto users = rules_using(t, set.name);
          for (const auto& u : users) {
            const std::optional<bool> takes = q.port ? rule_takes_port(*u.rule, *q.port) : std::optional<bool>(true);
            if (takes && !*takes) continue;
            if (!protocol_ok(u.rule->match.protocol, q)) continue;
            std::string port_words = u.rule->match.dport.empty() ? "" : " (" + std::string(u.rule->match.dport_negated ? "not " : "") +
                                                                         "dport " + u.rule->match.dport + ")";
            taking.push_back(rule_place(t, u) + (takes ? port_words : " (its port match is not decoded)"));
          }
          if (!users.empty() && taking.empty()) {
            if (!value_match) continue;  // every rule using the set asks for another port
            key_match = false;
          } else if (users.empty()) {
            used_by = ", no rule uses " + set.name;
          } else {
            used_by = ", used by ";
            for (size_t i = 0; i < taking.size() && i < 3; ++i) used_by += (i ? ", " : "") + taking[i];
            if (taking.size() > 3) used_by += " and " + std::to_string(taking.size() - 3) + " more rules";
          }
        }
        Place p{backend, t.family + " " + t.name + " " + (set.is_map ? "map " : "set ") + set.name,
                !set.is_map ? "set element" : key_match ? "map key" : "map value",
                e.key + (e.value.empty() ? "" : " : " + e.value) + used_by, {}, {}, 0, {}};
        p.table = t.family + " " + t.name;
        p.set = set.name;
        out.push_back(std::move(p));
      }
    }
  }
  // IP set members: "10.96.0.1", "10.96.0.1,tcp:443", a prefix holding the address ("10.0.0.0/24").
  for (const auto& set : s.ipsets.sets) {
    for (const auto& m : set.members) {
      std::vector<std::string> fields;
      for (size_t p = 0; p <= m.entry.size();) {
        const size_t d = m.entry.find(',', p);
        fields.push_back(m.entry.substr(p, d == std::string::npos ? std::string::npos : d - p));
        if (d == std::string::npos) break;
        p = d + 1;
      }
      if (fields.empty() || !address_in(fields.front(), q.address)) continue;
      bool port_ok = true;
      for (size_t i = 1; i < fields.size() && q.port; ++i) {
        const size_t colon = fields[i].find(':');
        if (colon != std::string::npos && fields[i].substr(colon + 1) != std::to_string(*q.port)) port_ok = false;
      }
      if (!port_ok) continue;
      Place p{"ipset", "ipset " + set.name + " (" + set.type + ")", "member",
              m.entry + (m.options.empty() ? "" : " " + m.options), {}, {}, 0, set.name};
      out.push_back(std::move(p));
    }
  }
  // IPVS: virtual services at the address, real servers that are it, and the
  // dummy interface kube-proxy / kube-router bind their VIPs to.
  if (s.ipvs.collected && s.ipvs.loaded) {
    for (const auto& v : s.ipvs.services) {
      const std::string key = model::ipvs_service_key(v);
      if (v.address && *v.address == q.address && (!q.port || v.port == q.port) &&
          protocol_ok(v.protocol.value_or(""), q)) {
        std::string detail = key + " -s " + v.scheduler + ", " + std::to_string(v.destinations.size()) + " real server" +
                             (v.destinations.size() == 1 ? "" : "s");
        out.push_back({"ipvs", "virtual service " + key, "virtual service", detail, {}, {}, 0, {}});
      }
      for (const auto& d : v.destinations) {
        if (d.address != q.address || (q.port && d.port != *q.port) || !protocol_ok(v.protocol.value_or(""), q)) continue;
        const bool v6 = d.address.find(':') != std::string::npos;
        out.push_back({"ipvs", "virtual service " + key, "real server",
                       (v6 ? "[" + d.address + "]" : d.address) + ":" + std::to_string(d.port) + " " + d.forward +
                           " weight " + std::to_string(d.weight),
                       {}, {}, 0, {}});
      }
    }
  }
  if (s.ipvs.interface_addresses) {
    for (const auto& a : *s.ipvs.interface_addresses) {
      if (a.address != q.address) continue;
      out.push_back({"ipvs", "interface " + a.interface, "interface address",
                     a.address + "/" + std::to_string(a.prefix_len) + " on " + a.interface, {}, {}, 0, {}});
    }
  }
  for (const auto& svc : s.ebpf.services) {
    for (const auto& f : svc.frontends) {
      if (f.address != q.address || (q.port && f.port != *q.port) || !protocol_ok(f.protocol, q)) continue;
      out.push_back({svc.dataplane, "service " + std::to_string(f.service_id), "frontend",
                     f.address + ":" + std::to_string(f.port) + "/" + f.protocol + " " + f.type + ", " +
                         std::to_string(f.backends) + " backend" + (f.backends == 1 ? "" : "s"),
                     {}, {}, 0, {}});
    }
    for (const auto& b : svc.backends) {
      if (b.address != q.address || (q.port && b.port != *q.port) || !protocol_ok(b.protocol, q)) continue;
      out.push_back({svc.dataplane, "backend " + std::to_string(b.id), "backend",
                     b.address + ":" + std::to_string(b.port) + "/" + b.protocol +
                         (b.state.empty() ? "" : " (" + b.state + ")"),
                     {}, {}, 0, {}});
    }
  }
  return out;
}

std::vector<std::string> not_searched(const model::Snapshot& s) {
  std::vector<std::string> out;
  const NodeAnalysis a = analyze(s);
  auto section = [&](const Availability& av, const std::string& name) {
    if (!av.usable()) out.push_back(name + ": " + av.gap());
    for (const auto& i : av.incomplete) out.push_back(name + ": part unavailable: " + i);
    for (const auto& i : av.not_imported) out.push_back(name + ": part not in the input: " + i);
  };
  section(a.netfilter.availability, "netfilter");
  section(a.ebpf.services_av, "eBPF service maps");
  // IP sets: only when they were tried and could not be read (older snapshots have no such section).
  if (const auto ip = availability_of(s, "ipsets", s.ipsets.collected); ip.unavailable) section(ip, "ipsets");
  if (const auto v = availability_of(s, "ipvs", s.ipvs.collected); v.unavailable) section(v, "IPVS");
  for (const auto& t : s.netfilter.tables) {
    uint64_t hidden_chains = 0, hidden_rules = 0;
    for (const auto& c : t.chains) {
      if (!c.rules_recorded && c.rule_count > 0) {
        hidden_chains += 1;
        hidden_rules += c.rule_count;
      }
    }
    if (hidden_chains > 0) {
      out.push_back(std::string(model::to_string(t.backend)) + " " + t.family + " " + t.name + ": " +
                    std::to_string(hidden_rules) + " rules in " + std::to_string(hidden_chains) +
                    " chains were counted, not recorded (not visible in this source)");
    }
    size_t unread = 0;
    for (const auto& set : t.sets) {
      if (!set.elements_unread.empty()) {
        ++unread;
        continue;
      }
      if (!set.elements_undecoded.empty()) {
        out.push_back(std::string(model::to_string(t.backend)) + " " + t.family + " " + t.name + " set " + set.name +
                      ": its elements are not in nft's text (" + set.elements_undecoded + "): not searched");
      } else if (!set.elements_recorded && set.element_count > 0) {
        out.push_back(std::string(model::to_string(t.backend)) + " " + t.family + " " + t.name + " set " + set.name +
                      ": " + std::to_string(set.element_count) + " elements not recorded");
      }
    }
    if (unread > 0) {
      // One line for all of them: a kube-proxy node has one affinity set per endpoint.
      out.push_back(std::string(model::to_string(t.backend)) + " " + t.family + " " + t.name + ": the elements of " +
                    std::to_string(unread) + " dynamic set" + (unread == 1 ? "" : "s") +
                    " (runtime state, such as affinity-*) were not read (left out by snapshot --light)");
    }
  }
  return out;
}

}  // namespace dpscope::analysis
