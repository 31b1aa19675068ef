//! Contracts of the runtime: every output recomputed over poisoned buffers; NaN/inf positions
//! give the documented outputs, never a panic; wrong buffer lengths and misuse are errors that
//! name both lengths; bad configs are named.

use crate::course_support::*;
use trackgen::course::{Binding, Course, CourseConfig, Mode, PurePursuit, StepOutputs};
use trackgen::exec::Launch;
use trackgen::geom::{Quat, Vec2, Vec3};
use trackgen::preset::Preset;

fn poison(o: &mut StepOutputs, k: u32) {
    let b = (k * 37 + 11) as u8;
    let f = if k % 2 == 0 { f32::NAN } else { -1.0e30 };
    for v in [
        &mut o.passed,
        &mut o.lap_completed,
        &mut o.wrong_way,
        &mut o.wrong_checkpoint,
        &mut o.off_track,
        &mut o.hit,
    ] {
        v.fill(b);
    }
    for v in [&mut o.next_index, &mut o.laps, &mut o.segment] {
        v.fill(0xdead_beef ^ k);
    }
    for v in [
        &mut o.progress,
        &mut o.dist_to_next,
        &mut o.s,
        &mut o.n,
        &mut o.n_up,
        &mut o.curvature,
        &mut o.penetration,
    ] {
        v.fill(f);
    }
}

fn bytes(o: &StepOutputs) -> Vec<u8> {
    let mut out = Vec::new();
    for v in [
        &o.passed,
        &o.lap_completed,
        &o.wrong_way,
        &o.wrong_checkpoint,
        &o.off_track,
        &o.hit,
    ] {
        out.extend_from_slice(v);
    }
    for v in [&o.next_index, &o.laps, &o.segment] {
        out.extend_from_slice(bytemuck::cast_slice(v));
    }
    for v in [
        &o.progress,
        &o.dist_to_next,
        &o.s,
        &o.n,
        &o.n_up,
        &o.curvature,
        &o.penetration,
    ] {
        out.extend_from_slice(bytemuck::cast_slice(v));
    }
    out
}

fn pair(mode: Mode) -> (Course, Course) {
    let make = || {
        let launch = Launch::with_threads(2).unwrap();
        let mut c = match mode {
            Mode::Track => {
                let p =
                    Preset::parse("[track]\nn_max = 128\n[obstacles]\ncount = 4\n", "t").unwrap();
                Course::new(Mode::Track, &p, 300, 5, CourseConfig::default(), launch).unwrap()
            }
            Mode::Gates => Course::new(
                Mode::Gates,
                &Preset::load("gates").unwrap(),
                300,
                5,
                CourseConfig::default(),
                launch,
            )
            .unwrap(),
        };
        let spawn = c.geometry().spawn_position.clone();
        c.bind(Binding::new(spawn).with_half_extents(vec![Vec2::new(1.0, 0.5); 300]))
            .unwrap();
        c
    };
    (make(), make())
}

#[test]
fn poisoned_outputs_are_all_recomputed() {
    for mode in [Mode::Track, Mode::Gates] {
        let (mut clean, mut dirty) = pair(mode);
        let agent = PurePursuit::for_course(&clean);
        for k in 0..40 {
            agent.act(&mut clean).unwrap();
            agent.act(&mut dirty).unwrap();
            poison(dirty.outputs_mut(), k);
            clean.step().unwrap();
            dirty.step().unwrap();
            assert_eq!(
                bytes(clean.outputs()),
                bytes(dirty.outputs()),
                "{mode:?} step {k}"
            );
        }
        // Over the 40 steps something happened: the test can see a recomputed event.
        assert!(clean.outputs().progress.iter().any(|&p| p > 1.0));
    }
}

#[test]
fn non_finite_positions_give_defined_outputs() {
    let mut c = circle_course(CourseConfig {
        checkpoint_spacing_m: 39.27,
        ..CourseConfig::default()
    });
    bind_one(&mut c, None, None);
    step_to(&mut c, on_circle(50.0, 40.0, 0.0));
    step_to(&mut c, on_circle(50.0, 50.0, 0.0));
    assert_eq!(c.outputs().next_index[0], 2);
    let segment = c.outputs().segment[0];
    for bad in [
        [f32::NAN, 0.0, 0.0],
        [0.0, f32::INFINITY, 0.0],
        [10.0, 10.0, f32::NEG_INFINITY],
        [f32::NAN; 3],
    ] {
        step_to(&mut c, bad);
        let o = c.outputs();
        assert_eq!(
            (
                o.passed[0],
                o.lap_completed[0],
                o.wrong_way[0],
                o.wrong_checkpoint[0]
            ),
            (0, 0, 0, 0)
        );
        assert_eq!((o.next_index[0], o.laps[0], o.progress[0]), (2, 0, 1.0));
        assert_eq!((o.segment[0], o.off_track[0], o.hit[0]), (segment, 1, 0));
        for v in [
            o.dist_to_next[0],
            o.s[0],
            o.n[0],
            o.n_up[0],
            o.curvature[0],
            o.penetration[0],
        ] {
            assert!(v.is_nan());
        }
    }
    // Back to a finite position across checkpoint 2: the NaN sentinel means no crossing yet.
    step_to(&mut c, on_circle(50.0, 95.0, 0.0));
    assert_eq!((c.outputs().passed[0], c.outputs().next_index[0]), (0, 2));
    assert!(c.outputs().s[0].is_finite());
    // From there on, crossings count again.
    step_to(&mut c, on_circle(50.0, 85.0, 0.0));
    step_to(&mut c, on_circle(50.0, 95.0, 0.0));
    assert_eq!((c.outputs().passed[0], c.outputs().next_index[0]), (1, 3));

    // Gates: inf and NaN too.
    let mut g = gate_ring_course(CourseConfig::default());
    bind_one(&mut g, None, None);
    step_to(&mut g, [f32::INFINITY, f32::NEG_INFINITY, 1.0]);
    assert!(g.outputs().penetration[0].is_nan());
    assert_eq!(g.outputs().hit[0], 0);
}

#[test]
fn wrong_lengths_and_misuse_are_errors_naming_both_lengths() {
    let mut c = circle_course(CourseConfig::default());
    let m = c.step().unwrap_err().to_string();
    assert!(m.contains("bind"), "{m}");
    let m = c
        .bind(Binding::new(vec![Vec3::ZERO; 3]))
        .unwrap_err()
        .to_string();
    assert!(
        m.contains("positions") && m.contains("3 entries") && m.contains("(1)"),
        "{m}"
    );
    let m = c
        .bind(Binding::new(vec![Vec3::ZERO]).with_orientations(vec![Quat::IDENTITY; 2]))
        .unwrap_err()
        .to_string();
    assert!(
        m.contains("orientations") && m.contains("2 entries") && m.contains("(1)"),
        "{m}"
    );
    let m = c
        .bind(Binding::new(vec![Vec3::ZERO]).with_half_extents(vec![]))
        .unwrap_err()
        .to_string();
    assert!(m.contains("half_extents") && m.contains("0 entries"), "{m}");
    assert!(c.binding().is_none(), "a failed bind binds nothing");
    let m = c.reset(&[1, 0]).unwrap_err().to_string();
    assert!(m.contains("2 entries") && m.contains("(1)"), "{m}");
    let m = c.regenerate(&[], true).unwrap_err().to_string();
    assert!(m.contains("0 entries") && m.contains("(1)"), "{m}");
    bind_one(&mut c, None, None);
    c.outputs_mut().progress.push(0.0);
    let m = c.step().unwrap_err().to_string();
    assert!(
        m.contains("progress") && m.contains("2 entries") && m.contains("(1)"),
        "{m}"
    );
    assert!(PurePursuit {
        speed_m: 1.0,
        lookahead_m: 2.0
    }
    .act(&mut circle_course(CourseConfig::default()))
    .is_err());
    let (positions, _, _) = c.unbind().unwrap().into_parts();
    assert_eq!(positions.len(), 1);
}

#[test]
fn bad_config_and_preset_are_named() {
    let p = Preset::load("track").unwrap();
    let make = |config: CourseConfig| {
        Course::new(Mode::Track, &p, 2, 0, config, Launch::new())
            .unwrap_err()
            .to_string()
    };
    let m = make(CourseConfig {
        max_checkpoints: 3,
        ..CourseConfig::default()
    });
    assert!(m.contains("max_checkpoints") && m.contains("3"), "{m}");
    let m = make(CourseConfig {
        checkpoint_spacing_m: 0.0,
        ..CourseConfig::default()
    });
    assert!(m.contains("checkpoint_spacing_m"), "{m}");
    let m = make(CourseConfig {
        footprint_half_extents_m: Vec2::new(-1.0, 0.0),
        ..CourseConfig::default()
    });
    assert!(m.contains("footprint_half_extents_m"), "{m}");
    let m = make(CourseConfig {
        localize_window: 0,
        ..CourseConfig::default()
    });
    assert!(m.contains("localize_window"), "{m}");
    let m = Course::new(
        Mode::Gates,
        &p,
        2,
        0,
        CourseConfig::default(),
        Launch::new(),
    )
    .unwrap_err()
    .to_string();
    assert!(m.contains("[gates]") && m.contains("track"), "{m}");
    assert!(Course::new(
        Mode::Track,
        &p,
        0,
        0,
        CourseConfig::default(),
        Launch::new()
    )
    .is_err());
}

#[test]
fn checkpoint_truncation_is_reported() {
    let p = Preset::load("f1").unwrap();
    let config = CourseConfig {
        checkpoint_spacing_m: 5.0,
        max_checkpoints: 16,
        ..CourseConfig::default()
    };
    let c = Course::new(Mode::Track, &p, 4, 0, config, Launch::new()).unwrap();
    let g = c.geometry();
    for e in 0..4 {
        assert_eq!(g.checkpoints_truncated[e], 1);
        assert_eq!(g.checkpoint_count[e], 16);
        // The spacing widened to fit: legs sum to the length.
        let legs: f32 = g.checkpoints_of(e).iter().map(|c| c.leg).sum();
        close(legs, g.path_length[e], 1e-2);
    }
    let p = Preset::load("track").unwrap();
    let c = Course::new(
        Mode::Track,
        &p,
        4,
        0,
        CourseConfig::default(),
        Launch::new(),
    )
    .unwrap();
    assert!(c.geometry().checkpoint_count.iter().all(|&k| k >= 4));
    assert!(c.geometry().checkpoints_truncated.iter().all(|&t| t == 0));
}

/// On a centreline sampled by curvature (`f1`: 5 m points in corners, up to 25 m on straights)
/// checkpoint `k` still lies at about `k·L/K` along the path: no farther from it than the
/// longest path segment (picking every `⌊k·n/K⌋`-th point instead bunches them in corners and
/// drifts by hundreds of metres).
#[test]
fn checkpoints_follow_arc_length_on_uneven_spacing() {
    let p = Preset::load("f1").unwrap();
    let c = Course::new(
        Mode::Track,
        &p,
        8,
        0,
        CourseConfig::default(),
        Launch::new(),
    )
    .unwrap();
    let g = c.geometry();
    let mut uneven = false;
    for e in 0..8 {
        let path = g.path_of(e);
        let longest = path
            .iter()
            .zip(path.iter().cycle().skip(1))
            .map(|(a, b)| Vec3::new(b[0] - a[0], b[1] - a[1], b[2] - a[2]).length())
            .fold(0.0f32, f32::max);
        let shortest = path
            .windows(2)
            .map(|w| w[1][3] - w[0][3])
            .fold(f32::INFINITY, f32::min);
        uneven |= longest > 3.0 * shortest;
        let cps = g.checkpoints_of(e);
        let k_count = cps.len() as f32;
        for (k, cp) in cps.iter().enumerate() {
            let target = k as f32 * g.path_length[e] / k_count;
            assert!(
                (cp.s - target).abs() <= longest,
                "env {e} checkpoint {k}: at {} m, expected within {longest} m of {target} m",
                cp.s
            );
        }
        assert!(cps.windows(2).all(|w| w[1].s > w[0].s));
    }
    assert!(uneven, "f1 is sampled by curvature");
}

#[test]
fn teleport_falls_back_to_a_full_scan() {
    // A jump to the far side of the circle: the window around the old segment cannot find it,
    // the full scan does.
    let mut c = circle_course(CourseConfig::default());
    bind_one(&mut c, None, None);
    step_to(&mut c, on_circle(50.0, 10.0, 0.0));
    step_to(&mut c, on_circle(51.0, 190.0, 0.0));
    let o = c.outputs();
    close(o.s[0], 50.0 * 190f32.to_radians(), 0.02);
    close(o.n[0], -1.0, 0.005);
}
