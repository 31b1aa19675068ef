//! The circuit generator through the pipeline: its presets (`f1`, `karting`, `circuit`) come out
//! valid without relaxation and nearly always on the first attempt, with lengths in their
//! presets' ranges, and pass the f64 brute-force oracle of the validity tests (a 100k-env sweep
//! per preset, ignored by default: run it with
//! `cargo test --release --test suite circuit -- --ignored`).

use rayon::prelude::*;
use trackgen::exec::Launch;
use trackgen::preset::{GeneratorParams, Preset};
use trackgen::track::generators::Circuit;
use trackgen::track::stats::ShapeAccumulator;
use trackgen::track::Pipeline;

use crate::track_oracle::brute_force;

const PRESETS: [&str; 3] = ["circuit", "f1", "karting"];

fn length_range(p: &Preset) -> (f32, f32) {
    match p.generator {
        GeneratorParams::Circuit {
            min_length_m,
            max_length_m,
            ..
        } => (min_length_m, max_length_m),
        ref other => panic!("{}: generator {} is not circuit", p.source, other.name()),
    }
}

/// Generates envs `env_base .. env_base + n`; returns (valid count, brute-force failures).
fn sweep(p: &Preset, env_base: u64, n: usize) -> (usize, Vec<String>) {
    let mut pipe = Pipeline::new(p, n, Launch::new()).unwrap();
    let mut batch = pipe.new_batch(env_base).unwrap();
    pipe.generate(12, 0, &mut batch).unwrap();
    let valid = batch.valid.iter().filter(|&&v| v == 1).count();
    let failures = (0..n)
        .into_par_iter()
        .filter(|&e| batch.valid[e] == 1)
        .filter_map(|e| {
            brute_force(&batch, e, p).map(|why| format!("env {}: {why}", env_base + e as u64))
        })
        .collect();
    (valid, failures)
}

#[test]
fn circuit_presets_need_no_relaxation_and_keep_their_lengths() {
    for name in PRESETS {
        let p = Preset::load(name).unwrap();
        assert_eq!(p.generator.name(), "circuit", "{name}");
        assert_eq!(p.relax.max_windows, 0, "{name}: valid by construction");
        let n = 2048;
        let mut pipe = Pipeline::new(&p, n, Launch::new()).unwrap();
        let mut batch = pipe.new_batch(0).unwrap();
        pipe.generate(5, 0, &mut batch).unwrap();
        let valid = batch.valid.iter().filter(|&&v| v == 1).count();
        assert!(
            valid as f64 >= 0.999 * n as f64,
            "{name}: yield {valid} / {n}"
        );
        // The generator's clearance check leaves the validity check little to refuse: before
        // it, 6–20% of first attempts were refused (too close to themselves).
        let first = (batch.valid.iter().zip(&batch.attempts))
            .filter(|&(&v, &a)| v == 1 && a == 1)
            .count();
        assert!(
            first as f64 >= 0.995 * n as f64,
            "{name}: valid on the first attempt {first} / {n}"
        );
        let (lo, hi) = length_range(&p);
        let mut shapes = ShapeAccumulator::default();
        shapes.add_batch(&batch, p.track.half_width_m);
        let stats = shapes.finish();
        // Scaled up to its target when short; the closure may lengthen a track a little.
        assert!(
            stats.length_m.min >= 0.99 * f64::from(lo),
            "{name}: {:?}",
            stats.length_m
        );
        assert!(
            stats.length_m.p95 <= 1.1 * f64::from(hi),
            "{name}: {:?}",
            stats.length_m
        );
        // No outlier: a draw the closure stretched too far is drawn again.
        assert!(
            stats.length_m.max <= f64::from(Circuit::MAX_STRETCH * hi),
            "{name}: {:?}",
            stats.length_m
        );
        // Circuit-like: mostly straight, several turns of absolute turning, distinct corners.
        assert!(
            stats.straight_fraction.p50 > 0.6,
            "{name}: {:?}",
            stats.straight_fraction
        );
        assert!(
            stats.abs_turning_turns.p50 > 2.0,
            "{name}: {:?}",
            stats.abs_turning_turns
        );
        assert!(stats.corners.p05 >= 8.0, "{name}: {:?}", stats.corners);
    }
}

#[test]
fn circuit_tracks_pass_the_brute_force_oracle() {
    for name in PRESETS {
        let p = Preset::load(name).unwrap();
        let (valid, failures) = sweep(&p, 1 << 20, 512);
        assert!(valid >= 511, "{name}: {valid} / 512 valid");
        assert!(failures.is_empty(), "{name}: {failures:?}");
    }
}

/// The 100k-env sweep of every circuit preset against the f64 oracle (slow: minutes in release).
#[test]
#[ignore]
fn circuit_sweep_100k_envs_per_preset() {
    let (chunk, chunks) = (4096, 25);
    let total = chunk * chunks;
    for name in PRESETS {
        let p = Preset::load(name).unwrap();
        let (mut valid, mut failures) = (0, Vec::new());
        for base in (0..total).step_by(chunk) {
            let (v, f) = sweep(&p, base as u64, chunk);
            valid += v;
            failures.extend(f);
        }
        let yield_ = valid as f64 / total as f64;
        println!(
            "{name}: {total} envs, yield {yield_:.5}, {} oracle failures",
            failures.len()
        );
        assert!(yield_ >= 0.999, "{name}: yield {yield_:.5}");
        assert!(
            failures.is_empty(),
            "{name}: {} failures: {:?}",
            failures.len(),
            &failures[..failures.len().min(5)]
        );
    }
}
