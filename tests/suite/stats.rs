//! Shape statistics on analytic shapes: a circle, a stadium and rounded polygons (one with a
//! concave corner) sampled densely give their closed-form length, turning, straight fraction,
//! corner count and corner radii; the same shapes sampled evenly and by curvature (long segments
//! on the straights, short ones in the corners) give the same statistics; and the quantiles of
//! [`Summary`] are nearest-rank.

use std::f64::consts::{FRAC_PI_2, PI, TAU};

use trackgen::geom::Vec2;
use trackgen::track::stats::{track_shape, Summary, TrackShape, STRAIGHT_RADIUS_HW};

/// A turtle leg: `(straight length, signed corner turn, corner radius)`.
type Leg = (f64, f64, f64);

/// A turtle path: `(straight length, signed corner turn, corner radius)` legs from the origin at
/// heading 0, sampled every ~`step` metres (in f64, rounded to f32 at the end).
fn turtle(legs: &[(f64, f64, f64)], step: f64) -> Vec<[f32; 2]> {
    turtle_by(legs, step, |_| step)
}

/// [`turtle`] with its straights sampled every ~`straight_step` metres and a corner of radius
/// `r` every ~`arc_step(r)` metres; every straight and arc starts at a point.
fn turtle_by(
    legs: &[(f64, f64, f64)],
    straight_step: f64,
    arc_step: impl Fn(f64) -> f64,
) -> Vec<[f32; 2]> {
    let (mut x, mut y, mut h) = (0.0f64, 0.0f64, 0.0f64);
    let mut out = Vec::new();
    for &(straight, turn, radius) in legs {
        let step = arc_step(radius);
        let k = (straight / straight_step).round() as usize;
        for i in 0..k {
            let s = straight * i as f64 / k as f64;
            out.push([(x + s * h.cos()) as f32, (y + s * h.sin()) as f32]);
        }
        x += straight * h.cos();
        y += straight * h.sin();
        let arc = turn.abs() * radius;
        let m = (arc / step).round().max(1.0) as usize;
        // Centre of the arc, to the left for a left turn.
        let side = turn.signum();
        let (cx, cy) = (x - side * radius * h.sin(), y + side * radius * h.cos());
        for i in 0..m {
            let a = h + turn * i as f64 / m as f64;
            out.push([
                (cx + side * radius * a.sin()) as f32,
                (cy - side * radius * a.cos()) as f32,
            ]);
        }
        h += turn;
        x = cx + side * radius * h.sin();
        y = cy - side * radius * h.cos();
    }
    let gap = (x.hypot(y), h - TAU);
    assert!(
        gap.0 < 1e-6 && gap.1.abs() < 1e-9,
        "turtle not closed: {gap:?}"
    );
    out
}

fn shape(pts: &[[f32; 2]], hw: f32) -> (TrackShape, Vec<f64>) {
    let mut radii = Vec::new();
    let pts: Vec<Vec2> = pts.iter().map(|&p| Vec2::from(p)).collect();
    let s = track_shape(&pts, hw, |r| radii.push(r));
    (s, radii)
}

fn close(what: &str, got: f64, want: f64, rel: f64) {
    assert!(
        (got - want).abs() <= rel * want.abs().max(1e-9),
        "{what}: {got} vs closed form {want} (tolerance {rel})"
    );
}

#[test]
fn circle() {
    let (r, hw) = (50.0, 2.0);
    assert!(r < STRAIGHT_RADIUS_HW * f64::from(hw));
    let pts = turtle(&[(0.0, TAU, r)], 0.5);
    let (s, radii) = shape(&pts, hw);
    close("length", s.length_m, TAU * r, 1e-4);
    close("length / hw", s.length_over_half_width, TAU * r / 2.0, 1e-4);
    close("turning", s.abs_turning_turns, 1.0, 1e-4);
    assert_eq!(s.straight_fraction, 0.0);
    // +0, not −0: reports print it as "0.000", not "-0.000".
    assert!(s.straight_fraction.is_sign_positive());
    assert_eq!(s.corners, 1);
    close("radius", radii[0], r, 1e-3);
}

#[test]
fn stadium() {
    let (a, r, hw) = (300.0, 40.0, 4.0);
    let pts = turtle(&[(a, PI, r), (a, PI, r)], 0.5);
    let (s, radii) = shape(&pts, hw);
    let length = 2.0 * a + TAU * r;
    close("length", s.length_m, length, 1e-4);
    close("turning", s.abs_turning_turns, 1.0, 1e-4);
    close(
        "straight fraction",
        s.straight_fraction,
        2.0 * a / length,
        0.005,
    );
    assert_eq!(s.corners, 2);
    for got in radii {
        close("radius", got, r, 0.02);
    }
}

#[test]
fn rounded_square() {
    let (a, r, hw) = (200.0, 20.0, 2.0);
    let pts = turtle(&[(a, FRAC_PI_2, r); 4], 0.5);
    let (s, radii) = shape(&pts, hw);
    let length = 4.0 * a + TAU * r;
    close("length", s.length_m, length, 1e-4);
    close(
        "straight fraction",
        s.straight_fraction,
        4.0 * a / length,
        0.005,
    );
    assert_eq!(s.corners, 4);
    assert_eq!(radii.len(), 4);
    for got in radii {
        close("radius", got, r, 0.02);
    }
}

/// An L-shaped hexagon (300 × 300 with a 150 × 150 notch) with corners rounded at radius 20:
/// five left corners and one right, so 1.5 turns of absolute turning.
#[test]
fn rounded_l_shape_with_a_concave_corner() {
    let (r, hw) = (20.0, 2.0);
    let (l, q) = (FRAC_PI_2, -FRAC_PI_2);
    let legs = [
        (260.0, l, r),
        (110.0, l, r),
        (110.0, q, r),
        (110.0, l, r),
        (110.0, l, r),
        (260.0, l, r),
    ];
    let pts = turtle(&legs, 0.5);
    let (s, radii) = shape(&pts, hw);
    let straight = 960.0;
    let length = straight + 6.0 * FRAC_PI_2 * r;
    close("length", s.length_m, length, 1e-4);
    close("turning", s.abs_turning_turns, 1.5, 1e-4);
    close(
        "straight fraction",
        s.straight_fraction,
        straight / length,
        0.005,
    );
    assert_eq!(s.corners, 6);
    for got in radii {
        close("radius", got, r, 0.02);
    }
}

/// The stadium, the rounded square and the rounded L-shape above, sampled every 0.5 m and as
/// curvature sampling would (straights every ~20 m, corners of radius `r` every `√(8·r·0.4)` m,
/// 8–11 m here): the same turning and corners, the straight fraction within 0.5 % (the chords
/// shorten the length a little), the radii within 2 % and lengths within 0.2 %.
#[test]
fn the_same_shapes_sampled_evenly_and_by_curvature_read_the_same() {
    let (l, q) = (FRAC_PI_2, -FRAC_PI_2);
    let shapes: [(&str, Vec<Leg>, f32); 3] = [
        ("stadium", vec![(300.0, PI, 40.0), (300.0, PI, 40.0)], 4.0),
        ("rounded square", vec![(200.0, l, 20.0); 4], 2.0),
        (
            "rounded L",
            vec![
                (260.0, l, 20.0),
                (110.0, l, 20.0),
                (110.0, q, 20.0),
                (110.0, l, 20.0),
                (110.0, l, 20.0),
                (260.0, l, 20.0),
            ],
            2.0,
        ),
    ];
    for (name, legs, hw) in shapes {
        let even = turtle(&legs, 0.5);
        let uneven = turtle_by(&legs, 20.0, |r| (8.0 * r * 0.4f64).sqrt());
        assert!(uneven.len() * 10 < even.len(), "{name}: {}", uneven.len());
        let ((a, ra), (b, rb)) = (shape(&even, hw), shape(&uneven, hw));
        let what = |s: &str| format!("{name}: {s}");
        close(&what("length"), b.length_m, a.length_m, 2e-3);
        close(
            &what("turning"),
            b.abs_turning_turns,
            a.abs_turning_turns,
            1e-4,
        );
        close(
            &what("straight fraction"),
            b.straight_fraction,
            a.straight_fraction,
            0.005,
        );
        assert_eq!(a.corners, b.corners, "{name}");
        assert_eq!(ra.len(), rb.len(), "{name}");
        for (x, y) in ra.iter().zip(&rb) {
            close(&what("radius"), *y, *x, 0.02);
        }
    }
}

#[test]
fn summary_quantiles_are_nearest_rank() {
    let mut v: Vec<f64> = (1..=100).rev().map(f64::from).collect();
    let s = Summary::of(&mut v);
    assert_eq!(
        (s.count, s.min, s.p05, s.p50, s.p95, s.max),
        (100, 1.0, 5.0, 50.0, 95.0, 100.0)
    );
    assert_eq!(s.mean, 50.5);
    assert_eq!(Summary::of(&mut []), Summary::default());
}
