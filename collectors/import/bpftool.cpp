#include "collectors/import/bpftool.h"

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <limits>
#include <nlohmann/json.hpp>

#include "decoders/service_maps.h"
#include "collectors/import/import.h"
#include "model/json.h"
#include "model/json_input.h"
#include "util/error.h"

namespace dpscope::importer {
namespace {

using nlohmann::json;

// bpftool prints one JSON array; this finds the line each top-level element
// starts on, so a bad element is reported as FILE:LINE.
std::vector<size_t> element_lines(std::string_view text) {
  std::vector<size_t> lines;
  size_t line = 1;
  int depth = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (c == '\n') ++line;
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
      if (depth == 1) lines.push_back(line);
    } else if (c == '{' || c == '[') {
      if (depth == 1) lines.push_back(line);
      ++depth;
    } else if (c == '}' || c == ']') {
      --depth;
    } else if (depth == 1 && c != ',' && !isspace(static_cast<unsigned char>(c))) {
      // a scalar element: record its first character only
      if (lines.empty() || lines.back() != line) lines.push_back(line);
    }
  }
  return lines;
}

class Doc {
 public:
  Doc(std::string_view text, const std::string& origin, const char* what) : origin_(origin) {
    if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) throw InputError(origin, 0, "empty file");
    root_ = model::parse_json_input(text, origin, std::string("expected `") + what + "` output");
    if (!root_.is_array()) {
      throw InputError(origin, 1, std::string("expected a JSON array, as `") + what + "` prints");
    }
    lines_ = element_lines(text);
  }
  const json& root() const { return root_; }
  [[noreturn]] void fail(size_t index, const std::string& what) const {
    throw InputError(origin_, index < lines_.size() ? lines_[index] : 0, what);
  }
  const json& object(size_t i) const {
    const json& e = root_[i];
    if (!e.is_object()) fail(i, "element " + std::to_string(i) + " is not an object");
    return e;
  }
  template <typename T>
  T number(size_t i, const json& o, const char* key, std::optional<T> fallback = std::nullopt) const {
    auto it = o.find(key);
    if (it == o.end()) {
      if (fallback) return *fallback;
      fail(i, std::string("missing \"") + key + "\"");
    }
    if (!it->is_number_unsigned() && !(it->is_number_integer() && it->template get<int64_t>() >= 0)) {
      fail(i, std::string("\"") + key + "\" is not a non-negative integer: " + it->dump());
    }
    const uint64_t v = it->template get<uint64_t>();
    if (v > std::numeric_limits<T>::max()) fail(i, std::string("\"") + key + "\" is out of range: " + it->dump());
    return static_cast<T>(v);
  }
  std::string string(size_t i, const json& o, const char* key, bool required) const {
    auto it = o.find(key);
    if (it == o.end()) {
      if (required) fail(i, std::string("missing \"") + key + "\"");
      return "";
    }
    if (!it->is_string()) fail(i, std::string("\"") + key + "\" is not a string: " + it->dump());
    return it->get<std::string>();
  }
  // bpftool prints a type it has no name for as a number.
  std::string type(size_t i, const json& o) const {
    auto it = o.find("type");
    if (it == o.end()) fail(i, "missing \"type\"");
    if (it->is_string()) return it->get<std::string>();
    if (it->is_number_unsigned()) return std::to_string(it->get<uint64_t>());
    fail(i, "\"type\" is neither a name nor a number: " + it->dump());
  }
  std::vector<uint32_t> ids(size_t i, const json& o, const char* key) const {
    std::vector<uint32_t> out;
    auto it = o.find(key);
    if (it == o.end()) return out;
    if (!it->is_array()) fail(i, std::string("\"") + key + "\" is not an array");
    for (const auto& v : *it) {
      if (!v.is_number_unsigned()) fail(i, std::string("\"") + key + "\" holds a non-id: " + v.dump());
      // Kernel object ids are 32-bit; 4294967297 is not id 1.
      if (v.get<uint64_t>() > std::numeric_limits<uint32_t>::max()) {
        fail(i, std::string("\"") + key + "\" holds an id out of range (ids are 32-bit): " + v.dump());
      }
      out.push_back(v.get<uint32_t>());
    }
    return out;
  }
  std::vector<std::string> strings(size_t i, const json& o, const char* key) const {
    std::vector<std::string> out;
    auto it = o.find(key);
    if (it == o.end()) return out;
    if (!it->is_array()) fail(i, std::string("\"") + key + "\" is not an array");
    for (const auto& v : *it) {
      if (!v.is_string()) fail(i, std::string("\"") + key + "\" holds a non-string: " + v.dump());
      out.push_back(v.get<std::string>());
    }
    return out;
  }

 private:
  std::string origin_;
  json root_;
  std::vector<size_t> lines_;
};

constexpr uint64_t kLastRfc3339Second = 253402300799;  // 9999-12-31T23:59:59Z

std::string rfc3339(uint64_t unix_seconds) {
  const time_t t = static_cast<time_t>(unix_seconds);
  tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

std::vector<model::BpfProgram> parse_bpftool_progs(std::string_view text, const std::string& origin) {
  Doc doc(text, origin, "bpftool -j prog show");
  std::vector<model::BpfProgram> out;
  for (size_t i = 0; i < doc.root().size(); ++i) {
    const json& o = doc.object(i);
    model::BpfProgram p;
    p.id = doc.number<uint32_t>(i, o, "id");
    p.type = doc.type(i, o);
    p.name = doc.string(i, o, "name", false);
    p.tag = doc.string(i, o, "tag", false);
    if (o.contains("loaded_at")) {
      // Seconds since the epoch; beyond year 9999 it is no time gmtime() can print.
      const uint64_t at = doc.number<uint64_t>(i, o, "loaded_at");
      if (at > kLastRfc3339Second) {
        doc.fail(i, "\"loaded_at\" is out of range (seconds since 1970, at most year 9999): " + std::to_string(at));
      }
      p.loaded_at = rfc3339(at);
    }
    p.bytes_xlated = doc.number<uint32_t>(i, o, "bytes_xlated", 0u);
    p.bytes_jited = doc.number<uint32_t>(i, o, "bytes_jited", 0u);
    p.bytes_memlock = doc.number<uint64_t>(i, o, "bytes_memlock", 0ull);
    p.map_ids = doc.ids(i, o, "map_ids");
    p.btf_id = doc.number<uint32_t>(i, o, "btf_id", 0u);
    if (o.contains("run_time_ns")) p.run_time_ns = doc.number<uint64_t>(i, o, "run_time_ns");
    if (o.contains("run_cnt")) p.run_cnt = doc.number<uint64_t>(i, o, "run_cnt");
    p.pinned = doc.strings(i, o, "pinned");
    std::sort(p.pinned.begin(), p.pinned.end());
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<model::BpfMap> parse_bpftool_maps(std::string_view text, const std::string& origin) {
  Doc doc(text, origin, "bpftool -j map show");
  std::vector<model::BpfMap> out;
  for (size_t i = 0; i < doc.root().size(); ++i) {
    const json& o = doc.object(i);
    model::BpfMap m;
    m.id = doc.number<uint32_t>(i, o, "id");
    m.type = doc.type(i, o);
    m.name = doc.string(i, o, "name", false);
    m.key_size = doc.number<uint32_t>(i, o, "bytes_key");
    m.value_size = doc.number<uint32_t>(i, o, "bytes_value");
    m.max_entries = doc.number<uint32_t>(i, o, "max_entries");
    m.flags = doc.number<uint32_t>(i, o, "flags", 0u);
    m.bytes_memlock = doc.number<uint64_t>(i, o, "bytes_memlock", 0ull);
    m.btf_id = doc.number<uint32_t>(i, o, "btf_id", 0u);
    m.pinned = doc.strings(i, o, "pinned");
    std::sort(m.pinned.begin(), m.pinned.end());
    m.entries_note = "not counted: `bpftool map show` does not print entry counts";
    out.push_back(std::move(m));
  }
  return out;
}

std::vector<model::BpfAttachment> parse_bpftool_net(std::string_view text, const std::string& origin) {
  Doc doc(text, origin, "bpftool -j net show");
  std::vector<model::BpfAttachment> out;
  for (size_t i = 0; i < doc.root().size(); ++i) {
    const json& o = doc.object(i);
    auto section = [&](const char* key) -> const json* {
      auto it = o.find(key);
      if (it == o.end()) return nullptr;
      if (!it->is_array()) doc.fail(i, std::string("\"") + key + "\" is not an array");
      return &*it;
    };
    if (const json* xdp = section("xdp")) {
      for (const auto& e : *xdp) {
        if (!e.is_object()) doc.fail(i, "an \"xdp\" entry is not an object");
        const std::string dev = doc.string(i, e, "devname", true);
        auto add = [&](const json& a) {
          model::BpfAttachment x;
          x.kind = "xdp";
          x.target = dev;
          x.direction = doc.string(i, a, "mode", true);
          x.prog_id = doc.number<uint32_t>(i, a, "id");
          out.push_back(std::move(x));
        };
        if (auto multi = e.find("multi_attachments"); multi != e.end() && multi->is_array()) {
          for (const auto& a : *multi) add(a);
        } else {
          add(e);
        }
      }
    }
    if (const json* tc = section("tc")) {
      for (const auto& e : *tc) {
        if (!e.is_object()) doc.fail(i, "a \"tc\" entry is not an object");
        model::BpfAttachment x;
        x.target = doc.string(i, e, "devname", true);
        // "clsact/ingress" (legacy filter), "tcx/egress", "netkit/primary" (bpftool >= 7.3).
        const std::string kind = doc.string(i, e, "kind", true);
        const auto slash = kind.find('/');
        if (slash == std::string::npos) doc.fail(i, "tc kind \"" + kind + "\" is not HOOK/DIRECTION");
        const std::string hook = kind.substr(0, slash);
        x.kind = hook == "tcx" || hook == "netkit" ? hook : "tc";
        x.direction = kind.substr(slash + 1);
        x.prog_name = doc.string(i, e, "name", false);
        x.prog_id = e.contains("prog_id") ? doc.number<uint32_t>(i, e, "prog_id") : doc.number<uint32_t>(i, e, "id");
        if (e.contains("link_id")) x.link_id = doc.number<uint32_t>(i, e, "link_id");
        out.push_back(std::move(x));
      }
    }
  }
  return out;
}

namespace {

// ["0x0a", "0x60", ...] -> bytes.
bool hex_bytes(const json& a, std::vector<uint8_t>& out) {
  if (!a.is_array()) return false;
  for (const auto& b : a) {
    if (!b.is_string()) return false;
    const std::string& t = b.get_ref<const std::string&>();
    if (t.size() < 3 || t.size() > 4 || t[0] != '0' || (t[1] != 'x' && t[1] != 'X')) return false;
    char* end = nullptr;
    const unsigned long v = std::strtoul(t.c_str() + 2, &end, 16);
    if (*end != '\0' || v > 255) return false;
    out.push_back(static_cast<uint8_t>(v));
  }
  return true;
}

}  // namespace

bpf::MapEntries parse_bpftool_map_dump(std::string_view text, const std::string& origin) {
  Doc doc(text, origin, "bpftool -j map dump");
  bpf::MapEntries out;
  for (size_t i = 0; i < doc.root().size(); ++i) {
    const json& o = doc.object(i);
    if (o.contains("values")) doc.fail(i, "a per-CPU map's \"values\": no service map is per-CPU");
    if (!o.contains("key") || !o.contains("value")) {
      doc.fail(i, o.contains("formatted")
                      ? "entry has only \"formatted\" (BTF) data; dpscope decodes the raw bytes that `bpftool -j map "
                        "dump` prints as \"key\" / \"value\""
                      : "missing \"key\" or \"value\"");
    }
    std::vector<uint8_t> key, value;
    if (!hex_bytes(o["key"], key)) doc.fail(i, "\"key\" is not an array of hex bytes (\"0x0a\"): " + o["key"].dump());
    if (!hex_bytes(o["value"], value)) {
      doc.fail(i, "\"value\" is not an array of hex bytes (\"0x0a\"): " + o["value"].dump());
    }
    if (i == 0) {
      out.key_size = static_cast<uint32_t>(key.size());
      out.value_stride = static_cast<uint32_t>(value.size());
    }
    if (key.size() != out.key_size || value.size() != out.value_stride) {
      doc.fail(i, "entry of " + std::to_string(key.size()) + "/" + std::to_string(value.size()) +
                      " bytes where the first one had " + std::to_string(out.key_size) + "/" +
                      std::to_string(out.value_stride));
    }
    out.keys.insert(out.keys.end(), key.begin(), key.end());
    out.values.insert(out.values.end(), value.begin(), value.end());
    out.count += 1;
  }
  out.complete = true;
  return out;
}

void BpftoolImport::add_map_dump(const std::string& arg) {
  const auto eq = arg.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == arg.size()) {
    throw UsageError("--bpftool-map-dump " + arg + ": expected MAP=FILE, MAP a pin path or a map name, e.g. " +
                     "--bpftool-map-dump /sys/fs/bpf/tc/globals/cilium_lb4_services_v2=lb4-services.json");
  }
  const std::string path = arg.substr(eq + 1);
  dumps_.push_back({arg.substr(0, eq), origin_of(path), parse_bpftool_map_dump(model::read_file(path), origin_of(path))});
  inputs_.push_back(path);
}

void BpftoolImport::add_progs(const std::string& path) {
  auto progs = parse_bpftool_progs(model::read_file(path), origin_of(path));
  for (auto& p : progs) ebpf_.programs.push_back(std::move(p));
  progs_given_ = true;
  inputs_.push_back(path);
}

void BpftoolImport::add_maps(const std::string& path) {
  auto maps = parse_bpftool_maps(model::read_file(path), origin_of(path));
  for (auto& m : maps) ebpf_.maps.push_back(std::move(m));
  maps_given_ = true;
  inputs_.push_back(path);
}

void BpftoolImport::add_net(const std::string& path) {
  auto attachments = parse_bpftool_net(model::read_file(path), origin_of(path));
  for (auto& a : attachments) ebpf_.attachments.push_back(std::move(a));
  net_given_ = true;
  inputs_.push_back(path);
}

void BpftoolImport::finish(model::Snapshot& snapshot) {
  if (!any()) return;
  // Program names for attachments, as the live collector does.
  for (auto& a : ebpf_.attachments) {
    if (!a.prog_name.empty()) continue;
    for (const auto& p : ebpf_.programs) {
      if (p.id == a.prog_id) a.prog_name = p.name;
    }
  }
  // Map dumps: matched to the listed map they name, counted, and decoded with
  // the listed service maps by the live collector's decoders.
  std::vector<bpf::DumpedMap> service_maps;
  std::vector<bool> dump_used(dumps_.size(), false);
  auto base = [](const std::string& p) { return p.substr(p.rfind('/') == std::string::npos ? 0 : p.rfind('/') + 1); };
  for (auto& m : ebpf_.maps) {
    const bool wanted = bpf::cilium::wants(m) || bpf::calico::wants(m);
    bpf::MapEntries entries;
    entries.note = "not imported: no --bpftool-map-dump for this map";
    bool dumped = false;
    for (size_t d = 0; d < dumps_.size() && !dumped; ++d) {
      const std::string& want = dumps_[d].map;
      const bool by_pin = std::find(m.pinned.begin(), m.pinned.end(), want) != m.pinned.end();
      const std::string name = base(want);
      const bool by_name = m.pinned.empty() && (name == m.name || name.substr(0, 15) == m.name) &&
                           dumps_[d].entries.count > 0 && dumps_[d].entries.key_size == m.key_size &&
                           dumps_[d].entries.value_stride == m.value_size;
      const bool empty_by_name = m.pinned.empty() && dumps_[d].entries.count == 0 && (name == m.name || name.substr(0, 15) == m.name);
      if (!dump_used[d] && (by_pin || by_name || empty_by_name)) {
        dump_used[d] = true;
        dumped = true;
        entries = dumps_[d].entries;
        m.entries = entries.count;
        m.entries_note.clear();
      }
    }
    if (wanted) service_maps.push_back({m, std::move(entries)});
  }
  for (size_t d = 0; d < dumps_.size(); ++d) {
    if (!dump_used[d]) {
      throw InputError(dumps_[d].origin, 0,
                       "--bpftool-map-dump " + dumps_[d].map + ": no map of that pin path or name (with " +
                           std::to_string(dumps_[d].entries.key_size) + "/" +
                           std::to_string(dumps_[d].entries.value_stride) +
                           "-byte key/value) in the --bpftool-map input; the dump has no map type or size, so give "
                           "`bpftool -j -f map show` output with it");
    }
  }
  const bool any_dump = !dumps_.empty();
  if (any_dump) {
    for (auto& s : bpf::cilium::decode(service_maps)) ebpf_.services.push_back(std::move(s));
    for (auto& s : bpf::calico::decode(service_maps)) ebpf_.services.push_back(std::move(s));
  }
  ebpf_.collected = true;
  snapshot.ebpf = std::move(ebpf_);
  if (!any_dump && !service_maps.empty()) {
    std::string names;
    for (size_t i = 0; i < service_maps.size() && i < 6; ++i) names += (i ? ", " : "") + service_maps[i].meta.name;
    snapshot.unavailable.push_back(
        {"ebpf.services",
         "not imported: `bpftool map show` lists the service maps (" + names + ") but not their entries", 0,
         "add --bpftool-map-dump MAP=FILE per map (bpftool -j map dump pinned /sys/fs/bpf/tc/globals/"
         "cilium_lb4_services_v2, ..._backends_v3, lb6, Calico cali_v4_nat_fe3 / cali_v4_nat_be)"});
  }
  for (const auto& path : inputs_) snapshot.node.inputs.push_back(path);
  if (!progs_given_) {
    snapshot.unavailable.push_back({"ebpf.programs", "not imported: no --bpftool-prog input", 0,
                                    "add --bpftool-prog FILE (bpftool -j -f prog show)"});
  }
  if (!maps_given_) {
    snapshot.unavailable.push_back({"ebpf.maps", "not imported: no --bpftool-map input", 0,
                                    "add --bpftool-map FILE (bpftool -j -f map show)"});
  }
  if (!net_given_) {
    snapshot.unavailable.push_back({"ebpf.attachments", "not imported: no --bpftool-net input", 0,
                                    "add --bpftool-net FILE (bpftool -j net show, in the node's netns)"});
  }
}

}  // namespace dpscope::importer
