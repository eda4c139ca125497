// `dpscope --version` and `dpscope version [-j]`: what this binary is (version,
// git commit), what it was built with (the libraries and their versions), and
// which kernel features this machine has that dpscope's readers depend on.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace dpscope::cli {

struct LibraryVersion {
  std::string name;     // "libbpf"
  std::string version;  // "1.1.2"
  std::string source;   // "runtime" (asked the loaded library), "build" (the headers / pkg-config
                        // version it was compiled against), "header-only"
  std::string note;     // "built against 1.1.2"
};

// A kernel feature as found on this machine: "yes", "no" or "unknown", and why.
struct KernelFeature {
  std::string id;       // "btf", "bpffs", "nf_tables", "ip_tables", "cgroup2"
  std::string name;     // "BTF (/sys/kernel/btf/vmlinux)"
  std::string state;    // yes | no | unknown
  std::string detail;   // "/sys/fs/bpf", "not loaded (it loads on the first nft command)", "EACCES ..."
};

struct BuildInfo {
  std::string version;  // DPSCOPE_VERSION
  std::string commit;   // short commit, "-dirty" when built with uncommitted changes; "unknown" outside git
  std::vector<LibraryVersion> libraries;
};

BuildInfo build_info();
std::string kernel_release();
std::vector<KernelFeature> kernel_features();

std::string version_text();            // what --version and `version` print
nlohmann::json version_json();         // `version -j`: "dpscope.version/v1"

}  // namespace dpscope::cli
