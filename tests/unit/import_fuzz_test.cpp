// Robustness: the importers on mutated upstream dumps (truncated at many
// offsets, bytes flipped, NULs and quotes inserted) either succeed or throw
// InputError with FILE:LINE — never crash, hang or throw anything else.
// Runs in the unit tier, i.e. under ASan+UBSan.
#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "collectors/import/import.h"
#include "tests/support/process.h"
#include "util/error.h"

namespace dpscope::importer {
namespace {

namespace fs = std::filesystem;

enum class Kind { Save, Listing, NftJson };

struct Outcome {
  size_t ok = 0;
  size_t rejected = 0;
};

void import_one(Kind kind, const std::string& text, Outcome& outcome) {
  try {
    switch (kind) {
      case Kind::Save:
        parse_iptables_save(text, "f", {});
        break;
      case Kind::Listing:
        parse_iptables_rules_listing(text, "f", "nat", {});
        break;
      case Kind::NftJson:
        parse_nft_json(text, "f");
        break;
    }
    ++outcome.ok;
  } catch (const InputError& e) {
    // Every message starts with the origin and a line ("f:12: ...") or the file ("f: ...").
    const std::string what = e.what();
    ASSERT_EQ(what.rfind("f:", 0), 0u) << what;
    ++outcome.rejected;
  }
}

std::vector<std::pair<Kind, std::string>> corpus() {
  std::vector<std::pair<Kind, std::string>> out;
  for (const auto& dir : {"kube-proxy-iptables", "kube-proxy-nftables", "cilium"}) {
    for (const auto& e : fs::directory_iterator(test::source_path(std::string("fixtures/upstream/") + dir))) {
      const std::string name = e.path().filename().string();
      Kind kind;
      if (name.find(".saved-") != std::string::npos || name.find(".golden.txt") != std::string::npos) {
        kind = Kind::Save;
      } else if (name.find(".iptables-S.txt") != std::string::npos) {
        kind = Kind::Listing;
      } else if (name.find(".json") != std::string::npos) {
        kind = Kind::NftJson;
      } else {
        continue;
      }
      out.emplace_back(kind, test::read_text(e.path().string()));
    }
  }
  return out;
}

TEST(ImportFuzz, MutatedUpstreamDumpsSucceedOrFailCleanly) {
  const auto files = corpus();
  ASSERT_GE(files.size(), 15u);
  std::mt19937 rng(20261129);  // fixed seed: a failure reproduces
  Outcome outcome;
  for (const auto& [kind, text] : files) {
    // Truncation at 30 offsets spread over the file, plus the first bytes.
    for (size_t k = 0; k <= 30; ++k) import_one(kind, text.substr(0, text.size() * k / 30), outcome);
    for (size_t k = 0; k < 16 && k < text.size(); ++k) import_one(kind, text.substr(0, k), outcome);
    std::uniform_int_distribution<size_t> at(0, text.size() - 1);
    std::uniform_int_distribution<int> byte(0, 255);
    const std::string specials = "\"\\!-* :[]{},\n\t\r";
    std::uniform_int_distribution<size_t> special(0, specials.size() - 1);
    for (int k = 0; k < 40; ++k) {
      std::string m = text;
      switch (k % 5) {
        case 0:  // a random byte
          m[at(rng)] = static_cast<char>(byte(rng));
          break;
        case 1:  // a NUL inserted
          m.insert(at(rng), 1, '\0');
          break;
        case 2:  // a character that means something to the parsers
          m[at(rng)] = specials[special(rng)];
          break;
        case 3: {  // a line dropped
          const size_t from = m.find('\n', at(rng));
          if (from != std::string::npos) m.erase(from, m.find('\n', from + 1) - from);
          break;
        }
        case 4:  // a chunk duplicated
        {
          const size_t from = at(rng);
          m.insert(at(rng), m.substr(from, 200));
          break;
        }
      }
      import_one(kind, m, outcome);
    }
  }
  // Both outcomes happen: the mutations are neither all harmless nor all fatal.
  EXPECT_GT(outcome.ok, 100u);
  EXPECT_GT(outcome.rejected, 100u);
}

}  // namespace
}  // namespace dpscope::importer
