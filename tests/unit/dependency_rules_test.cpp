// The rooms' dependency rules (ARCHITECTURE.md), read from the sources' own
// #include lines: a collector never includes another collector's headers,
// reports never include a collector, the model includes nothing above it,
// util includes nothing of the project. A new include that breaks a rule
// fails here, naming the file, the line and the rule.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace dpscope {
namespace {

namespace fs = std::filesystem;

// Each room (a directory of the repository) and the rooms its files may include.
// A room always includes itself.
const std::map<std::string, std::set<std::string>>& rules() {
  static const std::map<std::string, std::set<std::string>> table = {
      {"src/util", {}},
      {"src/io", {"src/util"}},
      {"src/model", {"src/io", "src/util"}},
      {"src/decoders", {"src/model", "src/util"}},
      {"collectors/netfilter", {"src/decoders", "src/io", "src/model", "src/util"}},
      {"collectors/bpf", {"src/decoders", "src/io", "src/model", "src/util"}},
      {"collectors/ipvs", {"src/decoders", "src/io", "src/model", "src/util"}},
      {"collectors/proc", {"src/decoders", "src/io", "src/model", "src/util"}},
      {"collectors/import", {"src/decoders", "src/io", "src/model", "src/util"}},
      {"src/analysis", {"src/model", "src/util"}},
      {"src/inputs", {"src/io", "src/model", "src/util"}},
      {"reports", {"src/analysis", "src/inputs", "src/io", "src/model", "src/util"}},
  };
  return table;
}

// The room a quoted include names: "collectors/bpf/bpf.h" -> collectors/bpf,
// "reports/render.h" -> reports, "model/json.h" -> src/model (src/ is on the
// include path). "" for a name of no room.
std::string room_of_include(const std::string& name) {
  const size_t slash = name.find('/');
  if (slash == std::string::npos) return "";
  const std::string first = name.substr(0, slash);
  if (first == "collectors") {
    const size_t second = name.find('/', slash + 1);
    return second == std::string::npos ? "" : name.substr(0, second);
  }
  if (first == "reports") return "reports";
  if (first == "tests") return "tests";
  return "src/" + first;
}

struct Include {
  std::string file;  // relative to the source directory
  size_t line = 0;
  std::string name;
};

std::vector<Include> includes_of_room(const std::string& room) {
  std::vector<Include> out;
  static const std::regex quoted(R"re(^\s*#\s*include\s*"([^"]+)")re");
  const fs::path dir = fs::path(DPSCOPE_SOURCE_DIR) / room;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    const std::string ext = entry.path().extension().string();
    if (!entry.is_regular_file() || (ext != ".cpp" && ext != ".h" && ext != ".c")) continue;
    std::ifstream in(entry.path());
    std::string text;
    for (size_t line = 1; std::getline(in, text); ++line) {
      std::smatch m;
      if (std::regex_search(text, m, quoted)) {
        out.push_back({fs::relative(entry.path(), DPSCOPE_SOURCE_DIR).string(), line, m[1].str()});
      }
    }
  }
  return out;
}

// The includes of `room` that break its rule, as "FILE:LINE: includes NAME".
std::vector<std::string> violations(const std::string& room) {
  const std::set<std::string>& allowed = rules().at(room);
  std::vector<std::string> out;
  for (const Include& inc : includes_of_room(room)) {
    const std::string target = room_of_include(inc.name);
    if (target == room || allowed.count(target) != 0) continue;
    // A generated header (git_commit.h) or a system-style name: not a room.
    if (target.empty() && !fs::exists(fs::path(DPSCOPE_SOURCE_DIR) / room / inc.name)) continue;
    out.push_back(inc.file + ":" + std::to_string(inc.line) + ": includes \"" + inc.name + "\" (" +
                  (target.empty() ? "a path of no room" : target) + ")");
  }
  return out;
}

TEST(DependencyRules, EveryRoomIncludesOnlyTheRoomsBelowIt) {
  size_t files_with_includes = 0;
  for (const auto& [room, allowed] : rules()) {
    if (!fs::exists(fs::path(DPSCOPE_SOURCE_DIR) / room)) continue;  // a room not made yet
    std::set<std::string> files;
    for (const Include& inc : includes_of_room(room)) files.insert(inc.file);
    files_with_includes += files.size();
    for (const std::string& v : violations(room)) ADD_FAILURE() << v << ": " << room << " may include only itself and "
                                                                << ::testing::PrintToString(allowed);
  }
  // The scan itself works: the tree has well over a hundred such files.
  EXPECT_GT(files_with_includes, 100u);
}

TEST(DependencyRules, EveryRoomOfTheTreeHasARule) {
  // A new directory under collectors/ or src/ must be given its place here
  // (and in ARCHITECTURE.md) before it can include anything.
  for (const std::string parent : {"collectors", "src"}) {
    for (const auto& entry : fs::directory_iterator(fs::path(DPSCOPE_SOURCE_DIR) / parent)) {
      if (!entry.is_directory()) continue;
      const std::string room = parent + "/" + entry.path().filename().string();
      if (room == "src/cli") continue;  // the commands: may include every room
      EXPECT_EQ(rules().count(room), 1u) << room << " has no dependency rule";
    }
  }
}

TEST(DependencyRules, TheCheckSeesACrossCollectorInclude) {
  // What the rules are read with: a collector naming another collector's
  // header, reports naming a collector, the model naming analysis.
  EXPECT_EQ(room_of_include("collectors/netfilter/netfilter.h"), "collectors/netfilter");
  EXPECT_EQ(room_of_include("collectors/bpf/lb.h"), "collectors/bpf");
  EXPECT_EQ(room_of_include("analysis/analysis.h"), "src/analysis");
  EXPECT_EQ(room_of_include("reports/render.h"), "reports");
  EXPECT_EQ(rules().at("collectors/ipvs").count("collectors/netfilter"), 0u);
  EXPECT_EQ(rules().at("reports").count("collectors/bpf"), 0u);
  EXPECT_EQ(rules().at("src/model").count("src/analysis"), 0u);
  EXPECT_TRUE(rules().at("src/util").empty());
}

}  // namespace
}  // namespace dpscope
