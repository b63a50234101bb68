# Burrow — build, test and benchmark entry points. `make test` is the README's test command and
# what .ci/run calls: it installs everything it needs (apt packages, the interop venv) itself.
SHELL := /bin/bash
VENV ?= $(CURDIR)/.venv
PY := $(VENV)/bin/python
APT_PACKAGES := libsecp256k1-dev libsodium-dev libsqlcipher-dev libbluetooth-dev libssl3 openssl pkg-config
PIP_PACKAGES := mdk-python==0.8.0 nostr-sdk==0.45.1 nostr-relay==1.14 noiseprotocol==0.3.1
# Tests run in release with -enable-testing so one build serves tests, the CLI tests and benchmarks.
SWIFT_RELEASE := -c release -Xswiftc -enable-testing

.PHONY: setup setup-system setup-python build build-tests test bench demo clean-venv

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

# A family's day on this machine with the embedded relay: a transcript and Docs/demo-map.svg.
demo: build
	BURROW_BIN=$(CURDIR)/.build/release/burrow scripts/demo.sh

build-tests: setup-system
	swift build $(SWIFT_RELEASE) --build-tests

test: setup build-tests
	BURROW_VENV=$(VENV) BURROW_BIN=$(CURDIR)/.build/release/burrow swift test $(SWIFT_RELEASE) --skip-build --disable-swift-testing

bench: setup build-tests
	swift build $(SWIFT_RELEASE) --product burrow-bench
	swift build $(SWIFT_RELEASE) --product burrow-relay
	BURROW_VENV=$(VENV) .build/release/burrow-bench | tee bench-results.md

clean-venv:
	rm -rf $(VENV)
