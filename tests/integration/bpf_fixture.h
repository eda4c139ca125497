// Kernel state for the eBPF integration tests: the compiled fixtures/bpf
// objects loaded with libbpf, maps pinned under the test's BpffsDir, programs
// attached in a dps-* netns and a dps-* cgroup. Every handle is RAII and
// destroyed in reverse order of creation (detach before delete), so a failing
// assertion leaves no pins, links, qdiscs, netns or cgroups behind.
#pragma once

#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <net/if.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "model/snapshot.h"
#include "tests/support/kernel.h"
#include "tests/support/process.h"

namespace dpscope::test::bpffix {

inline std::string fixture_object(const std::string& stem) {
  return std::string(DPSCOPE_BUILD_DIR) + "/fixtures/bpf/" + stem + ".o";
}

// Runs fn on a thread that entered the netns /run/netns/<name>; rethrows its error.
inline void in_netns(const std::string& name, const std::function<void()>& fn) {
  std::string error;
  std::thread t([&] {
    int fd = open(("/run/netns/" + name).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0 || setns(fd, CLONE_NEWNET) != 0) {
      error = "cannot enter netns " + name + ": " + strerror(errno);
      if (fd >= 0) close(fd);
      return;
    }
    close(fd);
    try {
      fn();
    } catch (const std::exception& e) {
      error = e.what();
    }
  });
  t.join();
  if (!error.empty()) throw std::runtime_error(error);
}

// A loaded BPF object whose pinned-by-name maps live under pin_root.
class BpfObject {
 public:
  BpfObject(const std::string& path, const std::string& pin_root) : pin_root_(pin_root) {
    std::filesystem::create_directories(pin_root);
    LIBBPF_OPTS(bpf_object_open_opts, opts, .pin_root_path = pin_root_.c_str());
    obj_ = bpf_object__open_file(path.c_str(), &opts);
    if (libbpf_get_error(obj_)) {
      obj_ = nullptr;
      throw std::runtime_error("cannot open " + path);
    }
    if (int err = bpf_object__load(obj_); err) {
      bpf_object__close(obj_);
      obj_ = nullptr;
      throw std::runtime_error("cannot load " + path + ": " + strerror(-err));
    }
  }
  ~BpfObject() {
    if (!obj_) return;
    for (const auto& p : pinned_progs_) unlink(p.c_str());
    bpf_object__unpin_maps(obj_, nullptr);
    bpf_object__close(obj_);
  }
  BpfObject(const BpfObject&) = delete;
  BpfObject& operator=(const BpfObject&) = delete;

  bpf_program* prog(const std::string& name) const {
    bpf_program* p = bpf_object__find_program_by_name(obj_, name.c_str());
    if (!p) throw std::runtime_error("no program " + name);
    return p;
  }
  int prog_fd(const std::string& name) const { return bpf_program__fd(prog(name)); }
  int map_fd(const std::string& name) const {
    bpf_map* m = bpf_object__find_map_by_name(obj_, name.c_str());
    if (!m) throw std::runtime_error("no map " + name);
    return bpf_map__fd(m);
  }
  std::string pin_path(const std::string& map) const { return pin_root_ + "/" + map; }
  std::string pin_prog(const std::string& name, const std::string& path) {
    if (bpf_program__pin(prog(name), path.c_str()) != 0) throw std::runtime_error("cannot pin " + path);
    pinned_progs_.push_back(path);
    return path;
  }
  std::vector<uint32_t> prog_ids() const {
    std::vector<uint32_t> ids;
    bpf_program* p;
    bpf_object__for_each_program(p, obj_) ids.push_back(id_of(bpf_program__fd(p)));
    return ids;
  }
  std::vector<uint32_t> map_ids() const {
    std::vector<uint32_t> ids;
    bpf_map* m;
    bpf_object__for_each_map(m, obj_) ids.push_back(id_of(bpf_map__fd(m)));
    return ids;
  }
  static uint32_t id_of(int fd) {
    bpf_map_info info{};  // id sits at the same offset in every info struct
    uint32_t len = sizeof info;
    if (bpf_obj_get_info_by_fd(fd, &info, &len) != 0) return 0;
    return info.id;
  }

 private:
  std::string pin_root_;
  bpf_object* obj_ = nullptr;
  std::vector<std::string> pinned_progs_;
};

// A dps-* cgroup under the cgroup2 mount, removed on destruction.
class CgroupDir {
 public:
  explicit CgroupDir(const std::string& tag) {
    root_ = cgroup2_root();
    path_ = root_ + "/" + unique_name(tag);
    if (mkdir(path_.c_str(), 0755) != 0) throw std::runtime_error("mkdir " + path_ + ": " + strerror(errno));
    fd_ = open(path_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  }
  ~CgroupDir() {
    if (fd_ >= 0) close(fd_);
    rmdir(path_.c_str());
  }
  CgroupDir(const CgroupDir&) = delete;
  CgroupDir& operator=(const CgroupDir&) = delete;
  const std::string& path() const { return path_; }
  const std::string& root() const { return root_; }
  int fd() const { return fd_; }
  std::string relative() const { return path_.substr(root_.size()); }

  static std::string cgroup2_root() {
    for (const char* candidate : {"/sys/fs/cgroup/unified", "/sys/fs/cgroup"}) {
      auto r = run({"stat", "-f", "-c", "%T", candidate});
      if (r.exit_code == 0 && r.out.find("cgroup2") != std::string::npos) return candidate;
    }
    throw std::runtime_error("no cgroup2 mount");
  }

 private:
  std::string root_, path_;
  int fd_ = -1;
};

// bpf_link (cgroup, xdp) destroyed (= detached) on destruction.
class Link {
 public:
  explicit Link(bpf_link* l) : link_(libbpf_get_error(l) ? nullptr : l) {
    if (!link_) throw std::runtime_error("attach failed");
  }
  ~Link() { bpf_link__destroy(link_); }
  Link(const Link&) = delete;
  Link& operator=(const Link&) = delete;
  uint32_t id() const { return BpfObject::id_of(bpf_link__fd(link_)); }

 private:
  bpf_link* link_;
};

// A raw link fd (tcx), detached when closed.
class LinkFd {
 public:
  explicit LinkFd(int fd) : fd_(fd) {
    if (fd_ < 0) throw std::runtime_error(std::string("link create failed: ") + strerror(errno));
  }
  ~LinkFd() { close(fd_); }
  LinkFd(const LinkFd&) = delete;
  LinkFd& operator=(const LinkFd&) = delete;
  uint32_t id() const { return BpfObject::id_of(fd_); }

 private:
  int fd_;
};

// A BPF_PROG_ATTACH (no link) to a cgroup, detached on destruction.
class CgroupAttach {
 public:
  CgroupAttach(int cgroup_fd, int prog_fd, bpf_attach_type type) : cg_(cgroup_fd), prog_(prog_fd), type_(type) {
    if (bpf_prog_attach(prog_fd, cgroup_fd, type, BPF_F_ALLOW_MULTI) != 0) {
      throw std::runtime_error(std::string("bpf_prog_attach: ") + strerror(errno));
    }
  }
  ~CgroupAttach() { bpf_prog_detach2(prog_, cg_, type_); }
  CgroupAttach(const CgroupAttach&) = delete;
  CgroupAttach& operator=(const CgroupAttach&) = delete;

 private:
  int cg_, prog_;
  bpf_attach_type type_;
};

// ---------------------------------------------------------------- Cilium LB content

// Writes a Cilium LB state into the services/backends maps (layout of
// cilium-calico-maps.md §1.3) and returns what a decoder must find: the
// expectation comes from the service list, not from the bytes written.
struct CiliumLbWriter {
  int services4 = -1, backends4 = -1, services6 = -1, backends6 = -1;
  uint32_t next_backend = 1;
  uint16_t next_revnat = 1;
  std::vector<model::LbFrontend> frontends;
  std::vector<model::LbBackend> backends;
  uint64_t wildcards = 0;

  static void put(int fd, const void* k, const void* v) {
    if (bpf_map_update_elem(fd, k, v, BPF_ANY) != 0) throw std::runtime_error(std::string("update: ") + strerror(errno));
  }

  // Backends of one service: `active` then `terminating`.
  std::vector<uint32_t> add_backends(bool v6, int active, int terminating, uint16_t port) {
    std::vector<uint32_t> ids;
    for (int i = 0; i < active + terminating; ++i) {
      uint32_t id = next_backend++;
      char text[64];
      if (v6) {
        snprintf(text, sizeof text, "fd00::%x:%x", id >> 16, id & 0xffff);
      } else {
        snprintf(text, sizeof text, "10.%u.%u.%u", 128 + ((id >> 16) & 127), (id >> 8) & 255, id & 255);
      }
      char canonical[INET6_ADDRSTRLEN];
      uint8_t raw[16];
      inet_pton(v6 ? AF_INET6 : AF_INET, text, raw);
      inet_ntop(v6 ? AF_INET6 : AF_INET, raw, canonical, sizeof canonical);
      std::string addr = canonical;
      uint8_t value[24] = {};
      const size_t alen = v6 ? 16 : 4;
      inet_pton(v6 ? AF_INET6 : AF_INET, addr.c_str(), value);
      uint16_t nport = htons(port);
      memcpy(value + alen, &nport, 2);
      value[alen + 2] = 6;
      value[alen + 3] = i < active ? 0 : 1;
      put(v6 ? backends6 : backends4, &id, value);
      backends.push_back({id, addr, port, "tcp", i < active ? "active" : "terminating"});
      ids.push_back(id);
    }
    return ids;
  }

  void add_frontend(bool v6, const std::string& addr, uint16_t port, uint8_t proto, uint8_t scope, uint8_t flags,
                    uint8_t flags2, const std::vector<uint32_t>& ids, int active, const std::string& type) {
    const size_t alen = v6 ? 16 : 4;
    uint8_t key[24] = {};
    inet_pton(v6 ? AF_INET6 : AF_INET, addr.c_str(), key);
    uint16_t nport = htons(port);
    memcpy(key + alen, &nport, 2);
    key[alen + 4] = proto;
    key[alen + 5] = scope;
    const uint16_t revnat = next_revnat++;
    const uint16_t nrev = htons(revnat);
    const int fd = v6 ? services6 : services4;
    for (size_t slot = 1; slot <= ids.size(); ++slot) {
      uint16_t s = static_cast<uint16_t>(slot);
      memcpy(key + alen + 2, &s, 2);
      uint8_t value[12] = {};
      memcpy(value, &ids[slot - 1], 4);
      memcpy(value + 6, &nrev, 2);
      value[8] = flags;
      value[9] = flags2;
      put(fd, key, value);
    }
    uint16_t zero = 0;
    memcpy(key + alen + 2, &zero, 2);
    uint8_t master[12] = {};
    uint16_t count = static_cast<uint16_t>(active), qcount = static_cast<uint16_t>(ids.size() - active);
    memcpy(master + 4, &count, 2);
    memcpy(master + 6, &nrev, 2);
    master[8] = flags;
    master[9] = flags2;
    memcpy(master + 10, &qcount, 2);
    put(fd, key, master);
    model::LbFrontend f;
    f.address = addr;
    f.port = port;
    f.protocol = proto == 6 ? "tcp" : proto == 17 ? "udp" : "sctp";
    f.type = type;
    f.scope = scope ? "internal" : "external";
    f.backends = static_cast<uint32_t>(ids.size());
    f.service_id = revnat;
    f.surrogate = addr == "0.0.0.0" || addr == "::";
    f.backend_ids = ids;  // slot n holds ids[n - 1]
    frontends.push_back(f);
  }

  // LB-IPAM wildcard: dport 0, proto 0, slot 0, count 0, rev_nat 0.
  void add_wildcard(const std::string& addr, uint8_t flags) {
    uint8_t key[12] = {};
    inet_pton(AF_INET, addr.c_str(), key);
    uint8_t value[12] = {};
    value[8] = flags;
    put(services4, key, value);
    ++wildcards;
  }

  static constexpr uint8_t kExternalIp = 0x01, kNodePort = 0x02, kExtLocal = 0x04, kLoadBalancer = 0x20,
                           kRoutable = 0x40;
  static constexpr uint8_t kTwoScopes = 0x20;  // flags2

  // N services of rotating types, M backends each (every third service has one terminating).
  void add_services(int n, int m) {
    for (int s = 0; s < n; ++s) {
      const int terminating = s % 3 == 0 && m > 1 ? 1 : 0;
      const int active = m - terminating;
      const uint8_t proto = s % 4 == 3 ? 17 : 6;
      const std::string cluster_ip = "10.96." + std::to_string(s / 200) + "." + std::to_string(s % 200 + 1);
      auto ids = add_backends(false, active, terminating, 8080);
      // Every service has its ClusterIP frontend.
      add_frontend(false, cluster_ip, 80, proto, 0, 0, 0, ids, active, "ClusterIP");
      const uint16_t node_port = static_cast<uint16_t>(30000 + s);
      switch (s % 5) {
        case 0:
          break;  // ClusterIP only
        case 1:   // NodePort: node address + surrogate 0.0.0.0
          add_frontend(false, "192.168.10.1", node_port, proto, 0, kNodePort | kRoutable, 0, ids, active, "NodePort");
          add_frontend(false, "0.0.0.0", node_port, proto, 0, kNodePort, 0, ids, active, "NodePort");
          break;
        case 2: {  // LoadBalancer VIP with its LB-IPAM wildcard
          const std::string vip = "172.18." + std::to_string(s / 200) + "." + std::to_string(s % 200 + 1);
          add_frontend(false, vip, 443, proto, 0, kLoadBalancer | kRoutable, 0, ids, active, "LoadBalancer");
          add_wildcard(vip, kLoadBalancer);
          break;
        }
        case 3:
          add_frontend(false, "203.0.113." + std::to_string(s % 200 + 1), 8443, proto, 0, kExternalIp | kRoutable, 0,
                       ids, active, "ExternalIP");
          break;
        case 4:  // externalTrafficPolicy=Local NodePort: external and internal scope entries
          add_frontend(false, "192.168.10.1", node_port, proto, 0, kNodePort | kExtLocal | kRoutable, kTwoScopes, ids,
                       active, "NodePort");
          add_frontend(false, "192.168.10.1", node_port, proto, 1, kNodePort | kExtLocal | kRoutable, kTwoScopes, ids,
                       active, "NodePort");
          break;
      }
    }
  }
};

// ---------------------------------------------------------------- Calico NAT content

// Writes Calico NAT frontends/backends (cilium-calico-maps.md §2) and keeps
// what the decoder must report.
struct CalicoNatWriter {
  int frontends_fd = -1, backends_fd = -1;
  uint32_t next_id = 1;
  std::vector<model::LbFrontend> frontends;
  std::vector<model::LbBackend> backends;

  // One frontend; `source_ranges` adds one LPM entry per CIDR (the decoder collapses them).
  void add(const std::string& addr, uint16_t port, uint8_t proto, int n_backends, bool blackhole = false,
           const std::vector<std::pair<std::string, int>>& source_ranges = {}) {
    const uint32_t id = next_id++;
    auto write_key = [&](const std::string& src, int src_len) {
      uint8_t key[16] = {};
      uint32_t prefixlen = 56 + static_cast<uint32_t>(src_len);
      memcpy(key, &prefixlen, 4);
      inet_pton(AF_INET, addr.c_str(), key + 4);
      memcpy(key + 8, &port, 2);  // host order
      key[10] = proto;
      inet_pton(AF_INET, src.c_str(), key + 11);
      uint8_t value[20] = {};
      uint32_t count = blackhole ? 0xffffffffu : static_cast<uint32_t>(n_backends);
      memcpy(value, &id, 4);
      memcpy(value + 4, &count, 4);
      CiliumLbWriter::put(frontends_fd, key, value);
    };
    write_key("0.0.0.0", 0);
    for (const auto& [cidr, len] : source_ranges) write_key(cidr, len);
    const std::string pname = proto == 6 ? "tcp" : proto == 17 ? "udp" : "sctp";
    for (int i = 0; i < n_backends; ++i) {
      uint32_t key[2] = {id, static_cast<uint32_t>(i)};
      uint8_t value[8] = {};
      const std::string backend = "10.250." + std::to_string(id) + "." + std::to_string(i + 1);
      inet_pton(AF_INET, backend.c_str(), value);
      const uint16_t bport = 8000 + static_cast<uint16_t>(i);
      memcpy(value + 4, &bport, 2);
      CiliumLbWriter::put(backends_fd, key, value);
      backends.push_back({id, backend, bport, pname, ""});
    }
    model::LbFrontend f;
    f.address = addr;
    f.port = port;
    f.protocol = pname;
    f.backends = blackhole ? 0 : static_cast<uint32_t>(n_backends);
    f.service_id = id;
    if (addr == "255.255.255.255") {
      f.type = "NodePort";
      f.surrogate = true;
    }
    frontends.push_back(f);
  }
};

inline bool frontend_less(const model::LbFrontend& a, const model::LbFrontend& b) {
  return std::tie(a.address, a.port, a.protocol, a.type, a.scope) <
         std::tie(b.address, b.port, b.protocol, b.type, b.scope);
}

}  // namespace dpscope::test::bpffix
