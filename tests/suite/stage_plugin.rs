//! A user stage plugs into the pipeline and keeps the determinism contract.

use std::sync::Arc;

use trackgen::exec::Launch;
use trackgen::geom::Vec2;
use trackgen::math::{sin_cos, TAU};
use trackgen::preset::Preset;
use trackgen::rng::LaneRng;
use trackgen::track::{Pipeline, Stage};

/// Ellipses with a random aspect ratio.
struct Ellipse;

impl Stage for Ellipse {
    fn name(&self) -> &str {
        "ellipse"
    }
    fn max_points(&self) -> usize {
        200
    }
    fn run_lane(&self, rng: &mut LaneRng, _: &mut [f32], _: &mut [u32], out: &mut [Vec2]) -> usize {
        let (a, b) = (rng.range(80.0, 120.0), rng.range(50.0, 80.0));
        for (i, p) in out.iter_mut().enumerate() {
            let (s, c) = sin_cos(TAU * i as f32 / 200.0);
            *p = Vec2::new(a * c, b * s);
        }
        200
    }
}

/// A broken stage that writes a figure eight: it must never be marked valid.
struct FigureEight;

impl Stage for FigureEight {
    fn name(&self) -> &str {
        "eight"
    }
    fn max_points(&self) -> usize {
        200
    }
    fn run_lane(&self, _: &mut LaneRng, _: &mut [f32], _: &mut [u32], out: &mut [Vec2]) -> usize {
        for (i, p) in out.iter_mut().enumerate() {
            let (s, c) = sin_cos(TAU * i as f32 / 200.0);
            *p = Vec2::new(150.0 * s, 100.0 * s * c);
        }
        200
    }
}

#[test]
fn user_stage_generates_valid_deterministic_tracks() {
    let p = Preset::load("track").unwrap();
    let run = |threads, n| {
        let mut pipe = Pipeline::with_stage(
            &p,
            n,
            Launch::with_threads(threads).unwrap(),
            Arc::new(Ellipse),
        )
        .unwrap();
        assert_eq!(pipe.stage_name(), "ellipse");
        let mut b = pipe.new_batch(0).unwrap();
        pipe.generate(1, 0, &mut b).unwrap();
        b
    };
    let a = run(1, 32);
    assert!(a.valid.iter().all(|&v| v == 1));
    assert!(a.slice(0..16).bytes_eq(&run(2, 16)));
}

#[test]
fn invalid_stage_output_falls_back_after_max_attempts() {
    let p = Preset::load("track").unwrap();
    let mut pipe = Pipeline::with_stage(&p, 4, Launch::new(), Arc::new(FigureEight)).unwrap();
    let mut b = pipe.new_batch(0).unwrap();
    pipe.generate(1, 0, &mut b).unwrap();
    assert!(b.valid.iter().all(|&v| v == 0));
    assert!(b
        .attempts
        .iter()
        .all(|&a| u32::from(a) == p.track.max_attempts));
    // The fallback is a circle of radius max(0.8·scale, 1.25·min_turn_radius) around the origin.
    let r = (0.8 * p.track.scale_m).max(1.25 * p.track.min_turn_radius_m);
    for c in b.points(&b.center, 0) {
        assert!(((c[0] * c[0] + c[1] * c[1]).sqrt() - r).abs() < 1e-3 * r);
    }
}
