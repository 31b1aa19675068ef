//! `trackgen stats`: the shape statistics of a track corpus, and the table rows that
//! `trackgen bench` prints beside its speeds.

use std::path::PathBuf;

use trackgen::corpus::{Corpus, DEFAULT_CHUNK_ENVS};
use trackgen::preset::Preset;
use trackgen::track::stats::{ShapeAccumulator, ShapeStats};
use trackgen::{Error, Result};

use crate::output::emit;

/// `trackgen stats`.
#[derive(clap::Args, Debug)]
pub struct StatsArgs {
    /// Corpus directory (written by `trackgen generate`).
    dir: PathBuf,
    /// Envs read per batch (memory is one batch).
    #[arg(long, default_value_t = DEFAULT_CHUNK_ENVS, value_name = "N")]
    chunk_envs: usize,
}

/// The header of a shape-statistics table.
pub fn shape_header() -> String {
    format!(
        "{:<12} {:<18} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}\n",
        "preset", "statistic", "mean", "min", "p05", "p50", "p95", "max"
    )
}

/// The rows of a shape-statistics table for `preset`.
pub fn shape_rows(preset: &str, stats: &ShapeStats) -> String {
    let mut text = String::new();
    for (name, s) in stats.rows() {
        text += &format!(
            "{preset:<12} {name:<18} {:>10.3} {:>10.3} {:>10.3} {:>10.3} {:>10.3} {:>10.3}\n",
            s.mean, s.min, s.p05, s.p50, s.p95, s.max
        );
    }
    text
}

/// Runs `trackgen stats`.
pub fn stats(args: StatsArgs) -> Result<()> {
    if args.chunk_envs == 0 {
        return Err(Error::Invalid("--chunk-envs 0: expected at least 1".into()));
    }
    let corpus = Corpus::open(&args.dir)?;
    if corpus.is_gates() {
        return Err(Error::Invalid(format!(
            "{}: a gate-course corpus; shape statistics are defined for track corpora",
            args.dir.display()
        )));
    }
    let manifest = corpus.manifest();
    let preset = Preset::parse(&manifest.preset_toml, &manifest.preset_source)?;
    let n = manifest.n_envs();
    let mut shapes = ShapeAccumulator::default();
    let mut start = 0;
    while start < n {
        let end = n.min(start + args.chunk_envs as u64);
        shapes.add_batch(&corpus.read_rows(start..end)?, preset.track.half_width_m);
        start = end;
    }
    emit(&format!(
        "{} ({n} tracks, half width {} m)\n{}{}",
        args.dir.display(),
        preset.track.half_width_m,
        shape_header(),
        shape_rows(&preset.source, &shapes.finish())
    ))
}
