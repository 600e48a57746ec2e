#!/bin/bash
# The default build's module as `make build` makes it (wasm-bindgen, then wasm-opt -O3 with the profile's
# flags) but keeping the name section, so that tests/size/fnsizes.mjs can list what the shipped code is.
# Usage (after `make build` or `cargo build --release --target wasm32-unknown-unknown`): bash tests/size/named.sh
set -euo pipefail
out=${OUT:-target/size-named}
rm -rf "$out" && mkdir -p "$out"
wasm-bindgen --target web --keep-debug --out-dir "$out" --out-name attention_lab ${WASM:-target/wasm32-unknown-unknown/release/attention_lab.wasm}
wasm-opt -O3 -g --enable-simd --enable-reference-types --enable-bulk-memory --enable-nontrapping-float-to-int \
  --enable-sign-ext --enable-mutable-globals --enable-multivalue "$out/attention_lab_bg.wasm" -o "$out/named.wasm"
node tests/size/fnsizes.mjs "$out/named.wasm" "$@"
# the same module without names, as wasm-pack's profile makes it (its raw and gzip -9 size are make build's)
wasm-opt -O3 --strip-debug --strip-producers --enable-simd --enable-reference-types --enable-bulk-memory --enable-nontrapping-float-to-int \
  --enable-sign-ext --enable-mutable-globals --enable-multivalue "$out/attention_lab_bg.wasm" -o "$out/stripped.wasm"
echo "as shipped: $(stat -c %s "$out/stripped.wasm") bytes raw, $(gzip -9c "$out/stripped.wasm" | wc -c) gzip -9"
