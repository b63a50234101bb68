# Burrow — build, test and benchmark entry points. `make test` is the README's test command and
# what .ci/run calls: it installs everything it needs (apt packages, the interop venv) itself.
SHELL := /bin/bash
VENV ?= $(CURDIR)/.venv
PY := $(VENV)/bin/python
APT_PACKAGES := libsecp256k1-dev libsodium-dev libsqlcipher-dev libbluetooth-dev libsystemd-dev dbus python3-dbus python3-dbusmock libssl3 openssl pkg-config python3-venv strace zbar-tools gpsd gpsd-clients libxml2-utils chromium chromium-driver libjs-leaflet
PIP_PACKAGES := mdk-python==0.8.0 nostr-sdk==0.45.1 nostr-relay==1.14 noiseprotocol==0.3.1 \
  doubleratchet==1.3.0 cryptography==50.0.2 pydantic==2.14.4 typing-extensions==4.16.0
# Tests run in release with -enable-testing so one build serves tests, the CLI tests and benchmarks.
SWIFT_RELEASE := -c release -Xswiftc -enable-testing

.PHONY: setup setup-system setup-python build build-tests test bench demo fuzz soak clean-venv

setup: setup-system setup-python

setup-system:
	@missing=""; for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	fi

setup-python:
	@[ -x $(PY) ] || python3 -m venv $(VENV)
	@$(PY) -m pip install -q --disable-pip-version-check $(PIP_PACKAGES)
	@$(PY) scripts/patch_mdk.py

# The same flags as the tests, so `make build`, `make demo` and `make test` share one build.
build: setup-system
	swift build $(SWIFT_RELEASE) --product burrow

# A family's day on this machine with the embedded relay: a transcript and demo-map.svg (git-ignored).
demo: build
	BURROW_BIN=$(CURDIR)/.build/release/burrow scripts/demo.sh

build-tests: setup-system
	swift build $(SWIFT_RELEASE) --build-tests

# Two shards side by side (scripts/test.sh): the interop suites beside the rest.
test: setup build-tests
	BURROW_VENV=$(VENV) BURROW_BIN=$(CURDIR)/.build/release/burrow scripts/test.sh

bench: setup build-tests
	swift build $(SWIFT_RELEASE) --product burrow-bench
	swift build $(SWIFT_RELEASE) --product burrow-relay
	BURROW_VENV=$(VENV) .build/release/burrow-bench | tee bench-results.md

# Soak (not in CI): the race suites SOAK_RUNS times each (default 10) with a fresh BURROW_TEST_SEED
# per run; failures name the seed that replays them. Writes soak-results.md.
soak: setup build-tests
	BURROW_VENV=$(VENV) BURROW_BIN=$(CURDIR)/.build/release/burrow scripts/soak.sh

# Fuzzing (not in CI): the Fuzz/ package links each target in Sources/FuzzTargets with libFuzzer
# and AddressSanitizer (a second, instrumented build in Fuzz/.build), then runs each target until
# FUZZ_RUNS executions or FUZZ_MAX_TIME seconds, from the seeds in Tests/Fixtures/fuzz/<target>
# plus the generated ones, keeping what it learns in Fuzz/.build/corpus/<target>. Executions and
# crashes per target go to fuzz-results.md (libFuzzer stops a target at its first crash, timeout
# or out-of-memory input and saves it in Fuzz/.build/artifacts/).
FUZZ_TARGETS ?= mls-message group-data event-json nip44 marmot-event group-event pigeon-frame pigeon-card mesh-packet mesh-fragment
FUZZ_RUNS ?= 1000000
FUZZ_MAX_TIME ?= 300
FUZZ_DIR := $(CURDIR)/Fuzz/.build

fuzz: setup-system
	@# SwiftPM's --sanitize=fuzzer makes it leave `main` to libFuzzer; swiftc takes only its last
	@# -sanitize flag, so coverage and ASan go together in one.
	swift build --package-path Fuzz -c release --sanitize=fuzzer -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library
	@mkdir -p $(FUZZ_DIR)/artifacts $(FUZZ_DIR)/logs
	@{ echo "# Fuzzing results"; echo; \
	  echo "libFuzzer + AddressSanitizer, release build; limits: $(FUZZ_RUNS) executions or $(FUZZ_MAX_TIME) s per target ($$(date -u +%Y-%m-%dT%H:%MZ), $$(git rev-parse --short HEAD 2>/dev/null))."; echo; \
	  echo "| target | executions | exec/s | seconds | corpus | crashes |"; echo "|---|---:|---:|---:|---:|---:|"; } > fuzz-results.md
	@status=0; for t in $(FUZZ_TARGETS); do \
	  corpus=$(FUZZ_DIR)/corpus/$$t; mkdir -p $$corpus; rm -f $(FUZZ_DIR)/artifacts/$$t-*; \
	  echo "fuzzing $$t"; start=$$(date +%s); \
	  BURROW_FUZZ_SEED_DIR=$$corpus ASAN_OPTIONS=detect_leaks=0 SWIFT_BACKTRACE=enable=no $(FUZZ_DIR)/release/fuzz-$$t \
	    -runs=$(FUZZ_RUNS) -max_total_time=$(FUZZ_MAX_TIME) -max_len=16384 -timeout=30 -print_final_stats=1 \
	    -artifact_prefix=$(FUZZ_DIR)/artifacts/$$t- $$corpus Tests/Fixtures/fuzz/$$t > $(FUZZ_DIR)/logs/$$t.log 2>&1 || status=1; \
	  seconds=$$(( $$(date +%s) - start )); \
	  runs=$$(sed -n 's/^stat::number_of_executed_units: *//p' $(FUZZ_DIR)/logs/$$t.log | tail -1); \
	  rate=$$(sed -n 's/^stat::average_exec_per_sec: *//p' $(FUZZ_DIR)/logs/$$t.log | tail -1); \
	  crashes=$$(ls $(FUZZ_DIR)/artifacts/ | grep -c "^$$t-" || true); \
	  echo "| $$t | $${runs:-?} | $${rate:-?} | $$seconds | $$(ls $$corpus | wc -l) | $$crashes |" | tee -a fuzz-results.md; \
	done; \
	if [ $$status -ne 0 ]; then echo "a target crashed: see $(FUZZ_DIR)/logs and $(FUZZ_DIR)/artifacts" | tee -a fuzz-results.md; exit 1; fi

clean-venv:
	rm -rf $(VENV)
