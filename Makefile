# The two commands of the README. Each installs what it needs (Debian packages,
# skipped when present), configures once, builds incrementally, then runs.
BUILD ?= build
JOBS ?= $(shell nproc)

.PHONY: run test check build deps fuzz test-asan test-tsan test-sanitizer-tier gpu-bundle

deps:
	@./scripts/install-deps.sh

$(BUILD)/build.ninja: CMakeLists.txt | deps
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release

build: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

run: build
	./$(BUILD)/bin/sagac train examples/gcn.saga --data examples/data/cora --epochs 200 --lr 0.01 --seed 0 \
	  --log $(BUILD)/cora-gcn.jsonl --plot $(BUILD)/cora-gcn.svg

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# The fast tier (ctest label `fast`: lit and the unit tests but the slow
# few) for after a change; `make test` runs it and the `slow` tier.
check: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) -L fast

# Everything a run on a GPU machine needs, in one tarball (gpu/README.md).
gpu-bundle: build
	./scripts/gpu-bundle.sh $(BUILD) $(BUILD)/gpu-bundle.tar.xz

# libFuzzer on every loader and the front end (clang, build-fuzz/), SECONDS
# per target: test/fuzz/fuzz.sh.
SECONDS ?= 60
fuzz: deps
	./test/fuzz/fuzz.sh $(SECONDS)

# The sanitizer suites (scripts/sanitize.sh says what each runs and why).
test-asan: deps
	./scripts/sanitize.sh address
test-tsan: deps
	./scripts/sanitize.sh thread
# The part of test-asan CI runs after `make test` (label sanitizer-tier).
test-sanitizer-tier: deps
	./scripts/sanitize.sh address --tier
