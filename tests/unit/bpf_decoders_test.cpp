// Cilium / Calico service-map decoders on synthetic map contents (no kernel).
#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <cstring>

#include "decoders/service_maps.h"

namespace dpscope::test {
namespace {

using bpf::DumpedMap;

// Decoders keep map order; the snapshot's canonical order is model::canonicalize's.
std::vector<model::LbServices> canonical(std::vector<model::LbServices> services) {
  model::Snapshot snap;
  snap.ebpf.services = std::move(services);
  model::canonicalize(snap);
  return snap.ebpf.services;
}

DumpedMap make_map(const std::string& name, const std::string& type, uint32_t key, uint32_t value,
                   const std::string& pin) {
  DumpedMap m;
  m.meta.name = name.substr(0, 15);
  m.meta.type = type;
  m.meta.key_size = key;
  m.meta.value_size = value;
  m.meta.max_entries = 65536;
  if (!pin.empty()) m.meta.pinned = {pin};
  m.entries.key_size = key;
  m.entries.value_stride = value;
  m.entries.complete = true;
  return m;
}

void add_entry(DumpedMap& m, const std::vector<uint8_t>& key, const std::vector<uint8_t>& value) {
  ASSERT_EQ(key.size(), m.entries.key_size);
  ASSERT_EQ(value.size(), m.entries.value_stride);
  m.entries.keys.insert(m.entries.keys.end(), key.begin(), key.end());
  m.entries.values.insert(m.entries.values.end(), value.begin(), value.end());
  ++m.entries.count;
}

// lb4_key: BE addr, BE port, host slot, proto, scope, pad.
std::vector<uint8_t> lb4_key(const char* addr, uint16_t port, uint16_t slot, uint8_t proto, uint8_t scope) {
  std::vector<uint8_t> k(12);
  inet_pton(AF_INET, addr, k.data());
  uint16_t p = htons(port);
  memcpy(&k[4], &p, 2);
  memcpy(&k[6], &slot, 2);
  k[8] = proto;
  k[9] = scope;
  return k;
}

// lb4_service: u32 backend_id, u16 count, BE16 rev_nat, flags, flags2, u16 qcount.
std::vector<uint8_t> lb_service(uint32_t backend, uint16_t count, uint16_t revnat, uint8_t flags, uint8_t flags2,
                                uint16_t qcount) {
  std::vector<uint8_t> v(12);
  memcpy(&v[0], &backend, 4);
  memcpy(&v[4], &count, 2);
  uint16_t r = htons(revnat);
  memcpy(&v[6], &r, 2);
  v[8] = flags;
  v[9] = flags2;
  memcpy(&v[10], &qcount, 2);
  return v;
}

const std::string kGlobals = "/sys/fs/bpf/tc/globals/";

TEST(CiliumLb, DecodesFrontendsBackendsWildcardsAndSurrogates) {
  auto svc = make_map("cilium_lb4_services_v2", "hash", 12, 12, kGlobals + "cilium_lb4_services_v2");
  auto be = make_map("cilium_lb4_backends_v3", "hash", 4, 12, kGlobals + "cilium_lb4_backends_v3");
  // ClusterIP 10.96.0.10:53/udp, rev_nat 7: one active + one terminating backend.
  add_entry(svc, lb4_key("10.96.0.10", 53, 0, 17, 0), lb_service(0, 1, 7, 0x00, 0, 1));
  add_entry(svc, lb4_key("10.96.0.10", 53, 1, 17, 0), lb_service(1, 0, 7, 0x00, 0, 0));
  add_entry(svc, lb4_key("10.96.0.10", 53, 2, 17, 0), lb_service(2, 0, 7, 0x00, 0, 0));
  // NodePort surrogate 0.0.0.0:30080/tcp, internal scope, rev_nat 0x0102 (tests ntohs).
  add_entry(svc, lb4_key("0.0.0.0", 30080, 0, 6, 1), lb_service(0, 1, 0x0102, 0x02, 0x20, 0));
  add_entry(svc, lb4_key("0.0.0.0", 30080, 1, 6, 1), lb_service(1, 0, 0x0102, 0x02, 0x20, 0));
  // LoadBalancer / ExternalIP / HostPort / LocalRedirect, no backends.
  add_entry(svc, lb4_key("172.18.0.5", 443, 0, 6, 0), lb_service(0, 0, 9, 0x60, 0, 0));
  add_entry(svc, lb4_key("203.0.113.1", 80, 0, 132, 0), lb_service(0, 0, 10, 0x41, 0, 0));
  add_entry(svc, lb4_key("192.168.1.1", 8080, 0, 6, 0), lb_service(0, 0, 11, 0x08, 0, 0));
  add_entry(svc, lb4_key("169.254.1.1", 53, 0, 17, 0), lb_service(0, 0, 12, 0x00, 0x01, 0));
  // LB-IPAM wildcard.
  add_entry(svc, lb4_key("172.18.0.5", 0, 0, 0, 0), lb_service(0, 0, 0, 0x20, 0, 0));
  std::vector<uint8_t> b1(12), b2(12);
  inet_pton(AF_INET, "10.0.1.1", b1.data());
  inet_pton(AF_INET, "10.0.1.2", b2.data());
  uint16_t port = htons(5353);
  memcpy(&b1[4], &port, 2);
  memcpy(&b2[4], &port, 2);
  b1[6] = b2[6] = 17;
  b2[7] = 1;  // terminating
  uint32_t id1 = 1, id2 = 2;
  add_entry(be, std::vector<uint8_t>(reinterpret_cast<uint8_t*>(&id1), reinterpret_cast<uint8_t*>(&id1) + 4), b1);
  add_entry(be, std::vector<uint8_t>(reinterpret_cast<uint8_t*>(&id2), reinterpret_cast<uint8_t*>(&id2) + 4), b2);

  ASSERT_TRUE(bpf::cilium::wants(svc.meta));
  auto out = canonical(bpf::cilium::decode({svc, be}));
  ASSERT_EQ(out.size(), 1u);
  const auto& s = out[0];
  EXPECT_TRUE(s.decoded) << s.note;
  EXPECT_EQ(s.note, "");
  EXPECT_EQ(s.wildcard_skipped, 1u);
  ASSERT_EQ(s.frontends.size(), 6u);
  // Sorted by (address, port, protocol, scope).
  // Each frontend names the backend in each of its slots (slot 1, 2 -> backend 1, 2).
  EXPECT_EQ(s.frontends[0], (model::LbFrontend{"0.0.0.0", 30080, "tcp", "NodePort", "internal", 1, 0x0102, true, {1}}));
  EXPECT_EQ(s.frontends[1], (model::LbFrontend{"10.96.0.10", 53, "udp", "ClusterIP", "external", 2, 7, false, {1, 2}}));
  EXPECT_TRUE(s.backends_linked);
  EXPECT_EQ(s.frontends[2].type, "LocalRedirect");
  EXPECT_EQ(s.frontends[3], (model::LbFrontend{"172.18.0.5", 443, "tcp", "LoadBalancer", "external", 0, 9, false, {}}));
  EXPECT_EQ(s.frontends[4].type, "HostPort");
  EXPECT_EQ(s.frontends[5], (model::LbFrontend{"203.0.113.1", 80, "sctp", "ExternalIP", "external", 0, 10, false, {}}));
  ASSERT_EQ(s.backends.size(), 2u);
  EXPECT_EQ(s.backends[0], (model::LbBackend{1, "10.0.1.1", 5353, "udp", "active"}));
  EXPECT_EQ(s.backends[1], (model::LbBackend{2, "10.0.1.2", 5353, "udp", "terminating"}));
}

TEST(CiliumLb, RefusesSizesItDoesNotKnow) {
  auto svc = make_map("cilium_lb4_services_v2", "hash", 16, 12, kGlobals + "cilium_lb4_services_v2");
  add_entry(svc, std::vector<uint8_t>(16), std::vector<uint8_t>(12));
  auto out = bpf::cilium::decode({svc});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_FALSE(out[0].decoded);
  EXPECT_TRUE(out[0].frontends.empty());
  EXPECT_NE(out[0].note.find("Cilium 1.16-1.20"), std::string::npos) << out[0].note;
  EXPECT_NE(out[0].note.find("16/12"), std::string::npos) << out[0].note;
}

TEST(CiliumLb, RefusesIncompleteReads) {
  auto svc = make_map("cilium_lb4_services_v2", "hash", 12, 12, "");
  svc.entries.complete = false;
  svc.entries.note = "not counted: time budget for reading maps used up";
  auto out = bpf::cilium::decode({svc});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_FALSE(out[0].decoded);
  EXPECT_NE(out[0].note.find("time budget"), std::string::npos);
}

TEST(CiliumLb, IdentifiesMapsByCutNameTypeAndSize) {
  // Unpinned: the kernel's 15-character name plus type and sizes.
  EXPECT_TRUE(bpf::cilium::wants(make_map("cilium_lb4_serv", "hash", 12, 12, "").meta));
  EXPECT_TRUE(bpf::cilium::wants(make_map("cilium_lb4_reve", "hash", 2, 6, "").meta));
  EXPECT_FALSE(bpf::cilium::wants(make_map("cilium_lb4_reve", "lru_hash", 16, 8, "").meta));  // reverse_sk
  // Pinned: the pin name decides.
  EXPECT_FALSE(bpf::cilium::wants(make_map("cilium_lb4_reve", "lru_hash", 16, 8, kGlobals + "cilium_lb4_reverse_sk").meta));
  EXPECT_FALSE(bpf::cilium::wants(make_map("cilium_lb4_serv", "hash", 12, 12, kGlobals + "cilium_lb4_services").meta));
  EXPECT_FALSE(bpf::cilium::wants(make_map("cilium_ct4_glob", "lru_hash", 14, 56, "").meta));
  // Two pin directories are two Cilium instances.
  auto a = make_map("cilium_lb4_services_v2", "hash", 12, 12, "/a/tc/globals/cilium_lb4_services_v2");
  auto b = make_map("cilium_lb4_services_v2", "hash", 12, 12, "/b/tc/globals/cilium_lb4_services_v2");
  EXPECT_EQ(bpf::cilium::decode({a, b}).size(), 2u);
  // Two candidates for one role in one group: refused, not guessed.
  auto c = make_map("cilium_lb4_serv", "hash", 12, 12, "");
  auto d = make_map("cilium_lb4_serv", "hash", 12, 12, "");
  d.meta.id = 9;
  auto both = bpf::cilium::decode({c, d});
  ASSERT_EQ(both.size(), 1u);
  EXPECT_FALSE(both[0].decoded);
  // ... except a backends_v2 left next to backends_v3 after an upgrade: v3 is what the datapath reads.
  auto v2 = make_map("cilium_lb4_backends_v2", "hash", 4, 12, kGlobals + "cilium_lb4_backends_v2");
  auto v3 = make_map("cilium_lb4_backends_v3", "hash", 4, 12, kGlobals + "cilium_lb4_backends_v3");
  std::vector<uint8_t> backend(12);
  uint32_t id = 5;
  add_entry(v3, std::vector<uint8_t>(reinterpret_cast<uint8_t*>(&id), reinterpret_cast<uint8_t*>(&id) + 4), backend);
  for (const auto& order : {std::vector<DumpedMap>{v2, v3}, std::vector<DumpedMap>{v3, v2}}) {
    auto upgraded = bpf::cilium::decode(order);
    ASSERT_EQ(upgraded.size(), 1u);
    EXPECT_TRUE(upgraded[0].decoded) << upgraded[0].note;
    ASSERT_EQ(upgraded[0].backends.size(), 1u);
    EXPECT_EQ(upgraded[0].backends[0].id, 5u);
  }
}

std::vector<uint8_t> calico_key(uint32_t prefixlen, const char* addr, uint16_t port, uint8_t proto, const char* src) {
  std::vector<uint8_t> k(16);
  memcpy(&k[0], &prefixlen, 4);
  inet_pton(AF_INET, addr, &k[4]);
  memcpy(&k[8], &port, 2);
  k[10] = proto;
  inet_pton(AF_INET, src, &k[11]);
  return k;
}

std::vector<uint8_t> calico_value(uint32_t id, uint32_t count) {
  std::vector<uint8_t> v(20);
  memcpy(&v[0], &id, 4);
  memcpy(&v[4], &count, 4);
  return v;
}

TEST(CalicoNat, DecodesFrontendsCollapsingSourceRanges) {
  auto fe = make_map("cali_v4_nat_fe3", "lpm_trie", 16, 20, kGlobals + "cali_v4_nat_fe3");
  auto be = make_map("cali_v4_nat_be", "hash", 8, 8, kGlobals + "cali_v4_nat_be");
  add_entry(fe, calico_key(56, "10.96.0.1", 443, 6, "0.0.0.0"), calico_value(1, 2));
  add_entry(fe, calico_key(80, "10.96.0.1", 443, 6, "192.0.2.0"), calico_value(1, 2));
  add_entry(fe, calico_key(56, "255.255.255.255", 30080, 6, "0.0.0.0"), calico_value(2, 1));
  add_entry(fe, calico_key(56, "10.96.0.2", 53, 17, "0.0.0.0"), calico_value(3, 0xffffffff));
  for (uint32_t ord = 0; ord < 2; ++ord) {
    std::vector<uint8_t> k(8), v(8);
    uint32_t id = 1;
    memcpy(&k[0], &id, 4);
    memcpy(&k[4], &ord, 4);
    inet_pton(AF_INET, ord ? "10.1.0.2" : "10.1.0.1", &v[0]);
    uint16_t port = 6443;
    memcpy(&v[4], &port, 2);
    add_entry(be, k, v);
  }
  auto out = canonical(bpf::calico::decode({fe, be}));
  ASSERT_EQ(out.size(), 1u);
  const auto& s = out[0];
  EXPECT_TRUE(s.decoded) << s.note;
  ASSERT_EQ(s.frontends.size(), 3u);
  EXPECT_EQ(s.frontends[0], (model::LbFrontend{"10.96.0.1", 443, "tcp", "", "", 2, 1, false, {}}));
  EXPECT_EQ(s.frontends[1], (model::LbFrontend{"10.96.0.2", 53, "udp", "", "", 0, 3, false, {}}));  // blackhole
  EXPECT_EQ(s.frontends[2], (model::LbFrontend{"255.255.255.255", 30080, "tcp", "NodePort", "", 1, 2, true, {}}));
  ASSERT_EQ(s.backends.size(), 2u);
  EXPECT_EQ(s.backends[0], (model::LbBackend{1, "10.1.0.1", 6443, "tcp", ""}));
}

TEST(CalicoNat, RefusesSizesItDoesNotKnow) {
  auto fe = make_map("cali_v4_nat_fe2", "lpm_trie", 16, 16, kGlobals + "cali_v4_nat_fe2");
  auto out = bpf::calico::decode({fe});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_FALSE(out[0].decoded);
  EXPECT_NE(out[0].note.find("Calico"), std::string::npos);
}

}  // namespace
}  // namespace dpscope::test
