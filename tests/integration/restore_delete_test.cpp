// `-D` in restore-command input against the standard tool (issue 18): the
// same text loaded with iptables-restore (nft and legacy backends) into a
// dps-* netns and printed back by iptables-save equals dpscope's import of
// the text, rule by rule; and each -D iptables-restore refuses, dpscope
// refuses at the line iptables-restore names.
#include <gtest/gtest.h>

#include <algorithm>
#include <regex>

#include "model/json.h"
#include "tests/support/kernel.h"
#include "tests/support/process.h"
#include "tests/support/save_scan.h"

namespace dpscope::test {
namespace {

// A rule of chain `chain` labelled `label` (labels repeat, so some rules are
// equal), written in one of the spellings iptables reads as the same rule.
std::string rule_spec(int label, int form) {
  const std::string c = "r" + std::to_string(label);
  const std::string dst = "10.96." + std::to_string(label / 200) + "." + std::to_string(label % 200 + 1);
  switch (form % 3) {
    case 0:
      return "-d " + dst + " -p tcp --dport 80 -m comment --comment " + c + " -j ACCEPT";
    case 1:
      return "-p TCP --destination " + dst + "/32 -m tcp --destination-port 80 -m comment --comment \"" + c + "\" --jump ACCEPT";
    default:
      // Basic options anywhere, but the matches in the same order: the kernel
      // compares them in order, so "-m comment ... -m tcp" is another rule.
      return "-p tcp -m tcp --dport 80 -m comment --comment " + c + " -j ACCEPT -d " + dst + "/32";
  }
}

// -A, -I N, -D N and -D rule-spec over three chains, each valid at its point
// (a shadow list per chain keeps the counts), then the same in nat with DNAT.
std::string restore_input() {
  const std::vector<std::string> chains = {"INPUT", "DPS-A", "DPS-B"};
  std::vector<std::vector<int>> live(chains.size());
  std::string text = "*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:DPS-A - [0:0]\n:DPS-B - [0:0]\n";
  uint32_t seed = 77;
  for (int i = 0; i < 600; ++i) {
    seed = seed * 1103515245u + 12345u;
    const size_t k = (seed >> 4) % chains.size();
    auto& rules = live[k];
    const std::string& chain = chains[k];
    const uint32_t pick = (seed >> 10) % 100;
    const int label = static_cast<int>((seed >> 16) % 25);
    if (rules.empty() || pick < 35) {
      text += "-A " + chain + " " + rule_spec(label, i) + "\n";
      rules.push_back(label);
    } else if (pick < 60) {
      const size_t pos = 1 + (seed >> 20) % (rules.size() + 1);
      text += "-I " + chain + " " + std::to_string(pos) + " " + rule_spec(label, i) + "\n";
      rules.insert(rules.begin() + static_cast<long>(pos - 1), label);
    } else if (pick < 78) {
      const size_t pos = 1 + (seed >> 20) % rules.size();
      text += "-D " + chain + " " + std::to_string(pos) + "\n";
      rules.erase(rules.begin() + static_cast<long>(pos - 1));
    } else {
      const int gone = rules[(seed >> 20) % rules.size()];
      text += "--delete " + chain + " " + rule_spec(gone, i + 1) + "\n";
      rules.erase(std::find(rules.begin(), rules.end(), gone));
    }
    if (i == 300) text += "-A INPUT -j DPS-A\n-A INPUT -j DPS-B\n-D INPUT -j DPS-A\n";
  }
  text += "COMMIT\n*nat\n:PREROUTING ACCEPT [0:0]\n:INPUT ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:POSTROUTING ACCEPT [0:0]\n:KUBE-SVC-X - [0:0]\n";
  for (int i = 0; i < 6; ++i) {
    text += "-A KUBE-SVC-X -p tcp -m comment --comment ep" + std::to_string(i) + " -j DNAT --to-destination 10.244.0." +
            std::to_string(i + 2) + ":8080\n";
  }
  text += "-D KUBE-SVC-X -p tcp -m comment --comment ep2 -j DNAT --to-destination 10.244.0.4:8080\n";
  text += "-D KUBE-SVC-X 1\n-I KUBE-SVC-X 2 -p tcp -m comment --comment ep9 -j DNAT --to-destination 10.244.0.9:8080\n";
  text += "-A PREROUTING -j KUBE-SVC-X\nCOMMIT\n";
  return text;
}

model::Snapshot import_as(const std::string& option, const std::string& text) {
  TempDir dir;
  write_text(dir.file("in.txt"), text);
  const auto r = run({dpscope_bin(), "import", option, dir.file("in.txt"), "-o", dir.file("out.json")});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  if (r.exit_code != 0) return {};
  return model::load_snapshot(dir.file("out.json"));
}

// Tables with chains in name order and without counters (iptables-save
// prints the kernel's, zero here; the input has none).
std::vector<model::Table> comparable(std::vector<model::Table> tables) {
  for (auto& t : tables) {
    std::sort(t.chains.begin(), t.chains.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
    for (auto& c : t.chains) {
      c.policy_counters.reset();
      // The text of a restore command is the line as written; the saved text is
      // iptables-save's spelling of the same rule (issue 11: import keeps the line).
      for (auto& r : c.rules) r.counters.reset(), r.text.clear();
    }
  }
  std::sort(tables.begin(), tables.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return tables;
}

TEST(RestoreDelete, ImportEqualsWhatIptablesRestoreLeaves) {
  DPS_REQUIRE_ROOT();
  const std::string text = restore_input();
  ASSERT_GT(std::count(text.begin(), text.end(), '\n'), 600);
  // iptables-nft-restore 1.8.9 cannot take the random mix: an `-I CHAIN N` after a
  // `-D` in the same transaction fails at COMMIT with "RULE_INSERT failed (No such
  // file or directory)" (it resolves N against rules the batch deletes). The nft
  // backend gets the nat table's -D/-I sequence, which it takes; legacy the whole mix.
  const std::string nat_only = "*nat" + text.substr(text.find("\n*nat") + 5);
  for (const std::string backend : {"nft", "legacy"}) {
    SCOPED_TRACE("iptables-" + backend);
    const std::string& input = backend == "nft" ? nat_only : text;
    const size_t tables = backend == "nft" ? 1u : 2u;
    Netns ns("del");
    ns.sh("iptables-" + backend + "-restore", input);
    const std::string saved = ns.sh("iptables-" + backend + "-save");
    const std::string option = backend == "nft" ? "--iptables-save" : "--iptables-legacy-save";
    const auto ours = import_as(option, input);
    const auto theirs = import_as(option, saved);
    ASSERT_EQ(ours.netfilter.tables.size(), tables);
    // Object by object against the saved text itself (tests/support/save_scan.h).
    const auto scanned = scan_iptables_save(saved);
    ASSERT_EQ(scanned.size(), tables);
    size_t rules_seen = 0;
    for (const auto& st : scanned) {
      const auto* t = model::find_table(ours, backend == "nft" ? model::Backend::IptablesNft : model::Backend::IptablesLegacy,
                                        "ip", st.name);
      ASSERT_TRUE(t) << st.name;
      for (const auto& c : t->chains) {
        ASSERT_EQ(c.rules.size(), st.rules_in(c.name)) << st.name << " " << c.name;
        size_t k = 0;
        for (const auto& r : st.rules) {
          if (r.chain != c.name) continue;
          const auto& rule = c.rules.at(k++);
          EXPECT_EQ(rule.match.comment, r.comment) << c.name << " #" << k;
          EXPECT_EQ(rule.target, r.target) << c.name << " #" << k;
          EXPECT_EQ(rule.match.destination ? rule.match.destination->cidr : "", r.destination) << c.name << " #" << k;
          ++rules_seen;
        }
      }
    }
    EXPECT_GT(rules_seen, backend == "nft" ? 5u : 100u);  // the input leaves enough rules to compare
    // And every field dpscope records, against its import of the saved text.
    const auto a = comparable(ours.netfilter.tables), b = comparable(theirs.netfilter.tables);
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i], b[i]) << a[i].name;
  }
}

TEST(RestoreDelete, RefusedWhereIptablesRestoreFails) {
  DPS_REQUIRE_ROOT();
  const std::string head =
      "*filter\n:INPUT ACCEPT [0:0]\n-A INPUT -s 10.0.0.1 -p tcp --dport 80 -j ACCEPT\n-A INPUT -j DROP\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"-D INPUT 3\n", "-D position 3 out of range"},
      {"-D INPUT 1\n-D INPUT 1\n-D INPUT 1\n", "-D position 1 out of range"},
      {"-D INPUT -s 10.0.0.2 -p tcp --dport 80 -j ACCEPT\n", "-D: no rule in chain 'INPUT'"},
      {"-D INPUT -s 10.0.0.1 -p tcp --dport 81 -j ACCEPT\n", "-D: no rule in chain 'INPUT'"},
      {"-D INPUT -j DROP\n-D INPUT -j DROP\n", "-D: no rule in chain 'INPUT'"},
      {"-D INPUT -s 10.0.0.1 -p tcp -j ACCEPT\n", "-D: no rule in chain 'INPUT'"},
  };
  const std::regex failed_line("line ([0-9]+) failed");
  for (const auto& [lines, what] : cases) {
    SCOPED_TRACE(lines);
    const std::string text = head + lines + "COMMIT\n";
    for (const std::string backend : {"nft", "legacy"}) {
      Netns ns("delbad");
      const auto restore = run(ns.exec({"iptables-" + backend + "-restore"}), text);
      ASSERT_NE(restore.exit_code, 0) << "iptables-" << backend << "-restore accepted it";
      std::smatch m;
      ASSERT_TRUE(std::regex_search(restore.err, m, failed_line)) << restore.err;
      TempDir dir;
      write_text(dir.file("in.txt"), text);
      const auto r = run({dpscope_bin(), "import", backend == "nft" ? "--iptables-save" : "--iptables-legacy-save",
                          dir.file("in.txt"), "-o", dir.file("out.json")});
      EXPECT_EQ(r.exit_code, 2) << r.err;
      EXPECT_EQ(r.err.rfind("dpscope: " + dir.file("in.txt") + ":" + m[1].str() + ": " + what, 0), 0u)
          << r.err << " vs iptables-" << backend << "-restore: " << restore.err;
    }
  }
}

}  // namespace
}  // namespace dpscope::test
