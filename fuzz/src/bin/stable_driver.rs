//! A stable-toolchain driver for the same check as the libFuzzer target: seeded random inputs
//! (not coverage-guided) for a bounded time or count. A panicking input is saved to
//! `fuzz/artifacts/core/stable-crash-<seed>-<n>` and the driver exits 1.
//!
//! `cargo run --release --no-default-features --bin stable_driver -- [--seconds S] [--runs N] [--seed X] [--target core|safetensors]`

use std::time::{Duration, Instant};

fn main() {
    let mut seconds = 60u64;
    let mut runs = u64::MAX;
    let mut seed = 0x5eed_u64;
    let mut target = "core".to_string();
    let args: Vec<String> = std::env::args().skip(1).collect();
    for pair in args.chunks(2) {
        if pair[0] == "--target" {
            target = pair.get(1).cloned().unwrap_or_default();
            continue;
        }
        let value = pair.get(1).and_then(|v| v.parse().ok()).unwrap_or_else(|| panic!("usage: --seconds S --runs N --seed X"));
        match pair[0].as_str() {
            "--seconds" => seconds = value,
            "--runs" => runs = value,
            "--seed" => seed = value,
            other => panic!("unknown option {other}"),
        }
    }
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let mut state = seed;
    let mut next = move || {
        // SplitMix64
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    let check: fn(&[u8]) = match target.as_str() {
        "core" => attention_lab_fuzz::check,
        "safetensors" => attention_lab_fuzz::safetensors::check,
        other => panic!("unknown target {other}: core or safetensors"),
    };
    std::panic::set_hook(Box::new(|info| eprintln!("{info}")));
    let mut done = 0u64;
    let mut bytes = 0u64;
    while done < runs && Instant::now() < deadline {
        let len = (next() % 2048) as usize;
        let input: Vec<u8> = (0..len).map(|_| next() as u8).collect();
        if std::panic::catch_unwind(|| check(&input)).is_err() {
            let dir = format!("{}/artifacts/{target}", env!("CARGO_MANIFEST_DIR"));
            std::fs::create_dir_all(&dir).expect("artifacts folder");
            let path = format!("{dir}/stable-crash-{seed}-{done}");
            std::fs::write(&path, &input).expect("write the crashing input");
            eprintln!("FAIL after {done} inputs; input saved to {path} (replay: cargo +nightly fuzz run {target} {path})");
            std::process::exit(1);
        }
        done += 1;
        bytes += len as u64;
    }
    println!("stable_driver ({target}): {done} inputs ({bytes} bytes) checked, seed {seed}, no invariant broken");
}
