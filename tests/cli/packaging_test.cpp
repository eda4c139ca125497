// What ships to a cluster: the image files (packaging/Dockerfile for docker,
// packaging/Containerfile for buildah/podman) against the bundle they copy,
// and the krew manifest with its release script. No Docker engine runs here:
// these are the checks that can be made without one (see docs/kubectl-debug.md).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstring>
#include <filesystem>
#include <sstream>

#include "tests/support/process.h"

namespace dpscope::test {
namespace {

namespace fs = std::filesystem;

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// The instructions of a Dockerfile/Containerfile: lines that are not comments
// or blank, continuation lines joined.
std::vector<std::string> instructions(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string pending;
  for (std::string line; std::getline(in, line);) {
    if (pending.empty() && (line.empty() || line[0] == '#')) continue;
    if (!line.empty() && line.back() == '\\') {
      pending += line.substr(0, line.size() - 1);
      continue;
    }
    out.push_back(pending + line);
    pending.clear();
  }
  return out;
}

TEST(ImageFiles, DockerfileAndContainerfileBuildTheSameImage) {
  const auto docker = instructions(read_text(source_path("packaging/Dockerfile")));
  const auto podman = instructions(read_text(source_path("packaging/Containerfile")));
  EXPECT_EQ(docker, podman);
  ASSERT_FALSE(docker.empty());
  EXPECT_EQ(docker[0], "FROM scratch");
  // Only instructions docker's builder knows, and nothing fetched from the network.
  for (const auto& i : docker) {
    const std::string word = i.substr(0, i.find(' '));
    EXPECT_TRUE(word == "FROM" || word == "COPY" || word == "ENV" || word == "ENTRYPOINT" || word == "LABEL") << i;
    EXPECT_FALSE(contains(i, "http")) << i;
  }
}

// The bundle (the build context) holds what the image files name and what
// the plugin and the DaemonSet run in the image.
TEST(ImageFiles, TheBundleHoldsWhatTheImageAndItsUsersNeed) {
  TempDir dir;
  const std::string bundle = dir.file("bundle");
  RunResult b = run({source_path("scripts/bundle.sh"), dpscope_bin(), bundle});
  ASSERT_EQ(b.exit_code, 0) << b.err;
  const auto docker = instructions(read_text(source_path("packaging/Dockerfile")));
  for (const auto& i : docker) {
    if (i.rfind("COPY ", 0) == 0) {
      std::istringstream words(i.substr(5));
      std::string src, dst;
      words >> src >> dst;
      EXPECT_TRUE(fs::exists(bundle + "/" + src)) << i;
      EXPECT_EQ(dst, "/") << i;
    }
    if (i.rfind("ENTRYPOINT ", 0) == 0) {
      const size_t a = i.find('"') + 1;
      const std::string entry = i.substr(a, i.find('"', a) - a);
      struct stat st {};
      ASSERT_EQ(::stat((bundle + entry).c_str(), &st), 0) << entry;
      EXPECT_TRUE(st.st_mode & S_IXUSR) << entry;
    }
    if (i.rfind("ENV PATH=", 0) == 0) {
      EXPECT_TRUE(fs::is_directory(bundle + i.substr(9))) << i;
    }
  }
  // What the plugin and the DaemonSet call inside the image.
  const std::string plugin = read_text(source_path("packaging/kubectl-dpscope"));
  for (const char* var : {"DPSCOPE_IN_IMAGE=", "ONCE_IN_IMAGE="}) {
    const size_t at = plugin.find(std::string("\n") + var);
    ASSERT_NE(at, std::string::npos) << var;
    const std::string path = plugin.substr(at + 1 + std::strlen(var), plugin.find('\n', at + 1) - at - 1 - std::strlen(var));
    EXPECT_TRUE(fs::exists(bundle + path)) << var << path;
  }
  const std::string ds = read_text(source_path("packaging/daemonset.yaml"));
  EXPECT_TRUE(contains(ds, "- /usr/local/bin/dpscope-once\n"));
  EXPECT_TRUE(fs::exists(bundle + "/usr/local/bin/dpscope-once"));
  // The pod writes its snapshot to /tmp: there, and writable by anyone (sticky).
  struct stat tmp {};
  ASSERT_EQ(::stat((bundle + "/tmp").c_str(), &tmp), 0);
  EXPECT_EQ(tmp.st_mode & 07777, 01777u);
  // The compression libraries travel with the binary.
  const std::string manifest = read_text(bundle + "/MANIFEST");
  EXPECT_TRUE(contains(manifest, "libzstd.so")) << manifest;
  EXPECT_TRUE(contains(manifest, "libz.so")) << manifest;
}

// packaging/krew/dpscope.yaml: a manifest a user could submit once
// scripts/krew-release.sh has filled in the release's archive and sha256.
TEST(KrewManifest, TemplateAndReleaseAgree) {
  const std::string tmpl = read_text(source_path("packaging/krew/dpscope.yaml"));
  for (const char* needed : {"apiVersion: krew.googlecontainertools.github.com/v1alpha2", "kind: Plugin",
                             "  name: dpscope\n", "bin: kubectl-dpscope", "shortDescription: ",
                             "os: linux\n          arch: amd64", "os: linux\n          arch: arm64",
                             "os: darwin\n          arch: amd64", "os: darwin\n          arch: arm64",
                             "uri: RELEASE_URI", "sha256: RELEASE_SHA256", "dpscope-VERSION.oci.tar",
                             "kind load image-archive", "ctr -n k8s.io images import", "--image REGISTRY/dpscope:0.1.0"}) {
    EXPECT_TRUE(contains(tmpl, needed)) << "packaging/krew/dpscope.yaml lacks: " << needed;
  }
  TempDir dir;
  RunResult r = run({source_path("scripts/krew-release.sh"), "0.1.0", "https://example.org/releases/v0.1.0",
                     "https://example.org/dpscope", dir.path()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string archive = dir.file("kubectl-dpscope-0.1.0.tar.gz");
  const std::string sha = run({"sha256sum", archive}).out.substr(0, 64);
  const std::string release = read_text(dir.file("dpscope.yaml"));
  EXPECT_TRUE(contains(release, "uri: https://example.org/releases/v0.1.0/kubectl-dpscope-0.1.0.tar.gz")) << release;
  size_t shas = 0;
  for (size_t at = 0; (at = release.find("sha256: " + sha, at)) != std::string::npos; ++at) ++shas;
  EXPECT_EQ(shas, 4u);  // linux and darwin, amd64 and arm64
  EXPECT_TRUE(contains(release, "  version: v0.1.0\n"));
  EXPECT_FALSE(contains(release, "uri: RELEASE_URI"));
  // The archive holds the files the manifest installs, the plugin executable.
  RunResult list = run({"tar", "-tvzf", archive});
  EXPECT_TRUE(contains(list.out, "-rwxr-xr-x 0/0") && contains(list.out, " kubectl-dpscope\n")) << list.out;
  EXPECT_TRUE(contains(list.out, " README.md\n")) << list.out;
  EXPECT_TRUE(contains(list.out, " LICENSE\n")) << list.out;
  // Reproducible: the same bytes a second time.
  ASSERT_EQ(run({source_path("scripts/krew-release.sh"), "0.1.0", "https://example.org/releases/v0.1.0",
                 "https://example.org/dpscope", dir.file("again")}).exit_code, 0);
  EXPECT_EQ(read_text(dir.file("again/kubectl-dpscope-0.1.0.tar.gz")), read_text(archive));
  // A version the plugin does not carry is refused.
  RunResult wrong = run({source_path("scripts/krew-release.sh"), "9.9.9", "u", "h", dir.file("w")});
  EXPECT_EQ(wrong.exit_code, 2);
  EXPECT_TRUE(contains(wrong.err, "PLUGIN_VERSION=0.1.0, not 9.9.9")) << wrong.err;
}

}  // namespace
}  // namespace dpscope::test
