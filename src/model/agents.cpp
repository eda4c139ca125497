#include "model/agents.h"
#include "model/json_put.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace dpscope::model {

using nlohmann::json;

uint64_t kubelet_working_set(uint64_t memory_current, uint64_t inactive_file) {
  return memory_current < inactive_file ? 0 : memory_current - inactive_file;
}

void canonicalize(Agents& a) {
  std::sort(a.processes.begin(), a.processes.end(), [](const auto& x, const auto& y) { return x.pid < y.pid; });
  std::sort(a.cgroups.begin(), a.cgroups.end(), [](const auto& x, const auto& y) { return x.path < y.path; });
}

namespace {

json unavailable_json(const std::vector<ValueUnavailable>& v) {
  json out = json::array();
  for (const auto& u : v) out.push_back({{"field", u.field}, {"reason", u.reason}, {"errno", u.error}});
  return out;
}

// Field access with the JSON pointer in every message, as model/json.cpp's.
struct Field {
  const json& j;
  std::string at;

  [[noreturn]] void fail(const std::string& what) const { throw std::invalid_argument(at + ": " + what); }
  bool has(const char* key) const { return j.contains(key) && !j[key].is_null(); }
  Field sub(const char* key) const { return {j[key], at + "/" + key}; }
  std::string str(const char* key) const {
    if (!has(key)) return {};
    if (!j[key].is_string()) sub(key).fail("expected a string");
    return j[key].get<std::string>();
  }
  template <typename T>
  std::optional<T> num(const char* key) const {
    if (!has(key)) return std::nullopt;
    const json& v = j[key];
    if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<int64_t>() >= 0)) {
      sub(key).fail("expected a non-negative integer");
    }
    const auto n = v.get<uint64_t>();
    if (n > std::numeric_limits<T>::max()) sub(key).fail("integer out of range");
    return static_cast<T>(n);
  }
  template <typename F>
  void items(const char* key, F f) const {
    if (!has(key)) return;
    if (!j[key].is_array()) sub(key).fail("expected an array");
    for (size_t i = 0; i < j[key].size(); ++i) {
      Field item{j[key][i], at + "/" + key + "/" + std::to_string(i)};
      if (!item.j.is_object() && !item.j.is_string()) item.fail("expected an object");
      f(item);
    }
  }
};

std::vector<ValueUnavailable> read_unavailable(const Field& f) {
  std::vector<ValueUnavailable> out;
  f.items("unavailable", [&](const Field& u) {
    if (!u.j.is_object()) u.fail("expected an object");
    if (!u.has("field")) u.fail("missing key 'field'");
    int err = 0;
    if (u.has("errno")) {
      if (!u.j["errno"].is_number_integer()) u.sub("errno").fail("expected an integer");
      err = u.j["errno"].get<int>();
    }
    out.push_back({u.str("field"), u.str("reason"), err});
  });
  return out;
}

}  // namespace

json agents_to_json(const Agents& a) {
  json procs = json::array();
  for (const auto& p : a.processes) {
    json j = {{"pid", p.pid},
              {"agent", p.agent},
              {"dataplane", p.dataplane},
              {"matched_by", p.matched_by},
              {"exe", p.exe},
              {"comm", p.comm},
              {"cmdline", p.cmdline},
              {"started_at", p.started_at},
              {"cgroup", p.cgroup},
              {"unavailable", unavailable_json(p.unavailable)}};
    put_opt(j, "rss_bytes", p.rss_bytes);
    put_opt(j, "pss_bytes", p.pss_bytes);
    put_opt(j, "threads", p.threads);
    procs.push_back(std::move(j));
  }
  json cgroups = json::array();
  for (const auto& c : a.cgroups) {
    json j = {{"path", c.path},
              {"pod_uid", c.pod_uid},
              {"container_id", c.container_id},
              {"container_runtime", c.container_runtime},
              {"qos_class", c.qos_class},
              {"unavailable", unavailable_json(c.unavailable)}};
    put_opt(j, "memory_current_bytes", c.memory_current_bytes);
    put_opt(j, "anon_bytes", c.anon_bytes);
    put_opt(j, "file_bytes", c.file_bytes);
    put_opt(j, "kernel_bytes", c.kernel_bytes);
    put_opt(j, "sock_bytes", c.sock_bytes);
    put_opt(j, "inactive_file_bytes", c.inactive_file_bytes);
    put_opt(j, "working_set_bytes", c.working_set_bytes);
    put_opt(j, "procs", c.procs);
    cgroups.push_back(std::move(j));
  }
  return {{"collected", a.collected},
          {"cgroup", {{"version", a.cgroup_version}, {"mount", a.cgroup_mount}}},
          {"processes", std::move(procs)},
          {"cgroups", std::move(cgroups)}};
}

Agents agents_from_json(const json& j, const std::string& pointer) {
  Field r{j, pointer};
  if (!j.is_object()) r.fail("expected an object");
  Agents a;
  if (r.has("collected")) {
    if (!j["collected"].is_boolean()) r.sub("collected").fail("expected true or false");
    a.collected = j["collected"].get<bool>();
  }
  if (r.has("cgroup")) {
    Field c = r.sub("cgroup");
    if (!c.j.is_object()) c.fail("expected an object");
    a.cgroup_version = c.str("version");
    if (!a.cgroup_version.empty() && a.cgroup_version != "v1" && a.cgroup_version != "v2") {
      c.sub("version").fail("unknown cgroup version '" + a.cgroup_version + "' (v1 | v2)");
    }
    a.cgroup_mount = c.str("mount");
  }
  r.items("processes", [&](const Field& p) {
    if (!p.j.is_object()) p.fail("expected an object");
    AgentProcess x;
    auto pid = p.num<uint32_t>("pid");
    if (!pid) p.fail("missing key 'pid'");
    x.pid = *pid;
    x.agent = p.str("agent");
    x.dataplane = p.str("dataplane");
    x.matched_by = p.str("matched_by");
    x.exe = p.str("exe");
    x.comm = p.str("comm");
    p.items("cmdline", [&](const Field& arg) {
      if (!arg.j.is_string()) arg.fail("expected a string");
      x.cmdline.push_back(arg.j.get<std::string>());
    });
    x.started_at = p.str("started_at");
    x.rss_bytes = p.num<uint64_t>("rss_bytes");
    x.pss_bytes = p.num<uint64_t>("pss_bytes");
    x.threads = p.num<uint32_t>("threads");
    x.cgroup = p.str("cgroup");
    x.unavailable = read_unavailable(p);
    a.processes.push_back(std::move(x));
  });
  r.items("cgroups", [&](const Field& c) {
    if (!c.j.is_object()) c.fail("expected an object");
    AgentCgroup x;
    if (!c.has("path")) c.fail("missing key 'path'");
    x.path = c.str("path");
    x.pod_uid = c.str("pod_uid");
    x.container_id = c.str("container_id");
    x.container_runtime = c.str("container_runtime");
    x.qos_class = c.str("qos_class");
    x.memory_current_bytes = c.num<uint64_t>("memory_current_bytes");
    x.anon_bytes = c.num<uint64_t>("anon_bytes");
    x.file_bytes = c.num<uint64_t>("file_bytes");
    x.kernel_bytes = c.num<uint64_t>("kernel_bytes");
    x.sock_bytes = c.num<uint64_t>("sock_bytes");
    x.inactive_file_bytes = c.num<uint64_t>("inactive_file_bytes");
    x.working_set_bytes = c.num<uint64_t>("working_set_bytes");
    x.procs = c.num<uint32_t>("procs");
    x.unavailable = read_unavailable(c);
    a.cgroups.push_back(std::move(x));
  });
  return a;
}

}  // namespace dpscope::model
