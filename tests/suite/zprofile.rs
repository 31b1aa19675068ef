//! The z-profile stage: every kind closes, respects the grade cap, and `flat` is flat.

use trackgen::exec::Launch;
use trackgen::preset::Preset;
use trackgen::track::{Pipeline, TrackBatch};

fn run(kind: &str, amplitude: f32, max_grade: f32) -> (Preset, TrackBatch) {
    let text = format!(
        "[zprofile]\nkind = \"{kind}\"\namplitude_m = {amplitude}\nmax_grade = {max_grade}\nknots = 5\n"
    );
    let preset = Preset::parse(&text, "zprofile-test").unwrap();
    let mut pipe = Pipeline::new(&preset, 64, Launch::new()).unwrap();
    let mut batch = pipe.new_batch(0).unwrap();
    pipe.generate(9, 0, &mut batch).unwrap();
    (preset, batch)
}

/// The largest |dz| / (horizontal step) over every segment of env `e`, the closing one included.
fn max_grade(b: &TrackBatch, e: usize) -> f32 {
    let c = b.points(&b.center, e);
    let n = c.len();
    (0..n)
        .map(|i| {
            let (p, q) = (c[i], c[(i + 1) % n]);
            let ds = ((q[0] - p[0]).powi(2) + (q[1] - p[1]).powi(2)).sqrt();
            (q[2] - p[2]).abs() / ds
        })
        .fold(0.0, f32::max)
}

#[test]
fn flat_is_flat() {
    let (_, b) = run("flat", 10.0, 0.1);
    for e in 0..b.n_envs {
        assert!(b.points(&b.center, e).iter().all(|p| p[2] == 0.0));
        assert!(b.points(&b.tangent, e).iter().all(|t| t[2] == 0.0));
    }
}

#[test]
fn every_kind_respects_the_grade_cap_and_varies() {
    for kind in ["uniform", "random_walk", "noise"] {
        for cap in [0.02f32, 0.08] {
            let (_, b) = run(kind, 8.0, cap);
            let mut relief = 0.0f32;
            for e in 0..b.n_envs {
                let g = max_grade(&b, e);
                assert!(g <= cap * 1.01 + 1e-6, "{kind}: env {e} grade {g} > {cap}");
                let z: Vec<f32> = b.points(&b.center, e).iter().map(|p| p[2]).collect();
                let (lo, hi) = z
                    .iter()
                    .fold((f32::MAX, f32::MIN), |(l, h), &v| (l.min(v), h.max(v)));
                assert!(lo.is_finite() && hi.is_finite());
                relief = relief.max(hi - lo);
                // Borders share the centre's height (no banking).
                let outer = b.points(&b.outer, e);
                assert!(outer.iter().zip(&z).all(|(o, &zc)| o[2] == zc));
            }
            assert!(relief > 0.5, "{kind}: profile is flat (relief {relief})");
        }
    }
}

#[test]
fn heights_are_deterministic_and_independent_of_the_plan_view_stream() {
    let (_, a) = run("noise", 5.0, 0.1);
    let (_, b) = run("noise", 5.0, 0.1);
    assert!(a.bytes_eq(&b));
    // The plan view does not depend on the profile: x and y match the flat run.
    let (_, flat) = run("flat", 0.0, 0.1);
    for e in 0..a.n_envs {
        let xy = |t: &TrackBatch| {
            t.points(&t.center, e)
                .iter()
                .map(|p| [p[0], p[1]])
                .collect::<Vec<_>>()
        };
        assert_eq!(xy(&a), xy(&flat), "env {e}");
    }
}
