//! libFuzzer entry point: every input is decoded and checked by `attention_lab_fuzz::check`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| attention_lab_fuzz::check(data));
