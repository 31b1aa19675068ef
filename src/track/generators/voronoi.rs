//! The Voronoi generator: the outline of a connected union of Voronoi cells.
//!
//! 1. **Sites.** `n_sites` points uniform in the disc of radius `radius_m` (the angle's sine and
//!    cosine from an eighth of the circle's middle and a short polynomial, see `draw_sites`).
//! 2. **Cells.** The Voronoi cell of a site is computed exactly (in `f32`, no raster) by clipping
//!    the regular 16-gon circumscribed about the disc with the bisector half-plane of every other
//!    site, near sites first (Sutherland–Hodgman on a convex polygon). Each cell edge keeps the
//!    label of the site across it, or [`OUTSIDE`] on the 16-gon. A cell has at most
//!    `16 + n_sites` vertices (each clip adds at most one). Cells are computed only for the sites
//!    the region takes, each once. Sites too far to cut the polygon so far are skipped by a
//!    distance bound with a margin far above rounding, and a clip replaces the run of vertices
//!    outside in place: the cells are bit-identical to clipping by every site in that order (see
//!    `Voronoi::cell` and `clip`).
//! 3. **Region.** Starting from the site nearest the centre, `n_cells − 1` times one cell
//!    adjacent to the region is added, chosen uniformly (in site order) by the lane's stream.
//!    Two cells are adjacent when they share an edge at least `radius_m / 8` long, so the region
//!    never grows through a neck narrower than that (the raster version cut such necks with a
//!    morphological opening of about that scale).
//! 4. **Outline.** The region's outer boundary is walked counter-clockwise (interior on the
//!    left) from the lowest boundary vertex: along a selected cell's edges while the cell across
//!    is not selected; at an edge shared with a selected cell the walk crosses into that cell and
//!    continues after its matching edge. Holes (unselected cells enclosed by the region) are
//!    thereby filled. The boundary polygon is resampled at `⌈length / step⌉` points evenly spaced
//!    along it, with `step` at most `2 · radius_m / grid` and 5 m (the pipeline's usual
//!    spacing: the smoothing's cost is per point; `grid` keeps only this meaning).
//! 5. **Smoothing.** The turning angles between consecutive chords are smoothed by three passes
//!    of a cyclic box filter (a discrete Gaussian of standard deviation ≈ `radius_m / 8` along
//!    the outline) and the curve is rebuilt from them with the mean chord length, starting at the
//!    first point along the first chord; the gap the rebuilt curve leaves at its end is removed
//!    linearly along it. A corner of turning angle θ becomes an arc-like turn of radius about
//!    2.5 σ / θ (≥ 15 m for θ ≤ π at the default scale) while straight edges stay straight and
//!    the length is kept — smoothing the points instead would pinch sharp corners (the speed
//!    along the curve falls as cos(θ/2) at a corner, so its radius falls with cos²(θ/2)). The
//!    curve is then centred on its point mean and made counter-clockwise.
//!
//! The scale `radius_m / 8` (15 m at the default 120 m) assumes the preset's usual ratio of
//! scale to minimum turn radius (10:1). An attempt writes no points (so the pipeline retries on a
//! fresh stream) when the walk finds a shared edge in one cell but not in the other (possible
//! only for edges a few ulps long), when a clipped polygon would exceed its capacity, or when
//! the boundary has more than [`Stage::max_points`] vertices or the resampled outline more than
//! [`Stage::max_points`] points (`8 · grid · ⌈pixel / 5 m⌉` with `pixel = 2 · radius_m / grid`,
//! an outline of `16 · radius_m`). Every loop is bounded by the site count, the cell capacity or
//! [`Stage::max_points`].

use bytemuck::{Pod, Zeroable};

use super::{Stage, StageKernel};
use crate::exec::plan::params_bytes;
use crate::geom::Vec2;
use crate::math::{
    atan2, atan_poly, sin_cos, ATAN_HALF, ATAN_HALF_LO, FRAC_PI_2_LO, FRAC_PI_4_LO, PI_LO,
};
use crate::rng::LaneRng;
use crate::track::geometry::{next_index, signed_area2};

/// Voronoi generator parameters.
#[derive(Clone, Debug)]
pub struct Voronoi {
    /// Random sites.
    pub n_sites: usize,
    /// Cells merged into the region.
    pub n_cells: usize,
    /// Outline resolution: the boundary is resampled at steps of at most `2 · radius_m / grid`
    /// and 5 m.
    pub grid: usize,
    /// Radius of the disc the sites are drawn in, metres.
    pub radius_m: f32,
}

/// The Voronoi fields of `tg_voronoi_params` (`kernels/track/voronoi.cuh`).
#[derive(Clone, Copy, Pod, Zeroable)]
#[repr(C)]
struct VoronoiParams {
    n_sites: u32,
    n_cells: u32,
    grid: u32,
    radius_m: f32,
}

/// Largest spacing between consecutive output points, metres.
const MAX_STEP_M: f32 = 5.0;
/// Standard deviation of the outline smoothing, as a fraction of `radius_m`.
const SMOOTH_FRAC: f32 = 1.0 / 8.0;
/// Shortest shared edge through which the region grows, as a fraction of `radius_m`.
const NECK_FRAC: f32 = 1.0 / 8.0;
/// Boundary edges shorter than this (squared, m²) are left out of the boundary polygon.
const TINY_EDGE2: f32 = 1.0e-6;
/// Margin of the test that skips a site too far to clip a cell, as a fraction of the clip
/// polygon's circumradius (see [`Voronoi::cell`]).
const SKIP_SLACK: f32 = 1.0e-3;
/// Sites expected within the first clipping pass's distance (see [`Voronoi::cell`]).
const NEAR_AREAS: f32 = 6.0;
/// `2⁻¹²`: below this ratio of cross to dot product a turning angle is their quotient (see
/// [`turn_angle`]).
const STRAIGHT_RATIO: f32 = 1.0 / 4096.0;
/// Largest smoothed turn, radians, whose sine and cosine come from Taylor polynomials (see
/// `small_sin_cos`).
const SMALL_TURN: f32 = 0.25;
/// A value no cosine takes: it marks a turn left for [`sin_cos`] in `smooth_turning`.
const NOT_A_COSINE: f32 = 2.0;

/// Sites a cell lists as one bit mask for each clipping pass (with more, beyond the preset's
/// 64, each pass scans the sites one by one; see [`Voronoi::cell`]).
const FAR_CAP: usize = 64;
/// Sides of the clip polygon, a regular polygon circumscribed about the sites' disc.
const CLIP_SIDES: usize = 16;
/// `1 / cos(π / 16)`: the clip polygon's circumradius over the disc's radius.
const CLIP_SEC: f32 = 1.019_591_2;
/// `cos(2πk / 16)`: the clip polygon's vertex directions (with [`CLIP_SIN`]).
const CLIP_COS: [f32; CLIP_SIDES] = [
    1.0,
    0.923_879_5,
    0.707_106_77,
    0.382_683_43,
    0.0,
    -0.382_683_43,
    -0.707_106_77,
    -0.923_879_5,
    -1.0,
    -0.923_879_5,
    -0.707_106_77,
    -0.382_683_43,
    0.0,
    0.382_683_43,
    0.707_106_77,
    0.923_879_5,
];
/// `sin θ = cos(θ − π/2)`: the cosines four vertices back.
const CLIP_SIN: [f32; CLIP_SIDES] = {
    let mut t = [0.0; CLIP_SIDES];
    let mut k = 0;
    while k < CLIP_SIDES {
        t[k] = CLIP_COS[(k + CLIP_SIDES - CLIP_SIDES / 4) % CLIP_SIDES];
        k += 1;
    }
    t
};

/// The label of a cell edge on the clip polygon, and of a site without a slot.
const OUTSIDE: u32 = u32::MAX;
/// Site states during the region's growth.
const FREE: u32 = 0;
const CANDIDATE: u32 = 1;
const SELECTED: u32 = 2;

/// One convex cell polygon's storage (its vertex count is kept beside it): edge `k` runs from
/// vertex `k` to `k + 1` (cyclic) and is labelled with the site across it. The storage holds
/// the vertex count rounded up to a multiple of 8 (see [`Voronoi::stride`]); a polygon has at
/// most `cap` vertices.
struct Cell<'a> {
    verts: &'a mut [Vec2],
    labels: &'a mut [u32],
    cap: usize,
}

impl Voronoi {
    /// `2 · radius_m / grid`, metres (the raster version's pixel): the outline resolution.
    fn pixel_m(&self) -> f32 {
        2.0 * self.radius_m / self.grid as f32
    }

    /// Steps per pixel so that a step is at most [`MAX_STEP_M`].
    fn substeps(&self) -> usize {
        ((self.pixel_m() / MAX_STEP_M).ceil() as usize).max(1)
    }

    /// The longest step between output points, metres.
    fn step_m(&self) -> f32 {
        self.pixel_m() / self.substeps() as f32
    }

    /// Half-width of the box filter, points: three passes of width `2m + 1` have variance
    /// `m (m + 1)` points², matched to `(σ / step)²`.
    fn box_half(&self) -> usize {
        let sigma = SMOOTH_FRAC * self.radius_m / self.step_m();
        (sigma as usize).max(1)
    }

    /// Squared distance within which a site clips in the first pass: [`NEAR_AREAS`] times the
    /// disc's area per site, over π (so about `NEAR_AREAS` sites fall within it).
    fn near_sq(&self) -> f32 {
        NEAR_AREAS * self.radius_m * self.radius_m / self.n_sites as f32
    }

    /// Vertex capacity of one cell: the clip polygon's sides plus one per other site.
    fn max_verts(&self) -> usize {
        CLIP_SIDES + self.n_sites
    }

    /// Storage of one cell, vertices: [`Self::max_verts`] rounded up to a multiple of 8, so that
    /// the passes over a polygon's vertices run in whole blocks of 8 (see [`outside_mask`]).
    fn stride(&self) -> usize {
        self.max_verts().div_ceil(8) * 8
    }

    /// Cells the region can hold (one polygon slot each).
    fn slots(&self) -> usize {
        self.n_cells.min(self.n_sites).max(1)
    }
}

impl Stage for Voronoi {
    fn name(&self) -> &str {
        "voronoi"
    }
    fn max_points(&self) -> usize {
        8 * self.grid * self.substeps()
    }
    fn scratch_len(&self) -> usize {
        // sites, cell vertices (a clipping temporary, then one polygon per slot), the boundary
        // polygon (later the turning angles and their temporary)
        2 * self.n_sites + 2 * (self.slots() + 1) * self.stride() + 2 * self.max_points()
    }
    fn scratch_u32_len(&self) -> usize {
        // site states, site slots, slot sites, slot vertex counts, cell edge labels (laid out
        // as the vertices)
        2 * self.n_sites + 2 * self.slots() + (self.slots() + 1) * self.stride()
    }
    fn run_lane(
        &self,
        rng: &mut LaneRng,
        scratch: &mut [f32],
        scratch_u32: &mut [u32],
        out: &mut [Vec2],
    ) -> usize {
        let n = self.n_sites;
        if n == 0 || self.grid < 4 {
            return 0;
        }
        let slots = self.slots();
        let mv = self.stride();
        let (sites, rest) = scratch.split_at_mut(2 * n);
        let (verts, rest) = rest.split_at_mut(2 * (slots + 1) * mv);
        let words = &mut rest[..2 * self.max_points()];
        let sites: &mut [Vec2] = bytemuck::cast_slice_mut(sites);
        let verts: &mut [Vec2] = bytemuck::cast_slice_mut(verts);
        let (state, rest) = scratch_u32.split_at_mut(n);
        let (slot_of, rest) = rest.split_at_mut(n);
        let (slot_site, rest) = rest.split_at_mut(slots);
        let (counts, rest) = rest.split_at_mut(slots);
        let labels = &mut rest[..(slots + 1) * mv];

        draw_sites(rng, self.radius_m, sites);
        let seed = nearest_to_origin(sites);
        let mut region = Region {
            state,
            slot_of,
            slot_site,
            counts,
            verts,
            labels,
        };
        let Some(k) = self.grow_region(rng, sites, seed, &mut region) else {
            return 0;
        };
        // The boundary polygon, then (once resampled) the turning angles and their temporary.
        let poly: &mut [Vec2] = bytemuck::cast_slice_mut(words);
        let n_poly = self.trace(&region, k, poly);
        let m = self.resample(&poly[..n_poly], out);
        if m == 0 {
            return 0;
        }
        let (turn, tmp) = words.split_at_mut(self.max_points());
        let half = self.box_half().min((m - 1) / 2);
        smooth_turning(&mut out[..m], half, &mut turn[..m], &mut tmp[..m]);
        finish(&mut out[..m]);
        m
    }
    /// `tg_track_voronoi`; `None` when a count or a scratch length exceeds the kernel's 32-bit
    /// indices.
    fn kernel(&self) -> Option<StageKernel> {
        for len in [
            self.scratch_len(),
            self.scratch_u32_len(),
            self.max_points(),
        ] {
            u32::try_from(len).ok()?;
        }
        Some(StageKernel {
            name: "tg_track_voronoi",
            window: None,
            params: params_bytes(&VoronoiParams {
                n_sites: u32::try_from(self.n_sites).ok()?,
                n_cells: u32::try_from(self.n_cells).ok()?,
                grid: u32::try_from(self.grid).ok()?,
                radius_m: self.radius_m,
            }),
        })
    }
}

/// The growing region's state in the lane's scratch.
struct Region<'a> {
    /// Per site: [`FREE`], [`CANDIDATE`] or [`SELECTED`].
    state: &'a mut [u32],
    /// Per site: its polygon slot, or [`OUTSIDE`] when not selected.
    slot_of: &'a mut [u32],
    /// Per slot: its site.
    slot_site: &'a mut [u32],
    /// Per slot: its polygon's vertex count.
    counts: &'a mut [u32],
    /// `slots + 1` polygons of `stride` vertices (the first is the clipping temporary).
    verts: &'a mut [Vec2],
    /// Their edge labels, laid out alike.
    labels: &'a mut [u32],
}

impl Voronoi {
    /// Grows the region from `seed`: each step adds one candidate (an unselected site sharing
    /// an edge of at least `NECK_FRAC · radius_m` with a selected cell) chosen uniformly in site
    /// order; stops early when none is left. Returns the number of selected cells, or `None` when
    /// a cell polygon overflowed its capacity.
    fn grow_region(
        &self,
        rng: &mut LaneRng,
        sites: &[Vec2],
        seed: usize,
        r: &mut Region,
    ) -> Option<usize> {
        r.state.fill(FREE);
        r.slot_of.fill(OUTSIDE);
        self.select(sites, seed, 0, r)?;
        let mut k = 1;
        while k < self.slots() {
            let count = r.state.iter().filter(|&&s| s == CANDIDATE).count();
            if count == 0 {
                break;
            }
            let pick = rng.below(count as u32) as usize;
            let c = r
                .state
                .iter()
                .enumerate()
                .filter(|&(_, &s)| s == CANDIDATE)
                .nth(pick)
                .map_or(0, |(c, _)| c);
            self.select(sites, c, k, r)?;
            k += 1;
        }
        Some(k)
    }

    /// Selects site `s` into polygon slot `slot`: computes its cell there and marks the free
    /// sites across its long edges as candidates.
    fn select(&self, sites: &[Vec2], s: usize, slot: usize, r: &mut Region) -> Option<()> {
        let mv = self.stride();
        let cap = self.max_verts();
        let (tmp_verts, verts) = r.verts.split_at_mut(mv);
        let (tmp_labels, labels) = r.labels.split_at_mut(mv);
        let mut tmp = Cell {
            verts: tmp_verts,
            labels: tmp_labels,
            cap,
        };
        let mut cell = Cell {
            verts: &mut verts[slot * mv..(slot + 1) * mv],
            labels: &mut labels[slot * mv..(slot + 1) * mv],
            cap,
        };
        let count = self.cell(sites, s, &mut cell, &mut tmp)?;
        r.state[s] = SELECTED;
        r.slot_of[s] = slot as u32;
        r.slot_site[slot] = s as u32;
        r.counts[slot] = count as u32;
        let neck = NECK_FRAC * self.radius_m;
        let neck2 = neck * neck;
        // Without data-dependent branches: an edge's site (any site for the clip polygon's
        // edges, which then keeps its state) becomes a candidate when it is free and the edge
        // long enough.
        let last = r.state.len() - 1;
        for e in 0..count {
            let l = cell.labels[e];
            let site = (l as usize).min(last);
            let a = cell.verts[e];
            let b = cell.verts[next_index(e, count)];
            let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
            let state = r.state[site];
            let take = (l != OUTSIDE) & (state == FREE) & (dx * dx + dy * dy >= neck2);
            r.state[site] = if take { CANDIDATE } else { state };
        }
        Some(())
    }

    /// Writes the Voronoi cell of site `s` (clipped to the 16-gon) into `cell`; returns its
    /// vertex count, or `None` when a polygon would exceed [`Self::max_verts`].
    ///
    /// The other sites clip in two passes, each in site order: first the near ones (squared
    /// distance at most [`NEAR_AREAS`] times the disc's area per site, about the six nearest),
    /// which shape the cell and shrink the polygon early, then the others. A site farther from
    /// `s` than `2 R + δ` (`R` the largest distance from `s` to a vertex of the polygon so far,
    /// `δ = SKIP_SLACK ·` the clip polygon's circumradius) is skipped: its bisector half-plane
    /// holds the whole polygon, and `δ` is far above the rounding of the clip's side test
    /// (below `1e-6` of the circumradius), so the test in `f32` would find every vertex inside
    /// too and the cell is exactly what clipping by every site in this order gives. `R` is
    /// recomputed only when a site is nearer than a bound left over from a larger polygon (one a
    /// clip has since shrunk). The near sites clip without the test (nearly all of them cut
    /// the polygon; a clip that finds every vertex inside leaves the polygon as it is, so the
    /// test only saves work). Each pass first lists its sites without branches from the squared
    /// distances computed once (the far pass only those within `2 R + δ` of the polygon the
    /// near pass left, `R` computed then), so that only the sites that may clip are visited.
    fn cell(&self, sites: &[Vec2], s: usize, cell: &mut Cell, tmp: &mut Cell) -> Option<usize> {
        let rc = self.radius_m * CLIP_SEC;
        for k in 0..CLIP_SIDES {
            cell.verts[k] = Vec2::new(rc * CLIP_COS[k], rc * CLIP_SIN[k]);
            cell.labels[k] = OUTSIDE;
        }
        let p = sites[s];
        let near2 = self.near_sq();
        let mut clipper = Clipper {
            count: CLIP_SIDES,
            p,
            slack: SKIP_SLACK * rc,
            reach2: f32::INFINITY,
            fresh: false,
        };
        let d2 = |q: Vec2| {
            let (ax, ay) = (q[0] - p[0], q[1] - p[1]);
            ax * ax + ay * ay
        };
        if sites.len() > FAR_CAP {
            // The near sites (`d2 ≤ near2`), then the far ones, each pass in site order.
            for far in [false, true] {
                for (j, &q) in sites.iter().enumerate() {
                    let d = d2(q);
                    if j == s {
                        continue;
                    }
                    if far && d > near2 {
                        clipper.visit(cell, tmp, j, q, d)?;
                    } else if !far && d <= near2 {
                        clipper.clip(cell, tmp, j, q)?;
                    }
                }
            }
            return Some(clipper.count);
        }
        // Every squared distance once (one vectorized pass); sites are finite, so each is a
        // number.
        let mut dist = [0.0f32; FAR_CAP];
        for (d, &q) in dist.iter_mut().zip(sites) {
            *d = d2(q);
        }
        let dist = &dist[..sites.len()];
        // The near sites, listed as one bit mask (without branches) and clipped by without the
        // skip test: nearly all of them cut the polygon, and a clip that finds every vertex
        // inside leaves it as it is, which is what skipping does (the test only saves work).
        let mut near = site_mask(dist, s, f32::NEG_INFINITY, near2);
        while near != 0 {
            let j = near.trailing_zeros() as usize;
            near &= near - 1;
            clipper.clip(cell, tmp, j, sites[j])?;
        }
        // The far sites within reach of the polygon the near pass left, listed alike (a far
        // site beyond it is beyond the reach of every later, smaller polygon too: the clipper
        // would skip it), then visited with the skip test.
        let mut far = site_mask(dist, s, near2, clipper.fresh_reach2(cell));
        while far != 0 {
            let j = far.trailing_zeros() as usize;
            far &= far - 1;
            clipper.visit(cell, tmp, j, sites[j], dist[j])?;
        }
        Some(clipper.count)
    }

    /// Walks the region's outer boundary (see the module docs) from the lowest start vertex of
    /// a boundary edge (then the leftmost, then the first in slot and edge order), writing the
    /// start vertex of each boundary edge at least [`TINY_EDGE2`] long into `poly`. Returns the
    /// number of vertices, or 0 when the walk fails (a shared edge missing from one of its two
    /// cells) or the outline has more than `poly.len()` vertices.
    fn trace(&self, r: &Region, k: usize, poly: &mut [Vec2]) -> usize {
        let mv = self.stride();
        let vert = |slot: usize, e: usize| r.verts[(slot + 1) * mv + e];
        let label = |slot: usize, e: usize| r.labels[(slot + 1) * mv + e];
        let count = |slot: usize| r.counts[slot] as usize;
        let boundary = |l: u32| l == OUTSIDE || r.state[l as usize] != SELECTED;
        // The start without data-dependent branches (selects, not jumps); `found` says whether
        // a boundary edge was seen.
        let last = r.state.len() - 1;
        let (mut found, mut start, mut low) = (false, (0, 0), Vec2::ZERO);
        let mut edges = 0;
        for slot in 0..k {
            edges += count(slot);
            for e in 0..count(slot) {
                let v = vert(slot, e);
                let l = label(slot, e);
                let on_boundary = (l == OUTSIDE) | (r.state[(l as usize).min(last)] != SELECTED);
                let lower = (v[1] < low[1]) | ((v[1] == low[1]) & (v[0] < low[0]));
                let take = on_boundary & (!found | lower);
                start = if take { (slot, e) } else { start };
                low = if take { v } else { low };
                found |= take;
            }
        }
        if !found {
            return 0;
        }
        let (mut a, mut e) = start;
        let mut written = 0;
        for _ in 0..edges {
            let p = vert(a, e);
            let q = vert(a, next_index(e, count(a)));
            let (dx, dy) = (q[0] - p[0], q[1] - p[1]);
            if dx * dx + dy * dy >= TINY_EDGE2 {
                if written == poly.len() {
                    return 0;
                }
                poly[written] = p;
                written += 1;
            }
            // The next boundary edge around the end vertex: cross into selected cells.
            e = next_index(e, count(a));
            let mut hops = 0;
            while !boundary(label(a, e)) {
                let b = r.slot_of[label(a, e) as usize] as usize;
                let site = r.slot_site[a];
                let Some(f) = find_label(&r.labels[(b + 1) * mv..(b + 2) * mv], count(b), site)
                else {
                    return 0;
                };
                a = b;
                e = next_index(f, count(b));
                hops += 1;
                if hops > k {
                    return 0;
                }
            }
            if (a, e) == start {
                return written;
            }
        }
        0
    }

    /// Resamples the closed polygon `poly` at `m = ⌈length / step⌉` points evenly spaced along
    /// it into `out`; returns `m`, or 0 when `m` is below 3 or above `out.len()`.
    fn resample(&self, poly: &[Vec2], out: &mut [Vec2]) -> usize {
        let n = poly.len();
        if n < 3 {
            return 0;
        }
        let edge = |i: usize| {
            let (p, q) = (poly[i], poly[next_index(i, n)]);
            (p, q[0] - p[0], q[1] - p[1])
        };
        let mut length = 0.0f32;
        for i in 0..n {
            let (_, dx, dy) = edge(i);
            length += (dx * dx + dy * dy).sqrt();
        }
        let m = (length / self.step_m()).ceil() as usize;
        if m < 3 || m > out.len().min(self.max_points()) {
            return 0;
        }
        let h = length / m as f32;
        // Edge `i` spans arc length [s0, s0 + len).
        let (mut i, mut s0) = (0, 0.0f32);
        let (_, mut dx, mut dy) = edge(0);
        let mut len = (dx * dx + dy * dy).sqrt();
        for (j, o) in out[..m].iter_mut().enumerate() {
            let s = j as f32 * h;
            while s >= s0 + len && i + 1 < n {
                s0 += len;
                i += 1;
                (_, dx, dy) = edge(i);
                len = (dx * dx + dy * dy).sqrt();
            }
            let f = ((s - s0) / len).min(1.0);
            let p = poly[i];
            *o = Vec2::new(p[0] + dx * f, p[1] + dy * f);
        }
        m
    }
}

/// Smooths the closed curve `pts` (`m ≥ 3` evenly spaced points) through its turning: the
/// turning angles between consecutive chords are filtered by three box passes of half-width
/// `half` (through `turn` and `tmp`, `m` words each), the curve is rebuilt from the first point
/// and the first chord's heading with the mean chord length, and the closing gap is removed
/// linearly in the point index.
///
/// The per-point work that does not depend on the point before is done in passes over whole
/// arrays (which vectorize: [`turn_angle`] has no branches), with the rare smoothed turn too
/// large for the polynomials in [`small_sin_cos`] patched afterwards: every value is computed by
/// the same operations as point by point, so the curve is bit-identical to the plain loop's.
fn smooth_turning(pts: &mut [Vec2], half: usize, turn: &mut [f32], tmp: &mut [f32]) {
    let m = pts.len();
    // The turn at each point into `turn` and the length of the chord after it into `tmp`
    // (branch-free, see [`turn_angle`]: one vectorized pass).
    (turn[0], tmp[0]) = turn_and_chord(pts[m - 1], pts[0], pts[1]);
    for ((t, l), ((&a, &p), &b)) in turn[1..m - 1]
        .iter_mut()
        .zip(&mut tmp[1..m - 1])
        .zip(pts[..m - 2].iter().zip(&pts[1..m - 1]).zip(&pts[2..]))
    {
        (*t, *l) = turn_and_chord(a, p, b);
    }
    (turn[m - 1], tmp[m - 1]) = turn_and_chord(pts[m - 2], pts[m - 1], pts[0]);
    let mut length = 0.0f32;
    for &l in tmp.iter() {
        length += l;
    }
    let h = length / m as f32;
    let start = pts[0];
    let heading0 = atan2(pts[1][1] - start[1], pts[1][0] - start[0]);
    box_filter_scalar(&turn[..m], half, &mut tmp[..m]);
    box_filter_scalar(&tmp[..m], half, &mut turn[..m]);
    box_filter_scalar(&turn[..m], half, &mut tmp[..m]);
    // The smoothed turns' sines into `turn` and cosines into `tmp`; a turn too large for the
    // polynomials stays in `turn`, marked by [`NOT_A_COSINE`] in `tmp`.
    for (t, x) in turn.iter_mut().zip(tmp.iter_mut()) {
        let big = x.abs() > SMALL_TURN;
        let (ps, pc) = sin_cos_poly(*x);
        (*t, *x) = if big { (*x, NOT_A_COSINE) } else { (ps, pc) };
    }
    // The marked turns' sine and cosine, before the loop below (which then does not branch).
    for (t, x) in turn.iter_mut().zip(tmp.iter_mut()) {
        if *x == NOT_A_COSINE {
            (*t, *x) = small_sin_cos(*t);
        }
    }
    // The heading's direction, rotated by each smoothed turn.
    let (mut s, mut c) = sin_cos(heading0);
    let mut p = start;
    for (i, q) in pts.iter_mut().enumerate() {
        if i > 0 {
            let (ds, dc) = (turn[i], tmp[i]);
            let c2 = c * dc - s * ds;
            s = s * dc + c * ds;
            c = c2;
        }
        *q = p;
        p = Vec2::new(p[0] + h * c, p[1] + h * s);
    }
    let (gx, gy) = (p[0] - start[0], p[1] - start[1]);
    // `i` and `m` (at most `Stage::max_points`, far below 2²⁴) convert exactly through `i32`,
    // which vectorizes.
    let mf = m as i32 as f32;
    for (i, q) in (0i32..).zip(pts.iter_mut()) {
        let f = i as f32 / mf;
        *q = Vec2::new(q[0] - gx * f, q[1] - gy * f);
    }
}

/// The turn at `p` from chord `a → p` to chord `p → b` ([`turn_angle`]) and the length of
/// `p → b`.
#[inline(always)]
fn turn_and_chord(a: Vec2, p: Vec2, b: Vec2) -> (f32, f32) {
    let (ux, uy) = (p[0] - a[0], p[1] - a[1]);
    let (vx, vy) = (b[0] - p[0], b[1] - p[1]);
    (
        turn_angle(ux * vy - uy * vx, ux * vx + uy * vy),
        (vx * vx + vy * vy).sqrt(),
    )
}

/// `atan2(cross, dot)` ([`atan2`], bit for bit), with the straight case short, and without
/// branches: every case of [`atan2`] is computed with its operations and the result selected,
/// so that a pass over a curve's points vectorizes (a resampled polygon turns at a few points
/// in three, where a branch would be mispredicted). For `0 ≤ |cross| < 2⁻¹² · dot` [`atan2`]
/// returns `atan_unit(|cross| / dot)` with its sign, and `atan_unit(t) = t` there (its
/// correction, about `t³ / 3`, is below half an ulp of `t` for `t ≤ 2⁻¹²`), so the quotient is
/// the result (finite: `dot > 0` there, and `cross` finite).
#[inline(always)]
fn turn_angle(cross: f32, dot: f32) -> f32 {
    let (ax, ay) = (dot.abs(), cross.abs());
    let swap = ay > ax;
    // The smaller magnitude over the larger: `ay / ax`, or `ax / ay` when swapped.
    let q = if swap { ax } else { ay } / if swap { ay } else { ax };
    let a = if ax == ay {
        if ax == 0.0 {
            0.0
        } else {
            1.0
        }
    } else {
        q
    };
    // `atan_unit(a)`: above 11/16 `π/4 + atan((a − 1)/(a + 1))`, above tan(π/8)
    // `atan(1/2) + atan((2a − 1)/(2 + a))`, else the polynomial at `a`.
    let upper = a >= 0.6875;
    let middle = a > 0.414_213_57;
    let num = if upper { a - 1.0 } else { 2.0 * a - 1.0 };
    let den = if upper { a + 1.0 } else { 2.0 + a };
    let tq = num / den;
    let (base, base_lo, t) = if upper {
        (crate::math::FRAC_PI_4, FRAC_PI_4_LO, tq)
    } else if middle {
        (ATAN_HALF, ATAN_HALF_LO, tq)
    } else {
        (0.0, 0.0, a)
    };
    let u = base + (atan_poly(t) + base_lo);
    let back = dot.is_sign_negative();
    let half_pi = std::f32::consts::FRAC_PI_2;
    let r = if swap {
        (if back { half_pi + u } else { half_pi - u }) + FRAC_PI_2_LO
    } else if back {
        (crate::math::PI - u) + PI_LO
    } else {
        u
    };
    let r = if cross.is_sign_negative() { -r } else { r };
    let r = if dot.is_nan() || cross.is_nan() {
        f32::NAN
    } else {
        r
    };
    if cross.abs() < dot * STRAIGHT_RATIO {
        cross / dot
    } else {
        r
    }
}

/// `(sin x, cos x)`: Taylor polynomials (errors below 1e-9) for `|x| ≤` [`SMALL_TURN`], the
/// smoothed turns' usual size, and [`sin_cos`] otherwise.
fn small_sin_cos(x: f32) -> (f32, f32) {
    if x.abs() > SMALL_TURN {
        return sin_cos(x);
    }
    sin_cos_poly(x)
}

/// The Taylor polynomials of [`small_sin_cos`].
#[inline(always)]
fn sin_cos_poly(x: f32) -> (f32, f32) {
    let x2 = x * x;
    let s = x * (1.0 - x2 / 6.0 * (1.0 - x2 / 20.0 * (1.0 - x2 / 42.0)));
    let c = 1.0 - x2 / 2.0 * (1.0 - x2 / 12.0 * (1.0 - x2 / 30.0));
    (s, c)
}

/// One pass of the cyclic box filter of half-width `half` (`2 · half < src.len()`) over
/// scalars, as a running sum: the first window summed in a fixed order, then one sample added
/// and one removed per step (the three index ranges below differ only in where the added and the
/// removed sample wrap around).
fn box_filter_scalar(src: &[f32], half: usize, dst: &mut [f32]) {
    let m = src.len();
    let w = 1.0 / (2 * half + 1) as f32;
    let mut sum = src[0];
    for o in 1..=half {
        sum += src[m - o] + src[o];
    }
    let mut step = |dst: &mut [f32], add: &[f32], remove: &[f32]| {
        for ((d, &a), &r) in dst.iter_mut().zip(add).zip(remove) {
            *d = sum * w;
            sum += a - r;
        }
    };
    // i < half: adds i + half + 1, removes i + m − half.
    let (head, rest) = dst.split_at_mut(half);
    step(head, &src[half + 1..], &src[m - half..]);
    // half ≤ i < m − half − 1: adds i + half + 1, removes i − half.
    let (body, tail) = rest.split_at_mut(m - 2 * half - 1);
    step(body, &src[2 * half + 1..], src);
    // m − half − 1 ≤ i < m: adds i + half + 1 − m, removes i − half.
    step(tail, src, &src[m - 2 * half - 1..]);
}

/// The clipping state of one cell in [`Voronoi::cell`].
struct Clipper {
    /// The polygon's vertex count.
    count: usize,
    /// The cell's site.
    p: Vec2,
    /// `δ` of the skip test.
    slack: f32,
    /// `(2 R + δ)²` of the current polygon (`fresh`) or of an earlier, larger one.
    reach2: f32,
    fresh: bool,
}

impl Clipper {
    /// `(2 R + δ)²` of the current polygon (computed now unless known).
    fn fresh_reach2(&mut self, cell: &Cell) -> f32 {
        if !self.fresh {
            self.reach2 = reach_sq(cell.verts, self.count, self.p, self.slack);
            self.fresh = true;
        }
        self.reach2
    }

    /// Clips `cell` by site `j` at `q` (squared distance `d2` from the cell's site) unless the
    /// skip test shows its half-plane holds the whole polygon; `None` when the polygon would
    /// exceed its capacity.
    #[inline(always)]
    fn visit(&mut self, cell: &mut Cell, tmp: &mut Cell, j: usize, q: Vec2, d2: f32) -> Option<()> {
        if d2 > self.reach2 {
            return Some(());
        }
        if !self.fresh {
            self.reach2 = reach_sq(cell.verts, self.count, self.p, self.slack);
            self.fresh = true;
            if d2 > self.reach2 {
                return Some(());
            }
        }
        self.clip(cell, tmp, j, q)
    }

    /// Clips `cell` by site `j` at `q` (no skip test); `None` when the polygon would exceed
    /// its capacity.
    #[inline(always)]
    fn clip(&mut self, cell: &mut Cell, tmp: &mut Cell, j: usize, q: Vec2) -> Option<()> {
        let (next, changed) = clip(cell, self.count, self.p, q, j as u32, tmp)?;
        self.count = next;
        self.fresh &= !changed;
        Some(())
    }
}

/// `(2 R + slack)²` with `R` the largest distance from `p` to one of the first `count`
/// vertices of `verts` (whose length is at least `count` rounded up to a multiple of 8).
///
/// The squared distances are maximised in eight lanes (vertex `k` in lane `k mod 8`, the
/// vertices past `count` as 0), which vectorizes, then across the lanes: the maximum of finite
/// numbers is exact, so the result is the plain loop's whatever the order.
#[inline(always)]
fn reach_sq(verts: &[Vec2], count: usize, p: Vec2, slack: f32) -> f32 {
    let mut lanes = [0.0f32; 8];
    for (c, chunk) in verts[..count.div_ceil(8) * 8].chunks_exact(8).enumerate() {
        for (i, (l, &v)) in lanes.iter_mut().zip(chunk).enumerate() {
            let (dx, dy) = (v[0] - p[0], v[1] - p[1]);
            // Times 0 past `count` (0, or NaN from an infinite stale value, which the
            // comparison skips): no branch.
            // (`count` is at most `max_verts`, far below 2³².)
            let d = (dx * dx + dy * dy) * f32::from(u8::from(((8 * c + i) as u32) < count as u32));
            *l = if d > *l { d } else { *l };
        }
    }
    // The lanes halved three times (a tree, not a chain).
    let mut w = 8;
    while w > 1 {
        w /= 2;
        for i in 0..w {
            lanes[i] = if lanes[i + w] > lanes[i] {
                lanes[i + w]
            } else {
                lanes[i]
            };
        }
    }
    let reach = 2.0 * lanes[0].sqrt() + slack;
    reach * reach
}

/// Whether a vertex of side `s` is outside a clip's half-plane: not `s ≤ 0` (so NaN is outside,
/// as in [`clip_through`]; the negated comparison says exactly that).
#[inline(always)]
#[allow(clippy::neg_cmp_op_on_partial_ord)]
fn outside(s: f32) -> bool {
    !(s <= 0.0)
}

/// The first `count` (1 to 64) vertices of `verts` (whose length is at least `count` rounded
/// up to a multiple of 8) outside the half-plane `side(v) ≤ 0`, as bits (bit `k` for vertex
/// `k`; a NaN side counts as outside, as in [`clip_through`]), computed eight at a time
/// without branches.
#[inline(always)]
fn outside_mask(verts: &[Vec2], count: usize, side: impl Fn(Vec2) -> f32) -> u64 {
    // The sides first (one pass over whole blocks, which vectorizes 8 wide), then their bits.
    let n = count.div_ceil(8) * 8;
    let mut sides = [0.0f32; 64];
    for (o, &v) in sides[..n].iter_mut().zip(&verts[..n]) {
        *o = side(v);
    }
    let mut mask = 0u64;
    for (j, &x) in sides[..n].iter().enumerate() {
        mask |= u64::from(outside(x)) << j;
    }
    mask & (u64::MAX >> (64 - count))
}

/// Clips the convex polygon `cell` (`count` vertices) to the half-plane of points at least as
/// near `p` as `q` (the bisector edge labelled `label`); returns the new count and whether the
/// polygon changed, or `None` when it would exceed the capacity.
///
/// The result is that of Sutherland–Hodgman through `tmp` ([`clip_through`]): when the vertices
/// outside form one cyclic run (always, for a convex polygon, unless rounding puts vertices
/// on both sides of a nearly collinear stretch), the run is replaced in place by the two
/// crossing points, computed and ordered as the general loop would (the polygon still starts at
/// the first vertex that loop writes); otherwise the general loop runs. Vertices are finite, so
/// every side is a number and a vertex is inside exactly when its side is `≤ 0`. For up to 64
/// vertices the sides are taken as one bit mask ([`outside_mask`]), whose runs are found without
/// branches; larger polygons are scanned vertex by vertex.
#[inline(always)]
fn clip(
    cell: &mut Cell,
    count: usize,
    p: Vec2,
    q: Vec2,
    label: u32,
    tmp: &mut Cell,
) -> Option<(usize, bool)> {
    if count == 0 {
        return Some((0, false));
    }
    let (ax, ay) = (q[0] - p[0], q[1] - p[1]);
    let (mx, my) = ((p[0] + q[0]) * 0.5, (p[1] + q[1]) * 0.5);
    let side = |v: Vec2| (v[0] - mx) * ax + (v[1] - my) * ay;
    let verts = &cell.verts[..count];
    // Whether vertex 0 is inside, where the polygon leaves the half-plane (first vertex
    // outside) and where it comes back (first vertex inside).
    let (in0, leave, enter) = if count <= 64 {
        let out = outside_mask(cell.verts, count, side);
        let all = u64::MAX >> (64 - count);
        if out == 0 {
            return Some((count, false));
        }
        if out == all {
            return Some((0, true));
        }
        // Bit `k`: vertex `k − 1` (cyclic) is outside.
        let before = ((out << 1) | (out >> (count - 1))) & all;
        let leaves = out & !before;
        if leaves.count_ones() > 1 {
            return clip_through(cell, count, side, label, tmp).map(|w| (w, true));
        }
        let enters = !out & before;
        (
            out & 1 == 0,
            leaves.trailing_zeros() as usize,
            enters.trailing_zeros() as usize,
        )
    } else {
        // Vertex 0's state runs to `t1`, the other state to `t2`, vertex 0's again to the
        // end; a vertex of the other state after `t2` makes a second run.
        let in0 = side(verts[0]) <= 0.0;
        let mut t1 = 1;
        while t1 < count && (side(verts[t1]) <= 0.0) == in0 {
            t1 += 1;
        }
        if t1 == count {
            // All inside: unchanged; all outside: nothing is left.
            return Some(if in0 { (count, false) } else { (0, true) });
        }
        let mut t2 = t1 + 1;
        while t2 < count && (side(verts[t2]) <= 0.0) != in0 {
            t2 += 1;
        }
        let mut t3 = t2 + 1;
        while t3 < count && (side(verts[t3]) <= 0.0) == in0 {
            t3 += 1;
        }
        if t3 < count {
            return clip_through(cell, count, side, label, tmp).map(|w| (w, true));
        }
        if in0 {
            (in0, t1, t2 % count)
        } else {
            (in0, t2 % count, t1)
        }
    };
    // The outside run is leave..=last, the inside run enter..=first (cyclic).
    let last = if enter == 0 { count - 1 } else { enter - 1 };
    let first = if leave == 0 { count - 1 } else { leave - 1 };
    let cut = |u: Vec2, v: Vec2| {
        let (su, sv) = (side(u), side(v));
        let t = su / (su - sv);
        Vec2::new(u[0] + (v[0] - u[0]) * t, u[1] + (v[1] - u[1]) * t)
    };
    let into = cut(cell.verts[first], cell.verts[leave]);
    let back = cut(cell.verts[last], cell.verts[enter]);
    let back_label = cell.labels[last];
    let cap = cell.cap;
    if !in0 {
        // Vertex 0 is outside: the loop writes `back`, the inside run, then `into`.
        let kept = first + 1 - enter;
        if kept + 2 > cap {
            return None;
        }
        cell.verts.copy_within(enter..=first, 1);
        cell.labels.copy_within(enter..=first, 1);
        cell.verts[0] = back;
        cell.labels[0] = back_label;
        cell.verts[kept + 1] = into;
        cell.labels[kept + 1] = label;
        Some((kept + 2, true))
    } else {
        // Vertex 0 is inside: the vertices before the outside run, `into`, `back`, the
        // vertices after it.
        let after = count - 1 - last;
        let w = leave + 2 + after;
        if w > cap {
            return None;
        }
        cell.verts.copy_within(last + 1..count, leave + 2);
        cell.labels.copy_within(last + 1..count, leave + 2);
        cell.verts[leave] = into;
        cell.labels[leave] = label;
        cell.verts[leave + 1] = back;
        cell.labels[leave + 1] = back_label;
        Some((w, true))
    }
}

/// Sutherland–Hodgman's loop for [`clip`] (any pattern of sides), through `tmp`; returns the
/// new count, or `None` when it would exceed the capacity.
fn clip_through(
    cell: &mut Cell,
    count: usize,
    side: impl Fn(Vec2) -> f32,
    label: u32,
    tmp: &mut Cell,
) -> Option<usize> {
    let cap = tmp.cap;
    let mut w = 0;
    let mut push = |v: Vec2, l: u32| -> Option<()> {
        if w == cap {
            return None;
        }
        tmp.verts[w] = v;
        tmp.labels[w] = l;
        w += 1;
        Some(())
    };
    for k in 0..count {
        let u = cell.verts[k];
        let v = cell.verts[(k + 1) % count];
        let (su, sv) = (side(u), side(v));
        if su <= 0.0 {
            push(u, cell.labels[k])?;
            if sv > 0.0 {
                let t = su / (su - sv);
                push(
                    Vec2::new(u[0] + (v[0] - u[0]) * t, u[1] + (v[1] - u[1]) * t),
                    label,
                )?;
            }
        } else if sv <= 0.0 {
            let t = su / (su - sv);
            push(
                Vec2::new(u[0] + (v[0] - u[0]) * t, u[1] + (v[1] - u[1]) * t),
                cell.labels[k],
            )?;
        }
    }
    cell.verts[..w].copy_from_slice(&tmp.verts[..w]);
    cell.labels[..w].copy_from_slice(&tmp.labels[..w]);
    Some(w)
}

/// The sites `j ≠ s` with `lo < dist[j] ≤ hi` as bits (bit `j` for site `j`; at most 64
/// sites), computed without branches.
#[inline(always)]
fn site_mask(dist: &[f32], s: usize, lo: f32, hi: f32) -> u64 {
    let mut mask = 0u64;
    for (j, &d) in dist.iter().enumerate() {
        mask |= u64::from((d > lo) & (d <= hi)) << j;
    }
    mask & !(1u64 << s)
}

/// The first `f < count` with `labels[f] == site` (`labels.len()`, a multiple of 8, at least
/// `count`), found from a bit mask of eight labels at a time for up to 64 (no branch on a
/// label), by a scan beyond.
#[inline(always)]
fn find_label(labels: &[u32], count: usize, site: u32) -> Option<usize> {
    if count > 64 {
        return (0..count).find(|&f| labels[f] == site);
    }
    let mut mask = 0u64;
    for (c, chunk) in labels[..count.div_ceil(8) * 8].chunks_exact(8).enumerate() {
        let mut bits = 0u64;
        for (i, &l) in chunk.iter().enumerate() {
            bits |= u64::from(l == site) << i;
        }
        mask |= bits << (8 * c);
    }
    let mask = mask & (u64::MAX >> (64 - count.max(1)));
    (mask != 0).then(|| mask.trailing_zeros() as usize)
}

/// Draws sites uniform in the disc of radius `r`: the radius `r · √u`, the angle `2π v` taken
/// as the middle of its eighth of the circle, `(2k + 1) π / 8` (the clip polygon's odd
/// vertices), rotated by the offset `2π (v − (2k + 1) / 16)`, at most `π / 8` in size, whose
/// sine and cosine come from the Taylor polynomials of [`small_sin_cos`] (errors below `2e-8`
/// there).
fn draw_sites(rng: &mut LaneRng, r: f32, sites: &mut [Vec2]) {
    for p in sites.iter_mut() {
        let radius = r * rng.unit().sqrt();
        let v = rng.unit();
        // `8 v < 8` (`v < 1`), so the eighth is 0..=7.
        let k = ((v * 8.0) as usize).min(7);
        let mid = (2 * k + 1) as f32 / 16.0;
        let (ds, dc) = sin_cos_poly(crate::math::TAU * (v - mid));
        let (s0, c0) = (CLIP_SIN[2 * k + 1], CLIP_COS[2 * k + 1]);
        let (s, c) = (s0 * dc + c0 * ds, c0 * dc - s0 * ds);
        *p = Vec2::new(radius * c, radius * s);
    }
}

/// The index of the site nearest the origin (the first on ties).
fn nearest_to_origin(sites: &[Vec2]) -> usize {
    let mut best = 0;
    let mut best_d2 = f32::INFINITY;
    for (s, p) in sites.iter().enumerate() {
        let d2 = p[0] * p[0] + p[1] * p[1];
        if d2 < best_d2 {
            best_d2 = d2;
            best = s;
        }
    }
    best
}

/// Centres the curve on its point mean and makes it counter-clockwise.
fn finish(curve: &mut [Vec2]) {
    let m = curve.len();
    let (mut cx, mut cy) = (0.0f32, 0.0f32);
    for p in curve.iter() {
        cx += p[0];
        cy += p[1];
    }
    cx /= m as f32;
    cy /= m as f32;
    for p in curve.iter_mut() {
        *p = Vec2::new(p[0] - cx, p[1] - cy);
    }
    // The tracing already walks counter-clockwise; this only guards the contract.
    if signed_area2(curve) < 0.0 {
        curve.reverse();
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// Checks that `pts` is a closed, counter-clockwise, simple polyline with finite points and
    /// consecutive spacing (closing segment included) in `(0, max_step_m]`. Orientations are
    /// computed in `f64`, where they are exact for `f32` inputs up to rounding of the final sum,
    /// so collinear neighbours on a smoothed staircase are not reported as crossings.
    pub(in crate::track::generators) fn check_loop(
        pts: &[Vec2],
        max_step_m: f32,
    ) -> Result<(), String> {
        let m = pts.len();
        if m < 4 {
            return Err(format!("{m} points"));
        }
        if let Some(i) = pts
            .iter()
            .position(|p| !(p[0].is_finite() && p[1].is_finite()))
        {
            return Err(format!("point {i} is not finite"));
        }
        let p: Vec<[f64; 2]> = pts
            .iter()
            .map(|q| [f64::from(q[0]), f64::from(q[1])])
            .collect();
        let mut area2 = 0.0;
        for i in 0..m {
            let (a, b) = (p[i], p[(i + 1) % m]);
            let step = ((b[0] - a[0]).powi(2) + (b[1] - a[1]).powi(2)).sqrt();
            if !(step > 0.0 && step <= f64::from(max_step_m) + 1e-4) {
                return Err(format!("step {i} is {step:.3} m"));
            }
            area2 += a[0] * b[1] - a[1] * b[0];
        }
        if area2 <= 0.0 {
            return Err(format!("signed area {:.1} is not positive", area2 / 2.0));
        }
        let orient = |a: [f64; 2], b: [f64; 2], c: [f64; 2]| {
            (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])
        };
        for i in 0..m {
            let (a, b) = (p[i], p[(i + 1) % m]);
            for j in i + 2..m {
                if i == 0 && j == m - 1 {
                    continue;
                }
                let (c, d) = (p[j], p[(j + 1) % m]);
                if a[0].max(b[0]) < c[0].min(d[0])
                    || c[0].max(d[0]) < a[0].min(b[0])
                    || a[1].max(b[1]) < c[1].min(d[1])
                    || c[1].max(d[1]) < a[1].min(b[1])
                {
                    continue;
                }
                if orient(a, b, c) * orient(a, b, d) <= 0.0
                    && orient(c, d, a) * orient(c, d, b) <= 0.0
                {
                    return Err(format!("segments {i} and {j} cross"));
                }
            }
        }
        Ok(())
    }

    /// The removal of the closing gap stretches or shrinks the steps a little.
    const STEP_SLACK: f32 = 1.25;

    fn preset() -> Voronoi {
        Voronoi {
            n_sites: 24,
            n_cells: 6,
            grid: 48,
            radius_m: 120.0,
        }
    }

    /// Runs `v` for `(seed, env)` with a scratch buffer poisoned by `poison`.
    fn run(v: &Voronoi, env: u64, poison: f32) -> Vec<Vec2> {
        let mut scratch = vec![poison; v.scratch_len()];
        let mut scratch_u32 = vec![poison.to_bits(); v.scratch_u32_len()];
        let mut out = vec![Vec2::NAN; v.max_points()];
        let mut rng = LaneRng::new(7, env, 0, crate::rng::stream::GENERATE);
        let m = v.run_lane(&mut rng, &mut scratch, &mut scratch_u32, &mut out);
        assert!(m <= v.max_points());
        out.truncate(m);
        out
    }

    #[test]
    fn outlines_are_simple_counter_clockwise_loops() {
        let v = preset();
        for env in 0..300 {
            let pts = run(&v, env, 0.0);
            if let Err(why) = check_loop(&pts, STEP_SLACK * MAX_STEP_M) {
                panic!("env {env}: {why}");
            }
            let n = pts.len() as f32;
            let mean = pts
                .iter()
                .fold([0.0f32; 2], |s, p| [s[0] + p[0] / n, s[1] + p[1] / n]);
            assert!(
                mean[0].abs() < 1e-3 && mean[1].abs() < 1e-3,
                "env {env}: mean {mean:?}"
            );
        }
    }

    #[test]
    fn other_parameters_give_simple_loops() {
        // (sites, cells, grid, radius): the bounds the preset loader accepts.
        let cases = [
            (24, 6, 16, 120.0),
            (24, 6, 96, 120.0),
            (6, 6, 48, 120.0),
            (64, 24, 48, 120.0),
            (64, 24, 96, 300.0),
            (12, 1, 32, 120.0),
            (64, 2, 16, 40.0),
        ];
        for (n_sites, n_cells, grid, radius_m) in cases {
            let v = Voronoi {
                n_sites,
                n_cells,
                grid,
                radius_m,
            };
            for env in 0..40 {
                let pts = run(&v, env, 0.0);
                if let Err(why) = check_loop(&pts, STEP_SLACK * v.step_m()) {
                    panic!("{n_sites}/{n_cells}/{grid}/{radius_m} env {env}: {why}");
                }
            }
        }
    }

    #[test]
    fn output_is_a_pure_function_of_the_stream() {
        let v = preset();
        for env in 0..20 {
            let a = run(&v, env, 0.0);
            let b = run(&v, env, f32::NAN);
            let c = run(&v, env, -1.0e30);
            assert_eq!(
                bytemuck::cast_slice::<Vec2, u8>(&a),
                bytemuck::cast_slice::<Vec2, u8>(&b)
            );
            assert_eq!(
                bytemuck::cast_slice::<Vec2, u8>(&a),
                bytemuck::cast_slice::<Vec2, u8>(&c)
            );
        }
        assert_ne!(run(&v, 0, 0.0), run(&v, 1, 0.0));
    }

    /// Scratch for a region of `v`, and `select` run on the given sites in order.
    fn region_of(v: &Voronoi, sites: &[Vec2], chosen: &[usize]) -> (Vec<Vec2>, Vec<u32>, usize) {
        let n = v.n_sites;
        let mv = v.stride();
        let mut verts = vec![Vec2::NAN; (v.slots() + 1) * mv];
        let mut u32s = vec![u32::MAX - 1; 2 * n + 2 * v.slots() + (v.slots() + 1) * mv];
        {
            let (state, rest) = u32s.split_at_mut(n);
            let (slot_of, rest) = rest.split_at_mut(n);
            let (slot_site, rest) = rest.split_at_mut(v.slots());
            let (counts, labels) = rest.split_at_mut(v.slots());
            state.fill(FREE);
            slot_of.fill(OUTSIDE);
            let mut r = Region {
                state,
                slot_of,
                slot_site,
                counts,
                verts: &mut verts,
                labels,
            };
            for (slot, &s) in chosen.iter().enumerate() {
                v.select(sites, s, slot, &mut r).unwrap();
            }
        }
        (verts, u32s, chosen.len())
    }

    /// Traces the region of `chosen` sites: its boundary polygon.
    fn trace_of(v: &Voronoi, sites: &[Vec2], chosen: &[usize]) -> Vec<Vec2> {
        let n = v.n_sites;
        let (mut verts, mut u32s, k) = region_of(v, sites, chosen);
        let (state, rest) = u32s.split_at_mut(n);
        let (slot_of, rest) = rest.split_at_mut(n);
        let (slot_site, rest) = rest.split_at_mut(v.slots());
        let (counts, labels) = rest.split_at_mut(v.slots());
        let r = Region {
            state,
            slot_of,
            slot_site,
            counts,
            verts: &mut verts,
            labels,
        };
        let mut curve = vec![Vec2::NAN; v.max_points()];
        let m = v.trace(&r, k, &mut curve);
        curve.truncate(m);
        curve
    }

    #[test]
    fn cells_are_the_voronoi_cells_clipped_to_the_16_gon() {
        let v = Voronoi {
            n_sites: 40,
            n_cells: 40,
            grid: 48,
            radius_m: 100.0,
        };
        let mut rng = LaneRng::new(3, 1, 0, 0);
        let mut sites = vec![Vec2::ZERO; v.n_sites];
        draw_sites(&mut rng, v.radius_m, &mut sites);
        let all: Vec<usize> = (0..v.n_sites).collect();
        let (verts, u32s, _) = region_of(&v, &sites, &all);
        let mv = v.stride();
        let counts = &u32s[2 * v.n_sites + v.slots()..][..v.slots()];
        let labels = &u32s[2 * v.n_sites + 2 * v.slots()..];
        let d = |a: Vec2, b: Vec2| f64::from(a[0] - b[0]).hypot(f64::from(a[1] - b[1]));
        let mut area = 0.0;
        for s in 0..v.n_sites {
            let c = counts[s] as usize;
            let poly = &verts[(s + 1) * mv..][..c];
            for (e, &a) in poly.iter().enumerate() {
                let b = poly[(e + 1) % c];
                area += f64::from(a[0]) * f64::from(b[1]) - f64::from(a[1]) * f64::from(b[0]);
                // Every vertex is nearest to its own site (to rounding).
                let own = d(a, sites[s]);
                let nearest = sites.iter().map(|&q| d(a, q)).fold(f64::MAX, f64::min);
                assert!(
                    own - nearest < 1e-3,
                    "site {s} vertex {e}: {own} vs {nearest}"
                );
                // The midpoint of an edge labelled l is equidistant from s and l.
                let l = labels[(s + 1) * mv + e];
                let mid = Vec2::new((a[0] + b[0]) / 2.0, (a[1] + b[1]) / 2.0);
                if l == OUTSIDE {
                    let r = d(mid, Vec2::ZERO);
                    assert!(r > 0.97 * f64::from(v.radius_m), "site {s} edge {e}: {r}");
                } else {
                    let (ds, dl) = (d(mid, sites[s]), d(mid, sites[l as usize]));
                    assert!((ds - dl).abs() < 1e-3, "site {s} edge {e}: {ds} vs {dl}");
                }
            }
        }
        // The cells tile the 16-gon: 16 r² tan(π/16) with r = radius_m.
        let r = f64::from(v.radius_m);
        let want = 16.0 * r * r * (std::f64::consts::PI / 16.0).tan();
        assert!(
            (area / 2.0 - want).abs() < 1e-3 * want,
            "{} vs {want}",
            area / 2.0
        );
    }

    /// The cell of `s` by the plain method: Sutherland–Hodgman by every other site, the near
    /// ones first (each group in site order), each clip skipped only when every vertex is
    /// inside.
    fn reference_cell(v: &Voronoi, sites: &[Vec2], s: usize) -> (Vec<Vec2>, Vec<u32>) {
        let mv = v.max_verts();
        let rc = v.radius_m * CLIP_SEC;
        let mut verts: Vec<Vec2> = (0..CLIP_SIDES)
            .map(|k| Vec2::new(rc * CLIP_COS[k], rc * CLIP_SIN[k]))
            .collect();
        let mut labels = vec![OUTSIDE; CLIP_SIDES];
        verts.resize(mv, Vec2::NAN);
        labels.resize(mv, 0);
        let (mut tv, mut tl) = (vec![Vec2::NAN; mv], vec![0; mv]);
        let mut count = CLIP_SIDES;
        let p = sites[s];
        let d2 = |q: Vec2| (q[0] - p[0]) * (q[0] - p[0]) + (q[1] - p[1]) * (q[1] - p[1]);
        let near: Vec<usize> = (0..sites.len())
            .filter(|&j| j != s && d2(sites[j]) <= v.near_sq())
            .collect();
        let far = (0..sites.len()).filter(|&j| j != s && d2(sites[j]) > v.near_sq());
        for j in near.into_iter().chain(far) {
            let q = sites[j];
            let (ax, ay) = (q[0] - p[0], q[1] - p[1]);
            let (mx, my) = ((p[0] + q[0]) * 0.5, (p[1] + q[1]) * 0.5);
            let side = |v: Vec2| (v[0] - mx) * ax + (v[1] - my) * ay;
            if verts[..count].iter().all(|&v| side(v) <= 0.0) {
                continue;
            }
            let mut cell = Cell {
                verts: &mut verts,
                labels: &mut labels,
                cap: mv,
            };
            let mut tmp = Cell {
                verts: &mut tv,
                labels: &mut tl,
                cap: mv,
            };
            count = clip_through(&mut cell, count, side, j as u32, &mut tmp).unwrap();
        }
        verts.truncate(count);
        labels.truncate(count);
        (verts, labels)
    }

    #[test]
    fn cells_are_bit_identical_to_clipping_by_every_site_near_first() {
        for (n_sites, radius_m) in [(24, 120.0f32), (64, 300.0), (6, 40.0), (64, 40.0)] {
            let v = Voronoi {
                n_sites,
                n_cells: 6,
                grid: 48,
                radius_m,
            };
            let mv = v.max_verts();
            for env in 0..60 {
                let mut rng = LaneRng::new(11, env, 0, 0);
                let mut sites = vec![Vec2::ZERO; n_sites];
                draw_sites(&mut rng, radius_m, &mut sites);
                if env % 3 == 0 {
                    // Snapped to a coarse lattice: collinear and cocircular sites, duplicates.
                    for p in sites.iter_mut() {
                        let g = radius_m / 4.0;
                        *p = Vec2::new((p[0] / g).round() * g, (p[1] / g).round() * g);
                    }
                }
                for s in 0..n_sites {
                    let (want_v, want_l) = reference_cell(&v, &sites, s);
                    let stride = v.stride();
                    let (mut cv, mut cl) = (vec![Vec2::NAN; stride], vec![0; stride]);
                    let (mut tv, mut tl) = (vec![Vec2::NAN; stride], vec![0; stride]);
                    let mut cell = Cell {
                        verts: &mut cv,
                        labels: &mut cl,
                        cap: mv,
                    };
                    let mut tmp = Cell {
                        verts: &mut tv,
                        labels: &mut tl,
                        cap: mv,
                    };
                    let count = v.cell(&sites, s, &mut cell, &mut tmp).unwrap();
                    assert_eq!(
                        bytemuck::cast_slice::<Vec2, u8>(&cv[..count]),
                        bytemuck::cast_slice::<Vec2, u8>(&want_v),
                        "{n_sites}/{radius_m} env {env} site {s}"
                    );
                    assert_eq!(cl[..count], want_l[..], "{n_sites}/{radius_m} env {env}");
                }
            }
        }
    }

    /// `smooth_turning` point by point: the plain loops it is bit-identical to.
    fn smooth_turning_plain(pts: &mut [Vec2], half: usize) {
        let m = pts.len();
        let (mut turn, mut tmp) = (vec![0.0f32; m], vec![0.0f32; m]);
        let mut length = 0.0f32;
        let (mut a, mut p) = (pts[m - 1], pts[0]);
        for (i, t) in turn.iter_mut().enumerate() {
            let b = if i + 1 < m { pts[i + 1] } else { pts[0] };
            let (ux, uy) = (p[0] - a[0], p[1] - a[1]);
            let (vx, vy) = (b[0] - p[0], b[1] - p[1]);
            *t = turn_angle(ux * vy - uy * vx, ux * vx + uy * vy);
            length += (vx * vx + vy * vy).sqrt();
            (a, p) = (p, b);
        }
        let h = length / m as f32;
        let start = pts[0];
        let heading0 = atan2(pts[1][1] - start[1], pts[1][0] - start[0]);
        box_filter_scalar(&turn, half, &mut tmp);
        box_filter_scalar(&tmp, half, &mut turn);
        box_filter_scalar(&turn, half, &mut tmp);
        let (mut s, mut c) = sin_cos(heading0);
        let mut p = start;
        for (i, q) in pts.iter_mut().enumerate() {
            if i > 0 {
                let (ds, dc) = small_sin_cos(tmp[i]);
                let c2 = c * dc - s * ds;
                s = s * dc + c * ds;
                c = c2;
            }
            *q = p;
            p = Vec2::new(p[0] + h * c, p[1] + h * s);
        }
        let (gx, gy) = (p[0] - start[0], p[1] - start[1]);
        for (i, q) in pts.iter_mut().enumerate() {
            let f = i as f32 / m as f32;
            *q = Vec2::new(q[0] - gx * f, q[1] - gy * f);
        }
    }

    #[test]
    fn smooth_turning_is_the_plain_loop_bit_for_bit() {
        let mut rng = LaneRng::new(13, 0, 0, 0);
        for case in 0..400 {
            // Jagged polygons (sharp turns, turns past the polynomials' range), near-straight
            // runs, repeated points (zero chords) and a few non-finite points.
            let m = 3 + (case % 97);
            let mut pts: Vec<Vec2> = (0..m)
                .map(|i| {
                    let a = crate::math::TAU * i as f32 / m as f32;
                    let (s, c) = sin_cos(a);
                    let r = 50.0
                        + if case % 2 == 0 {
                            10.0 * rng.signed()
                        } else {
                            0.0
                        };
                    Vec2::new(r * c, r * s)
                })
                .collect();
            if case % 5 == 1 {
                pts[m / 2] = pts[m / 2 - 1];
            }
            if case % 37 == 3 {
                pts[m - 1] = Vec2::new(f32::NAN, 1.0);
            }
            if case % 41 == 4 {
                pts[1] = Vec2::new(f32::INFINITY, 0.0);
            }
            let half = 1 + case % 5;
            let half = half.min((m - 1) / 2).max(1);
            if 2 * half >= m {
                continue;
            }
            let mut want = pts.clone();
            smooth_turning_plain(&mut want, half);
            let (mut turn, mut tmp) = (vec![f32::NAN; m], vec![-7.0f32; m]);
            smooth_turning(&mut pts, half, &mut turn, &mut tmp);
            assert_eq!(
                bytemuck::cast_slice::<Vec2, u32>(&pts),
                bytemuck::cast_slice::<Vec2, u32>(&want),
                "case {case}"
            );
        }
    }

    #[test]
    fn turn_angle_is_atan2_bit_for_bit() {
        let mut rng = LaneRng::new(5, 0, 0, 0);
        let mut cases = vec![(0.0f32, 1.0f32), (-0.0, 1.0), (1.0e-30, 2.0), (0.0, 0.0)];
        for _ in 0..200_000 {
            let dot = 10.0 * rng.unit() - 1.0;
            // Ratios from 1e-9 to 1e-2 around the threshold 2⁻¹², both signs.
            let ratio = crate::math::exp(-2.3 * (2.0 + 7.0 * rng.unit()));
            let sign = if rng.unit() < 0.5 { -1.0 } else { 1.0 };
            cases.push((sign * ratio * dot.abs(), dot));
        }
        for k in 0..4096 {
            let t = f32::from_bits(STRAIGHT_RATIO.to_bits() - 2048 + k);
            cases.push((t * 3.0, 3.0));
            cases.push((-t * 7.0, 7.0));
        }
        // Every direction and the cases of `atan2`: both signs of zero, equal magnitudes,
        // the interval bounds of its arctangent, infinities, NaN.
        for _ in 0..200_000 {
            let (s, c) = sin_cos(crate::math::TAU * rng.unit());
            let r = crate::math::exp(20.0 * rng.signed());
            cases.push((r * s, r * c));
        }
        let specials = [
            0.0f32,
            -0.0,
            1.0,
            -1.0,
            0.6875,
            0.414_213_57,
            0.414_213_6,
            3.0,
            f32::MIN_POSITIVE,
            f32::MAX,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
        ];
        for &y in &specials {
            for &x in &specials {
                cases.push((y, x));
                cases.push((-y, x));
            }
        }
        for (cross, dot) in cases {
            assert_eq!(
                turn_angle(cross, dot).to_bits(),
                atan2(cross, dot).to_bits(),
                "{cross:e} {dot:e}"
            );
        }
    }

    #[test]
    fn the_walk_crosses_cells_and_fills_holes() {
        // A centre site, an inner ring of 6 at 50 m and an outer ring of 6 at 100 m.
        let v = Voronoi {
            n_sites: 13,
            n_cells: 13,
            grid: 48,
            radius_m: 120.0,
        };
        let mut sites = vec![Vec2::ZERO];
        for (r, phase) in [(50.0f32, 0.0f32), (100.0, 0.5)] {
            for k in 0..6 {
                let a = (k as f32 + phase) * std::f32::consts::TAU / 6.0;
                let (s, c) = crate::math::sin_cos(a);
                sites.push(Vec2::new(r * c, r * s));
            }
        }
        // The inner ring without the centre: an annulus whose hole is the centre cell.
        let pts = trace_of(&v, &sites, &[1, 2, 3, 4, 5, 6]);
        check_loop(&pts, 2.0 * v.radius_m).unwrap();
        // Every point is outside the centre cell (a hexagon of inradius 25 m) ...
        assert!(pts.iter().all(|p| p.length() > 24.9));
        // ... and the loop is the outer boundary: it encloses the centre.
        let mut winding = 0.0f64;
        for (i, p) in pts.iter().enumerate() {
            let q = pts[(i + 1) % pts.len()];
            let a = f64::from(p[1]).atan2(f64::from(p[0]));
            let b = f64::from(q[1]).atan2(f64::from(q[0]));
            let mut d = b - a;
            if d > std::f64::consts::PI {
                d -= std::f64::consts::TAU;
            } else if d < -std::f64::consts::PI {
                d += std::f64::consts::TAU;
            }
            winding += d;
        }
        assert!((winding - std::f64::consts::TAU).abs() < 1e-6, "{winding}");
        // Every cell selected: the outline is the 16-gon, perimeter 32 r tan(π/16).
        let all: Vec<usize> = (0..13).collect();
        let pts = trace_of(&v, &sites, &all);
        check_loop(&pts, 2.0 * v.radius_m).unwrap();
        let r = v.radius_m * CLIP_SEC;
        assert!(pts.iter().all(
            |p| (p.length() - r).abs() < 1e-3 * r || (p.length() > 0.98 * r && p.length() < r)
        ));
        let len: f64 = (0..pts.len())
            .map(|i| {
                let (a, b) = (pts[i], pts[(i + 1) % pts.len()]);
                f64::from(a[0] - b[0]).hypot(f64::from(a[1] - b[1]))
            })
            .sum();
        let want = 32.0 * 120.0 * (std::f64::consts::PI / 16.0).tan();
        assert!((len - want).abs() < 1e-3 * want, "{len} vs {want}");
    }

    #[test]
    fn the_region_grows_through_long_shared_edges_only() {
        let v = preset();
        for env in 0..200 {
            let mut scratch = vec![0.0f32; v.scratch_len()];
            let mut u32s = vec![0; v.scratch_u32_len()];
            let mut rng = LaneRng::new(7, env, 0, crate::rng::stream::GENERATE);
            let n = v.n_sites;
            let (sites, verts) = scratch.split_at_mut(2 * n);
            let sites: &mut [Vec2] = bytemuck::cast_slice_mut(sites);
            draw_sites(&mut rng, v.radius_m, sites);
            let verts: &mut [Vec2] =
                bytemuck::cast_slice_mut(&mut verts[..2 * (v.slots() + 1) * v.stride()]);
            let (st, rest) = u32s.split_at_mut(n);
            let (slot_of, rest) = rest.split_at_mut(n);
            let (slot_site, rest) = rest.split_at_mut(v.slots());
            let (counts, labels) = rest.split_at_mut(v.slots());
            let mut r = Region {
                state: st,
                slot_of,
                slot_site,
                counts,
                verts,
                labels,
            };
            let seed = nearest_to_origin(sites);
            let k = v.grow_region(&mut rng, sites, seed, &mut r).unwrap();
            assert_eq!(k, v.n_cells, "env {env}");
            assert_eq!(r.slot_site[0] as usize, seed);
            // Each later cell shares an edge of at least radius / 8 with an earlier one.
            let mv = v.stride();
            for later in 1..k {
                let site = r.slot_site[later];
                let linked = (0..later).any(|earlier| {
                    let c = r.counts[earlier] as usize;
                    (0..c).any(|e| {
                        let a = r.verts[(earlier + 1) * mv + e];
                        let b = r.verts[(earlier + 1) * mv + (e + 1) % c];
                        r.labels[(earlier + 1) * mv + e] == site
                            && (a - b).length() >= v.radius_m / 8.0
                    })
                });
                assert!(linked, "env {env}: cell {later}");
            }
            assert_eq!(r.state.iter().filter(|&&s| s == SELECTED).count(), k);
        }
    }
}
