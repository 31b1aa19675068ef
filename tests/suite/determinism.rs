//! The determinism contract: env `e`'s output is a pure function of
//! `(preset, seed, e, generation[e])` — thread counts, batch sizes, env ranges and masks never
//! change a byte.

use proptest::prelude::*;
use trackgen::exec::Launch;
use trackgen::preset::Preset;
use trackgen::track::{Pipeline, TrackBatch, TILE_ENVS_PER_THREAD};

fn generate(
    preset: &Preset,
    n: usize,
    base: u64,
    seed: u64,
    gen: u32,
    threads: usize,
) -> TrackBatch {
    let mut pipe = Pipeline::new(preset, n, Launch::with_threads(threads).unwrap()).unwrap();
    let mut batch = pipe.new_batch(base).unwrap();
    pipe.generate(seed, gen, &mut batch).unwrap();
    batch
}

#[test]
fn thread_count_does_not_change_a_byte() {
    for name in ["track", "checkpoint", "f1"] {
        let p = Preset::load(name).unwrap();
        let one = generate(&p, 96, 0, 7, 0, 1);
        let two = generate(&p, 96, 0, 7, 0, 2);
        assert!(one.bytes_eq(&two), "{name}");
        assert!(one.valid.contains(&1));
    }
}

#[test]
fn batch_size_and_env_base_do_not_change_a_byte() {
    let p = Preset::load("track").unwrap();
    let full = generate(&p, 90, 0, 3, 2, 0);
    let shard = generate(&p, 30, 40, 3, 2, 0);
    assert!(full.slice(40..70).bytes_eq(&shard));
    let single = generate(&p, 1, 77, 3, 2, 0);
    assert!(full.slice(77..78).bytes_eq(&single));
}

#[test]
fn seeds_and_generations_change_tracks() {
    let p = Preset::load("track").unwrap();
    let a = generate(&p, 8, 0, 1, 0, 0);
    let b = generate(&p, 8, 0, 2, 0, 0);
    let c = generate(&p, 8, 0, 1, 1, 0);
    for e in 0..8 {
        let row = |x: &TrackBatch| x.points(&x.center, e).to_vec();
        assert_ne!(row(&a), row(&b), "env {e}: seed must matter");
        assert_ne!(row(&a), row(&c), "env {e}: generation must matter");
    }
}

/// A batch written over and over (each generation's tracks longer or shorter than the last's,
/// so the padding past each count moves) holds the same bytes as a fresh batch.
#[test]
fn a_reused_batch_equals_a_fresh_one() {
    for name in ["circuit", "track"] {
        let p = Preset::load(name).unwrap();
        let mut pipe = Pipeline::new(&p, 24, Launch::with_threads(2).unwrap()).unwrap();
        let mut batch = pipe.new_batch(0).unwrap();
        for gen in 0..4 {
            pipe.generate(9, gen, &mut batch).unwrap();
            let fresh = generate(&p, 24, 0, 9, gen, 1);
            assert!(batch.bytes_eq(&fresh), "{name}, generation {gen}");
        }
        let counts: std::collections::BTreeSet<u32> = batch.count.iter().copied().collect();
        assert!(counts.len() > 1, "{name}: counts should vary");
    }
}

/// A batch of several CPU tiles (`TILE_ENVS_PER_THREAD` envs per thread each, the last one
/// partial) gives the bytes of shards that each fit one tile, and a masked regeneration across
/// the tiles changes exactly the masked envs, each to its fresh generation.
#[test]
fn tiles_do_not_change_a_byte() {
    let p = Preset::load("polar").unwrap();
    let n = 2 * TILE_ENVS_PER_THREAD + 37;
    for threads in [1, 2] {
        let full = generate(&p, n, 0, 4, 1, threads);
        let shard = 200;
        for start in (0..n).step_by(shard) {
            let len = shard.min(n - start);
            let part = generate(&p, len, start as u64, 4, 1, 1);
            assert!(
                full.slice(start..start + len).bytes_eq(&part),
                "{threads} threads, envs {start}.."
            );
        }
    }
    let mut pipe = Pipeline::new(&p, n, Launch::with_threads(1).unwrap()).unwrap();
    let mut batch = pipe.new_batch(0).unwrap();
    pipe.generate(4, 1, &mut batch).unwrap();
    let before = batch.clone();
    let masked = [3, TILE_ENVS_PER_THREAD - 1, TILE_ENVS_PER_THREAD, n - 1];
    let mut mask = vec![0u8; n];
    for &e in &masked {
        mask[e] = 1;
        batch.generation[e] = 7;
    }
    pipe.regenerate(4, &mask, &mut batch).unwrap();
    for (e, &m) in mask.iter().enumerate() {
        let row = batch.slice(e..e + 1);
        if m == 0 {
            assert!(
                row.bytes_eq(&before.slice(e..e + 1)),
                "unmasked env {e} changed"
            );
        } else {
            assert!(
                row.bytes_eq(&generate(&p, 1, e as u64, 4, 7, 1)),
                "masked env {e}"
            );
        }
    }
}

#[test]
fn all_zero_mask_writes_nothing() {
    let p = Preset::load("track").unwrap();
    let mut pipe = Pipeline::new(&p, 16, Launch::new()).unwrap();
    let mut batch = pipe.new_batch(0).unwrap();
    pipe.generate(5, 0, &mut batch).unwrap();
    let before = batch.clone();
    batch.generation.fill(9);
    pipe.regenerate(5, &[0; 16], &mut batch).unwrap();
    batch.generation.fill(0);
    assert!(batch.bytes_eq(&before));
}

#[test]
fn bad_shapes_are_errors() {
    let p = Preset::load("track").unwrap();
    let mut pipe = Pipeline::new(&p, 4, Launch::new()).unwrap();
    let mut batch = pipe.new_batch(0).unwrap();
    let m = pipe
        .regenerate(0, &[1; 3], &mut batch)
        .unwrap_err()
        .to_string();
    assert!(m.contains("3 entries") && m.contains("(4)"), "{m}");
    let mut other = TrackBatch::new(5, 256, 0).unwrap();
    let m = pipe.generate(0, 0, &mut other).unwrap_err().to_string();
    assert!(m.contains("5 envs") && m.contains("4 ×"), "{m}");
    assert!(Pipeline::new(&p, 0, Launch::new()).is_err());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Masked regeneration: unmasked envs keep every byte; a masked env equals a fresh
    /// single-env generation at its own generation counter.
    #[test]
    fn masked_regeneration(
        n in 1usize..24,
        mask_bits in any::<u32>(),
        gens in proptest::collection::vec(0u32..4, 24),
        threads in 1usize..3,
    ) {
        let p = Preset::load("track").unwrap();
        let seed = 11;
        let mut pipe = Pipeline::new(&p, n, Launch::with_threads(threads).unwrap()).unwrap();
        let mut batch = pipe.new_batch(0).unwrap();
        pipe.generate(seed, 0, &mut batch).unwrap();
        let before = batch.clone();
        let mask: Vec<u8> = (0..n).map(|e| ((mask_bits >> e) & 1) as u8).collect();
        for e in 0..n {
            if mask[e] != 0 {
                batch.generation[e] = gens[e];
            }
        }
        pipe.regenerate(seed, &mask, &mut batch).unwrap();
        for e in 0..n {
            let row = batch.slice(e..e + 1);
            if mask[e] == 0 {
                prop_assert!(row.bytes_eq(&before.slice(e..e + 1)), "unmasked env {} changed", e);
            } else {
                let fresh = generate(&p, 1, e as u64, seed, gens[e], 1);
                prop_assert!(row.bytes_eq(&fresh), "masked env {} differs from a fresh generation", e);
            }
        }
    }
}
