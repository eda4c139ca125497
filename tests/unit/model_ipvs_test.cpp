// The ipvs section: `ipvsadm -Ln` as kube-proxy's own README shows it (real
// tool output, fixtures/upstream/ipvs), `ipvsadm-save -n` lines in each form
// ipvsadm 1.31 prints, `ip -o addr` of kube-ipvs0; its JSON form round-trips
// (also "not loaded"), bad input names its line, and a snapshot holding the
// section is written as v2.2.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "model/ipvs.h"
#include "model/json.h"
#include "model/snapshot.h"
#include "tests/support/process.h"
#include "util/error.h"

namespace dpscope::model {
namespace {

Ipvs readme_list() {
  const std::string path = test::source_path("fixtures/upstream/ipvs/kubernetes-readme-ipvsadm-ln.txt");
  return parse_ipvsadm_list(test::read_text(path), path);
}

TEST(ModelIpvs, ParsesKubeProxysReadmeListing) {
  const Ipvs s = readme_list();
  EXPECT_TRUE(s.collected);
  EXPECT_TRUE(s.loaded);
  EXPECT_EQ(s.version, "1.2.1");
  EXPECT_EQ(s.conn_table_size, 4096u);
  ASSERT_EQ(s.services.size(), 3u);
  // ipvsadm's order: by protocol, then address and port (numerically).
  const IpvsService& api = s.services[0];
  EXPECT_EQ(ipvs_service_key(api), "-t 10.0.0.1:443");
  EXPECT_EQ(api.family, "inet");
  EXPECT_EQ(api.scheduler, "rr");
  EXPECT_EQ(api.flags, std::vector<std::string>{"persistent"});
  EXPECT_EQ(api.persistence_timeout, 10800u);
  EXPECT_FALSE(api.persistence_netmask);
  ASSERT_EQ(api.destinations.size(), 1u);
  EXPECT_EQ(api.destinations[0].address, "192.168.0.1");
  EXPECT_EQ(api.destinations[0].port, 6443);
  EXPECT_EQ(api.destinations[0].forward, "masq");
  EXPECT_EQ(api.destinations[0].weight, 1u);
  EXPECT_EQ(api.destinations[0].active_conns, 1u);
  EXPECT_EQ(api.destinations[0].inactive_conns, 0u);
  std::set<std::string> keys;
  for (const auto& v : s.services) keys.insert(ipvs_service_key(v));
  EXPECT_EQ(keys, (std::set<std::string>{"-t 10.0.0.1:443", "-t 10.0.0.10:53", "-u 10.0.0.10:53"}));
  for (size_t i = 1; i < 3; ++i) {
    EXPECT_TRUE(s.services[i].flags.empty());
    ASSERT_EQ(s.services[i].destinations.size(), 1u);
    EXPECT_EQ(s.services[i].destinations[0].address, "172.17.0.2");
    EXPECT_EQ(s.services[i].destinations[0].port, 53);
  }
}

// The same kernel state as ipvsadm-save -n, ipvsadm -Ln and ip -o addr printed
// it on Debian's 6.1 kernel (fixtures/ipvs/debian-6.1, from tests/vm/ipvs.sh):
// the two listings are the same services, forwarding and weights, and each is
// what services.ipvsadm-rules asked for, after the kernel's own rewrites.
TEST(ModelIpvs, SaveAndListOfOneKernelStateAgree) {
  const std::string dir = test::source_path("fixtures/ipvs/debian-6.1/");
  const Ipvs saved = parse_ipvsadm_save(test::read_text(dir + "ipvsadm-save-n.txt"), "save");
  const Ipvs listed = parse_ipvsadm_list(test::read_text(dir + "ipvsadm-Ln.txt"), "list");
  ASSERT_EQ(saved.services.size(), 8u);
  ASSERT_EQ(listed.services.size(), saved.services.size());
  std::map<std::string, const IpvsService*> by_key;
  for (const auto& v : saved.services) by_key[ipvs_service_key(v) + " " + v.family] = &v;
  for (const auto& v : listed.services) {
    const std::string key = ipvs_service_key(v) + " " + v.family;
    SCOPED_TRACE(key);
    ASSERT_TRUE(by_key.count(key));
    const IpvsService& w = *by_key.at(key);
    EXPECT_EQ(v.scheduler, w.scheduler);
    EXPECT_EQ(v.flags, w.flags);
    EXPECT_EQ(v.persistence_timeout, w.persistence_timeout);
    EXPECT_EQ(v.persistence_netmask, w.persistence_netmask);
    ASSERT_EQ(v.destinations.size(), w.destinations.size());
    for (size_t i = 0; i < v.destinations.size(); ++i) {
      EXPECT_EQ(v.destinations[i].address, w.destinations[i].address);
      EXPECT_EQ(v.destinations[i].port, w.destinations[i].port);
      EXPECT_EQ(v.destinations[i].forward, w.destinations[i].forward);
      EXPECT_EQ(v.destinations[i].weight, w.destinations[i].weight);
    }
  }
  const IpvsService& sh = *by_key.at("-t 10.0.0.20:80 inet");
  EXPECT_EQ(sh.flags, (std::vector<std::string>{"sh-fallback", "sh-port"}));
  ASSERT_EQ(sh.destinations.size(), 2u);
  EXPECT_EQ(sh.destinations[1].forward, "tunnel");
  EXPECT_EQ(sh.destinations[1].tunnel_type, "ipip");
  EXPECT_EQ(sh.destinations[1].port, 80);  // asked :8080; a tunnel keeps the service's port
  const IpvsService& ops = *by_key.at("-f 8 -6 inet6");
  EXPECT_EQ(ops.flags, std::vector<std::string>{"one-packet"});
  EXPECT_TRUE(ops.destinations.empty());

  const auto addrs = parse_ip_addr(test::read_text(dir + "ip-o-addr.txt"), "addr");
  ASSERT_EQ(addrs.size(), 4u);
  EXPECT_EQ(addrs[3].address, "fd00:10:96::a");
  EXPECT_EQ(addrs[3].prefix_len, 128u);
  for (const auto& a : addrs) EXPECT_EQ(a.interface, "kube-ipvs0");
}

// The forms ipvsadm 1.31's print_service_entry(FMT_RULE) writes: -t/-u/--sctp-service
// ADDR:PORT or -f MARK, [-6] for an IPv6 fwmark service, -s, -p T [-M mask], --pe,
// -b flags, -o; real servers -r with -m/-g/-i, -w, --tun-type.
TEST(ModelIpvs, ParsesEachSaveForm) {
  const std::string text =
      "-A -t 10.96.0.1:443 -s rr -p 10800\n"
      "-a -t 10.96.0.1:443 -r 172.18.0.2:6443 -m -w 1\n"
      "-A -u 10.96.0.10:53 -s sh -b sh-fallback,sh-port\n"
      "-a -u 10.96.0.10:53 -r 10.244.0.3:53 -m -w 0\n"
      "-a -u 10.96.0.10:53 -r 10.244.0.2:53 -m -w 1\n"
      "-A -t [fd00:10:96::1]:443 -s wrr -p 60 -M 64\n"
      "-a -t [fd00:10:96::1]:443 -r [fd00:10:244::5]:6443 -i -w 3 --tun-type gue --tun-port 6080\n"
      "-A -f 7 -6 -s rr\n"
      "-a -f 7 -6 -r [fd00::9]:0 -g -w 1\n"
      "-A --sctp-service 10.96.0.20:9999 -s rr -o\n";
  const Ipvs s = parse_ipvsadm_save(text, "save.txt");
  ASSERT_EQ(s.services.size(), 5u);
  std::map<std::string, const IpvsService*> by_key;
  for (const auto& v : s.services) by_key[ipvs_service_key(v)] = &v;
  ASSERT_TRUE(by_key.count("-t 10.96.0.1:443"));
  EXPECT_EQ(by_key["-t 10.96.0.1:443"]->persistence_timeout, 10800u);
  const IpvsService& dns = *by_key.at("-u 10.96.0.10:53");
  EXPECT_EQ(dns.flags, (std::vector<std::string>{"sh-fallback", "sh-port"}));
  ASSERT_EQ(dns.destinations.size(), 2u);
  EXPECT_EQ(dns.destinations[0].address, "10.244.0.2");  // by address, numerically
  EXPECT_EQ(dns.destinations[1].weight, 0u);               // a terminating endpoint
  EXPECT_FALSE(dns.destinations[0].active_conns);          // ipvsadm-save has no counters
  const IpvsService* v6 = nullptr;
  const IpvsService* mark = nullptr;
  for (const auto& v : s.services) {
    if (v.fwmark) mark = &v;
    if (v.address && v.family == "inet6") v6 = &v;
  }
  ASSERT_TRUE(v6 && mark);
  EXPECT_EQ(*v6->address, "fd00:10:96::1");
  EXPECT_EQ(v6->persistence_netmask, "64");
  EXPECT_EQ(v6->destinations.at(0).forward, "tunnel");
  EXPECT_EQ(v6->destinations.at(0).tunnel_type, "gue");
  EXPECT_EQ(*mark->fwmark, 7u);
  EXPECT_EQ(mark->family, "inet6");
  EXPECT_EQ(mark->destinations.at(0).forward, "route");  // -g: route (or local: ipvsadm cannot tell)
  EXPECT_EQ(by_key.at("--sctp-service 10.96.0.20:9999")->flags, std::vector<std::string>{"one-packet"});
}

TEST(ModelIpvs, BadSaveInputNamesTheLine) {
  const std::vector<std::pair<std::string, size_t>> bad = {
      {"-A -t 10.96.0.1:443 -s rr\n-a -t 10.96.0.9:80 -r 1.2.3.4:80 -m -w 1\n", 2},  // no such service
      {"-A -x 10.96.0.1:443 -s rr\n", 1},
      {"-A -t 10.96.0.1 -s rr\n", 1},
      {"-A -t 10.96.0.1:443 -s rr\n-A -t 10.96.0.1:443 -s rr\n", 2},  // twice
      {"garbage\n", 1},
  };
  for (const auto& [text, line] : bad) {
    try {
      parse_ipvsadm_save(text, "save.txt");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const InputError& e) {
      EXPECT_EQ(e.line(), line) << text << " -> " << e.what();
      EXPECT_NE(std::string(e.what()).find("save.txt:" + std::to_string(line)), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(parse_ipvsadm_list("TCP  10.0.0.1:443 rr\n", "l.txt"), InputError);  // no header
}

TEST(ModelIpvs, ParsesDummyInterfaceAddresses) {
  const std::string text =
      "1: lo    inet 127.0.0.1/8 scope host lo\\       valid_lft forever preferred_lft forever\n"
      "5: kube-ipvs0    inet 10.96.0.1/32 scope global kube-ipvs0\\       valid_lft forever preferred_lft forever\n"
      "5: kube-ipvs0    inet 10.96.0.10/32 scope global kube-ipvs0\\       valid_lft forever preferred_lft forever\n"
      "5: kube-ipvs0    inet6 fd00:10:96::1/128 scope global \\       valid_lft forever preferred_lft forever\n";
  const auto a = parse_ip_addr(text, "addr.txt");
  ASSERT_EQ(a.size(), 3u);
  EXPECT_EQ(a[0].interface, "kube-ipvs0");
  EXPECT_EQ(a[0].address, "10.96.0.1");
  EXPECT_EQ(a[0].prefix_len, 32u);
  EXPECT_EQ(a[2].address, "fd00:10:96::1");
  EXPECT_EQ(a[2].prefix_len, 128u);
}

TEST(ModelIpvs, JsonRoundTripAndSchemaV2_2) {
  Snapshot snap;
  snap.ipvs = readme_list();
  snap.ipvs.interface_addresses = std::vector<IpvsInterfaceAddress>{{"kube-ipvs0", "10.0.0.1", 32}};
  auto j = to_json(snap);
  EXPECT_EQ(j["schema"], kSchemaV2_2);
  EXPECT_EQ(from_json(j, "x.json").ipvs, snap.ipvs);

  Snapshot none;
  none.ipvs.collected = true;
  none.ipvs.reason = "this kernel has no IPVS";
  none.ipvs.interface_addresses = std::vector<IpvsInterfaceAddress>{{"kube-ipvs0", "10.0.0.1", 32}};
  j = to_json(none);
  EXPECT_EQ(j["ipvs"]["loaded"], false);
  EXPECT_FALSE(j["ipvs"].contains("services"));  // not loaded is not "no services"
  EXPECT_EQ(j["ipvs"]["interface_addresses"].size(), 1u);
  EXPECT_EQ(from_json(j, "x.json").ipvs, none.ipvs);

  // Without the section a snapshot stays v2 and has no "ipvs" key.
  Snapshot plain;
  EXPECT_EQ(to_json(plain)["schema"], kSchema);
  EXPECT_FALSE(to_json(plain).contains("ipvs"));

  j = to_json(snap);
  j["ipvs"]["services"][0]["family"] = "ipx";
  EXPECT_THROW(from_json(j, "x.json"), std::exception);
}

}  // namespace
}  // namespace dpscope::model
