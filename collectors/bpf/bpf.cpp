#include "collectors/bpf/bpf.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <unordered_map>

#include "collectors/bpf/attach.h"
#include "decoders/service_maps.h"
#include "collectors/bpf/map_read.h"
#include "util/fd.h"

namespace dpscope::bpf {

// ---------------------------------------------------------------- names

std::string prog_type_name(uint32_t type) {
  if (const char* s = libbpf_bpf_prog_type_str(static_cast<bpf_prog_type>(type))) return s;
  if (type == 32) return "netfilter";  // BPF_PROG_TYPE_NETFILTER, kernel 6.4
  return std::to_string(type);
}

std::string map_type_name(uint32_t type) {
  if (const char* s = libbpf_bpf_map_type_str(static_cast<bpf_map_type>(type))) return s;
  if (type == 33) return "arena";  // BPF_MAP_TYPE_ARENA, kernel 6.9
  return std::to_string(type);
}

std::string link_type_name(uint32_t type) {
  // Types after STRUCT_OPS (9) are missing from the 6.1 headers libbpf 1.1.2 was built with.
  switch (type) {
    case 10: return "netfilter";
    case 11: return "tcx";
    case 12: return "uprobe_multi";
    case 13: return "netkit";
    case 14: return "sockmap";
    default: break;
  }
  if (const char* s = libbpf_bpf_link_type_str(static_cast<bpf_link_type>(type))) return s;
  return std::to_string(type);
}

std::string attach_type_name(uint32_t type) {
  switch (type) {
    case 45: return "netfilter";
    case 46: return "tcx_ingress";
    case 47: return "tcx_egress";
    case 54: return "netkit_primary";
    case 55: return "netkit_peer";
    default: break;
  }
  if (type < __MAX_BPF_ATTACH_TYPE) {
    if (const char* s = libbpf_bpf_attach_type_str(static_cast<bpf_attach_type>(type))) return s;
  }
  return std::to_string(type);
}

namespace {

// ---------------------------------------------------------------- helpers

int silent_libbpf_print(enum libbpf_print_level, const char*, va_list) { return 0; }

std::string errno_name(int err) {
  const char* n = strerrorname_np(err);
  return n ? n : "errno " + std::to_string(err);
}

// Exact "key:" match: fdinfo keys are substrings of each other.
std::optional<uint64_t> fdinfo_value(int fd, const char* key) {
  char path[64];
  snprintf(path, sizeof path, "/proc/self/fdinfo/%d", fd);
  UniqueFd f(open(path, O_RDONLY | O_CLOEXEC));
  if (!f) return std::nullopt;
  char buf[2048];
  ssize_t n = read(f.get(), buf, sizeof buf - 1);
  if (n <= 0) return std::nullopt;
  buf[n] = 0;
  const size_t klen = strlen(key);
  for (char* line = buf; line && *line;) {
    char* nl = strchr(line, '\n');
    if (nl) *nl = 0;
    if (strncmp(line, key, klen) == 0 && line[klen] == ':') return strtoull(line + klen + 1, nullptr, 10);
    line = nl ? nl + 1 : nullptr;
  }
  return std::nullopt;
}

// bpftool's print_boot_time: load_time is ns since boot.
class BootClock {
 public:
  BootClock() {
    timespec real{}, boot{};
    clock_gettime(CLOCK_REALTIME, &real);
    clock_gettime(CLOCK_BOOTTIME, &boot);
    offset_ = real.tv_sec - boot.tv_sec;
  }
  std::string rfc3339(uint64_t boot_ns) const {
    time_t secs = offset_ + static_cast<time_t>(boot_ns / 1000000000ull);
    tm t{};
    gmtime_r(&secs, &t);
    char buf[32];
    strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &t);
    return buf;
  }

 private:
  time_t offset_ = 0;
};

class BtfCache {
 public:
  ~BtfCache() {
    for (auto& [id, b] : cache_) btf__free(b);
  }
  const btf* get(uint32_t id) {
    auto it = cache_.find(id);
    if (it != cache_.end()) return it->second;
    btf* b = btf__load_from_kernel_by_id(id);
    if (libbpf_get_error(b)) b = nullptr;
    cache_[id] = b;
    return b;
  }

 private:
  std::unordered_map<uint32_t, btf*> cache_;
};

std::string hex_tag(const uint8_t* tag) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  for (int i = 0; i < BPF_TAG_SIZE; ++i) {
    s += digits[tag[i] >> 4];
    s += digits[tag[i] & 15];
  }
  return s;
}

bool stats_enabled() {
  std::ifstream f("/proc/sys/kernel/bpf_stats_enabled");
  int v = 0;
  return (f >> v) && v == 1;
}

// ---------------------------------------------------------------- pins

struct Pins {
  std::map<uint32_t, std::vector<std::string>> progs, maps, links;
};

std::string unescape_mount_path(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size() + 0 && isdigit(s[i + 1])) {
      out += static_cast<char>(std::stoi(s.substr(i + 1, 3), nullptr, 8));
      i += 3;
    } else {
      out += s[i];
    }
  }
  return out;
}

void record_pin(const std::string& path, Pins& pins) {
  LIBBPF_OPTS(bpf_obj_get_opts, ro, .file_flags = BPF_F_RDONLY);
  int fd = bpf_obj_get_opts(path.c_str(), &ro);
  if (fd < 0 && errno == EINVAL) fd = bpf_obj_get(path.c_str());  // programs and links refuse RDONLY
  if (fd < 0) return;
  UniqueFd owner(fd);
  char link[64], proc[64];
  snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(proc, link, sizeof link - 1);
  if (n <= 0) return;
  link[n] = 0;
  // All bpf_*_info structs start with type, id.
  bpf_map_info info{};
  uint32_t len = sizeof info;
  if (bpf_obj_get_info_by_fd(fd, &info, &len) != 0) return;
  const std::string kind = link;
  if (kind == "anon_inode:bpf-map") {
    pins.maps[info.id].push_back(path);
  } else if (kind == "anon_inode:bpf-prog") {
    bpf_prog_info pinfo{};
    len = sizeof pinfo;
    if (bpf_obj_get_info_by_fd(fd, &pinfo, &len) == 0) pins.progs[pinfo.id].push_back(path);
  } else if (kind == "anon_inode:bpf_link" || kind == "anon_inode:bpf-link") {
    bpf_link_info linfo{};
    len = sizeof linfo;
    if (bpf_obj_get_info_by_fd(fd, &linfo, &len) == 0) pins.links[linfo.id].push_back(path);
  }
}

void walk_pins(const std::vector<std::string>& roots, Pins& pins) {
  namespace fs = std::filesystem;
  for (const auto& root : roots) {
    std::error_code ec;
    fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec), end;
    for (; !ec && it != end; it.increment(ec)) {
      std::error_code sec;
      if (it->is_regular_file(sec)) record_pin(it->path().string(), pins);
    }
  }
  for (auto* table : {&pins.progs, &pins.maps, &pins.links}) {
    for (auto& [id, paths] : *table) {
      std::sort(paths.begin(), paths.end());
      paths.erase(std::unique(paths.begin(), paths.end()), paths.end());
    }
  }
}

// ---------------------------------------------------------------- objects

using GetNext = int (*)(__u32, __u32*);

// Returns 0 or the errno of the first GET_NEXT_ID call.
template <typename Fn>
int for_each_id(GetNext next, Fn&& fn) {
  uint32_t id = 0;
  bool first = true;
  for (;;) {
    if (next(id, &id) != 0) {
      int err = errno;
      if (err == ENOENT) return 0;
      return first ? err : 0;
    }
    first = false;
    fn(id);
  }
}

std::optional<model::BpfProgram> describe_prog(uint32_t id, const BootClock& clock, BtfCache& btfs, bool stats_on) {
  UniqueFd fd(bpf_prog_get_fd_by_id(id));
  if (!fd) return std::nullopt;  // vanished since GET_NEXT_ID (ENOENT), or not ours to open
  bpf_prog_info info{};
  uint32_t len = sizeof info;
  if (bpf_obj_get_info_by_fd(fd.get(), &info, &len) != 0) return std::nullopt;
  model::BpfProgram p;
  p.id = info.id;
  p.type = prog_type_name(info.type);
  p.name = info.name;
  p.tag = hex_tag(info.tag);
  p.loaded_at = info.load_time ? clock.rfc3339(info.load_time) : "";
  p.bytes_xlated = info.xlated_prog_len;
  p.bytes_jited = info.jited_prog_len;
  p.btf_id = info.btf_id;
  if (stats_on || info.run_time_ns || info.run_cnt) {
    p.run_time_ns = info.run_time_ns;
    p.run_cnt = info.run_cnt;
  }
  // Second pass for the arrays (their counts are known now).
  const bool want_full_name = strlen(info.name) == BPF_OBJ_NAME_LEN - 1 && info.btf_id && info.nr_func_info;
  if (info.nr_map_ids || want_full_name) {
    std::vector<uint32_t> ids(info.nr_map_ids);
    bpf_func_info finfo{};
    bpf_prog_info again{};
    again.nr_map_ids = info.nr_map_ids;
    again.map_ids = reinterpret_cast<uintptr_t>(ids.data());
    if (want_full_name) {
      again.nr_func_info = 1;
      again.func_info_rec_size = std::min<uint32_t>(info.func_info_rec_size, sizeof finfo);
      again.func_info = reinterpret_cast<uintptr_t>(&finfo);
    }
    len = sizeof again;
    if (bpf_obj_get_info_by_fd(fd.get(), &again, &len) == 0) {
      ids.resize(std::min(info.nr_map_ids, again.nr_map_ids));  // the program may have changed in between
      p.map_ids = std::move(ids);
      if (want_full_name && again.nr_func_info) {
        if (const btf* b = btfs.get(info.btf_id)) {
          if (const btf_type* t = btf__type_by_id(b, finfo.type_id)) {
            if (const char* full = btf__name_by_offset(b, t->name_off); full && *full) p.name = full;
          }
        }
      }
    }
  }
  p.bytes_memlock = fdinfo_value(fd.get(), "memlock").value_or(0);
  return p;
}

struct MapRead {
  model::BpfMap meta;
  UniqueFd fd;
  MapShape shape;
};

std::optional<MapRead> describe_map(uint32_t id) {
  LIBBPF_OPTS(bpf_get_fd_by_id_opts, ro, .open_flags = BPF_F_RDONLY);
  UniqueFd fd(bpf_map_get_fd_by_id_opts(id, &ro));
  if (!fd) return std::nullopt;
  bpf_map_info info{};
  uint32_t len = sizeof info;
  if (bpf_obj_get_info_by_fd(fd.get(), &info, &len) != 0) return std::nullopt;
  MapRead r;
  r.meta.id = info.id;
  r.meta.type = map_type_name(info.type);
  r.meta.name = info.name;
  r.meta.key_size = info.key_size;
  r.meta.value_size = info.value_size;
  r.meta.max_entries = info.max_entries;
  r.meta.flags = info.map_flags;
  r.meta.btf_id = info.btf_id;
  r.meta.bytes_memlock = fdinfo_value(fd.get(), "memlock").value_or(0);
  r.shape = {info.type, info.key_size, info.value_size, info.max_entries};
  r.fd = std::move(fd);
  return r;
}

// bpf_link_info as kernels >= 6.7 lay it out: the per-type union starts at
// byte 16; the tcx / netkit / netfilter members are missing from the 6.1 header.
struct LinkInfo {
  uint32_t type;
  uint32_t id;
  uint32_t prog_id;
  uint32_t pad;
  union {
    struct {
      uint64_t cgroup_id;
      uint32_t attach_type;
    } cgroup;
    struct {
      uint32_t ifindex;
      uint32_t attach_type;
    } tcx;  // also netkit
    struct {
      uint32_t netns_ino;
      uint32_t attach_type;
    } netns;
    struct {
      uint32_t ifindex;
    } xdp;
    struct {
      uint32_t attach_type;
      uint32_t target_obj_id;
      uint32_t target_btf_id;
    } tracing;
    struct {
      uint32_t pf;
      uint32_t hooknum;
      int32_t priority;
      uint32_t flags;
    } netfilter;
    uint8_t raw[96];
  };
};

std::optional<model::BpfLink> describe_link(uint32_t id) {
  UniqueFd fd(bpf_link_get_fd_by_id(id));
  if (!fd) return std::nullopt;
  LinkInfo info{};
  uint32_t len = sizeof info;
  if (bpf_obj_get_info_by_fd(fd.get(), &info, &len) != 0) return std::nullopt;
  model::BpfLink l;
  l.id = info.id;
  l.type = link_type_name(info.type);
  l.prog_id = info.prog_id;
  switch (info.type) {
    case BPF_LINK_TYPE_CGROUP:
      l.cgroup_id = info.cgroup.cgroup_id;
      l.attach_type = attach_type_name(info.cgroup.attach_type);
      break;
    case BPF_LINK_TYPE_NETNS:
      l.attach_type = attach_type_name(info.netns.attach_type);
      break;
    case BPF_LINK_TYPE_XDP:
      l.ifindex = info.xdp.ifindex;
      l.attach_type = "xdp";
      break;
    case BPF_LINK_TYPE_TRACING:
      l.attach_type = attach_type_name(info.tracing.attach_type);
      break;
    case 11:  // tcx
    case 13:  // netkit
      l.ifindex = info.tcx.ifindex;
      l.attach_type = attach_type_name(info.tcx.attach_type);
      break;
    case 10:  // netfilter
      l.attach_type = "netfilter";
      break;
    default:
      break;
  }
  return l;
}

std::string capability_hint(int err, const char* what) {
  if (err == EPERM) {
    return std::string("EPERM on ") + what + " — needs CAP_SYS_ADMIN (CAP_BPF is not enough): run as root";
  }
  return std::string(errno_name(err)) + " on " + what;
}

// Objects GET_NEXT_ID listed but that could not be opened for a reason other
// than vanishing (ENOENT): reported, so a count is never silently short.
struct Skipped {
  uint64_t count = 0;
  int error = 0;
  void note(int err) {
    if (err == ENOENT) return;
    ++count;
    error = err;
  }
  void report(model::Snapshot& snapshot, const std::string& section, const char* what) const {
    if (!count) return;
    snapshot.unavailable.push_back({section, std::to_string(count) + " " + what + " could not be opened or read", error,
                                    error == EPERM ? "needs CAP_SYS_ADMIN: run as root" : ""});
  }
};

}  // namespace

std::vector<std::string> mounts_of_type(const std::string& fstype) {
  std::vector<std::string> out;
  std::ifstream f("/proc/self/mountinfo");
  std::string line;
  while (std::getline(f, line)) {
    auto sep = line.find(" - ");
    if (sep == std::string::npos) continue;
    std::istringstream rest(line.substr(sep + 3));
    std::string type;
    rest >> type;
    if (type != fstype) continue;
    std::istringstream head(line.substr(0, sep));
    std::string id, parent, devno, root, mountpoint;
    head >> id >> parent >> devno >> root >> mountpoint;
    out.push_back(unescape_mount_path(mountpoint));
  }
  return out;
}

// ---------------------------------------------------------------- collect

void collect(model::Snapshot& snapshot, const Options& options) {
  libbpf_set_print(silent_libbpf_print);
  auto& out = snapshot.ebpf;
  out = model::Ebpf{};

  // Probe the privilege first: without it every enumeration would look empty.
  {
    uint32_t id = 0;
    if (bpf_prog_get_next_id(0, &id) != 0 && errno != ENOENT) {
      int err = errno;
      snapshot.unavailable.push_back({"ebpf", "cannot enumerate BPF objects: BPF_PROG_GET_NEXT_ID failed", err,
                                      capability_hint(err, "BPF_PROG_GET_NEXT_ID")});
      return;
    }
  }

  // Pins first: programs and maps carry their paths.
  std::vector<std::string> roots = options.bpffs_roots;
  if (roots.empty()) roots = mounts_of_type("bpf");
  Pins pins;
  if (roots.empty() && options.pins_of_other_mount_namespace) {
    snapshot.unavailable.push_back({"ebpf.pins", "no bpffs mounted where the node's is looked for: pinned paths unknown",
                                    ENOENT,
                                    "mount the node's root recursively (kubectl debug --profile=sysadmin mounts it at "
                                    "/host), so /host/sys/fs/bpf is there"});
  } else if (!roots.empty()) {
    walk_pins(roots, pins);
  }

  const BootClock clock;
  BtfCache btfs;
  const bool stats_on = stats_enabled();
  Skipped skipped_progs, skipped_maps, skipped_links;
  int err = for_each_id(bpf_prog_get_next_id, [&](uint32_t id) {
    if (auto p = describe_prog(id, clock, btfs, stats_on)) {
      if (auto it = pins.progs.find(p->id); it != pins.progs.end()) p->pinned = it->second;
      out.programs.push_back(std::move(*p));
    } else {
      skipped_progs.note(errno);
    }
  });
  skipped_progs.report(snapshot, "ebpf.programs", "programs");
  if (err) {
    snapshot.unavailable.push_back({"ebpf", "BPF_PROG_GET_NEXT_ID failed", err, capability_hint(err, "BPF_PROG_GET_NEXT_ID")});
    return;
  }

  const auto deadline = std::chrono::steady_clock::now() + options.read_budget;
  std::vector<DumpedMap> service_maps;
  err = for_each_id(bpf_map_get_next_id, [&](uint32_t id) {
    auto r = describe_map(id);
    if (!r) {
      skipped_maps.note(errno);
      return;
    }
    if (auto it = pins.maps.find(r->meta.id); it != pins.maps.end()) r->meta.pinned = it->second;
    const bool wanted = options.decode_services && (cilium::wants(r->meta) || calico::wants(r->meta));
    ReadLimits limits;
    limits.max_entries = options.max_entries_counted;
    limits.deadline = deadline;
    limits.keep_data = wanted;
    if (wanted) limits.max_entries = std::max<uint64_t>(limits.max_entries, r->meta.max_entries);
    MapEntries entries = read_map_entries(r->fd.get(), r->shape, limits);
    if (entries.complete) {
      r->meta.entries = entries.count;
    } else {
      r->meta.entries_note = entries.note;
    }
    if (wanted) service_maps.push_back({r->meta, std::move(entries)});
    out.maps.push_back(std::move(r->meta));
  });
  skipped_maps.report(snapshot, "ebpf.maps", "maps");
  if (err) {
    snapshot.unavailable.push_back({"ebpf", "BPF_MAP_GET_NEXT_ID failed", err, capability_hint(err, "BPF_MAP_GET_NEXT_ID")});
    return;
  }

  err = for_each_id(bpf_link_get_next_id, [&](uint32_t id) {
    if (auto l = describe_link(id)) {
      if (auto it = pins.links.find(l->id); it != pins.links.end()) l->pinned = it->second;
      out.links.push_back(std::move(*l));
    } else {
      skipped_links.note(errno);
    }
  });
  skipped_links.report(snapshot, "ebpf.links", "links");
  if (err) {
    snapshot.unavailable.push_back({"ebpf.links", "BPF_LINK_GET_NEXT_ID failed", err,
                                    err == EINVAL ? "kernel older than 5.8 has no link enumeration"
                                                  : capability_hint(err, "BPF_LINK_GET_NEXT_ID")});
  }

  // Attach points: interfaces of the target netns, then the cgroup2 tree.
  NetnsAttachments net = collect_netns_attachments(options.netns);
  for (auto& u : net.unavailable) snapshot.unavailable.push_back(std::move(u));
  for (auto& l : out.links) {
    if (l.ifindex) {
      if (auto it = net.interfaces.find(l.ifindex); it != net.interfaces.end()) l.interface = it->second;
    }
  }
  for (auto& a : net.attachments) {
    // XDP attached through a link: name the link.
    if (a.kind == "xdp" && !a.link_id) {
      for (const auto& l : out.links) {
        if (l.type == "xdp" && l.prog_id == a.prog_id && l.interface == a.target) a.link_id = l.id;
      }
    }
    out.attachments.push_back(std::move(a));
  }
  collect_cgroup_attachments(options.cgroup_root, out.links, out.attachments, snapshot.unavailable);
  // Program names for attachments that only carry an id.
  std::unordered_map<uint32_t, const model::BpfProgram*> prog_by_id;
  for (const auto& p : out.programs) prog_by_id[p.id] = &p;
  for (auto& a : out.attachments) {
    if (a.prog_name.empty()) {
      if (auto it = prog_by_id.find(a.prog_id); it != prog_by_id.end()) a.prog_name = it->second->name;
    }
  }

  if (options.decode_services) {
    for (auto& s : cilium::decode(service_maps)) out.services.push_back(std::move(s));
    for (auto& s : calico::decode(service_maps)) out.services.push_back(std::move(s));
  }
  out.collected = true;
}

}  // namespace dpscope::bpf
