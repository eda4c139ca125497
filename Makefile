# dpscope — the two commands: `make demo` and `make test`.
# Everything goes through CMake; this file only names the jobs.

BUILD      ?= build
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 600
FUZZ_TARGET ?=
FORMAT     ?= text
JOBS       ?= $(shell nproc)
CMAKE_GEN  := -G Ninja

.PHONY: all deps deps-build deps-package deps-cross build build-asan build-fuzz demo test test-unit bench fuzz format lint clean \
        bin static image docker-image man install uninstall deb archive krew \
        bin-arm64 static-arm64 image-arm64 deb-arm64 archive-arm64 image-index source-archive release

all: build

# Everything the tests need too (gtest, clang for the BPF fixtures and fuzzing,
# the oracle tools, qemu, shells, chromium); deps-build: compiler and -dev libraries only.
deps:
	@scripts/deps.sh test

deps-build:
	@scripts/deps.sh build

# deps-package: deps-build and dpkg-dev, buildah, jq (make deb, image, release);
# deps-cross: that and the arm64 cross compiler and :arm64 libraries.
deps-package:
	@scripts/deps.sh package

deps-cross:
	@scripts/deps.sh cross

# First configured by `make demo`: without the test suites and the BPF
# fixtures, which need gtest and clang (deps-build has neither). -O2 without
# -g: debug info was a third of the demo's compile time; the unit tier's
# ASan tree and the fuzz tree keep -g for their reports.
$(BUILD)/build.ninja:
	@cmake -S . -B $(BUILD) $(CMAKE_GEN) -DCMAKE_BUILD_TYPE=Release \
	  "-DCMAKE_CXX_FLAGS_RELEASE=-O2 -DNDEBUG" "-DCMAKE_C_FLAGS_RELEASE=-O2 -DNDEBUG" \
	  -DDPSCOPE_TESTS=OFF -DDPSCOPE_BPF_FIXTURES=OFF >/dev/null

# Every target; turns the tests and fixtures on in a tree `make demo` configured.
build: deps $(BUILD)/build.ninja
	@grep -q '^DPSCOPE_TESTS:BOOL=ON' $(BUILD)/CMakeCache.txt && \
	  grep -q '^DPSCOPE_BPF_FIXTURES:BOOL=ON' $(BUILD)/CMakeCache.txt || \
	  cmake -S . -B $(BUILD) -DDPSCOPE_TESTS=ON -DDPSCOPE_BPF_FIXTURES=ON >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

$(ASAN_BUILD)/build.ninja:
	@cmake -S . -B $(ASAN_BUILD) $(CMAKE_GEN) -DCMAKE_BUILD_TYPE=Debug -DDPSCOPE_SANITIZE=ON \
	  -DDPSCOPE_BPF_FIXTURES=OFF >/dev/null

build-asan: deps $(ASAN_BUILD)/build.ninja
	@cmake --build $(ASAN_BUILD) -j $(JOBS) --target dpscope_unit_tests

# libFuzzer targets (tests/fuzz): clang with ASan+UBSan, the parsers' libraries only.
$(FUZZ_BUILD)/build.ninja:
	@CC=clang CXX=clang++ cmake -S . -B $(FUZZ_BUILD) $(CMAKE_GEN) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DDPSCOPE_FUZZ=ON -DDPSCOPE_TESTS=OFF -DDPSCOPE_BPF_FIXTURES=OFF >/dev/null

FUZZ_BINS := iptables_save restore iptables_S nft_json bpftool_prog bpftool_map bpftool_net bpftool_map_dump snapshot intent ipset_save ipvsadm_save ipvsadm_list ip_addr
build-fuzz: deps $(FUZZ_BUILD)/build.ninja
	@cmake --build $(FUZZ_BUILD) -j $(JOBS) --target $(addprefix fuzz_,$(FUZZ_BINS))

# Each target for FUZZ_SECONDS (default 600), one after the other; FUZZ_TARGET=name for one.
fuzz: build-fuzz
	@tests/fuzz/run.sh $(FUZZ_BUILD) long $(FUZZ_SECONDS) $(FUZZ_TARGET)

# The main job: the side-by-side report of the kind cluster's two nodes
# (kube-proxy iptables vs Cilium kube-proxy replacement). Installs only the
# build dependencies and builds the dpscope binary only (`make test` builds
# and installs the rest), and the build's lines go to
# stderr: stdout is the report alone (make demo FORMAT=json | jq .).
demo: deps-build $(BUILD)/build.ninja
	@cmake --build $(BUILD) -j $(JOBS) --target dpscope >&2
	@$(BUILD)/dpscope compare fixtures/snapshots/kind-kube-proxy.json fixtures/snapshots/kind-cilium-kpr.json \
	  --format $(FORMAT)

# dpscope(1), and the completion scripts, into $(BUILD)/share (written at
# build time by the dpscope_docs target; see docs/cli.md to install them by hand).
man: bin
	@echo "$(BUILD)/share/man/man1/dpscope.1 and $(BUILD)/share/completions/dpscope.{bash,zsh,fish}" >&2

# The dpscope binary, its man page and completions: what installing and
# packaging need (no tests, no test dependencies).
bin: deps-build $(BUILD)/build.ninja
	@cmake --build $(BUILD) -j $(JOBS) --target dpscope dpscope_docs >&2

# PREFIX (/usr/local) and DESTDIR as usual; `make uninstall [DESTDIR=...]`
# removes what the last install wrote ($(BUILD)/install_manifest.txt).
PREFIX ?= /usr/local
install: bin
	@DESTDIR="$(DESTDIR)" cmake --install $(BUILD) --prefix "$(PREFIX)"

uninstall:
	@DESTDIR="$(DESTDIR)" cmake --build $(BUILD) --target uninstall

# Unit tier under ASan+UBSan, then the CLI and integration tiers on the
# normal build (root needed for the integration tier; it skips loudly without),
# the fuzz regressions, and the packaging tier: `make release` from these
# trees and the arm64 cross build (its dpscope only), its artifacts run.
test: build build-asan build-fuzz bin-arm64
	@tests/run.sh $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD) $(ARM64_BUILD)

bench: build
	@bench/run.sh $(BUILD)
	@bench/compare.sh $(BUILD)
	@bench/compression.sh $(BUILD)

# Self-contained bundle (binary + shared libraries + loader; Debian has no
# libmnl.a, so no fully static link): a directory that is a root file system.
static: bin
	@scripts/bundle.sh $(BUILD)/dpscope $(BUILD)/bundle

# Release artifacts go to DIST; their names carry VERSION and the Debian
# architecture. Reproducible: every timestamp is SOURCE_DATE_EPOCH, the
# commit's time unless given.
VERSION  := $(shell grep -o '^project.dpscope VERSION [0-9.]*' CMakeLists.txt | cut -d' ' -f3)
ARCH     := $(shell dpkg --print-architecture)
DIST     ?= dist
HOMEPAGE ?= https://example.org/dpscope
IMAGE    ?= localhost/dpscope:$(VERSION)
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
export SOURCE_DATE_EPOCH

# The image (buildah, vfs, no daemon; packaging/Containerfile: scratch + the
# bundle) as an OCI archive for podman load, ctr images import, kind load
# image-archive, skopeo copy (docs/kubectl-debug.md, "The image").
image: deps-package static
	@scripts/image.sh $(BUILD)/bundle $(IMAGE) $(DIST)/dpscope-$(VERSION)-$(ARCH).oci.tar $(HOMEPAGE)

# dpscope_VERSION_ARCH.deb (scripts/deb.sh: the install tree, Depends from dpkg-shlibdeps).
deb: deps-package bin
	@scripts/deb.sh $(BUILD) $(DIST) $(HOMEPAGE)

# dpscope-VERSION-linux-ARCH.tar.gz: the bundle, man page, completions, plugin, LICENSE.
archive: deps-package static
	@scripts/archive.sh $(BUILD)/bundle $(BUILD) $(DIST)/dpscope-$(VERSION)-linux-$(ARCH).tar.gz

# The kubectl plugin's krew archive and manifest (sha256 filled in), for
# RELEASE_URL, where the release's files will be downloadable.
RELEASE_URL ?= $(HOMEPAGE)/releases/download/v$(VERSION)
krew: deps-package
	@scripts/krew-release.sh $(VERSION) $(RELEASE_URL) $(HOMEPAGE) $(DIST)

# linux/arm64, cross-built (cmake/toolchain-aarch64-linux-gnu.cmake); its man
# page and completions are written by the build machine's dpscope (the same
# text: tests/packaging checks the arm64 binary prints it too, under qemu).
ARM64_BUILD ?= build-arm64
$(ARM64_BUILD)/build.ninja:
	@cmake -S . -B $(ARM64_BUILD) $(CMAKE_GEN) -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-aarch64-linux-gnu.cmake \
	  -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_FLAGS_RELEASE=-O2 -DNDEBUG" "-DCMAKE_C_FLAGS_RELEASE=-O2 -DNDEBUG" \
	  -DDPSCOPE_TESTS=OFF -DDPSCOPE_BPF_FIXTURES=OFF -DDPSCOPE_DOC_GENERATOR=$(abspath $(BUILD))/dpscope >/dev/null

bin-arm64: deps-cross bin $(ARM64_BUILD)/build.ninja
	@cmake --build $(ARM64_BUILD) -j $(JOBS) --target dpscope dpscope_docs >&2

# iptables' arm64 extension objects cannot be installed beside amd64's: their
# .debs are downloaded and unpacked into $(ARM64_BUILD)/xtables-root.
static-arm64: bin-arm64
	@scripts/target-xtables.sh arm64 $(ARM64_BUILD)/xtables-root
	@BUNDLE_SYSROOT=$(abspath $(ARM64_BUILD))/xtables-root scripts/bundle.sh $(ARM64_BUILD)/dpscope $(ARM64_BUILD)/bundle

image-arm64: static-arm64
	@scripts/image.sh $(ARM64_BUILD)/bundle $(IMAGE) $(DIST)/dpscope-$(VERSION)-arm64.oci.tar $(HOMEPAGE)

deb-arm64: bin-arm64
	@scripts/deb.sh $(ARM64_BUILD) $(DIST) $(HOMEPAGE)

archive-arm64: static-arm64
	@scripts/archive.sh $(ARM64_BUILD)/bundle $(ARM64_BUILD) $(DIST)/dpscope-$(VERSION)-linux-arm64.tar.gz

# One OCI archive for both architectures (an image index).
image-index: image image-arm64
	@scripts/image-index.sh $(IMAGE) $(DIST)/dpscope-$(VERSION).oci.tar \
	  $(DIST)/dpscope-$(VERSION)-amd64.oci.tar $(DIST)/dpscope-$(VERSION)-arm64.oci.tar

# The sources of the commit (git archive: its files, the commit's time).
source-archive:
	@mkdir -p $(DIST)
	@git archive --format=tar --prefix=dpscope-$(VERSION)/ HEAD | gzip -9n >$(DIST)/dpscope-$(VERSION).tar.gz

# Every artifact, for amd64 and arm64, and SHA256SUMS of them. From a clean
# checkout: a tree with uncommitted changes is refused (its binaries would say
# COMMIT-dirty); RELEASE_DIRTY=1 builds one anyway.
release:
	@[ -z "$$(git status --porcelain --untracked-files=no)" ] || [ -n "$(RELEASE_DIRTY)" ] || \
	  { echo "release: uncommitted changes (git status); commit them, or RELEASE_DIRTY=1" >&2; exit 2; }
	@rm -rf $(DIST)
	@$(MAKE) --no-print-directory deb archive deb-arm64 archive-arm64 image-index krew source-archive
	@cd $(DIST) && sha256sum $$(ls | grep -v -e '^SHA256SUMS$$' | LC_ALL=C sort) >SHA256SUMS
	@echo "release: $(DIST)/" >&2 && sed 's/^/  /' $(DIST)/SHA256SUMS >&2

# The same image with Docker (packaging/Dockerfile; the bundle is the context).
docker-image: static
	@docker build -f packaging/Dockerfile -t $(IMAGE) $(BUILD)/bundle

format:
	@clang-format -i $$(git ls-files '*.cpp' '*.h')

# .clang-format and .clang-tidy over dpscope's own sources (not the tests'
# fixtures), with the compile commands of $(BUILD): a formatting difference
# fails the target; clang-tidy's findings are printed (not yet errors: the
# tree has some, e.g. performance-unnecessary-value-param).
LINT_SOURCES = $$(git ls-files 'src/*.cpp' 'collectors/*.cpp' 'reports/*.cpp')
lint: deps $(BUILD)/build.ninja
	@clang-format --dry-run --Werror $(LINT_SOURCES) $$(git ls-files 'src/*.h' 'collectors/*.h' 'reports/*.h')
	@clang-tidy -p $(BUILD) --quiet $(LINT_SOURCES)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD) $(ARM64_BUILD) $(DIST)
