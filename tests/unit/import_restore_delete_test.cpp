// `-D CHAIN N` and `-D CHAIN rule-spec` in restore-command input (issue 18):
// the order after any mix of -A, -I, -D is what a plain vector edited line by
// line gives (the definition of the commands), a rule-spec finds the rule in
// the forms iptables treats as the same, the first of equal rules goes, and a
// -D iptables-restore refuses is refused at its line. (The same inputs
// against the real iptables-restore: tests/integration/restore_delete_test.cpp.)
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "collectors/import/import.h"
#include "util/error.h"

namespace dpscope::test {
namespace {

std::string refusal(const std::function<void()>& parse) {
  try {
    parse();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// The comments of a chain's rules, in order.
std::vector<std::string> comments_of(const std::string& restore, const std::string& chain) {
  const auto tables = importer::parse_iptables_save(restore, "r.txt", {});
  std::vector<std::string> out;
  for (const auto& c : tables.at(0).chains) {
    if (c.name != chain) continue;
    for (size_t i = 0; i < c.rules.size(); ++i) {
      EXPECT_EQ(c.rules[i].position, i + 1);
      out.push_back(c.rules[i].match.comment);
    }
  }
  return out;
}

// A rule labelled by its comment, written two ways iptables reads as the
// same rule (the second is how -D names it).
std::string rule_written(int label, int form) {
  const std::string c = "r" + std::to_string(label % 40);  // labels repeat: equal rules exist
  const std::string ip = "10.0." + std::to_string(label % 40 / 256) + "." + std::to_string(label % 40 % 256);
  switch (form) {
    case 0:
      return "-s " + ip + " -p tcp --dport 80 -m comment --comment " + c + " -j ACCEPT";
    default:
      return "-p TCP --source " + ip + "/32 -m tcp --destination-port 80 -m comment --comment \"" + c + "\" --jump ACCEPT";
  }
}

TEST(ImportRestoreDelete, AnyMixOfAppendInsertDeleteGivesTheVectorsOrder) {
  std::string text = "*filter\n:INPUT ACCEPT [0:0]\n";
  std::vector<std::string> want;
  uint32_t seed = 2024;
  for (int i = 0; i < 3000; ++i) {
    seed = seed * 1103515245u + 12345u;
    const uint32_t pick = (seed >> 8) % 100;
    if (want.empty() || pick < 30) {
      text += "-A INPUT " + rule_written(i, 0) + "\n";
      want.push_back("r" + std::to_string(i % 40));
    } else if (pick < 55) {
      const size_t pos = 1 + (seed >> 16) % (want.size() + 1);
      text += "-I INPUT " + std::to_string(pos) + " " + rule_written(i, 0) + "\n";
      want.insert(want.begin() + static_cast<long>(pos - 1), "r" + std::to_string(i % 40));
    } else if (pick < 75) {
      const size_t pos = 1 + (seed >> 16) % want.size();
      text += "-D INPUT " + std::to_string(pos) + "\n";
      want.erase(want.begin() + static_cast<long>(pos - 1));
    } else {
      // By rule-spec, in the other spelling: the first rule with that label goes.
      const std::string label = want[(seed >> 16) % want.size()];
      text += "-D INPUT " + rule_written(std::stoi(label.substr(1)), 1) + "\n";
      want.erase(std::find(want.begin(), want.end(), label));
    }
    if (i == 1500) {  // a flush forgets the rules, not the chain
      text += "-F INPUT\n";
      want.clear();
    }
  }
  text += "COMMIT\n";
  EXPECT_EQ(comments_of(text, "INPUT"), want);
}

TEST(ImportRestoreDelete, RuleSpecComparesTheRuleNotItsSpelling) {
  const std::string text =
      "*filter\n:INPUT ACCEPT [0:0]\n:X - [0:0]\n"
      "-A INPUT -s 10.0.0.1 -m comment --comment a -j ACCEPT\n"
      "-A INPUT -p tcp -m tcp --dport 81 -m comment --comment b -j ACCEPT\n"
      "-A INPUT -i eth0 ! -d 10.1.0.0/16 -m comment --comment c -j X\n"
      "-A INPUT -m comment --comment d -j DROP\n"
      "-A INPUT -m comment --comment e -j DNAT --to-destination 10.2.0.1:80\n"
      "[5:300] -A INPUT -m comment --comment f -j ACCEPT\n"
      "-D INPUT -m comment --comment a -j ACCEPT -s 10.0.0.1/32\n"   // basic fields in any order
      "-D INPUT --protocol tcp --dport 81 -m comment --comment b -j ACCEPT\n"  // implicit -m tcp
      "-D INPUT ! --destination 10.1.0.0/16 --in-interface eth0 -m comment --comment c -j X\n"
      "-D INPUT -m comment --comment e -j DNAT --to-destination 10.2.0.1:80\n"
      "-D INPUT -m comment --comment f -j ACCEPT -c 9 9\n"  // counters are not the rule
      "COMMIT\n";
  EXPECT_EQ(comments_of(text, "INPUT"), std::vector<std::string>{"d"});
}

TEST(ImportRestoreDelete, RulesThatDifferAreNotDeleted) {
  // Each -D differs from the rule in one respect iptables compares.
  const std::string head = "*filter\n:INPUT ACCEPT [0:0]\n-A INPUT -s 10.0.0.1 -p tcp --dport 80 -m comment --comment a -j ACCEPT\n";
  for (const std::string del : {
           "-D INPUT -s 10.0.0.2 -p tcp --dport 80 -m comment --comment a -j ACCEPT",
           "-D INPUT -s 10.0.0.1 -p udp --dport 80 -m comment --comment a -j ACCEPT",
           "-D INPUT -s 10.0.0.1 -p tcp --dport 81 -m comment --comment a -j ACCEPT",
           "-D INPUT ! -s 10.0.0.1 -p tcp --dport 80 -m comment --comment a -j ACCEPT",
           "-D INPUT -s 10.0.0.1 -p tcp --dport 80 -m comment --comment b -j ACCEPT",
           "-D INPUT -s 10.0.0.1 -p tcp --dport 80 -m comment --comment a -j DROP",
           "-D INPUT -s 10.0.0.1 -p tcp --dport 80 -j ACCEPT",
           // Matches compare in order: comment before the implicit tcp match is another rule.
           "-D INPUT -s 10.0.0.1 -p tcp -m comment --comment a --dport 80 -j ACCEPT",
       }) {
    SCOPED_TRACE(del);
    const std::string what = refusal([&] { importer::parse_iptables_save(head + del + "\nCOMMIT\n", "r.txt", {}); });
    EXPECT_EQ(what.rfind("r.txt:4: -D: no rule in chain 'INPUT' matches this one", 0), 0u) << what;
  }
}

TEST(ImportRestoreDelete, OutOfRangeAndMissingAreRefusedAtTheirLine) {
  const std::string head = "*filter\n:INPUT ACCEPT [0:0]\n-A INPUT -j ACCEPT\n-I INPUT -j DROP\n";
  auto error_of = [&](const std::string& lines) {
    return refusal([&] { importer::parse_iptables_save(head + lines + "COMMIT\n", "r.txt", {}); });
  };
  EXPECT_EQ(error_of("-D INPUT 3\n").rfind("r.txt:5: -D position 3 out of range (chain has 2 rules", 0), 0u);
  EXPECT_EQ(error_of("-D INPUT 0\n").rfind("r.txt:5: -D position 0 out of range", 0), 0u);
  EXPECT_EQ(error_of("-D INPUT 1\n-D INPUT 1\n-D INPUT 1\n").rfind("r.txt:7: -D position 1 out of range (chain has 0", 0), 0u);
  EXPECT_EQ(error_of("-D INPUT -j REJECT\n").rfind("r.txt:5: -D: no rule in chain 'INPUT'", 0), 0u);
  EXPECT_EQ(error_of("-D INPUT -j ACCEPT\n-D INPUT -j ACCEPT\n").rfind("r.txt:6: -D: no rule", 0), 0u);
  EXPECT_EQ(error_of("-D INPUT\n").rfind("r.txt:5: -D INPUT needs a rule number or a rule", 0), 0u);
  EXPECT_EQ(error_of("-D NOPE 1\n").rfind("r.txt:5: chain 'NOPE' does not exist", 0), 0u);
  EXPECT_EQ(error_of("-D INPUT -j ACCEPT --bogus\n").rfind("r.txt:5: ", 0), 0u);
  // A flushed or deleted chain has nothing left to delete.
  EXPECT_EQ(error_of("-F INPUT\n-D INPUT 1\n").rfind("r.txt:6: -D position 1 out of range", 0), 0u);
  EXPECT_EQ(error_of("-N Y\n-A Y -j ACCEPT\n-X Y\n-N Y\n-D Y -j ACCEPT\n").rfind("r.txt:9: -D: no rule in chain 'Y'", 0), 0u);
  EXPECT_EQ(error_of("-D INPUT 1\n-D INPUT -j ACCEPT\n"), "");  // valid: leaves nothing
  // Blanks around the command are blanks, as iptables-restore splits words.
  EXPECT_EQ(error_of("  -D\tINPUT\t2\n\t--delete INPUT -j DROP\n"), "");
}

TEST(ImportRestoreDelete, ManyDeletesGiveTheRightState) {
  // Shapes that were quadratic with a vector: deletes at the front, and many
  // equal rules deleted by rule-spec.
  std::string text = "*filter\n:INPUT ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n";
  for (int i = 0; i < 30000; ++i) text += "-A INPUT -m comment --comment c" + std::to_string(i) + " -j ACCEPT\n";
  for (int i = 0; i < 29990; ++i) text += "-D INPUT 1\n";
  for (int i = 0; i < 20000; ++i) text += "-I OUTPUT " + std::to_string(1 + i / 2) + " -j ACCEPT\n";
  text += "-I OUTPUT 5000 -m comment --comment mid -j ACCEPT\n";
  for (int i = 0; i < 19999; ++i) text += "-D OUTPUT -j ACCEPT\n";
  text += "COMMIT\n";
  const auto tables = importer::parse_iptables_save(text, "r.txt", {});
  const auto& input = tables.at(0).chains.at(0);
  ASSERT_EQ(input.rules.size(), 10u);
  EXPECT_EQ(input.rules.front().match.comment, "c29990");
  EXPECT_EQ(input.rules.back().match.comment, "c29999");
  const auto& output = tables[0].chains.at(1);
  ASSERT_EQ(output.name, "OUTPUT");
  ASSERT_EQ(output.rules.size(), 2u);
  EXPECT_EQ(output.rules[0].match.comment, "mid");  // the equal rules before it went first
  EXPECT_EQ(output.rules[1].match.comment, "");
}

}  // namespace
}  // namespace dpscope::test
