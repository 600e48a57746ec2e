# attention-lab — two commands: `make start` (build + serve the course) and `make test` (everything).
# Every target installs what a fresh machine lacks; installs are idempotent and fast when done.

SHELL := /bin/bash
PORT ?= 8080
WASM_BINDGEN_VERSION := $(shell sed -n 's/^wasm-bindgen = "=\(.*\)"/\1/p' Cargo.toml)
CARGO_BIN := $(HOME)/.cargo/bin
# tests/node_modules/.bin first: wasm-pack must find npm's wasm-opt (binaryen 132), not Debian's (see Cargo.toml)
export PATH := $(CURDIR)/tests/node_modules/.bin:$(CARGO_BIN):$(PATH)

APT_PACKAGES := chromium chromium-driver firefox-esr

.PHONY: start test setup-build setup-threads build-threads setup-test apt-install build site package docs test-native test-wasm test-js test-e2e test-package test-bench-smoke bench bench-first-line bench-matmul bench-decode-bound bench-gemm clean fuzz fuzz-js fuzz-leak fuzz-core

## ---- installs -------------------------------------------------------------

setup-build:
	@rustup target list --installed | grep -qx wasm32-unknown-unknown || rustup target add wasm32-unknown-unknown
	@command -v wasm-pack >/dev/null || cargo install wasm-pack
	@[ "$$(wasm-bindgen --version 2>/dev/null | cut -d' ' -f2)" = "$(WASM_BINDGEN_VERSION)" ] || \
	  cargo install wasm-bindgen-cli --version $(WASM_BINDGEN_VERSION) --force

# The threads build needs nightly (in the machine image) with the wasm target and std's source.
setup-threads:
	@rustup toolchain list | grep -q '^nightly' || rustup toolchain install nightly --profile minimal
	@rustup +nightly target list --installed | grep -qx wasm32-unknown-unknown || rustup +nightly target add wasm32-unknown-unknown
	@rustup +nightly component list --installed | grep -q '^rust-src' || rustup +nightly component add rust-src

setup-test: setup-build setup-threads
	@missing=""; for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	  [ -z "$$missing" ] || $(MAKE) --no-print-directory apt-install
	@command -v geckodriver >/dev/null || cargo install geckodriver

apt-install:
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(APT_PACKAGES)

## ---- build ----------------------------------------------------------------

WASM_PACK := wasm-pack --log-level warn

# The attention-only builds (target/attention: the light entry attention-lab/attention and the site's
# www/pkg-attention) add two LLVM flags to .cargo/config.toml's: no runtime unrolling (a loop of unknown trip
# count is not unrolled into a copy plus a remainder loop) and opt-level 2's full-unrolling threshold (150), not
# 3's (300). With the backward out of that build (Cargo feature `training`) its .wasm is 219,144 -> 210,973 B,
# under the 207 KiB budget (docs/performance.md, "Size"); the same bits (the golden groups), the large calls as
# fast and the small number[][] calls within this machine's noise (branch size29's measures). The kernels' fixed
# loops still unroll: at a threshold of 50 the f32 micro-kernel does not, and the f32 forward takes 2.2x. The
# whole build keeps the config's flags (its model paths were not timed with them).
ATTENTION_RUSTFLAGS := $(shell sed -n 's/^rustflags = \[\(.*\)\]$$/\1/p' .cargo/config.toml | tr -d '",') \
  -C llvm-args=-unroll-runtime=false -C llvm-args=-unroll-threshold=150
ATTENTION_ENV := CARGO_TARGET_DIR=target/attention RUSTFLAGS="$(ATTENTION_RUSTFLAGS)"

# The Node and web builds (the site serves a copy of the web build from www/pkg), and the site's
# attention-only web build (no `model` feature: no Transformer, a smaller .wasm; www/pkg-attention, for the
# walkthrough and the challenges without a model; its own target dir, so the two feature sets do not
# rebuild each other). The same build for Node (target/pkg-node-attention) is what the boundary fuzzer runs
# as the light entry attention-lab/attention (tests/js/fuzz.test.mjs).
build: setup-build tests/node_modules
	rm -rf target/pkg-node/snippets target/pkg-web/snippets target/pkg-web-attention/snippets target/pkg-node-attention/snippets # wasm-pack leaves a removed snippet behind
	$(WASM_PACK) build --release --target nodejs --out-dir target/pkg-node --out-name attention_lab
	$(WASM_PACK) build --release --target web --out-dir target/pkg-web --out-name attention_lab
	$(ATTENTION_ENV) $(WASM_PACK) build --release --target web --out-dir target/pkg-web-attention --out-name attention_lab --no-default-features
	$(ATTENTION_ENV) $(WASM_PACK) build --release --target nodejs --out-dir target/pkg-node-attention --out-name attention_lab --no-default-features
	node tests/package/guard-freed.mjs target/pkg-node/attention_lab.js target/pkg-web/attention_lab.js
	node tests/package/guard-freed.mjs --without Transformer target/pkg-web-attention/attention_lab.js target/pkg-node-attention/attention_lab.js
	rm -rf www/pkg && mkdir -p www/pkg && cp -r target/pkg-web/attention_lab* target/pkg-web/snippets www/pkg/
	rm -rf www/pkg-attention && mkdir -p www/pkg-attention && cp -r target/pkg-web-attention/attention_lab* target/pkg-web-attention/snippets www/pkg-attention/

# The threads build (Node's entry, and attention-lab/web on cross-origin isolated pages; src/wasm/threads.rs;
# the site's lab trains on a copy of its web build, www/pkg-threads):
# shared memory needs std
# rebuilt with +atomics (nightly's -Z build-std). Its own target dir, so that its RUSTFLAGS do not
# rebuild the default build's. wasm-pack's wasm-opt step is off (--no-opt: the profile's flags lack
# --enable-threads, and binaryen refuses shared memory without it); the same wasm-opt then runs here with
# the profile's flags (read from Cargo.toml) plus --enable-threads. Without it the .wasm was 2.3× the
# default build's (docs/performance.md, "Size").
# -O1, not the profile's -O3: binaryen 132's -O2 and -O3 (their optimizing inlining) break the workers' start:
# each worker's first call into the pool traps ("memory access out of bounds"), rayon loses the thread, and every
# call then runs on the main thread alone, with the right results (so only the CPU time showed it; see
# tests/package/threads.test.mjs, which checks that a worker computes). -O1 is 3% larger and as fast.
THREADS_WASM_OPT := $(shell sed -n 's/^wasm-opt = \[\(.*"-O3".*\)\]$$/\1/p' Cargo.toml | tr -d '",' | sed 's/-O3/-O1/') --enable-threads
THREADS_RUSTFLAGS := -C target-feature=+atomics,+bulk-memory,+simd128 -C llvm-args=-inline-threshold=0 \
  -C link-arg=--shared-memory -C link-arg=--max-memory=4294967296 -C link-arg=--import-memory \
  -C link-arg=--export=__wasm_init_tls -C link-arg=--export=__tls_size -C link-arg=--export=__tls_align -C link-arg=--export=__tls_base

build-threads: setup-build setup-threads tests/node_modules
	rm -rf target/pkg-node-threads/snippets target/pkg-web-threads/snippets
	for target in nodejs web; do \
	  CARGO_UNSTABLE_BUILD_STD=panic_abort,std RUSTUP_TOOLCHAIN=nightly RUSTFLAGS="$(THREADS_RUSTFLAGS)" CARGO_TARGET_DIR=target/threads \
	    $(WASM_PACK) build --release --no-opt --target $$target --out-dir target/pkg-$${target%js}-threads --out-name attention_lab --features threads || exit 1; \
	  wasm-opt $(THREADS_WASM_OPT) target/pkg-$${target%js}-threads/attention_lab_bg.wasm -o target/pkg-$${target%js}-threads/attention_lab_bg.wasm || exit 1; \
	done
	node tests/package/guard-freed.mjs target/pkg-node-threads/attention_lab.js target/pkg-web-threads/attention_lab.js
	rm -rf www/pkg-threads && mkdir -p www/pkg-threads && cp -r target/pkg-web-threads/attention_lab* target/pkg-web-threads/snippets www/pkg-threads/

# The npm package in pkg/: one wasm-pack build per runtime, assembled with pkg.json as the manifest, plus the
# attention-only build as the light entry attention-lab/attention (bundlers) and attention-lab/attention/web
# (tests/package/assemble.mjs says what goes where and fails when pkg.json's version is not Cargo.toml's).
# It also ships the command `attention-lab` (cli/) with the course it runs, and www/node_modules/acorn bundled.
package: build build-threads www/node_modules
	rm -rf target/pkg-bundler/snippets
	$(WASM_PACK) build --release --target bundler --out-dir target/pkg-bundler --out-name attention_lab
	node tests/package/guard-freed.mjs target/pkg-bundler/attention_lab_bg.js
	@# attention-lab/attention: the attention-only build (no `model` or `training` feature) for bundlers; its web build is `build`'s
	rm -rf target/pkg-bundler-attention/snippets
	$(ATTENTION_ENV) $(WASM_PACK) build --release --target bundler --out-dir target/pkg-bundler-attention --out-name attention_lab --no-default-features
	node tests/package/guard-freed.mjs --without Transformer target/pkg-bundler-attention/attention_lab_bg.js
	node tests/package/assemble.mjs
	@# what `npm publish` would upload; tests/package/files.test.mjs checks the list and npm's warnings
	cd pkg && npm publish --dry-run --json --loglevel=warn >../target/npm-publish-dry-run.json 2>../target/npm-publish-dry-run.log \
	  || { cat ../target/npm-publish-dry-run.log; exit 1; }

## ---- the API reference (TypeDoc, from the packed package's bundler.d.ts) ---------
# tests/typedoc/ is its own npm project: TypeDoc 0.28 needs TypeScript 5 or 6 as `typescript`, tests/ has 7.
# `make docs` rewrites the committed Markdown in docs/api-reference/; `make site` renders the same
# declarations as HTML into www/dist/api-reference/. tests/package/api-reference.test.mjs fails when
# the committed copy is stale or an export has no doc comment (tests/typedoc/typedoc.json).

TYPEDOC := cd tests/typedoc && ./node_modules/.bin/typedoc --logLevel Warn

tests/typedoc/node_modules: tests/typedoc/package.json tests/typedoc/package-lock.json
	cd tests/typedoc && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

docs: package tests/typedoc/node_modules
	$(TYPEDOC) --markdown ../../docs/api-reference

## ---- the course site (www/, bundled by Vite into www/dist) -------------------

www/node_modules: www/package.json www/package-lock.json
	cd www && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

site: package www/node_modules tests/typedoc/node_modules
	cd www && npx vite build --logLevel warn
	$(TYPEDOC) --options typedoc.html.json --html ../../www/dist/api-reference

## ---- the two commands -----------------------------------------------------

start: site
	@echo "attention-lab course: http://127.0.0.1:$(PORT)/"
	cd www && npx vite preview --host 127.0.0.1 --port $(PORT) --strictPort

test: setup-test build test-native test-wasm test-js test-bench-smoke test-package test-e2e
	@echo "make test: all suites passed"

## ---- suites ---------------------------------------------------------------

test-native:
	cargo test --quiet
	cargo test --quiet --features threads --test threads

test-wasm:
	$(WASM_PACK) test --node
	$(WASM_PACK) test --headless --chrome --chromedriver /usr/bin/chromedriver --firefox --geckodriver $$(command -v geckodriver)

tests/node_modules: tests/package.json
	cd tests && npm install --no-audit --no-fund --loglevel=error
	@touch $@

# www/node_modules: the diagnosis tests import the site's modules, which import acorn
test-js: tests/node_modules www/node_modules
	node --test tests/js/

test-e2e: site tests/node_modules
	node --test --test-concurrency=1 tests/e2e/

# The packed tarball in fresh projects: Node ESM/CJS, Vite + Chromium, a plain page, tsc, and the
# same output bytes in Node, Chromium and Firefox.
test-package: package tests/node_modules tests/typedoc/node_modules
	node --test tests/package/

# seconds: every benchmark implementation on small shapes, checked to agree (not timed)
test-bench-smoke: tests/node_modules
	node tests/bench/bench.mjs --smoke

## ---- benchmarks (docs/performance.md) ---------------------------------------

# the side-by-side table: plain JS, attention-lab number[][] / Float32Array, TF.js wasm, native Rust;
# then onnxruntime-web at 1 and 2 threads (attention-lab's 2-thread rows use the packed package: `package`)
bench: package tests/node_modules
	node tests/bench/bench.mjs
	node tests/bench/first-line.mjs

# the first-wrong-line diagnosis alone: instrumenting + probing one answer per challenge (median, worst)
bench-first-line: build www/node_modules
	node tests/bench/first-line.mjs

# the matmul decision: gemm vs matrixmultiply vs the hand-written kernel, speed and .wasm size
MATMUL_DIR := tests/bench/matmul-compare
MATMUL_OUT := target/matmul-compare/wasm32-unknown-unknown/release/matmul_compare.wasm
bench-matmul: setup-build
	@for v in handwritten with-gemm with-matrixmultiply; do \
	  cargo build --quiet --release --manifest-path $(MATMUL_DIR)/Cargo.toml --target wasm32-unknown-unknown \
	    --target-dir target/matmul-compare --features $$v && cp $(MATMUL_OUT) target/matmul-$$v.wasm || exit 1; \
	done
	node $(MATMUL_DIR)/compare.mjs handwritten=target/matmul-handwritten.wasm gemm=target/matmul-with-gemm.wasm \
	  matrixmultiply=target/matmul-with-matrixmultiply.wasm

# is a decoding step bound by memory bandwidth? the package's kernels against a read of the same bytes
bench-decode-bound: setup-build
	RUSTFLAGS="-C target-feature=+simd128 -C llvm-args=-inline-threshold=0" cargo build --quiet --release \
	  --manifest-path tests/bench/decode-bound/Cargo.toml --target wasm32-unknown-unknown --target-dir target/decode-bound
	node tests/bench/decode-bound/run.mjs
	RUSTFLAGS="-C target-cpu=native" cargo run --quiet --release --manifest-path tests/bench/read-bandwidth/Cargo.toml \
	  --target-dir target/read-bandwidth

# GPT-2 small's T = 128 products through src/kernels/ (CPU time, Gmadd/s); GEMM_BASE=<commit> also builds that
# commit's kernels into the same bench and alternates the two in one process (checking that they give the same bits)
GEMM_BASE ?=
# the package's own flags (.cargo/config.toml), which RUSTFLAGS replaces
GEMM_RUSTFLAGS := -C target-feature=+simd128 -C llvm-args=-inline-threshold=0
bench-gemm: setup-build
	RUSTFLAGS="$(GEMM_RUSTFLAGS)" cargo build --quiet --release \
	  --manifest-path tests/bench/gemm-shapes/Cargo.toml --target wasm32-unknown-unknown --target-dir target/gemm-shapes
	@if [ -n "$(GEMM_BASE)" ]; then \
	  rm -rf target/gemm-base && mkdir -p target/gemm-base/tests/bench/gemm-shapes && \
	  git archive $(GEMM_BASE) src/kernels tests/bench/one_thread.rs | tar -x -C target/gemm-base && \
	  cp -r tests/bench/gemm-shapes/Cargo.toml tests/bench/gemm-shapes/src target/gemm-base/tests/bench/gemm-shapes/ && \
	  RUSTFLAGS="$(GEMM_RUSTFLAGS)" cargo build --quiet --release --manifest-path target/gemm-base/tests/bench/gemm-shapes/Cargo.toml \
	    --target wasm32-unknown-unknown --target-dir target/gemm-shapes-base && \
	  node tests/bench/gemm-shapes/run.mjs $(GEMM_BASE)=target/gemm-shapes-base/wasm32-unknown-unknown/release/gemm_shapes.wasm \
	    this=target/gemm-shapes/wasm32-unknown-unknown/release/gemm_shapes.wasm; \
	else node tests/bench/gemm-shapes/run.mjs this=target/gemm-shapes/wasm32-unknown-unknown/release/gemm_shapes.wasm; fi

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
	  cargo +nightly fuzz run core -- -max_total_time=$(FUZZ_SECONDS) && \
	  cargo +nightly fuzz run safetensors -- -max_total_time=$(FUZZ_SECONDS); \
	else \
	  echo "no nightly toolchain: running the core check from the stable driver for $(FUZZ_SECONDS) s"; \
	  cd fuzz && cargo run --release --no-default-features --bin stable_driver -- --seconds $(FUZZ_SECONDS) && \
	  cargo run --release --no-default-features --bin stable_driver -- --seconds $(FUZZ_SECONDS) --target safetensors; \
	fi

clean:
	cargo clean
	rm -rf pkg www/pkg www/pkg-attention www/dist www/node_modules tests/node_modules tests/typedoc/node_modules
