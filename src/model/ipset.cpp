#include "model/ipset.h"

#include <algorithm>
#include <limits>
#include <map>
#include <sstream>
#include <stdexcept>

#include "model/text_fields.h"
#include "util/error.h"

namespace dpscope::model {

using nlohmann::json;

void canonicalize(Ipsets& s) {
  std::sort(s.sets.begin(), s.sets.end(), [](const Ipset& a, const Ipset& b) { return a.name < b.name; });
}

const Ipset* find_ipset(const Ipsets& s, const std::string& name) {
  for (const auto& set : s.sets) {
    if (set.name == name) return &set;
  }
  return nullptr;
}

namespace {

using text::number;
using text::words;

// Splits off the first `n` space-separated words of `line`; the rest, trimmed, goes to `rest`.
std::vector<std::string> head_words(const std::string& line, size_t n, std::string& rest) {
  std::vector<std::string> out;
  size_t at = 0;
  while (out.size() < n) {
    at = line.find_first_not_of(" \t", at);
    if (at == std::string::npos) break;
    const size_t end = line.find_first_of(" \t", at);
    out.push_back(line.substr(at, end == std::string::npos ? std::string::npos : end - at));
    at = end == std::string::npos ? line.size() : end;
  }
  const size_t r = line.find_first_not_of(" \t", at);
  rest = r == std::string::npos ? "" : line.substr(r);
  while (!rest.empty() && (rest.back() == ' ' || rest.back() == '\t' || rest.back() == '\r')) rest.pop_back();
  return out;
}

}  // namespace

void read_ipset_header(Ipset& set) {
  const auto w = words(set.header);
  for (size_t i = 0; i < w.size(); ++i) {
    const bool has_value = i + 1 < w.size();
    if (w[i] == "family" && has_value) {
      set.family = w[++i];
    } else if (w[i] == "hashsize" && has_value) {
      set.hashsize = number(w[++i]);
    } else if (w[i] == "maxelem" && has_value) {
      set.maxelem = number(w[++i]);
    } else if (w[i] == "timeout" && has_value) {
      set.timeout = number(w[++i]);
    } else if (w[i] == "counters") {
      set.counters = true;
    } else if (w[i] == "comment") {
      set.comment = true;
    } else if (w[i] == "skbinfo") {
      set.skbinfo = true;
    } else if (w[i] == "forceadd") {
      set.forceadd = true;
    }
  }
}

Ipsets parse_ipset_save(const std::string& text, const std::string& origin) {
  Ipsets out;
  out.collected = true;
  std::map<std::string, size_t> index;
  std::istringstream in(text);
  size_t lineno = 0;
  for (std::string line; std::getline(in, line);) {
    ++lineno;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    std::string rest;
    const auto head = head_words(line, 3, rest);
    if (head[0] == "create") {
      if (head.size() < 3) throw InputError(origin, lineno, "`create` needs a set name and a type: \"" + line + "\"");
      if (index.count(head[1])) throw InputError(origin, lineno, "set \"" + head[1] + "\" is created twice");
      Ipset set;
      set.name = head[1];
      set.type = head[2];
      set.header = rest;
      read_ipset_header(set);
      index[set.name] = out.sets.size();
      out.sets.push_back(std::move(set));
    } else if (head[0] == "add") {
      if (head.size() < 3) throw InputError(origin, lineno, "`add` needs a set name and an entry: \"" + line + "\"");
      auto it = index.find(head[1]);
      if (it == index.end()) throw InputError(origin, lineno, "`add` to set \"" + head[1] + "\", which no `create` line made");
      auto& set = out.sets[it->second];
      set.members.push_back({head[2], rest});
      set.member_count = set.members.size();
    } else {
      throw InputError(origin, lineno, "not an `ipset save` line (create/add): \"" + line.substr(0, 80) + "\"");
    }
  }
  canonicalize(out);
  return out;
}

json ipsets_to_json(const Ipsets& s) {
  json sets = json::array();
  for (const auto& set : s.sets) {
    json members = json::array();
    for (const auto& m : set.members) {
      json o = {{"entry", m.entry}};
      if (!m.options.empty()) o["options"] = m.options;
      members.push_back(std::move(o));
    }
    json j = {{"name", set.name},       {"type", set.type},         {"header", set.header},
              {"family", set.family},   {"counters", set.counters}, {"comment", set.comment},
              {"skbinfo", set.skbinfo}, {"forceadd", set.forceadd}, {"member_count", set.member_count},
              {"members", std::move(members)}};
    if (set.hashsize) j["hashsize"] = *set.hashsize;
    if (set.maxelem) j["maxelem"] = *set.maxelem;
    if (set.timeout) j["timeout"] = *set.timeout;
    sets.push_back(std::move(j));
  }
  return {{"collected", s.collected}, {"sets", std::move(sets)}};
}

namespace {

[[noreturn]] void bad(const std::string& at, const std::string& what) { throw std::invalid_argument(at + ": " + what); }

std::string str(const json& j, const char* key, const std::string& at, bool required = false) {
  if (!j.contains(key) || j[key].is_null()) {
    if (required) bad(at + "/" + key, "missing");
    return {};
  }
  if (!j[key].is_string()) bad(at + "/" + key, "expected a string");
  return j[key].get<std::string>();
}

bool flag(const json& j, const char* key, const std::string& at) {
  if (!j.contains(key) || j[key].is_null()) return false;
  if (!j[key].is_boolean()) bad(at + "/" + key, "expected true or false");
  return j[key].get<bool>();
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

}  // namespace

Ipsets ipsets_from_json(const json& j, const std::string& pointer) {
  if (!j.is_object()) bad(pointer, "expected an object");
  Ipsets s;
  s.collected = flag(j, "collected", pointer);
  if (!j.contains("sets")) return s;
  if (!j["sets"].is_array()) bad(pointer + "/sets", "expected an array");
  for (size_t i = 0; i < j["sets"].size(); ++i) {
    const json& o = j["sets"][i];
    const std::string at = pointer + "/sets/" + std::to_string(i);
    if (!o.is_object()) bad(at, "expected an object");
    Ipset set;
    set.name = str(o, "name", at, true);
    set.type = str(o, "type", at, true);
    set.header = str(o, "header", at);
    set.family = str(o, "family", at);
    set.hashsize = num<uint32_t>(o, "hashsize", at);
    set.maxelem = num<uint32_t>(o, "maxelem", at);
    set.timeout = num<uint32_t>(o, "timeout", at);
    set.counters = flag(o, "counters", at);
    set.comment = flag(o, "comment", at);
    set.skbinfo = flag(o, "skbinfo", at);
    set.forceadd = flag(o, "forceadd", at);
    if (o.contains("members")) {
      if (!o["members"].is_array()) bad(at + "/members", "expected an array");
      for (size_t k = 0; k < o["members"].size(); ++k) {
        const json& m = o["members"][k];
        const std::string mat = at + "/members/" + std::to_string(k);
        if (!m.is_object()) bad(mat, "expected an object");
        set.members.push_back({str(m, "entry", mat, true), str(m, "options", mat)});
      }
    }
    set.member_count = num<uint64_t>(o, "member_count", at).value_or(set.members.size());
    s.sets.push_back(std::move(set));
  }
  return s;
}

}  // namespace dpscope::model
