# The two commands of README.md: `make run` serves, `make test` tests. Both install missing Debian
# packages (scripts/install_deps.sh) and build first: `make run` only the serving programs and
# their packages (install_deps.sh --serve: no test packages, no npm ci).
BUILD ?= build
BUILD_TYPE ?= Release
JOBS ?= $(shell nproc)
MODEL ?= builtin:stories260K
WORKERS ?= 2
PORT ?= 50051
# The OpenAI-compatible HTTP API (http://localhost:8000/v1); HTTP_PORT= turns it off.
HTTP_PORT ?= 8000
GATEWAY_FLAGS ?=
# Flags for every worker the gateway spawns, e.g. WORKER_FLAGS="--kv-memory-mb 4096 --max-seqs 64".
WORKER_FLAGS ?=
# The tests' data folder (golden outputs, models, tokenizer vectors); without it ~51 tests skip.
SHARED_DATA ?= ../shared

# What `make run` builds: the gateway, the worker it spawns and the client.
SERVE_TARGETS = smallmind-gateway smallmind-worker smallmind

.PHONY: all deps serve-deps configure serve-configure build serve-build test check-test-data run \
	clean

all: build

deps:
	@scripts/install_deps.sh

serve-deps:
	@scripts/install_deps.sh --serve

CONFIGURE = cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) \
	-DSMALLMIND_SHARED_DATA_DIR=$(abspath $(SHARED_DATA)) > $(BUILD).configure.log 2>&1 || \
	(cat $(BUILD).configure.log; exit 1)

configure: deps
	@$(CONFIGURE)

serve-configure: serve-deps
	@$(CONFIGURE)

build: configure
	@cmake --build $(BUILD) -j$(JOBS)

serve-build: serve-configure
	@cmake --build $(BUILD) -j$(JOBS) --target $(SERVE_TARGETS)

test: check-test-data build
	@ctest --test-dir $(BUILD) --output-on-failure -j$(JOBS) --timeout 300

# Under CI (CI set to anything but "", 0 or false) a missing test data folder stops the run here,
# before the build: the tests that need it would only skip, and a green run would say nothing about
# them. Each of those tests also fails instead of skipping under CI (tests/testing/shared_data.h).
check-test-data:
	@case "$${CI:-}" in ""|0|false|FALSE|False) ;; *) \
		if [ ! -f "$(SHARED_DATA)/models/golden-greedy.jsonl" ]; then \
			echo "make test: CI=$$CI and the test data folder $(abspath $(SHARED_DATA)) is missing" \
				"(no models/golden-greedy.jsonl): put ../shared beside the checkout or set" \
				"SHARED_DATA=DIR; without CI=true the tests that need it skip instead." >&2; \
			exit 1; \
		fi;; \
	esac

run: serve-build
	$(BUILD)/bin/smallmind-gateway --model $(MODEL) --workers $(WORKERS) --port $(PORT) \
	  $(if $(HTTP_PORT),--http-port $(HTTP_PORT)) $(if $(WORKER_FLAGS),--worker-flags="$(WORKER_FLAGS)") \
	  $(GATEWAY_FLAGS)

clean:
	rm -rf $(BUILD) $(BUILD).configure.log
