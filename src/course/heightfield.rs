//! Per-env road heightfields: a square grid of the road surface height, for physics engines that
//! take terrain as a heightfield (MuJoCo `hfield`, Isaac Lab height-field terrains).
//!
//! # Contract
//! For env `e` with a valid track, [`heightfield_lane`] writes an `R × R` grid of heights
//! (metres, world `z`) at **texel centres**: texel `(j, i)` (row `j`, column `i`, stored at
//! `j·R + i`) samples the point `(x_min + (i + ½)·d, y_min + (j + ½)·d)`, `d = (x_max − x_min)/R`.
//! Rows run along `+y`, columns along `+x`.
//!
//! The bounds `[x_min, y_min]`, `[x_max, y_max]` are a square around the plan-view bounding box
//! of the band (both borders and the centerline) grown by `margin_m` on every side: the square's
//! side is the larger extent plus `2·margin_m`, centred on the box, so texels are square.
//!
//! On the road (within the half width of the centerline) the height is that of the nearest
//! point of the closed centerline polyline, its `z` interpolated linearly along the nearest
//! segment. The borders sit at the height of their centerline point
//! ([`crate::track::inflate`]), so this is the road surface. Off the road the height is a blend
//! of the segments' nearest heights, weighted by `1/e² − 1/c²` with `e` the distance beyond the
//! road edge and a cutoff `c` that grows with the nearest segment's `e` ([`offroad_height`]):
//! next to the road the nearest segment dominates, so a texel continues the height of the
//! nearest road edge (no cliff at the edge), and between two parts of the track at different
//! heights the ground ramps smoothly from one to the other (no cliff where they are equidistant
//! either). The field is continuous.
//!
//! An env whose track failed validity (`valid = 0`, the fallback circle) or has fewer than two
//! points gets NaN heights and NaN bounds.
//!
//! # Cost
//! Exact nearest segments: the centerline's segments are grouped in at most 64 blocks with
//! plan-view boxes ([`Blocks`]); each texel tests the boxes and scans only the blocks nearer
//! than its neighbour's nearest segment, about 64 + a few blocks' distance tests instead of
//! `N`, with the same bits as the scan of every segment ([`nearest_height`]). Off-road texels
//! then blend over the blocks within the cutoff, which near the road is a few blocks and far
//! from it most of the track: at most `R²·N` distance tests per field.
//!
//! # Determinism
//! Lane code in the rule of [`crate::geom`]: IEEE component-wise operations only (no
//! transcendental function is needed). Ties between segments keep the first in index order.

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::exec::layout::soa_batch;
use crate::exec::Launch;
use crate::geom::{Vec2, Vec3};
use crate::track::TrackBatch;
use crate::{Error, Result};

/// The largest heightfield resolution accepted: 4096 texels per side (64 MiB per env).
pub const MAX_RESOLUTION: u32 = 4096;

/// How heightfields are baked.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct HeightfieldConfig {
    /// Texels per side `R` (2 ..= [`MAX_RESOLUTION`]).
    pub resolution: u32,
    /// Margin around the band's plan-view bounding box, metres (finite, ≥ 0).
    pub margin_m: f32,
}

impl HeightfieldConfig {
    /// `resolution` texels per side and the default margin of 5 m.
    pub fn new(resolution: u32) -> Self {
        Self {
            resolution,
            margin_m: 5.0,
        }
    }

    /// `Ok` if the resolution and margin are in range, else an [`Error::Invalid`] naming the
    /// value and what was expected.
    pub fn check(&self) -> Result<()> {
        if !(2..=MAX_RESOLUTION).contains(&self.resolution) {
            return Err(Error::Invalid(format!(
                "heightfield resolution {}: expected 2..={MAX_RESOLUTION} texels per side",
                self.resolution
            )));
        }
        if !(self.margin_m >= 0.0 && self.margin_m.is_finite()) {
            return Err(Error::Invalid(format!(
                "heightfield margin_m = {}: expected a finite number ≥ 0",
                self.margin_m
            )));
        }
        Ok(())
    }

    /// Texels per env, `R²`.
    pub fn texels(&self) -> usize {
        let r = self.resolution as usize;
        r * r
    }
}

soa_batch! {
    /// The heightfields of `n_envs` envs: `texels = R²` heights per env, row-major (row `j` along
    /// `+y`, column `i` along `+x`; see the [module](self) contract). A corpus stores `height` as
    /// `heightfield.npy`, `[N, R, R]` `<f4`.
    #[derive(Clone, Debug)]
    pub struct HeightfieldBatch {
        /// Number of envs.
        rows: n_envs,
        /// Heights per env, `R²`.
        capacity: texels,
        /// The global index of env 0.
        base: env_base,
        consts {
            /// Texels per side, `R`.
            resolution: u32,
        }
        per_point {
            /// Road surface height at each texel centre, metres (NaN for invalid envs).
            height: f32 = f32::NAN => npy("heightfield", F4),
        }
        per_env {}
    }
}

soa_batch! {
    /// The plan-view bounds of each env's heightfield: 2 corners per env, `[x_min, y_min]` then
    /// `[x_max, y_max]`, metres (NaN for invalid envs). A corpus stores them as
    /// `heightfield_bounds.npy`, `[N, 2, 2]` `<f4`.
    #[derive(Clone, Debug)]
    pub struct HeightfieldBounds {
        /// Number of envs.
        rows: n_envs,
        /// Corners per env (always [`CORNERS`]).
        capacity: corners,
        /// The global index of env 0.
        base: env_base,
        consts {}
        per_point {
            /// `[x_min, y_min]` then `[x_max, y_max]`.
            corner: Vec2 = Vec2::NAN => npy("heightfield_bounds", F4),
        }
        per_env {}
    }
}

/// Corners per env in [`HeightfieldBounds`]: the min and the max corner.
pub const CORNERS: usize = 2;

/// The heightfields of a batch of envs: the grids and their bounds.
#[derive(Clone, Debug)]
pub struct Heightfields {
    /// How they are baked.
    pub config: HeightfieldConfig,
    /// The heights.
    pub grid: HeightfieldBatch,
    /// The bounds.
    pub bounds: HeightfieldBounds,
}

impl Heightfields {
    /// NaN heightfields of `n_envs` envs from `env_base` (nothing baked yet); an
    /// [`Error::Invalid`] for a bad config or a batch that cannot be allocated.
    pub fn new(config: HeightfieldConfig, n_envs: usize, env_base: u64) -> Result<Self> {
        config.check()?;
        Ok(Self {
            config,
            grid: HeightfieldBatch::new(n_envs, config.texels(), env_base, config.resolution)?,
            bounds: HeightfieldBounds::new(n_envs, CORNERS, env_base)?,
        })
    }

    /// Bakes the envs with `mask[e] != 0` from `tracks` (env `e` of `tracks` is env `e` here);
    /// the others are not written. A `tracks` batch or `mask` whose env count differs from
    /// these heightfields' is an [`Error::Invalid`] naming both counts (nothing is written).
    pub fn bake(&mut self, tracks: &TrackBatch, mask: &[u8], launch: &Launch) -> Result<()> {
        check_envs("heightfields", self.grid.n_envs, tracks, mask)?;
        let (texels, config) = (self.grid.texels, self.config);
        let lanes = (
            self.grid.height.par_chunks_mut(texels),
            self.bounds.corner.par_chunks_mut(CORNERS),
            mask.par_iter(),
        );
        launch.lanes(lanes.into_par_iter(), |e, (height, corners, &m)| {
            if m == 0 {
                return;
            }
            let n = tracks.count[e] as usize;
            let start = e * tracks.n_max;
            let band = Band {
                center: &tracks.center[start..start + n],
                inner: &tracks.inner[start..start + n],
                outer: &tracks.outer[start..start + n],
            };
            heightfield_lane(&config, &band, tracks.valid[e] != 0, height, corners);
        });
        Ok(())
    }

    /// Moves both batches to envs `env_base ..`.
    pub fn set_env_base(&mut self, env_base: u64) {
        self.grid.env_base = env_base;
        self.bounds.env_base = env_base;
    }

    /// Envs `range` as new heightfields.
    pub fn slice(&self, range: std::ops::Range<usize>) -> Self {
        Self {
            config: self.config,
            grid: self.grid.slice(range.clone()),
            bounds: self.bounds.slice(range),
        }
    }

    /// Byte equality of both batches.
    pub fn bytes_eq(&self, other: &Self) -> bool {
        self.config == other.config
            && self.grid.bytes_eq(&other.grid)
            && self.bounds.bytes_eq(&other.bounds)
    }

    /// Env `e`'s heights (`R²`, row-major).
    pub fn heights(&self, e: usize) -> &[f32] {
        let t = self.grid.texels;
        &self.grid.height[e * t..(e + 1) * t]
    }

    /// Env `e`'s bounds: `[x_min, y_min]`, `[x_max, y_max]`.
    pub fn env_bounds(&self, e: usize) -> [Vec2; 2] {
        [
            self.bounds.corner[e * CORNERS],
            self.bounds.corner[e * CORNERS + 1],
        ]
    }

    /// The height of env `e`'s field at plan-view point `p`, bilinear between texel centres
    /// (clamped to the outermost centres); NaN for an invalid env or a non-finite `p`.
    pub fn sample(&self, e: usize, p: Vec2) -> f32 {
        let [lo, hi] = self.env_bounds(e);
        let r = self.config.resolution as usize;
        let d = (hi.x - lo.x) / r as f32;
        let fx = ((p.x - lo.x) / d - 0.5).clamp(0.0, (r - 1) as f32);
        let fy = ((p.y - lo.y) / d - 0.5).clamp(0.0, (r - 1) as f32);
        if !(fx.is_finite() && fy.is_finite()) {
            return f32::NAN;
        }
        let (i0, j0) = (fx as usize, fy as usize);
        let (i1, j1) = ((i0 + 1).min(r - 1), (j0 + 1).min(r - 1));
        let (tx, ty) = (fx - i0 as f32, fy - j0 as f32);
        let h = self.heights(e);
        let row = |j: usize| h[j * r + i0] * (1.0 - tx) + h[j * r + i1] * tx;
        row(j0) * (1.0 - ty) + row(j1) * ty
    }
}

/// `Ok` if `tracks` and `mask` have `n_envs` envs, else an [`Error::Invalid`] naming `what`
/// and the counts.
pub(super) fn check_envs(
    what: &str,
    n_envs: usize,
    tracks: &TrackBatch,
    mask: &[u8],
) -> Result<()> {
    if tracks.n_envs != n_envs || mask.len() != n_envs {
        return Err(Error::Invalid(format!(
            "{what} of {n_envs} envs: given tracks of {} envs and a mask of {} entries (expected \
             {n_envs} each)",
            tracks.n_envs,
            mask.len()
        )));
    }
    Ok(())
}

/// One env's band: index-aligned centerline and borders (`count` points each).
#[derive(Clone, Copy, Debug)]
pub struct Band<'a> {
    /// Centerline points.
    pub center: &'a [Vec3],
    /// Inner border points.
    pub inner: &'a [Vec3],
    /// Outer border points.
    pub outer: &'a [Vec3],
}

/// The square bounds of a band's heightfield: its plan-view bounding box grown by `margin_m`
/// and squared about its centre (see the [module](self) contract). NaN for an empty band.
pub fn band_bounds(band: &Band<'_>, margin_m: f32) -> [Vec2; 2] {
    if band.center.is_empty() {
        return [Vec2::NAN; 2];
    }
    let mut lo = Vec2::new(f32::INFINITY, f32::INFINITY);
    let mut hi = Vec2::new(f32::NEG_INFINITY, f32::NEG_INFINITY);
    for points in [band.center, band.inner, band.outer] {
        for p in points {
            lo = Vec2::new(lo.x.min(p.x), lo.y.min(p.y));
            hi = Vec2::new(hi.x.max(p.x), hi.y.max(p.y));
        }
    }
    let half = 0.5 * (hi.x - lo.x).max(hi.y - lo.y) + margin_m;
    let mid = Vec2::new(0.5 * (lo.x + hi.x), 0.5 * (lo.y + hi.y));
    [
        Vec2::new(mid.x - half, mid.y - half),
        Vec2::new(mid.x + half, mid.y + half),
    ]
}

/// The distance² from `p` to segment `a b` (plan view) and the parameter `t ∈ [0, 1]` of the
/// nearest point.
#[inline]
fn segment_d2(a: Vec3, b: Vec3, p: Vec2) -> (f32, f32) {
    let (dx, dy) = (b.x - a.x, b.y - a.y);
    let (px, py) = (p.x - a.x, p.y - a.y);
    let len2 = dx * dx + dy * dy;
    let t = if len2 > 0.0 {
        ((px * dx + py * dy) / len2).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let (ex, ey) = (px - t * dx, py - t * dy);
    (ex * ex + ey * ey, t)
}

/// The height of the nearest point of the closed polyline `center` to `p` (z linear along the
/// nearest segment; the first segment in index order wins a tie), by a scan of every segment.
/// The reference [`Blocks::nearest`] equals bit for bit. `center` has at least 2 points.
pub fn nearest_height(center: &[Vec3], p: Vec2) -> f32 {
    let n = center.len();
    let mut best = f32::INFINITY;
    let mut height = f32::NAN;
    for i in 0..n {
        let (a, b) = (center[i], center[if i + 1 == n { 0 } else { i + 1 }]);
        let (d2, t) = segment_d2(a, b, p);
        if d2 < best {
            best = d2;
            height = a.z + t * (b.z - a.z);
        }
    }
    height
}

/// The most segment blocks of [`Blocks`].
const MAX_BLOCKS: usize = 64;

/// The segments of a closed polyline in at most 64 consecutive blocks, each with its plan-view
/// bounding box: a nearest-segment query skips a block whose box is farther than a known bound.
/// Fixed size (no allocation), so it lives on a lane's stack.
#[derive(Clone, Debug)]
pub struct Blocks {
    /// Segments per block (the last may hold fewer).
    len: usize,
    /// Blocks in use.
    count: usize,
    /// `[x_min, y_min, x_max, y_max]` of each block.
    boxes: [[f32; 4]; MAX_BLOCKS],
}

impl Blocks {
    /// The blocks of the closed polyline `center` (at least 2 points).
    pub fn new(center: &[Vec3]) -> Self {
        let n = center.len();
        let len = n.div_ceil(MAX_BLOCKS);
        let count = n.div_ceil(len);
        let mut boxes = [[
            f32::INFINITY,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NEG_INFINITY,
        ]; MAX_BLOCKS];
        for (k, bx) in boxes.iter_mut().enumerate().take(count) {
            for i in k * len..((k + 1) * len).min(n) {
                for q in [center[i], center[if i + 1 == n { 0 } else { i + 1 }]] {
                    *bx = [
                        bx[0].min(q.x),
                        bx[1].min(q.y),
                        bx[2].max(q.x),
                        bx[3].max(q.y),
                    ];
                }
            }
        }
        Self { len, count, boxes }
    }

    /// [`nearest_height`] of `p` (the same bits), and the nearest segment. `hint` is a segment
    /// whose distance bounds the search (the previous texel's answer): blocks whose box is
    /// farther than the best distance so far, or than the hint's, are skipped; since the
    /// nearest segments are never farther than either, and the scan keeps index order with a
    /// strict `<`, the first nearest segment still wins.
    pub fn nearest(&self, center: &[Vec3], p: Vec2, hint: usize) -> (f32, usize, f32) {
        let n = center.len();
        let next = |i: usize| if i + 1 == n { 0 } else { i + 1 };
        let (mut bound, _) = segment_d2(center[hint], center[next(hint)], p);
        let mut best = f32::INFINITY;
        let (mut height, mut seg) = (f32::NAN, hint);
        for k in 0..self.count {
            let [x0, y0, x1, y1] = self.boxes[k];
            let dx = (x0 - p.x).max(0.0).max(p.x - x1);
            let dy = (y0 - p.y).max(0.0).max(p.y - y1);
            if dx * dx + dy * dy > bound {
                continue;
            }
            for i in k * self.len..((k + 1) * self.len).min(n) {
                let (a, b) = (center[i], center[next(i)]);
                let (d2, t) = segment_d2(a, b, p);
                if d2 < best {
                    best = d2;
                    bound = bound.min(d2);
                    height = a.z + t * (b.z - a.z);
                    seg = i;
                }
            }
        }
        (height, seg, best)
    }
}

/// Off-road height at `p`, whose nearest segment lies `nearest_m` away (beyond the road edge,
/// `nearest_m > half_width_m`): a blend of the segments' nearest heights, segment `i` weighted
/// by `w = 1/e² − 1/c²` while positive, with `e` its distance beyond the road edge
/// (`distance − half_width_m`, at least 1 mm) and the cutoff `c = 2·e_min + 4·half_width_m`
/// (`e_min` the nearest segment's `e`). Near the road the nearest segment's weight dominates, so
/// the field continues the road edge; between two parts of the track, which are both within the
/// cutoff where they are about equidistant, it ramps smoothly from one to the other. `e_min` is
/// continuous in `p`, so the cutoff and every weight are, and so is the field. Segments past the
/// cutoff weigh exactly 0: `blocks` skips the blocks whose box is past it. Index order.
pub fn offroad_height(
    blocks: &Blocks,
    center: &[Vec3],
    p: Vec2,
    half_width_m: f32,
    nearest_m: f32,
) -> f32 {
    let n = center.len();
    let e_min = (nearest_m - half_width_m).max(1e-3);
    let cutoff = 2.0 * e_min + 4.0 * half_width_m;
    let floor = 1.0 / (cutoff * cutoff);
    let reach = cutoff + half_width_m;
    let (mut sum_w, mut sum_wz) = (0.0f32, 0.0f32);
    for k in 0..blocks.count {
        let [x0, y0, x1, y1] = blocks.boxes[k];
        let dx = (x0 - p.x).max(0.0).max(p.x - x1);
        let dy = (y0 - p.y).max(0.0).max(p.y - y1);
        if dx * dx + dy * dy >= reach * reach {
            continue;
        }
        for i in k * blocks.len..((k + 1) * blocks.len).min(n) {
            let (a, b) = (center[i], center[if i + 1 == n { 0 } else { i + 1 }]);
            let (d2, t) = segment_d2(a, b, p);
            let e = (d2.sqrt() - half_width_m).max(1e-3);
            let w = 1.0 / (e * e) - floor;
            if w > 0.0 {
                sum_w += w;
                sum_wz += w * (a.z + t * (b.z - a.z));
            }
        }
    }
    sum_wz / sum_w
}

/// Bakes one env: `height` (`R²`, row-major) and `corners` (2) from its band; NaN for an
/// invalid env (`valid` false) or fewer than 2 points.
pub fn heightfield_lane(
    config: &HeightfieldConfig,
    band: &Band<'_>,
    valid: bool,
    height: &mut [f32],
    corners: &mut [Vec2],
) {
    if !valid || band.center.len() < 2 {
        height.fill(f32::NAN);
        corners.fill(Vec2::NAN);
        return;
    }
    let [lo, hi] = band_bounds(band, config.margin_m);
    corners[0] = lo;
    corners[1] = hi;
    let r = config.resolution as usize;
    let d = (hi.x - lo.x) / r as f32;
    let blocks = Blocks::new(band.center);
    let (c0, i0) = (band.center[0], band.inner[0]);
    let half_width_m = ((i0.x - c0.x) * (i0.x - c0.x) + (i0.y - c0.y) * (i0.y - c0.y)).sqrt();
    let hw2 = half_width_m * half_width_m;
    let mut hint = 0;
    for (j, row) in height.chunks_exact_mut(r).enumerate() {
        let y = lo.y + (j as f32 + 0.5) * d;
        // Rows run back and forth so that each texel's hint is its neighbour's answer.
        let forward = j % 2 == 0;
        for k in 0..r {
            let i = if forward { k } else { r - 1 - k };
            let x = lo.x + (i as f32 + 0.5) * d;
            let p = Vec2::new(x, y);
            let (h, seg, d2) = blocks.nearest(band.center, p, hint);
            row[i] = if d2 <= hw2 {
                h
            } else {
                offroad_height(&blocks, band.center, p, half_width_m, d2.sqrt())
            };
            hint = seg;
        }
    }
}
