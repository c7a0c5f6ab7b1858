# The two commands of README.md: `make run` serves, `make test` tests. Both install missing Debian
# packages (scripts/install_deps.sh) and build first.
BUILD ?= build
BUILD_TYPE ?= Release
JOBS ?= $(shell nproc)
MODEL ?= builtin:tiny
WORKERS ?= 2
PORT ?= 50051
GATEWAY_FLAGS ?=

.PHONY: all deps configure build test run clean

all: build

deps:
	@scripts/install_deps.sh

configure: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) > $(BUILD).configure.log 2>&1 || \
		(cat $(BUILD).configure.log; exit 1)

build: configure
	@cmake --build $(BUILD) -j$(JOBS)

test: build
	@ctest --test-dir $(BUILD) --output-on-failure -j$(JOBS) --timeout 300

run: build
	$(BUILD)/bin/smallmind-gateway --model $(MODEL) --workers $(WORKERS) --port $(PORT) $(GATEWAY_FLAGS)

clean:
	rm -rf $(BUILD) $(BUILD).configure.log
