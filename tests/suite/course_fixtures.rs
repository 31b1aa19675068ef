//! Hand-computed fixtures of the course runtime on analytic courses: a circle (R = 50 m,
//! 8 checkpoints every 45°), a stadium (straights along x), and eight gates on a circle.
//! Crossings forward and backward, wrong checkpoint, laps, `dist_to_next`, `s`/`n`
//! localization, off-track, box-vs-band, box-vs-disc and sphere-vs-frame collision.

use crate::course_support::*;
use trackgen::course::{CourseConfig, PurePursuit};
use trackgen::math::sin_cos;

/// Circle config: 8 checkpoints, one every 45° (the spacing is an eighth of the length).
fn circle_config() -> CourseConfig {
    let side = 2.0 * 50.0 * (std::f64::consts::PI / 320.0).sin();
    CourseConfig {
        checkpoint_spacing_m: (320.0 * side / 8.0) as f32,
        ..CourseConfig::default()
    }
}

fn yaw(deg: f32) -> [f32; 4] {
    let (s, c) = sin_cos(0.5 * deg.to_radians());
    [0.0, 0.0, s, c]
}

#[test]
fn circle_spawn_checkpoints_and_reset_outputs() {
    let c = circle_course(circle_config());
    let g = c.geometry();
    assert_eq!(g.path_count[0], 320);
    assert_eq!(g.checkpoint_count[0], 8);
    assert_eq!(g.checkpoints_truncated[0], 0);
    for (k, cp) in g.checkpoints_of(0).iter().enumerate() {
        let p = on_circle(50.0, 45.0 * k as f32, 0.0);
        close(cp.center[0], p[0], 1e-3);
        close(cp.center[1], p[1], 1e-3);
        assert_eq!(cp.half_width, 5.0);
        assert_eq!(cp.half_height, f32::INFINITY);
        // Tangent counter-clockwise, normal to the left (inward).
        let a = (45.0 * k as f32).to_radians();
        close(cp.tangent[0], -a.sin(), 1e-3);
        close(cp.tangent[1], a.cos(), 1e-3);
        close(cp.normal[0], -a.cos(), 1e-3);
        close(cp.left()[0], 45.0 * a.cos(), 1e-3);
        close(cp.right()[1], 55.0 * a.sin(), 1e-3);
    }
    close(g.spawn_position[0][0], 50.0, 1e-4);
    close(g.spawn_yaw[0], std::f32::consts::FRAC_PI_2, 1e-3);
    let o = c.outputs();
    assert_eq!((o.next_index[0], o.laps[0], o.passed[0]), (1, 0, 0));
    assert_eq!(o.progress[0], 0.0);
    // Chord from 0° to 45°.
    close(
        o.dist_to_next[0],
        2.0 * 50.0 * 22.5f32.to_radians().sin(),
        1e-3,
    );
}

#[test]
fn circle_localization_off_track_and_point_penetration() {
    let mut c = circle_course(circle_config());
    bind_one(&mut c, None, None);
    step_to(&mut c, on_circle(52.0, 30.0, 0.5));
    let o = c.outputs();
    let arc = 50.0 * 30f32.to_radians();
    close(o.s[0], arc, 0.01);
    // Outside the counter-clockwise circle is to the right: negative n.
    close(o.n[0], -2.0, 0.005);
    close(o.n_up[0], 0.5, 1e-6);
    close(o.curvature[0], 1.0 / 50.0, 1e-4);
    assert_eq!(o.segment[0], 26); // 30° / 1.125° per point
    assert_eq!((o.off_track[0], o.hit[0], o.penetration[0]), (0, 0, 0.0));
    assert_eq!(
        (o.passed[0], o.wrong_way[0], o.wrong_checkpoint[0]),
        (0, 0, 0)
    );
    // progress = 0 passed + 30°/45° of the first leg.
    close(o.progress[0], 30.0 / 45.0, 1e-3);

    step_to(&mut c, on_circle(56.0, 30.0, 0.0));
    let o = c.outputs();
    close(o.n[0], -6.0, 0.005);
    assert_eq!(o.off_track[0], 1);
    // A point agent leaving the band penetrates by |n| − half_width.
    assert_eq!(o.hit[0], 1);
    close(o.penetration[0], 1.0, 0.005);
    // Inside the ring, left of the path.
    step_to(&mut c, on_circle(47.0, 30.0, 0.0));
    close(c.outputs().n[0], 3.0, 0.005);
}

#[test]
fn circle_crossings_forward_backward_and_wrong_way() {
    let mut c = circle_course(circle_config());
    bind_one(&mut c, None, None);
    step_to(&mut c, on_circle(50.0, 40.0, 0.0));
    let o = c.outputs();
    assert_eq!((o.passed[0], o.next_index[0]), (0, 1));
    close(o.progress[0], 40.0 / 45.0, 1e-3);

    // Forward across checkpoint 1 (45°).
    step_to(&mut c, on_circle(50.0, 50.0, 0.0));
    let o = c.outputs();
    assert_eq!(
        (o.passed[0], o.next_index[0], o.lap_completed[0]),
        (1, 2, 0)
    );
    assert_eq!((o.wrong_way[0], o.wrong_checkpoint[0]), (0, 0));
    close(o.progress[0], 1.0 + 5.0 / 45.0, 1e-3);
    close(
        o.dist_to_next[0],
        2.0 * 50.0 * 20f32.to_radians().sin(),
        1e-3,
    );

    // Backward across it: not passed, wrong way, progress back to the checkpoint.
    step_to(&mut c, on_circle(50.0, 40.0, 0.0));
    let o = c.outputs();
    assert_eq!((o.passed[0], o.next_index[0], o.wrong_way[0]), (0, 2, 1));
    assert_eq!(o.progress[0], 1.0);

    // Forward again: checkpoint 1 is behind the next one, so nothing is passed twice.
    step_to(&mut c, on_circle(50.0, 50.0, 0.0));
    let o = c.outputs();
    assert_eq!((o.passed[0], o.next_index[0], o.wrong_way[0]), (0, 2, 0));

    // Across checkpoint 2 (90°) but outside the road (|n| ≈ 6.8 at the crossing): not passed.
    step_to(&mut c, on_circle(57.0, 85.0, 0.0));
    step_to(&mut c, on_circle(57.0, 95.0, 0.0));
    let o = c.outputs();
    assert_eq!((o.passed[0], o.next_index[0], o.off_track[0]), (0, 2, 1));

    // Across checkpoint 3 (135°) while checkpoint 2 was never passed: wrong checkpoint.
    step_to(&mut c, on_circle(50.0, 140.0, 0.0));
    let o = c.outputs();
    assert_eq!(
        (o.passed[0], o.wrong_checkpoint[0], o.next_index[0]),
        (0, 1, 2)
    );
}

#[test]
fn circle_two_checkpoints_in_one_step_and_reset_sentinel() {
    let mut c = circle_course(circle_config());
    bind_one(&mut c, None, None);
    step_to(&mut c, on_circle(50.0, 40.0, 0.0));
    // One long step over checkpoints 1 and 2: both passed, in order.
    step_to(&mut c, on_circle(50.0, 95.0, 0.0));
    let o = c.outputs();
    assert_eq!(
        (o.passed[0], o.next_index[0], o.wrong_checkpoint[0]),
        (2, 3, 0)
    );

    // Reset: the bound position goes back to the spawn, and the first step after it crosses
    // nothing even though the segment spawn → 50° would cross checkpoint 1.
    c.reset(&[1]).unwrap();
    assert_eq!(
        c.binding().unwrap().positions()[0],
        c.geometry().spawn_position[0]
    );
    assert_eq!(
        (c.outputs().next_index[0], c.outputs().progress[0]),
        (1, 0.0)
    );
    step_to(&mut c, on_circle(50.0, 50.0, 0.0));
    assert_eq!((c.outputs().passed[0], c.outputs().next_index[0]), (0, 1));
}

#[test]
fn circle_laps_count_once_per_lap_and_progress_is_monotone() {
    let mut c = circle_course(circle_config());
    bind_one(&mut c, None, None);
    let (mut laps, mut passed, mut last) = (0, 0u32, 0.0f32);
    for deg in 1..=3 * 360 + 10 {
        step_to(&mut c, on_circle(50.0, deg as f32, 0.0));
        let o = c.outputs();
        laps += u32::from(o.lap_completed[0]);
        passed += u32::from(o.passed[0]);
        assert!(o.progress[0] >= last, "progress fell at {deg}°");
        assert_eq!((o.wrong_way[0], o.wrong_checkpoint[0]), (0, 0));
        last = o.progress[0];
        if o.lap_completed[0] == 1 {
            assert_eq!(deg % 360, 0, "lap at {deg}°");
        }
    }
    let o = c.outputs();
    assert_eq!((laps, o.laps[0], passed), (3, 3, 24));
    assert_eq!(o.next_index[0], 1);
    close(o.progress[0], 24.0 + 10.0 / 45.0, 2e-3);
}

#[test]
fn stadium_straight_localization_is_exact() {
    let mut c = stadium_course("", CourseConfig::default());
    assert_eq!(c.geometry().path_of(0)[0][..3], [0.0, -30.0, 0.0]);
    bind_one(&mut c, None, None);
    step_to(&mut c, [50.0, -28.0, 0.25]);
    let o = c.outputs();
    close(o.s[0], 50.0, 2e-3);
    close(o.n[0], 2.0, 1e-5);
    close(o.n_up[0], 0.25, 1e-6);
    assert_eq!(o.curvature[0], 0.0);
    // On the top straight, driving toward −x: y = 33 is 3 m to the right.
    step_to(&mut c, [50.0, 33.0, 0.0]);
    let o = c.outputs();
    close(o.n[0], -3.0, 1e-5);
    let half_circle = 30.0 * std::f32::consts::PI;
    close(o.s[0], 100.0 + half_circle + 50.0, 0.05);
    // On the far bend: the curvature of a 30 m circle, turning left.
    step_to(&mut c, [130.0, 0.0, 0.0]);
    close(c.outputs().curvature[0], 1.0 / 30.0, 1e-4);
}

#[test]
fn stadium_box_against_band() {
    let mut c = stadium_course("", CourseConfig::default());
    // Half length 2, half width 1, turned 30° off the straight.
    bind_one(&mut c, Some(yaw(30.0)), Some([2.0, 1.0]));
    step_to(&mut c, [50.0, -28.0, 0.0]);
    // Farthest corner at |n| + 2·sin 30° + 1·cos 30° = 3.866 < 5.
    assert_eq!((c.outputs().hit[0], c.outputs().penetration[0]), (0, 0.0));
    step_to(&mut c, [50.0, -26.0, 0.0]);
    let o = c.outputs();
    assert_eq!((o.hit[0], o.off_track[0]), (1, 0));
    close(
        o.penetration[0],
        4.0 + 1.0 + 30f32.to_radians().cos() - 5.0,
        1e-5,
    );
    // On the other side of the road, same depth.
    step_to(&mut c, [52.0, -34.0, 0.0]);
    close(c.outputs().penetration[0], 0.866_025_4, 1e-5);

    // Without bound orientations the box follows the path: |n| + half width − 5.
    let mut c = stadium_course("", CourseConfig::default());
    bind_one(&mut c, None, Some([2.0, 1.0]));
    step_to(&mut c, [50.0, -25.5, 0.0]);
    close(c.outputs().penetration[0], 0.5, 1e-5);
    step_to(&mut c, [50.0, -26.0, 0.0]);
    assert_eq!((c.outputs().hit[0], c.outputs().penetration[0]), (0, 0.0));
}

#[test]
fn stadium_box_against_disc_obstacle() {
    let extra =
        "[obstacles]\ncount = 1\nradius_m = 0.5\nlateral_frac = 0.0\nstart_clear_m = 10.0\n";
    let mut c = stadium_course(extra, CourseConfig::default());
    let o = c.geometry().obstacles_of(0)[0];
    assert_eq!((o[3], c.geometry().obstacle_count[0]), (0.5, 1));
    // Heading +x, box half length 2: its front face 0.1 short of the disc.
    bind_one(&mut c, Some(yaw(0.0)), Some([2.0, 1.0]));
    step_to(&mut c, [o[0] - 2.6, o[1], 0.0]);
    assert_eq!((c.outputs().hit[0], c.outputs().penetration[0]), (0, 0.0));
    // 0.2 into the disc.
    step_to(&mut c, [o[0] - 2.3, o[1], 0.0]);
    assert_eq!(c.outputs().hit[0], 1);
    close(c.outputs().penetration[0], 0.2, 1e-4);
    // Beside the box's corner: distance to the corner (2, 1) from (2.3, 1.4) is 0.5 → touching.
    step_to(&mut c, [o[0] - 2.3, o[1] - 1.4, 0.0]);
    close(c.outputs().penetration[0], 0.0, 1e-4);
}

/// Gate `i`'s centre, forward and left axes on the ring.
fn ring_gate(c: &trackgen::course::Course, i: usize) -> ([f32; 3], [f32; 3], [f32; 3], [f32; 3]) {
    let cp = c.geometry().checkpoints_of(0)[i];
    (
        cp.center.to_array(),
        cp.tangent.to_array(),
        cp.normal.to_array(),
        cp.up().to_array(),
    )
}

fn add(p: [f32; 3], a: f32, v: [f32; 3]) -> [f32; 3] {
    [p[0] + a * v[0], p[1] + a * v[1], p[2] + a * v[2]]
}

#[test]
fn gate_ring_frames_and_checkpoints() {
    let c = gate_ring_course(CourseConfig::default());
    let gates = c.gate_batch().unwrap();
    assert_eq!(
        (gates.count[0], gates.valid[0], gates.attempts[0]),
        (8, 1, 1)
    );
    for i in 0..8 {
        let p = on_circle(30.0, 45.0 * i as f32, 3.0);
        let q = gates.pos[i];
        for k in 0..3 {
            close(q[k], p[k], 2e-3);
        }
        assert_eq!(gates.size[i].to_array(), [2.0, 2.0]);
        let (_, f, l, u) = ring_gate(&c, i);
        let a = (45.0 * i as f32).to_radians();
        close(f[0], -a.sin(), 1e-4);
        close(f[1], a.cos(), 1e-4);
        close(f[2], 0.0, 1e-6);
        close(l[0], -a.cos(), 1e-4);
        close(l[2], 0.0, 1e-6);
        close(u[2], 1.0, 1e-6);
        let cp = c.geometry().checkpoints_of(0)[i];
        assert_eq!((cp.half_width, cp.half_height), (1.0, 1.0));
    }
    assert!(gates.pos[8..].iter().all(|p| p[0].is_nan()));
    close(
        c.outputs().dist_to_next[0],
        2.0 * 30.0 * 22.5f32.to_radians().sin(),
        2e-3,
    );
}

#[test]
fn gate_ring_crossings_inside_outside_and_skipped() {
    let mut c = gate_ring_course(CourseConfig::default());
    bind_one(&mut c, None, Some([0.3, 0.0]));
    let (c1, f1, _, _) = ring_gate(&c, 1);
    step_to(&mut c, add(c1, -0.5, f1));
    step_to(&mut c, add(c1, 0.5, f1));
    let o = c.outputs();
    assert_eq!((o.passed[0], o.next_index[0], o.hit[0]), (1, 2, 0));
    close(o.n_up[0], 0.0, 1e-3);
    let (c2, f2, l2, u2) = ring_gate(&c, 2);
    let here = add(c1, 0.5, f1);
    let d =
        ((c2[0] - here[0]).powi(2) + (c2[1] - here[1]).powi(2) + (c2[2] - here[2]).powi(2)).sqrt();
    close(o.dist_to_next[0], d, 1e-4);

    // Through gate 2's plane beside the opening (1.5 m left), then above it: not passed.
    step_to(&mut c, add(add(c2, -0.5, f2), 1.5, l2));
    step_to(&mut c, add(add(c2, 0.5, f2), 1.5, l2));
    assert_eq!((c.outputs().passed[0], c.outputs().next_index[0]), (0, 2));
    step_to(&mut c, add(add(c2, -0.5, f2), 1.5, u2));
    step_to(&mut c, add(add(c2, 0.5, f2), 1.5, u2));
    assert_eq!((c.outputs().passed[0], c.outputs().next_index[0]), (0, 2));
    close(c.outputs().n_up[0], 1.5, 0.05);
    // Through the opening, off centre: passed.
    step_to(&mut c, add(add(c2, -0.5, f2), -0.6, l2));
    step_to(&mut c, add(add(c2, 0.5, f2), -0.6, l2));
    assert_eq!((c.outputs().passed[0], c.outputs().next_index[0]), (1, 3));

    // After a reset, flying through gate 2 skips gate 1: wrong checkpoint. Gate 3 (two
    // ahead) is outside the tested window.
    c.reset(&[1]).unwrap();
    let (c2, f2, _, _) = ring_gate(&c, 2);
    step_to(&mut c, add(c2, -0.5, f2));
    step_to(&mut c, add(c2, 0.5, f2));
    let o = c.outputs();
    assert_eq!(
        (o.passed[0], o.wrong_checkpoint[0], o.next_index[0]),
        (0, 1, 1)
    );
    let (c3, f3, _, _) = ring_gate(&c, 3);
    step_to(&mut c, add(c3, -0.5, f3));
    step_to(&mut c, add(c3, 0.5, f3));
    assert_eq!(c.outputs().wrong_checkpoint[0], 0);
}

#[test]
fn gate_ring_sphere_against_frame_and_posts() {
    let mut c = gate_ring_course(CourseConfig::default());
    bind_one(&mut c, None, Some([0.3, 0.0]));
    let (c3, _, l3, u3) = ring_gate(&c, 3);
    // Centre of the opening: every bar 1 m away.
    step_to(&mut c, c3);
    assert_eq!((c.outputs().hit[0], c.outputs().penetration[0]), (0, 0.0));
    // 0.1 m from the left bar: 0.2 deep.
    step_to(&mut c, add(c3, 0.9, l3));
    assert_eq!(c.outputs().hit[0], 1);
    close(c.outputs().penetration[0], 0.2, 1e-4);
    // Inside the bar, 0.1 from its faces: 0.3 + 0.1 deep.
    step_to(&mut c, add(c3, 1.1, l3));
    close(c.outputs().penetration[0], 0.4, 1e-4);
    // Beside the frame, 0.3 m out from the outer face: just touching.
    step_to(&mut c, add(c3, 1.5, l3));
    close(c.outputs().penetration[0], 0.0, 1e-4);
    // On the left post's axis, 0.8 m below its top (the frame's bottom corner): inside the
    // post (radius 0.1) by 0.1.
    let foot = add(add(c3, 1.1, l3), -1.2, u3);
    step_to(&mut c, [foot[0], foot[1], foot[2] - 0.8]);
    assert_eq!(c.outputs().hit[0], 1);
    close(c.outputs().penetration[0], 0.4, 1e-4);
    // Far from every gate.
    step_to(&mut c, [0.0, 0.0, 3.0]);
    assert_eq!((c.outputs().hit[0], c.outputs().penetration[0]), (0, 0.0));
}

#[test]
fn gate_ring_agent_flies_three_laps() {
    let mut c = gate_ring_course(CourseConfig::default());
    bind_one(&mut c, None, Some([0.2, 0.0]));
    let agent = PurePursuit::for_course(&c);
    let mut last = 0.0;
    for _ in 0..2000 {
        agent.act(&mut c).unwrap();
        c.step().unwrap();
        let o = c.outputs();
        assert_eq!((o.wrong_way[0], o.wrong_checkpoint[0], o.hit[0]), (0, 0, 0));
        assert!(o.progress[0] >= last);
        last = o.progress[0];
        if o.laps[0] == 3 {
            break;
        }
    }
    assert_eq!(c.outputs().laps[0], 3);
}
