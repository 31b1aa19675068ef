//! An independent f64 brute-force oracle for track validity: every pair tested, no shortcut
//! beyond an exact bounding-box rejection. It states validity geometrically — borders simple,
//! disjoint and nested (inner inside outer), centerline simple, every turn one a circle of the
//! minimum radius could make, turning number ±1, thickness, even spacing — and shares no code
//! with the library's check.

use trackgen::preset::Preset;
use trackgen::track::{TrackBatch, VALIDITY_SLACK};

/// A plan-view point in f64.
pub type P = [f64; 2];

fn orient(a: P, b: P, c: P) -> f64 {
    (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])
}

fn on_segment(a: P, b: P, p: P) -> bool {
    p[0] >= a[0].min(b[0])
        && p[0] <= a[0].max(b[0])
        && p[1] >= a[1].min(b[1])
        && p[1] <= a[1].max(b[1])
}

/// Whether closed segments `ab` and `cd` meet (touching and collinear overlap count).
pub fn cross(a: P, b: P, c: P, d: P) -> bool {
    // Exact rejection: disjoint bounding boxes cannot meet.
    if a[0].max(b[0]) < c[0].min(d[0])
        || c[0].max(d[0]) < a[0].min(b[0])
        || a[1].max(b[1]) < c[1].min(d[1])
        || c[1].max(d[1]) < a[1].min(b[1])
    {
        return false;
    }
    let (o1, o2, o3, o4) = (
        orient(a, b, c),
        orient(a, b, d),
        orient(c, d, a),
        orient(c, d, b),
    );
    if o1 * o2 < 0.0 && o3 * o4 < 0.0 {
        return true;
    }
    (o1 == 0.0 && on_segment(a, b, c))
        || (o2 == 0.0 && on_segment(a, b, d))
        || (o3 == 0.0 && on_segment(c, d, a))
        || (o4 == 0.0 && on_segment(c, d, b))
}

/// `|a − b|`.
pub fn d(a: P, b: P) -> f64 {
    ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2)).sqrt()
}

fn area2(p: &[P]) -> f64 {
    (0..p.len())
        .map(|i| {
            let (a, b) = (p[i], p[(i + 1) % p.len()]);
            a[0] * b[1] - b[0] * a[1]
        })
        .sum()
}

/// Whether `q` is strictly inside the closed polygon `poly` (even–odd rule).
fn inside(poly: &[P], q: P) -> bool {
    let mut odd = false;
    for i in 0..poly.len() {
        let (a, b) = (poly[i], poly[(i + 1) % poly.len()]);
        if (a[1] > q[1]) != (b[1] > q[1]) {
            let x = a[0] + (q[1] - a[1]) / (b[1] - a[1]) * (b[0] - a[0]);
            if q[0] < x {
                odd = !odd;
            }
        }
    }
    odd
}

/// The first pair of non-consecutive segments of the closed polylines `parts` that meet.
fn first_crossing(parts: &[&[P]]) -> Option<(usize, usize, usize, usize)> {
    let segs: Vec<(usize, usize, P, P)> = parts
        .iter()
        .enumerate()
        .flat_map(|(q, p)| (0..p.len()).map(move |i| (q, i, p[i], p[(i + 1) % p.len()])))
        .collect();
    for k in 0..segs.len() {
        for m in k + 1..segs.len() {
            let (qk, i, a, b) = segs[k];
            let (qm, j, c, dd) = segs[m];
            let len = parts[qk].len();
            if qk == qm && ((i + 1) % len == j || (j + 1) % len == i) {
                continue;
            }
            if cross(a, b, c, dd) {
                return Some((qk, i, qm, j));
            }
        }
    }
    None
}

/// The borders of the closed centerline `c` at half width `hw`, computed in f64 from their
/// definition: at ±hw along the central-difference left normal, the outer one away from the
/// enclosed region.
pub fn borders(c: &[P], hw: f64) -> (Vec<P>, Vec<P>) {
    let n = c.len();
    let sigma = if area2(c) >= 0.0 { 1.0 } else { -1.0 };
    let mut outer = Vec::with_capacity(n);
    let mut inner = Vec::with_capacity(n);
    for i in 0..n {
        let (a, b) = (c[(i + n - 1) % n], c[(i + 1) % n]);
        let l = d(a, b);
        let nl = [-(b[1] - a[1]) / l, (b[0] - a[0]) / l];
        outer.push([c[i][0] - sigma * hw * nl[0], c[i][1] - sigma * hw * nl[1]]);
        inner.push([c[i][0] + sigma * hw * nl[0], c[i][1] + sigma * hw * nl[1]]);
    }
    (outer, inner)
}

/// Why the closed centerline `c` with borders `outer`, `inner` is not a valid track of half
/// width `hw` and minimum turn radius `min_turn_radius_m`, or `None`. Tolerances sit slightly on
/// the lenient side of the library's (0.1 %), so that only real violations are reported.
pub fn geometry(
    c: &[P],
    outer: &[P],
    inner: &[P],
    hw: f64,
    min_turn_radius_m: f64,
) -> Option<String> {
    let n = c.len();
    if n < 8 {
        return Some(format!("{n} points"));
    }
    if c.iter()
        .chain(outer)
        .chain(inner)
        .any(|p| !p.iter().all(|x| x.is_finite()))
    {
        return Some("non-finite point".into());
    }
    // Closed, even spacing.
    let seg: Vec<f64> = (0..n).map(|i| d(c[i], c[(i + 1) % n])).collect();
    let total: f64 = seg.iter().sum();
    let mean = total / n as f64;
    if seg.iter().any(|&l| l > 2.6 * mean || l < 0.19 * mean) {
        return Some("uneven spacing or open loop".into());
    }
    // Turns: each direction change at most what a circle of the minimum radius turns through
    // chords of the same lengths (asin(l₁/2R) + asin(l₂/2R)), and the turning number ±1.
    let r_min = min_turn_radius_m * (1.0 - f64::from(VALIDITY_SLACK)) * 0.999;
    let mut turning = 0.0;
    for i in 0..n {
        let (a, q, b) = (c[(i + n - 1) % n], c[i], c[(i + 1) % n]);
        let u = [q[0] - a[0], q[1] - a[1]];
        let v = [b[0] - q[0], b[1] - q[1]];
        let phi = (u[0] * v[1] - u[1] * v[0]).atan2(u[0] * v[0] + u[1] * v[1]);
        turning += phi;
        let circle = (seg[(i + n - 1) % n] / (2.0 * r_min)).min(1.0).asin()
            + (seg[i] / (2.0 * r_min)).min(1.0).asin();
        if phi.abs() > circle * 1.001 {
            return Some(format!(
                "point {i}: turns {:.1}° where a circle of radius {r_min:.2} turns {:.1}°",
                phi.abs().to_degrees(),
                circle.to_degrees()
            ));
        }
        let radius = d(a, q) * d(q, b) * d(b, a) / (2.0 * orient(a, q, b).abs());
        if radius < r_min {
            return Some(format!("point {i}: turn radius {radius:.2} < {r_min:.2}"));
        }
    }
    if (turning.abs() - std::f64::consts::TAU).abs() > 0.06 {
        return Some(format!("turning {turning}"));
    }
    // Thickness: points farther apart than π·hw along the curve keep 2·(1 − slack)·hw apart.
    let mut s = vec![0.0; n];
    for i in 1..n {
        s[i] = s[i - 1] + seg[i - 1];
    }
    let min_sep = 2.0 * (1.0 - f64::from(VALIDITY_SLACK)) * hw * 0.999;
    for i in 0..n {
        for j in i + 1..n {
            let gap = s[j] - s[i];
            let arc = gap.min(total - gap);
            if arc > std::f64::consts::PI * hw * 1.001 && d(c[i], c[j]) < min_sep {
                return Some(format!(
                    "thin at points {i}, {j}: {:.2} < {min_sep:.2}",
                    d(c[i], c[j])
                ));
            }
        }
    }
    // Simple centerline; simple, disjoint borders.
    if let Some((_, i, _, j)) = first_crossing(&[c]) {
        return Some(format!("centerline segments {i} and {j} cross"));
    }
    if let Some((qi, i, qj, j)) = first_crossing(&[outer, inner]) {
        let name = ["outer", "inner"];
        return Some(format!(
            "{} border segment {i} and {} border segment {j} meet",
            name[qi], name[qj]
        ));
    }
    // Nested: the inner border inside the outer one (disjoint simple curves: one vertex decides),
    // enclosing less area.
    if !inside(outer, inner[0]) || area2(inner).abs() >= area2(outer).abs() {
        return Some("inner border not inside the outer one".into());
    }
    None
}

/// Why env `e` of a track batch is not a valid track, or `None`: the batch's own contract
/// (count, NaN padding, unit tangents, normals, borders at half width) and then [`geometry`]
/// on the batch's centerline and borders.
pub fn brute_force(b: &TrackBatch, e: usize, p: &Preset) -> Option<String> {
    let n = b.count[e] as usize;
    let hw = f64::from(p.track.half_width_m);
    let xy = |v: trackgen::geom::Vec3| [f64::from(v[0]), f64::from(v[1])];
    let c: Vec<P> = b.points(&b.center, e).iter().map(|&v| xy(v)).collect();
    let outer: Vec<P> = b.points(&b.outer, e).iter().map(|&v| xy(v)).collect();
    let inner: Vec<P> = b.points(&b.inner, e).iter().map(|&v| xy(v)).collect();
    if n < 8 {
        return Some(format!("{n} points"));
    }
    let base = e * b.n_max;
    for i in 0..b.n_max {
        let finite = b.center[base + i].is_finite();
        if finite != (i < n) {
            return Some(format!("point {i}: finite = {finite} with count {n}"));
        }
    }
    for i in 0..n {
        let t = b.tangent[base + i];
        let nl = b.normal[base + i];
        let tl = (t[0] * t[0] + t[1] * t[1] + t[2] * t[2]).sqrt();
        if (tl - 1.0).abs() > 1e-4 || (t[0] * nl[0] + t[1] * nl[1]).abs() > 1e-4 {
            return Some(format!("point {i}: tangent/normal not orthonormal"));
        }
        for border in [&outer, &inner] {
            if (d(border[i], c[i]) - hw).abs() > 1e-3 * hw.max(1.0) {
                return Some(format!("point {i}: border not at half width"));
            }
        }
    }
    geometry(&c, &outer, &inner, hw, f64::from(p.track.min_turn_radius_m))
}
