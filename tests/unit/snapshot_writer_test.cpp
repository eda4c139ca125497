// The streamed snapshot writer (every command that writes a snapshot) writes
// the content of model::to_json(s) -- no field lost or renamed on the fast
// path -- in dump(1)'s layout except one compact line per rule and element.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <functional>
#include <map>
#include <sstream>

#include "model/json.h"
#include "model/snapshot_writer.h"
#include "tests/support/snapshot_text.h"
#include "util/error.h"

namespace dpscope::model {
namespace {

model::Snapshot populated() {
  model::Snapshot s;
  s.node = {"node-1", "6.1.0", "live", "netns:dps-x", "2026-11-30T00:00:00Z", "0.1.0", {}};
  s.netfilter.collected = true;
  s.netfilter.collection.nft_generation = 42;
  s.netfilter.collection.nft_retries = 2;
  model::Table t;
  t.backend = model::Backend::IptablesNft;
  t.family = "ip";
  t.name = "nat";
  model::Chain base;
  base.name = "PREROUTING";
  base.base = model::BaseChain{"prerouting", "nat", -100, "ACCEPT"};
  base.policy_counters = model::Counters{1, 2};
  model::Rule r;
  r.position = 1;
  r.match.source = model::Prefix{"10.0.0.0/8", true};
  r.match.destination = model::Prefix{"172.30.0.41/32", false};
  r.match.protocol = "tcp";
  r.match.protocol_negated = true;
  r.match.dport = "80";
  r.match.dport_negated = true;
  r.match.comment = "ns1/svc1:p80 \"quoted\" \\ tab\t nl\n bell\x07 caf\xC3\xA9";
  r.match.modules = {"comment", "tcp"};
  r.verdict_kind = "target";
  r.target = "DNAT";
  r.target_args = "--to-destination 10.180.0.1:80";
  r.counters = model::Counters{123, 4567};
  base.rules.push_back(r);
  model::Rule bare;
  bare.position = 2;
  base.rules.push_back(bare);
  model::Rule odd;
  odd.position = 3;
  odd.undecoded = true;
  odd.raw = "[ ct load state => reg 1 ]";
  odd.verdict_kind = "verdict";
  odd.target = "DROP";
  base.rules.push_back(odd);
  base.rule_count = 3;
  t.chains.push_back(base);
  model::Chain empty;
  empty.name = "KUBE-EMPTY";
  t.chains.push_back(empty);
  s.netfilter.tables.push_back(t);
  model::Table kp;
  kp.backend = model::Backend::Nftables;
  kp.family = "ip";
  kp.name = "kube-proxy";
  model::NftSet set;
  set.name = "service-ips";
  set.is_map = true;
  set.key_type = {"ipv4_addr", "inet_proto", "inet_service"};
  set.data_type = "verdict";
  set.comment = "ClusterIP";
  set.elements = {{"172.30.0.41 . tcp . 80", "goto service-X", "ns1/svc1"}, {"1.2.3.4 . tcp . 80", "", ""}};
  set.element_count = 2;
  set.elements_recorded = true;
  kp.sets.push_back(set);
  kp.sets.push_back(model::NftSet{});
  s.netfilter.tables.push_back(kp);
  s.netfilter.tables.push_back(model::Table{});
  s.unavailable.push_back({"ebpf", "EPERM on BPF_PROG_GET_NEXT_ID", 1, "needs CAP_SYS_ADMIN"});
  return s;
}

std::string streamed(const model::Snapshot& s) { return test::snapshot_text(s); }

TEST(SnapshotWriter, SameContentAsModelJson) {
  const model::Snapshot s = populated();
  EXPECT_EQ(nlohmann::json::parse(streamed(s)), model::to_json(s));
}

TEST(SnapshotWriter, OneCompactLinePerRuleAndElement) {
  const model::Snapshot s = populated();
  const std::string text = streamed(s);
  size_t rule_lines = 0, element_lines = 0;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.find("\"position\":") != std::string::npos) {
      ++rule_lines;
      EXPECT_EQ(line.find(": "), std::string::npos) << line;  // compact: no space after a colon
      const auto start = line.find_first_not_of(' ');
      EXPECT_TRUE(nlohmann::json::accept(line.substr(start, line.find_last_of('}') - start + 1))) << line;
    }
    if (line.find("{\"comment\":\"ns1/svc1\",\"key\":") != std::string::npos ||
        line.find("{\"key\":\"1.2.3.4 . tcp . 80\"}") != std::string::npos) {
      ++element_lines;
    }
  }
  EXPECT_EQ(rule_lines, 3u);
  EXPECT_EQ(element_lines, 2u);
}

TEST(SnapshotWriter, EmptySnapshotAndNoTables) {
  model::Snapshot s;
  EXPECT_EQ(streamed(s), model::to_json(s).dump(1) + "\n");
}

// Rules rendered outside the model, by chain name (as an import's or a
// spool's): a chain named in `bad` throws instead, as a rule text that finds
// bad input while written does.
class RenderedRules : public model::RuleText {
 public:
  std::map<std::string, std::string> text;
  std::string bad;
  bool write_to(const model::Table&, size_t, const model::Chain& chain,
                const std::function<void(std::string_view)>& sink) const override {
    if (chain.name == bad) throw InputError("f", 7, "bad rule");
    const auto it = text.find(chain.name);
    if (it == text.end() || it->second.empty()) return false;
    sink(it->second);
    return true;
  }
};

// A table with tens of thousands of chains is rendered in parallel slices;
// the result must be what to_json() says, whether the rules are in memory or
// rendered elsewhere (model::RuleText), chains with and without rules mixed.
TEST(SnapshotWriter, LargeTablesInParallelSlicesKeepTheContent) {
  model::Snapshot full;
  full.netfilter.collected = true;
  for (const char* name : {"nat", "filter"}) {
    model::Table t;
    t.family = "ip";
    t.name = name;
    for (int i = 0; i < 30011; ++i) {
      model::Chain c;
      char chain_name[32];
      std::snprintf(chain_name, sizeof chain_name, "KUBE-SEP-%06d", i);
      c.name = chain_name;
      for (int k = 0; k < (i == 20000 ? 3000 : i % 3); ++k) {  // one long chain: written by the writer itself
        model::Rule r;
        r.position = static_cast<uint32_t>(k + 1);
        r.match.comment = "ns/svc" + std::to_string(i);
        r.match.modules = {"comment"};
        r.verdict_kind = k ? "target" : "jump";
        r.target = k ? "DNAT" : "KUBE-MARK-MASQ";
        if (k) r.target_args = "--to-destination 10.0." + std::to_string(i % 250) + ".1:80";
        c.rules.push_back(r);
      }
      c.rule_count = c.rules.size();
      t.chains.push_back(c);
    }
    full.netfilter.tables.push_back(t);
  }
  EXPECT_EQ(nlohmann::json::parse(streamed(full)), model::to_json(full));

  // The same snapshot with the nat table's rules rendered outside it.
  model::Snapshot lean = full;
  auto& nat = lean.netfilter.tables[0];
  RenderedRules rendered;
  for (auto& c : nat.chains) {
    model::RuleLines lines;
    lines.start_chain();
    for (const auto& r : c.rules) lines.add(r);
    rendered.text[c.name] = lines.text();
    c.rules.clear();
  }
  EXPECT_EQ(test::snapshot_text(lean, &rendered), streamed(full));
  // To a real file (a long chain's text goes to it directly).
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  model::write_snapshot(lean, f, &rendered);
  std::fflush(f);
  std::string written(static_cast<size_t>(std::ftell(f)), '\0');
  std::rewind(f);
  ASSERT_EQ(std::fread(written.data(), 1, written.size(), f), written.size());
  std::fclose(f);
  EXPECT_EQ(written, streamed(full));
  // An error found while a slice is rendered on another thread reaches the caller as it was thrown.
  for (const char* bad : {"KUBE-SEP-000007", "KUBE-SEP-020000", "KUBE-SEP-030010"}) {
    rendered.bad = bad;
    EXPECT_THROW(test::snapshot_text(lean, &rendered), InputError) << bad;
  }
}

TEST(SnapshotWriter, InvalidUtf8BecomesReplacementCharacter) {
  model::Snapshot s = populated();
  s.netfilter.tables[0].chains[0].rules[0].match.comment = "bad \xFF byte";
  const auto parsed = nlohmann::json::parse(streamed(s));
  EXPECT_EQ(parsed["netfilter"]["tables"][0]["chains"][0]["rules"][0]["match"]["comment"], "bad \xEF\xBF\xBD byte");
}

}  // namespace
}  // namespace dpscope::model

namespace dpscope::model {
namespace {

// A collector may park each chain's rules in a RuleSpool as soon as it has
// read them; the file written must be byte-for-byte the one written from
// memory, whatever order the chains were stored in, and reset() forgets all.
TEST(RuleSpool, WritesTheSameBytesAsRulesInMemory) {
  const Snapshot s = populated();
  const std::string from_memory = streamed(s);
  Snapshot parked = s;
  RuleSpool spool;
  // Store in reverse table/chain order, as parallel workers might.
  for (auto t = parked.netfilter.tables.rbegin(); t != parked.netfilter.tables.rend(); ++t) {
    for (auto c = t->chains.rbegin(); c != t->chains.rend(); ++c) {
      if (!c->rules.empty()) spool.store(t->backend, t->family, t->name, c->name, c->rules);
      EXPECT_TRUE(c->rules.empty());
    }
  }
  EXPECT_GT(spool.bytes(), 0u);
  EXPECT_EQ(test::snapshot_text(parked, &spool), from_memory);

  // Another backend's chain of the same name is not confused with it.
  std::string out;
  EXPECT_FALSE(spool.append_to(Backend::IptablesLegacy, "ip", "nat", "PREROUTING", out));
  EXPECT_TRUE(spool.append_to(Backend::IptablesNft, "ip", "nat", "PREROUTING", out));
  spool.reset();
  EXPECT_EQ(spool.bytes(), 0u);
  EXPECT_FALSE(spool.append_to(Backend::IptablesNft, "ip", "nat", "PREROUTING", out));
}

}  // namespace
}  // namespace dpscope::model

namespace dpscope::model {
namespace {

// A spool whose file stops taking writes (here: RLIMIT_FSIZE, as a full /tmp
// would) keeps the batch it could not write in memory and refuses every chain
// after it, leaving their rules in place, so the collector keeps them in
// memory; the file written is still the whole snapshot.
TEST(RuleSpool, AFullFileLeavesTheRulesInMemory) {
  const Snapshot s = populated();
  Snapshot parked = s;
  RuleSpool spool(1);  // a batch per chain: the first store writes
  rlimit old{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old), 0);
  auto* previous = std::signal(SIGXFSZ, SIG_IGN);  // EFBIG instead of the signal
  rlimit tiny = old;
  tiny.rlim_cur = 16;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &tiny), 0);
  Chain& first = parked.netfilter.tables[0].chains[0];
  ASSERT_FALSE(first.rules.empty());
  const bool first_stored = spool.store(parked.netfilter.tables[0].backend, parked.netfilter.tables[0].family,
                                        parked.netfilter.tables[0].name, first.name, first.rules);
  for (auto& t : parked.netfilter.tables) {
    for (auto& c : t.chains) {
      if (&c == &first || c.rules.empty()) continue;
      const auto rules = c.rules;
      EXPECT_FALSE(spool.store(t.backend, t.family, t.name, c.name, c.rules));
      EXPECT_EQ(c.rules, rules);  // stays off: nothing after the failed batch is taken
    }
  }
  std::vector<Rule> more = s.netfilter.tables[0].chains[0].rules;
  const auto copy = more;
  const bool more_stored = spool.store(Backend::IptablesNft, "ip", "nat", "OTHER", more);
  setrlimit(RLIMIT_FSIZE, &old);
  std::signal(SIGXFSZ, previous);
  EXPECT_TRUE(first_stored);  // its text is the batch kept in memory
  EXPECT_TRUE(first.rules.empty());
  EXPECT_FALSE(more_stored);
  EXPECT_EQ(more, copy);
  EXPECT_EQ(spool.failure(), EFBIG);
  EXPECT_EQ(test::snapshot_text(parked, &spool), test::snapshot_text(s));
}

// Chains are written a batch at a time and read back through a window of the
// same size: a batch smaller than one chain, chains read in another order
// than stored, and text still only in the pending batch all give the bytes
// the rules in memory give.
TEST(RuleSpool, BatchesAndReadWindowKeepTheBytes) {
  const Snapshot s = populated();
  const std::string from_memory = streamed(s);
  for (size_t batch : {size_t{1}, size_t{64}, size_t{1} << 20}) {
    for (bool reverse : {false, true}) {
      Snapshot parked = s;
      RuleSpool spool(batch);
      std::vector<std::pair<Table*, Chain*>> chains;
      for (auto& t : parked.netfilter.tables) {
        for (auto& c : t.chains) chains.emplace_back(&t, &c);
      }
      if (reverse) std::reverse(chains.begin(), chains.end());
      for (auto [t, c] : chains) {
        if (!c->rules.empty()) ASSERT_TRUE(spool.store(t->backend, t->family, t->name, c->name, c->rules));
      }
      EXPECT_EQ(test::snapshot_text(parked, &spool), from_memory) << "batch " << batch << " reverse " << reverse;
      EXPECT_EQ(test::snapshot_text(parked, &spool), from_memory) << "read twice, batch " << batch;
    }
  }
}

}  // namespace
}  // namespace dpscope::model
