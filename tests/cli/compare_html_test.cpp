// The HTML reports (compare, scale) are self-contained pages: they open in
// headless Chromium without a single console message, reference nothing
// outside themselves, and a screenshot is kept for people to look at (build
// dir: compare-kind.png, scale-kind.png).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/support/process.h"

namespace dpscope::test {
namespace {

std::string chromium() {
  for (const char* name : {"chromium", "chromium-browser"}) {
    auto r = sh(std::string("command -v ") + name);
    if (r.exit_code == 0) return r.out.substr(0, r.out.find('\n'));
  }
  return {};
}

// Opens `file` headless; returns stderr (console messages are logged there).
RunResult open_page(const std::string& browser, const TempDir& dir, const std::string& file,
                    const std::vector<std::string>& extra) {
  std::vector<std::string> argv = {browser,
                                   "--headless",
                                   "--no-sandbox",
                                   "--disable-gpu",
                                   "--disable-background-networking",
                                   "--disable-component-update",
                                   "--disable-sync",
                                   "--no-first-run",
                                   "--user-data-dir=" + dir.file("profile"),
                                   "--enable-logging=stderr",
                                   "--v=0"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  argv.push_back("file://" + file);
  return run(argv);
}

bool has_console_message(const std::string& log) { return log.find(":CONSOLE") != std::string::npos; }

// Writes `command` (run from the source root, `-o PAGE` appended) as a page,
// checks it is self-contained, opens it in Chromium with a screenshot kept in
// the build dir, and returns its DOM (empty after a failure).
std::string render_and_open(const std::string& browser, const TempDir& dir, const std::string& command,
                            const std::string& shot_name, const std::string& window) {
  const std::string page = dir.file(shot_name + ".html");
  auto r = sh("cd '" + source_path("") + "' && '" + dpscope_bin() + "' " + command + " -o '" + page + "'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const std::string html = read_text(page);
  // Self-contained: no script, no external reference.
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("http://"), html.find("http://www.w3.org/2000/svg"));  // only the SVG namespace
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_EQ(html.find("src="), std::string::npos);

  const std::string shot = std::string(DPSCOPE_BUILD_DIR) + "/" + shot_name + ".png";
  auto s = open_page(browser, dir, page, {"--window-size=" + window, "--screenshot=" + shot});
  EXPECT_EQ(s.exit_code, 0) << s.err;
  EXPECT_FALSE(has_console_message(s.err)) << s.err;
  EXPECT_GT(read_text(shot).size(), 10000u) << "no screenshot at " << shot;
  auto dom = open_page(browser, dir, page, {"--dump-dom"});
  EXPECT_EQ(dom.exit_code, 0);
  EXPECT_FALSE(has_console_message(dom.err)) << dom.err;
  return dom.out;
}

TEST(CompareHtml, OpensInChromiumWithoutConsoleErrors) {
  std::string browser = chromium();
  if (browser.empty()) GTEST_SKIP() << "SKIPPED: chromium not installed (make deps installs it)";
  TempDir dir;
  const std::string dom = render_and_open(
      browser, dir,
      "compare fixtures/snapshots/kind-kube-proxy.json fixtures/snapshots/kind-cilium-kpr.json --format html",
      "compare-kind", "1200,2400");
  EXPECT_NE(dom.find("KUBE-SVC service chains"), std::string::npos);
  EXPECT_NE(dom.find("<svg"), std::string::npos);
}

TEST(CompareHtml, ScalePageOpensInChromiumWithoutConsoleErrors) {
  std::string browser = chromium();
  if (browser.empty()) GTEST_SKIP() << "SKIPPED: chromium not installed (make deps installs it)";
  TempDir dir;
  const std::string dom = render_and_open(
      browser, dir, "scale fixtures/snapshots/kind-kube-proxy.json fixtures/snapshots/kind-cilium-kpr.json --format html",
      "scale-kind", "1200,1600");
  EXPECT_NE(dom.find("<table>"), std::string::npos);
  // Both charts reached the DOM: the kube-proxy rules projection and the eBPF service map.
  EXPECT_NE(dom.find("Projected kube-proxy rules"), std::string::npos);
  EXPECT_NE(dom.find("eBPF service map slots"), std::string::npos);
}

// The migration review iptables mode -> nftables mode: one cluster state
// programmed by a real kube-proxy v1.30.3 in each mode (fixtures/upstream/
// real-kube-proxy/300x5, as the compare-kube-proxy-modes golden), compared and
// projected, opened in Chromium. The nftables node is in the family chart and
// the projection, at the numbers `scale --format json` gives.
TEST(CompareHtml, KubeProxyModesPagesOpenInChromiumWithBothModesDrawn) {
  std::string browser = chromium();
  if (browser.empty()) GTEST_SKIP() << "SKIPPED: chromium not installed (make deps installs it)";
  TempDir dir;
  const std::string up = source_path("fixtures/upstream/real-kube-proxy/");
  write_text(dir.file("empty.txt"), "");
  write_text(dir.file("empty.json"), R"({"nftables": [{"metainfo": {"version": "1.0.6", "json_schema_version": 1}}]})");
  const std::string ipt = dir.file("iptables-node.json"), nft = dir.file("nftables-node.json");
  ASSERT_EQ(run({dpscope_bin(), "import", "--iptables-save", up + "iptables-300x5/iptables-save.txt.zst",
                 "--ip6tables-save", up + "iptables-300x5/ip6tables-save.txt.zst", "--iptables-legacy-save",
                 dir.file("empty.txt"), "--nft-json", dir.file("empty.json"), "--node", "iptables-node", "-o", ipt})
                .exit_code,
            0);
  ASSERT_EQ(run({dpscope_bin(), "import", "--nft-json", up + "nftables-300x5/nft-ruleset.json.zst", "--iptables-save",
                 dir.file("empty.txt"), "--iptables-legacy-save", dir.file("empty.txt"), "--node", "nftables-node",
                 "-o", nft})
                .exit_code,
            0);
  const std::string pair = "'" + ipt + "' '" + nft + "'";
  const std::string compare = render_and_open(browser, dir, "compare " + pair + " --format html", "compare-modes",
                                              "1200,3000");
  const std::string scale = render_and_open(browser, dir, "scale " + pair + " --format html", "scale-modes", "1200,1600");
  for (const std::string* dom : {&compare, &scale}) {
    EXPECT_NE(dom->find("Projected kube-proxy rules"), std::string::npos);
    EXPECT_NE(dom->find(" iptables rules</text>"), std::string::npos);
    EXPECT_NE(dom->find(" nftables rules</text>"), std::string::npos);
  }
  EXPECT_NE(compare.find("nftables-node"), std::string::npos);
  EXPECT_NE(scale.find("<th>nftables rules</th>"), std::string::npos);
  // The bars are the JSON projection: the nftables node at 1,000 and 10,000 service ports.
  RunResult j = run({dpscope_bin(), "scale", ipt, nft, "--format", "json"});
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const auto doc = nlohmann::json::parse(j.out);
  ASSERT_EQ(doc["nodes"].size(), 2u);
  const auto& projection = doc["nodes"][1]["nftables"]["projection"];
  ASSERT_EQ(projection.size(), 3u) << j.out;
  size_t drawn = 0;
  for (const auto& p : projection) {
    if (p["services"] != 1000 && p["services"] != 10000) continue;
    const std::string bar = ">" + std::to_string(p["rules"].get<uint64_t>()) + " nftables rules</text>";
    EXPECT_NE(scale.find(bar), std::string::npos) << bar;
    EXPECT_NE(compare.find(bar), std::string::npos) << bar;
    ++drawn;
  }
  EXPECT_EQ(drawn, 2u);
}

TEST(CompareHtml, CompareAndScalePagesDrawTheSameProjection) {
  auto cmp = sh("cd '" + source_path("") + "' && '" + dpscope_bin() +
                "' compare fixtures/snapshots/kind-kube-proxy.json fixtures/snapshots/kind-cilium-kpr.json --format html");
  auto scale = sh("cd '" + source_path("") + "' && '" + dpscope_bin() +
                  "' scale fixtures/snapshots/kind-kube-proxy.json fixtures/snapshots/kind-cilium-kpr.json --format html");
  ASSERT_EQ(cmp.exit_code, 0) << cmp.err;
  ASSERT_EQ(scale.exit_code, 0) << scale.err;
  auto chart = [](const std::string& page) {
    size_t a = page.find("<figure><figcaption>Projected kube-proxy rules");
    size_t b = page.find("</ul>", a);
    return a == std::string::npos ? std::string() : page.substr(a, b - a);
  };
  EXPECT_FALSE(chart(cmp.out).empty());
  EXPECT_EQ(chart(cmp.out), chart(scale.out));
}

TEST(CompareHtml, ScalePageEscapesNodeStrings) {
  nlohmann::json snap = nlohmann::json::parse(read_text(source_path("fixtures/snapshots/kind-kube-proxy.json")));
  snap["node"]["name"] = "<script>alert(1)</script>\"><img src=x onerror=alert(2)>\x1b[31m";
  TempDir dir;
  write_text(dir.file("evil.json"), snap.dump());
  for (const char* format : {"html", "markdown", "text"}) {
    auto r = run({dpscope_bin(), "scale", dir.file("evil.json"), "--format", format});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << format;
    if (std::string(format) == "text") continue;  // a terminal does not read markup
    EXPECT_EQ(r.out.find("<script"), std::string::npos) << format;
    EXPECT_EQ(r.out.find("<img"), std::string::npos) << format;
  }
}

TEST(CompareHtml, TheConsoleDetectorCatchesErrors) {
  // Guards the check above: a page that logs must be seen to log.
  std::string browser = chromium();
  if (browser.empty()) GTEST_SKIP() << "SKIPPED: chromium not installed (make deps installs it)";
  TempDir dir;
  write_text(dir.file("bad.html"), "<!DOCTYPE html><p>x</p><script>console.error('boom');</script>");
  auto r = open_page(browser, dir, dir.file("bad.html"), {"--dump-dom"});
  EXPECT_TRUE(has_console_message(r.err)) << r.err;
}

TEST(CompareHtml, NodeStringsCannotInjectMarkup) {
  nlohmann::json snap = nlohmann::json::parse(read_text(source_path("fixtures/snapshots/kind-cilium-kpr.json")));
  snap["node"]["name"] = "<script>alert(1)</script>\"><img src=x onerror=alert(2)>\x1b[31m";
  TempDir dir;
  write_text(dir.file("evil.json"), snap.dump());
  auto r = run({dpscope_bin(), "compare", source_path("fixtures/snapshots/kind-kube-proxy.json"), dir.file("evil.json"),
                "--format", "html"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("<script"), std::string::npos);
  EXPECT_EQ(r.out.find("<img"), std::string::npos);
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos);
  EXPECT_NE(r.out.find("&lt;script&gt;alert(1)&lt;/script&gt;&quot;&gt;&lt;img src=x"), std::string::npos);
}

}  // namespace
}  // namespace dpscope::test
