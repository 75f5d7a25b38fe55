# bufferlab: `make run` and `make test` set everything up on a fresh Debian 12
# machine (root) and then run the main experiment / the tests.

SHELL      := /bin/bash
VENV       := .venv
PY         := $(VENV)/bin/python
BUILD_DIR  := build
P4SRC      := p4src
# P4C selects the compiler: ours by default; P4C=p4c-bm2-ss uses the real one.
P4C        ?= $(VENV)/bin/bufferlab-p4c
PROGRAMS   := $(basename $(notdir $(wildcard $(P4SRC)/*.p4)))
# chromium and its driver: the headless browser the live view's test loads the page in.
APT_PKGS   := mininet bridge-utils iperf3 tcpdump ethtool iproute2 iputils-ping net-tools cpp python3-venv python3-dev build-essential chromium chromium-driver
RUST_SRC   := $(shell find switch traffic sim -name "*.rs" -o -name Cargo.toml 2>/dev/null) Cargo.toml
PYTEST_ARGS ?=

export PATH := $(HOME)/.cargo/bin:$(PATH)

.PHONY: setup build test lint bench clean run run-bcn stop cli

# The p4lang tutorials' command names, run by bufferlab's tools (README "Running the p4lang
# tutorials"): each template of switch/compat/bin with the venv's path filled in.
COMPAT_BIN := $(VENV)/compat/bin
COMPAT     := $(addprefix $(COMPAT_BIN)/,$(basename $(notdir $(wildcard switch/compat/bin/*.py switch/compat/bin/*.sh))))

setup: .stamp-apt .stamp-venv .stamp-install $(COMPAT)

# Debian packages, installed only when one is missing (so a second run is quick).
.stamp-apt:
	@missing=$$(for p in $(APT_PKGS); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "apt-get install $$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	fi
	@command -v cargo >/dev/null || { echo "error: cargo (Rust) not found; install rustup's stable toolchain" >&2; exit 1; }
	@touch $@

# Debian's python with its site-packages, so the Debian Mininet package imports.
.stamp-venv: .stamp-apt
	@test -x $(PY) || /usr/bin/python3 -m venv --system-site-packages $(VENV)
	@$(PY) -m pip install -q --upgrade pip setuptools wheel setuptools-rust
	@touch $@

# One editable install builds the Python distribution and the Rust engine.
.stamp-install: .stamp-venv pyproject.toml $(RUST_SRC)
	$(PY) -m pip install -q --no-build-isolation -e '.[dev]'
	@touch $@

$(COMPAT_BIN)/%: switch/compat/bin/%.py .stamp-install
	@mkdir -p $(@D)
	@sed 's|@VENV@|$(abspath $(VENV))|g' $< > $@ && chmod 755 $@ && echo "compat: $@"

$(COMPAT_BIN)/%: switch/compat/bin/%.sh .stamp-install
	@mkdir -p $(@D)
	@sed 's|@VENV@|$(abspath $(VENV))|g' $< > $@ && chmod 755 $@ && echo "compat: $@"

build: setup
	@mkdir -p $(BUILD_DIR)
	@for p in $(PROGRAMS); do \
	  echo "$(P4C) $(P4SRC)/$$p.p4 -> $(BUILD_DIR)/$$p.json"; \
	  $(P4C) $(P4SRC)/$$p.p4 -o $(BUILD_DIR)/$$p.json --p4runtime-files $(BUILD_DIR)/$$p.p4.p4info.txtpb || exit 1; \
	done

lint: setup
	$(VENV)/bin/ruff check .
	cargo fmt --all --check
	cargo clippy --workspace --all-targets -q -- -D warnings

# Namespace tests that time real frames on a shared host can lose one to a stall: the
# failed tests (only those) run once more, and a test that fails twice fails the target.
test: build lint
	cargo test --workspace -q
	@$(VENV)/bin/pytest -q $(PYTEST_ARGS) || { \
	  echo "make test: running the failed tests once more"; \
	  $(VENV)/bin/pytest -q --last-failed --last-failed-no-failures none $(PYTEST_ARGS); }

bench: build
	@for b in bench/*.py; do [ -e "$$b" ] && $(PY) $$b; done; true

# The main experiment: seed 000's ToR buffer and forwarding-delay study. FULL=1 runs the whole grid.
run: build
	$(PY) -m bufferlab.experiments.tor_switch $(if $(FULL),--full)

# Seeds 003 and 001: BCN with and without 802.3x PAUSE at 10 Gbit/s in the network simulator.
run-bcn: build
	$(PY) -m bufferlab.experiments.bcn $(if $(SEEDS),--seeds $(SEEDS))

# A Mininet CLI on three tc-paced hosts and one switch running buffer_switch.p4, configured
# from experiments/cli_demo/s1-config.json; VIEW=1 adds the live web view.
# SWITCH=simple_switch_grpc runs BMv2's switch instead of bufferlab-switch.
cli: build
	$(PY) -m bufferlab.experiments.cli_demo $(if $(SWITCH),--switch $(SWITCH)) $(if $(VIEW),--view)

# Removes only what a crashed bufferlab network left behind (never other Mininet users' state).
stop:
	@test -x $(PY) && $(PY) -m bufferlab.mininet.cleanup || true

clean:
	rm -rf $(BUILD_DIR) logs pcaps results target .stamp-install
	find . -name __pycache__ -prune -exec rm -rf {} +
