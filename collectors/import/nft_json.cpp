// `nft -j list ruleset` -> netfilter tables.
//
// nft prints the whole document on one line, so a structural error is
// reported at the line where the document starts, with the path of the
// offending object ("nftables[12] (rule): ...") saying where inside it.
#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "collectors/import/import.h"
#include "decoders/nft_json_text.h"
#include "model/iptables.h"
#include "model/json_input.h"
#include "util/error.h"

namespace dpscope::importer {

namespace {

using nlohmann::json;
using nft_text::NftElementText;
using nft_text::NftRuleText;
using nft_text::nft_rule_text;
using nft_text::nft_set_element_text;
using model::Backend;

// nft 1.0.6 prints a statement that has no JSON form (a chain binding, a
// map update) into a 1,024-byte buffer (json.c stmt_print_json, fmemopen):
// a text this long may have been cut.
constexpr size_t kStatementTextCut = 1023;

// Whether an expression of `nft -j` loads through the kernel expressions
// iptables-nft 1.8.9 writes (nft.c supported_exprs: payload, meta, bitwise,
// cmp, range, lookup, immediate): a packet or meta field, a value, a set, a
// map, and their concatenations, prefixes, ranges and binary operations.
bool iptables_nft_expression(const json& e) {
  if (!e.is_object()) return true;  // a value, a symbol, an @set
  if (e.size() != 1) return false;
  const std::string& kind = e.begin().key();
  const json& arg = e.begin().value();
  auto all = [](const json& list) {
    if (!list.is_array()) return iptables_nft_expression(list);
    return std::all_of(list.begin(), list.end(), [](const json& x) { return iptables_nft_expression(x); });
  };
  if (kind == "payload" || kind == "meta" || kind == "set" || kind == "elem") return true;
  if (kind == "prefix") return arg.is_object() && iptables_nft_expression(arg.value("addr", json()));
  if (kind == "range" || kind == "concat" || kind == "&" || kind == "|" || kind == "^" || kind == "<<" || kind == ">>") {
    return all(arg);
  }
  if (kind == "map") return arg.is_object() && iptables_nft_expression(arg.value("key", json()));
  return false;  // ct, fib, rt, socket, osf, exthdr, tcp option, ipsec, numgen, hash, ...
}

// iptables 1.8.9 nft.c nft_is_rule_compatible, on a rule as `nft -j` prints
// it: false for a rule iptables-nft cannot list (`iptables-nft-save` then
// prints "# Table `nat' is incompatible, use 'nft' tool." for its table).
// The live collector asks the same of the kernel's expressions
// (collectors/netfilter/nft_rule.h decode_nft_rule).
bool iptables_nft_can_list(const json& statements) {
  for (const json& st : statements) {
    if (st.is_string()) {
      // A statement nft prints as text: a chain binding is an immediate jump
      // (the bound chain's rules are only text here); a map update is not.
      const std::string& text = st.get_ref<const std::string&>();
      if (text.rfind("jump {", 0) == 0 || text.rfind("goto {", 0) == 0) continue;
      return false;
    }
    if (!st.is_object() || st.size() != 1) return false;
    const std::string& kind = st.begin().key();
    const json& arg = st.begin().value();
    if (kind == "xt" || kind == "accept" || kind == "drop" || kind == "continue" || kind == "return" ||
        kind == "jump" || kind == "goto") {
      continue;
    }
    if (kind == "counter" && !arg.is_string()) continue;  // a named counter is an objref
    if (kind == "match" && arg.is_object() && iptables_nft_expression(arg.value("left", json())) &&
        iptables_nft_expression(arg.value("right", json()))) {
      continue;
    }
    if (kind == "mangle" && arg.is_object()) {  // meta set, payload set
      const json key = arg.value("key", json());
      const bool field = key.is_object() && key.size() == 1 &&
                         (key.begin().key() == "meta" || key.begin().key() == "payload");
      if (field && iptables_nft_expression(arg.value("value", json()))) continue;
    }
    if (kind == "vmap" && arg.is_object() && iptables_nft_expression(arg.value("key", json()))) continue;
    // json.c limit_stmt_json: packets (no rate_unit), not inverted; log_stmt_json: with a group.
    if (kind == "limit" && arg.is_object() && !arg.contains("rate_unit") && !arg.value("inv", false)) continue;
    if (kind == "log" && arg.is_object() && arg.contains("group")) continue;
    return false;
  }
  return true;
}

class NftParser {
 public:
  NftParser(std::string_view text, const std::string& origin) : text_(text), origin_(origin) {}

  std::vector<model::Table> parse() {
    check_text(text_, origin_);
    const size_t first = text_.find_first_not_of(" \t\r\n");
    if (first == std::string_view::npos) throw InputError(origin_, 1, "empty file (only white space)");
    doc_line_ = line_of_offset(first);
    const json doc = model::parse_json_input(text_, origin_);
    if (!doc.is_object() || !doc.contains("nftables") || !doc["nftables"].is_array()) {
      fail("not `nft -j list ruleset` output: expected an object with an \"nftables\" array");
    }
    const json& items = doc["nftables"];
    // Pass 1: tables and chains, so each table can be classified by its base chains.
    for (size_t i = 0; i < items.size(); ++i) {
      const json& item = items[i];
      where_ = "nftables[" + std::to_string(i) + "]";
      if (!item.is_object() || item.size() != 1) fail("each element must be an object with one key");
      const std::string& kind = item.begin().key();
      const json& body = item.begin().value();
      where_ += " (" + kind + ")";
      if (kind == "table") {
        add_table(body);
      } else if (kind == "chain") {
        add_chain(body);
      } else if (kind == "rule") {
        TableState& t = table_of(body);
        if (t.iptables_listable) t.iptables_listable = iptables_nft_can_list(field(body, "expr"));
      }
    }
    for (auto& t : tables_) classify(t);
    // Pass 2: rules, sets, maps.
    for (size_t i = 0; i < items.size(); ++i) {
      const std::string& kind = items[i].begin().key();
      const json& body = items[i].begin().value();
      where_ = "nftables[" + std::to_string(i) + "] (" + kind + ")";
      if (kind == "rule") {
        add_rule(body);
      } else if (kind == "set" || kind == "map") {
        add_set(body, kind == "map");
      }
      // metainfo, counter, quota, ct helper, flowtable, ...: not part of the model.
    }
    std::vector<model::Table> out;
    for (auto& t : tables_) {
      for (auto& c : t.table.chains) {
        if (c.rules_recorded) c.rule_count = c.rules.size();
      }
      out.push_back(std::move(t.table));
    }
    return out;
  }

 private:
  struct TableState {
    model::Table table;
    std::unordered_map<std::string, size_t> chain_index;
    bool iptables_listable = true;  // every rule is one iptables-nft can list
  };

  [[noreturn]] void fail(const std::string& what) const {
    throw InputError(origin_, doc_line_, where_.empty() ? what : where_ + ": " + what);
  }

  size_t line_of_offset(size_t offset) const {
    size_t line = 1;
    for (size_t i = 0; i < offset && i < text_.size(); ++i) {
      if (text_[i] == '\n') ++line;
    }
    return line;
  }

  const json& field(const json& body, const char* key) const {
    if (!body.is_object()) fail("expected an object");
    auto it = body.find(key);
    if (it == body.end()) fail(std::string("missing \"") + key + "\"");
    return *it;
  }

  std::string string_field(const json& body, const char* key) const {
    const json& v = field(body, key);
    if (!v.is_string()) fail(std::string("\"") + key + "\" must be a string");
    return v.get<std::string>();
  }

  std::string optional_string(const json& body, const char* key) const {
    auto it = body.find(key);
    if (it == body.end() || it->is_null()) return "";
    if (!it->is_string()) fail(std::string("\"") + key + "\" must be a string");
    return it->get<std::string>();
  }

  static std::string key_of(const std::string& family, const std::string& name) { return family + " " + name; }

  TableState& table_of(const json& body) {
    const std::string family = string_field(body, "family");
    const std::string name = string_field(body, "table");
    auto it = table_index_.find(key_of(family, name));
    if (it == table_index_.end()) fail("table " + family + " " + name + " is not declared before its objects");
    return tables_[it->second];
  }

  void add_table(const json& body) {
    const std::string family = string_field(body, "family");
    const std::string name = string_field(body, "name");
    if (!table_index_.emplace(key_of(family, name), tables_.size()).second) {
      fail("table " + family + " " + name + " listed twice");
    }
    auto& t = tables_.emplace_back();
    t.table.backend = Backend::Nftables;
    t.table.family = family;
    t.table.name = name;
  }

  void add_chain(const json& body) {
    auto& t = table_of(body);
    const std::string name = string_field(body, "name");
    if (!t.chain_index.emplace(name, t.table.chains.size()).second) fail("chain " + name + " listed twice");
    auto& chain = t.table.chains.emplace_back();
    chain.name = name;
    if (body.contains("hook")) {
      model::BaseChain base;
      base.hook = string_field(body, "hook");
      base.type = optional_string(body, "type");
      const json& prio = field(body, "prio");
      if (!prio.is_number_integer()) fail("\"prio\" must be an integer");
      // The kernel's chain priority is a 32-bit signed number; 4294967296 is not 0.
      const bool fits = prio.is_number_unsigned()
                            ? prio.get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<int32_t>::max())
                            : prio.get<int64_t>() >= std::numeric_limits<int32_t>::min() &&
                                  prio.get<int64_t>() <= std::numeric_limits<int32_t>::max();
      if (!fits) fail("\"prio\" is out of range (a 32-bit signed priority): " + prio.dump());
      base.priority = prio.get<int32_t>();
      base.policy = optional_string(body, "policy");
      if (base.policy.empty()) base.policy = "accept";
      chain.base = std::move(base);
    }
  }

  // iptables-nft's tables get iptables' base chain record (upper-case policy,
  // the same as an iptables-save import) and their rules counted only.
  void classify(TableState& t) {
    std::vector<std::string> base_names;
    for (const auto& c : t.table.chains) {
      if (c.base) base_names.push_back(c.name);
    }
    t.table.backend = t.iptables_listable ? model::classify_nft_table(t.table.family, t.table.name, base_names)
                                          : Backend::Nftables;
    if (t.table.backend != Backend::IptablesNft) return;
    for (auto& c : t.table.chains) {
      c.rules_recorded = false;
      if (!c.base) continue;
      std::string policy = c.base->policy;
      for (auto& ch : policy) ch = static_cast<char>(ch >= 'a' && ch <= 'z' ? ch - 'a' + 'A' : ch);
      c.base = model::iptables_base_chain(t.table.name, c.name, policy);
    }
  }

  void add_rule(const json& body) {
    auto& t = table_of(body);
    const std::string chain_name = string_field(body, "chain");
    auto it = t.chain_index.find(chain_name);
    if (it == t.chain_index.end()) fail("rule of chain " + chain_name + " which is not listed");
    auto& chain = t.table.chains[it->second];
    const json& expr = field(body, "expr");
    if (!expr.is_array()) fail("\"expr\" must be an array");
    if (!chain.rules_recorded) {
      ++chain.rule_count;
      return;
    }
    auto& rule = chain.rules.emplace_back();
    rule.position = static_cast<uint32_t>(chain.rules.size());
    rule.match.comment = optional_string(body, "comment");
    for (const auto& statement : expr) match(statement, rule);
    if (!expr.empty()) verdict(expr.back(), rule);
    // The text `nft list ruleset` prints; a rule the printer does not know is
    // kept and marked, its statements as given.
    NftRuleText text = nft_rule_text(expr, t.table.family, rule.match.comment);
    if (text.unknown.empty() && std::any_of(expr.begin(), expr.end(), [](const json& st) {
          return st.is_string() && st.get_ref<const std::string&>().size() >= kStatementTextCut;
        })) {
      text.unknown = "a statement nft -j prints as text, cut at 1,023 bytes (json.c stmt_print_json)";
    }
    if (text.unknown.empty()) {
      rule.text = std::move(text.text);
    } else {
      rule.undecoded = true;
      rule.raw = expr.dump();
    }
  }

  // The matches the rule record carries, as the live collector decodes them
  // (collectors/netfilter/nft_rule.cpp NativeDecoder): `ip|ip6 saddr|daddr`
  // with an address or prefix, `meta l4proto` / `ip protocol` / `ip6 nexthdr`
  // tcp|udp|sctp, `tcp|udp|sctp|th dport` with a port or range. Other shapes
  // (sets, concatenations, maps) are left out, never guessed.
  static void match(const json& statement, model::Rule& rule) {
    if (!statement.is_object() || statement.size() != 1 || statement.begin().key() != "match") return;
    const json& m = statement.begin().value();
    if (!m.is_object()) return;
    auto op = m.find("op"), left = m.find("left"), right = m.find("right");
    if (op == m.end() || left == m.end() || right == m.end() || !op->is_string() || !left->is_object() ||
        left->size() != 1) {
      return;
    }
    if (*op != "==" && *op != "!=") return;
    const bool negated = *op == "!=";
    const std::string& kind = left->begin().key();
    const json& what = left->begin().value();
    if (!what.is_object()) return;
    if (kind == "meta") {
      if (what.value("key", json()) == "l4proto") protocol(*right, negated, rule);
      return;
    }
    if (kind != "payload" || !what.contains("protocol") || !what.contains("field")) return;
    const json& proto = what["protocol"];
    const json& field = what["field"];
    if (!proto.is_string() || !field.is_string()) return;
    if ((proto == "ip" && field == "protocol") || (proto == "ip6" && field == "nexthdr")) {
      protocol(*right, negated, rule);
    } else if ((proto == "ip" || proto == "ip6") && (field == "saddr" || field == "daddr")) {
      auto cidr = prefix_of(*right, proto == "ip6" ? AF_INET6 : AF_INET);
      if (cidr) (field == "saddr" ? rule.match.source : rule.match.destination) = model::Prefix{*cidr, negated};
    } else if ((proto == "tcp" || proto == "udp" || proto == "sctp" || proto == "th") && field == "dport") {
      std::string ports = ports_of(*right);
      if (ports.empty()) return;
      rule.match.dport = ports;
      rule.match.dport_negated = negated;
      // `tcp dport` stands for its dependency `meta l4proto tcp` too.
      if (proto != "th") {
        rule.match.protocol = proto.get<std::string>();
        rule.match.protocol_negated = false;
      }
    }
  }

  static void protocol(const json& v, bool negated, model::Rule& rule) {
    std::string name = v.is_string() ? v.get<std::string>() : "";
    if (v.is_number_unsigned()) {
      const uint64_t n = v.get<uint64_t>();
      name = n == IPPROTO_TCP ? "tcp" : n == IPPROTO_UDP ? "udp" : n == IPPROTO_SCTP ? "sctp" : "";
    }
    if (name != "tcp" && name != "udp" && name != "sctp") name.clear();  // not recorded (as live)
    rule.match.protocol = name;
    rule.match.protocol_negated = !name.empty() && negated;
  }

  // "10.96.0.10" -> "10.96.0.10/32"; {"prefix": {"addr": "10.0.0.0", "len": 8}} -> "10.0.0.0/8";
  // the address as inet_ntop spells it (the live collector's form).
  static std::optional<std::string> prefix_of(const json& v, int af) {
    const int full = af == AF_INET6 ? 128 : 32;
    auto canonical = [af](const json& a) -> std::optional<std::string> {
      if (!a.is_string()) return std::nullopt;
      unsigned char buf[16];
      char text[INET6_ADDRSTRLEN] = {};
      if (inet_pton(af, a.get_ref<const std::string&>().c_str(), buf) != 1) return std::nullopt;
      if (inet_ntop(af, buf, text, sizeof text) == nullptr) return std::nullopt;
      return std::string(text);
    };
    if (v.is_string()) {
      auto a = canonical(v);
      return a ? std::optional<std::string>(*a + "/" + std::to_string(full)) : std::nullopt;
    }
    if (!v.is_object() || v.size() != 1 || !v.contains("prefix") || !v["prefix"].is_object()) return std::nullopt;
    const json& p = v["prefix"];
    auto a = canonical(p.value("addr", json()));
    const json len = p.value("len", json());
    if (!a || !len.is_number_unsigned() || len.get<uint64_t>() > static_cast<uint64_t>(full)) return std::nullopt;
    return *a + "/" + std::to_string(len.get<uint64_t>());
  }

  // 80 -> "80"; {"range": [30000, 30100]} -> "30000:30100"; "" for anything else.
  static std::string ports_of(const json& v) {
    auto port = [](const json& p) -> std::string {
      return p.is_number_unsigned() && p.get<uint64_t>() <= 65535 ? std::to_string(p.get<uint64_t>()) : "";
    };
    if (v.is_number_unsigned()) return port(v);
    if (!v.is_object() || v.size() != 1 || !v.contains("range")) return "";
    const json& r = v["range"];
    if (!r.is_array() || r.size() != 2) return "";
    std::string from = port(r[0]), to = port(r[1]);
    return from.empty() || to.empty() ? "" : from + ":" + to;
  }

  // {"numgen": {"mode": "random", "mod": 5, "offset": 0}} -> "numgen random mod 5", as nft
  // prints the key of kube-proxy's endpoint pick; "" for any other key.
  static std::string numgen_key(const json& key) {
    if (!key.is_object() || key.size() != 1 || !key.contains("numgen") || !key["numgen"].is_object()) return "";
    const json& ng = key["numgen"];
    const json mode = ng.value("mode", json()), mod = ng.value("mod", json()), offset = ng.value("offset", json(0));
    if (!mode.is_string() || (mode != "random" && mode != "inc") || !mod.is_number_unsigned() ||
        mod.get<uint64_t>() > UINT32_MAX || !offset.is_number_unsigned() || offset.get<uint64_t>() > UINT32_MAX) {
      return "";
    }
    const uint64_t off = offset.get<uint64_t>();
    return "numgen " + mode.get<std::string>() + " mod " + std::to_string(mod.get<uint64_t>()) +
           (off ? " offset " + std::to_string(off) : "");
  }

  // {"dnat": {"addr": "10.180.0.1", "port": 80}} -> "to 10.180.0.1:80" (nft's
  // spelling; IPv6 "to [fd00::1]:80"); "" when the address is not one literal.
  static std::string nat_args(const json& arg) {
    if (!arg.is_object()) return "";
    const json addr = arg.value("addr", json());
    if (!addr.is_string()) return "";
    const bool v6 = addr.get_ref<const std::string&>().find(':') != std::string::npos;
    auto a = prefix_of(addr, v6 ? AF_INET6 : AF_INET);
    if (!a) return "";
    std::string out = "to " + a->substr(0, a->find('/'));
    if (!arg.contains("port")) return out;
    std::string port = arg["port"].is_number_unsigned() && arg["port"].get<uint64_t>() <= 65535
                           ? std::to_string(arg["port"].get<uint64_t>())
                           : "";
    if (port.empty()) return "";
    return "to " + (v6 ? "[" + out.substr(3) + "]" : out.substr(3)) + ":" + port;
  }

  // The verdict of the rule's last statement.
  void verdict(const json& statement, model::Rule& rule) const {
    // A statement nft has no JSON form for is its text (json.c
    // stmt_print_json): a map update ("update @m { ip saddr : 0x00000001 }")
    // is no verdict; a chain binding ("jump {\n...}") jumps to rules the JSON
    // lists only as that text: the rule is kept, its verdict not read.
    if (statement.is_string()) return;
    if (!statement.is_object() || statement.size() != 1) fail("a statement must be an object with one key");
    const std::string& name = statement.begin().key();
    const json& arg = statement.begin().value();
    if (name == "accept" || name == "drop" || name == "return" || name == "continue" || name == "queue") {
      rule.verdict_kind = "verdict";
      rule.target = name;
    } else if (name == "jump" || name == "goto") {
      rule.verdict_kind = name;
      rule.target = string_field(arg, "target");
    } else if (name == "vmap") {
      rule.verdict_kind = "vmap";
      const json& data = field(arg, "data");
      // "@service-ips" names a map; an object is an anonymous one.
      if (data.is_string()) {
        std::string target = data.get<std::string>();
        if (!target.empty() && target[0] == '@') target.erase(0, 1);
        rule.target = std::move(target);
      }
      rule.target_args = numgen_key(arg.is_object() && arg.contains("key") ? arg["key"] : json());
    } else if (name == "reject" || name == "dnat" || name == "snat" || name == "masquerade" || name == "redirect") {
      rule.verdict_kind = "target";
      rule.target = name;
      if (name == "dnat" || name == "snat") rule.target_args = nat_args(arg);
    }
  }

  void add_set(const json& body, bool is_map) {
    auto& t = table_of(body);
    // Sets of iptables-nft tables (ebtables among) are not part of the iptables view.
    if (t.table.backend == Backend::IptablesNft) return;
    auto& set = t.table.sets.emplace_back();
    set.name = string_field(body, "name");
    set.is_map = is_map;
    const json& type = field(body, "type");
    if (type.is_string()) {
      set.key_type.push_back(type.get<std::string>());
    } else if (type.is_array()) {
      for (const auto& part : type) set.key_type.push_back(part.is_string() ? part.get<std::string>() : part.dump());
    } else {
      set.key_type.push_back(type.dump());
    }
    if (is_map) {
      const json& data = field(body, "map");
      set.data_type = data.is_string() ? data.get<std::string>() : data.dump();
    }
    set.comment = optional_string(body, "comment");
    set.elements_recorded = true;
    if (auto it = body.find("elem"); it != body.end()) {
      if (!it->is_array()) fail("\"elem\" must be an array");
      set.elements.reserve(it->size());
      // nft 1.0.6's JSON keeps the first of an element's statements only
      // (json.c set_elem_expr_json: "TODO: only one statement per element"):
      // an element with one may have had more, which the text would show --
      // unless the set declares one statement ("stmt"): the kernel then
      // holds each element to exactly that one (nf_tables_api.c
      // nft_add_set_elem: an element's expressions are the set's).
      const auto declared = body.find("stmt");
      const bool one_each = declared != body.end() && declared->is_array() && declared->size() == 1;
      for (const auto& e : *it) {
        if (one_each) break;
        const json& key = e.is_array() && !e.empty() ? e[0] : e;
        if (!key.is_object() || !key.contains("elem") || !key["elem"].is_object()) continue;
        for (const auto& [k, v] : key["elem"].items()) {
          if (k != "val" && k != "timeout" && k != "expires" && k != "comment") {
            set.elements_undecoded = "an element with a statement (nft -j keeps the first of an element's statements only)";
          }
        }
      }
      for (const auto& e : *it) {
        if (is_map && (!e.is_array() || e.size() != 2)) fail("a map element must be a [key, value] pair");
        NftElementText t = nft_set_element_text(e, set.key_type, set.data_type);
        if (!t.unknown.empty() && set.elements_undecoded.empty()) set.elements_undecoded = t.unknown;
        set.elements.push_back({std::move(t.key), std::move(t.value), std::move(t.comment), std::move(t.timeout),
                                std::move(t.statements)});
      }
      // One element the printer does not know leaves them all as nft -j gave them, the set marked.
      if (!set.elements_undecoded.empty()) {
        set.elements.clear();
        for (const auto& e : *it) {
          if (is_map) {
            set.elements.push_back({e[0].dump(), e[1].dump(), "", "", ""});
          } else {
            set.elements.push_back({e.dump(), "", "", "", ""});
          }
        }
      }
    }
    set.element_count = set.elements.size();
  }

  std::string_view text_;
  const std::string& origin_;
  size_t doc_line_ = 1;
  std::string where_;
  std::vector<TableState> tables_;
  std::unordered_map<std::string, size_t> table_index_;
};

}  // namespace

std::vector<model::Table> parse_nft_json(std::string_view text, const std::string& origin) {
  return NftParser(text, origin).parse();
}

}  // namespace dpscope::importer
