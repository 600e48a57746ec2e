//! Sums 494 MB of f32 (GPT-2 small's weights, as a decoding step reads them) on 1 and 2 threads, each thread a
//! contiguous half, 16 sums side by side (vectorised by the compiler); prints the best of 7 per thread count,
//! three times over, in ms and GB/s.
use std::time::Instant;

const BYTES: usize = 494_000_000;

fn sum(x: &[f32]) -> f32 {
    let mut s = [0f32; 16];
    for c in x.chunks_exact(16) {
        for i in 0..16 {
            s[i] += c[i];
        }
    }
    s.iter().sum()
}

fn main() {
    let n = BYTES / 4;
    let values: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
    for _ in 0..3 {
        for threads in [1usize, 2] {
            let mut best = f64::MAX;
            for _ in 0..7 {
                let start = Instant::now();
                let total: f32 = std::thread::scope(|scope| {
                    let parts: Vec<_> = values.chunks(n.div_ceil(threads)).map(|part| scope.spawn(move || sum(part))).collect();
                    parts.into_iter().map(|p| p.join().expect("a reading thread")).sum()
                });
                std::hint::black_box(total);
                best = best.min(start.elapsed().as_secs_f64() * 1e3);
            }
            println!("native read of {} MB, {threads} thread(s): {best:.1} ms ({:.1} GB/s)", BYTES / 1_000_000, BYTES as f64 / 1e6 / best);
        }
    }
}
