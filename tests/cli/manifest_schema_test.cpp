// The Kubernetes manifests in packaging/ against the API of every release they
// promise (packaging/kubernetes-fields.txt, a field table written by the
// project): each field of each object is walked; a field the table does not
// know, a value of the wrong type, or a field newer than a release (refused by
// kubectl apply there, or dropped behind a feature gate) is an error, as
// kubeconform's strict mode would say with the release's OpenAPI schema.
// YAML is read with yq (Debian's yq, PyYAML underneath) into JSON.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/support/process.h"

namespace dpscope::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// "1.27" -> 127; "<=1.27" (older than any release listed) -> 0.
int release_number(const std::string& v) {
  if (v.rfind("<=", 0) == 0) return 0;
  const size_t dot = v.find('.');
  return std::stoi(v.substr(0, dot)) * 100 + std::stoi(v.substr(dot + 1));
}

std::string release_name(int n) { return std::to_string(n / 100) + "." + std::to_string(n % 100); }

struct Field {
  std::string value;  // string, boolean, integer, quantity, map, map-quantity, enum:..., TYPE, []TYPE, []string
  int added = 0;
  int enabled = 0;
  std::string source;
};

struct Schema {
  std::vector<int> releases;
  std::map<std::string, std::string> kinds;                   // "apps/v1 DaemonSet" -> type
  std::map<std::string, std::map<std::string, Field>> types;  // type -> field -> Field
  std::vector<std::string> errors;                            // lines of the table that do not parse
};

Schema parse_schema(const std::string& text) {
  Schema s;
  std::istringstream in(text);
  int number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    if (line.empty() || line[0] == '#') continue;
    std::istringstream words(line);
    std::string a, b, c, d, e;
    words >> a >> b >> c;
    if (a == "release") {
      s.releases.push_back(release_number(b));
      continue;
    }
    if (a == "kind") {
      words >> d;
      s.kinds[b + " " + c] = d;
      continue;
    }
    words >> d >> e;
    std::string source;
    std::getline(words, source);
    if (e.empty() || source.find_first_not_of(' ') == std::string::npos) {
      s.errors.push_back("packaging/kubernetes-fields.txt:" + std::to_string(number) + ": needs TYPE FIELD VALUE ADDED ENABLED SOURCE");
      continue;
    }
    s.types[a][b] = Field{c, release_number(d), release_number(e), source.substr(source.find_first_not_of(' '))};
  }
  return s;
}

const Schema& schema() {
  static const Schema s = parse_schema(read_text(source_path("packaging/kubernetes-fields.txt")));
  return s;
}

// Errors of `value` at `path` as a VALUE of the table, on `release`.
void check_value(const Schema& s, const json& value, const std::string& type, const std::string& path, int release,
                 std::vector<std::string>& errors);

void check_object(const Schema& s, const json& object, const std::string& type, const std::string& path, int release,
                  std::vector<std::string>& errors) {
  const auto known = s.types.find(type);
  if (known == s.types.end()) {
    errors.push_back(path + ": type " + type + " is not in packaging/kubernetes-fields.txt");
    return;
  }
  if (!object.is_object()) {
    errors.push_back(path + ": is not an object (" + type + ")");
    return;
  }
  for (const auto& [name, v] : object.items()) {
    const std::string at = path.empty() ? name : path + "." + name;
    const auto f = known->second.find(name);
    if (f == known->second.end()) {
      errors.push_back(at + ": unknown field of " + type + " (not in packaging/kubernetes-fields.txt)");
      continue;
    }
    if (f->second.added > release) {
      errors.push_back(at + ": added in Kubernetes " + release_name(f->second.added) + "; kubectl apply on " +
                       release_name(release) + " refuses it as an unknown field (" + f->second.source + ")");
      continue;
    }
    if (f->second.enabled > release) {
      errors.push_back(at + ": on Kubernetes " + release_name(release) + " behind a feature gate that is off by default " +
                       "(on from " + release_name(f->second.enabled) + "): the API server drops it (" + f->second.source + ")");
      continue;
    }
    check_value(s, v, f->second.value, at, release, errors);
  }
}

void check_value(const Schema& s, const json& value, const std::string& type, const std::string& path, int release,
                 std::vector<std::string>& errors) {
  auto wrong = [&](const std::string& want) { errors.push_back(path + ": " + value.dump() + " is not " + want); };
  if (type.rfind("[]", 0) == 0) {
    if (!value.is_array()) return wrong("a list");
    for (size_t i = 0; i < value.size(); ++i) {
      check_value(s, value[i], type.substr(2), path + "[" + std::to_string(i) + "]", release, errors);
    }
  } else if (type == "string") {
    if (!value.is_string()) wrong("a string");
  } else if (type == "boolean") {
    if (!value.is_boolean()) wrong("true or false");
  } else if (type == "integer") {
    if (!value.is_number_integer()) wrong("an integer");
  } else if (type == "quantity") {
    if (!value.is_string() && !value.is_number()) wrong("a quantity");
  } else if (type == "map" || type == "map-quantity") {
    if (!value.is_object()) return wrong("a map");
    for (const auto& [k, v] : value.items()) {
      const bool ok = type == "map" ? v.is_string() : (v.is_string() || v.is_number());
      if (!ok) errors.push_back(path + "." + k + ": " + v.dump() + " is not a " + (type == "map" ? "string" : "quantity"));
    }
  } else if (type.rfind("enum:", 0) == 0) {
    const std::string allowed = "|" + type.substr(5) + "|";
    if (!value.is_string() || allowed.find("|" + value.get<std::string>() + "|") == std::string::npos) {
      wrong("one of " + type.substr(5));
    }
  } else {
    check_object(s, value, type, path, release, errors);
  }
}

// The documents of a YAML file as JSON (yq -c: one document a line), read
// once per file (yq is a Python program: ~0.5 s a start).
const std::vector<json>& documents(const std::string& yaml_file) {
  static std::map<std::string, std::vector<json>> cache;
  if (const auto hit = cache.find(yaml_file); hit != cache.end()) return hit->second;
  RunResult r = run({"yq", "-c", ".", yaml_file});
  EXPECT_EQ(r.exit_code, 0) << yaml_file << ": " << r.err;
  std::vector<json> out;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    json doc = json::parse(line);
    if (!doc.is_null()) out.push_back(std::move(doc));
  }
  return cache[yaml_file] = std::move(out);
}

// Every error of every document of `yaml_file` on `release`, each prefixed with
// the file, the document's kind/name and the release.
std::vector<std::string> check_manifest(const std::string& label, const std::string& yaml_file, int release) {
  const Schema& s = schema();
  std::vector<std::string> errors;
  size_t n = 0;
  for (const json& doc : documents(yaml_file)) {
    ++n;
    const std::string api = doc.value("apiVersion", ""), kind = doc.value("kind", "");
    const std::string where = label + ": document " + std::to_string(n) + " (" + kind + " " +
                              doc.value("/metadata/name"_json_pointer, std::string()) + "), Kubernetes " +
                              release_name(release) + ": ";
    const auto k = s.kinds.find(api + " " + kind);
    if (k == s.kinds.end()) {
      errors.push_back(where + api + " " + kind + " is not a kind packaging/kubernetes-fields.txt knows");
      continue;
    }
    std::vector<std::string> mine;
    check_object(s, doc, k->second, "", release, mine);
    for (auto& e : mine) errors.push_back(where + e);
  }
  if (n == 0) errors.push_back(label + ": no Kubernetes object");
  return errors;
}

// The manifests: packaging/*.yaml (packaging/krew/ holds krew's plugin index
// entry, not Kubernetes objects).
std::vector<fs::path> manifests() {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(source_path("packaging"))) {
    if (e.is_regular_file() && (e.path().extension() == ".yaml" || e.path().extension() == ".yml")) {
      out.push_back(e.path());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool yq_missing() { return run({"sh", "-c", "command -v yq"}).exit_code != 0; }

TEST(ManifestSchema, TheFieldTableIsWellFormed) {
  const Schema& s = schema();
  EXPECT_TRUE(s.errors.empty()) << s.errors.front();
  ASSERT_GE(s.releases.size(), 2u);
  // Consecutive releases, none skipped between the oldest and the newest.
  for (size_t i = 1; i < s.releases.size(); ++i) EXPECT_EQ(s.releases[i], s.releases[i - 1] + 1) << i;
  EXPECT_EQ(s.releases.front(), 127);  // the oldest the docs promise
  EXPECT_GE(s.releases.back(), 137);   // the newest supported on 2026-12-07
  for (const auto& [type, fields] : s.types) {
    for (const auto& [name, f] : fields) {
      EXPECT_LE(f.added, f.enabled) << type << "." << name;
      EXPECT_FALSE(f.source.empty()) << type << "." << name;
      const std::string v = f.value.rfind("[]", 0) == 0 ? f.value.substr(2) : f.value;
      const bool scalar = v == "string" || v == "boolean" || v == "integer" || v == "quantity" || v == "map" ||
                          v == "map-quantity" || v.rfind("enum:", 0) == 0;
      EXPECT_TRUE(scalar || s.types.count(v)) << type << "." << name << ": unknown value type " << v;
    }
  }
}

TEST(ManifestSchema, EveryManifestFitsEveryRelease) {
  if (yq_missing()) GTEST_SKIP() << "SKIPPED: yq not installed (make deps installs it)";
  const auto files = manifests();
  ASSERT_FALSE(files.empty());
  for (const auto& f : files) {
    const std::string label = "packaging/" + f.filename().string();
    for (int release : schema().releases) {
      for (const auto& e : check_manifest(label, f.string(), release)) ADD_FAILURE() << e;
    }
  }
}

// The checker is seen to refuse what it must: the manifest as it was
// (recursiveReadOnly, refused before 1.30 and dropped on 1.30), a misspelt
// field, a value of the wrong type, and an unknown kind.
TEST(ManifestSchema, RefusesUnknownNewerAndMistypedFields) {
  if (yq_missing()) GTEST_SKIP() << "SKIPPED: yq not installed (make deps installs it)";
  TempDir dir;
  const std::string now = read_text(source_path("packaging/daemonset.yaml"));
  auto variant = [&](const std::string& name, const std::string& from, const std::string& to) {
    const size_t at = now.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    std::string text = now;
    if (at != std::string::npos) text.replace(at, from.size(), to);
    write_text(dir.file(name), text);
    return dir.file(name);
  };
  const std::string mount = "              mountPath: /host\n              readOnly: true\n";
  const std::string rro = variant("rro.yaml", mount, mount + "              recursiveReadOnly: IfPossible\n");
  for (int release : schema().releases) {
    const auto errors = check_manifest("rro.yaml", rro, release);
    if (release < 130) {
      ASSERT_EQ(errors.size(), 1u) << release;
      EXPECT_NE(errors[0].find("spec.template.spec.containers[0].volumeMounts[1].recursiveReadOnly: added in "
                               "Kubernetes 1.30; kubectl apply on " + release_name(release) +
                               " refuses it as an unknown field"),
                std::string::npos)
          << errors[0];
    } else if (release == 130) {
      ASSERT_EQ(errors.size(), 1u);
      EXPECT_NE(errors[0].find("behind a feature gate that is off by default (on from 1.31)"), std::string::npos)
          << errors[0];
    } else {
      EXPECT_TRUE(errors.empty()) << release << ": " << errors.front();
    }
  }
  const auto typo = check_manifest("typo.yaml", variant("typo.yaml", "hostPID: true", "hostPid: true"), 137);
  ASSERT_EQ(typo.size(), 1u);
  EXPECT_NE(typo[0].find("spec.template.spec.hostPid: unknown field of PodSpec"), std::string::npos) << typo[0];
  const auto type = check_manifest("type.yaml", variant("type.yaml", "hostPID: true", "hostPID: \"yes\""), 137);
  ASSERT_EQ(type.size(), 1u);
  EXPECT_NE(type[0].find("spec.template.spec.hostPID: \"yes\" is not true or false"), std::string::npos) << type[0];
  const auto value = check_manifest("enum.yaml", variant("enum.yaml", "imagePullPolicy: IfNotPresent",
                                                         "imagePullPolicy: IfMissing"), 137);
  ASSERT_EQ(value.size(), 1u);
  EXPECT_NE(value[0].find("imagePullPolicy: \"IfMissing\" is not one of Always|Never|IfNotPresent"), std::string::npos)
      << value[0];
  const auto kind = check_manifest("kind.yaml", variant("kind.yaml", "apiVersion: apps/v1", "apiVersion: extensions/v1beta1"), 137);
  ASSERT_EQ(kind.size(), 1u);
  EXPECT_NE(kind[0].find("extensions/v1beta1 DaemonSet is not a kind packaging/kubernetes-fields.txt knows"),
            std::string::npos)
      << kind[0];
}

// Linux nodes only: the image is a Linux one, and what it reads is Linux's.
TEST(ManifestSchema, TheDaemonSetRunsOnLinuxNodesOnly) {
  if (yq_missing()) GTEST_SKIP() << "SKIPPED: yq not installed (make deps installs it)";
  bool found = false;
  for (const json& doc : documents(source_path("packaging/daemonset.yaml"))) {
    if (doc["kind"] != "DaemonSet") continue;
    found = true;
    EXPECT_EQ(doc["/spec/template/spec/nodeSelector"_json_pointer], json::parse(R"({"kubernetes.io/os": "linux"})"));
    // The tolerations still let it onto every Linux node, tainted ones included.
    EXPECT_EQ(doc["/spec/template/spec/tolerations"_json_pointer], json::parse(R"([{"operator": "Exists"}])"));
  }
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace dpscope::test
