// reports/text_width.h: where the width comes from, and the cutting and
// wrapping the text renderers share.
#include <gtest/gtest.h>

#include "reports/text_width.h"

namespace dpscope::reports {
namespace {

TEST(TextWidth, AnExplicitFlagWinsThenTheTerminalThenColumns) {
  EXPECT_EQ(resolve_width(70, 100, "90"), 70u);
  EXPECT_EQ(resolve_width(0, 100, "90"), 0u);  // --width 0: no limit
  EXPECT_EQ(resolve_width(std::nullopt, 100, "90"), 100u);
  EXPECT_EQ(resolve_width(std::nullopt, std::nullopt, "90"), 90u);
  EXPECT_EQ(resolve_width(std::nullopt, std::nullopt, nullptr), kNotATerminalWidth);
  for (const char* junk : {"", "abc", "80x", "-5", "0", " 80", "99999999999999999999"}) {
    EXPECT_EQ(resolve_width(std::nullopt, std::nullopt, junk), kNotATerminalWidth) << junk;
  }
}

TEST(TextWidth, DisplayWidthCountsCodePointsNotColours) {
  EXPECT_EQ(display_width("abc"), 3u);
  EXPECT_EQ(display_width("\xc3\xa9t\xc3\xa9"), 3u);  // "été"
  EXPECT_EQ(display_width("\x1b[1mbold\x1b[0m"), 4u);
}

TEST(TextWidth, CutEndsWithDotsAndNeverInsideANumber) {
  EXPECT_EQ(cut("short", 10), "short");
  EXPECT_EQ(cut("a long label here", 10), "a long ...");
  EXPECT_EQ(display_width(cut("\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 5)), 5u);
  EXPECT_EQ(cut_middle("KUBE-* chains owned by kubelet", 20), "KUBE-* ch... kubelet");
  EXPECT_EQ(display_width(cut_middle("KUBE-* chains owned by kubelet", 20)), 20u);
  EXPECT_EQ(cut_before_number("address (/32, /128)", 18), "address (/32, /...");
  EXPECT_EQ(cut_before_number("about 12345 rules", 11), "about ...");
}

TEST(TextWidth, WrapKeepsEveryWordAndFits) {
  const std::string line = "  - kind-worker programs 5 KUBE-SVC chains, 8 KUBE-SEP chains and 5 service-IP rules";
  std::string w = wrap_lines(line + "\nshort\n", 30);
  size_t start = 0;
  std::string joined;
  while (start < w.size()) {
    size_t nl = w.find('\n', start);
    std::string l = w.substr(start, nl - start);
    EXPECT_LE(display_width(l), 30u) << l;
    joined += l + " ";
    start = nl + 1;
  }
  for (const char* word : {"kind-worker", "5", "KUBE-SVC", "8", "KUBE-SEP", "service-IP", "rules", "short"}) {
    EXPECT_NE(joined.find(word), std::string::npos) << word;
  }
  EXPECT_EQ(wrap_lines(line, 0), line);
  // A word longer than the line is split, not lost.
  std::string path = wrap_lines("  fixtures/snapshots/clusters/dotoryeee-cilium/worker2.json", 20);
  std::string rejoined;
  for (char c : path) {
    if (c != '\n' && c != ' ') rejoined += c;
  }
  EXPECT_EQ(rejoined, "fixtures/snapshots/clusters/dotoryeee-cilium/worker2.json");
}

}  // namespace
}  // namespace dpscope::reports
