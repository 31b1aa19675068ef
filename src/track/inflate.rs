//! Inflation: from a plan-view centerline and its heights to index-aligned `center`, `outer`,
//! `inner`, with unit `tangent` (3D, central difference), left horizontal `normal`, arc length
//! and closed length. Borders lie at ±half_width along the normal at the centre's height; the
//! outer border is on the side away from the enclosed region.

use super::validity::orientation;
use crate::geom::Vec2;
use crate::geom::Vec3;

/// One env's output slices (each `n_max` long) and scalars.
pub struct InflateOut<'a> {
    /// Centerline points.
    pub center: &'a mut [Vec3],
    /// Outer border.
    pub outer: &'a mut [Vec3],
    /// Inner border.
    pub inner: &'a mut [Vec3],
    /// Unit tangents.
    pub tangent: &'a mut [Vec3],
    /// Left unit normals.
    pub normal: &'a mut [Vec3],
    /// Arc lengths.
    pub arclen: &'a mut [f32],
    /// Closed length.
    pub length: &'a mut f32,
    /// How many points the slices held before this write (the batch's previous `count`): past
    /// it they are NaN already ([`TrackBatch`](super::batch::TrackBatch)'s invariant), so only
    /// the rows from the new count up to it are padded again. `n_max` pads every row.
    pub stale: usize,
}

/// Cache lines of each of the next env's output rows that a lane asks for ahead of time when
/// its own writes stop short of its rows' ends.
const PREFETCH_LINES: usize = 8;

/// How many rows short of its rows' ends a lane's writes must stop for it to prefetch the next
/// env's rows (nearer the end, the hardware's stream prefetch still runs on into them).
const PREFETCH_GAP_ROWS: usize = 16;

/// Inflates the closed curve `pts` with heights `z` into `out`; pads past `pts.len()` with NaN
/// (the rows up to `out.stale`: the rows past it are NaN already).
pub fn inflate_lane(pts: &[Vec2], z: &[f32], half_width_m: f32, out: InflateOut<'_>) {
    let n = pts.len();
    let z = &z[..n];
    // In a batch the next env's rows follow these. Where this lane's writes stop well short of
    // its rows' ends, the hardware's stream prefetch stops with them and the next lane would
    // start on lines still in memory: ask for their first lines now. (Writing the padding out
    // to the rows' ends kept the streams going, at the cost of the stores; with neither, the
    // circuit preset's inflate pass ran ~25% slower.)
    if out.stale.max(n) + PREFETCH_GAP_ROWS < out.arclen.len() {
        let rows = [
            out.center.as_ptr_range(),
            out.outer.as_ptr_range(),
            out.inner.as_ptr_range(),
            out.tangent.as_ptr_range(),
            out.normal.as_ptr_range(),
        ];
        for row in rows {
            prefetch_lines(row.end.cast::<u8>());
        }
        prefetch_lines(out.arclen.as_ptr_range().end.cast::<u8>());
    }
    let o = orientation(pts) * half_width_m;
    // Every output sliced to `n` up front, so the loops index without bounds checks.
    let (center, outer, inner) = (
        &mut out.center[..n],
        &mut out.outer[..n],
        &mut out.inner[..n],
    );
    let (tangent, normal, arclen) = (
        &mut out.tangent[..n],
        &mut out.normal[..n],
        &mut out.arclen[..n],
    );
    if n == 0 {
        *out.length = 0.0;
    } else {
        inflate_points(pts, z, o, [&mut *center, outer, inner, tangent, normal]);
        *out.length = arc_lengths(center, arclen);
    }
    // Only the previous track's rows past the new count hold numbers: a shorter track pads them,
    // and the rows past both are left as they are (NaN). At 4096 envs the batch is far larger
    // than the cache, so every padding row rewritten costs its memory traffic.
    let pad = n..out.stale.clamp(n, out.arclen.len());
    // Vec3::NAN is three f32 NaNs: filled as floats, the padding takes whole vector stores.
    for buf in [out.center, out.outer, out.inner, out.tangent, out.normal] {
        bytemuck::cast_slice_mut::<Vec3, f32>(&mut buf[pad.clone()]).fill(f32::NAN);
    }
    out.arclen[pad].fill(f32::NAN);
}

/// Asks for the [`PREFETCH_LINES`] cache lines from `start` for writing (addresses past the
/// batch's end are harmless: a prefetch never faults).
fn prefetch_lines(start: *const u8) {
    for line in 0..PREFETCH_LINES {
        crate::os::prefetch_write(start.wrapping_add(64 * line));
    }
}

/// One point's outputs from its predecessor `a`, itself `c` and its successor `b`: the tangent
/// (the central difference `b − a`, normalized), the left horizontal normal and the borders at
/// `∓o` along it; in the order `[center, outer, inner, tangent, normal]`.
#[inline(always)]
fn inflate_point(a: Vec3, c: Vec3, b: Vec3, o: f32) -> [Vec3; 5] {
    let t = b - a;
    let t = t / t.length();
    let hl = (t.x * t.x + t.y * t.y).sqrt();
    let nl = Vec3::new(-t.y / hl, t.x / hl, 0.0);
    let outer = Vec3::new(c.x - o * nl.x, c.y - o * nl.y, c.z);
    let inner = Vec3::new(c.x + o * nl.x, c.y + o * nl.y, c.z);
    [c, outer, inner, t, nl]
}

/// [`inflate_point`] of every point of the closed curve `pts` (heights `z`, `n ≥ 1` points) into
/// `out` (`[center, outer, inner, tangent, normal]`, each `n` long). The first and last points,
/// whose neighbours wrap around, are written alone; the others in one loop over consecutive
/// slices (`pts[k]`, `pts[k + 1]`, `pts[k + 2]` for point `k + 1`), which compiles to 8-wide
/// vector arithmetic — per point, the same operations on the same values.
fn inflate_points(pts: &[Vec2], z: &[f32], o: f32, out: [&mut [Vec3]; 5]) {
    let n = pts.len();
    let c3 = |i: usize| Vec3::new(pts[i][0], pts[i][1], z[i]);
    let [center, outer, inner, tangent, normal] = out;
    let mut write = |i: usize, [c, ou, inn, t, nl]: [Vec3; 5]| {
        center[i] = c;
        outer[i] = ou;
        inner[i] = inn;
        tangent[i] = t;
        normal[i] = nl;
    };
    let last = n - 1;
    write(0, inflate_point(c3(last), c3(0), c3(1 % n), o));
    write(
        last,
        inflate_point(c3(last.saturating_sub(1)), c3(last), c3(0), o),
    );
    if n < 3 {
        return;
    }
    let m = n - 2;
    let (pa, pc, pb) = (&pts[..m], &pts[1..=m], &pts[2..]);
    let (za, zc, zb) = (&z[..m], &z[1..=m], &z[2..]);
    let (center, outer, inner) = (&mut center[1..=m], &mut outer[1..=m], &mut inner[1..=m]);
    let (tangent, normal) = (&mut tangent[1..=m], &mut normal[1..=m]);
    for k in 0..m {
        let a = Vec3::new(pa[k][0], pa[k][1], za[k]);
        let c = Vec3::new(pc[k][0], pc[k][1], zc[k]);
        let b = Vec3::new(pb[k][0], pb[k][1], zb[k]);
        let [c, ou, inn, t, nl] = inflate_point(a, c, b, o);
        center[k] = c;
        outer[k] = ou;
        inner[k] = inn;
        tangent[k] = t;
        normal[k] = nl;
    }
}

/// The arc lengths of the closed curve `center` (`n ≥ 1` points) into `arclen` (`n` long);
/// returns the closed length. The 3D segment lengths `|center[i + 1] − center[i]|` are computed
/// first, in one vectorizable pass, into `arclen`; the running sum then replaces them in index
/// order (the order fixes every partial sum to the bit).
fn arc_lengths(center: &[Vec3], arclen: &mut [f32]) -> f32 {
    let n = center.len();
    for (l, w) in arclen.iter_mut().zip(center.windows(2)) {
        *l = (w[1] - w[0]).length();
    }
    arclen[n - 1] = (center[0] - center[n - 1]).length();
    let mut s = 0.0f32;
    for a in arclen.iter_mut() {
        let l = *a;
        *a = s;
        s += l;
    }
    s
}

/// The deterministic fallback track: a circle of radius `max(0.8·scale, 1.25·min_turn_radius)`
/// at the preset's spacing (its count capped by `out.len()`); returns the count. It passes every
/// validity check for any preset the preset parser accepts.
pub fn fallback_circle(
    scale_m: f32,
    min_turn_radius_m: f32,
    spacing_m: f32,
    out: &mut [Vec2],
) -> usize {
    let r = (0.8 * scale_m).max(1.25 * min_turn_radius_m);
    let wanted = crate::math::round_small(crate::math::TAU * r / spacing_m);
    let n = if wanted >= out.len() as f32 {
        out.len()
    } else {
        (wanted as usize).max(super::resample::MIN_POINTS)
    };
    for (i, p) in out.iter_mut().enumerate().take(n) {
        let (s, c) = crate::math::sin_cos(crate::math::TAU * i as f32 / n as f32);
        *p = Vec2::new(r * c, r * s);
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The former single-pass inflation (previous, current and next point rolled along the
    /// loop, the arc length summed in the same loop).
    fn reference(pts: &[Vec2], z: &[f32], hw: f32) -> Vec<[f32; 16]> {
        let n = pts.len();
        let c3 = |i: usize| Vec3::new(pts[i][0], pts[i][1], z[i]);
        let o = orientation(pts) * hw;
        let mut s = 0.0f32;
        let mut rows = Vec::new();
        let (mut a, mut c) = (c3(n - 1), c3(0));
        for i in 0..n {
            let b = c3(if i + 1 < n { i + 1 } else { 0 });
            let t = b - a;
            let t = t / t.length();
            let hl = (t.x * t.x + t.y * t.y).sqrt();
            let nl = Vec3::new(-t.y / hl, t.x / hl, 0.0);
            let outer = Vec3::new(c.x - o * nl.x, c.y - o * nl.y, c.z);
            let inner = Vec3::new(c.x + o * nl.x, c.y + o * nl.y, c.z);
            let mut row = [0.0; 16];
            for (k, v) in [c, outer, inner, t, nl].iter().enumerate() {
                row[3 * k..3 * k + 3].copy_from_slice(&v.to_array());
            }
            row[15] = s;
            rows.push(row);
            s += (b - c).length();
            (a, c) = (c, b);
        }
        rows.push([s; 16]);
        rows
    }

    /// `inflate_lane` writes the reference's bits (1 and 2 points included: their neighbours wrap
    /// around from both ends), and NaN past the count.
    #[test]
    fn inflation_matches_the_single_pass_reference() {
        let n_max = 64;
        for n in [1usize, 2, 3, 4, 17, 64] {
            let pts: Vec<Vec2> = (0..n)
                .map(|i| {
                    let (s, c) = crate::math::sin_cos(crate::math::TAU * i as f32 / n as f32);
                    let r = 40.0 + 7.0 * ((i * 7919) % 13) as f32;
                    Vec2::new(r * c - 3.0, 0.5 * r * s + 11.0)
                })
                .collect();
            let z: Vec<f32> = (0..n).map(|i| 0.3 * ((i * 31) % 7) as f32).collect();
            let mut bufs = vec![vec![Vec3::ZERO; n_max]; 5];
            let mut arclen = vec![0.0f32; n_max];
            let mut length = 0.0f32;
            inflate_into(&pts, &z, 6.0, &mut bufs, &mut arclen, &mut length, n_max);
            let want = reference(&pts, &z, 6.0);
            for (i, row) in want[..n].iter().enumerate() {
                let mut got = [0.0; 16];
                for (k, b) in bufs.iter().enumerate() {
                    got[3 * k..3 * k + 3].copy_from_slice(&b[i].to_array());
                }
                got[15] = arclen[i];
                assert_eq!(
                    got.map(f32::to_bits),
                    row.map(f32::to_bits),
                    "n {n}, point {i}"
                );
            }
            assert_eq!(length.to_bits(), want[n][0].to_bits(), "n {n}");
            assert!(bufs.iter().all(|b| b[n..].iter().all(|v| v.is_nan())));
            assert!(arclen[n..].iter().all(|a| a.is_nan()));
        }
    }

    /// `inflate_lane` into the five point buffers `bufs` (center, outer, inner, tangent,
    /// normal), `arclen` and `length`.
    fn inflate_into(
        pts: &[Vec2],
        z: &[f32],
        half_width_m: f32,
        bufs: &mut [Vec<Vec3>],
        arclen: &mut [f32],
        length: &mut f32,
        stale: usize,
    ) {
        let [center, outer, inner, tangent, normal] = bufs else {
            unreachable!()
        };
        let out = InflateOut {
            center,
            outer,
            inner,
            tangent,
            normal,
            arclen,
            length,
            stale,
        };
        inflate_lane(pts, z, half_width_m, out);
    }

    /// A shorter track written over a longer one pads exactly the longer one's rows past its
    /// count; rows past the previous count are left as they are.
    #[test]
    fn a_shorter_track_pads_the_previous_rows() {
        let n_max = 32;
        let circle = |n: usize| -> Vec<Vec2> {
            (0..n)
                .map(|i| {
                    let (s, c) = crate::math::sin_cos(crate::math::TAU * i as f32 / n as f32);
                    Vec2::new(30.0 * c, 30.0 * s)
                })
                .collect()
        };
        let mut bufs = vec![vec![Vec3::NAN; n_max]; 5];
        let mut arclen = vec![f32::NAN; n_max];
        let mut length = 0.0f32;
        // 20 points over a fresh (all-NaN) slice, then 7 over them, then 12 over those.
        let mut stale = 0;
        for n in [20usize, 7, 12] {
            // A sentinel past both counts: the write must not touch it.
            bufs[0][n_max - 1] = Vec3::splat(5.0);
            let z = vec![0.0; n];
            inflate_into(
                &circle(n),
                &z,
                4.0,
                &mut bufs,
                &mut arclen,
                &mut length,
                stale,
            );
            assert_eq!(bufs[0][n_max - 1], Vec3::splat(5.0), "n {n}");
            bufs[0][n_max - 1] = Vec3::NAN;
            for b in &bufs {
                assert!(b[..n].iter().all(|v| v.is_finite()), "n {n}");
                assert!(b[n..].iter().all(|v| v.is_nan()), "n {n}");
            }
            assert!(arclen[..n].iter().all(|a| a.is_finite()));
            assert!(arclen[n..].iter().all(|a| a.is_nan()), "n {n}");
            stale = n;
        }
    }
}
