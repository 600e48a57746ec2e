# attention-lab — two commands: `make start` (build + serve the course) and `make test` (everything).
# Every target installs what a fresh machine lacks; installs are idempotent and fast when done.

SHELL := /bin/bash
PORT ?= 8080
WASM_BINDGEN_VERSION := $(shell sed -n 's/^wasm-bindgen = "=\(.*\)"/\1/p' Cargo.toml)
CARGO_BIN := $(HOME)/.cargo/bin
export PATH := $(CARGO_BIN):$(PATH)

APT_PACKAGES := chromium chromium-driver firefox-esr

.PHONY: start test setup-build setup-test apt-install build serve test-native test-wasm test-js clean fuzz fuzz-js fuzz-leak fuzz-core

## ---- installs -------------------------------------------------------------

setup-build:
	@rustup target list --installed | grep -qx wasm32-unknown-unknown || rustup target add wasm32-unknown-unknown
	@command -v wasm-pack >/dev/null || cargo install wasm-pack
	@[ "$$(wasm-bindgen --version 2>/dev/null | cut -d' ' -f2)" = "$(WASM_BINDGEN_VERSION)" ] || \
	  cargo install wasm-bindgen-cli --version $(WASM_BINDGEN_VERSION) --force

setup-test: setup-build
	@missing=""; for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	  [ -z "$$missing" ] || $(MAKE) --no-print-directory apt-install
	@command -v geckodriver >/dev/null || cargo install geckodriver

apt-install:
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(APT_PACKAGES)

## ---- build ----------------------------------------------------------------

WASM_PACK := wasm-pack --log-level warn
NODE_PKG := target/pkg-node

build: setup-build
	$(WASM_PACK) build --release --target web --out-dir www/pkg --out-name attention_lab
	rm -f www/pkg/.gitignore www/pkg/package.json www/pkg/README.md
	$(WASM_PACK) build --release --target nodejs --out-dir $(NODE_PKG) --out-name attention_lab

## ---- the two commands -----------------------------------------------------

start: build
	@echo "attention-lab course: http://127.0.0.1:$(PORT)/"
	python3 -m http.server --bind 127.0.0.1 --directory www $(PORT)

test: setup-test build test-native test-wasm test-js
	@echo "make test: all suites passed"

## ---- suites ---------------------------------------------------------------

test-native:
	cargo test --quiet

test-wasm:
	$(WASM_PACK) test --node
	CHROMEDRIVER=/usr/bin/chromedriver $(WASM_PACK) test --headless --chrome

tests/node_modules: tests/package.json
	cd tests && npm install --no-audit --no-fund --loglevel=error
	@touch $@

test-js: tests/node_modules
	node --test tests/js/

## ---- long reliability runs (not part of `make test`) ---------------------
# The JS boundary fuzzer (1,000,000 cases, at most FUZZ_JS_SECONDS), the 1,000,000-call leak check,
# and the core fuzzer for FUZZ_SECONDS: cargo-fuzz (libFuzzer) where a nightly toolchain exists,
# otherwise the same check from a seeded random driver on stable.

FUZZ_SECONDS ?= 300
FUZZ_JS_SECONDS ?= 900

fuzz: fuzz-js fuzz-leak fuzz-core
	@echo "make fuzz: all runs passed"

fuzz-js: build tests/node_modules
	node tests/fuzz/fuzz.mjs --cases 1000000 --seconds $(FUZZ_JS_SECONDS)

fuzz-leak: build tests/node_modules
	node tests/leak/leak.mjs --calls 1000000

fuzz-core:
	@if rustup toolchain list | grep -q '^nightly'; then \
	  command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked; \
	  echo "cargo +nightly fuzz run core for $(FUZZ_SECONDS) s"; \
	  cargo +nightly fuzz run core -- -max_total_time=$(FUZZ_SECONDS); \
	else \
	  echo "no nightly toolchain: running the core check from the stable driver for $(FUZZ_SECONDS) s"; \
	  cd fuzz && cargo run --release --no-default-features --bin stable_driver -- --seconds $(FUZZ_SECONDS); \
	fi

clean:
	cargo clean
	rm -rf pkg www/pkg tests/node_modules
