//! libFuzzer entry point of the safetensors reader: `attention_lab_fuzz::safetensors::check`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| attention_lab_fuzz::safetensors::check(data));
