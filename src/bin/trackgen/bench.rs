//! The timing commands of the track pipeline and the course runtime: `bench` and `bench-course`.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use trackgen::corpus::corpus_bytes;
use trackgen::course::{Binding, Course, CourseConfig, Mode, PurePursuit};
use trackgen::exec::plan::{Backend, Device};
use trackgen::exec::Launch;
use trackgen::preset::{Preset, DEFAULT};
use trackgen::track::{generators, Pipeline};
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
    for preset in &presets {
        check_envs_memory(preset, &args.envs, 4)?;
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
    let mut shapes = String::new();
    let mut pass_rows = String::new();
    for preset in &presets {
        let mut last_batch = None;
        for &threads in &args.threads {
            let launch = Launch::with_threads(threads)?;
            let thread_label = if threads == 0 {
                format!("all={}", launch.threads())
            } else {
                threads.to_string()
            };
            let backend = Backend::new(args.device, launch.clone())?;
            for &n in &args.envs {
                let stage = generators::from_preset(preset);
                let mut pipe = Pipeline::on_backend(preset, n, backend.clone(), stage)?;
                let mut batch = pipe.new_batch(0)?;
                pipe.generate(args.seed, 0, &mut batch)?;
                let mut seconds = Vec::with_capacity(args.reps as usize);
                let mut cpu_seconds = Vec::with_capacity(args.reps as usize);
                let mut valid = 0u64;
                let mut pass_time = BTreeMap::<String, Duration>::new();
                for rep in 1..=args.reps {
                    let (t, cpu) = (Instant::now(), trackgen::os::process_cpu_time());
                    pipe.generate(args.seed, rep, &mut batch)?;
                    seconds.push(t.elapsed().as_secs_f64());
                    if let (Some(start), Some(end)) = (cpu, trackgen::os::process_cpu_time()) {
                        cpu_seconds.push((end - start).as_secs_f64());
                    }
                    valid += batch.valid.iter().map(|&v| u64::from(v != 0)).sum::<u64>();
                    for (pass, d) in &pipe.last_trace().pass_time {
                        *pass_time.entry(pass.clone()).or_default() += *d;
                    }
                }
                if args.passes {
                    let tracks = n as f64 * f64::from(args.reps);
                    pass_rows += &pass_time_rows(
                        &format!("{:<12} {:>8} {:>7}", preset.source, thread_label, n),
                        &pass_time,
                        seconds.iter().sum(),
                        tracks,
                    );
                }
                seconds.sort_by(f64::total_cmp);
                let median = seconds[seconds.len() / 2].max(1e-12);
                cpu_seconds.sort_by(f64::total_cmp);
                let cpu_per_track = match cpu_seconds.get(cpu_seconds.len() / 2) {
                    Some(s) => format!("{:.2}", s * 1e6 / n as f64),
                    None => "-".into(),
                };
                let yield_fraction = valid as f64 / (n as f64 * f64::from(args.reps));
                emit(&format!(
                    "{:<12} {:<11} {:>8} {:>7} {:>12.0} {:>10.2} {:>13} {:>7.4}\n",
                    preset.source,
                    pipe.stage_name(),
                    thread_label,
                    n,
                    n as f64 / median,
                    median * 1e6 / n as f64,
                    cpu_per_track,
                    yield_fraction
                ))?;
                last_batch = Some(batch);
            }
        }
        if let Some(batch) = last_batch {
            let mut acc = ShapeAccumulator::default();
            acc.add_batch(&batch, preset.track.half_width_m);
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
    Ok(())
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
