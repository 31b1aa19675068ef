//! `trackgen`: generate track and gate-course corpora, preview them, benchmark the generators and
//! the course runtime, list presets.
//!
//! Exit status: 0 on success, 2 for a usage or input error (bad flag, bad preset, bad range,
//! existing output, malformed corpus), 1 for a failure while working (I/O, internal error).
//! Errors print one `error: <message>` line on stderr, never a backtrace.

use std::io::Write;
use std::ops::Range;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use clap::{Parser, Subcommand};

use trackgen::corpus::{write_corpus, Corpus, DEFAULT_CHUNK_ENVS};
use trackgen::course::{Binding, Course, CourseConfig, PurePursuit};
use trackgen::exec::Launch;
use trackgen::preset::{Preset, BUILTIN, DEFAULT};
use trackgen::render::{contact_sheet, gate_sheet, write_png};
use trackgen::track::stats::{ShapeAccumulator, ShapeStats};
use trackgen::track::Pipeline;
use trackgen::{Error, Result};

/// Deterministic batched race-track generation for parallel RL environments.
#[derive(Parser, Debug)]
#[command(name = "trackgen", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Generate a corpus of tracks (or, for a gate preset, gate courses) into a new directory
    /// (.npy arrays + manifest.json).
    Generate(GenerateArgs),
    /// Draw the first tracks (or gate courses) of a corpus as a PNG contact sheet.
    Preview(PreviewArgs),
    /// Time the pipeline per preset, thread count and batch size; print a table.
    Bench(BenchArgs),
    /// Print the shape statistics of a track corpus (length, length over half width, absolute
    /// turning, straight fraction, corners, corner radii; see `trackgen::track::stats`).
    Stats(StatsArgs),
    /// Time the course runtime: step() env-steps/s and masked regenerate(); print a table.
    BenchCourse(BenchCourseArgs),
    /// List the built-in presets, or print one's TOML.
    Presets(PresetsArgs),
    /// Generate per-env SDF scenes of a scene preset into one scene file.
    Scene(trackgen::scene::cli::SceneArgs),
    /// Cast a .npy of rays [E, K, 6] against a scene file; write distances [E, K].
    Raycast(trackgen::scene::cli::RaycastArgs),
    /// Draw one env of a scene file: a depth image and a top-down SDF slice (PNG).
    PreviewScene(trackgen::scene::cli::PreviewSceneArgs),
    /// Time the scene pipeline (SDF build, bytes per env, dedup, rays) and print a table.
    BenchScene(trackgen::scene::cli::BenchSceneArgs),
}

#[derive(clap::Args, Debug)]
struct GenerateArgs {
    /// Built-in preset name or path to a preset TOML file.
    #[arg(long, default_value = DEFAULT, value_name = "NAME|PATH")]
    preset: String,
    /// Corpus size N: envs 0..N. With --env-range it may be omitted; if given it must be ≥ B.
    #[arg(long, value_name = "N")]
    envs: Option<u64>,
    /// Seed of every env's random streams.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Generation counter of every env.
    #[arg(long, default_value_t = 0)]
    generation: u32,
    /// Write only global envs A..B (a shard; rows equal those of the full corpus).
    #[arg(long, value_name = "A..B", value_parser = parse_range)]
    env_range: Option<Range<u64>>,
    /// Worker threads (0 = all cores; default: RAYON_NUM_THREADS or all cores).
    #[arg(long, value_name = "T")]
    threads: Option<usize>,
    /// Envs generated per batch (memory is one batch).
    #[arg(long, default_value_t = DEFAULT_CHUNK_ENVS, value_name = "N")]
    chunk_envs: usize,
    /// Output directory; must not exist.
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
}

#[derive(clap::Args, Debug)]
struct PreviewArgs {
    /// Corpus directory.
    dir: PathBuf,
    /// Output PNG file.
    #[arg(long, value_name = "PNG")]
    out: PathBuf,
    /// Tracks to draw (the corpus's first rows).
    #[arg(long, default_value_t = 64, value_name = "N")]
    max: usize,
    /// Side of each cell, pixels.
    #[arg(long, default_value_t = 256, value_name = "PX")]
    cell: u32,
}

#[derive(clap::Args, Debug)]
struct BenchArgs {
    /// Batch sizes, comma-separated.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "64,512,4096",
        value_name = "N,.."
    )]
    envs: Vec<usize>,
    /// Thread counts, comma-separated; `all` means every core.
    #[arg(long, value_delimiter = ',', default_value = "1,all", value_parser = parse_threads, value_name = "T,..")]
    threads: Vec<usize>,
    /// Presets (built-in names or paths), comma-separated.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "polar,bezier,hull,voronoi,checkpoint,repulsive",
        value_name = "NAME,.."
    )]
    presets: Vec<String>,
    /// Timed repetitions per row (the median is reported).
    #[arg(long, default_value_t = 5, value_name = "K")]
    reps: u32,
    /// Seed.
    #[arg(long, default_value_t = 0)]
    seed: u64,
}

#[derive(clap::Args, Debug)]
struct BenchCourseArgs {
    /// Preset (built-in name or path); a gate preset races as gates unless --mode track.
    #[arg(long, default_value = DEFAULT, value_name = "NAME|PATH")]
    preset: String,
    /// Course mode: `track` or `gates` (default: gates for a gate preset, else track).
    #[arg(long, value_name = "MODE", value_parser = ["track", "gates"])]
    mode: Option<String>,
    /// Batch sizes, comma-separated.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "4096,65536",
        value_name = "N,.."
    )]
    envs: Vec<usize>,
    /// Thread counts, comma-separated; `all` means every core.
    #[arg(long, value_delimiter = ',', default_value = "1,all", value_parser = parse_threads, value_name = "T,..")]
    threads: Vec<usize>,
    /// Timed step() calls per repetition (the agent moves between them, untimed).
    #[arg(long, default_value_t = 20, value_name = "K")]
    steps: u32,
    /// Repetitions of the step timing (the median is reported).
    #[arg(long, default_value_t = 5, value_name = "K")]
    reps: u32,
    /// Repetitions of each regenerate() timing (the median is reported).
    #[arg(long, default_value_t = 3, value_name = "K")]
    regen_reps: u32,
    /// Footprint half extents bound per env: track `LENGTH,WIDTH` of the box, gates `RADIUS,0`.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "2.2,1.0",
        value_name = "A,B"
    )]
    footprint: Vec<f32>,
    /// Seed.
    #[arg(long, default_value_t = 0)]
    seed: u64,
}

#[derive(clap::Args, Debug)]
struct PresetsArgs {
    /// Print this built-in preset's TOML file.
    #[arg(long, value_name = "NAME")]
    show: Option<String>,
}

/// `A..B` with `A < B`.
fn parse_range(text: &str) -> std::result::Result<Range<u64>, String> {
    let (a, b) = text
        .split_once("..")
        .ok_or_else(|| format!("{text:?} is not a range: expected A..B, e.g. 100..200"))?;
    let num = |s: &str, which: &str| {
        s.trim().parse::<u64>().map_err(|_| {
            format!("{text:?}: range {which} {s:?} is not a non-negative integer (expected A..B)")
        })
    };
    let (a, b) = (num(a, "start")?, num(b, "end")?);
    if a >= b {
        return Err(format!(
            "{text:?} is empty or reversed: expected A..B with A < B"
        ));
    }
    Ok(a..b)
}

/// A thread count: a positive integer or `all` (0).
fn parse_threads(text: &str) -> std::result::Result<usize, String> {
    match text.trim() {
        "all" | "0" => Ok(0),
        t => t
            .parse::<usize>()
            .map_err(|_| format!("{text:?}: expected a thread count or `all`")),
    }
}

/// Writes `text` to stdout; a closed pipe (`| head`) ends output quietly.
fn emit(text: &str) -> Result<()> {
    match std::io::stdout().lock().write_all(text.as_bytes()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(Error::io("<stdout>", e)),
        _ => Ok(()),
    }
}

fn generate(args: GenerateArgs) -> Result<()> {
    let range = match (args.env_range, args.envs) {
        (_, Some(0)) => return Err(Error::Invalid("--envs 0: expected at least 1 env".into())),
        (Some(r), Some(n)) if r.end > n => {
            return Err(Error::Invalid(format!(
                "--env-range {}..{} ends past --envs {n}: expected B ≤ N",
                r.start, r.end
            )))
        }
        (Some(r), _) => r,
        (None, Some(n)) => 0..n,
        (None, None) => {
            return Err(Error::Invalid(
                "give --envs N (envs 0..N) or --env-range A..B".into(),
            ))
        }
    };
    if args.chunk_envs == 0 {
        return Err(Error::Invalid("--chunk-envs 0: expected at least 1".into()));
    }
    let preset = Preset::load(&args.preset)?;
    let launch = Launch::for_threads(args.threads)?;
    let threads = launch.threads();
    let started = Instant::now();
    let manifest = write_corpus(
        &args.out,
        &preset,
        args.seed,
        args.generation,
        range.clone(),
        args.chunk_envs,
        launch,
        true,
    )?;
    let seconds = started.elapsed().as_secs_f64();
    let n = manifest.n_envs();
    let (items, what) = if manifest.kind.is_some() {
        ("gates", "courses")
    } else {
        ("points", "tracks")
    };
    emit(&format!(
        "generated {n} envs {}..{} of preset {} (seed {}, generation {}) into {}: valid {:.4}, \
         mean {:.1} {items}, {seconds:.2} s, {:.0} {what}/s on {threads} threads\n",
        range.start,
        range.end,
        preset.source,
        args.seed,
        args.generation,
        args.out.display(),
        manifest.stats.valid_fraction,
        manifest.stats.mean_count,
        n as f64 / seconds.max(1e-9),
    ))
}

#[derive(clap::Args, Debug)]
struct StatsArgs {
    /// Corpus directory (written by `trackgen generate`).
    dir: PathBuf,
    /// Envs read per batch (memory is one batch).
    #[arg(long, default_value_t = DEFAULT_CHUNK_ENVS, value_name = "N")]
    chunk_envs: usize,
}

/// The header of a shape-statistics table.
fn shape_header() -> String {
    format!(
        "{:<12} {:<18} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}\n",
        "preset", "statistic", "mean", "min", "p05", "p50", "p95", "max"
    )
}

/// The rows of a shape-statistics table for `preset`.
fn shape_rows(preset: &str, stats: &ShapeStats) -> String {
    let mut text = String::new();
    for (name, s) in stats.rows() {
        text += &format!(
            "{preset:<12} {name:<18} {:>10.3} {:>10.3} {:>10.3} {:>10.3} {:>10.3} {:>10.3}\n",
            s.mean, s.min, s.p05, s.p50, s.p95, s.max
        );
    }
    text
}

fn stats(args: StatsArgs) -> Result<()> {
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

fn preview(args: PreviewArgs) -> Result<()> {
    if args.max == 0 {
        return Err(Error::Invalid("--max 0: expected at least 1 track".into()));
    }
    let corpus = Corpus::open(&args.dir)?;
    let rows = (args.max as u64).min(corpus.manifest().n_envs());
    let (sheet, what) = if corpus.is_gates() {
        let batch = corpus.read_gate_rows(0..rows)?;
        (gate_sheet(&batch, args.max, args.cell), "gate courses")
    } else {
        let batch = corpus.read_rows(0..rows)?;
        (contact_sheet(&batch, args.max, args.cell), "tracks")
    };
    write_png(&args.out, &sheet)?;
    emit(&format!(
        "drew {rows} {what} of {} into {} ({}×{} px)\n",
        args.dir.display(),
        args.out.display(),
        sheet.width(),
        sheet.height()
    ))
}

fn bench(args: BenchArgs) -> Result<()> {
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
    emit(&format!(
        "{:<12} {:<11} {:>8} {:>7} {:>12} {:>10} {:>7}\n",
        "preset", "generator", "threads", "envs", "tracks/s", "µs/track", "yield"
    ))?;
    let mut shapes = String::new();
    for preset in &presets {
        let mut last_batch = None;
        for &threads in &args.threads {
            let launch = Launch::with_threads(threads)?;
            let thread_label = if threads == 0 {
                format!("all={}", launch.threads())
            } else {
                threads.to_string()
            };
            for &n in &args.envs {
                let mut pipe = Pipeline::new(preset, n, launch.clone())?;
                let mut batch = pipe.new_batch(0)?;
                pipe.generate(args.seed, 0, &mut batch)?;
                let mut seconds = Vec::with_capacity(args.reps as usize);
                let mut valid = 0u64;
                for rep in 1..=args.reps {
                    let t = Instant::now();
                    pipe.generate(args.seed, rep, &mut batch)?;
                    seconds.push(t.elapsed().as_secs_f64());
                    valid += batch.valid.iter().map(|&v| u64::from(v != 0)).sum::<u64>();
                }
                seconds.sort_by(f64::total_cmp);
                let median = seconds[seconds.len() / 2].max(1e-12);
                let yield_fraction = valid as f64 / (n as f64 * f64::from(args.reps));
                emit(&format!(
                    "{:<12} {:<11} {:>8} {:>7} {:>12.0} {:>10.2} {:>7.4}\n",
                    preset.source,
                    pipe.stage_name(),
                    thread_label,
                    n,
                    n as f64 / median,
                    median * 1e6 / n as f64,
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
    ))
}

/// The median of `values` (sorted in place).
fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn bench_course(args: BenchCourseArgs) -> Result<()> {
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
                Course::gates(&preset, n, args.seed, config, launch.clone())?
            } else {
                Course::track(&preset, n, args.seed, config, launch.clone())?
            };
            let g = course.geometry();
            let binding = Binding::new(g.spawn_position.clone())
                .with_orientations(g.spawn_orientation.clone())
                .with_half_extents(vec![footprint; n]);
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

fn presets(args: PresetsArgs) -> Result<()> {
    match args.show {
        Some(name) => match BUILTIN.iter().find(|(n, _)| *n == name) {
            Some((_, text)) => emit(text),
            None => {
                let names: Vec<&str> = BUILTIN.iter().map(|(n, _)| *n).collect();
                Err(Error::Invalid(format!(
                    "--show {name}: no built-in preset of that name; built-in presets: {}",
                    names.join(", ")
                )))
            }
        },
        None => {
            let mut out = String::new();
            let width = BUILTIN
                .iter()
                .map(|(n, _)| n.len())
                .max()
                .unwrap_or(0)
                .max(11);
            for (name, text) in BUILTIN {
                let preset = Preset::parse(text, name)?;
                out.push_str(&format!(
                    "{name:<width$} {:<11} {}\n",
                    preset.generator.name(),
                    description(text)
                ));
            }
            emit(&out)
        }
    }
}

/// The description on a preset file's first line: `# trackgen preset `NAME`: DESCRIPTION`.
fn description(text: &str) -> &str {
    let first = text.lines().next().unwrap_or("");
    first.split_once("`: ").map_or("", |(_, d)| d.trim())
}

/// 2 for errors in what the user gave us, 1 for failures while working.
fn exit_code(error: &Error) -> u8 {
    match error {
        Error::Preset { .. } | Error::Invalid(_) | Error::Format { .. } => 2,
        _ => 1,
    }
}

fn main() -> ExitCode {
    std::panic::set_hook(Box::new(|info| {
        let message = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".into());
        let at = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        eprintln!("error: internal error (a trackgen bug, please report it): {message}{at}");
    }));
    let cli = Cli::parse();
    let result = std::panic::catch_unwind(|| match cli.command {
        Command::Generate(a) => generate(a),
        Command::Preview(a) => preview(a),
        Command::Bench(a) => bench(a),
        Command::Stats(a) => stats(a),
        Command::BenchCourse(a) => bench_course(a),
        Command::Presets(a) => presets(a),
        Command::Scene(a) => trackgen::scene::cli::scene(a),
        Command::Raycast(a) => trackgen::scene::cli::raycast(a),
        Command::PreviewScene(a) => trackgen::scene::cli::preview_scene(a),
        Command::BenchScene(a) => trackgen::scene::cli::bench_scene(a),
    });
    match result {
        Ok(Ok(())) => ExitCode::SUCCESS,
        Ok(Err(e)) => {
            eprintln!("error: {e}");
            ExitCode::from(exit_code(&e))
        }
        Err(_) => ExitCode::from(1),
    }
}
