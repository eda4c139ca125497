// The eBPF test node: a Cilium-like and a Calico-like datapath loaded from
// fixtures/bpf, pinned under a private bpffs, attached to veths in a dps-*
// netns (legacy tc clsact, tcx, XDP) and to a dps-* cgroup (bpf_link and
// BPF_PROG_ATTACH). Members are destroyed in reverse order: attachments first.
#pragma once

#include <bpf/libbpf.h>

#include <memory>

#include "tests/integration/bpf_fixture.h"

namespace dpscope::test::bpffix {

// A clsact qdisc with one filter per attach; destroyed (inside the netns) on destruction.
class TcHook {
 public:
  TcHook(const std::string& netns, const std::string& ifname) : netns_(netns) {
    in_netns(netns_, [&] {
      ifindex_ = static_cast<int>(if_nametoindex(ifname.c_str()));
      if (!ifindex_) throw std::runtime_error("no interface " + ifname);
      LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex_, .attach_point = BPF_TC_INGRESS);
      int err = bpf_tc_hook_create(&hook);
      if (err && err != -EEXIST) throw std::runtime_error("clsact on " + ifname + ": " + strerror(-err));
    });
  }
  ~TcHook() {
    try {
      in_netns(netns_, [&] {
        LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex_, .attach_point = static_cast<bpf_tc_attach_point>(BPF_TC_INGRESS | BPF_TC_EGRESS));
        bpf_tc_hook_destroy(&hook);
      });
    } catch (...) {
    }
  }
  TcHook(const TcHook&) = delete;
  TcHook& operator=(const TcHook&) = delete;
  void attach(int prog_fd, bool ingress, uint32_t priority) {
    in_netns(netns_, [&] {
      LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex_, .attach_point = ingress ? BPF_TC_INGRESS : BPF_TC_EGRESS);
      LIBBPF_OPTS(bpf_tc_opts, opts, .prog_fd = prog_fd, .handle = 1, .priority = priority);
      int err = bpf_tc_attach(&hook, &opts);
      if (err) throw std::runtime_error(std::string("bpf_tc_attach: ") + strerror(-err));
    });
  }
  int ifindex() const { return ifindex_; }

 private:
  std::string netns_;
  int ifindex_ = 0;
};

struct Scenario {
  Netns ns{"bpf"};
  BpffsDir bpffs{"bpf"};
  CgroupDir cgroup{"bpf"};
  std::string globals = bpffs.path() + "/tc/globals";
  BpfObject cilium{fixture_object("cilium_node"), globals};
  BpfObject calico{fixture_object("calico_node"), globals};
  std::unique_ptr<TcHook> lxc_hook, netdev_hook;
  std::vector<std::unique_ptr<Link>> links;
  std::vector<std::unique_ptr<LinkFd>> tcx;
  std::vector<std::unique_ptr<CgroupAttach>> cgroup_attach;
  uint32_t tcx_link_id = 0, xdp_link_id = 0, connect_link_id = 0;

  Scenario() {
    ns.sh("ip link add lxcdps0 type veth peer name dpsnet0 && ip link set lxcdps0 up && ip link set dpsnet0 up");
    // Legacy tc clsact filters, as Cilium uses on kernels without tcx.
    lxc_hook = std::make_unique<TcHook>(ns.name(), "lxcdps0");
    lxc_hook->attach(cilium.prog_fd("cil_from_container"), true, 1);
    netdev_hook = std::make_unique<TcHook>(ns.name(), "dpsnet0");
    netdev_hook->attach(cilium.prog_fd("cil_from_netdev"), true, 1);
    netdev_hook->attach(cilium.prog_fd("cil_to_netdev"), false, 1);
    // tcx (BPF_TCX_EGRESS = 47, absent from the 6.1 headers) and XDP links.
    in_netns(ns.name(), [&] {
      int lxc = static_cast<int>(if_nametoindex("lxcdps0"));
      int netdev = static_cast<int>(if_nametoindex("dpsnet0"));
      tcx.push_back(std::make_unique<LinkFd>(
          bpf_link_create(cilium.prog_fd("cil_to_container"), lxc, static_cast<bpf_attach_type>(47), nullptr)));
      tcx_link_id = tcx.back()->id();
      tcx.push_back(std::make_unique<LinkFd>(
          bpf_link_create(calico.prog_fd("cali_tc_preamble"), netdev, static_cast<bpf_attach_type>(46), nullptr)));
      links.push_back(std::make_unique<Link>(bpf_program__attach_xdp(cilium.prog("cil_xdp_entry"), netdev)));
      xdp_link_id = links.back()->id();
    });
    // Socket LB on the test cgroup: one bpf_link, one BPF_PROG_ATTACH.
    links.push_back(std::make_unique<Link>(bpf_program__attach_cgroup(cilium.prog("cil_sock4_connect"), cgroup.fd())));
    connect_link_id = links.back()->id();
    cgroup_attach.push_back(std::make_unique<CgroupAttach>(cgroup.fd(), cilium.prog_fd("cil_sock4_sendmsg"),
                                                           BPF_CGROUP_UDP4_SENDMSG));
    links.push_back(std::make_unique<Link>(bpf_program__attach_cgroup(calico.prog("calico_connect_v4"), cgroup.fd())));
    // A tail call in the prog array, and a pinned program.
    uint32_t slot = 1;
    int tail = cilium.prog_fd("tail_handle_ipv4");
    CiliumLbWriter::put(cilium.map_fd("cilium_calls_00042"), &slot, &tail);
    cilium.pin_prog("cil_from_netdev", bpffs.path() + "/cil_from_netdev");
  }

  // Destroy attachments before objects, cgroup, bpffs and netns.
  ~Scenario() {
    cgroup_attach.clear();
    links.clear();
    tcx.clear();
    netdev_hook.reset();
    lxc_hook.reset();
  }

  std::vector<uint32_t> prog_ids() const {
    auto a = cilium.prog_ids(), b = calico.prog_ids();
    a.insert(a.end(), b.begin(), b.end());
    return a;
  }
  std::vector<uint32_t> map_ids() const {
    auto a = cilium.map_ids(), b = calico.map_ids();
    a.insert(a.end(), b.begin(), b.end());
    return a;
  }
  CiliumLbWriter cilium_writer() const {
    CiliumLbWriter w;
    w.services4 = cilium.map_fd("cilium_lb4_services_v2");
    w.backends4 = cilium.map_fd("cilium_lb4_backends_v3");
    w.services6 = cilium.map_fd("cilium_lb6_services_v2");
    w.backends6 = cilium.map_fd("cilium_lb6_backends_v3");
    return w;
  }
  CalicoNatWriter calico_writer() const {
    CalicoNatWriter w;
    w.frontends_fd = calico.map_fd("cali_v4_nat_fe3");
    w.backends_fd = calico.map_fd("cali_v4_nat_be");
    return w;
  }
};

// One ClusterIP (10.96.77.7:80, two backends) in Cilium's LB map and in
// iptables-nft's KUBE-SERVICES dispatch, as kube-proxy programs it: the
// double programming a kube-proxy-free gate must see.
inline void load_double_programmed_cluster_ip(Scenario& sc) {
  auto writer = sc.cilium_writer();
  const auto ids = writer.add_backends(false, 2, 0, 8080);
  writer.add_frontend(false, "10.96.77.7", 80, 6, 0, 0, 0, ids, 2, "ClusterIP");
  sc.ns.sh("iptables-nft-restore",
           "*nat\n:PREROUTING ACCEPT [0:0]\n:KUBE-SERVICES - [0:0]\n:KUBE-SVC-X - [0:0]\n"
           "-A PREROUTING -j KUBE-SERVICES\n"
           "-A KUBE-SERVICES -d 10.96.77.7/32 -p tcp -m tcp --dport 80 -j KUBE-SVC-X\n"
           "-A KUBE-SVC-X -p tcp -j DNAT --to-destination 10.244.1.5:8080\n"
           "COMMIT\n");
}

}  // namespace dpscope::test::bpffix
