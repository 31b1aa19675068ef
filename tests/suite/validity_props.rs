//! Property test of the library's validity check (`trackgen::track::validity::is_valid`) against
//! the f64 brute-force oracle (`track_oracle::geometry`) on random closed polylines with planted
//! defects: reversals (the fold back of issue 14), cusps, near-touching waists and thin necks.
//!
//! Soundness is exact: every polyline the library accepts passes the oracle. Completeness is
//! checked away from the margins: a polyline that passes the oracle with 5 % stricter half width
//! and turn radius, and spacing well inside the limits, is accepted by the library. Plus the
//! issue's fold-back shape as a hand-made fixture.

use proptest::prelude::*;
use trackgen::geom::Vec2;
use trackgen::track::chunks::boxes_len;
use trackgen::track::validity::{is_valid, ValidityConsts, ValidityScratch, BOX_WORDS};

use crate::track_oracle::{borders, geometry, P};

const HW: f64 = 6.0;
const MIN_TURN_RADIUS: f64 = 12.0;

/// The library's verdict on the f32 rounding of `c`.
fn library(c: &[P]) -> bool {
    let n = c.len();
    let pts: Vec<Vec2> = c
        .iter()
        .map(|p| Vec2::new(p[0] as f32, p[1] as f32))
        .collect();
    let (mut arclen, mut border) = (vec![0.0; n], vec![Vec2::ZERO; 2 * n]);
    let (mut seg_boxes, mut chunk_boxes) =
        (vec![0.0; BOX_WORDS * n], vec![Vec2::ZERO; boxes_len(n)]);
    let consts = ValidityConsts {
        half_width_m: HW as f32,
        min_turn_radius_m: MIN_TURN_RADIUS as f32,
    };
    let mut s = ValidityScratch {
        arclen: &mut arclen,
        border: &mut border,
        seg_boxes: &mut seg_boxes,
        chunk_boxes: &mut chunk_boxes,
    };
    is_valid(&pts, &consts, &mut s)
}

/// The oracle's verdict on `c` (rounded to f32 first, as the library sees it) with half width
/// `hw` and minimum turn radius `r`.
fn oracle(c: &[P], hw: f64, r: f64) -> Option<String> {
    let c: Vec<P> = c
        .iter()
        .map(|p| [f64::from(p[0] as f32), f64::from(p[1] as f32)])
        .collect();
    let (outer, inner) = borders(&c, hw);
    geometry(&c, &outer, &inner, hw, r)
}

fn spacing_extremes(c: &[P]) -> (f64, f64) {
    let n = c.len();
    let seg: Vec<f64> = (0..n)
        .map(|i| crate::track_oracle::d(c[i], c[(i + 1) % n]))
        .collect();
    let mean = seg.iter().sum::<f64>() / n as f64;
    let lo = seg.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = seg.iter().copied().fold(0.0, f64::max);
    (lo / mean, hi / mean)
}

/// Compares library and oracle on `c`; panics with the shape on a disagreement that matters.
fn compare(c: &[P], what: &str) -> bool {
    let lib = library(c);
    if lib {
        if let Some(why) = oracle(c, HW, MIN_TURN_RADIUS) {
            panic!("{what}: library accepts a polyline the oracle rejects ({why}): {c:?}");
        }
    }
    let (lo, hi) = spacing_extremes(c);
    if lo > 0.25 && hi < 2.3 && oracle(c, HW * 1.05, MIN_TURN_RADIUS * 1.05).is_none() {
        assert!(
            lib,
            "{what}: library rejects a polyline clear of every margin: {c:?}"
        );
    }
    lib
}

/// Which defect to plant.
#[derive(Clone, Copy, Debug)]
enum Plant {
    None,
    /// Point `k + 1` moved back next to point `k − 1` (plus `jitter`): a near-reversal at `k`.
    Reversal {
        k: usize,
        jitter: [f64; 2],
    },
    /// Point `k` pushed off the curve along its normal by `offset` metres: a cusp.
    Cusp {
        k: usize,
        offset: f64,
    },
    /// A waist: `r(θ) = R₀ − (R₀ − w)·(cos 2θ)⁸`, half-width `w` at θ = 0 and π.
    Waist {
        half_width_m: f64,
    },
    /// An inlet cut into the loop at angle `at`: a thin neck of depth `depth·R₀`, width `width`
    /// radians.
    Neck {
        at: f64,
        depth: f64,
        width: f64,
    },
}

/// A closed polyline of `n` points at equal angles of `r(θ) = R₀·(1 + a₂ cos(2θ + φ₂) + a₃ cos(3θ
/// + φ₃))` (`R₀` giving about 5 m spacing), shifted by `shift`, with `plant` applied.
fn polyline(n: usize, harm: [f64; 4], plant: Plant, shift: [f64; 2]) -> Vec<P> {
    let r0 = n as f64 * 5.0 / std::f64::consts::TAU;
    let mut c: Vec<P> = (0..n)
        .map(|i| {
            let t = i as f64 / n as f64 * std::f64::consts::TAU;
            let mut r = r0
                * (1.0 + harm[0] * (2.0 * t + harm[1]).cos() + harm[2] * (3.0 * t + harm[3]).cos());
            match plant {
                Plant::Waist { half_width_m } => {
                    r = r0 - (r0 - half_width_m) * (2.0 * t).cos().powi(8);
                }
                Plant::Neck { at, depth, width } => {
                    let mut x = t - at;
                    x -= std::f64::consts::TAU * (x / std::f64::consts::TAU).round();
                    r -= depth * r0 * (-(x / width).powi(2)).exp();
                }
                _ => {}
            }
            [r * t.cos(), r * t.sin()]
        })
        .collect();
    match plant {
        Plant::Reversal { k, jitter } => {
            let (a, q) = (c[(k + n - 1) % n], (k + 1) % n);
            c[q] = [a[0] + jitter[0], a[1] + jitter[1]];
        }
        Plant::Cusp { k, offset } => {
            let (a, b) = (c[(k + n - 1) % n], c[(k + 1) % n]);
            let l = crate::track_oracle::d(a, b);
            c[k] = [
                c[k][0] - (b[1] - a[1]) / l * offset,
                c[k][1] + (b[0] - a[0]) / l * offset,
            ];
        }
        _ => {}
    }
    c.iter()
        .map(|p| [p[0] + shift[0], p[1] + shift[1]])
        .collect()
}

fn plant() -> impl Strategy<Value = Plant> {
    prop_oneof![
        Just(Plant::None),
        (0usize..1000, -2.5f64..2.5, -2.5f64..2.5)
            .prop_map(|(k, x, y)| Plant::Reversal { k, jitter: [x, y] }),
        (0usize..1000, -8.0f64..8.0).prop_map(|(k, offset)| Plant::Cusp { k, offset }),
        (4.0f64..12.0).prop_map(|w| Plant::Waist { half_width_m: w }),
        (0.0f64..6.3, 0.2f64..0.9, 0.03f64..0.3).prop_map(|(at, depth, width)| Plant::Neck {
            at,
            depth,
            width
        }),
    ]
}

fn fix_index(plant: Plant, n: usize) -> Plant {
    match plant {
        Plant::Reversal { k, jitter } => Plant::Reversal { k: k % n, jitter },
        Plant::Cusp { k, offset } => Plant::Cusp { k: k % n, offset },
        p => p,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 768, ..ProptestConfig::default() })]

    #[test]
    fn validity_agrees_with_the_f64_oracle(
        n in 40usize..160,
        harm in (0.0f64..0.2, 0.0f64..6.3, 0.0f64..0.12, 0.0f64..6.3),
        plant in plant(),
        shift in (-800.0f64..800.0, -800.0f64..800.0),
    ) {
        let plant = fix_index(plant, n);
        let c = polyline(n, [harm.0, harm.1, harm.2, harm.3], plant, [shift.0, shift.1]);
        compare(&c, &format!("{plant:?}"));
    }
}

/// The generators above reach both verdicts, and every planted reversal is rejected — so the
/// property test cannot pass by accepting or rejecting everything.
#[test]
fn planted_shapes_reach_both_verdicts() {
    let mut accepted = 0;
    for n in (40..160).step_by(7) {
        let c = polyline(n, [0.1, 0.3, 0.05, 1.0], Plant::None, [0.0; 2]);
        accepted += usize::from(compare(&c, "plain"));
        for k in [0, n / 3, n - 1] {
            let c = polyline(
                n,
                [0.1, 0.3, 0.05, 1.0],
                Plant::Reversal {
                    k,
                    jitter: [0.9, -0.7],
                },
                [0.0; 2],
            );
            assert!(!compare(&c, "reversal"), "n {n}, k {k}: reversal accepted");
        }
        let c = polyline(n, [0.0; 4], Plant::Waist { half_width_m: 5.0 }, [0.0; 2]);
        assert!(!compare(&c, "waist"), "n {n}: a waist 10 m wide accepted");
    }
    assert!(accepted >= 10, "only {accepted} plain loops accepted");
}

/// The fold back of issue 14 (`hull`, seed 101, env 10789, points 46 → 47 → 48) inside a loop:
/// a circle of radius 13.8 m passes through the three points, above the 12 m minimum, yet the
/// path reverses. Centerline segments cross and both borders self-intersect.
#[test]
fn issue_14_fold_back_shape_is_invalid() {
    let (a, p, b) = ([108.71, -81.63], [111.31, -79.25], [107.86, -82.75]);
    let radius = {
        let d = crate::track_oracle::d;
        let cross = (p[0] - a[0]) * (b[1] - a[1]) - (p[1] - a[1]) * (b[0] - a[0]);
        d(a, p) * d(p, b) * d(b, a) / (2.0 * f64::abs(cross))
    };
    assert!(radius > 13.0 && radius < 14.5, "{radius}");
    // Splice the three points into a smooth loop through them.
    let n = 150;
    let mut c = polyline(n, [0.0; 4], Plant::None, [0.0; 2]);
    let shift = [a[0] - c[46][0], a[1] - c[46][1]];
    for q in &mut c {
        *q = [q[0] + shift[0], q[1] + shift[1]];
    }
    c[47] = p;
    c[48] = b;
    assert!(!library(&c), "the fold back is accepted");
    assert!(oracle(&c, HW, MIN_TURN_RADIUS).is_some());
    // The same loop without the fold is valid for both.
    let plain = polyline(n, [0.0; 4], Plant::None, shift);
    assert!(library(&plain) && oracle(&plain, HW, MIN_TURN_RADIUS).is_none());
}
