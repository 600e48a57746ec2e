# attention-lab — two commands: `make start` (build + serve the course) and `make test` (everything).
# Every target installs what a fresh machine lacks; installs are idempotent and fast when done.

SHELL := /bin/bash
PORT ?= 8080
WASM_BINDGEN_VERSION := $(shell sed -n 's/^wasm-bindgen = "=\(.*\)"/\1/p' Cargo.toml)
CARGO_BIN := $(HOME)/.cargo/bin
export PATH := $(CARGO_BIN):$(PATH)

APT_PACKAGES := chromium chromium-driver binaryen firefox-esr

.PHONY: start test setup setup-build setup-test build site serve test-native test-wasm test-js bench fuzz package clean

## ---- installs -------------------------------------------------------------

setup-build:
	@rustup target list --installed | grep -qx wasm32-unknown-unknown || rustup target add wasm32-unknown-unknown
	@command -v wasm-pack >/dev/null || cargo install wasm-pack
	@[ "$$(wasm-bindgen --version 2>/dev/null | cut -d' ' -f2)" = "$(WASM_BINDGEN_VERSION)" ] || \
	  cargo install wasm-bindgen-cli --version $(WASM_BINDGEN_VERSION) --force
	@command -v wasm-opt >/dev/null || $(MAKE) --no-print-directory apt-install

setup-test: setup-build
	@missing=""; for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	  [ -z "$$missing" ] || $(MAKE) --no-print-directory apt-install
	@command -v geckodriver >/dev/null || cargo install geckodriver

apt-install:
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(APT_PACKAGES)
