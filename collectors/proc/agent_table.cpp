#include "collectors/proc/agent_table.h"

namespace dpscope::proc {

// The first matching row wins. Names are the executables the projects ship
// (container images' entrypoints), as /proc/PID/exe names them.
const std::vector<AgentPattern>& agent_patterns() {
  static const std::vector<AgentPattern> kPatterns = {
      {"kube-proxy", "kube-proxy", "kube-proxy"},
      {"cilium-agent", "cilium-agent", "cilium"},
      {"cilium-envoy", "cilium-envoy", "cilium"},
      {"cilium-operator*", "cilium-operator", "cilium"},  // -generic, -aws, -azure, -alibabacloud
      {"calico-node", "calico-node", "calico"},           // felix, bird, confd: `calico-node -felix` ...
      {"calico-felix", "calico-felix", "calico"},         // felix before it moved into calico-node
      {"calico-typha", "calico-typha", "calico"},
      {"kube-router", "kube-router", "kube-router"},
      {"antrea-agent", "antrea-agent", "antrea"},
      {"ovnkube*", "ovnkube", "ovn-kubernetes"},          // ovnkube, ovnkube-identity, ...
      {"ovn-controller", "ovn-controller", "ovn-kubernetes"},
      {"ovs-vswitchd", "ovs-vswitchd", "openvswitch"},    // Antrea's and OVN-Kubernetes' switch
      {"ovsdb-server", "ovsdb-server", "openvswitch"},
      {"aws-node", "aws-node", "aws-vpc-cni"},
      {"aws-k8s-agent", "aws-k8s-agent", "aws-vpc-cni"},  // what the aws-node container runs
      {"aws-network-policy-agent", "aws-network-policy-agent", "aws-vpc-cni"},
      {"kindnetd", "kindnetd", "kindnet"},
      {"flanneld", "flanneld", "flannel"},
  };
  return kPatterns;
}

namespace {

constexpr size_t kCommLength = 15;  // TASK_COMM_LEN - 1

std::string_view base_name(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

bool name_matches(std::string_view pattern, std::string_view name, bool comm) {
  if (name.empty()) return false;
  const bool prefix = !pattern.empty() && pattern.back() == '*';
  const std::string_view stem = prefix ? pattern.substr(0, pattern.size() - 1) : pattern;
  if (prefix ? name.substr(0, stem.size()) == stem : name == stem) return true;
  // comm holds the first 15 bytes of a longer name.
  return comm && name.size() == kCommLength && stem.size() > kCommLength && stem.substr(0, kCommLength) == name;
}

}  // namespace

std::optional<AgentMatch> match_agent(std::string_view exe, std::string_view comm, std::string_view argv0) {
  const std::string deleted = " (deleted)";  // an executable replaced on disk since it started
  if (exe.size() > deleted.size() && exe.substr(exe.size() - deleted.size()) == deleted) {
    exe.remove_suffix(deleted.size());
  }
  const std::pair<std::string_view, const char*> candidates[] = {
      {base_name(exe), "exe"}, {comm, "comm"}, {base_name(argv0), "cmdline"}};
  for (const auto& [name, how] : candidates) {
    for (const auto& p : agent_patterns()) {
      if (name_matches(p.name, name, std::string_view(how) == "comm")) {
        return AgentMatch{std::string(p.agent), std::string(p.dataplane), how};
      }
    }
  }
  return std::nullopt;
}

}  // namespace dpscope::proc
