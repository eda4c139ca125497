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

.PHONY: all deps deps-build build build-asan build-fuzz demo test test-unit bench fuzz format lint clean static image docker-image man

all: build

# Everything the tests need too (gtest, clang for the BPF fixtures and fuzzing,
# the oracle tools, qemu, shells, chromium); deps-build: compiler and -dev libraries only.
deps:
	@scripts/deps.sh test

deps-build:
	@scripts/deps.sh build

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

# dpscope(1), and the completion scripts, into $(BUILD)/share (see docs/cli.md to install them).
man: deps-build $(BUILD)/build.ninja
	@cmake --build $(BUILD) -j $(JOBS) --target dpscope >&2
	@mkdir -p $(BUILD)/share/man/man1 $(BUILD)/share/completions
	@$(BUILD)/dpscope man > $(BUILD)/share/man/man1/dpscope.1
	@for sh in bash zsh fish; do $(BUILD)/dpscope completion $$sh > $(BUILD)/share/completions/dpscope.$$sh; done
	@echo "$(BUILD)/share/man/man1/dpscope.1 and $(BUILD)/share/completions/dpscope.{bash,zsh,fish}" >&2

# Unit tier under ASan+UBSan, then the CLI and integration tiers on the
# normal build (root needed for the integration tier; it skips loudly without).
test: build build-asan build-fuzz
	@tests/run.sh $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD)

bench: build
	@bench/run.sh $(BUILD)
	@bench/compare.sh $(BUILD)
	@bench/compression.sh $(BUILD)

# Self-contained bundle (binary + shared libraries + loader; Debian has no
# libmnl.a, so no fully static link): a directory that is a root file system.
static: build
	@scripts/bundle.sh $(BUILD)/dpscope $(BUILD)/bundle

# Minimal image (scratch + the bundle) with buildah or podman; see docs/kubectl-debug.md.
IMAGE ?= localhost/dpscope:0.1.0
image: static
	@scripts/image.sh $(BUILD)/bundle $(IMAGE) $(BUILD)/dpscope-image.oci.tar

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
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD)
