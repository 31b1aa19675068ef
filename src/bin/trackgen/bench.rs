//! The timing commands of the track pipeline and the course runtime: `bench` and `bench-course`.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use trackgen::corpus::corpus_bytes;
use trackgen::course::{Binding, Course, CourseConfig, Mode, PurePursuit};
use trackgen::exec::plan::{Backend, Device};
use trackgen::exec::Launch;
use trackgen::preset::{Preset, DEFAULT};
use trackgen::track::{generators, Pipeline, TrackBatch};
use trackgen::{Error, Result};

use crate::args::parse_threads;
use crate::limits::check_memory;
use crate::output::emit;
use crate::stats::{shape_header, shape_rows};
use trackgen::track::stats::ShapeAccumulator;

#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    /// Batch sizes, comma-separated.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "64,512,4096",
        value_name = "N,.."
    )]
    pub envs: Vec<usize>,
    /// Thread counts, comma-separated; `all` means every core.
    #[arg(long, value_delimiter = ',', default_value = "1,all", value_parser = parse_threads, value_name = "T,..")]
    pub threads: Vec<usize>,
    /// Presets (built-in names or paths), comma-separated.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "polar,bezier,hull,voronoi,checkpoint,repulsive",
        value_name = "NAME,.."
    )]
    pub presets: Vec<String>,
    /// Timed repetitions per row (the median is reported).
    #[arg(long, default_value_t = 5, value_name = "K")]
    pub reps: u32,
    /// Seed.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Where the pipeline runs: `cpu`, `emulated` (the CUDA kernels compiled for the host) or
    /// `cuda[:N]`. On CUDA each timed row includes the batch's transfers to and from the device.
    #[arg(long, default_value = "cpu", value_name = "DEVICE")]
    pub device: Device,
    /// Also print where each row's time went: every pass's wall clock (its lane function over
    /// all lanes, or its emulated kernel), summed over the timed repetitions, per track and as a
    /// share of the row's timed wall clock. Not on CUDA (its passes run asynchronously).
    #[arg(long)]
    pub passes: bool,
    /// Time the presets side by side: for each thread count and batch size, every preset's
    /// pipeline is built first and the repetitions take turns (one of each preset, the same
    /// seed, then the next), and a last table gives each preset's per-repetition time over the
    /// first preset's (median ratio). On a machine whose speed drifts between runs, the
    /// difference between two presets is resolved far better so than by separate runs.
    #[arg(long)]
    pub interleave: bool,
}

#[derive(clap::Args, Debug)]
pub struct BenchCourseArgs {
    /// Preset (built-in name or path); a gate preset races as gates unless --mode track.
    #[arg(long, default_value = DEFAULT, value_name = "NAME|PATH")]
    pub preset: String,
    /// Course mode: `track` or `gates` (default: gates for a gate preset, else track).
    #[arg(long, value_name = "MODE", value_parser = ["track", "gates"])]
    pub mode: Option<String>,
    /// Batch sizes, comma-separated.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "4096,65536",
        value_name = "N,.."
    )]
    pub envs: Vec<usize>,
    /// Thread counts, comma-separated; `all` means every core.
    #[arg(long, value_delimiter = ',', default_value = "1,all", value_parser = parse_threads, value_name = "T,..")]
    pub threads: Vec<usize>,
    /// Timed step() calls per repetition (the agent moves between them, untimed).
    #[arg(long, default_value_t = 20, value_name = "K")]
    pub steps: u32,
    /// Repetitions of the step timing (the median is reported).
    #[arg(long, default_value_t = 5, value_name = "K")]
    pub reps: u32,
    /// Repetitions of each regenerate() timing (the median is reported).
    #[arg(long, default_value_t = 3, value_name = "K")]
    pub regen_reps: u32,
    /// Footprint half extents bound per env: track `LENGTH,WIDTH` of the box, gates `RADIUS,0`.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "2.2,1.0",
        value_name = "A,B"
    )]
    pub footprint: Vec<f32>,
    /// Seed.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
}

/// Runs `trackgen bench`.
pub fn bench(args: BenchArgs) -> Result<()> {
    if args.reps == 0 {
        return Err(Error::Invalid("--reps 0: expected at least 1".into()));
    }
    if let Some(bad) = args.envs.iter().find(|&&n| n == 0) {
        return Err(Error::Invalid(format!("--envs {bad}: expected at least 1")));
    }
    // Load every preset first so a typo fails before any timing.
    let presets = args
        .presets
        .iter()
        .map(|p| Preset::load(p))
        .collect::<Result<Vec<_>>>()?;
    // Interleaved, every preset's batch of a size is held at once.
    let held = if args.interleave {
        4 * presets.len() as u128
    } else {
        4
    };
    for preset in &presets {
        check_envs_memory(preset, &args.envs, held)?;
    }
    if args.passes && matches!(args.device, Device::Cuda(_)) {
        return Err(Error::Invalid(
            "--passes with --device cuda: pass times are measured on the CPU and emulated \
             backends only (CUDA passes run asynchronously)"
                .into(),
        ));
    }
    // Open the device first, so that a missing GPU fails before any output.
    Backend::new(args.device, Launch::new())?;
    emit(&format!("device: {}\n", args.device))?;
    emit(&format!(
        "{:<12} {:<11} {:>8} {:>7} {:>12} {:>10} {:>13} {:>7}\n",
        "preset", "generator", "threads", "envs", "tracks/s", "µs/track", "cpu-µs/track", "yield"
    ))?;
    let mut pass_rows = String::new();
    let mut paired_rows = String::new();
    let mut last_batch: Vec<Option<TrackBatch>> = presets.iter().map(|_| None).collect();
    // The rows in the order they are timed: each preset's rows in turn, or (interleaved) the
    // presets' rows of one thread count and batch size side by side, one repetition each in
    // turn.
    let mut groups: Vec<Vec<(usize, usize, usize)>> = Vec::new();
    let combos = || {
        args.threads
            .iter()
            .flat_map(|&t| args.envs.iter().map(move |&n| (t, n)))
    };
    if args.interleave {
        for (threads, n) in combos() {
            groups.push((0..presets.len()).map(|p| (p, threads, n)).collect());
        }
    } else {
        for p in 0..presets.len() {
            for (threads, n) in combos() {
                groups.push(vec![(p, threads, n)]);
            }
        }
    }
    for group in groups {
        let mut rows = group
            .iter()
            .map(|&(p, threads, n)| Row::new(&presets[p], p, threads, n, &args))
            .collect::<Result<Vec<_>>>()?;
        for rep in 1..=args.reps {
            for row in &mut rows {
                row.time(args.seed, rep)?;
            }
        }
        for row in &rows {
            emit(&row.line(args.reps))?;
            if args.passes {
                let tracks = row.n as f64 * f64::from(args.reps);
                pass_rows += &pass_time_rows(
                    &format!(
                        "{:<12} {:>8} {:>7}",
                        row.preset.source, row.thread_label, row.n
                    ),
                    &row.pass_time,
                    row.seconds.iter().sum(),
                    tracks,
                );
            }
        }
        if args.interleave {
            paired_rows += &paired_ratio_rows(&rows);
        }
        for row in rows {
            last_batch[row.index] = Some(row.batch);
        }
    }
    let mut shapes = String::new();
    for (preset, batch) in presets.iter().zip(&last_batch) {
        if let Some(batch) = batch {
            let mut acc = ShapeAccumulator::default();
            acc.add_batch(batch, preset.track.half_width_m);
            shapes += &shape_rows(&preset.source, &acc.finish());
        }
    }
    emit(&format!(
        "\nshape statistics (last batch of each preset; see `trackgen stats`)\n{}{shapes}",
        shape_header()
    ))?;
    if args.passes {
        emit(&format!(
            "\npass times (wall clock, summed over the timed repetitions)\n\
             {:<12} {:>8} {:>7} {:<22} {:>10} {:>7}\n{pass_rows}",
            "preset", "threads", "envs", "pass", "µs/track", "share"
        ))?;
    }
    if args.interleave {
        emit(&format!(
            "\npaired against the first preset (per repetition: same seed, timed back to back; \
             median of the ratios, and in how many repetitions this preset took less)\n\
             {:<12} {:>8} {:>7} {:>16} {:>17}\n{paired_rows}",
            "preset", "threads", "envs", "cpu-time ratio", "wall-clock ratio"
        ))?;
    }
    Ok(())
}

/// One row of `trackgen bench` while it is timed: a preset's pipeline at one thread count and
/// batch size, and what its repetitions measured.
struct Row<'a> {
    preset: &'a Preset,
    /// The preset's place in `--presets`.
    index: usize,
    thread_label: String,
    n: usize,
    pipe: Pipeline,
    batch: TrackBatch,
    /// Wall-clock and process CPU seconds of each repetition (CPU time where the OS gives it).
    seconds: Vec<f64>,
    cpu_seconds: Vec<f64>,
    valid: u64,
    pass_time: BTreeMap<String, Duration>,
}

impl<'a> Row<'a> {
    /// The row's pipeline and batch, after one untimed run (generation 0).
    fn new(
        preset: &'a Preset,
        index: usize,
        threads: usize,
        n: usize,
        args: &BenchArgs,
    ) -> Result<Self> {
        let launch = Launch::with_threads(threads)?;
        let thread_label = if threads == 0 {
            format!("all={}", launch.threads())
        } else {
            threads.to_string()
        };
        let backend = Backend::new(args.device, launch)?;
        let stage = generators::from_preset(preset);
        let mut pipe = Pipeline::on_backend(preset, n, backend, stage)?;
        let mut batch = pipe.new_batch(0)?;
        pipe.generate(args.seed, 0, &mut batch)?;
        Ok(Self {
            preset,
            index,
            thread_label,
            n,
            pipe,
            batch,
            seconds: Vec::with_capacity(args.reps as usize),
            cpu_seconds: Vec::with_capacity(args.reps as usize),
            valid: 0,
            pass_time: BTreeMap::new(),
        })
    }

    /// One timed repetition: generation `rep` of every env.
    fn time(&mut self, seed: u64, rep: u32) -> Result<()> {
        let (t, cpu) = (Instant::now(), trackgen::os::process_cpu_time());
        self.pipe.generate(seed, rep, &mut self.batch)?;
        self.seconds.push(t.elapsed().as_secs_f64());
        if let (Some(start), Some(end)) = (cpu, trackgen::os::process_cpu_time()) {
            self.cpu_seconds.push((end - start).as_secs_f64());
        }
        self.valid += self
            .batch
            .valid
            .iter()
            .map(|&v| u64::from(v != 0))
            .sum::<u64>();
        for (pass, d) in &self.pipe.last_trace().pass_time {
            *self.pass_time.entry(pass.clone()).or_default() += *d;
        }
        Ok(())
    }

    /// The row's line of the speed table: medians over the repetitions.
    fn line(&self, reps: u32) -> String {
        let n = self.n as f64;
        let median_s = median(&mut self.seconds.clone()).max(1e-12);
        let cpu_per_track = if self.cpu_seconds.is_empty() {
            "-".into()
        } else {
            format!("{:.2}", median(&mut self.cpu_seconds.clone()) * 1e6 / n)
        };
        format!(
            "{:<12} {:<11} {:>8} {:>7} {:>12.0} {:>10.2} {:>13} {:>7.4}\n",
            self.preset.source,
            self.pipe.stage_name(),
            self.thread_label,
            self.n,
            n / median_s,
            median_s * 1e6 / n,
            cpu_per_track,
            self.valid as f64 / (n * f64::from(reps))
        )
    }
}

/// The paired table's lines of one interleaved group: each preset after the first against the
/// first, repetition by repetition (CPU time where the OS gives it, `-` otherwise).
fn paired_ratio_rows(rows: &[Row<'_>]) -> String {
    let Some((first, rest)) = rows.split_first() else {
        return String::new();
    };
    let paired = |a: &[f64], b: &[f64]| -> String {
        if a.is_empty() || a.len() != b.len() {
            return "-".into();
        }
        let mut ratios: Vec<f64> = a.iter().zip(b).map(|(x, y)| x / y.max(1e-12)).collect();
        let below = ratios.iter().filter(|&&r| r < 1.0).count();
        format!("{:.3} ({below}/{})", median(&mut ratios), ratios.len())
    };
    rest.iter()
        .map(|row| {
            format!(
                "{:<12} {:>8} {:>7} {:>16} {:>17}\n",
                row.preset.source,
                row.thread_label,
                row.n,
                paired(&row.cpu_seconds, &first.cpu_seconds),
                paired(&row.seconds, &first.seconds)
            )
        })
        .collect()
}

/// The rows of one bench row's pass times, slowest first, `prefix` opening each: µs per track
/// and the share of the row's timed wall clock `total_s`, then the time outside every pass
/// (the host's control steps, scheduling) as `(outside passes)`.
fn pass_time_rows(
    prefix: &str,
    pass_time: &BTreeMap<String, Duration>,
    total_s: f64,
    tracks: f64,
) -> String {
    let mut passes: Vec<(&str, f64)> = pass_time
        .iter()
        .map(|(name, d)| (name.as_str(), d.as_secs_f64()))
        .collect();
    passes.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(b.0)));
    let inside: f64 = passes.iter().map(|p| p.1).sum();
    passes.push(("(outside passes)", (total_s - inside).max(0.0)));
    let total = total_s.max(1e-12);
    passes
        .iter()
        .map(|(name, s)| {
            format!(
                "{prefix} {name:<22} {:>10.3} {:>6.1}%\n",
                s * 1e6 / tracks,
                100.0 * s / total
            )
        })
        .collect()
}

/// An error unless a batch of each of `envs` envs of `preset` fits the available memory, taking
/// `factor` times the bytes of the envs' corpus rows (the pipeline's or runtime's buffers).
fn check_envs_memory(preset: &Preset, envs: &[usize], factor: u128) -> Result<()> {
    for &n in envs {
        let bytes = u128::from(corpus_bytes(preset, n as u64)) * factor;
        check_memory(&format!("--envs {n}"), Some(bytes))?;
    }
    Ok(())
}

/// The median of `values` (sorted in place).
fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// Runs `trackgen bench-course`.
pub fn bench_course(args: BenchCourseArgs) -> Result<()> {
    for (flag, v) in [
        ("--reps", args.reps),
        ("--regen-reps", args.regen_reps),
        ("--steps", args.steps),
    ] {
        if v == 0 {
            return Err(Error::Invalid(format!("{flag} 0: expected at least 1")));
        }
    }
    if let Some(bad) = args.envs.iter().find(|&&n| n == 0) {
        return Err(Error::Invalid(format!("--envs {bad}: expected at least 1")));
    }
    let footprint = match args.footprint[..] {
        [a, b] if a >= 0.0 && b >= 0.0 => [a, b],
        _ => {
            return Err(Error::Invalid(format!(
                "--footprint {:?}: expected two numbers ≥ 0, e.g. 2.2,1.0",
                args.footprint
            )))
        }
    };
    let preset = Preset::load(&args.preset)?;
    check_envs_memory(&preset, &args.envs, 8)?;
    let gates = match args.mode.as_deref() {
        Some(m) => m == "gates",
        None => preset.gates.is_some(),
    };
    let mode = if gates { "gates" } else { "track" };
    emit(&format!(
        "{:<12} {:<6} {:>8} {:>7} {:<22} {:>14} {:>12}\n",
        "preset", "mode", "threads", "envs", "measure", "median", "per env"
    ))?;
    for &threads in &args.threads {
        let launch = Launch::with_threads(threads)?;
        let thread_label = if threads == 0 {
            format!("all={}", launch.threads())
        } else {
            threads.to_string()
        };
        for &n in &args.envs {
            let config = CourseConfig::default();
            let mut course = if gates {
                Course::new(Mode::Gates, &preset, n, args.seed, config, launch.clone())?
            } else {
                Course::new(Mode::Track, &preset, n, args.seed, config, launch.clone())?
            };
            let g = course.geometry();
            let binding = Binding::new(g.spawn_position.clone())
                .with_orientations(g.spawn_orientation.clone())
                .with_half_extents(vec![trackgen::geom::Vec2::from(footprint); n]);
            course.bind(binding)?;
            let agent = PurePursuit::for_course(&course);
            let row = |measure: &str, median: String, per_env: String| {
                emit(&format!(
                    "{:<12} {:<6} {:>8} {:>7} {:<22} {:>14} {:>12}\n",
                    preset.source, mode, thread_label, n, measure, median, per_env
                ))
            };
            agent.act(&mut course)?;
            course.step()?;
            let mut rates = Vec::with_capacity(args.reps as usize);
            for _ in 0..args.reps {
                let mut seconds = 0.0;
                for _ in 0..args.steps {
                    agent.act(&mut course)?;
                    let t = Instant::now();
                    course.step()?;
                    seconds += t.elapsed().as_secs_f64();
                }
                rates.push(f64::from(args.steps) * n as f64 / seconds.max(1e-12));
            }
            let rate = median(&mut rates);
            row(
                "step env-steps/s",
                format!("{:.3e}", rate),
                format!("{:.1} ns", 1e9 / rate),
            )?;
            let mut full = 0.0;
            for (label, every) in [
                ("regenerate 100%", 1usize),
                ("regenerate 1%", 100),
                ("regenerate 0%", 0),
            ] {
                let mask: Vec<u8> = (0..n)
                    .map(|e| u8::from(every != 0 && e % every == 0))
                    .collect();
                let mut seconds = Vec::with_capacity(args.regen_reps as usize);
                for _ in 0..args.regen_reps {
                    let t = Instant::now();
                    course.regenerate(&mask, true)?;
                    seconds.push(t.elapsed().as_secs_f64());
                }
                let s = median(&mut seconds);
                if every == 1 {
                    full = s;
                }
                row(
                    label,
                    format!("{:.3} ms", s * 1e3),
                    format!("{:.4}% of 100%", 100.0 * s / full.max(1e-12)),
                )?;
            }
        }
    }
    Ok(())
}
