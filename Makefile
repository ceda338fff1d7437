# boxoffice: `make run` starts the service with demo data; `make test` runs every test.
# Both install missing Debian packages first (scripts/deps.sh).
BUILD_DIR ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: all deps build run test upgrade-test test-asan test-tsan thread-safety fuzz chaos check bench bench-full deb package-test monitoring-test clean format

all: build

deps:
	scripts/deps.sh

build: deps
	scripts/configure.sh $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release
	cmake --build $(BUILD_DIR) -j $(JOBS)

run: build
	scripts/run.sh

test: build
	scripts/test.sh

# The Debian package, build/boxoffice_<version>_amd64.deb (CPack; deploy/debian/).
deb: build
	cd $(BUILD_DIR) && cpack -G DEB

# The package checked with lintian and systemd-analyze, its settings and its binary served.
package-test: build
	scripts/deps.sh package
	scripts/package-test.sh $(BUILD_DIR)

# The alert rules' unit tests (promtool) and every metric name in the alerts and the
# dashboard against the /metrics of a running serve (deploy/).
monitoring-test: build
	scripts/deps.sh package
	scripts/monitoring-test.sh $(BUILD_DIR)

# The previous release (scripts/previous-release, built from git into build-previous/) and
# this one side by side on one PostgreSQL database, as in a rolling restart.
upgrade-test: build
	scripts/upgrade-test.sh

# Every test again under AddressSanitizer + UndefinedBehaviorSanitizer (build-asan/).
test-asan: deps
	scripts/sanitize.sh address

# The in-process race and concurrency suites under ThreadSanitizer (build-tsan/).
test-tsan: deps
	scripts/sanitize.sh thread

# Clang's thread-safety analysis of the lock annotations (core/sync.h), no binary.
thread-safety:
	scripts/deps.sh fuzz
	scripts/thread-safety.sh

# libFuzzer targets (fuzz/), FUZZ_SECONDS each, from the committed seed corpora.
FUZZ_SECONDS ?= 60
fuzz: deps
	scripts/fuzz.sh $(FUZZ_SECONDS)

# Engine faults under a randomized history (bench/chaos.sh), CHAOS_SECONDS long.
CHAOS_SECONDS ?= 120
chaos: build
	scripts/deps.sh chaos
	scripts/chaos.sh $(CHAOS_SECONDS)

# What CI runs (scripts/check.sh): every test under ASan+UBSan, the premiere with faults
# and the seat picker on the release build, the concurrency suites under TSan, 30 s of
# fuzzing per target.
check: deps
	scripts/check.sh

# Benchmarks against reference engines measured in the same run (bench/all.sh).
bench: build
	bench/all.sh quick

bench-full: build
	bench/all.sh full

format:
	clang-format -i $$(git ls-files '*.cc' '*.h')

clean:
	rm -rf $(BUILD_DIR)
