# boxoffice: `make run` starts the service with demo data; `make test` runs every test.
# Both install missing Debian packages first (scripts/deps.sh).
BUILD_DIR ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: all deps build run test bench bench-full clean format

all: build

deps:
	scripts/deps.sh

build: deps
	cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release
	cmake --build $(BUILD_DIR) -j $(JOBS)

run: build
	scripts/run.sh

test: build
	scripts/test.sh

# Benchmarks against reference engines measured in the same run (bench/all.sh).
bench: build
	bench/all.sh quick

bench-full: build
	bench/all.sh full

format:
	clang-format -i $$(git ls-files '*.cc' '*.h')

clean:
	rm -rf $(BUILD_DIR)
