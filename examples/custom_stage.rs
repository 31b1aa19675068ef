//! A user generator stage plugged into the pipeline: stadium-shaped tracks (two straights
//! joined by half circles) with a random straight length and radius per env.
//!
//! Run: `cargo run --release --example custom_stage`

use std::sync::Arc;

use trackgen::exec::Launch;
use trackgen::geom::Vec2;
use trackgen::math::{sin_cos, PI};
use trackgen::preset::Preset;
use trackgen::rng::LaneRng;
use trackgen::track::{Pipeline, Stage};

/// Stadium tracks: straights of random length joined by half circles of random radius.
struct Stadium {
    min_radius_m: f32,
    max_radius_m: f32,
    max_straight_m: f32,
}

/// Points per half circle and per straight.
const ARC: usize = 48;
const STRAIGHT: usize = 32;

impl Stage for Stadium {
    fn name(&self) -> &str {
        "stadium"
    }
    fn max_points(&self) -> usize {
        2 * (ARC + STRAIGHT)
    }
    fn run_lane(
        &self,
        rng: &mut LaneRng,
        _scratch: &mut [f32],
        _scratch_u32: &mut [u32],
        out: &mut [Vec2],
    ) -> usize {
        // Only IEEE-exact operations and trackgen::math, randomness only from `rng`.
        let r = rng.range(self.min_radius_m, self.max_radius_m);
        let half = 0.5 * rng.range(0.0, self.max_straight_m);
        let mut k = 0;
        for side in 0..2 {
            let sign = if side == 0 { 1.0 } else { -1.0 };
            for i in 0..STRAIGHT {
                let t = i as f32 / STRAIGHT as f32;
                out[k] = Vec2::new(sign * (-half + 2.0 * half * t), -sign * r);
                k += 1;
            }
            for i in 0..ARC {
                let (s, c) = sin_cos(-0.5 * PI + PI * i as f32 / ARC as f32);
                out[k] = Vec2::new(sign * (half + r * c), sign * r * s);
                k += 1;
            }
        }
        k
    }
}

fn main() -> trackgen::Result<()> {
    let preset = Preset::load("track")?;
    let stage = Arc::new(Stadium {
        min_radius_m: 30.0,
        max_radius_m: 80.0,
        max_straight_m: 300.0,
    });
    let envs = 1024;
    let mut pipeline = Pipeline::with_stage(&preset, envs, Launch::new(), stage)?;
    let mut batch = pipeline.new_batch(0)?;
    let started = std::time::Instant::now();
    pipeline.generate(42, 0, &mut batch)?;
    let seconds = started.elapsed().as_secs_f64();
    let valid = batch.valid.iter().filter(|&&v| v == 1).count();
    let mean_length = batch.length.iter().map(|&l| f64::from(l)).sum::<f64>() / envs as f64;
    println!(
        "{} stadium tracks in {:.1} ms: {valid} valid, mean length {mean_length:.0} m",
        envs,
        seconds * 1e3
    );
    Ok(())
}
