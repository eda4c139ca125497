#include <gtest/gtest.h>

#include "model/json.h"
#include "model/snapshot.h"
#include "model/snapshot_writer.h"

#include <cstdio>
#include <cstdlib>
#include "util/error.h"

namespace dpscope::model {
namespace {

Snapshot sample() {
  Snapshot s;
  s.node = {"worker-1", "6.1.0", "import", "import", "2026-11-29T00:00:00Z", "0.1.0", {"a.txt"}};
  s.netfilter.collected = true;
  s.netfilter.collection.nft_generation = 42;
  s.netfilter.collection.nft_retries = 1;
  Table nat{Backend::IptablesNft, "ip", "nat", {}, {}};
  Chain pre{"PREROUTING", BaseChain{"prerouting", "nat", -100, "ACCEPT"}, Counters{1, 2}, 1, true, {}};
  Rule jump;
  jump.position = 1;
  jump.match.comment = "kubernetes service portals";
  jump.match.modules = {"comment"};
  jump.verdict_kind = "jump";
  jump.target = "KUBE-SERVICES";
  pre.rules.push_back(jump);
  Chain svcs{"KUBE-SERVICES", std::nullopt, std::nullopt, 1, true, {}};
  Rule svc;
  svc.position = 1;
  svc.match.destination = Prefix{"10.96.0.1/32", false};
  svc.match.source = Prefix{"10.0.0.0/8", true};
  svc.match.protocol = "tcp";
  svc.match.dport = "443";
  svc.match.comment = "default/kubernetes:https cluster IP \"quoted\"";
  svc.verdict_kind = "jump";
  svc.target = "KUBE-SVC-NPX46M4PTMTKRN6Y";
  svc.counters = Counters{7, 420};
  svcs.rules.push_back(svc);
  nat.chains = {svcs, pre};
  Table kp{Backend::Nftables, "ip", "kube-proxy", {}, {}};
  NftSet m;
  m.name = "service-ips";
  m.is_map = true;
  m.key_type = {"ipv4_addr", "inet_proto", "inet_service"};
  m.data_type = "verdict";
  m.elements_recorded = true;
  m.elements = {{"172.30.0.41 . tcp . 80", "goto service-ULMVA6XW-ns1/svc1/tcp/p80", "ns1/svc1:p80"}};
  m.element_count = 1;
  kp.sets.push_back(m);
  s.netfilter.tables = {kp, nat};
  s.ebpf.collected = true;
  s.ebpf.maps.push_back({7, "hash", "cilium_lb4_serv", 12, 12, 65536, 1, 1049472, 0, {"/sys/fs/bpf/tc/globals/cilium_lb4_services_v2"}, 3, ""});
  s.ebpf.programs.push_back({5, "sched_cls", "cil_from_container", "0123456789abcdef", "2026-11-29T00:00:00Z", 100, 80, 4096, {7}, 0, std::nullopt, std::nullopt, {}});
  LbServices lb;
  lb.dataplane = "cilium";
  lb.backends_linked = true;
  lb.frontends.push_back({"10.96.0.10", 53, "udp", "ClusterIP", "external", 2, 3, false, {1, 0}});  // slot 2 missing
  lb.backends.push_back({1, "10.244.1.2", 53, "udp", "active"});
  s.ebpf.services.push_back(lb);
  s.unavailable.push_back({"ebpf.attachments.tc", "RTM_GETTFILTER failed", 1, "needs CAP_NET_ADMIN"});
  canonicalize(s);
  return s;
}

TEST(ModelJson, RoundTripIsIdentity) {
  Snapshot s = sample();
  std::string text = to_json(s).dump(1);
  Snapshot back = from_json_text(text, "mem");
  EXPECT_EQ(back, s);
  EXPECT_EQ(to_json(back).dump(1), text);
}

TEST(ModelJson, CanonicalOrderPutsBaseChainsFirstAndTablesByBackend) {
  Snapshot s = sample();
  ASSERT_EQ(s.netfilter.tables.size(), 2u);
  EXPECT_EQ(s.netfilter.tables[0].backend, Backend::IptablesNft);
  EXPECT_EQ(s.netfilter.tables[0].chains[0].name, "PREROUTING");
  EXPECT_EQ(s.netfilter.tables[1].name, "kube-proxy");
}

TEST(ModelJson, RejectsUnknownSchema) {
  try {
    from_json_text(R"({"schema": "something/v1"})", "x.json");
    FAIL() << "accepted an unknown schema";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("x.json: /schema: unknown schema"), std::string::npos) << e.what();
  }
}

TEST(ModelJson, RejectsOtherMajorVersion) {
  try {
    from_json_text(R"({"schema": "dpscope.snapshot/v3"})", "x.json");
    FAIL() << "accepted v3";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("unsupported schema version"), std::string::npos) << e.what();
  }
}

TEST(ModelJson, InvalidJsonNamesTheLineAndColumn) {
  try {
    from_json_text("{\n \"schema\": \"dpscope.snapshot/v1\",\n oops\n}", "bad.json");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.line(), 3u) << e.what();
    EXPECT_EQ(e.column(), 2u) << e.what();  // the "o" of " oops"
    EXPECT_NE(std::string(e.what()).find("bad.json:3:2: invalid JSON"), std::string::npos) << e.what();
  }
}

TEST(ModelJson, WrongTypeNamesThePointer) {
  try {
    from_json_text(R"({"schema":"dpscope.snapshot/v1","netfilter":{"tables":[{"backend":"nftables","family":"ip","name":7}]}})",
                   "t.json");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("/netfilter/tables/0/name: expected a string"), std::string::npos) << e.what();
  }
}

TEST(ModelJson, RuleCountMustMatchRecordedRules) {
  EXPECT_THROW(from_json_text(R"({"schema":"dpscope.snapshot/v1","netfilter":{"tables":[{"backend":"nftables","family":"ip","name":"t",
    "chains":[{"name":"c","rule_count":3,"rules":[]}]}]}})", "t.json"), InputError);
}

TEST(ModelJson, UnknownBackendIsAnError) {
  EXPECT_THROW(from_json_text(R"({"schema":"dpscope.snapshot/v1","netfilter":{"tables":[{"backend":"ipvs","family":"ip","name":"t"}]}})", "t.json"),
               InputError);
}

}  // namespace
}  // namespace dpscope::model

namespace dpscope::model {
namespace {

// v2 added Rule::text: written by the streaming writer, read back by both
// loaders; a v1 file still loads, its rules without text.
TEST(ModelJson, RuleTextV2RoundTripsAndV1LoadsWithoutIt) {
  Snapshot s;
  s.netfilter.collected = true;
  Table t;
  t.backend = Backend::IptablesLegacy;
  t.family = "ip";
  t.name = "filter";
  Chain c;
  c.name = "INPUT";
  c.base = BaseChain{"input", "filter", 0, "ACCEPT"};
  Rule r;
  r.position = 1;
  r.verdict_kind = "verdict";
  r.target = "DROP";
  r.text = "-A INPUT -m comment --comment \"a \\\"b\\\"\" -j DROP";
  c.rules.push_back(r);
  c.rule_count = 1;
  t.chains.push_back(c);
  s.netfilter.tables.push_back(t);
  std::string written;
  {
    char* buf = nullptr;
    size_t len = 0;
    FILE* f = open_memstream(&buf, &len);
    write_snapshot(s, f);
    std::fclose(f);
    written.assign(buf, len);
    std::free(buf);
  }
  EXPECT_NE(written.find("\"schema\": \"dpscope.snapshot/v2\""), std::string::npos) << written.substr(0, 200);
  const Snapshot back = from_json_text(written, "v2.json");
  EXPECT_EQ(back.netfilter.tables.at(0).chains.at(0).rules.at(0).text, r.text);
  EXPECT_EQ(from_json(to_json(s), "tree.json").netfilter.tables.at(0).chains.at(0).rules.at(0).text, r.text);

  const std::string v1 = R"({"schema":"dpscope.snapshot/v1","netfilter":{"collected":true,"tables":[{"backend":"iptables-legacy",
    "family":"ip","name":"filter","chains":[{"name":"INPUT","rules":[{"position":1,"match":{},"verdict_kind":"verdict",
    "target":"DROP"}]}]}]}})";
  const Snapshot old = from_json_text(v1, "v1.json");
  EXPECT_EQ(old.schema, "dpscope.snapshot/v1");
  EXPECT_EQ(old.netfilter.tables.at(0).chains.at(0).rules.at(0).text, "");  // absent
  EXPECT_EQ(old.netfilter.tables.at(0).chains.at(0).rules.at(0).target, "DROP");
}

}  // namespace
}  // namespace dpscope::model
