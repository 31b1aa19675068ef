//! `trackgen`: generate track and gate-course corpora, preview them, benchmark the generators and
//! the course runtime, list presets; generate SDF scene files, cast rays against them, preview
//! and benchmark them.
//!
//! One module per command group; `main` parses the command line, dispatches and maps errors to
//! exit codes. Only this binary parses arguments and draws progress: the library reports progress
//! through callbacks.
//!
//! Exit status: 0 on success, 2 for a usage or input error (bad flag, bad preset, bad range,
//! existing output, malformed corpus), 1 for a failure while working (I/O, internal error).
//! Errors print one `error: <message>` line on stderr, never a backtrace.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use trackgen::Error;

mod args;
mod bench;
mod bench_scene;
mod corpus;
mod export;
mod limits;
mod output;
mod presets;
mod progress;
mod rays;
mod scene;
mod stats;

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
    Generate(corpus::GenerateArgs),
    /// Write meshes of a corpus's courses (road, walls, gate frames and posts) or of a scene's
    /// primitives as binary glTF (.glb) or OBJ, +z up and metres (--up y for y-up consumers).
    Export(export::ExportArgs),
    /// Draw the first tracks (or gate courses) of a corpus as a PNG contact sheet.
    Preview(corpus::PreviewArgs),
    /// Merge corpus shards (`generate --env-range` outputs of one preset, seed and generation)
    /// into one corpus, byte-identical to generating the whole range in one run.
    Merge(corpus::MergeArgs),
    /// Time the pipeline per preset, thread count and batch size; print a table.
    Bench(bench::BenchArgs),
    /// Print the shape statistics of a track corpus (length, length over half width, absolute
    /// turning, straight fraction, corners, corner radii; see `trackgen::track::stats`).
    Stats(stats::StatsArgs),
    /// Time the course runtime: step() env-steps/s and masked regenerate(); print a table.
    BenchCourse(bench::BenchCourseArgs),
    /// List the built-in course and scene presets, or print one's TOML.
    Presets(presets::PresetsArgs),
    /// Generate per-env SDF scenes of a scene preset (rooms, forest, gates) into one scene file.
    Scene(scene::SceneArgs),
    /// Write a .npy of sensor rays [E, K, 6] (a pinhole camera or a lidar ring at each env's
    /// spawn in a scene file, its start in a corpus, or one given pose) for `raycast`.
    Rays(rays::RaysArgs),
    /// Cast a .npy of rays [E, K, 6] against a scene file; write distances [E, K].
    Raycast(scene::RaycastArgs),
    /// Draw one env of a scene file: a depth image and a top-down SDF slice (PNG).
    PreviewScene(scene::PreviewSceneArgs),
    /// Time the scene pipeline (SDF build, bytes per env, dedup, rays) and print a table.
    BenchScene(bench_scene::BenchSceneArgs),
}

/// 2 for errors in what the user gave us, 1 for failures while working.
fn exit_code(error: &Error) -> u8 {
    match error {
        Error::Preset { .. } | Error::Invalid(_) | Error::Format { .. } => 2,
        _ => 1,
    }
}

/// On SIGINT or SIGTERM (Ctrl-C, `kill`, a batch system's time limit), removes the temporary
/// files and directories in progress, says so on stderr and exits with 128 + the signal. The
/// signals are received by a thread of ours (`signal-hook`), so the cleanup runs as normal code.
#[cfg(unix)]
fn remove_temps_on_signals() {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM]) else {
        return;
    };
    std::thread::spawn(move || {
        if let Some(signal) = signals.forever().next() {
            let removed = trackgen::atomic::remove_in_progress();
            let name = if signal == SIGINT {
                "SIGINT"
            } else {
                "SIGTERM"
            };
            let listed: Vec<String> = removed.iter().map(|p| p.display().to_string()).collect();
            eprintln!(
                "error: interrupted by {name}; removed {} temporary output(s){}{}",
                removed.len(),
                if listed.is_empty() { "" } else { ": " },
                listed.join(", ")
            );
            std::process::exit(128 + signal);
        }
    });
}

/// Signals are not handled on this platform: a killed run may leave temporary outputs, which
/// the next run over the same output removes.
#[cfg(not(unix))]
fn remove_temps_on_signals() {}

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
    if let Err(e) = trackgen::os::check_cpu() {
        eprintln!("error: {e}");
        return ExitCode::FAILURE;
    }
    let cli = Cli::parse();
    remove_temps_on_signals();
    let result = std::panic::catch_unwind(|| match cli.command {
        Command::Generate(a) => corpus::generate(a),
        Command::Export(a) => export::export(a),
        Command::Preview(a) => corpus::preview(a),
        Command::Merge(a) => corpus::merge(a),
        Command::Bench(a) => bench::bench(a),
        Command::Stats(a) => stats::stats(a),
        Command::BenchCourse(a) => bench::bench_course(a),
        Command::Presets(a) => presets::presets(a),
        Command::Scene(a) => scene::scene(a),
        Command::Rays(a) => rays::rays(a),
        Command::Raycast(a) => scene::raycast(a),
        Command::PreviewScene(a) => scene::preview_scene(a),
        Command::BenchScene(a) => bench_scene::bench_scene(a),
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
