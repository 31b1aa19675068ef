//! Shape statistics of tracks: how circuit-like a corpus is.
//!
//! Every statistic is computed on a track's closed plan-view centerline `p_0 … p_{n−1}` (z is
//! ignored), with segment lengths `l_i = |p_{i+1} − p_i|` (indices cyclic):
//!
//! - **length** `L = Σ l_i`, metres; and **length over half width** `L / hw`.
//! - **turn** at vertex `i`: the signed angle `τ_i ∈ (−π, π]` from `p_i − p_{i−1}` to
//!   `p_{i+1} − p_i`.
//! - **total absolute turning** `Σ |τ_i|`, reported in turns (divided by 2π): a convex loop
//!   has exactly 1, a real top-series circuit several.
//! - **segment turn**: segment `i` (from `p_i` to `p_{i+1}`) carries half of the turn at each of
//!   its ends, `t_i = (τ_i + τ_{i+1}) / 2`, so its curvature is `κ_i = t_i / l_i`. A segment is
//!   *straight* when its turn radius `1/|κ_i|` exceeds [`STRAIGHT_RADIUS_HW`] half widths.
//! - **straight fraction**: the length of the straight segments over `L`.
//! - **corners**: maximal cyclic runs of non-straight segments turning the same way (an S-bend is
//!   two corners). A run of segments `i … j` turns by the turns of its vertices `i … j + 1`, its
//!   two ends included (where it meets a straight or the next run); it is a corner when that
//!   turn's magnitude reaches [`MIN_CORNER_TURN`] (smaller runs are kinks, counted in neither).
//!   A track without straight segments that never changes turning direction is one corner.
//! - **corner radius**: a corner's mean radius, its length over its turn, `Σ l_k / |Σ τ_v|`.
//!
//! Segments rather than vertices carry the length so that the numbers move little with the
//! sampling: a long straight segment next to a corner takes half of the corner's first turn over
//! its own length and stays straight, where a vertex rule (each vertex standing for half of each
//! adjacent segment, the definition before) gave the corner half of that straight segment.
//! Densely and evenly sampled analytic shapes read their closed forms under both (the stats
//! tests); the same analytic shape sampled every 0.5 m and by curvature (corners every
//! `√(8·R·0.4 m)`, straights every 20 m) gives the same statistics within the stats tests'
//! tolerances. What no rule on the points can see is a corner drawn as a polygon coarser than
//! the sampling (points at zero turn between kinks): the statistics measure the centerline as
//! sampled.
//!
//! A corpus reports each as a [`Summary`] over tracks (corner radii: over all corners of all
//! tracks). These are analysis, not lane code: they are computed on the host in `f64`, with the
//! turn angles from the crate's [`crate::math::atan2`].

use serde::{Deserialize, Serialize};

use super::batch::TrackBatch;
use crate::geom::Vec2;

/// A segment is straight when its turn radius exceeds this many half widths.
pub const STRAIGHT_RADIUS_HW: f64 = 30.0;
/// The smallest total turn of a corner, radians (15°).
pub const MIN_CORNER_TURN: f64 = 15.0 * std::f64::consts::PI / 180.0;

/// The shape statistics of one track.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TrackShape {
    /// Closed plan-view length, metres.
    pub length_m: f64,
    /// Length over half width.
    pub length_over_half_width: f64,
    /// Total absolute turning, turns (2π radians).
    pub abs_turning_turns: f64,
    /// Fraction of the length on straights.
    pub straight_fraction: f64,
    /// Number of corners.
    pub corners: u32,
}

/// The shape statistics of the closed centerline `pts` of half width `half_width_m`; each
/// corner's mean radius (metres) is passed to `corner_radius`. Fewer than 3 points, or
/// coincident neighbours (a zero-length segment), give zero turning at those vertices.
pub fn track_shape(
    pts: &[Vec2],
    half_width_m: f32,
    mut corner_radius: impl FnMut(f64),
) -> TrackShape {
    let n = pts.len();
    let hw = f64::from(half_width_m);
    let lengths: Vec<f64> = (0..n)
        .map(|i| {
            let (a, b) = (pts[i], pts[(i + 1) % n]);
            (f64::from(b[0]) - f64::from(a[0])).hypot(f64::from(b[1]) - f64::from(a[1]))
        })
        .collect();
    let length_m: f64 = lengths.iter().sum();
    let mut shape = TrackShape {
        length_m,
        length_over_half_width: length_m / hw,
        abs_turning_turns: 0.0,
        straight_fraction: 0.0,
        corners: 0,
    };
    if n < 3 || length_m <= 0.0 {
        return shape;
    }
    let turns: Vec<f64> = (0..n)
        .map(|i| {
            let (a, p, b) = (pts[(i + n - 1) % n], pts[i], pts[(i + 1) % n]);
            let (ux, uy) = (p[0] - a[0], p[1] - a[1]);
            let (vx, vy) = (b[0] - p[0], b[1] - p[1]);
            if (ux == 0.0 && uy == 0.0) || (vx == 0.0 && vy == 0.0) {
                return 0.0;
            }
            f64::from(crate::math::atan2(ux * vy - uy * vx, ux * vx + uy * vy))
        })
        .collect();
    let straight_radius = STRAIGHT_RADIUS_HW * hw;
    // Class of a segment: 0 straight, ±1 turning left / right.
    let classes: Vec<i8> = (0..n)
        .map(|i| {
            let t = 0.5 * (turns[i] + turns[(i + 1) % n]);
            if t.abs() * straight_radius <= lengths[i] {
                0
            } else if t > 0.0 {
                1
            } else {
                -1
            }
        })
        .collect();
    shape.abs_turning_turns = turns.iter().map(|t| t.abs()).sum::<f64>() / std::f64::consts::TAU;
    // Folded from +0 (an empty `sum` of f64 is −0, which would print as "-0.000").
    let straight: f64 = (0..n)
        .filter(|&i| classes[i] == 0)
        .fold(0.0, |sum, i| sum + lengths[i]);
    shape.straight_fraction = straight / length_m;
    // Corners: start the cyclic walk just after a class change, so no run wraps around.
    let start = (0..n).find(|&i| classes[i] != classes[(i + n - 1) % n]);
    let Some(start) = start else {
        // One class everywhere: all straight, or one corner around the whole loop.
        let total: f64 = turns.iter().sum();
        if classes[0] != 0 && total.abs() >= MIN_CORNER_TURN {
            shape.corners = 1;
            corner_radius(length_m / total.abs());
        }
        return shape;
    };
    let mut k = 0;
    while k < n {
        let c = classes[(start + k) % n];
        // The run's length, and the turns of its vertices: each segment's start, then the end
        // of its last.
        let (mut arc, mut total, mut end) = (0.0, 0.0, 0);
        while k < n && classes[(start + k) % n] == c {
            let i = (start + k) % n;
            arc += lengths[i];
            total += turns[i];
            end = (i + 1) % n;
            k += 1;
        }
        total += turns[end];
        if c != 0 && total.abs() >= MIN_CORNER_TURN {
            shape.corners += 1;
            corner_radius(arc / total.abs());
        }
    }
    shape
}

/// A distribution: count, mean and nearest-rank quantiles.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Number of values.
    pub count: u64,
    /// Mean.
    pub mean: f64,
    /// Smallest value.
    pub min: f64,
    /// 5th percentile.
    pub p05: f64,
    /// Median.
    pub p50: f64,
    /// 95th percentile.
    pub p95: f64,
    /// Largest value.
    pub max: f64,
}

impl Summary {
    /// The summary of `values` (sorted in place; NaNs sort last). An empty slice gives all zeros.
    pub fn of(values: &mut [f64]) -> Self {
        if values.is_empty() {
            return Self::default();
        }
        values.sort_by(f64::total_cmp);
        let n = values.len();
        // Nearest rank: the smallest value with at least a fraction q of the values at or below.
        let rank = |q: f64| values[((q * n as f64).ceil() as usize).clamp(1, n) - 1];
        Self {
            count: n as u64,
            mean: values.iter().sum::<f64>() / n as f64,
            min: values[0],
            p05: rank(0.05),
            p50: rank(0.5),
            p95: rank(0.95),
            max: values[n - 1],
        }
    }
}

/// The shape statistics of a corpus (see the module doc for the definitions).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ShapeStats {
    /// Closed plan-view length, metres.
    pub length_m: Summary,
    /// Length over half width.
    pub length_over_half_width: Summary,
    /// Total absolute turning, turns.
    pub abs_turning_turns: Summary,
    /// Fraction of the length on straights.
    pub straight_fraction: Summary,
    /// Corners per track.
    pub corners: Summary,
    /// Mean radius of each corner, metres (over all corners of all tracks).
    pub corner_radius_m: Summary,
}

/// Collects per-track shapes (in the order added) and summarises them.
#[derive(Clone, Debug, Default)]
pub struct ShapeAccumulator {
    columns: [Vec<f64>; 5],
    radii: Vec<f64>,
}

impl ShapeAccumulator {
    /// Adds the track `pts` of half width `half_width_m`.
    pub fn add(&mut self, pts: &[Vec2], half_width_m: f32) {
        let radii = &mut self.radii;
        let s = track_shape(pts, half_width_m, |r| radii.push(r));
        let values = [
            s.length_m,
            s.length_over_half_width,
            s.abs_turning_turns,
            s.straight_fraction,
            f64::from(s.corners),
        ];
        for (column, v) in self.columns.iter_mut().zip(values) {
            column.push(v);
        }
    }

    /// Adds every env of `batch` (its plan-view centerlines).
    pub fn add_batch(&mut self, batch: &TrackBatch, half_width_m: f32) {
        let mut pts = Vec::with_capacity(batch.n_max);
        for e in 0..batch.n_envs {
            pts.clear();
            pts.extend(batch.points(&batch.center, e).iter().map(|c| c.truncate()));
            self.add(&pts, half_width_m);
        }
    }

    /// The summaries of everything added.
    pub fn finish(mut self) -> ShapeStats {
        let [length, over, turning, straight, corners] = &mut self.columns;
        ShapeStats {
            length_m: Summary::of(length),
            length_over_half_width: Summary::of(over),
            abs_turning_turns: Summary::of(turning),
            straight_fraction: Summary::of(straight),
            corners: Summary::of(corners),
            corner_radius_m: Summary::of(&mut self.radii),
        }
    }
}

impl ShapeStats {
    /// The statistics as `(name, summary)` rows, in a fixed order.
    pub fn rows(&self) -> [(&'static str, &Summary); 6] {
        [
            ("length_m", &self.length_m),
            ("length/half_width", &self.length_over_half_width),
            ("abs_turning_turns", &self.abs_turning_turns),
            ("straight_fraction", &self.straight_fraction),
            ("corners", &self.corners),
            ("corner_radius_m", &self.corner_radius_m),
        ]
    }
}
