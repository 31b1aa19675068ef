//! How often a preset's generator draws a curve that needs relaxation or another attempt.
//!
//! For each preset it reports, over `ENVS` envs (seed 0, generation 0):
//! - `tight` / `close`: the fraction of first-attempt curves (generator, then resampling to the
//!   preset's spacing) that the relaxation check flags as too tight (some turn under the minimum
//!   radius) or too close (non-neighbouring points under the separation) — those relax;
//! - `relaxed`: the fraction flagged by either;
//! - `first_ok`, `mean_att`, `yield`: with the preset as it is, the fraction of envs valid on the
//!   first attempt, the mean attempts used, and the fraction valid at all;
//! - `windows`: relaxation windows the pipeline ran over the batch (each runs every active env);
//! - `no_relax_first`: with relaxation off, the fraction valid on the first attempt.
//!
//! Run: `cargo run --release --example first_attempt [-- ENVS PRESET...]`
//! (default: 4096 envs; polar, bezier, hull, circuit, f1, karting).

use trackgen::exec::Launch;
use trackgen::geom::Vec2;
use trackgen::preset::Preset;
use trackgen::rng::{stream, LaneRng};
use trackgen::track::relax::{violation, RelaxConsts, RelaxScratch, TOO_CLOSE, TOO_TIGHT};
use trackgen::track::resample::resample_closed;
use trackgen::track::{generators, Pipeline};

fn main() -> trackgen::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let envs: usize = args.first().and_then(|s| s.parse().ok()).unwrap_or(4096);
    let names: Vec<&str> = if args.len() > 1 {
        args[1..].iter().map(String::as_str).collect()
    } else {
        vec!["polar", "bezier", "hull", "circuit", "f1", "karting"]
    };
    println!(
        "{:<10} {:>7} {:>7} {:>8} {:>9} {:>9} {:>8} {:>8} {:>15}",
        "preset",
        "tight",
        "close",
        "relaxed",
        "first_ok",
        "mean_att",
        "yield",
        "windows",
        "no_relax_first"
    );
    for name in names {
        let preset = Preset::load(name)?;
        let (tight, close, relaxed) = flagged(&preset, envs);
        let run = |preset: &Preset| -> trackgen::Result<(f64, f64, f64, u32)> {
            let mut pipeline = Pipeline::new(preset, envs, Launch::new())?;
            let mut batch = pipeline.new_batch(0)?;
            pipeline.generate(0, 0, &mut batch)?;
            let n = envs as f64;
            let first = batch
                .valid
                .iter()
                .zip(&batch.attempts)
                .filter(|(&v, &a)| v == 1 && a == 1)
                .count() as f64
                / n;
            let mean = batch.attempts.iter().map(|&a| f64::from(a)).sum::<f64>() / n;
            let valid = batch.valid.iter().filter(|&&v| v == 1).count() as f64 / n;
            let windows = pipeline
                .last_trace()
                .cpu_passes
                .get("tg_track_relax_window")
                .copied()
                .unwrap_or(0);
            Ok((first, mean, valid, windows))
        };
        let (first, mean, valid, windows) = run(&preset)?;
        let mut off = preset.clone();
        off.relax.max_windows = 0;
        let (no_relax_first, ..) = run(&off)?;
        println!(
            "{name:<10} {tight:>7.4} {close:>7.4} {relaxed:>8.4} {first:>9.4} {mean:>9.4} {valid:>8.4} \
             {windows:>8} {no_relax_first:>15.4}"
        );
    }
    Ok(())
}

/// Fractions of first-attempt curves flagged too tight, too close, and either.
fn flagged(preset: &Preset, envs: usize) -> (f64, f64, f64) {
    let t = &preset.track;
    let consts = RelaxConsts::from_preset(preset);
    let stage = generators::from_preset(preset);
    let n_max = t.n_max as usize;
    let mut scratch = vec![0.0f32; stage.scratch_len().max(1)];
    let mut scratch_u32 = vec![0u32; stage.scratch_u32_len().max(1)];
    let mut raw = vec![Vec2::ZERO; stage.max_points().max(3)];
    let mut pts = vec![Vec2::ZERO; n_max];
    let mut disp = vec![Vec2::ZERO; 2 * n_max];
    let (mut tight, mut close, mut either) = (0usize, 0usize, 0usize);
    for e in 0..envs {
        let mut rng = LaneRng::new(0, e as u64, 0, stream::with_attempt(stream::GENERATE, 0));
        let n = stage.run_lane(&mut rng, &mut scratch, &mut scratch_u32, &mut raw);
        let count = resample_closed(&raw[..n.min(raw.len())], t.spacing_m, &mut pts);
        let flags = violation(
            &pts[..count],
            &consts,
            &mut RelaxScratch { disp: &mut disp },
            true,
        );
        tight += usize::from(flags & TOO_TIGHT != 0);
        close += usize::from(flags & TOO_CLOSE != 0);
        either += usize::from(flags != 0);
    }
    let n = envs as f64;
    (tight as f64 / n, close as f64 / n, either as f64 / n)
}
