#include "collectors/import/nft_json_text.h"

#include <cstdio>
#include <set>
#include <string_view>

namespace dpscope::importer {

namespace {

using nlohmann::json;

// Thrown inside the printer when a part is not known; caught at the top.
struct Unknown {
  std::string what;
};

[[noreturn]] void unknown(const std::string& what) { throw Unknown{what}; }

// How an integer of a given expression's type prints: nft prints marks as
// 32-bit hex (mark_type), everything else this printer knows in decimal.
enum class Radix { Decimal, Hex32 };

Radix radix_of(const json& e) {
  if (e.is_object() && e.size() == 1) {
    const std::string& kind = e.begin().key();
  const json& body = e.begin().value();
    if ((kind == "meta" || kind == "ct") && body.is_object() && body.value("key", "") == "mark") return Radix::Hex32;
    // A binary operation has its left operand's type.
    if ((kind == "&" || kind == "|" || kind == "^") && body.is_array() && !body.empty()) return radix_of(body[0]);
  }
  return Radix::Decimal;
}

// Bitmask types: nft prints "==" before a single value of them (expression.c
// must_print_eq_op); this printer knows ct state and ct status.
bool is_bitmask(const json& e) {
  if (!e.is_object() || !e.contains("ct")) return false;
  const std::string key = e["ct"].value("key", "");
  return key == "state" || key == "status";
}

std::string number(const json& v, Radix r) {
  if (!v.is_number_unsigned() && !v.is_number_integer()) unknown("a non-integer number");
  if (r == Radix::Hex32) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "0x%08llx", static_cast<unsigned long long>(v.get<uint64_t>()));
    return buf;
  }
  return v.is_number_unsigned() ? std::to_string(v.get<uint64_t>()) : std::to_string(v.get<int64_t>());
}

std::string quoted(const std::string& s) { return "\"" + s + "\""; }

// Keys nft prints without "meta" (meta.c meta_key_is_unqualified).
bool unqualified_meta(const std::string& key) {
  static const std::set<std::string> keys = {"iif", "oif", "iifname", "oifname", "iifgroup", "oifgroup"};
  return keys.count(key) > 0;
}

// Values whose type is a string type print quoted.
bool string_typed(const json& e) {
  if (!e.is_object() || !e.contains("meta")) return false;
  const std::string key = e["meta"].value("key", "");
  return key == "iifname" || key == "oifname" || key == "iifkind" || key == "oifkind" || key == "iif" || key == "oif";
}

std::string expr(const json& e, Radix r = Radix::Decimal, bool quote = false);

std::string verdict(const json& stmt) {
  const std::string& kind = stmt.begin().key();
  const json& body = stmt.begin().value();
  if (kind == "accept" || kind == "drop" || kind == "continue" || kind == "return") return kind;
  if (kind == "jump" || kind == "goto") {
    if (!body.is_object() || !body.contains("target") || !body["target"].is_string()) unknown(kind + " without a target");
    return kind + " " + body["target"].get<std::string>();
  }
  unknown("verdict \"" + kind + "\"");
}

bool is_verdict(const json& e) {
  if (!e.is_object() || e.size() != 1) return false;
  static const std::set<std::string> kinds = {"accept", "drop", "continue", "return", "jump", "goto"};
  return kinds.count(e.begin().key()) > 0;
}

std::string join(const json& items, std::string_view sep, Radix r, bool quote) {
  std::string out;
  for (const auto& x : items) {
    if (!out.empty()) out += sep;
    out += expr(x, r, quote);
  }
  return out;
}

// An anonymous set or map literal: "{ a, b }", "{ 0 : goto x, 1 : goto y }".
std::string set_literal(const json& items, Radix r, bool quote) {
  if (!items.is_array()) return "{ " + expr(items, r, quote) + " }";
  std::string out = "{ ";
  bool first = true;
  for (const auto& x : items) {
    if (!first) out += ", ";
    first = false;
    if (x.is_array() && x.size() == 2) {  // map element: key, data
      out += expr(x[0], r, quote) + " : " + (is_verdict(x[1]) ? verdict(x[1]) : expr(x[1]));
    } else {
      out += expr(x, r, quote);
    }
  }
  return out + " }";
}

std::string expr(const json& e, Radix r, bool quote) {
  if (e.is_string()) {
    const std::string s = e.get<std::string>();
    // "@name" is a set reference in nft's JSON, never a quoted value.
    return quote && s.rfind('@', 0) != 0 ? quoted(s) : s;
  }
  if (e.is_number()) return number(e, r);
  if (e.is_boolean()) return e.get<bool>() ? "exists" : "missing";
  if (e.is_array()) unknown("a bare list");
  if (!e.is_object() || e.size() != 1) unknown("an expression of an unknown shape");
  const std::string& kind = e.begin().key();
  const json& b = e.begin().value();
  if (kind == "payload") {
    if (b.contains("protocol") && b.contains("field")) return b["protocol"].get<std::string>() + " " + b["field"].get<std::string>();
    unknown("a raw payload expression");
  }
  if (kind == "meta") {
    const std::string key = b.value("key", "");
    return unqualified_meta(key) ? key : "meta " + key;
  }
  if (kind == "ct") {
    if (b.contains("dir") || b.contains("family")) unknown("a ct expression with a direction");
    return "ct " + b.value("key", "");
  }
  if (kind == "fib") {
    std::string flags;
    for (const auto& f : b.value("flags", json::array())) flags += (flags.empty() ? "" : " . ") + f.get<std::string>();
    return "fib " + flags + " " + b.value("result", "");
  }
  if (kind == "numgen") {
    std::string out = "numgen " + b.value("mode", "") + " mod " + number(b.at("mod"), Radix::Decimal);
    if (b.contains("offset") && b["offset"] != 0) out += " offset " + number(b["offset"], Radix::Decimal);
    return out;
  }
  if (kind == "prefix") return expr(b.at("addr")) + "/" + number(b.at("len"), Radix::Decimal);
  if (kind == "range") return expr(b.at(0), r, quote) + "-" + expr(b.at(1), r, quote);
  if (kind == "concat") {
    for (const auto& part : b) {
      if (string_typed(part)) unknown("a concatenation with a string-typed part");
    }
    return join(b, " . ", r, quote);
  }
  if (kind == "set") return set_literal(b, r, quote);
  if (kind == "&" || kind == "|" || kind == "^" || kind == "<<" || kind == ">>") {
    if (!b.is_array() || b.size() != 2) unknown("a binary operation of an unknown shape");
    for (const auto& operand : b) {
      if (operand.is_object() && operand.size() == 1 &&
          std::set<std::string>{"&", "|", "^", "<<", ">>"}.count(operand.begin().key())) {
        unknown("a nested binary operation");
      }
    }
    // A shift's amount is a bit count, printed in decimal.
    const Radix left = (kind == "<<" || kind == ">>") ? Radix::Decimal : radix_of(b[0]);
    return expr(b[0]) + " " + kind + " " + expr(b[1], left);
  }
  unknown("expression \"" + kind + "\"");
}

std::string match(const json& m) {
  const json& left = m.at("left");
  const json& right = m.at("right");
  const std::string op = m.value("op", "==");
  const Radix r = radix_of(left);
  const bool quote = string_typed(left);
  std::string out = expr(left) + " ";
  const bool binop_left = left.is_object() && left.size() == 1 &&
                          std::set<std::string>{"&", "|", "^", "<<", ">>"}.count(left.begin().key());
  if (op == "==") {
    if (binop_left || (is_bitmask(left) && !right.is_object())) out += "== ";
  } else if (op != "in") {
    out += op + " ";
  }
  return out + expr(right, r, quote);
}

// nft omits reject's type when it is the family's default.
std::string reject(const json& b, const std::string& family) {
  if (b.is_null()) return "reject";
  const std::string type = b.value("type", "");
  const std::string code = b.value("expr", "");
  const bool default_type = (family == "ip" && type == "icmp") || (family == "ip6" && type == "icmpv6") ||
                            ((family == "inet" || family == "bridge" || family == "netdev") && type == "icmpx");
  if (default_type && code == "port-unreachable") return "reject";
  if (type == "tcp reset") return "reject with tcp reset";
  return "reject with " + type + " " + code;
}

std::string nat(const std::string& kind, const json& b, const std::string& family) {
  if (b.is_null()) return kind;
  std::string out = kind;
  if (b.contains("family") && family == "inet") out += " " + b["family"].get<std::string>();
  if (b.contains("addr") || b.contains("port")) {
    out += " to ";
    if (b.contains("addr")) {
      const std::string addr = expr(b["addr"]);
      const bool v6 = addr.find(':') != std::string::npos;
      out += (v6 && b.contains("port")) ? "[" + addr + "]" : addr;
    }
    if (b.contains("port")) out += ":" + expr(b["port"]);
  }
  if (b.contains("flags")) {
    const json& f = b["flags"];
    if (f.is_string()) {
      out += " " + f.get<std::string>();
    } else {
      std::string flags;
      for (const auto& x : f) flags += (flags.empty() ? "" : ",") + x.get<std::string>();
      out += " " + flags;
    }
  }
  return out;
}

std::string statement(const json& s, const std::string& family) {
  if (!s.is_object() || s.size() != 1) unknown("a statement of an unknown shape");
  const std::string& kind = s.begin().key();
  const json& b = s.begin().value();
  if (kind == "match") return match(b);
  if (is_verdict(s)) return verdict(s);
  if (kind == "counter") {
    if (b.is_string()) unknown("a named counter");
    return "counter packets " + number(b.at("packets"), Radix::Decimal) + " bytes " + number(b.at("bytes"), Radix::Decimal);
  }
  if (kind == "dnat" || kind == "snat" || kind == "masquerade" || kind == "redirect") return nat(kind, b, family);
  if (kind == "reject") return reject(b, family);
  if (kind == "mangle") {
    const json& key = b.at("key");
    return expr(key) + " set " + expr(b.at("value"), radix_of(key), string_typed(key));
  }
  if (kind == "vmap" || kind == "map") {
    const json& key = b.at("key");
    const json& data = b.at("data");
    return expr(key) + " " + kind + " " +
           (data.is_string() ? data.get<std::string>() : expr(data, radix_of(key), string_typed(key)));
  }
  if (kind == "set") {
    const std::string op = b.value("op", "");
    if (op != "add" && op != "update" && op != "delete") unknown("set statement \"" + op + "\"");
    if (b.contains("stmt")) unknown("a set statement with statements of its own");
    return op + " " + b.at("set").get<std::string>() + " { " + expr(b.at("elem")) + " }";
  }
  if (kind == "notrack") return "notrack";
  unknown("statement \"" + kind + "\"");
}

}  // namespace

NftRuleText nft_rule_text(const json& expr_list, const std::string& family, const std::string& comment) {
  NftRuleText out;
  try {
    std::string text;
    for (const auto& s : expr_list) {
      if (!text.empty()) text += " ";
      text += statement(s, family);
    }
    if (!comment.empty()) text += " comment " + quoted(comment);
    out.text = std::move(text);
  } catch (const Unknown& u) {
    out.unknown = u.what;
  } catch (const json::exception& e) {
    out.unknown = std::string("a statement of an unexpected shape (") + e.what() + ")";
  }
  return out;
}

}  // namespace dpscope::importer
