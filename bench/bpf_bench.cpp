// eBPF benchmark (issue 4), run as root by bench/bpf_bench.sh:
//  1. decode a 65,536-entry Cilium LB services map: dpscope (batch lookup +
//     decoder) against `bpftool map dump -j` on the same pinned map, same run;
//     target <= 0.1x bpftool's time;
//  2. the whole eBPF section (bpf::collect) of a node with 100 maps and 200
//     programs; target < 0.2 s.
// Everything lives in a private mount namespace (its own bpffs) and is freed
// when the process exits; only objects this process creates are timed.
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "collectors/bpf/bpf.h"
#include "decoders/service_maps.h"
#include "collectors/bpf/map_read.h"

namespace {

using Clock = std::chrono::steady_clock;
using dpscope::bpf::DumpedMap;

[[noreturn]] void die(const std::string& what) {
  fprintf(stderr, "bpf_bench: %s: %s\n", what.c_str(), strerror(errno));
  exit(1);
}

double median_seconds(int runs, const std::function<void()>& fn) {
  std::vector<double> t;
  for (int i = 0; i < runs; ++i) {
    auto start = Clock::now();
    fn();
    t.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// Runs argv with stdout into a pipe that is read to the end (as a consumer of
// bpftool's JSON would), returns the bytes read.
size_t run_reading_stdout(const std::vector<std::string>& argv) {
  int pipefd[2];
  if (pipe(pipefd) != 0) die("pipe");
  pid_t pid = fork();
  if (pid == 0) {
    dup2(pipefd[1], 1);
    close(pipefd[0]);
    close(pipefd[1]);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  close(pipefd[1]);
  std::vector<char> buf(1 << 16);
  size_t total = 0;
  ssize_t n;
  while ((n = read(pipefd[0], buf.data(), buf.size())) > 0) total += static_cast<size_t>(n);
  close(pipefd[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) die(argv[0] + std::string(" failed"));
  return total;
}

int create_map(bpf_map_type type, const char* name, uint32_t key, uint32_t value, uint32_t max, uint32_t flags) {
  LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = flags);
  int fd = bpf_map_create(type, name, key, value, max, &opts);
  if (fd < 0) die(std::string("bpf_map_create ") + name);
  return fd;
}

void put(int fd, const void* k, const void* v) {
  if (bpf_map_update_elem(fd, k, v, BPF_ANY) != 0) die("bpf_map_update_elem");
}

// 16,384 frontends x (1 master + 3 backend slots) = 65,536 entries; 4,096 backends.
void fill_lb(int services, int backends) {
  for (uint32_t b = 1; b <= 4096; ++b) {
    uint8_t v[12] = {};
    uint32_t addr = htonl(0x0a800000u + b);
    memcpy(v, &addr, 4);
    uint16_t port = htons(8080);
    memcpy(v + 4, &port, 2);
    v[6] = 6;
    put(backends, &b, v);
  }
  for (uint32_t s = 0; s < 16384; ++s) {
    uint8_t k[12] = {};
    uint32_t addr = htonl(0x0a600000u + s);
    memcpy(k, &addr, 4);
    uint16_t port = htons(80);
    memcpy(k + 4, &port, 2);
    k[8] = 6;
    uint16_t revnat = htons(static_cast<uint16_t>(s + 1));
    for (uint16_t slot = 0; slot <= 3; ++slot) {
      memcpy(k + 6, &slot, 2);
      uint8_t v[12] = {};
      if (slot == 0) {
        uint16_t count = 3;
        memcpy(v + 4, &count, 2);
      } else {
        uint32_t backend = (s * 3 + slot) % 4096 + 1;
        memcpy(v, &backend, 4);
      }
      memcpy(v + 6, &revnat, 2);
      put(services, k, v);
    }
  }
}

DumpedMap read_whole(int fd, const std::string& pin) {
  bpf_map_info info{};
  uint32_t len = sizeof info;
  if (bpf_obj_get_info_by_fd(fd, &info, &len) != 0) die("map info");
  DumpedMap m;
  m.meta.id = info.id;
  m.meta.name = info.name;
  m.meta.type = dpscope::bpf::map_type_name(info.type);
  m.meta.key_size = info.key_size;
  m.meta.value_size = info.value_size;
  m.meta.max_entries = info.max_entries;
  m.meta.pinned = {pin};
  dpscope::bpf::ReadLimits limits;
  limits.keep_data = true;
  m.entries = dpscope::bpf::read_map_entries(fd, {info.type, info.key_size, info.value_size, info.max_entries}, limits);
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  const int runs = argc > 1 ? std::max(1, atoi(argv[1])) : 5;
  if (geteuid() != 0) {
    fprintf(stderr, "bpf_bench: needs root (BPF objects, a private bpffs)\n");
    return 2;
  }
  // Private mount namespace: the bpffs below disappears with this process.
  if (unshare(CLONE_NEWNS) != 0 || mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) die("unshare");
  char dir_template[] = "/tmp/dps-bpf-bench-XXXXXX";
  if (!mkdtemp(dir_template)) die("mkdtemp");
  const std::string bpffs = dir_template;
  if (mount("bpf", bpffs.c_str(), "bpf", 0, nullptr) != 0) die("mount bpffs");
  const std::string globals = bpffs + "/tc/globals";
  std::filesystem::create_directories(globals);

  // ---- 1. one 65,536-entry services map
  int services = create_map(BPF_MAP_TYPE_HASH, "cilium_lb4_serv", 12, 12, 65536, BPF_F_NO_PREALLOC);
  int backends = create_map(BPF_MAP_TYPE_HASH, "cilium_lb4_back", 4, 12, 65536, BPF_F_NO_PREALLOC);
  const std::string services_pin = globals + "/cilium_lb4_services_v2";
  const std::string backends_pin = globals + "/cilium_lb4_backends_v3";
  if (bpf_obj_pin(services, services_pin.c_str()) != 0 || bpf_obj_pin(backends, backends_pin.c_str()) != 0) die("pin");
  fill_lb(services, backends);

  size_t frontends = 0, entries = 0;
  // One untimed round of each side first: both then run on warm caches.
  dpscope::bpf::cilium::decode({read_whole(services, services_pin)});
  run_reading_stdout({"bpftool", "map", "dump", "-j", "pinned", services_pin});
  const double dpscope_services = median_seconds(runs, [&] {
    std::vector<DumpedMap> maps;
    maps.push_back(read_whole(services, services_pin));
    entries = maps[0].entries.count;
    auto decoded = dpscope::bpf::cilium::decode(maps);
    frontends = decoded.at(0).frontends.size();
  });
  // The two halves, to see where the time goes.
  const double read_only = median_seconds(runs, [&] { read_whole(services, services_pin); });
  std::vector<DumpedMap> premade;
  premade.push_back(read_whole(services, services_pin));
  const double decode_only = median_seconds(runs, [&] { dpscope::bpf::cilium::decode(premade); });
  const double dpscope_both = median_seconds(runs, [&] {
    std::vector<DumpedMap> maps;
    maps.push_back(read_whole(services, services_pin));
    maps.push_back(read_whole(backends, backends_pin));
    auto decoded = dpscope::bpf::cilium::decode(maps);
    if (decoded.at(0).backends.size() != 4096) die("decode");
  });
  size_t bpftool_bytes = 0;
  const double bpftool_dump = median_seconds(runs, [&] {
    bpftool_bytes = run_reading_stdout({"bpftool", "map", "dump", "-j", "pinned", services_pin});
  });

  // ---- 2. a node with 100 maps and 200 programs
  // 25 loads of the Cilium-like fixture: 8 programs each; its 14 maps are
  // pinned by name and so shared between the loads, as on a node.
  std::vector<bpf_object*> objects;
  const std::string object_path = std::string(DPSCOPE_BPF_FIXTURE_DIR) + "/cilium_node.o";
  const std::string node_globals = bpffs + "/node/tc/globals";
  std::filesystem::create_directories(node_globals);
  int programs = 0;
  for (int i = 0; i < 25; ++i) {
    LIBBPF_OPTS(bpf_object_open_opts, opts, .pin_root_path = node_globals.c_str());
    bpf_object* obj = bpf_object__open_file(object_path.c_str(), &opts);
    if (libbpf_get_error(obj) || bpf_object__load(obj) != 0) die("load " + object_path);
    bpf_program* p;
    bpf_object__for_each_program(p, obj)++ programs;
    objects.push_back(obj);
  }
  // Fill the node's LB map like part 1, and add hash maps of 1,000 entries up to 100 maps.
  {
    int node_services = bpf_obj_get((node_globals + "/cilium_lb4_services_v2").c_str());
    int node_backends = bpf_obj_get((node_globals + "/cilium_lb4_backends_v3").c_str());
    fill_lb(node_services, node_backends);
    close(node_services);
    close(node_backends);
  }
  int node_maps = 14;
  std::vector<int> extra;
  while (node_maps < 100) {
    int fd = create_map(BPF_MAP_TYPE_HASH, "dps_bench_map", 8, 16, 4096, 0);
    for (uint64_t k = 0; k < 1000; ++k) {
      uint8_t v[16] = {};
      put(fd, &k, v);
    }
    extra.push_back(fd);
    ++node_maps;
  }
  dpscope::bpf::Options options;
  options.bpffs_roots = {bpffs};
  size_t seen_programs = 0, seen_maps = 0;
  const double collect_time = median_seconds(runs, [&] {
    dpscope::model::Snapshot snap;
    dpscope::bpf::collect(snap, options);
    if (!snap.ebpf.collected) die("collect");
    seen_programs = snap.ebpf.programs.size();
    seen_maps = snap.ebpf.maps.size();
  });

  printf("## eBPF (bench/bpf_bench.sh, median of %d runs)\n\n", runs);
  printf("| what | dpscope | bpftool | ratio | target |\n|---|---|---|---|---|\n");
  printf("| decode cilium_lb4_services_v2, %zu entries (%zu frontends) | %.4f s | %.4f s (`bpftool map dump -j`, %zu bytes) | %.3fx | <= 0.1x |\n",
         entries, frontends, dpscope_services, bpftool_dump, bpftool_bytes, dpscope_services / bpftool_dump);
  printf("| (of which: batch read %.4f s, decode %.4f s) | | | | |\n", read_only, decode_only);
  printf("| same + backends_v3 (4,096 entries) | %.4f s | | | |\n", dpscope_both);
  printf("| whole eBPF section: %d programs, %d maps created (%zu programs, %zu maps seen) | %.4f s | | | < 0.2 s |\n",
         programs, node_maps, seen_programs, seen_maps, collect_time);
  printf("\nratio_services=%.4f collect_seconds=%.4f\n", dpscope_services / bpftool_dump, collect_time);

  for (auto* obj : objects) bpf_object__close(obj);
  for (int fd : extra) close(fd);
  close(services);
  close(backends);
  umount2(bpffs.c_str(), MNT_DETACH);
  rmdir(bpffs.c_str());
  const bool ok = dpscope_services <= 0.1 * bpftool_dump && collect_time < 0.2;
  return ok ? 0 : 1;
}
