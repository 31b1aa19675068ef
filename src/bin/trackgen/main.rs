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
mod output;
mod presets;
mod progress;
mod scene;

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
    /// Draw the first tracks (or gate courses) of a corpus as a PNG contact sheet.
    Preview(corpus::PreviewArgs),
    /// Time the pipeline per preset, thread count and batch size; print a table.
    Bench(bench::BenchArgs),
    /// Time the course runtime: step() env-steps/s and masked regenerate(); print a table.
    BenchCourse(bench::BenchCourseArgs),
    /// List the built-in course and scene presets, or print one's TOML.
    Presets(presets::PresetsArgs),
    /// Generate per-env SDF scenes of a scene preset (rooms, forest, gates) into one scene file.
    Scene(scene::SceneArgs),
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
        Command::Generate(a) => corpus::generate(a),
        Command::Preview(a) => corpus::preview(a),
        Command::Bench(a) => bench::bench(a),
        Command::BenchCourse(a) => bench::bench_course(a),
        Command::Presets(a) => presets::presets(a),
        Command::Scene(a) => scene::scene(a),
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
