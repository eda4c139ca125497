#include "collectors/bpf/attach.h"

#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <fcntl.h>
#include <libmnl/libmnl.h>
#include <linux/bpf.h>
#include <linux/if_link.h>
#include <linux/pkt_cls.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "collectors/bpf/bpf.h"
#include "util/fd.h"
#include "util/netlink.h"
#include "util/netns.h"

namespace dpscope::bpf {
namespace {

using netlink::for_each_attr;
using netlink::for_each_nested;

// ---------------------------------------------------------------- rtnetlink

// Sends a dump request of `type` built by `fill` and runs `cb` on each reply; 0 or errno.
template <typename Fill>
int dump(netlink::Socket& rtnl, uint16_t type, Fill&& fill, mnl_cb_t cb, void* data) {
  char req[MNL_SOCKET_BUFFER_SIZE];
  nlmsghdr* nlh = mnl_nlmsg_put_header(req);
  nlh->nlmsg_type = type;
  nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  nlh->nlmsg_seq = rtnl.next_seq();
  fill(nlh);
  return rtnl.talk(nlh, [&](const nlmsghdr* m) { return cb(m, data); });
}

struct Interface {
  uint32_t ifindex = 0;
  std::string name;
  std::string kind;  // IFLA_INFO_KIND ("veth", "netkit", ...)
  uint8_t xdp_mode = 0;
  uint32_t xdp_prog = 0, xdp_drv = 0, xdp_skb = 0, xdp_hw = 0;
};

int link_cb(const nlmsghdr* nlh, void* data) {
  auto* out = static_cast<std::vector<Interface>*>(data);
  auto* ifm = static_cast<const ifinfomsg*>(mnl_nlmsg_get_payload(nlh));
  Interface itf;
  itf.ifindex = static_cast<uint32_t>(ifm->ifi_index);
  for_each_attr(nlh, sizeof(*ifm), [&](const nlattr* attr) {
    switch (mnl_attr_get_type(attr)) {
      case IFLA_IFNAME:
        if (mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) >= 0) itf.name = mnl_attr_get_str(attr);
        break;
      case IFLA_LINKINFO: {
        for_each_nested(attr, [&](const nlattr* nested) {
          if (mnl_attr_get_type(nested) == IFLA_INFO_KIND && mnl_attr_validate(nested, MNL_TYPE_STRING) >= 0) {
            itf.kind.assign(static_cast<const char*>(mnl_attr_get_payload(nested)),
                            strnlen(static_cast<const char*>(mnl_attr_get_payload(nested)),
                                    mnl_attr_get_payload_len(nested)));
          }
        });
        break;
      }
      case IFLA_XDP: {
        for_each_nested(attr, [&](const nlattr* nested) {
          const uint16_t t = mnl_attr_get_type(nested);
          if (t == IFLA_XDP_ATTACHED && mnl_attr_validate(nested, MNL_TYPE_U8) >= 0) {
            itf.xdp_mode = mnl_attr_get_u8(nested);
          } else if (mnl_attr_validate(nested, MNL_TYPE_U32) >= 0) {
            const uint32_t v = mnl_attr_get_u32(nested);
            if (t == IFLA_XDP_PROG_ID) itf.xdp_prog = v;
            if (t == IFLA_XDP_DRV_PROG_ID) itf.xdp_drv = v;
            if (t == IFLA_XDP_SKB_PROG_ID) itf.xdp_skb = v;
            if (t == IFLA_XDP_HW_PROG_ID) itf.xdp_hw = v;
          }
        });
        break;
      }
      default:
        break;
    }
  });
  out->push_back(std::move(itf));
  return MNL_CB_OK;
}

struct FilterDump {
  std::string interface;
  std::string direction;
  std::vector<model::BpfAttachment>* out;
};

int filter_cb(const nlmsghdr* nlh, void* data) {
  auto* d = static_cast<FilterDump*>(data);
  auto* tcm = static_cast<const tcmsg*>(mnl_nlmsg_get_payload(nlh));
  std::string kind;
  const nlattr* options = nullptr;
  for_each_attr(nlh, sizeof(*tcm), [&](const nlattr* attr) {
    if (mnl_attr_get_type(attr) == TCA_KIND && mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) >= 0) {
      kind = mnl_attr_get_str(attr);
    } else if (mnl_attr_get_type(attr) == TCA_OPTIONS) {
      options = attr;
    }
  });
  // The first reply per priority is the chain header, without options.
  if (kind != "bpf" || !options) return MNL_CB_OK;
  model::BpfAttachment a;
  a.kind = "tc";
  a.target = d->interface;
  a.direction = d->direction;
  a.priority = tcm->tcm_info >> 16;
  a.handle = tcm->tcm_handle;
  for_each_nested(options, [&](const nlattr* nested) {
    switch (mnl_attr_get_type(nested)) {
      case TCA_BPF_ID:
        if (mnl_attr_validate(nested, MNL_TYPE_U32) >= 0) a.prog_id = mnl_attr_get_u32(nested);
        break;
      case TCA_BPF_NAME:
        if (mnl_attr_validate(nested, MNL_TYPE_NUL_STRING) >= 0) a.prog_name = mnl_attr_get_str(nested);
        break;
      case TCA_BPF_FLAGS:
        if (mnl_attr_validate(nested, MNL_TYPE_U32) >= 0) {
          a.direct_action = mnl_attr_get_u32(nested) & TCA_BPF_FLAG_ACT_DIRECT;
        }
        break;
      default:
        break;
    }
  });
  d->out->push_back(std::move(a));
  return MNL_CB_OK;
}

// BPF_PROG_QUERY as kernels >= 6.6 lay it out (link_ids, revision are missing
// from the 6.1 header and from libbpf 1.1.2's bpf_prog_query_opts).
struct ProgQueryAttr {
  uint32_t target;  // target_fd / target_ifindex
  uint32_t attach_type;
  uint32_t query_flags;
  uint32_t attach_flags;
  uint64_t prog_ids;
  uint32_t count;
  uint32_t pad;
  uint64_t prog_attach_flags;
  uint64_t link_ids;
  uint64_t link_attach_flags;
  uint64_t revision;
};

// Returns 0 or errno; fills (prog id, link id or 0) pairs.
int query_ifindex(uint32_t ifindex, uint32_t attach_type, std::vector<std::pair<uint32_t, uint32_t>>& out) {
  std::vector<uint32_t> progs(64), links(64);
  for (;;) {
    ProgQueryAttr attr{};
    attr.target = ifindex;
    attr.attach_type = attach_type;
    attr.prog_ids = reinterpret_cast<uintptr_t>(progs.data());
    attr.link_ids = reinterpret_cast<uintptr_t>(links.data());
    attr.count = static_cast<uint32_t>(progs.size());
    if (syscall(__NR_bpf, BPF_PROG_QUERY, &attr, sizeof attr) != 0) {
      int err = errno;
      if (err == ENOSPC) {
        progs.resize(attr.count + 16);
        links.resize(attr.count + 16);
        continue;
      }
      return err;
    }
    for (uint32_t i = 0; i < attr.count && i < progs.size(); ++i) out.push_back({progs[i], links[i]});
    return 0;
  }
}

void read_interfaces(NetnsAttachments& r) {
  netlink::Socket rtnl(NETLINK_ROUTE);
  if (const int err = rtnl.open()) {
    r.unavailable.push_back({"ebpf.attachments.tc", "cannot open an rtnetlink socket", err, ""});
    return;
  }
  std::vector<Interface> interfaces;
  int err = dump(rtnl,
      RTM_GETLINK,
      [](nlmsghdr* nlh) {
        auto* ifm = static_cast<ifinfomsg*>(mnl_nlmsg_put_extra_header(nlh, sizeof(ifinfomsg)));
        ifm->ifi_family = AF_UNSPEC;
      },
      link_cb, &interfaces);
  if (err) {
    r.unavailable.push_back({"ebpf.attachments.tc", "RTM_GETLINK dump failed", err, ""});
    return;
  }
  bool tc_failed = false, tcx_unsupported = false;
  for (const auto& itf : interfaces) {
    r.interfaces[itf.ifindex] = itf.name;
    // XDP (IFLA_XDP): one program per mode.
    auto add_xdp = [&](uint32_t prog, const char* mode) {
      if (!prog) return;
      model::BpfAttachment a;
      a.kind = "xdp";
      a.target = itf.name;
      a.direction = mode;
      a.prog_id = prog;
      r.attachments.push_back(std::move(a));
    };
    switch (itf.xdp_mode) {
      case XDP_ATTACHED_DRV: add_xdp(itf.xdp_prog, "driver"); break;
      case XDP_ATTACHED_SKB: add_xdp(itf.xdp_prog, "generic"); break;
      case XDP_ATTACHED_HW: add_xdp(itf.xdp_prog, "offload"); break;
      case XDP_ATTACHED_MULTI:
        add_xdp(itf.xdp_drv, "driver");
        add_xdp(itf.xdp_skb, "generic");
        add_xdp(itf.xdp_hw, "offload");
        break;
      default: break;
    }
    // Legacy tc: clsact ingress / egress filters.
    for (auto [parent, direction] : {std::pair{TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_INGRESS), "ingress"},
                                     std::pair{TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_EGRESS), "egress"}}) {
      FilterDump d{itf.name, direction, &r.attachments};
      const uint32_t ifindex = itf.ifindex;
      const uint32_t tc_parent = parent;
      int e = dump(rtnl,
          RTM_GETTFILTER,
          [&](nlmsghdr* nlh) {
            auto* tcm = static_cast<tcmsg*>(mnl_nlmsg_put_extra_header(nlh, sizeof(tcmsg)));
            tcm->tcm_family = AF_UNSPEC;
            tcm->tcm_ifindex = static_cast<int>(ifindex);
            tcm->tcm_parent = tc_parent;
          },
          filter_cb, &d);
      if (e && e != ENOENT && e != EINVAL && !tc_failed) {
        tc_failed = true;
        r.unavailable.push_back({"ebpf.attachments.tc", "RTM_GETTFILTER dump on " + itf.name + " failed", e, ""});
      }
    }
    // tcx (kernel >= 6.6) and netkit (6.7) are invisible to RTM_GETTFILTER.
    struct Hook {
      uint32_t attach_type;
      const char* kind;
      const char* direction;
    };
    std::vector<Hook> hooks = {{46, "tcx", "ingress"}, {47, "tcx", "egress"}};
    if (itf.kind == "netkit") {
      hooks.push_back({54, "netkit", "primary"});
      hooks.push_back({55, "netkit", "peer"});
    }
    for (const auto& hook : hooks) {
      if (tcx_unsupported && std::string(hook.kind) == "tcx") continue;
      std::vector<std::pair<uint32_t, uint32_t>> found;
      int e = query_ifindex(itf.ifindex, hook.attach_type, found);
      if (e == EINVAL && std::string(hook.kind) == "tcx") {
        tcx_unsupported = true;  // kernel < 6.6: nothing can be attached this way
        continue;
      }
      if (e) continue;
      for (auto [prog, link] : found) {
        model::BpfAttachment a;
        a.kind = hook.kind;
        a.target = itf.name;
        a.direction = hook.direction;
        a.prog_id = prog;
        if (link) a.link_id = link;
        r.attachments.push_back(std::move(a));
      }
    }
  }
}

// Attach types BPF_PROG_QUERY answers for a cgroup (6.1 headers).
constexpr bpf_attach_type kCgroupTypes[] = {
    BPF_CGROUP_INET_INGRESS,      BPF_CGROUP_INET_EGRESS,       BPF_CGROUP_INET_SOCK_CREATE,
    BPF_CGROUP_SOCK_OPS,          BPF_CGROUP_DEVICE,            BPF_CGROUP_INET4_BIND,
    BPF_CGROUP_INET6_BIND,        BPF_CGROUP_INET4_CONNECT,     BPF_CGROUP_INET6_CONNECT,
    BPF_CGROUP_INET4_POST_BIND,   BPF_CGROUP_INET6_POST_BIND,   BPF_CGROUP_UDP4_SENDMSG,
    BPF_CGROUP_UDP6_SENDMSG,      BPF_CGROUP_SYSCTL,            BPF_CGROUP_UDP4_RECVMSG,
    BPF_CGROUP_UDP6_RECVMSG,      BPF_CGROUP_GETSOCKOPT,        BPF_CGROUP_SETSOCKOPT,
    BPF_CGROUP_INET4_GETPEERNAME, BPF_CGROUP_INET6_GETPEERNAME, BPF_CGROUP_INET4_GETSOCKNAME,
    BPF_CGROUP_INET6_GETSOCKNAME, BPF_CGROUP_INET_SOCK_RELEASE,
};

}  // namespace

NetnsAttachments collect_netns_attachments(const std::string& netns) {
  NetnsAttachments result;
  if (netns.empty()) {
    read_interfaces(result);
    return result;
  }
  const std::string path = netns_path(netns);
  UniqueFd nsfd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!nsfd) {
    int err = errno;
    result.unavailable.push_back({"ebpf.attachments.tc", "cannot open network namespace " + path, err,
                                  err == ENOENT ? "no such namespace (name under /run/netns, a path, or a PID)" : ""});
    return result;
  }
  if (const int err = run_in_namespace(nsfd, CLONE_NEWNET, [&] { read_interfaces(result); })) {
    result.unavailable.push_back({"ebpf.attachments.tc", netns_enter_failure(netns, err), err, kNetnsEnterHint});
  }
  return result;
}

void collect_cgroup_attachments(const std::string& cgroup_root, const std::vector<model::BpfLink>& links,
                                std::vector<model::BpfAttachment>& out, std::vector<model::Unavailable>& unavailable) {
  namespace fs = std::filesystem;
  std::string root = cgroup_root;
  if (root.empty()) {
    auto mounts = mounts_of_type("cgroup2");
    if (mounts.empty()) {
      unavailable.push_back({"ebpf.attachments.cgroup", "no cgroup2 mount: cgroup programs unknown", ENOENT,
                             "mount cgroup2 or pass the node's cgroup2 root"});
      return;
    }
    root = mounts.front();
  }
  std::vector<std::string> dirs = {root};
  std::error_code ec;
  for (fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec), end;
       !ec && it != end; it.increment(ec)) {
    std::error_code sec;
    if (it->is_directory(sec) && !it->is_symlink(sec)) dirs.push_back(it->path().string());
  }
  if (ec && dirs.size() == 1) {
    unavailable.push_back({"ebpf.attachments.cgroup", "cannot read cgroup2 root " + root, ec.value(), ""});
    return;
  }
  for (const auto& dir : dirs) {
    UniqueFd fd(open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!fd) continue;  // removed since the walk
    struct stat st {};
    fstat(fd.get(), &st);
    const uint64_t cgroup_id = st.st_ino;  // cgroup2 ids are kernfs inode numbers on 64-bit
    std::string rel = dir.substr(root.size());
    if (rel.empty()) rel = "/";
    for (auto type : kCgroupTypes) {
      std::vector<uint32_t> ids(16);
      uint32_t count = static_cast<uint32_t>(ids.size());
      uint32_t flags = 0;
      int rc = bpf_prog_query(fd.get(), type, 0, &flags, ids.data(), &count);
      if (rc != 0 && errno == ENOSPC) {
        ids.resize(count + 16);
        count = static_cast<uint32_t>(ids.size());
        rc = bpf_prog_query(fd.get(), type, 0, &flags, ids.data(), &count);
      }
      if (rc != 0) {
        int err = errno;
        if (err == EPERM) {
          unavailable.push_back({"ebpf.attachments.cgroup", "BPF_PROG_QUERY on " + dir + " failed", err,
                                 "EPERM on BPF_PROG_QUERY — needs CAP_NET_ADMIN: run as root"});
          return;
        }
        continue;  // EINVAL: attach type unknown to this kernel
      }
      const std::string type_name = attach_type_name(type);
      for (uint32_t i = 0; i < count && i < ids.size(); ++i) {
        model::BpfAttachment a;
        a.kind = "cgroup";
        a.target = rel;
        a.direction = type_name;
        a.prog_id = ids[i];
        for (const auto& l : links) {
          if (l.type == "cgroup" && l.cgroup_id == cgroup_id && l.prog_id == a.prog_id && l.attach_type == type_name) {
            a.link_id = l.id;
          }
        }
        out.push_back(std::move(a));
      }
    }
  }
}

}  // namespace dpscope::bpf
