#include "model/json.h"

#include <set>

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <thread>
#include <vector>

#include "model/compression.h"
#include "model/json_put.h"
#include "model/output_file.h"
#include "util/error.h"
#include "util/fd.h"
#include "util/memory.h"

namespace dpscope::model {

using nlohmann::json;

namespace {

// ---- writing --------------------------------------------------------------

json counters_json(const Counters& c) { return {{"packets", c.packets}, {"bytes", c.bytes}}; }

json prefix_json(const Prefix& p) { return {{"cidr", p.cidr}, {"negated", p.negated}}; }

json rule_json(const Rule& r) {
  json m = json::object();
  if (r.match.source) m["source"] = prefix_json(*r.match.source);
  if (r.match.destination) m["destination"] = prefix_json(*r.match.destination);
  if (!r.match.protocol.empty()) {
    m["protocol"] = r.match.protocol;
    if (r.match.protocol_negated) m["protocol_negated"] = true;
  }
  if (!r.match.dport.empty()) {
    m["dport"] = r.match.dport;
    if (r.match.dport_negated) m["dport_negated"] = true;
  }
  if (!r.match.comment.empty()) m["comment"] = r.match.comment;
  if (!r.match.modules.empty()) m["modules"] = r.match.modules;
  json j = {{"position", r.position}, {"match", m}, {"verdict_kind", r.verdict_kind}};
  if (!r.target.empty()) j["target"] = r.target;
  if (!r.target_args.empty()) j["target_args"] = r.target_args;
  if (!r.text.empty()) j["text"] = r.text;
  if (r.counters) j["counters"] = counters_json(*r.counters);
  if (r.undecoded) {
    j["undecoded"] = true;
    j["raw"] = r.raw;
  }
  return j;
}

json chain_json(const Chain& c) {
  json j = {{"name", c.name}};
  if (c.comment) j["comment"] = *c.comment;
  if (c.handle) j["handle"] = c.handle;
  if (c.base) {
    j["base"] = {{"hook", c.base->hook},
                 {"type", c.base->type},
                 {"priority", c.base->priority},
                 {"policy", c.base->policy}};
    if (!c.base->devices.empty()) j["base"]["devices"] = c.base->devices;
    if (c.base->offload) j["base"]["offload"] = true;
  }
  if (c.policy_counters) j["policy_counters"] = counters_json(*c.policy_counters);
  j["rule_count"] = c.rule_count;
  j["rules_recorded"] = c.rules_recorded;
  json rules = json::array();
  for (const auto& r : c.rules) rules.push_back(rule_json(r));
  j["rules"] = std::move(rules);
  return j;
}

}  // namespace

// Only what is said: a set declared by type with no flags is {}.
json set_declaration_json(const NftSetDeclaration& d) {
  json j = json::object();
  if (!d.key_typeof.empty()) j["key_typeof"] = d.key_typeof;
  if (!d.data_typeof.empty()) j["data_typeof"] = d.data_typeof;
  if (d.data_interval) j["data_interval"] = true;
  if (!d.flags.empty()) j["flags"] = d.flags;
  if (!d.policy.empty()) j["policy"] = d.policy;
  if (d.size) j["size"] = d.size;
  if (!d.timeout.empty()) j["timeout"] = d.timeout;
  if (!d.gc_interval.empty()) j["gc_interval"] = d.gc_interval;
  if (d.auto_merge) j["auto_merge"] = true;
  if (!d.statements.empty()) j["statements"] = d.statements;
  if (!d.undecoded.empty()) j["undecoded"] = d.undecoded;
  return j;
}

namespace {

json object_json(const NftObject& o) {
  json j = {{"kind", o.kind}, {"name", o.name}, {"lines", o.lines}};
  if (!o.comment.empty()) j["comment"] = o.comment;
  if (!o.undecoded.empty()) j["undecoded"] = o.undecoded;
  if (o.handle) j["handle"] = o.handle;
  return j;
}

json flowtable_json(const NftFlowtable& f) {
  json j = {{"name", f.name}, {"hook", f.hook}, {"priority", f.priority}, {"devices", f.devices}};
  if (f.offload) j["offload"] = true;
  if (f.counter) j["counter"] = true;
  if (f.handle) j["handle"] = f.handle;
  return j;
}

}  // namespace

json table_declarations_json(const Table& t) {
  json j = json::object();
  if (!t.declarations_recorded) return j;
  j["declarations_recorded"] = true;
  if (t.handle) j["handle"] = t.handle;
  if (!t.flags.empty()) j["flags"] = t.flags;
  if (!t.comment.empty()) j["comment"] = t.comment;
  json objects = json::array(), flowtables = json::array();
  for (const auto& o : t.objects) objects.push_back(object_json(o));
  for (const auto& f : t.flowtables) flowtables.push_back(flowtable_json(f));
  j["objects"] = std::move(objects);
  j["flowtables"] = std::move(flowtables);
  return j;
}

namespace {

json set_json(const NftSet& s) {
  json j = {{"name", s.name},
            {"is_map", s.is_map},
            {"key_type", s.key_type},
            {"data_type", s.data_type},
            {"comment", s.comment},
            {"elements_recorded", s.elements_recorded}};
  if (s.elements_unread.empty()) {
    j["element_count"] = s.element_count;
  } else {
    j["elements_unread"] = s.elements_unread;
  }
  if (!s.elements_undecoded.empty()) j["elements_undecoded"] = s.elements_undecoded;
  json el = json::array();
  for (const auto& e : s.elements) {
    json ej = {{"key", e.key}};
    if (!e.value.empty()) ej["value"] = e.value;
    if (!e.comment.empty()) ej["comment"] = e.comment;
    if (!e.timeout.empty()) ej["timeout"] = e.timeout;
    if (!e.statements.empty()) ej["statements"] = e.statements;
    el.push_back(std::move(ej));
  }
  j["elements"] = std::move(el);
  if (s.declaration) j["declaration"] = set_declaration_json(*s.declaration);
  if (s.handle) j["handle"] = s.handle;
  return j;
}

json table_json(const Table& t) {
  json chains = json::array();
  for (const auto& c : t.chains) chains.push_back(chain_json(c));
  json sets = json::array();
  for (const auto& s : t.sets) sets.push_back(set_json(s));
  json j = {{"backend", to_string(t.backend)},
            {"family", t.family},
            {"name", t.name},
            {"chains", std::move(chains)},
            {"sets", std::move(sets)}};
  j.update(table_declarations_json(t));
  return j;
}

json ebpf_json(const Ebpf& e) {
  json progs = json::array();
  for (const auto& p : e.programs) {
    json j = {{"id", p.id},
              {"type", p.type},
              {"name", p.name},
              {"tag", p.tag},
              {"loaded_at", p.loaded_at},
              {"bytes_xlated", p.bytes_xlated},
              {"bytes_jited", p.bytes_jited},
              {"bytes_memlock", p.bytes_memlock},
              {"map_ids", p.map_ids},
              {"btf_id", p.btf_id},
              {"pinned", p.pinned}};
    put_opt(j, "run_time_ns", p.run_time_ns);
    put_opt(j, "run_cnt", p.run_cnt);
    progs.push_back(std::move(j));
  }
  json maps = json::array();
  for (const auto& m : e.maps) {
    json j = {{"id", m.id},
              {"type", m.type},
              {"name", m.name},
              {"bytes_key", m.key_size},
              {"bytes_value", m.value_size},
              {"max_entries", m.max_entries},
              {"flags", m.flags},
              {"bytes_memlock", m.bytes_memlock},
              {"btf_id", m.btf_id},
              {"pinned", m.pinned}};
    put_opt(j, "entries", m.entries);
    if (!m.entries_note.empty()) j["entries_note"] = m.entries_note;
    maps.push_back(std::move(j));
  }
  json links = json::array();
  for (const auto& l : e.links) {
    links.push_back({{"id", l.id},
                     {"type", l.type},
                     {"prog_id", l.prog_id},
                     {"attach_type", l.attach_type},
                     {"ifindex", l.ifindex},
                     {"interface", l.interface},
                     {"cgroup_id", l.cgroup_id},
                     {"pinned", l.pinned}});
  }
  json atts = json::array();
  for (const auto& a : e.attachments) {
    json j = {{"kind", a.kind},
              {"target", a.target},
              {"direction", a.direction},
              {"prog_id", a.prog_id},
              {"prog_name", a.prog_name},
              {"priority", a.priority},
              {"handle", a.handle},
              {"direct_action", a.direct_action}};
    put_opt(j, "link_id", a.link_id);
    atts.push_back(std::move(j));
  }
  json services = json::array();
  for (const auto& s : e.services) {
    json fes = json::array();
    for (const auto& f : s.frontends) {
      fes.push_back({{"address", f.address},
                     {"port", f.port},
                     {"protocol", f.protocol},
                     {"type", f.type},
                     {"scope", f.scope},
                     {"backends", f.backends},
                     {"service_id", f.service_id},
                     {"surrogate", f.surrogate}});
      if (s.backends_linked && !f.backend_ids.empty()) fes.back()["backend_ids"] = f.backend_ids;
    }
    json bes = json::array();
    for (const auto& b : s.backends) {
      bes.push_back({{"id", b.id},
                     {"address", b.address},
                     {"port", b.port},
                     {"protocol", b.protocol},
                     {"state", b.state}});
    }
    json entry = {{"dataplane", s.dataplane},
                        {"layout", s.layout},
                        {"maps", s.maps},
                        {"decoded", s.decoded},
                        {"note", s.note},
                        {"wildcard_skipped", s.wildcard_skipped},
                        {"frontends", std::move(fes)},
                        {"backends", std::move(bes)}};
    // Only when linked: snapshots of imports and older files keep their bytes.
    if (s.backends_linked) entry["backends_linked"] = true;
    services.push_back(std::move(entry));
  }
  return {{"collected", e.collected},     {"programs", std::move(progs)},
          {"maps", std::move(maps)},      {"links", std::move(links)},
          {"attachments", std::move(atts)}, {"services", std::move(services)}};
}

// ---- reading --------------------------------------------------------------
// A small cursor that knows its JSON pointer, so a wrong field is reported as
// "/netfilter/tables/2/chains/0/name: expected string".

class Reader {
 public:
  Reader(const json& j, std::string path) : j_(j), path_(std::move(path)) {}

  const json& raw() const { return j_; }
  const std::string& path() const { return path_; }

  [[noreturn]] void fail(const std::string& what) const {
    throw std::invalid_argument((path_.empty() ? "/" : path_) + ": " + what);
  }

  bool has(const char* key) const { return j_.is_object() && j_.contains(key) && !j_[key].is_null(); }

  Reader at(const char* key) const {
    if (!j_.is_object()) fail("expected an object");
    auto it = j_.find(key);
    if (it == j_.end()) fail(std::string("missing key '") + key + "'");
    return Reader(*it, path_ + "/" + key);
  }

  std::vector<Reader> items() const {
    if (!j_.is_array()) fail("expected an array");
    std::vector<Reader> out;
    out.reserve(j_.size());
    for (size_t i = 0; i < j_.size(); ++i) out.emplace_back(j_[i], path_ + "/" + std::to_string(i));
    return out;
  }

  std::string str() const {
    if (!j_.is_string()) fail("expected a string");
    return j_.get<std::string>();
  }
  bool boolean() const {
    if (!j_.is_boolean()) fail("expected true or false");
    return j_.get<bool>();
  }
  template <typename T>
  T num() const {
    if (!j_.is_number_integer()) fail("expected an integer");
    if constexpr (std::is_unsigned_v<T>) {
      if (j_.is_number_unsigned()) {
        auto v = j_.get<uint64_t>();
        if (v > std::numeric_limits<T>::max()) fail("integer out of range");
        return static_cast<T>(v);
      }
      auto v = j_.get<int64_t>();
      if (v < 0 || static_cast<uint64_t>(v) > std::numeric_limits<T>::max()) fail("integer out of range");
      return static_cast<T>(v);
    } else {
      auto v = j_.get<int64_t>();
      if (v < std::numeric_limits<T>::min() || v > std::numeric_limits<T>::max()) fail("integer out of range");
      return static_cast<T>(v);
    }
  }

  // Optional-field helpers: absent or null leaves the default.
  std::string str_or(const char* key, std::string def = {}) const { return has(key) ? at(key).str() : def; }
  bool bool_or(const char* key, bool def) const { return has(key) ? at(key).boolean() : def; }
  template <typename T>
  T num_or(const char* key, T def) const {
    return has(key) ? at(key).template num<T>() : def;
  }
  template <typename T>
  std::optional<T> opt_num(const char* key) const {
    if (!has(key)) return std::nullopt;
    return at(key).template num<T>();
  }
  std::vector<std::string> strings_or(const char* key) const {
    std::vector<std::string> out;
    if (!has(key)) return out;
    for (const auto& r : at(key).items()) out.push_back(r.str());
    return out;
  }
  template <typename T>
  std::vector<T> nums_or(const char* key) const {
    std::vector<T> out;
    if (!has(key)) return out;
    for (const auto& r : at(key).items()) out.push_back(r.template num<T>());
    return out;
  }

 private:
  const json& j_;
  std::string path_;
};

Counters read_counters(const Reader& r) {
  return {r.at("packets").num<uint64_t>(), r.at("bytes").num<uint64_t>()};
}

Prefix read_prefix(const Reader& r) { return {r.at("cidr").str(), r.bool_or("negated", false)}; }

Rule read_rule(const Reader& r) {
  Rule x;
  x.position = r.at("position").num<uint32_t>();
  if (r.has("match")) {
    Reader m = r.at("match");
    if (m.has("source")) x.match.source = read_prefix(m.at("source"));
    if (m.has("destination")) x.match.destination = read_prefix(m.at("destination"));
    x.match.protocol = m.str_or("protocol");
    x.match.protocol_negated = m.bool_or("protocol_negated", false);
    x.match.dport = m.str_or("dport");
    x.match.dport_negated = m.bool_or("dport_negated", false);
    x.match.comment = m.str_or("comment");
    x.match.modules = m.strings_or("modules");
  }
  x.verdict_kind = r.str_or("verdict_kind", "none");
  static const char* kinds[] = {"jump", "goto", "verdict", "target", "vmap", "none"};
  if (std::find(std::begin(kinds), std::end(kinds), x.verdict_kind) == std::end(kinds)) {
    r.at("verdict_kind").fail("unknown verdict_kind '" + x.verdict_kind + "'");
  }
  x.target = r.str_or("target");
  x.target_args = r.str_or("target_args");
  x.text = r.str_or("text");
  if (r.has("counters")) x.counters = read_counters(r.at("counters"));
  x.undecoded = r.bool_or("undecoded", false);
  x.raw = r.str_or("raw");
  return x;
}

Chain read_chain(const Reader& r) {
  Chain c;
  c.name = r.at("name").str();
  if (r.has("base")) {
    Reader b = r.at("base");
    c.base = BaseChain{b.str_or("hook"), b.str_or("type"), b.num_or<int32_t>("priority", 0), b.str_or("policy"),
                       b.strings_or("devices"), b.bool_or("offload", false)};
  }
  if (r.has("comment")) c.comment = r.at("comment").str();
  c.handle = r.num_or<uint64_t>("handle", 0);
  if (r.has("policy_counters")) c.policy_counters = read_counters(r.at("policy_counters"));
  c.rules_recorded = r.bool_or("rules_recorded", true);
  if (r.has("rules")) {
    for (const auto& rr : r.at("rules").items()) c.rules.push_back(read_rule(rr));
  }
  c.rule_count = r.num_or<uint64_t>("rule_count", c.rules.size());
  if (c.rules_recorded && c.rule_count != c.rules.size()) {
    r.at("rule_count").fail("rule_count " + std::to_string(c.rule_count) + " but " +
                            std::to_string(c.rules.size()) + " rules recorded");
  }
  return c;
}

NftSet read_set(const Reader& r) {
  NftSet s;
  s.name = r.at("name").str();
  s.is_map = r.bool_or("is_map", false);
  s.key_type = r.strings_or("key_type");
  s.data_type = r.str_or("data_type");
  s.comment = r.str_or("comment");
  s.elements_recorded = r.bool_or("elements_recorded", false);
  if (r.has("elements")) {
    for (const auto& e : r.at("elements").items()) {
      s.elements.push_back({e.at("key").str(), e.str_or("value"), e.str_or("comment"), e.str_or("timeout"),
                            e.str_or("statements")});
    }
  }
  s.elements_unread = r.str_or("elements_unread");
  s.elements_undecoded = r.str_or("elements_undecoded");
  if (!s.elements_unread.empty() && (s.elements_recorded || r.has("element_count") || !s.elements.empty())) {
    r.at("elements_unread").fail("elements_unread with elements or an element_count: the elements are either read or not");
  }
  s.element_count = r.num_or<uint64_t>("element_count", s.elements.size());
  if (r.has("declaration")) {
    Reader d = r.at("declaration");
    NftSetDeclaration x;
    x.key_typeof = d.str_or("key_typeof");
    x.data_typeof = d.str_or("data_typeof");
    x.data_interval = d.bool_or("data_interval", false);
    x.flags = d.strings_or("flags");
    x.policy = d.str_or("policy");
    x.size = d.num_or<uint32_t>("size", 0);
    x.timeout = d.str_or("timeout");
    x.gc_interval = d.str_or("gc_interval");
    x.auto_merge = d.bool_or("auto_merge", false);
    x.statements = d.str_or("statements");
    x.undecoded = d.str_or("undecoded");
    s.declaration = std::move(x);
  }
  s.handle = r.num_or<uint64_t>("handle", 0);
  return s;
}

Table read_table(const Reader& r) {
  Table t;
  Reader b = r.at("backend");
  try {
    t.backend = backend_from_string(b.str());
  } catch (const std::invalid_argument&) {
    b.fail("unknown backend '" + b.str() + "' (iptables-nft | iptables-legacy | nftables)");
  }
  t.family = r.at("family").str();
  t.name = r.at("name").str();
  if (r.has("chains")) {
    for (const auto& c : r.at("chains").items()) t.chains.push_back(read_chain(c));
  }
  if (r.has("sets")) {
    for (const auto& s : r.at("sets").items()) t.sets.push_back(read_set(s));
  }
  t.declarations_recorded = r.bool_or("declarations_recorded", false);
  t.handle = r.num_or<uint64_t>("handle", 0);
  t.flags = r.strings_or("flags");
  t.comment = r.str_or("comment");
  if (r.has("objects")) {
    for (const auto& o : r.at("objects").items()) {
      t.objects.push_back({o.at("kind").str(), o.at("name").str(), o.str_or("comment"), o.strings_or("lines"),
                           o.str_or("undecoded"), o.num_or<uint64_t>("handle", 0)});
    }
  }
  if (r.has("flowtables")) {
    for (const auto& f : r.at("flowtables").items()) {
      t.flowtables.push_back({f.at("name").str(), f.str_or("hook"), f.num_or<int32_t>("priority", 0),
                              f.strings_or("devices"), f.bool_or("offload", false), f.bool_or("counter", false),
                              f.num_or<uint64_t>("handle", 0)});
    }
  }
  return t;
}

Ebpf read_ebpf(const Reader& r) {
  Ebpf e;
  e.collected = r.bool_or("collected", false);
  if (r.has("programs")) {
    for (const auto& p : r.at("programs").items()) {
      BpfProgram x;
      x.id = p.at("id").num<uint32_t>();
      x.type = p.str_or("type");
      x.name = p.str_or("name");
      x.tag = p.str_or("tag");
      x.loaded_at = p.str_or("loaded_at");
      x.bytes_xlated = p.num_or<uint32_t>("bytes_xlated", 0);
      x.bytes_jited = p.num_or<uint32_t>("bytes_jited", 0);
      x.bytes_memlock = p.num_or<uint64_t>("bytes_memlock", 0);
      x.map_ids = p.nums_or<uint32_t>("map_ids");
      x.btf_id = p.num_or<uint32_t>("btf_id", 0);
      x.run_time_ns = p.opt_num<uint64_t>("run_time_ns");
      x.run_cnt = p.opt_num<uint64_t>("run_cnt");
      x.pinned = p.strings_or("pinned");
      e.programs.push_back(std::move(x));
    }
  }
  if (r.has("maps")) {
    for (const auto& m : r.at("maps").items()) {
      BpfMap x;
      x.id = m.at("id").num<uint32_t>();
      x.type = m.str_or("type");
      x.name = m.str_or("name");
      x.key_size = m.num_or<uint32_t>("bytes_key", 0);
      x.value_size = m.num_or<uint32_t>("bytes_value", 0);
      x.max_entries = m.num_or<uint32_t>("max_entries", 0);
      x.flags = m.num_or<uint32_t>("flags", 0);
      x.bytes_memlock = m.num_or<uint64_t>("bytes_memlock", 0);
      x.btf_id = m.num_or<uint32_t>("btf_id", 0);
      x.pinned = m.strings_or("pinned");
      x.entries = m.opt_num<uint64_t>("entries");
      x.entries_note = m.str_or("entries_note");
      e.maps.push_back(std::move(x));
    }
  }
  if (r.has("links")) {
    for (const auto& l : r.at("links").items()) {
      BpfLink x;
      x.id = l.at("id").num<uint32_t>();
      x.type = l.str_or("type");
      x.prog_id = l.num_or<uint32_t>("prog_id", 0);
      x.attach_type = l.str_or("attach_type");
      x.ifindex = l.num_or<uint32_t>("ifindex", 0);
      x.interface = l.str_or("interface");
      x.cgroup_id = l.num_or<uint64_t>("cgroup_id", 0);
      x.pinned = l.strings_or("pinned");
      e.links.push_back(std::move(x));
    }
  }
  if (r.has("attachments")) {
    for (const auto& a : r.at("attachments").items()) {
      BpfAttachment x;
      x.kind = a.at("kind").str();
      x.target = a.str_or("target");
      x.direction = a.str_or("direction");
      x.prog_id = a.num_or<uint32_t>("prog_id", 0);
      x.prog_name = a.str_or("prog_name");
      x.priority = a.num_or<uint32_t>("priority", 0);
      x.handle = a.num_or<uint32_t>("handle", 0);
      x.direct_action = a.bool_or("direct_action", false);
      x.link_id = a.opt_num<uint32_t>("link_id");
      e.attachments.push_back(std::move(x));
    }
  }
  if (r.has("services")) {
    for (const auto& s : r.at("services").items()) {
      LbServices x;
      x.dataplane = s.at("dataplane").str();
      x.layout = s.str_or("layout");
      x.maps = s.strings_or("maps");
      x.decoded = s.bool_or("decoded", true);
      x.note = s.str_or("note");
      x.wildcard_skipped = s.num_or<uint64_t>("wildcard_skipped", 0);
      x.backends_linked = s.bool_or("backends_linked", false);
      if (s.has("frontends")) {
        for (const auto& f : s.at("frontends").items()) {
          LbFrontend y;
          y.address = f.at("address").str();
          y.port = f.num_or<uint16_t>("port", 0);
          y.protocol = f.str_or("protocol");
          y.type = f.str_or("type");
          y.scope = f.str_or("scope");
          y.backends = f.num_or<uint32_t>("backends", 0);
          y.service_id = f.num_or<uint32_t>("service_id", 0);
          y.surrogate = f.bool_or("surrogate", false);
          y.backend_ids = f.nums_or<uint32_t>("backend_ids");
          x.frontends.push_back(std::move(y));
        }
      }
      if (s.has("backends")) {
        for (const auto& b : s.at("backends").items()) {
          LbBackend y;
          y.id = b.num_or<uint32_t>("id", 0);
          y.address = b.at("address").str();
          y.port = b.num_or<uint16_t>("port", 0);
          y.protocol = b.str_or("protocol");
          y.state = b.str_or("state");
          x.backends.push_back(std::move(y));
        }
      }
      e.services.push_back(std::move(x));
    }
  }
  return e;
}

void check_schema(const Reader& r) {
  if (!r.raw().is_object()) r.fail("expected a JSON object (a dpscope snapshot)");
  if (!r.has("schema")) r.fail("missing \"schema\": not a dpscope snapshot");
  const std::string schema = r.at("schema").str();
  const std::string prefix = "dpscope.snapshot/v";
  if (schema.rfind(prefix, 0) != 0) {
    r.at("schema").fail("unknown schema \"" + schema + "\" (expected \"" + kSchema + "\")");
  }
  const std::string version = schema.substr(prefix.size());
  const std::string major = version.substr(0, version.find('.'));
  bool known = false;
  for (int m = kSchemaOldestMajor; m <= kSchemaMajor; ++m) known |= major == std::to_string(m);
  if (!known) {
    r.at("schema").fail("unsupported schema version \"" + schema + "\": this dpscope reads major versions " +
                        std::to_string(kSchemaOldestMajor) + " to " + std::to_string(kSchemaMajor) + " (\"" +
                        kSchema + "\")");
  }
}

}  // namespace

json to_json(const Snapshot& s) {
  json node = {{"name", s.node.name},
               {"kernel", s.node.kernel},
               {"source", s.node.source},
               {"environment", s.node.environment},
               {"taken_at", s.node.taken_at},
               {"tool_version", s.node.tool_version},
               {"inputs", s.node.inputs}};
  put_opt(node, "cgroup_memory_nobpf", s.node.cgroup_memory_nobpf);
  json tables = json::array();
  for (const auto& t : s.netfilter.tables) tables.push_back(table_json(t));
  json collection = {{"nft_retries", s.netfilter.collection.nft_retries}};
  put_opt(collection, "nft_generation", s.netfilter.collection.nft_generation);
  if (s.netfilter.collection.nft_set_rereads != 0) {
    collection["nft_set_rereads"] = s.netfilter.collection.nft_set_rereads;
  }
  if (s.netfilter.collection.nft_light) {
    collection["nft_light"] = true;
    collection["nft_left_out"] = s.netfilter.collection.nft_left_out;
  }
  json unavailable = json::array();
  for (const auto& u : s.unavailable) {
    unavailable.push_back({{"section", u.section}, {"reason", u.reason}, {"errno", u.error}, {"hint", u.hint}});
  }
  // The minor version is the newest optional section the snapshot holds.
  const bool current = s.schema == kSchema || s.schema == kSchemaV2_1 || s.schema == kSchemaV2_2 || s.schema == kSchemaV2_3;
  const bool declarations = std::any_of(s.netfilter.tables.begin(), s.netfilter.tables.end(),
                                        [](const Table& t) { return t.declarations_recorded; });
  const std::string schema = !current             ? s.schema
                             : declarations       ? kSchemaV2_3
                             : s.ipvs.collected   ? kSchemaV2_2
                             : s.ipsets.collected ? kSchemaV2_1
                                                  : kSchema;
  json j = {{"schema", schema},
            {"node", std::move(node)},
            {"netfilter",
             {{"collected", s.netfilter.collected}, {"collection", std::move(collection)}, {"tables", std::move(tables)}}},
            {"ebpf", ebpf_json(s.ebpf)},
            {"unavailable", std::move(unavailable)}};
  // Optional section: absent when not collected, so imports and snapshots
  // from before it keep their exact form.
  if (s.agents.collected) j["agents"] = agents_to_json(s.agents);
  if (s.ipsets.collected) j["ipsets"] = ipsets_to_json(s.ipsets);
  if (s.ipvs.collected) j["ipvs"] = ipvs_to_json(s.ipvs);
  return j;
}

namespace {

void collect_unknown(const json& file, const json& known, const std::string& path, std::set<std::string>& out) {
  if (file.is_object()) {
    for (auto it = file.begin(); it != file.end(); ++it) {
      const std::string p = path + "/" + it.key();
      if (!known.is_object() || !known.contains(it.key())) {
        out.insert(p);
      } else {
        collect_unknown(it.value(), known.at(it.key()), p, out);
      }
    }
  } else if (file.is_array() && known.is_array()) {
    for (size_t i = 0; i < file.size(); ++i) {
      if (i < known.size()) collect_unknown(file[i], known[i], path + "/[]", out);
    }
  }
}

}  // namespace

std::vector<std::string> unknown_fields(const json& file, const Snapshot& s) {
  std::set<std::string> out;
  collect_unknown(file, to_json(s), "", out);
  return {out.begin(), out.end()};
}

Snapshot from_json(const json& j, const std::string& origin) {
  try {
    Reader r(j, "");
    check_schema(r);
    Snapshot s;
    s.schema = r.at("schema").str();
    if (r.has("node")) {
      Reader n = r.at("node");
      s.node.name = n.str_or("name");
      s.node.kernel = n.str_or("kernel");
      s.node.source = n.str_or("source");
      s.node.environment = n.str_or("environment");
      s.node.taken_at = n.str_or("taken_at");
      s.node.tool_version = n.str_or("tool_version");
      s.node.inputs = n.strings_or("inputs");
      if (n.has("cgroup_memory_nobpf")) s.node.cgroup_memory_nobpf = n.bool_or("cgroup_memory_nobpf", false);
    }
    if (r.has("netfilter")) {
      Reader nf = r.at("netfilter");
      s.netfilter.collected = nf.bool_or("collected", false);
      if (nf.has("collection")) {
        Reader c = nf.at("collection");
        s.netfilter.collection.nft_generation = c.opt_num<uint32_t>("nft_generation");
        s.netfilter.collection.nft_retries = c.num_or<uint32_t>("nft_retries", 0);
        s.netfilter.collection.nft_set_rereads = c.num_or<uint32_t>("nft_set_rereads", 0);
        s.netfilter.collection.nft_light = c.bool_or("nft_light", false);
        s.netfilter.collection.nft_left_out = c.strings_or("nft_left_out");
      }
      if (nf.has("tables")) {
        for (const auto& t : nf.at("tables").items()) s.netfilter.tables.push_back(read_table(t));
      }
    }
    if (r.has("ebpf")) s.ebpf = read_ebpf(r.at("ebpf"));
    if (r.has("agents")) s.agents = agents_from_json(r.at("agents").raw(), "/agents");
    if (r.has("ipsets")) s.ipsets = ipsets_from_json(r.at("ipsets").raw(), "/ipsets");
    if (r.has("ipvs")) s.ipvs = ipvs_from_json(r.at("ipvs").raw(), "/ipvs");
    if (r.has("unavailable")) {
      for (const auto& u : r.at("unavailable").items()) {
        s.unavailable.push_back({u.at("section").str(), u.str_or("reason"), u.num_or<int>("errno", 0), u.str_or("hint")});
      }
    }
    return s;
  } catch (const std::invalid_argument& e) {
    throw InputError(origin, 0, e.what());
  } catch (const json::exception& e) {
    throw InputError(origin, 0, e.what());
  }
}

namespace {

// The bytes of a file as stored (no decompression).
std::string read_stored(const std::string& path) {
  if (path == "-") {
    std::string text((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
    return text;
  }
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw InputError(path, 0, std::string("cannot open: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    ::close(fd);
    throw InputError(path, 0, "is a directory, expected a file");
  }
  // One read into a buffer of the file's size (a 50 MB iptables-save dump is
  // read in 10 ms, where a stream copy took 50); pipes and /proc files have
  // no size and grow the buffer as they go.
  std::string text;
  size_t used = 0;
  text.resize(S_ISREG(st.st_mode) && st.st_size > 0 ? static_cast<size_t>(st.st_size) + 1 : 64 * 1024);
  for (;;) {
    if (used == text.size()) text.resize(text.size() * 2);
    const ssize_t n = ::read(fd, text.data() + used, text.size() - used);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      throw InputError(path, 0, std::string("read failed: ") + std::strerror(err));
    }
    if (n == 0) break;
    used += static_cast<size_t>(n);
  }
  ::close(fd);
  text.resize(used);
  return text;
}

std::string origin_of(const std::string& path) { return path == "-" ? "<stdin>" : path; }

}  // namespace

std::string read_file(const std::string& path) {
  std::string text = read_stored(path);
  const Compression c = compression_of(text);
  if (c == Compression::None) return text;
  const FileBytes plain = decompress(c, text, origin_of(path));
  return std::string(plain.view());
}

namespace {

// The mapped file's name for the SIGBUS handler: a file truncated while
// mapped faults on the next read of a page past its new end, and that is a
// changed input (exit 2 with its name), not a crash.
std::atomic<const char*> g_mapped_origin{nullptr};

void on_sigbus(int) {
  const char* origin = g_mapped_origin.load();
  if (origin == nullptr) {  // not a mapped input: the default action
    ::signal(SIGBUS, SIG_DFL);
    ::raise(SIGBUS);
    return;
  }
  const char head[] = "dpscope: ";
  const char tail[] = ": file shrank while it was being read (was it rewritten?)\n";
  (void)!::write(STDERR_FILENO, head, sizeof head - 1);
  (void)!::write(STDERR_FILENO, origin, std::strlen(origin));
  (void)!::write(STDERR_FILENO, tail, sizeof tail - 1);
  ::_exit(2);
}

}  // namespace

FileBytes::Mapping::~Mapping() {
  if (address) ::munmap(address, length);
  const char* mine = origin.c_str();
  g_mapped_origin.compare_exchange_strong(mine, nullptr);
}

void FileBytes::release(std::string_view part) const {
  if (!mapping || part.empty()) return;
  const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto begin = (reinterpret_cast<uintptr_t>(part.data()) + page - 1) & ~(page - 1);
  const auto end = (reinterpret_cast<uintptr_t>(part.data()) + part.size()) & ~(page - 1);
  // A private read-only file mapping: MADV_DONTNEED drops the pages and a
  // later touch reads them from the page cache again, unchanged.
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

FileBytes read_file_bytes(const std::string& path) {
  static constexpr size_t kMapped = 8 << 20;  // below this one read() is as quick
  struct stat st {};
  if (path != "-" && ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
      static_cast<size_t>(st.st_size) >= kMapped) {
    const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    struct stat opened {};
    if (fd && ::fstat(fd.get(), &opened) == 0 && S_ISREG(opened.st_mode) &&
        static_cast<size_t>(opened.st_size) >= kMapped) {
      const size_t size = static_cast<size_t>(opened.st_size);
      void* at = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd.get(), 0);
      if (at != MAP_FAILED) {
        FileBytes out;
        out.size = size;
        out.mapping = std::make_unique<FileBytes::Mapping>();
        out.mapping->address = at;
        out.mapping->length = size;
        out.mapping->origin = origin_of(path);
        static std::once_flag handler;
        std::call_once(handler, [] {
          struct sigaction sa {};
          sa.sa_handler = on_sigbus;
          sigemptyset(&sa.sa_mask);
          ::sigaction(SIGBUS, &sa, nullptr);
        });
        g_mapped_origin = out.mapping->origin.c_str();
        const Compression c = compression_of(out.view());
        return c == Compression::None ? std::move(out) : decompress(c, out.view(), path);
      }
    }
  }
  // Small, special or changing files: the plain path, with its error messages.
  const std::string text = read_stored(path);
  return decompress(compression_of(text), text, origin_of(path));  // a plain copy when not compressed
}

void write_file_atomically(const std::string& path, const std::string& content) {
  if (path == "-") {
    // write(2) itself, so a full disk is named (std::cout says only "failed").
    std::cout.flush();
    if (const int err = write_all(STDOUT_FILENO, content.data(), content.size())) {
      stdout_failed("writing to standard output", err);
    }
    return;
  }
  // An existing non-regular file (/dev/null, a FIFO, /dev/stdout) is written
  // in place: renaming a temporary file over it would replace the device
  // node itself (as root, `-o /dev/null` turned /dev/null into a file).
  struct stat existing {};
  if (::stat(path.c_str(), &existing) == 0 && !S_ISREG(existing.st_mode)) {
    if (S_ISDIR(existing.st_mode)) throw InputError(path, 0, "is a directory, expected a file");
    UniqueFd fd(::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC));
    if (!fd) throw InputError(path, 0, "cannot open for writing: " + errno_text(errno));
    if (const int err = write_all(fd.get(), content.data(), content.size())) {
      throw InputError(path, 0, "write failed: " + errno_text(err));
    }
    return;
  }
  TempOutput out(path);  // removed again unless committed, even on SIGINT
  if (const int err = write_all(out.fd(), content.data(), content.size())) {
    throw InputError(path, 0, "write failed: " + errno_text(err));
  }
  out.commit();
}

}  // namespace dpscope::model
