# attention-lab — two commands: `make start` (build + serve the course) and `make test` (everything).
# Every target installs what a fresh machine lacks; installs are idempotent and fast when done.

SHELL := /bin/bash
PORT ?= 8080
WASM_BINDGEN_VERSION := $(shell sed -n 's/^wasm-bindgen = "=\(.*\)"/\1/p' Cargo.toml)
CARGO_BIN := $(HOME)/.cargo/bin
export PATH := $(CARGO_BIN):$(PATH)

APT_PACKAGES := chromium chromium-driver binaryen firefox-esr

.PHONY: start test setup-build setup-test apt-install build site serve test-native test-wasm test-js test-e2e clean

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

## ---- build ----------------------------------------------------------------

WASM_PACK := wasm-pack --log-level warn
NODE_PKG := target/pkg-node

build: setup-build
	$(WASM_PACK) build --release --target web --out-dir www/pkg --out-name attention_lab
	rm -f www/pkg/.gitignore www/pkg/package.json www/pkg/README.md
	$(WASM_PACK) build --release --target nodejs --out-dir $(NODE_PKG) --out-name attention_lab

## ---- the course site (www/, bundled by Vite into www/dist) -------------------

www/node_modules: www/package.json www/package-lock.json
	cd www && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

site: build www/node_modules
	cd www && npx vite build --logLevel warn

## ---- the two commands -----------------------------------------------------

start: site
	@echo "attention-lab course: http://127.0.0.1:$(PORT)/"
	cd www && npx vite preview --host 127.0.0.1 --port $(PORT) --strictPort

test: setup-test build test-native test-wasm test-js test-e2e
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

test-e2e: site tests/node_modules
	node --test --test-concurrency=1 tests/e2e/

clean:
	cargo clean
	rm -rf pkg www/pkg www/dist www/node_modules tests/node_modules
