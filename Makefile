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
# sudo: the p4lang tutorials run their tools through it (make tutorials-install).
APT_PKGS   := mininet bridge-utils iperf3 tcpdump ethtool iproute2 iputils-ping net-tools cpp python3-venv python3-dev build-essential chromium chromium-driver sudo
RUST_SRC   := $(shell find switch traffic sim -name "*.rs" -o -name Cargo.toml 2>/dev/null) Cargo.toml
PYTEST_ARGS ?=

export PATH := $(HOME)/.cargo/bin:$(PATH)

.PHONY: setup build test lint bench bench-compare clean run run-bcn run-tofino run-qbss run-esnet run-dctcp \
        run-tcp-validation stop cli \
        tutorials-install tutorials-uninstall

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

# The p4lang tutorials through sudo (README "Running the p4lang tutorials"): links to the compat
# tools in /usr/local/bin (sudo's secure_path) and a .pth that lets Debian's python3, run
# through sudo, import the venv's packages; recorded in .venv/compat/tutorials-installed.json.
# The only targets that change anything outside the checkout but apt's; uninstall undoes it.
tutorials-install: setup
	@dpkg -s sudo >/dev/null 2>&1 || { echo "apt-get install sudo"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq sudo; }
	$(PY) switch/compat/tutorials.py install

tutorials-uninstall:
	@if test -x $(PY); then $(PY) switch/compat/tutorials.py uninstall; \
	else echo "tutorials-uninstall: no $(VENV), nothing recorded"; fi

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
	cargo fmt --manifest-path fuzz/Cargo.toml --check
	cargo clippy --manifest-path fuzz/Cargo.toml --all-targets --target-dir target/afl-check -q -- -D warnings

test: build lint
	cargo test --workspace -q
	@rm -rf build/fuzz/smoke
	@$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=3 FUZZ_OUT=build/fuzz/smoke DIFF_SEED=1 DIFF_COUNT=100
	@$(MAKE) --no-print-directory pytest

# The Python suites (make test's last step; alone, after make build). Namespace tests that
# time real frames on a shared host can lose one to a stall: the failed tests (only those)
# run once more, and a test that fails twice fails the target. Each retried test is printed
# and listed in RETRIED; .ci/run fails when one is not on .ci/retry-allowed.txt. The first
# run starts with pytest's failure record (in PYTEST_CACHE) emptied, so it names this run's.
RETRIED      ?= $(BUILD_DIR)/retried-tests.txt
PYTEST_CACHE ?= .pytest_cache
PYTEST       := $(VENV)/bin/pytest -q -o cache_dir=$(PYTEST_CACHE)
.PHONY: pytest
pytest:
	@mkdir -p $(dir $(RETRIED)) && rm -f $(PYTEST_CACHE)/v/cache/lastfailed $(RETRIED)
	@$(PYTEST) $(PYTEST_ARGS) || { \
	  $(PY) -c 'import json, sys; print(*sorted(json.load(open(sys.argv[1]))), sep="\n")' \
	    $(PYTEST_CACHE)/v/cache/lastfailed > $(RETRIED) || exit 1; \
	  echo "make test: retrying the $$(wc -l < $(RETRIED)) failed test(s) once:"; \
	  sed 's/^/make test: retried /' $(RETRIED); \
	  $(PYTEST) --last-failed --last-failed-no-failures none $(PYTEST_ARGS); }

.PHONY: fuzz fuzz-differential

# Fuzzing (fuzz/README.md): AFL++ through cargo-afl (stable Rust) for the engine's packet path
# and BMv2 JSON loader; atheris (libFuzzer) for the P4Runtime server, the compiler and the STF
# runner. `make fuzz MINUTES=N` runs each target N minutes, resuming what earlier runs found
# (build/fuzz/out); any crash or finding fails the target. `make test` runs each for 3 s.
# Then the compiler against itself (fuzz/python/differential.py): DIFF_COUNT mutants of the
# STF cases' programs (default 150 a minute), drawn with DIFF_SEED (default: from the clock,
# printed); `make test` checks 100 with seed 1. `make fuzz-differential` runs only that.
FUZZ_RUST     := packet load
FUZZ_PYTHON   := p4runtime compiler stf
FUZZ_PROGRAMS := p4src/buffer_switch.p4 p4src/forward.p4 $(addprefix tests/p4/,checksum_udp_payload.p4 \
                 clone_sessions_mirror.p4 header_stack_mpls.p4 parser_error_codes.p4 \
                 parser_lookahead_advance_verify.p4 range_match_l4_ports.p4)
MINUTES       ?= 1
FUZZ_SECONDS  ?= $(shell awk 'BEGIN { print int($(MINUTES) * 60) }')
FUZZ_OUT      ?= build/fuzz/out
DIFF_COUNT    ?= $(shell awk 'BEGIN { print int($(MINUTES) * 150) }')
DIFF_SEED     ?=
DIFFERENTIAL  := $(PY) fuzz/python/differential.py --count $(DIFF_COUNT) $(if $(DIFF_SEED),--seed $(DIFF_SEED)) \
                 --out $(FUZZ_OUT)/differential
# No CPU pinning (other work shares the cores), no UI, and no refusal over the machine's
# core_pattern or frequency governor, which a lab machine does not tune for fuzzing.
AFL_ENV       := AFL_NO_AFFINITY=1 AFL_NO_UI=1 AFL_AUTORESUME=1 AFL_SKIP_CPUFREQ=1 \
                 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 BUFFERLAB_FUZZ_PROGRAMS=build/fuzz/programs

fuzz: build .stamp-fuzz
	@mkdir -p build/fuzz/programs $(FUZZ_OUT)
	@for p in $(FUZZ_PROGRAMS); do \
	  $(P4C) $$p -o build/fuzz/programs/$$(basename $$p .p4).json || exit 1; done
	cd fuzz && cargo afl build --release -q --target-dir ../target/afl
	@status=0; for t in $(FUZZ_RUST); do \
	  $(AFL_ENV) cargo afl fuzz -V $(FUZZ_SECONDS) -i fuzz/corpus/$$t -o $(FUZZ_OUT)/$$t \
	    target/afl/release/fuzz_$$t > $(FUZZ_OUT)/$$t.log 2>&1 \
	    || { tail -20 $(FUZZ_OUT)/$$t.log; status=1; }; \
	  stats=$(FUZZ_OUT)/$$t/default/fuzzer_stats; \
	  crashes=$$(find $(FUZZ_OUT)/$$t/default/crashes -name 'id:*' 2>/dev/null | wc -l); \
	  echo "fuzz $$t: $$(awk '/^execs_done/ {print $$3}' $$stats) inputs in total," \
	       "coverage $$(awk '/^bitmap_cvg/ {print $$3}' $$stats), $$crashes crashes"; \
	  [ $$crashes -eq 0 ] || { echo "  reproduce: target/afl/release/fuzz_$$t < $(FUZZ_OUT)/$$t/default/crashes/id:..."; status=1; }; \
	done; \
	for t in $(FUZZ_PYTHON); do \
	  mkdir -p $(FUZZ_OUT)/$$t; \
	  $(PY) fuzz/python/fuzz_$$t.py -max_total_time=$(FUZZ_SECONDS) -timeout=20 -rss_limit_mb=4096 \
	    -artifact_prefix=$(FUZZ_OUT)/$$t- $(FUZZ_OUT)/$$t fuzz/corpus/$$t > $(FUZZ_OUT)/$$t.log 2>&1 \
	    || { grep -A15 -E "Finding|Uncaught" $(FUZZ_OUT)/$$t.log | head -30; status=1; }; \
	  echo "fuzz $$t: $$(grep -o 'Done [0-9]* runs' $(FUZZ_OUT)/$$t.log | cut -d' ' -f2) inputs"; \
	done; \
	$(DIFFERENTIAL) || status=1; exit $$status

fuzz-differential: build
	$(DIFFERENTIAL)

# cargo-afl builds AFL++ (its fuzzer and the runtime the targets link) when it is installed.
.stamp-fuzz: .stamp-apt
	@command -v cargo-afl >/dev/null || cargo install --locked cargo-afl@0.18.2
	@touch $@

bench: build
	@for b in bench/*.py; do [ -e "$$b" ] && $(PY) $$b; done; true

# A/B against a fixed commit (bench/tools/compare.py): BASE built in a scratch worktree with its
# own venv and target dir, each benchmark run N times per side, interleaved; BENCH=a,b picks.
# IR=1 also counts instructions per frame-hop and per packet with callgrind (load-independent;
# BENCH=none IR=1 counts only those).
bench-compare: build
	@test -n "$(BASE)" || { echo "usage: make bench-compare BASE=<commit> [N=5] [BENCH=engine_pps,...] [IR=1]" >&2; exit 2; }
	@if [ -n "$(IR)" ] && ! dpkg -s valgrind >/dev/null 2>&1; then echo "apt-get install valgrind"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq valgrind; fi
	$(PY) bench/tools/compare.py $(BASE) $(if $(N),--runs $(N)) $(if $(BENCH),--bench $(BENCH)) $(if $(KEEP),--keep) $(if $(IR),--instructions)

# The main experiment: seed 000's ToR buffer and forwarding-delay study. FULL=1 runs the whole grid.
run: build
	$(PY) -m bufferlab.experiments.tor_switch $(if $(FULL),--full)

# Seeds 003 and 001: BCN with and without 802.3x PAUSE at 10 Gbit/s in the network simulator.
run-bcn: build
	$(PY) -m bufferlab.experiments.bcn $(if $(SEEDS),--seeds $(SEEDS))

# Seeds 000 and 003/001 on p4src/buffer_switch.p4 and on its Tofino port p4src/tna/buffer_switch.p4,
# from the same configs, in virtual time; one side-by-side report in results/tofino/. Quick by
# default (a reduced seed-000 grid, 3 seeds per seed-001 variant); FULL=1 runs the whole grid.
run-tofino: build
	$(PY) -m bufferlab.experiments.tofino $(if $(FULL),--full) $(if $(SEEDS),--seeds $(SEEDS))

# Seed 002: SLAC's QBSS scavenger class live in Mininet, real TCP (root). Quick by default
# (~7 min); FULL=1 runs the seed's 30-s phases and 100 s of ping (~23 min).
run-qbss: build
	$(PY) -m bufferlab.experiments.qbss $(if $(FULL),,--quick)

# Seed 004: ESnet's switch-buffer tests live in Mininet, real TCP over a 50 ms path, scaled
# by k = 0.1 (root). Quick by default (12-s trials); FULL=1 runs the seed's 30-s trials.
run-esnet: build
	$(PY) -m bufferlab.experiments.esnet_buffer $(if $(FULL),,--quick)

# DCTCP against CUBIC at 10 Gbit/s in the network simulator: the queue at K with full
# throughput, N -> 1 incast beside long flows (~25 s); QUICK=1 runs a shorter grid.
run-dctcp: build
	$(PY) -m bufferlab.experiments.dctcp $(if $(QUICK),--quick)

# Issue 29 item 2: the same scenario files live (Linux TCP through bufferlab-switch in
# Mininet, root) and in virtual time (the linux-today TCP model), goodput and drops cell by
# cell (16 cells, 3 live trials each, 20 min here); QUICK=1 runs 4 cells, 2 trials each.
run-tcp-validation: build
	$(PY) -m bufferlab.experiments.tcp_validation $(if $(QUICK),--quick)

# A Mininet CLI on three tc-paced hosts and one switch running buffer_switch.p4, configured
# from experiments/cli_demo/s1-config.json; VIEW=1 adds the live web view.
# SWITCH=simple_switch_grpc runs BMv2's switch instead of bufferlab-switch.
# PROGRAM=tna runs the Tofino port (p4src/tna/buffer_switch.p4) instead, its buffer and
# PAUSE in the TM set from the same config; TARGET=tofino2 for Tofino 2's 176-byte cells.
cli: build
	$(PY) -m bufferlab.experiments.cli_demo $(if $(SWITCH),--switch $(SWITCH)) $(if $(VIEW),--view) \
		$(if $(PROGRAM),--program $(PROGRAM)) $(if $(TARGET),--target $(TARGET))

# Removes only what a crashed bufferlab network left behind (never other Mininet users' state).
stop:
	@test -x $(PY) && $(PY) -m bufferlab.mininet.cleanup || true

clean:
	rm -rf $(BUILD_DIR) logs pcaps results target .stamp-install
	find . -name __pycache__ -prune -exec rm -rf {} +
