// The HTML reports (compare, scale) are self-contained pages: they open in
// headless Chromium without a single console message, reference nothing
// outside themselves, and a screenshot is kept for people to look at (build
// dir: compare-kind.png, scale-kind.png, ...). Their layout is checked after
// Chromium laid them out (tests/cli/html_layout_check.js, run in a copy of
// the page): no empty heading, no overlapping text, chart labels level with
// their bars, every positive value's bar visible and bar lengths in the order
// of the values, a difference column and rows that differ marked, sections 0
// on every side folded, nothing wider than the window.
#include <gtest/gtest.h>

#include <cstdio>
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

// The layout check's verdict on `page` ({"problems": [...], "stats": {...}}),
// from a copy of the page with tests/cli/html_layout_check.js at its end;
// `dom`: the copy's DOM after the check.
nlohmann::json layout_of(const std::string& browser, const TempDir& dir, const std::string& page,
                         std::string* dom_out = nullptr) {
  std::string html = read_text(page);
  const size_t end = html.rfind("</body>");
  EXPECT_NE(end, std::string::npos) << page;
  if (end == std::string::npos) return nlohmann::json::object();
  html.insert(end, "<script>\n" + read_text(source_path("tests/cli/html_layout_check.js")) + "</script>\n");
  const std::string copy = page + ".layout.html";
  write_text(copy, html);
  auto dom = open_page(browser, dir, copy, {"--window-size=1200,3000", "--dump-dom"});
  EXPECT_EQ(dom.exit_code, 0) << dom.err;
  EXPECT_FALSE(has_console_message(dom.err)) << "the layout check failed to run: " << dom.err;
  if (dom_out) *dom_out = dom.out;
  const std::string open = "<pre id=\"dps-layout\">";
  const size_t at = dom.out.rfind(open);
  EXPECT_NE(at, std::string::npos) << "no layout result in the DOM of " << copy;
  if (at == std::string::npos) return nlohmann::json::object();
  std::string text = dom.out.substr(at + open.size(), dom.out.find("</pre>", at) - at - open.size());
  // The text node as serialised: &amp; &lt; &gt; (and &nbsp;) escaped.
  for (const auto& [entity, c] : std::vector<std::pair<std::string, std::string>>{
           {"&lt;", "<"}, {"&gt;", ">"}, {"&nbsp;", "\u00a0"}, {"&amp;", "&"}}) {
    for (size_t i = 0; (i = text.find(entity, i)) != std::string::npos; i += c.size()) text.replace(i, entity.size(), c);
  }
  return nlohmann::json::parse(text);
}

// Every problem the layout check found, as test failures; returns its stats.
nlohmann::json expect_good_layout(const std::string& browser, const TempDir& dir, const std::string& page,
                                  std::string* dom = nullptr) {
  const auto layout = layout_of(browser, dir, page, dom);
  if (!layout.contains("problems")) return nlohmann::json::object();
  for (const auto& p : layout["problems"]) ADD_FAILURE() << page << ": " << p.get<std::string>();
  return layout["stats"];
}

// Writes `command` (run from the source root, `-o PAGE` appended) as a page,
// checks it is self-contained, opens it in Chromium with a screenshot kept in
// the build dir, checks its layout (`stats`: the layout check's counts), and
// returns its DOM (empty after a failure).
std::string render_and_open(const std::string& browser, const TempDir& dir, const std::string& command,
                            const std::string& shot_name, const std::string& window,
                            nlohmann::json* stats = nullptr) {
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
  // The DOM after layout, from the layout check's run (the page plus the check's script and result).
  std::string dom;
  const auto layout = expect_good_layout(browser, dir, page, &dom);
  if (stats) *stats = layout;
  return dom;
}

TEST(CompareHtml, OpensInChromiumWithoutConsoleErrors) {
  std::string browser = chromium();
  if (browser.empty()) GTEST_SKIP() << "SKIPPED: chromium not installed (make deps installs it)";
  TempDir dir;
  nlohmann::json stats;
  const std::string dom = render_and_open(
      browser, dir,
      "compare fixtures/snapshots/kind-kube-proxy.json fixtures/snapshots/kind-cilium-kpr.json --format html",
      "compare-kind", "1200,2400", &stats);
  EXPECT_NE(dom.find("KUBE-SVC service chains"), std::string::npos);
  EXPECT_NE(dom.find("<table class=\"chart\">"), std::string::npos);
  // Charts, tables, changed rows and a folded all-zero section were all there to check.
  EXPECT_GE(stats.value("charts", 0), 3) << stats;
  EXPECT_GE(stats.value("bars", 0), 20) << stats;
  EXPECT_GE(stats.value("tables", 0), 4) << stats;
  EXPECT_GE(stats.value("changed_rows", 0), 5) << stats;
  EXPECT_GE(stats.value("folded", 0), 1) << stats;
}

// The cluster comparison: charts of the clusters' totals and median nodes
// under "Charts" (it was an empty heading), the tables with their difference.
TEST(CompareHtml, ClusterPageChartsTheClustersSideBySide) {
  std::string browser = chromium();
  if (browser.empty()) GTEST_SKIP() << "SKIPPED: chromium not installed (make deps installs it)";
  TempDir dir;
  nlohmann::json stats;
  const std::string dom = render_and_open(
      browser, dir, "compare fixtures/snapshots/clusters/kind fixtures/snapshots/clusters/dotoryeee-cilium --format html",
      "compare-clusters", "1200,2400", &stats);
  EXPECT_GE(stats.value("charts", 0), 2) << stats;
  EXPECT_GE(stats.value("changed_rows", 0), 5) << stats;
  EXPECT_NE(dom.find("Totals over each cluster's nodes"), std::string::npos);
  // Its bars are the totals rows: KUBE-SVC chains, 15 on kind and 5 on dotoryeee-cilium.
  EXPECT_NE(dom.find("KUBE-SVC chains</th><td class=\"bar\">"), std::string::npos);
  EXPECT_NE(dom.find("data-value=\"15\"></span></span><span class=\"v\">15</span>"), std::string::npos);
}

TEST(CompareHtml, ScalePageOpensInChromiumWithoutConsoleErrors) {
  std::string browser = chromium();
  if (browser.empty()) GTEST_SKIP() << "SKIPPED: chromium not installed (make deps installs it)";
  TempDir dir;
  nlohmann::json stats;
  const std::string dom = render_and_open(
      browser, dir, "scale fixtures/snapshots/kind-kube-proxy.json fixtures/snapshots/kind-cilium-kpr.json --format html",
      "scale-kind", "1200,1600", &stats);
  // Each projection point's label level with its own bars ("now" was drawn above "1000 services").
  EXPECT_GE(stats.value("chart_rows", 0), 11) << stats;
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
  nlohmann::json stats;
  const std::string compare = render_and_open(browser, dir, "compare " + pair + " --format html", "compare-modes",
                                              "1200,3000", &stats);
  // The nftables node's few iptables rules beside the iptables node's thousands: a log scale,
  // every bar visible (the layout check's >= 3 px), said in the caption.
  EXPECT_NE(compare.find("Rules by chain family (iptables)<span class=\"log-note\"> (bar length on a log scale"),
            std::string::npos);
  const std::string scale = render_and_open(browser, dir, "scale " + pair + " --format html", "scale-modes", "1200,1600");
  for (const std::string* dom : {&compare, &scale}) {
    EXPECT_NE(dom->find("Projected kube-proxy rules"), std::string::npos);
    EXPECT_NE(dom->find(" iptables rules</span>"), std::string::npos);
    EXPECT_NE(dom->find(" nftables rules</span>"), std::string::npos);
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
    const std::string bar = ">" + std::to_string(p["rules"].get<uint64_t>()) + " nftables rules</span>";
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
    size_t a = page.find("<figure class=\"chart\"><figcaption>Projected kube-proxy rules");
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

// Guards the layout check: a page with each fault is seen to have it.
TEST(CompareHtml, TheLayoutCheckCatchesBrokenPages) {
  std::string browser = chromium();
  if (browser.empty()) GTEST_SKIP() << "SKIPPED: chromium not installed (make deps installs it)";
  TempDir dir;
  const std::string row = "<tr><th scope=row>%s</th><td class=bar><span class=track style=\"display:inline-block;width:100px\">"
                          "<span class=fill style=\"display:block;height:8px;width:%s\" data-value=\"%s\"></span></span>"
                          "<span class=v>%s</span></td><td class=bar><span class=track style=\"display:inline-block;width:100px\">"
                          "<span class=fill style=\"display:block;height:8px;width:%s\" data-value=\"%s\"></span></span>"
                          "<span class=v>%s</span></td></tr>";
  auto chart_row = [&](const char* label, const char* w1, const char* v1, const char* w2, const char* v2) {
    char buf[2048];
    std::snprintf(buf, sizeof buf, row.c_str(), label, w1, v1, v1, w2, v2, v2);
    return std::string(buf);
  };
  write_text(dir.file("bad.html"),
             "<!DOCTYPE html><html><body><h2>Charts</h2><h2>Node</h2>"
             "<figure class=chart><figcaption>rules</figcaption><table class=chart><tr><th></th><th>a</th><th>b</th></tr>" +
                 chart_row("KUBE-SVC", "0.2px", "26", "100px", "32000") + chart_row("small", "50px", "2", "10px", "30") +
                 "</table></figure>"
                 "<p style=\"position:absolute;top:0;left:0\">over</p><p style=\"position:absolute;top:0;left:0\">lap</p>"
                 "<table><tr><th>metric</th><th>a</th><th>b</th><th>note</th></tr>"
                 "<tr><td>rules</td><td class=n>1</td><td class=n>2</td><td></td></tr></table>"
                 "<table><tr><th>metric</th><th>a</th><th>b</th><th>difference</th><th>note</th></tr>"
                 "<tr><td>maps</td><td class=n>0</td><td class=n>0</td><td></td><td></td></tr></table>"
                 "</body></html>");
  const auto layout = layout_of(browser, dir, dir.file("bad.html"));
  ASSERT_TRUE(layout.contains("problems"));
  std::string all;
  for (const auto& p : layout["problems"]) all += p.get<std::string>() + "\n";
  for (const char* fault : {"empty heading: h2 \"Charts\"", "text overlaps: \"over\" and \"lap\"",
                            "rules: KUBE-SVC = 26 is 0.2 px wide", "rules: KUBE-SVC = 26 is drawn 0.2 px, small = 2 50.0 px",
                            "rules: th \"KUBE-SVC\" differs but is not marked", "a table without a difference column",
                            "table row td \"rules\" differs but is not marked",
                            "a section that is 0 on every side is not folded"}) {
    EXPECT_NE(all.find(fault), std::string::npos) << fault << "\nin " << all;
  }
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
