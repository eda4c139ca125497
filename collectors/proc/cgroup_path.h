// The pod and container a cgroup path names, when kubelet made it.
//
// kubelet's cgroupfs driver:  /kubepods/burstable/pod<uid>/<container id>
//                             /kubepods/pod<uid>/<container id>      (guaranteed)
// its systemd driver:         /kubepods.slice/kubepods-burstable.slice/
//                               kubepods-burstable-pod<uid with _ for ->.slice/
//                               cri-containerd-<id>.scope | docker-<id>.scope | crio-<id>.scope
// with any prefix before it (kind: /kubelet.slice/kubelet-kubepods.slice/...,
// a test's /dps-x/kubepods/...). The container part may be missing (the pod's
// own cgroup).
#pragma once

#include <string>
#include <string_view>

namespace dpscope::proc {

struct KubeletCgroup {
  std::string pod_uid;            // with dashes, as the API prints it ("" when the path names no pod)
  std::string container_id;       // "" when the path stops at the pod
  std::string container_runtime;  // "containerd" | "docker" | "crio" | "" (a bare id names none)
  std::string qos_class;          // "guaranteed" | "burstable" | "besteffort" ("" no pod)
};

KubeletCgroup parse_kubelet_cgroup(std::string_view path);

}  // namespace dpscope::proc
