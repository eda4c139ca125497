// Which processes the agents collector records (collectors/proc/agent_table.h).
#include <gtest/gtest.h>

#include "collectors/proc/agent_table.h"

namespace dpscope::proc {
namespace {

std::string agent_of(std::string_view exe, std::string_view comm, std::string_view argv0, std::string* how = nullptr) {
  auto m = match_agent(exe, comm, argv0);
  if (!m) return "";
  if (how) *how = m->matched_by;
  return m->agent + "/" + m->dataplane;
}

TEST(AgentTable, ByExecutable) {
  std::string how;
  EXPECT_EQ(agent_of("/usr/local/bin/kube-proxy", "kube-proxy", "/usr/local/bin/kube-proxy", &how), "kube-proxy/kube-proxy");
  EXPECT_EQ(how, "exe");
  EXPECT_EQ(agent_of("/usr/bin/cilium-agent", "cilium-agent", "cilium-agent"), "cilium-agent/cilium");
  EXPECT_EQ(agent_of("/usr/bin/cilium-operator-generic", "cilium-operator", "cilium-operator-generic"),
            "cilium-operator/cilium");
  EXPECT_EQ(agent_of("/usr/bin/calico-node", "calico-node", "calico-node"), "calico-node/calico");
  EXPECT_EQ(agent_of("/usr/bin/ovnkube", "ovnkube", "ovnkube"), "ovnkube/ovn-kubernetes");
  EXPECT_EQ(agent_of("/usr/sbin/ovs-vswitchd", "ovs-vswitchd", "ovs-vswitchd"), "ovs-vswitchd/openvswitch");
  EXPECT_EQ(agent_of("/bin/kindnetd", "kindnetd", "/bin/kindnetd"), "kindnetd/kindnet");
  // Replaced on disk since it started.
  EXPECT_EQ(agent_of("/usr/bin/flanneld (deleted)", "", ""), "flanneld/flannel");
}

TEST(AgentTable, ByCommWhenExecutableSaysNothing) {
  std::string how;
  // Run through a symlink: exe names the target, comm the name it was run as.
  EXPECT_EQ(agent_of("/opt/stub/dps-agent-stub", "flanneld", "/tmp/x/flanneld", &how), "flanneld/flannel");
  EXPECT_EQ(how, "comm");
  // comm is cut to 15 characters.
  EXPECT_EQ(agent_of("", "aws-network-pol", "", &how), "aws-network-policy-agent/aws-vpc-cni");
  EXPECT_EQ(how, "comm");
  EXPECT_EQ(agent_of("", "aws-network", ""), "");  // shorter than 15: not a cut name
}

TEST(AgentTable, ByCommandLine) {
  std::string how;
  EXPECT_EQ(agent_of("", "exe", "/usr/local/bin/kube-router", &how), "kube-router/kube-router");
  EXPECT_EQ(how, "cmdline");
}

TEST(AgentTable, OthersAreNotRecorded) {
  EXPECT_EQ(agent_of("/usr/bin/kubelet", "kubelet", "/usr/bin/kubelet"), "");
  EXPECT_EQ(agent_of("/usr/bin/containerd", "containerd", "containerd"), "");
  EXPECT_EQ(agent_of("", "kworker/0:1", ""), "");
  EXPECT_EQ(agent_of("/usr/bin/kube-proxy-wrapper", "kube-proxy-wrap", "kube-proxy-wrapper"), "");
}

}  // namespace
}  // namespace dpscope::proc
