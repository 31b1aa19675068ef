//! The generator kernels (`kernels/track/{polar,bezier,hull,checkpoint,circuit,voronoi,
//! repulsive}.cu`) at the ends of their parameter ranges, emulated against the CPU.
//!
//! `emulated::emulated_kernels_match_the_cpu_for_every_preset` covers the built-in presets; these
//! presets push each generator to the bounds the preset loader accepts, where branches the
//! built-ins never take run: the fewest and most control points with the largest jitter, a
//! checkpoint car that runs out of steps long before closing (forced closure) or that turns 45°
//! per step, circuits without clothoid transitions (no ramp steps), with the widest transitions,
//! with only hairpins reversed by counter-corners, only chicanes, or 40 sweepers squeezed into
//! 50 m (attempts whose turning or gap does not close write no points), circuits writing their
//! own final points (`sampling = "generator"`) into 64 points (draws over capacity drawn again),
//! without transitions at a coarse sagitta, and with the widest transitions and spacings from 1
//! to 80 m, Voronoi regions of 2 of
//! 64 cells in a 40 m disc (cells clipped by 63 bisectors, a smoothing window of 5 points) and of
//! 24 of 64 cells in a 300 m disc at grid 96 (outline steps of 2.08 m, 24-cell boundary walks), the
//! repulsive flow with 16 points and no obstacle, and with 128 points, up to 12 obstacles of
//! 0.4 · scale and three times the length, both stopped by their iteration cap mid-window. Each
//! must produce the CPU's bytes on `generate` and on a masked `regenerate`, with its generator run
//! as a kernel.

use trackgen::exec::plan::Backend;
use trackgen::exec::Launch;
use trackgen::preset::Preset;

use crate::emulated::{emulated, run};

/// Envs per preset.
const ENVS: usize = 128;

/// (name, kernel, generator section) of each edge preset; the track section is shared.
const CASES: [(&str, &str, &str); 17] = [
    (
        "polar-min",
        "tg_track_polar",
        "[track]\ngenerator = \"polar\"\nhalf_width_m = 1\nmin_turn_radius_m = 2\nscale_m = 40\n\
         [polar]\nn_ctrl = 4\nradius_jitter = 0.9\nangle_jitter = 0.45\n",
    ),
    (
        "polar-max",
        "tg_track_polar",
        "[track]\ngenerator = \"polar\"\nhalf_width_m = 1\nmin_turn_radius_m = 2\nscale_m = 2000\n\
         [polar]\nn_ctrl = 64\nradius_jitter = 0.0\nangle_jitter = 0.0\n",
    ),
    (
        "bezier-min",
        "tg_track_bezier",
        "[track]\ngenerator = \"bezier\"\nhalf_width_m = 1\nmin_turn_radius_m = 2\nscale_m = 40\n\
         [bezier]\nn_ctrl = 4\nhandle = 0.6\nradius_jitter = 0.9\n",
    ),
    (
        "hull-min",
        "tg_track_hull",
        "[track]\ngenerator = \"hull\"\nhalf_width_m = 1\nmin_turn_radius_m = 2\nscale_m = 40\n\
         [hull]\nn_points = 6\ndisplacement = 0.8\n",
    ),
    (
        "checkpoint-forced-closure",
        "tg_track_checkpoint",
        "[track]\ngenerator = \"checkpoint\"\nhalf_width_m = 1\nmin_turn_radius_m = 2\nscale_m = 100\nspacing_m = 5\n\
         [checkpoint]\nn_checkpoints = 5\nmin_radius_frac = 0.1\nmax_turn_deg = 1\nmax_steps = 100\n",
    ),
    (
        "checkpoint-sharp",
        "tg_track_checkpoint",
        "[track]\ngenerator = \"checkpoint\"\nhalf_width_m = 1\nmin_turn_radius_m = 2\nscale_m = 100\nspacing_m = 2\n\
         [checkpoint]\nn_checkpoints = 32\nmin_radius_frac = 0.95\nmax_turn_deg = 45\nmax_steps = 8000\n",
    ),
    (
        "circuit-hairpins-reversed",
        "tg_track_circuit",
        "[track]\ngenerator = \"circuit\"\nscale_m = 240\nmin_turn_radius_m = 12\n\
         [circuit]\nmin_corners = 3\nmax_corners = 3\nreverse_fraction = 1.0\ntransition = 0.0\n\
         hairpin_weight = 1.0\nslow_weight = 0.0\nsweeper_weight = 0.0\nchicane_weight = 0.0\n",
    ),
    (
        "circuit-chicanes",
        "tg_track_circuit",
        "[track]\ngenerator = \"circuit\"\nscale_m = 240\nmin_turn_radius_m = 12\n\
         [circuit]\nmin_corners = 3\nmax_corners = 40\nreverse_fraction = 1.0\ntransition = 0.45\n\
         chicane_weight = 1.0\nmin_length_m = 50\nmax_length_m = 20000\n",
    ),
    (
        "circuit-sweepers-short",
        "tg_track_circuit",
        "[track]\ngenerator = \"circuit\"\nscale_m = 240\nmin_turn_radius_m = 12\n\
         [circuit]\nmin_corners = 40\nmax_corners = 40\nreverse_fraction = 0.9\ntransition = 0.1\n\
         hairpin_weight = 0.0\nslow_weight = 0.0\nsweeper_weight = 1.0\nchicane_weight = 0.0\n\
         min_length_m = 50\nmax_length_m = 60\n",
    ),
    (
        "circuit-slow",
        "tg_track_circuit",
        "[track]\ngenerator = \"circuit\"\nscale_m = 240\nmin_turn_radius_m = 12\n\
         [circuit]\nmin_corners = 3\nmax_corners = 12\nreverse_fraction = 0.5\ntransition = 0.3\n\
         hairpin_weight = 0.0\nslow_weight = 1.0\nsweeper_weight = 0.0\nchicane_weight = 0.0\n",
    ),
    (
        "circuit-final-capped",
        "tg_track_circuit",
        "[track]\ngenerator = \"circuit\"\nsampling = \"generator\"\nn_max = 64\nscale_m = 240\n\
         min_turn_radius_m = 12\nspacing_m = 5\nmax_spacing_m = 25\nsagitta_m = 0.25\n\
         [circuit]\nmin_corners = 8\nmax_corners = 16\nmin_length_m = 1200\nmax_length_m = 2400\n",
    ),
    (
        "circuit-final-no-ramps",
        "tg_track_circuit",
        "[track]\ngenerator = \"circuit\"\nsampling = \"generator\"\nscale_m = 240\n\
         min_turn_radius_m = 12\nspacing_m = 4\nmax_spacing_m = 30\nsagitta_m = 1.0\n\
         [circuit]\nmin_corners = 3\nmax_corners = 6\nreverse_fraction = 1.0\ntransition = 0.0\n\
         hairpin_weight = 1.0\nslow_weight = 0.0\nsweeper_weight = 0.0\nchicane_weight = 0.0\n",
    ),
    (
        "circuit-final-wide",
        "tg_track_circuit",
        "[track]\ngenerator = \"circuit\"\nsampling = \"generator\"\nn_max = 1024\nscale_m = 240\n\
         min_turn_radius_m = 12\nspacing_m = 1\nmax_spacing_m = 80\nsagitta_m = 0.01\n\
         [circuit]\nmin_corners = 3\nmax_corners = 40\nreverse_fraction = 1.0\ntransition = 0.45\n\
         chicane_weight = 1.0\nmin_length_m = 50\nmax_length_m = 20000\n",
    ),
    (
        "voronoi-coarse",
        "tg_track_voronoi",
        "[track]\ngenerator = \"voronoi\"\nhalf_width_m = 1\nmin_turn_radius_m = 2\nscale_m = 40\n\
         [voronoi]\nn_sites = 64\nn_cells = 2\ngrid = 16\n",
    ),
    (
        "voronoi-fine",
        "tg_track_voronoi",
        "[track]\ngenerator = \"voronoi\"\nhalf_width_m = 1\nmin_turn_radius_m = 2\nscale_m = 300\n\
         [voronoi]\nn_sites = 64\nn_cells = 24\ngrid = 96\n",
    ),
    (
        "repulsive-min",
        "tg_track_repulsive",
        "[track]\ngenerator = \"repulsive\"\nhalf_width_m = 1\nmin_turn_radius_m = 2\nscale_m = 40\n\
         [repulsive]\nn_points = 16\nmax_iters = 10\nn_obstacles = 0\nlength_factor = 0.5\n",
    ),
    (
        "repulsive-max",
        "tg_track_repulsive_window",
        "[track]\ngenerator = \"repulsive\"\nscale_m = 200\n\
         [repulsive]\nn_points = 128\nmax_iters = 10\nn_obstacles = 12\nobstacle_radius_frac = 0.4\n\
         length_factor = 3.0\n",
    ),
];

#[test]
fn generator_kernels_match_the_cpu_at_their_parameter_bounds() {
    let Some(kernels) = emulated() else { return };
    let mask: Vec<u8> = (0..ENVS as u64)
        .map(|e| u8::from(trackgen::rng::mix64(e ^ 0x6e6e) % 2 == 0))
        .collect();
    for (name, kernel, text) in CASES {
        // Relaxation where the sampling allows it (not for a generator's own points).
        let windows = if text.contains("sampling = \"generator\"") {
            0
        } else {
            2
        };
        let text = format!("{text}[relax]\nmax_windows = {windows}\n");
        let preset = Preset::parse(&text, name).unwrap_or_else(|e| panic!("{name}: {e}"));
        let masks = [mask.clone()];
        let cpu = run(&preset, ENVS, Backend::Cpu(Launch::new()), 11, &masks).0;
        let backend = Backend::Emulated {
            kernels: kernels.clone(),
            launch: Launch::new(),
            cpu_fallback: true,
        };
        let (emu, traces) = run(&preset, ENVS, backend, 11, &masks);
        for (i, (a, b)) in cpu.iter().zip(&emu).enumerate() {
            assert!(
                a.bytes_eq(b),
                "{name}: run {i} differs between the CPU and the emulated kernels"
            );
        }
        for (i, trace) in traces.iter().enumerate() {
            assert!(
                trace.kernels.contains_key(kernel),
                "{name}: run {i} did not launch {kernel}: {trace:?}"
            );
        }
    }
}
