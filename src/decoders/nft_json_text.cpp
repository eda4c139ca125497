#include "decoders/nft_json_text.h"

#include <cstdio>
#include <set>
#include <string_view>
#include <vector>

namespace dpscope::nft_text {

namespace {

using nlohmann::json;

// Thrown inside the printer when a part is not known; caught at the top.
struct Unknown {
  std::string what;
};

[[noreturn]] void unknown(const std::string& what) { throw Unknown{what}; }

// ---------------------------------------------------------------------------
// Datatypes. nft's JSON keeps a value's symbol or number but not its type;
// the text's form of a number (decimal, padded hex) and of a string (quoted
// or not) depends on the type, which follows from the expression the value
// is compared with or assigned to (datatype.c integer_type_print and each
// type's basefmt; string_type_print quotes).
struct Type {
  int hex = -1;              // -1: decimal; else "0x" and at least this many digits
  bool quote = false;        // a string value prints in double quotes
  bool bitmask = false;      // basetype bitmask: "==" before a single value (must_print_eq_op)
  bool ifindex = false;      // ifindex_type: a name quoted, an index without a name as a number
  bool time = false;         // time_type: JSON seconds, text "1m30s" (datatype.c time_print)
  std::vector<Type> parts;   // a concatenation: each part's type
};

const Type kPlain{};
Type hex(int digits) { return Type{digits, false, false, false, false, {}}; }
Type quoted_type() { return Type{-1, true, false, false, false, {}}; }
Type time_type() { return Type{-1, false, false, false, true, {}}; }
Type bitmask() { return Type{0, false, true, false, false, {}}; }
Type ifindex() { return Type{-1, true, false, true, false, {}}; }

bool is_kind(const json& e, std::string_view kind) {
  return e.is_object() && e.size() == 1 && e.begin().key() == kind;
}

bool is_binop(const json& e) {
  static const std::set<std::string> ops = {"&", "|", "^", "<<", ">>"};
  return e.is_object() && e.size() == 1 && ops.count(e.begin().key()) > 0;
}

// meta.c meta_templates, datatype.c, proto.c: the keys whose values do not
// print as plain decimal or unquoted symbols.
Type meta_type(const std::string& key) {
  if (key == "mark") return hex(8);          // mark_type "0x%.8Zx"
  if (key == "protocol" || key == "ibrvproto") return hex(4);  // ethertype_type "0x%.4Zx"
  if (key == "iif" || key == "oif" || key == "sdif") return ifindex();
  static const std::set<std::string> strings = {
      // ifname/ifindex print quoted; devgroup, day and hour symbols are quoted too.
      "iifname", "oifname", "iifkind", "oifkind", "ibrname", "obrname",
      "sdifname", "iifgroup", "oifgroup", "day", "hour", "time", "rtclassid"};
  if (strings.count(key)) return quoted_type();
  return kPlain;
}

Type ct_type(const std::string& key) {
  if (key == "mark") return hex(8);
  if (key == "state" || key == "status" || key == "event") return bitmask();
  if (key == "helper" || key == "label") return quoted_type();
  if (key == "expiration") return time_type();
  return kPlain;
}

Type payload_type(const json& b) {
  if (b.contains("base")) return hex(0);  // raw payload: xinteger_type "0x%Zx"
  const std::string proto = b.value("protocol", ""), field = b.value("field", "");
  if (field == "dscp") return hex(2);                        // dscp_type
  if (field == "ecn") return hex(1);                         // ecn_type
  if ((proto == "ether" || proto == "vlan") && field == "type") return hex(4);  // ethertype_type
  if (proto == "arp" && field == "ptype") return hex(4);
  if (proto == "tcp" && field == "flags") return bitmask();  // tcp_flag_type
  if (proto == "comp" && field == "flags") return hex(0);    // bitmask_type itself: "0x%Zx", no "=="
  return kPlain;
}

Type type_of(const json& e) {
  if (!e.is_object() || e.size() != 1) return kPlain;
  const std::string& kind = e.begin().key();
  const json& b = e.begin().value();
  if (kind == "meta") return meta_type(b.value("key", ""));
  if (kind == "ct") return ct_type(b.value("key", ""));
  if (kind == "payload") return payload_type(b);
  if (kind == "socket" && b.value("key", "") == "mark") return hex(8);
  if (kind == "osf") return quoted_type();  // osf.c: name and version are strings
  if (kind == "rt" && b.value("key", "") == "classid") return quoted_type();  // realm
  if (kind == "fib") {
    const std::string r = b.value("result", "");
    if (r == "oif") return ifindex();
    if (r == "oifname") return quoted_type();
  }
  if (kind == "concat" && b.is_array()) {
    Type t;
    for (const auto& part : b) t.parts.push_back(type_of(part));
    return t;
  }
  // A binary operation has its left operand's type (expression.c binop_expr_alloc).
  if (is_binop(e) && b.is_array() && !b.empty()) return type_of(b[0]);
  return kPlain;
}

// ---------------------------------------------------------------------------
// Values and expressions.

std::string time_text(const json& seconds);

std::string number(const json& v, const Type& t) {
  if (!v.is_number_unsigned() && !v.is_number_integer()) unknown("a non-integer number");
  if (t.time) return time_text(v);
  if (t.hex >= 0) {
    if (v.is_number_integer() && v.get<int64_t>() < 0) unknown("a negative number of a hex type");
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%0*llx", t.hex, static_cast<unsigned long long>(v.get<uint64_t>()));
    return buf;
  }
  return v.is_number_unsigned() ? std::to_string(v.get<uint64_t>()) : std::to_string(v.get<int64_t>());
}

std::string quoted(const std::string& s) {
  // nft prints a string's bytes between quotes as they are, escaping
  // nothing (datatype.c string_type_print): "dummy\*" stays so. A newline
  // would split the rule's line.
  if (s.find('\n') != std::string::npos) unknown("a string with a newline");
  return "\"" + s + "\"";
}

std::string expr(const json& e, const Type& t = kPlain);

std::string string_value(const std::string& s, const Type& t) {
  // "@name" is a set reference in nft's JSON, never a quoted value.
  if (s.rfind('@', 0) == 0) return s;
  // json.c integer_type_json writes an integer past 64 bits as "0x..."; the
  // text has it in hex only for a hex type.
  if (!t.quote && t.hex < 0 && s.rfind("0x", 0) == 0) unknown("a large integer of a decimal type");
  if (!t.quote) return s;
  if (s == "*") unknown("a catch-all element of a string type");
  // meta.c ifindex_type_print: an index with no interface prints as a
  // number (json.c strips the quotes of the named form). Index 0 is never
  // an interface; other digit strings could be either.
  if (t.ifindex && s == "0") return s;
  if (t.ifindex && s.find_first_not_of("0123456789") == std::string::npos) unknown("an interface index or a name of digits");
  return quoted(s);
}

bool is_verdict(const json& e) {
  if (!e.is_object() || e.size() != 1) return false;
  static const std::set<std::string> kinds = {"accept", "drop", "continue", "return", "jump", "goto"};
  return kinds.count(e.begin().key()) > 0;
}

std::string verdict(const json& stmt) {
  const std::string& kind = stmt.begin().key();
  const json& body = stmt.begin().value();
  if (kind == "jump" || kind == "goto") {
    if (!body.is_object() || !body.contains("target") || !body["target"].is_string()) unknown(kind + " without a target");
    return kind + " " + body["target"].get<std::string>();
  }
  if (!body.is_null()) unknown("verdict \"" + kind + "\" with arguments");
  return kind;
}

// A set element with attributes: {"elem": {"val": KEY, "timeout": s, ...}}
// (json.c set_elem_expr_json; printed as expression.c set_elem_expr_print).
std::string statement(const json& s, const std::string& family, bool stateless);
std::string range(const json& b, const Type& t);

// An element's statements, printed with their state as set_elem_expr_print
// prints them, space-separated. nft -j merges an element's one statement
// into the object (json.c set_elem_expr_json), whose key order JSON does not
// keep: one prints as it is, two are refused. "stmt" (the live decoder's
// form; nft -j has no such key) holds several, in their order.
std::string element_statements(const json& b) {
  std::string out;
  for (const auto& [k, v] : b.items()) {
    if (k == "val" || k == "timeout" || k == "expires" || k == "comment") continue;
    if (!out.empty()) unknown("a set element with several statements");
    if (k == "stmt" && v.is_array()) {
      for (const auto& s : v) out += (out.empty() ? "" : " ") + statement(s, "", false);
    } else {
      out = statement(json{{k, v}}, "", false);
    }
  }
  return out;
}

std::string elem(const json& b, const Type& t) {
  std::string out = expr(b.at("val"), t);
  if (const std::string stmts = element_statements(b); !stmts.empty()) out += " " + stmts;
  if (b.contains("timeout")) out += " timeout " + time_text(b["timeout"]);
  if (b.contains("expires")) out += " expires " + time_text(b["expires"]);
  if (b.contains("comment")) out += " comment " + quoted(b["comment"].get<std::string>());
  return out;
}

// datatype.c time_print: "1d2h3m4s". JSON has whole seconds (json.c
// time_type_json drops the milliseconds: a time of 1.5 s would print as
// "1s", the one loss this printer cannot see), so a zero is not trusted.
std::string time_text(const json& seconds) {
  if (!seconds.is_number_unsigned() || seconds.get<uint64_t>() == 0) unknown("a time below one second");
  uint64_t s = seconds.get<uint64_t>();
  std::string out;
  const uint64_t d = s / 86400, h = s % 86400 / 3600, m = s % 3600 / 60, sec = s % 60;
  if (d) out += std::to_string(d) + "d";
  if (h) out += std::to_string(h) + "h";
  if (m) out += std::to_string(m) + "m";
  if (sec) out += std::to_string(sec) + "s";
  return out;
}

// An anonymous set or map literal (expression.c set_expr_print: anonymous
// sets print on one line, ", " between elements). `key` types the keys,
// `data` a map's values.
std::string set_literal(const json& items, const Type& key, const Type& data) {
  if (!items.is_array()) return "{ " + expr(items, key) + " }";
  std::string out = "{ ";
  bool first = true;
  for (const auto& x : items) {
    if (!first) out += ", ";
    first = false;
    if (x.is_array()) {  // map element: key, data
      if (x.size() != 2) unknown("a map element of an unknown shape");
      out += expr(x[0], key) + " : " + (is_verdict(x[1]) ? verdict(x[1]) : expr(x[1], data));
    } else {
      out += expr(x, key);
    }
  }
  return out + " }";
}

// expression.c map_expr_print: "vmap" for a named verdict map (json.c names
// it so) and for an anonymous one whose first element maps to a verdict
// (json.c calls that one "map").
bool anonymous_vmap(const json& data) {
  if (!is_kind(data, "set")) return false;
  const json& items = data["set"];
  return items.is_array() && !items.empty() && items[0].is_array() && items[0].size() == 2 && is_verdict(items[0][1]);
}

std::string map_expr(const std::string& kind, const json& b, const Type& data_type) {
  const json& key = b.at("key");
  const json& data = b.at("data");
  const bool vmap = kind == "vmap" || anonymous_vmap(data);
  std::string out = expr(key) + (vmap ? " vmap " : " map ");
  if (data.is_string()) {
    if (data.get<std::string>().rfind('@', 0) != 0) unknown("a map of a non-reference string");
    return out + data.get<std::string>();
  }
  if (!is_kind(data, "set")) unknown("a map over something other than a set");
  return out + set_literal(data["set"], type_of(key), data_type);
}

// expression.c binop_arg_print: parentheses where the inner operation binds
// less tightly than the outer one.
int precedence(const std::string& op) {
  if (op == "<<" || op == ">>") return 1;
  if (op == "&") return 2;
  if (op == "^") return 3;
  if (op == "|") return 4;
  return 0;
}

std::string binop(const std::string& op, const json& b, const Type& t) {
  if (!b.is_array() || b.size() != 2) unknown("a binary operation of an unknown shape");
  auto arg = [&](const json& a, const Type& at) {
    const std::string s = expr(a, at);
    if (is_binop(a) && precedence(op) < precedence(a.begin().key())) return "(" + s + ")";
    return s;
  };
  // The left operand types the operation; a literal left operand (a bit
  // value inside a flag list) takes the caller's type. A shift's amount is a
  // bit count, printed in decimal.
  const json* leftmost = &b[0];
  while (is_binop(*leftmost) && leftmost->begin().value().is_array() && !leftmost->begin().value().empty())
    leftmost = &leftmost->begin().value()[0];
  const bool literal_left = !leftmost->is_object();
  const Type left = literal_left ? t : type_of(b[0]);
  const Type right = (op == "<<" || op == ">>") ? kPlain : left;
  return arg(b[0], left) + " " + op + " " + arg(b[1], right);
}

std::string payload(const json& b) {
  if (b.contains("protocol") && b.contains("field")) return b["protocol"].get<std::string>() + " " + b["field"].get<std::string>();
  // payload.c payload_expr_print: "@base,offset,len" for a raw payload.
  if (b.contains("base") && b.contains("offset") && b.contains("len"))
    return "@" + b["base"].get<std::string>() + "," + number(b["offset"], kPlain) + "," + number(b["len"], kPlain);
  unknown("a payload expression of an unknown shape");
}

// Keys nft prints without "meta" (meta.c meta_key_is_unqualified).
bool unqualified_meta(const std::string& key) {
  static const std::set<std::string> keys = {"iif", "oif", "iifname", "oifname", "iifgroup", "oifgroup"};
  return keys.count(key) > 0;
}

std::string meta(const json& b) {
  const std::string key = b.value("key", "");
  return unqualified_meta(key) ? key : "meta " + key;
}

// ct.c ct_print: "ct [original|reply] key". For saddr/daddr with a
// direction nft also prints the family, which JSON does not keep.
std::string ct(const json& b) {
  const std::string key = b.value("key", "");
  if (!b.contains("dir")) return "ct " + key;
  if (key == "saddr" || key == "daddr") unknown("a ct address with a direction (the family is not in JSON)");
  return "ct " + b["dir"].get<std::string>() + " " + key;
}

// exthdr.c exthdr_expr_print. A TCP option without a name is raw: with
// the presence flag (a match with exists/missing, a reset) and offset 0 it
// is "tcp option N", else "tcp option @N,offset,len".
std::string exthdr(const std::string& kind, const json& b, bool present = false) {
  if (kind == "tcp option" && !b.contains("name") && b.contains("base")) {
    if (present && b.value("offset", -1) == 0) return "tcp option " + number(b["base"], kPlain);
    if (present) unknown("a raw tcp option present at an offset");
    return "tcp option @" + number(b["base"], kPlain) + "," + number(b.at("offset"), kPlain) + "," + number(b.at("len"), kPlain);
  }
  if (!b.contains("name")) unknown("a raw " + kind + " expression");
  const std::string name = b["name"].get<std::string>();
  const std::string field = b.value("field", "");
  if (kind == "exthdr") return field.empty() ? "exthdr " + name : name + " " + field;
  return kind + " " + name + (field.empty() ? "" : " " + field);
}

std::string ipsec(const json& b) {  // xfrm.c xfrm_expr_print
  std::string out = "ipsec " + b.at("dir").get<std::string>();
  if (b.value("spnum", 0) != 0) out += " spnum " + number(b["spnum"], kPlain);
  if (b.contains("family")) out += " " + b["family"].get<std::string>();
  return out + " " + b.at("key").get<std::string>();
}

std::string hash(const std::string& kind, const json& b) {  // hash.c hash_expr_print
  std::string out = kind;
  if (kind == "jhash") out += " " + expr(b.at("expr"));
  out += " mod " + number(b.at("mod"), kPlain);
  if (b.contains("seed")) out += " seed " + number(b["seed"], hex(0));
  if (b.contains("offset") && b["offset"] != 0) out += " offset " + number(b["offset"], kPlain);
  return out;
}

std::string fib(const json& b) {  // fib.c fib_expr_print
  std::string flags;
  for (const auto& f : b.value("flags", json::array())) {
    if (!f.is_string()) unknown("fib flags of an unknown kind");
    flags += (flags.empty() ? "" : " . ") + f.get<std::string>();
  }
  return "fib " + flags + " " + b.value("result", "");
}

std::string expr(const json& e, const Type& t) {
  if (e.is_string()) return string_value(e.get<std::string>(), t);
  if (e.is_number()) return number(e, t);
  if (e.is_boolean()) return e.get<bool>() ? "exists" : "missing";
  if (e.is_array()) {  // a list of flags: expression.c list_expr_print, "," between
    std::string out;
    for (const auto& x : e) out += (out.empty() ? "" : ",") + expr(x, t);
    if (out.empty()) unknown("an empty list");
    return out;
  }
  if (!e.is_object() || e.size() != 1) unknown("an expression of an unknown shape");
  const std::string& kind = e.begin().key();
  const json& b = e.begin().value();
  if (kind == "payload") return payload(b);
  if (kind == "meta") return meta(b);
  if (kind == "ct") return ct(b);
  if (kind == "fib") return fib(b);
  if (kind == "numgen") {
    std::string out = "numgen " + b.value("mode", "") + " mod " + number(b.at("mod"), kPlain);
    if (b.contains("offset") && b["offset"] != 0) out += " offset " + number(b["offset"], kPlain);
    return out;
  }
  if (kind == "jhash" || kind == "symhash") return hash(kind, b);
  if (kind == "rt") return "rt " + (b.contains("family") ? b["family"].get<std::string>() + " " : "") + b.at("key").get<std::string>();
  if (kind == "socket") {
    const std::string key = b.at("key").get<std::string>();
    if (key == "cgroupv2") unknown("socket cgroupv2 (its level is not in JSON)");
    return "socket " + key;
  }
  if (kind == "osf") return "osf " + (b.contains("ttl") ? "ttl " + b["ttl"].get<std::string>() + " " : "") + b.at("key").get<std::string>();
  if (kind == "ipsec") return ipsec(b);
  if (kind == "exthdr" || kind == "tcp option" || kind == "ip option" || kind == "sctp chunk") return exthdr(kind, b);
  if (kind == "prefix") return expr(b.at("addr"), t) + "/" + number(b.at("len"), kPlain);
  if (kind == "range") return range(b, t);
  if (kind == "concat") {
    if (!b.is_array()) unknown("a concatenation of an unknown shape");
    std::string out;
    for (size_t i = 0; i < b.size(); ++i) {
      const Type& pt = i < t.parts.size() ? t.parts[i] : kPlain;
      // Parts typed by a concatenation of another length are not trusted.
      if (!t.parts.empty() && t.parts.size() != b.size()) unknown("a concatenation literal of an unknown type");
      out += (i ? " . " : "") + expr(b[i], pt);
    }
    return out;
  }
  if (kind == "set") return set_literal(b, t, kPlain);
  if (kind == "elem") return elem(b, t);
  if (kind == "map" || kind == "vmap") return map_expr(kind, b, t);
  if (is_binop(e)) return binop(kind, b, t);
  unknown("expression \"" + kind + "\"");
}

// expression.c range_expr_print prints both ends with every symbol as a
// number; json.c's range keeps symbols ("request"-"reply"). A string end
// is printed only when it is an address, which has no symbol.
std::string range(const json& b, const Type& t) {
  if (!b.is_array() || b.size() != 2) unknown("a range of an unknown shape");
  for (const auto& end : b) {
    if (!end.is_string()) continue;
    const std::string s = end.get<std::string>();
    const bool address = s.find_first_not_of("0123456789abcdefABCDEF.:") == std::string::npos &&
                         s.find_first_of(".:") != std::string::npos;
    if (!address) unknown("a range with a symbolic end (nft prints it as a number)");
  }
  // NFT_CTX_OUTPUT_NUMERIC_TIME there too: a time in whole seconds, "60s".
  if (t.time) return number(b[0], kPlain) + "s-" + number(b[1], kPlain) + "s";
  return expr(b[0], t) + "-" + expr(b[1], t);
}

// ---------------------------------------------------------------------------
// Statements.

// A flag comparison "tcp flags syn / syn,ack" (expression.c
// flagcmp_expr_print): JSON's left is "&" with a list as its mask.
bool is_flagcmp(const json& left) {
  return is_kind(left, "&") && left["&"].is_array() && left["&"].size() == 2 && left["&"][1].is_array();
}

std::string match(const json& m) {
  const json& left = m.at("left");
  const json& right = m.at("right");
  const std::string op = m.value("op", "==");
  if (is_flagcmp(left)) {
    if (op != "==" && op != "!=" && op != "in") unknown("a flag comparison with \"" + op + "\"");
    const json& flagged = left["&"][0];
    const Type t = type_of(flagged);
    return expr(flagged) + (op == "!=" ? " != " : " ") + expr(right, t) + " / " + expr(left["&"][1], t);
  }
  const Type t = type_of(left);
  const bool raw_option_present = is_kind(left, "tcp option") && right.is_boolean();
  std::string out = (raw_option_present ? exthdr("tcp option", left["tcp option"], true) : expr(left)) + " ";
  // expression.c binop_expr_print / must_print_eq_op; json.c writes the
  // implicit operation as "in".
  const bool value_right = !right.is_object() && !right.is_array() &&
                           !(right.is_string() && right.get<std::string>().rfind('@', 0) == 0);
  if (op == "==") {
    if (is_binop(left) || (t.bitmask && value_right)) out += "== ";
  } else if (op != "in") {
    out += op + " ";
  }
  return out + expr(right, t);
}

// statement.c reject_stmt_print: port-unreachable, the default, is left
// out for icmpx, and for icmp/icmpv6 in ip/ip6 tables; inet, bridge and
// netdev tables print icmp/icmpv6 in full (netlink_delinearize.c
// stmt_reject_postprocess sets verbose_print).
std::string reject(const json& b, const std::string& family) {
  if (b.is_null()) return "reject";
  const std::string type = b.value("type", "");
  const std::string code = b.value("expr", "");
  const bool default_type = type == "icmpx" || (family == "ip" && type == "icmp") || (family == "ip6" && type == "icmpv6");
  if (default_type && code == "port-unreachable") return "reject";
  if (type == "tcp reset") return "reject with tcp reset";
  return "reject with " + type + " " + code;
}

std::string flag_list(const json& f, const std::string& sep) {
  if (f.is_string()) return f.get<std::string>();
  std::string out;
  for (const auto& x : f) out += (out.empty() ? "" : sep) + x.get<std::string>();
  return out;
}

// An address for nat/tproxy: an IPv6 value goes in brackets when a port
// follows (statement.c nat_stmt_print) or always (tproxy_stmt_print).
bool ip6_value(const json& a) { return a.is_string() && a.get<std::string>().find(':') != std::string::npos; }

std::string nat(const std::string& kind, const json& b) {  // statement.c nat_stmt_print
  if (b.is_null()) return kind;
  std::string out = kind;
  if (b.contains("addr") || b.contains("port")) {
    if (b.contains("family")) out += " " + b["family"].get<std::string>();
    if (b.contains("type_flags")) out += " " + flag_list(b["type_flags"], " ");
    out += " to";
  }
  if (b.contains("addr")) {
    const json& a = b["addr"];
    out += " ";
    if (b.contains("port") && ip6_value(a)) {
      out += "[" + expr(a) + "]";
    } else if (b.contains("port") && is_kind(a, "range") && ip6_value(a["range"].at(0))) {
      out += "[" + expr(a["range"][0]) + "]-[" + expr(a["range"][1]) + "]";
    } else {
      out += expr(a);
    }
  }
  if (b.contains("port")) out += std::string(b.contains("addr") ? "" : " ") + ":" + expr(b["port"]);
  if (b.contains("flags")) {
    // print_nf_nat_flags prints random, fully-random and persistent, never
    // netmap (it goes with "prefix", printed above).
    std::string flags;
    for (const auto& f : b["flags"].is_string() ? json::array({b["flags"]}) : b["flags"]) {
      const std::string x = f.get<std::string>();
      if (x != "netmap") flags += (flags.empty() ? "" : ",") + x;
    }
    if (!flags.empty()) out += " " + flags;
  }
  return out;
}

std::string log_stmt(const json& b) {  // statement.c log_stmt_print
  std::string out = "log";
  if (b.is_null()) return out;
  if (b.contains("prefix")) out += " prefix " + quoted(b["prefix"].get<std::string>());
  if (b.contains("group")) out += " group " + number(b["group"], kPlain);
  if (b.contains("snaplen")) out += " snaplen " + number(b["snaplen"], kPlain);
  if (b.contains("queue-threshold")) out += " queue-threshold " + number(b["queue-threshold"], kPlain);
  if (b.contains("level")) out += " level " + b["level"].get<std::string>();
  if (b.contains("flags")) {
    std::set<std::string> f;
    if (b["flags"].is_string()) {
      f.insert(b["flags"].get<std::string>());
    } else {
      for (const auto& x : b["flags"]) f.insert(x.get<std::string>());
    }
    if (f.count("all")) return out + " flags all";
    if (f.count("tcp sequence") || f.count("tcp options")) {
      out += " flags tcp";
      if (f.count("tcp sequence")) out += " sequence";
      if (f.count("tcp options")) out += std::string(f.count("tcp sequence") ? "," : " ") + "options";
    }
    if (f.count("ip options")) out += " flags ip options";
    if (f.count("skuid")) out += " flags skuid";
    if (f.count("ether")) out += " flags ether";
  }
  return out;
}

std::string limit_stmt(const json& b) {  // statement.c limit_stmt_print
  std::string out = "limit rate ";
  if (b.value("inv", false)) out += "over ";
  const std::string per = b.at("per").get<std::string>();
  if (!b.contains("rate_unit")) {  // packets
    out += number(b.at("rate"), kPlain) + "/" + per;
    const uint64_t burst = b.value("burst", uint64_t{0});
    if (burst != 0 && burst != 5) out += " burst " + std::to_string(burst) + " packets";
    return out;
  }
  out += number(b.at("rate"), kPlain) + " " + b["rate_unit"].get<std::string>() + "/" + per;
  if (b.value("burst", uint64_t{0}) != 0) out += " burst " + number(b["burst"], kPlain) + " " + b.value("burst_unit", "bytes");
  return out;
}

std::string quota_stmt(const json& b, bool stateless) {  // statement.c quota_stmt_print
  std::string out = std::string("quota ") + (b.value("inv", false) ? "over " : "") + number(b.at("val"), kPlain) + " " +
                    b.at("val_unit").get<std::string>();
  if (!stateless && b.contains("used")) out += " used " + number(b["used"], kPlain) + " " + b.value("used_unit", "bytes");
  return out;
}

// statement.c queue_stmt_print. A listed queue statement always has its
// number (netlink_delinearize.c netlink_parse_queue); {"queue": null} is
// the bare NF_QUEUE verdict or a queue without one, which print apart.
std::string queue_stmt(const json& b) {
  std::string out = "queue";
  if (b.is_null() || !b.contains("num")) unknown("a queue without a number");
  if (b.contains("flags")) out += " flags " + flag_list(b["flags"], ",");
  return out + " to " + expr(b["num"]);
}

std::string tproxy_stmt(const json& b) {  // statement.c tproxy_stmt_print
  std::string out = "tproxy";
  if (b.contains("family")) out += " " + b["family"].get<std::string>();
  out += " to";
  if (b.contains("addr")) out += " " + (ip6_value(b["addr"]) ? "[" + expr(b["addr"]) + "]" : expr(b["addr"]));
  if (b.contains("port")) {
    if (b["port"].is_object()) unknown("a tproxy port that is not a value");
    out += std::string(b.contains("addr") ? "" : " ") + ":" + expr(b["port"]);
  }
  return out;
}

std::string synproxy_stmt(const json& b) {  // statement.c synproxy_stmt_print
  std::string out = "synproxy";
  if (b.is_null()) return out;
  if (b.contains("mss")) out += " mss " + number(b["mss"], kPlain);
  if (b.contains("wscale")) out += " wscale " + number(b["wscale"], kPlain);
  std::set<std::string> f;
  for (const auto& x : b.value("flags", json::array())) f.insert(x.get<std::string>());
  if (f.count("timestamp")) out += " timestamp";
  if (f.count("sack-perm")) out += " sack-perm";
  return out;
}

// A named object's reference (statement.c objref_stmt_print): the name is
// a string, or a map from a key to names.
std::string objref(const std::string& kind, const json& b) {
  std::string head;
  if (kind == "ct helper" || kind == "ct timeout" || kind == "ct expectation") head = kind + " set ";
  else if (kind == "secmark") head = "meta secmark set ";
  else head = kind + " name ";
  if (b.is_string()) return head + quoted(b.get<std::string>());
  if (is_kind(b, "map")) return head + map_expr("map", b["map"], quoted_type());
  unknown("a " + kind + " reference of an unknown shape");
}

// statement.c set_stmt_print: inner statements print stateless.
std::string set_stmt(const json& b) {
  const std::string op = b.value("op", "");
  if (op != "add" && op != "update" && op != "delete") unknown("set statement \"" + op + "\"");
  std::string out = op + " " + b.at("set").get<std::string>() + " { " + expr(b.at("elem"));
  for (const auto& s : b.value("stmt", json::array())) out += " " + statement(s, "", true);
  return out + " }";
}

// statement.c map_stmt_print, from nft 1.0.7's JSON form of it (1.0.6 prints the text itself).
std::string map_stmt(const json& b) {
  const std::string op = b.value("op", "");
  if (op != "add" && op != "update" && op != "delete") unknown("map statement \"" + op + "\"");
  std::string out = op + " " + b.at("map").get<std::string>() + " { " + expr(b.at("elem"));
  for (const auto& s : b.value("stmt", json::array())) out += " " + statement(s, "", true);
  return out + " : " + expr(b.at("data")) + " }";
}

std::string meter_stmt(const json& b) {  // statement.c meter_stmt_print
  std::string out = "meter ";
  if (b.contains("name")) out += b["name"].get<std::string>() + " ";
  return out + "size " + number(b.at("size"), kPlain) + " { " + expr(b.at("key")) + " " + statement(b.at("stmt"), "", true) +
         " }";
}

std::string mangle(const json& b) {
  const json& key = b.at("key");
  return expr(key) + " set " + expr(b.at("value"), type_of(key));
}

std::string statement(const json& s, const std::string& family, bool stateless) {
  // A statement without a JSON form (a map update, a chain binding with its
  // rules on their own lines) is nft's own text of it (json.c stmt_print_json).
  if (s.is_string()) return s.get<std::string>();
  if (!s.is_object() || s.size() != 1) unknown("a statement of an unknown shape");
  const std::string& kind = s.begin().key();
  const json& b = s.begin().value();
  if (kind == "match") return match(b);
  if (is_verdict(s)) return verdict(s);
  if (kind == "counter") {
    if (b.is_string() || (b.is_object() && b.contains("map"))) return objref(kind, b);
    if (b.is_null() || stateless) return "counter";
    return "counter packets " + number(b.at("packets"), kPlain) + " bytes " + number(b.at("bytes"), kPlain);
  }
  if (kind == "quota" || kind == "limit" || kind == "synproxy") {
    if (b.is_string() || (b.is_object() && b.contains("map"))) return objref(kind, b);
  }
  if (kind == "ct helper" || kind == "ct timeout" || kind == "ct expectation" || kind == "secmark") return objref(kind, b);
  if (kind == "dnat" || kind == "snat" || kind == "masquerade" || kind == "redirect") return nat(kind, b);
  if (kind == "reject") return reject(b, family);
  if (kind == "mangle") return mangle(b);
  if (kind == "map" && b.is_object() && b.contains("op")) return map_stmt(b);
  if (kind == "vmap" || kind == "map") return map_expr(kind, b, kPlain);
  if (kind == "set") return set_stmt(b);
  if (kind == "log") return log_stmt(b);
  if (kind == "limit") return limit_stmt(b);
  if (kind == "quota") return quota_stmt(b, stateless);
  if (kind == "queue") return queue_stmt(b);
  if (kind == "tproxy") return tproxy_stmt(b);
  if (kind == "synproxy") return synproxy_stmt(b);
  if (kind == "meter") return meter_stmt(b);
  if (kind == "notrack") return "notrack";
  if (kind == "ct count") return std::string("ct count ") + (b.value("inv", false) ? "over " : "") + number(b.at("val"), kPlain);
  if (kind == "flow") return "flow " + b.at("op").get<std::string>() + " " + b.at("flowtable").get<std::string>();
  // statement.c dup_stmt_print, fwd_stmt_print. In netdev, dup's "addr"
  // is the device (evaluate.c stmt_evaluate_dup).
  if (kind == "dup") {
    if (b.is_null()) return "dup";
    const Type to = family == "netdev" ? ifindex() : kPlain;
    return "dup to " + expr(b.at("addr"), to) + (b.contains("dev") ? " device " + expr(b["dev"], ifindex()) : "");
  }
  if (kind == "fwd") {
    if (b.contains("addr")) return "fwd " + b.at("family").get<std::string>() + " to " + expr(b["addr"]) + " device " + expr(b.at("dev"), ifindex());
    return "fwd to " + expr(b.at("dev"), ifindex());
  }
  if (kind == "reset") {  // statement.c optstrip_stmt_print: the option with its presence flag
    if (is_kind(b, "tcp option")) return "reset " + exthdr("tcp option", b["tcp option"], true);
    return "reset " + expr(b);
  }
  unknown("statement \"" + kind + "\"");
}

// A set's declared datatype by nft's name of it (datatype.c and friends:
// each type's basefmt and print): how its values print.
Type datatype_type(const std::string& name) {
  if (name.find(" . ") != std::string::npos) {
    Type t;
    for (size_t b = 0, e; b <= name.size(); b = e + 3) {
      e = name.find(" . ", b);
      if (e == std::string::npos) e = name.size();
      t.parts.push_back(datatype_type(name.substr(b, e - b)));
    }
    return t;
  }
  if (name == kIntegerHex) return hex(0);
  if (name == kIntegerDecimal) return kPlain;
  if (name == "integer") unknown("an integer of a typeof set (nft -j does not say whether it prints in hex or decimal)");
  if (name == "mark") return hex(8);
  if (name == "ether_type") return hex(4);
  if (name == "dscp") return hex(2);
  if (name == "ecn") return hex(1);
  if (name == "ct_state" || name == "ct_status" || name == "ct_event" || name == "tcp_flag") return bitmask();
  if (name == "iface_index") return ifindex();
  // Names (ifname, string) and the symbols nft quotes; an object map's
  // values are its objects' names (netlink.c: string_type).
  static const std::set<std::string> quoted_names = {
      "ifname", "string", "devgroup", "realm", "day", "hour",
      "counter", "quota", "ct helper", "limit", "ct timeout", "ct expectation", "synproxy", "secmark"};
  if (quoted_names.count(name)) return quoted_type();
  static const std::set<std::string> plain = {
      "ipv4_addr", "ipv6_addr", "ether_addr", "inet_proto", "inet_service", "nf_proto", "icmp_type",
      "icmpv6_type", "icmp_code", "icmpv6_code", "icmpx_code", "arp_op", "iface_type", "pkt_type", "ct_dir",
      "fib_addrtype", "uid", "gid", "boolean", "igmp_type", "mh_type", "dccp_pkttype", "ll_addr",
      "classid"};  // a tc handle: "1:2", "root", "none" (meta.c tchandle_type_print)
  if (plain.count(name)) return kPlain;
  unknown("a set of datatype \"" + name + "\"");
}

}  // namespace

NftElementText nft_set_element_text(const json& element, const std::vector<std::string>& key_type,
                                    const std::string& data_type) {
  NftElementText out;
  try {
    const bool pair = element.is_array();
    if (pair && element.size() != 2) unknown("a map element of an unknown shape");
    const json& key = pair ? element[0] : element;
    Type kt;
    if (key_type.size() == 1) {
      kt = datatype_type(key_type[0]);
    } else {
      for (const auto& t : key_type) kt.parts.push_back(datatype_type(t));
    }
    if (is_kind(key, "elem")) {
      const json& b = key["elem"];
      out.statements = element_statements(b);
      out.key = expr(b.at("val"), kt);
      if (b.contains("timeout")) out.timeout = time_text(b["timeout"]);
      if (b.contains("comment")) {
        out.comment = b["comment"].get<std::string>();
        quoted(out.comment);  // refuses what would not print on one line
      }
    } else {
      out.key = expr(key, kt);
    }
    if (pair) out.value = is_verdict(element[1]) ? verdict(element[1]) : expr(element[1], datatype_type(data_type));
  } catch (const Unknown& u) {
    out = NftElementText{};
    out.unknown = u.what;
  } catch (const json::exception& e) {
    out = NftElementText{};
    out.unknown = std::string("an element of an unexpected shape (") + e.what() + ")";
  }
  return out;
}

NftRuleText nft_rule_text(const json& expr_list, const std::string& family, const std::string& comment) {
  NftRuleText out;
  try {
    std::string text;
    for (const auto& s : expr_list) {
      if (!text.empty()) text += " ";
      text += statement(s, family, false);
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

}  // namespace dpscope::nft_text
