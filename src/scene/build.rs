//! Voxelisation: from primitives (or a dense field) to an env's octree, top down.
//!
//! The tree is built from the root box down. At each box (centre `c`, half-diagonal `r`, both
//! in voxels) the scene value `F(c)` is evaluated; since `F` is 1-Lipschitz, `F(p) ∈ [F(c) − r,
//! F(c) + r]` on the box, so `|F(c)| − r ≥ T` proves the box *uniform* (all outside or all
//! inside, beyond the truncation band) and its bound `|F(c)| − r` is stored in the reference.
//! Otherwise the box is split into its eight octants, down to 8³ bricks, whose 512 voxel centres
//! are evaluated and quantised. A brick whose samples all saturate is stored as uniform too, with
//! bound `min |sample| − √3/2` (every point of the brick is within √3/2 voxel of a sample), and a
//! node whose eight children are uniform of one kind collapses into one uniform reference.
//!
//! **Culling.** Each box carries the list of terms that can still matter in it. A term whose own
//! distance is at least `τ` on the whole box (`d_i(c) − r ≥ τ`) is dropped: replacing a union
//! term's `d_i ≥ τ` by `+∞`, or a subtraction term's `−d_i ≤ −τ` by `−∞`, changes the fold only
//! where the result is `≥ τ` or `≤ −τ` both before and after (min and max preserve that
//! relation). Children use `τ = T + 2r` (non-increasing down the tree), bricks `τ = T`, so the
//! codes are exact while a brick costs 512 × (nearby terms) evaluations, not 512 × (all terms).
//! Uniform bounds are capped at the box's `τ`, the distance up to which the culled list is exact.
//!
//! **Thin solids.** Ray casts meet the zero set of the samples' trilinear interpolant `I`, so a
//! solid thinner than about a voxel may hold no sample below zero and vanish. Each union term
//! whose section is too thin is therefore stored *dilated*: its distance is lowered by
//! `δ = max(0, H − h)` voxels (`thin_dilation_vox`), where `h` is the term's inradius (its
//! greatest depth) and `H = ½√k + q/2 + 1/32` with `q` the code step and `k ∈ {1, 2, 3}` the
//! number of the term's section directions that are thin (half extent within √3 voxel of `h`:
//! `k = 1` a plate, 2 a bar, 3 a ball). Why that suffices: at a point `p` of the term's *core*
//! (depth `h`), at least √3 voxel from the core's ends and from any subtraction, the term's
//! distance near `p` varies only across its `k` thin directions, so each cell corner `c` has
//! `F'(c) ≤ F'(p) + |Q(c − p)|` (`Q` the projection onto those directions); averaged with the
//! trilinear weights, `Σ w|Q(c − p)| ≤ sqrt(Σ_a f_a(1 − f_a)|Q e_a|²) ≤ ½√k`, so
//! `I(p) ≤ −h − δ + ½√k + q/2 ≤ −1/32 < 0`. Every ray crossing such a core therefore stops at or
//! before it, and the stored surface lies at most `δ + q/2` voxel outside the true one where the
//! field is convex. Terms with `h ≥ H` (for `q = 4/127`: plates at least 1.09 voxel thick, bars
//! 1.51, balls 1.82) are stored exactly as before.

use super::compiled::{Compiled, CompiledScene, Kind};
use super::dag::{
    brick_hash, make_ref, node_hash, ref_kind, uniform_bound, uniform_ref, Brick, Dedup, EnvEntry,
    LocalTree, Node, PoolInfo, BRICK, BRICK_VOXELS, KIND_INSIDE, KIND_OUTSIDE,
};
use super::primitive::EnvScene;
use crate::geom::sdf::{fmax, fmin};
use crate::geom::Vec3;
use crate::{Error, Result};

/// `√3/2`, rounded up.
const HALF_DIAG: f32 = 0.866_026;
/// `√3`: how far (voxels) a section's other half extents may exceed its inradius and still
/// count as thin (no core point is then √3 voxel from the core's ends along them).
const THIN_SPAN_VOX: f32 = 1.732_051;
/// The margin (voxels) by which a thin term's core is kept below zero in the interpolant.
const THIN_MARGIN_VOX: f32 = 1.0 / 32.0;

/// The dilation (voxels, `≥ 0`) a union term is stored with so that it cannot vanish from the
/// interpolated field (module doc, *Thin solids*): `max(0, ½√k + q/2 + 1/32 − h)` over the
/// term's sections, `h` the section's inradius and `k` its thin directions; `0` for planes and
/// subtractions. `voxel_m` is the grid's voxel side, `quant_step` its code step (voxels).
pub(crate) fn thin_dilation_vox(t: &Compiled, voxel_m: f32, quant_step: f32) -> f32 {
    if t.subtract {
        return 0.0;
    }
    let inv = 1.0 / voxel_m;
    let p = &t.p;
    let need = |half: [f32; 3]| -> f32 {
        let h = half.iter().copied().fold(f32::INFINITY, fmin) * inv;
        let k = half
            .iter()
            .filter(|&&e| e * inv - h < THIN_SPAN_VOX)
            .count();
        let gap = 0.5 * (k as f32).sqrt();
        fmax(0.0, gap + 0.5 * quant_step + THIN_MARGIN_VOX - h)
    };
    match t.kind {
        Kind::Plane => 0.0,
        Kind::Box => need([p[0] + p[3], p[1] + p[3], p[2] + p[3]]),
        Kind::Sphere => need([p[0]; 3]),
        Kind::Capsule => {
            let half_len = 0.5 * (p[0] * p[0] + p[1] * p[1] + p[2] * p[2]).sqrt();
            need([p[3], p[3], p[3] + half_len])
        }
        Kind::Cylinder => need([p[0], p[0], p[1]]),
        // Two bars: across local y (width `outer_y − inner_y`) and across local z; each is
        // `half_depth` deep and long along the other axis.
        Kind::GateFrame => fmax(
            need([p[4], 0.5 * (p[0] - p[2]), f32::INFINITY]),
            need([p[4], 0.5 * (p[1] - p[3]), f32::INFINITY]),
        ),
    }
}

/// What fills an env's grid.
pub(crate) trait Source: Sync {
    /// The per-box state (the culled term list).
    type Ctx;
    /// The state of the root box.
    fn root(&self) -> Self::Ctx;
    /// `Err(reference)` if the box `[min, min + size)` is provably uniform, else the state of its
    /// children (`brick` = the children are voxels).
    fn split(
        &self,
        ctx: &Self::Ctx,
        min: [u32; 3],
        size: u32,
        brick: bool,
    ) -> std::result::Result<Self::Ctx, u32>;
    /// Fills the 512 samples of the brick at `min` (voxels, distances in voxels); returns the
    /// distance up to which they are exact (beyond it they are only known to be beyond it).
    fn fill(&self, ctx: &Self::Ctx, min: [u32; 3], out: &mut [f32; BRICK_VOXELS]) -> f32;
}

/// An env's compiled primitives on its grid.
pub(crate) struct PrimitiveSource {
    terms: Vec<Compiled>,
    /// Per term, its thin-solid dilation in metres (0 for most terms).
    dilate_m: Vec<f32>,
    origin: [f32; 3],
    voxel_m: f32,
    truncation: f32,
}

/// A culled term list and the distance (voxels) up to which it is exact.
pub(crate) struct Culled {
    terms: Vec<u32>,
    tau: f32,
}

impl PrimitiveSource {
    pub fn new(scene: &EnvScene, info: &PoolInfo) -> Result<Self> {
        let compiled = CompiledScene::new(&scene.primitives)?;
        if !(scene.size_m.is_finite() && scene.size_m > 0.0) {
            return Err(Error::Invalid(format!(
                "scene size_m = {}: expected a finite number > 0",
                scene.size_m
            )));
        }
        if !scene.origin.is_finite() {
            return Err(Error::Invalid(format!(
                "scene origin {:?}: expected finite coordinates",
                scene.origin.to_array()
            )));
        }
        let voxel_m = scene.size_m / info.resolution as f32;
        let dilate_m = compiled
            .terms
            .iter()
            .map(|t| thin_dilation_vox(t, voxel_m, info.quant_step()) * voxel_m)
            .collect();
        Ok(Self {
            terms: compiled.terms,
            dilate_m,
            origin: scene.origin.to_array(),
            voxel_m,
            truncation: info.truncation_vox,
        })
    }

    /// World position of the voxel-space point `v`.
    fn world(&self, v: [f32; 3]) -> Vec3 {
        Vec3::new(
            self.origin[0] + v[0] * self.voxel_m,
            self.origin[1] + v[1] * self.voxel_m,
            self.origin[2] + v[2] * self.voxel_m,
        )
    }
}

impl Source for PrimitiveSource {
    type Ctx = Culled;

    fn root(&self) -> Culled {
        Culled {
            terms: (0..self.terms.len() as u32).collect(),
            tau: f32::INFINITY,
        }
    }

    fn split(
        &self,
        ctx: &Culled,
        min: [u32; 3],
        size: u32,
        brick: bool,
    ) -> std::result::Result<Culled, u32> {
        let half = size as f32 * 0.5;
        let c = self.world([
            min[0] as f32 + half,
            min[1] as f32 + half,
            min[2] as f32 + half,
        ]);
        let r = half * 2.0 * HALF_DIAG;
        let inv = 1.0 / self.voxel_m;
        let mut acc = f32::INFINITY;
        let tau = if brick {
            self.truncation
        } else {
            self.truncation + 2.0 * r
        };
        let mut keep = Vec::with_capacity(ctx.terms.len());
        for &i in &ctx.terms {
            let t = &self.terms[i as usize];
            let d = (t.distance(c) - self.dilate_m[i as usize]) * inv;
            acc = t.fold(acc, d);
            if d - r < tau {
                keep.push(i);
            }
        }
        if acc - r >= self.truncation {
            return Err(uniform_ref(false, fmin(acc - r, ctx.tau)));
        }
        if acc + r <= -self.truncation {
            return Err(uniform_ref(true, fmin(-acc - r, ctx.tau)));
        }
        Ok(Culled { terms: keep, tau })
    }

    fn fill(&self, ctx: &Culled, min: [u32; 3], out: &mut [f32; BRICK_VOXELS]) -> f32 {
        let inv = 1.0 / self.voxel_m;
        let axis = |a: usize| -> [f32; 8] {
            std::array::from_fn(|i| {
                self.origin[a] + (min[a] as f32 + i as f32 + 0.5) * self.voxel_m
            })
        };
        let (xs, ys, zs) = (axis(0), axis(1), axis(2));
        out.fill(f32::INFINITY);
        for &i in &ctx.terms {
            let i = i as usize;
            fill_term(&self.terms[i], self.dilate_m[i], &xs, &ys, &zs, out);
        }
        for v in out.iter_mut() {
            *v *= inv;
        }
        ctx.tau
    }
}

/// Folds one term, lowered by `dilate_m` metres, into a brick's samples; one loop per kind so
/// each vectorises.
fn fill_term(
    t: &Compiled,
    dilate_m: f32,
    xs: &[f32; 8],
    ys: &[f32; 8],
    zs: &[f32; 8],
    out: &mut [f32; 512],
) {
    #[inline(always)]
    fn each(
        t: &Compiled,
        dilate_m: f32,
        xs: &[f32; 8],
        ys: &[f32; 8],
        zs: &[f32; 8],
        out: &mut [f32; 512],
        f: impl Fn(&Compiled, Vec3) -> f32,
    ) {
        for (z, plane) in out.chunks_exact_mut(64).enumerate() {
            for (y, row) in plane.chunks_exact_mut(8).enumerate() {
                for (x, v) in row.iter_mut().enumerate() {
                    let d = f(t, Vec3::new(xs[x], ys[y], zs[z])) - dilate_m;
                    *v = if t.subtract {
                        fmax(*v, -d)
                    } else {
                        fmin(*v, d)
                    };
                }
            }
        }
    }
    // The same formulas as `Compiled::distance`, with the kind decided once per brick.
    match t.kind {
        Kind::Plane => each(t, dilate_m, xs, ys, zs, out, |t, q| t.distance_plane(q)),
        Kind::Sphere => each(t, dilate_m, xs, ys, zs, out, |t, q| t.distance_sphere(q)),
        Kind::Box => each(t, dilate_m, xs, ys, zs, out, |t, q| t.distance_box(q)),
        Kind::Capsule => each(t, dilate_m, xs, ys, zs, out, |t, q| t.distance_capsule(q)),
        Kind::Cylinder => each(t, dilate_m, xs, ys, zs, out, |t, q| t.distance_cylinder(q)),
        Kind::GateFrame => each(t, dilate_m, xs, ys, zs, out, |t, q| t.distance_gate(q)),
    }
}

/// A dense grid of signed distances at voxel centres (for example from
/// [`from_occupancy`](super::from_occupancy)).
#[derive(Clone, Debug)]
pub struct DenseField {
    /// Voxels per side (must equal the pool's resolution).
    pub resolution: u32,
    /// Min corner of the domain, metres.
    pub origin: [f32; 3],
    /// Voxel side, metres.
    pub voxel_size: f32,
    /// A free point, metres.
    pub spawn: [f32; 3],
    /// Signed distance at voxel centres, metres, index `x + R·y + R²·z`.
    pub values: Vec<f32>,
}

impl Source for DenseField {
    type Ctx = ();

    fn root(&self) {}

    fn split(&self, _: &(), _: [u32; 3], _: u32, _: bool) -> std::result::Result<(), u32> {
        Ok(())
    }

    fn fill(&self, _: &(), min: [u32; 3], out: &mut [f32; BRICK_VOXELS]) -> f32 {
        let r = self.resolution as usize;
        let inv = 1.0 / self.voxel_size;
        for z in 0..8 {
            for y in 0..8 {
                let row =
                    (min[0] as usize) + r * (min[1] as usize + y) + r * r * (min[2] as usize + z);
                for x in 0..8 {
                    out[x + 8 * y + 64 * z] = self.values[row + x] * inv;
                }
            }
        }
        f32::INFINITY
    }
}

/// Builds one env's tree from `source` (post-order, deduplicated within the env).
pub(crate) fn build_tree<S: Source>(source: &S, info: &PoolInfo, entry: EnvEntry) -> LocalTree {
    let mut b = TreeBuilder {
        source,
        info: *info,
        nodes: Vec::new(),
        bricks: Vec::new(),
        node_dedup: Dedup::default(),
        brick_dedup: Dedup::default(),
        samples: Box::new([0.0; BRICK_VOXELS]),
        voxels_evaluated: 0,
    };
    let root_ctx = source.root();
    let root = b.visit(&root_ctx, [0; 3], info.resolution, info.levels);
    LocalTree {
        nodes: b.nodes,
        bricks: b.bricks,
        entry: EnvEntry { root, ..entry },
        voxels_evaluated: b.voxels_evaluated,
    }
}

struct TreeBuilder<'a, S: Source> {
    source: &'a S,
    info: PoolInfo,
    nodes: Vec<Node>,
    bricks: Vec<Brick>,
    node_dedup: Dedup,
    brick_dedup: Dedup,
    samples: Box<[f32; BRICK_VOXELS]>,
    voxels_evaluated: u64,
}

impl<S: Source> TreeBuilder<'_, S> {
    /// The reference of the box `[min, min + size)` at `level` (0 = brick).
    fn visit(&mut self, ctx: &S::Ctx, min: [u32; 3], size: u32, level: u32) -> u32 {
        let child_ctx = match self.source.split(ctx, min, size, level == 0) {
            Err(uniform) => return uniform,
            Ok(c) => c,
        };
        if level == 0 {
            return self.brick(&child_ctx, min);
        }
        let half = size / 2;
        let children: [u32; 8] = std::array::from_fn(|i| {
            let m = [
                min[0] + half * (i as u32 & 1),
                min[1] + half * ((i as u32 >> 1) & 1),
                min[2] + half * ((i as u32 >> 2) & 1),
            ];
            self.visit(&child_ctx, m, half, level - 1)
        });
        for kind in [KIND_OUTSIDE, KIND_INSIDE] {
            if children.iter().all(|&c| ref_kind(c) == kind) {
                let bound = children
                    .iter()
                    .map(|&c| uniform_bound(c))
                    .fold(f32::INFINITY, f32::min);
                return uniform_ref(kind == KIND_INSIDE, bound);
            }
        }
        let node = Node::new(level, children);
        let h = node_hash(&node);
        make_ref(
            super::dag::KIND_NODE,
            self.node_dedup.intern(&mut self.nodes, node, h),
        )
    }

    fn brick(&mut self, ctx: &S::Ctx, min: [u32; 3]) -> u32 {
        let exact_to = self.source.fill(ctx, min, &mut self.samples);
        self.voxels_evaluated += BRICK_VOXELS as u64;
        let t = self.info.truncation_vox;
        let (lo, hi) = self
            .samples
            .iter()
            .fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), &v| {
                (fmin(lo, v), fmax(hi, v))
            });
        if lo >= t {
            return uniform_ref(false, fmin(lo, exact_to) - HALF_DIAG);
        }
        if hi <= -t {
            return uniform_ref(true, fmin(-hi, exact_to) - HALF_DIAG);
        }
        let mut brick = [0i8; BRICK_VOXELS];
        for (code, &v) in brick.iter_mut().zip(self.samples.iter()) {
            *code = self.info.encode(v);
        }
        let h = brick_hash(&brick);
        make_ref(
            super::dag::KIND_BRICK,
            self.brick_dedup.intern(&mut self.bricks, brick, h),
        )
    }
}

/// Checks that `BRICK` is what the loops above assume.
const _: () = assert!(BRICK == 8 && BRICK_VOXELS == 512);

/// What adding envs cost: trees built and voxels evaluated.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BuildStats {
    /// Envs added.
    pub envs: u64,
    /// Voxel samples computed (512 per brick filled; uniform boxes cost none).
    pub voxels_evaluated: u64,
}

/// Envs built in parallel before their trees are merged (bounds memory to one batch of trees).
const MERGE_BATCH: usize = 64;

impl super::dag::PoolBuilder {
    /// Voxelises `scenes` (in parallel on `launch`) and appends them as the next envs, in order.
    /// The result does not depend on the thread count.
    pub fn add_scenes(
        &mut self,
        scenes: &[EnvScene],
        launch: &crate::exec::Launch,
    ) -> Result<BuildStats> {
        use rayon::prelude::*;
        let info = self.info;
        let mut stats = BuildStats::default();
        for batch in scenes.chunks(MERGE_BATCH) {
            let trees = launch.install(|| {
                batch
                    .par_iter()
                    .enumerate()
                    .map(|(i, scene)| {
                        let source = PrimitiveSource::new(scene, &info).map_err(|e| {
                            Error::Invalid(format!("env {}: {e}", self.n_envs() + i))
                        })?;
                        let entry = EnvEntry {
                            origin: scene.origin.to_array(),
                            voxel_size: source.voxel_m,
                            spawn: scene.spawn.to_array(),
                            root: 0,
                        };
                        Ok(build_tree(&source, &info, entry))
                    })
                    .collect::<Result<Vec<_>>>()
            })?;
            for tree in trees {
                stats.envs += 1;
                stats.voxels_evaluated += tree.voxels_evaluated;
                self.merge(tree);
            }
        }
        Ok(stats)
    }

    /// Appends a dense field (for example from [`from_occupancy`](super::from_occupancy)) as the
    /// next env.
    pub fn add_dense(&mut self, field: &DenseField) -> Result<BuildStats> {
        let r = self.info.resolution;
        if field.resolution != r {
            return Err(Error::Invalid(format!(
                "dense field resolution {}: expected the pool's {r}",
                field.resolution
            )));
        }
        let n = (r as usize).pow(3);
        if field.values.len() != n {
            return Err(Error::Invalid(format!(
                "dense field has {} values: expected {r}³ = {n}",
                field.values.len()
            )));
        }
        if !field.voxel_size.is_finite()
            || field.voxel_size <= 0.0
            || !field
                .origin
                .iter()
                .chain(&field.spawn)
                .all(|v| v.is_finite())
        {
            return Err(Error::Invalid(
                "dense field: origin, spawn and voxel_size must be finite, voxel_size > 0".into(),
            ));
        }
        if let Some(i) = field.values.iter().position(|v| v.is_nan()) {
            return Err(Error::Invalid(format!("dense field value {i} is NaN")));
        }
        let entry = EnvEntry {
            origin: field.origin,
            voxel_size: field.voxel_size,
            spawn: field.spawn,
            root: 0,
        };
        let tree = build_tree(field, &self.info, entry);
        let stats = BuildStats {
            envs: 1,
            voxels_evaluated: tree.voxels_evaluated,
        };
        self.merge(tree);
        Ok(stats)
    }
}
