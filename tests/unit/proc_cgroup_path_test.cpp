// The pod / container a cgroup path names, for the shapes kubelet makes
// (pkg/kubelet/cm: cgroupfs driver "pod<uid>/<id>", systemd driver
// "kubepods-<qos>-pod<uid with _>.slice/<runtime>-<id>.scope").
#include <gtest/gtest.h>

#include "collectors/proc/cgroup_path.h"

namespace dpscope::proc {
namespace {

const std::string kUid = "0c1f5f0a-3c8e-4c38-9f38-5cbb4a2b7d11";
const std::string kUidSystemd = "0c1f5f0a_3c8e_4c38_9f38_5cbb4a2b7d11";
const std::string kId = "4b7c2f1d9e8a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c";

void expect(const std::string& path, const std::string& uid, const std::string& id, const std::string& runtime,
            const std::string& qos) {
  SCOPED_TRACE(path);
  const KubeletCgroup k = parse_kubelet_cgroup(path);
  EXPECT_EQ(k.pod_uid, uid);
  EXPECT_EQ(k.container_id, id);
  EXPECT_EQ(k.container_runtime, runtime);
  EXPECT_EQ(k.qos_class, qos);
}

TEST(CgroupPath, CgroupfsDriver) {
  expect("/kubepods/burstable/pod" + kUid + "/" + kId, kUid, kId, "", "burstable");
  expect("/kubepods/besteffort/pod" + kUid + "/" + kId, kUid, kId, "", "besteffort");
  expect("/kubepods/pod" + kUid + "/" + kId, kUid, kId, "", "guaranteed");
  expect("/kubepods/burstable/pod" + kUid + "/crio-" + kId, kUid, kId, "crio", "burstable");
  // The pod's own cgroup (no container), and a prefix before kubepods (a test's dps-* directory).
  expect("/kubepods/burstable/pod" + kUid, kUid, "", "", "burstable");
  expect("/dps-agents-1-0/kubepods/burstable/pod" + kUid + "/" + kId, kUid, kId, "", "burstable");
}

TEST(CgroupPath, SystemdDriver) {
  expect("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + kUidSystemd + ".slice/cri-containerd-" +
             kId + ".scope",
         kUid, kId, "containerd", "burstable");
  expect("/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" + kUidSystemd + ".slice/crio-" + kId +
             ".scope",
         kUid, kId, "crio", "besteffort");
  expect("/kubepods.slice/kubepods-pod" + kUidSystemd + ".slice/docker-" + kId + ".scope", kUid, kId, "docker",
         "guaranteed");
  // kind nodes: kubelet's slices nested under kubelet.slice.
  expect("/kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-besteffort.slice/kubelet-kubepods-besteffort-pod" +
             kUidSystemd + ".slice/cri-containerd-" + kId + ".scope",
         kUid, kId, "containerd", "besteffort");
  expect("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + kUidSystemd + ".slice", kUid, "", "",
         "burstable");
}

TEST(CgroupPath, StaticPodUidIsAConfigHash) {
  // Static (mirror) pods' UID is the 32-hex-digit hash of their manifest.
  const std::string hash = "6c0b1b5c4f8e1b2a3c4d5e6f7a8b9c0d";
  expect("/kubepods/burstable/pod" + hash + "/" + kId, hash, kId, "", "burstable");
}

TEST(CgroupPath, NotKubeletsIsEmpty) {
  expect("/", "", "", "", "");
  expect("", "", "", "", "");
  expect("/system.slice/kube-proxy.service", "", "", "", "");
  expect("/user.slice/user-0.slice/session-1.scope", "", "", "", "");
  expect("/kubepods/burstable/podnot-a-uid/" + kId, "", "", "", "");
  expect("/other/pod" + kUid + "/" + kId, "", "", "", "");  // pod<uid> not under kubepods
  // A pod whose next segment is no container id: the pod alone.
  expect("/kubepods/burstable/pod" + kUid + "/init.scope", kUid, "", "", "burstable");
}

}  // namespace
}  // namespace dpscope::proc
