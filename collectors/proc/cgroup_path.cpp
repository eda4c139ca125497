#include "collectors/proc/cgroup_path.h"

#include <vector>

namespace dpscope::proc {

namespace {

bool ends_with(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}
bool starts_with(std::string_view s, std::string_view head) { return s.substr(0, head.size()) == head; }

bool is_hex(std::string_view s) {
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return !s.empty();
}

// A pod UID as kubelet writes it: 36 characters with dashes (or underscores
// in systemd unit names), or 32 hex digits (a static pod's config hash).
std::string pod_uid(std::string_view s) {
  std::string uid(s);
  for (auto& c : uid) {
    if (c == '_') c = '-';
  }
  if (uid.size() == 32 && is_hex(uid)) return uid;
  if (uid.size() != 36) return {};
  for (size_t i = 0; i < uid.size(); ++i) {
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? uid[i] != '-' : !is_hex(std::string_view(&uid[i], 1))) return {};
  }
  return uid;
}

// "cri-containerd-<id>.scope", "docker-<id>.scope", "crio-<id>.scope", "crio-<id>", "<id>".
void container_of(std::string_view s, KubeletCgroup& out) {
  if (ends_with(s, ".scope")) s.remove_suffix(6);
  static const std::pair<std::string_view, const char*> kPrefixes[] = {
      {"cri-containerd-", "containerd"}, {"docker-", "docker"}, {"crio-conmon-", "crio"}, {"crio-", "crio"}};
  std::string runtime;
  for (const auto& [prefix, name] : kPrefixes) {
    if (starts_with(s, prefix)) {
      s.remove_prefix(prefix.size());
      runtime = name;
      break;
    }
  }
  if (s.size() < 12 || !is_hex(s)) return;
  out.container_id = std::string(s);
  out.container_runtime = runtime;
}

}  // namespace

KubeletCgroup parse_kubelet_cgroup(std::string_view path) {
  std::vector<std::string_view> parts;
  for (size_t at = 0; at <= path.size();) {
    size_t slash = path.find('/', at);
    if (slash == std::string_view::npos) slash = path.size();
    if (slash > at) parts.push_back(path.substr(at, slash - at));
    at = slash + 1;
  }
  for (size_t i = 0; i < parts.size(); ++i) {
    std::string_view s = parts[i];
    KubeletCgroup out;
    if (ends_with(s, ".slice")) {
      // systemd driver: [prefix-]kubepods[-burstable|-besteffort]-pod<uid>.slice
      s.remove_suffix(6);
      const size_t kube = s.find("kubepods-");
      const size_t pod = s.rfind("-pod");
      if (kube == std::string_view::npos || pod == std::string_view::npos || pod < kube) continue;
      out.pod_uid = pod_uid(s.substr(pod + 4));
      const std::string_view qos = s.substr(kube + 9, pod + 1 - (kube + 9));
      out.qos_class = qos == "burstable-" ? "burstable" : qos == "besteffort-" ? "besteffort" : qos.empty() ? "guaranteed" : "";
    } else if (starts_with(s, "pod") && i > 0) {
      // cgroupfs driver: .../kubepods[/burstable|/besteffort]/pod<uid>
      const std::string_view parent = parts[i - 1];
      const bool under_qos = (parent == "burstable" || parent == "besteffort") && i > 1 && parts[i - 2] == "kubepods";
      if (parent != "kubepods" && !under_qos) continue;
      out.pod_uid = pod_uid(s.substr(3));
      out.qos_class = under_qos ? std::string(parent) : "guaranteed";
    } else {
      continue;
    }
    if (out.pod_uid.empty() || out.qos_class.empty()) continue;
    if (i + 1 < parts.size()) container_of(parts[i + 1], out);
    return out;
  }
  return {};
}

}  // namespace dpscope::proc
