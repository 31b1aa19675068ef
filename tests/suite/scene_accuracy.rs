//! The ray-hit accuracy contract against an exact float64 oracle, for every scene preset: random
//! rays, rays grazing surfaces, and camera rays; starts near surfaces; door and gate openings.
//!
//! # The oracle
//!
//! Each env's exported primitives are re-evaluated here in `f64` (the same analytic formulas and
//! CSG fold as the library's, written out again), and rays are marched on that field: sphere
//! tracing far from surfaces, then samples every 1/16 voxel, each transition placed by bisection.
//!
//! # The contract checked (voxels of the env's grid)
//!
//! The ray cast reports the first zero of the trilinear interpolant `I` of the stored samples.
//! Where the exact field `F` is convex over a cell, Jensen's inequality gives `I ≥ F − q/2`
//! (`q` the code step): the stored surface never bulges out of the true solid by more than `q/2`;
//! where `F` is concave, `I ≤ F + q/2`: it never shrinks into it by more than that. Only where `F`
//! bends the other way (a convex edge the ray clips, a concave corner it passes) may the stored
//! surface sit up to the Jensen gap `√3/2` voxel off. So, per point `p` of the ray, with `δ = q/2`
//! plus a 1/64-voxel allowance for `f32` arithmetic:
//!
//! - `δ_out(p) = δ` where `F` is convex around `p`, else `δ + √3/2`;
//! - `δ_in(p) = δ` where `F` is concave around `p`, else `δ + √3/2`;
//! - `t_out` = where the ray first comes within `δ_out` of a solid, `t_in` = where it first gets
//!   `δ_in` deep into one (so `t_out ≤ t* ≤ t_in` for the exact first hit `t*`; on a face hit at
//!   incidence θ both are within `δ / cos θ` of `t*`).
//!
//! A reported hit at `t` must satisfy `t_out − ¼ ≤ t ≤ t_in + ¼`; a reported miss needs no `t_in`
//! (the ray never gets `δ_in` deep before the domain's far side); a start reported inside (`t = 0`)
//! is such a hit, so it lies within `δ_out + ¼` voxel of a solid. Every ray is checked; the
//! plain statistic "within ¼ voxel of `t*`" is printed beside it.
//!
//! # Thin solids
//!
//! A union term thinner than a voxel or so is stored dilated by `δ = max(0, ½√k + q/2 + 1/32 − h)`
//! voxels (`h` its inradius, `k` its thin section directions: 1 plate, 2 bar, 3 ball; the rule of
//! `scene::build`, restated here in `f64`). The window above is computed on that dilated field
//! `F'` (it is what the grid samples; `F' = F` for every thicker term), so a hit on a thin solid
//! lies at most `δ + δ_out` voxel outside its true surface. And the thin contract: a ray crossing
//! a thin term's core (its points of greatest depth, at least √3 voxel from the core's ends and
//! clear of subtractions) hits at or before the core (`thin_solids_are_hit`: rooms at R = 32
//! and 64, the `gates` bars at R = 256, forest trunks at R = 64; random and grazing rays).

use rayon::prelude::*;
use trackgen::exec::Launch;
use trackgen::geom::{Quat, Vec3};
use trackgen::rng::LaneRng;
use trackgen::scene::{
    build_pool, cast_rays, generate_envs, CastOptions, EnvScene, PinholeCamera, Pose, RayEnvs,
    RayOutputs, ScenePool, ScenePreset, Shape, HIT, MISS,
};

/// One primitive in f64: kind, subtraction, centre, local axes, parameters.
#[derive(Clone, Copy)]
enum Kind {
    Plane,
    Box,
    Sphere,
    Capsule,
    Cylinder,
    Gate,
}

#[derive(Clone, Copy)]
struct Term {
    kind: Kind,
    subtract: bool,
    c: [f64; 3],
    axes: [[f64; 3]; 3],
    p: [f64; 6],
}

type V = [f64; 3];

fn v64(v: Vec3) -> V {
    [v.x as f64, v.y as f64, v.z as f64]
}
fn sub(a: V, b: V) -> V {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}
fn dot(a: V, b: V) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}
fn len(a: V) -> f64 {
    dot(a, a).sqrt()
}
fn rect(qx: f64, qy: f64) -> f64 {
    let (ox, oy) = (qx.max(0.0), qy.max(0.0));
    (ox * ox + oy * oy).sqrt() + qx.max(qy).min(0.0)
}

/// Rotation axes of `q` in f64 (normalised there).
fn axes64(q: Quat) -> [[f64; 3]; 3] {
    let [x, y, z, w] = [q.x as f64, q.y as f64, q.z as f64, q.w as f64];
    let n = (x * x + y * y + z * z + w * w).sqrt();
    let (x, y, z, w) = (x / n, y / n, z / n, w / n);
    [
        [
            1.0 - 2.0 * (y * y + z * z),
            2.0 * (x * y + w * z),
            2.0 * (x * z - w * y),
        ],
        [
            2.0 * (x * y - w * z),
            1.0 - 2.0 * (x * x + z * z),
            2.0 * (y * z + w * x),
        ],
        [
            2.0 * (x * z + w * y),
            2.0 * (y * z - w * x),
            1.0 - 2.0 * (x * x + y * y),
        ],
    ]
}

impl Term {
    fn new(prim: &trackgen::scene::Primitive) -> Self {
        let subtract = prim.op == trackgen::scene::Op::Subtract;
        let id = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
        let t = |kind, c, axes, p| Term {
            kind,
            subtract,
            c,
            axes,
            p,
        };
        match &prim.shape {
            Shape::Plane { normal, offset } => {
                let n = v64(*normal);
                let l = len(n);
                t(
                    Kind::Plane,
                    [0.0; 3],
                    [[n[0] / l, n[1] / l, n[2] / l], id[1], id[2]],
                    [*offset as f64, 0.0, 0.0, 0.0, 0.0, 0.0],
                )
            }
            Shape::Box {
                center,
                rotation,
                half_extents: h,
            } => t(
                Kind::Box,
                v64(*center),
                axes64(*rotation),
                [h.x as f64, h.y as f64, h.z as f64, 0.0, 0.0, 0.0],
            ),
            Shape::RoundedBox {
                center,
                rotation,
                half_extents: h,
                radius,
            } => {
                let r = *radius as f64;
                t(
                    Kind::Box,
                    v64(*center),
                    axes64(*rotation),
                    [h.x as f64 - r, h.y as f64 - r, h.z as f64 - r, r, 0.0, 0.0],
                )
            }
            Shape::Sphere { center, radius } => t(
                Kind::Sphere,
                v64(*center),
                id,
                [*radius as f64, 0.0, 0.0, 0.0, 0.0, 0.0],
            ),
            Shape::Capsule { a, b, radius } => {
                let ba = sub(v64(*b), v64(*a));
                t(
                    Kind::Capsule,
                    v64(*a),
                    id,
                    [ba[0], ba[1], ba[2], *radius as f64, 0.0, 0.0],
                )
            }
            Shape::Cylinder {
                center,
                rotation,
                radius,
                half_height,
            } => t(
                Kind::Cylinder,
                v64(*center),
                axes64(*rotation),
                [*radius as f64, *half_height as f64, 0.0, 0.0, 0.0, 0.0],
            ),
            Shape::GateFrame {
                center,
                rotation,
                outer_half,
                inner_half,
                half_depth,
            } => t(
                Kind::Gate,
                v64(*center),
                axes64(*rotation),
                [
                    outer_half.x as f64,
                    outer_half.y as f64,
                    inner_half.x as f64,
                    inner_half.y as f64,
                    *half_depth as f64,
                    0.0,
                ],
            ),
        }
    }

    fn local(&self, q: V) -> V {
        let d = sub(q, self.c);
        [
            dot(self.axes[0], d),
            dot(self.axes[1], d),
            dot(self.axes[2], d),
        ]
    }

    /// The primitive's exact signed distance at `q`.
    fn distance(&self, q: V) -> f64 {
        let p = &self.p;
        match self.kind {
            Kind::Plane => dot(self.axes[0], q) - p[0],
            Kind::Sphere => len(sub(q, self.c)) - p[0],
            Kind::Box => {
                let l = self.local(q);
                let e = [l[0].abs() - p[0], l[1].abs() - p[1], l[2].abs() - p[2]];
                len([e[0].max(0.0), e[1].max(0.0), e[2].max(0.0)])
                    + e[0].max(e[1]).max(e[2]).min(0.0)
                    - p[3]
            }
            Kind::Capsule => {
                let pa = sub(q, self.c);
                let ba = [p[0], p[1], p[2]];
                let l2 = dot(ba, ba);
                let h = if l2 > 0.0 {
                    (dot(pa, ba) / l2).clamp(0.0, 1.0)
                } else {
                    0.0
                };
                len([pa[0] - ba[0] * h, pa[1] - ba[1] * h, pa[2] - ba[2] * h]) - p[3]
            }
            Kind::Cylinder => {
                let l = self.local(q);
                rect((l[0] * l[0] + l[1] * l[1]).sqrt() - p[0], l[2].abs() - p[1])
            }
            Kind::Gate => {
                let l = self.local(q);
                let (y, z) = (l[1].abs(), l[2].abs());
                let outer = rect(y - p[0], z - p[1]);
                let inner = rect(y - p[2], z - p[3]);
                rect(outer.max(-inner), l[0].abs() - p[4])
            }
        }
    }
}

/// `√3`: how far a section's half extents may exceed its inradius and count as thin, voxels.
const THIN_SPAN_VOX: f64 = 1.732_050_807_568_877_2;
/// The depth (voxels) below zero a dilated thin core keeps in the interpolant.
const THIN_MARGIN_VOX: f64 = 1.0 / 32.0;

impl Term {
    /// The half extents (metres) of each of the term's sections: its inradius is their minimum,
    /// and its thin directions those within √3 voxel of that; none for planes.
    fn sections(&self) -> Vec<[f64; 3]> {
        let p = &self.p;
        match self.kind {
            Kind::Plane => vec![],
            Kind::Box => vec![[p[0] + p[3], p[1] + p[3], p[2] + p[3]]],
            Kind::Sphere => vec![[p[0]; 3]],
            Kind::Capsule => vec![[p[3], p[3], p[3] + 0.5 * len([p[0], p[1], p[2]])]],
            Kind::Cylinder => vec![[p[0], p[0], p[1]]],
            Kind::Gate => vec![
                [p[4], 0.5 * (p[0] - p[2]), f64::INFINITY],
                [p[4], 0.5 * (p[1] - p[3]), f64::INFINITY],
            ],
        }
    }

    /// The thin-solid dilation of the term, metres (0 for subtractions and thick terms).
    fn dilation(&self, voxel: f64, half_q: f64) -> f64 {
        if self.subtract {
            return 0.0;
        }
        let need = |half: &[f64; 3]| {
            let h = half.iter().copied().fold(f64::INFINITY, f64::min) / voxel;
            let k = half
                .iter()
                .filter(|&&e| e / voxel - h < THIN_SPAN_VOX)
                .count();
            (0.5 * (k as f64).sqrt() + half_q + THIN_MARGIN_VOX - h).max(0.0)
        };
        self.sections().iter().map(need).fold(0.0, f64::max) * voxel
    }
}

/// One env's exact field in f64 and its grid.
struct Oracle {
    terms: Vec<Term>,
    /// Per term, its thin-solid dilation, metres.
    dilate: Vec<f64>,
    origin: V,
    size: f64,
    voxel: f64,
    /// Half a code step, voxels.
    half_q: f64,
}

/// The Jensen gap: how far the interpolant can sit from a field that bends the wrong way, voxels.
const JENSEN_VOX: f64 = 0.866_026;
/// The allowance for `f32` arithmetic in the cast, voxels.
const F32_VOX: f64 = 1.0 / 64.0;
/// The contract: along the ray, voxels.
const ALONG_VOX: f64 = 0.25;
/// Oracle samples per voxel along a ray near surfaces.
const FINE: f64 = 16.0;

impl Oracle {
    fn new(scene: &EnvScene, resolution: u32, truncation_vox: f32) -> Self {
        let size = scene.size_m as f64;
        let voxel = size / resolution as f64;
        let half_q = 0.5 * truncation_vox as f64 / 127.0;
        let terms: Vec<Term> = scene.primitives.iter().map(Term::new).collect();
        Self {
            dilate: terms.iter().map(|t| t.dilation(voxel, half_q)).collect(),
            terms,
            origin: v64(scene.origin),
            size,
            voxel,
            half_q,
        }
    }

    /// The CSG fold at `q` with thin terms dilated (what the grid samples), metres.
    fn field(&self, q: V) -> f64 {
        let mut acc = f64::INFINITY;
        for (t, dil) in self.terms.iter().zip(&self.dilate) {
            let d = t.distance(q) - dil;
            acc = if t.subtract { acc.max(-d) } else { acc.min(d) };
        }
        acc
    }

    /// The exact CSG fold at `q` (no dilation), metres.
    fn exact_field(&self, q: V) -> f64 {
        let mut acc = f64::INFINITY;
        for t in &self.terms {
            let d = t.distance(q);
            acc = if t.subtract { acc.max(-d) } else { acc.min(d) };
        }
        acc
    }

    /// `(convex, concave)`: the sign of every second difference of the field around `q`, over
    /// steps of ½ and 1 voxel along the 13 lattice directions.
    fn bend(&self, q: V, fq: f64) -> (bool, bool) {
        let tol = 1e-6 * self.voxel;
        let (mut convex, mut concave) = (true, true);
        for dir in DIRS {
            let l = len(dir);
            for step in [0.5, 1.0] {
                let s = step * self.voxel / l;
                let a = [q[0] + s * dir[0], q[1] + s * dir[1], q[2] + s * dir[2]];
                let b = [q[0] - s * dir[0], q[1] - s * dir[1], q[2] - s * dir[2]];
                let second = self.field(a) + self.field(b) - 2.0 * fq;
                convex &= second >= -tol;
                concave &= second <= tol;
                if !convex && !concave {
                    return (false, false);
                }
            }
        }
        (convex, concave)
    }

    /// `(δ_out, δ_in)` at `q`, metres (see the module doc).
    fn tolerances(&self, q: V, fq: f64) -> (f64, f64) {
        let base = self.half_q + F32_VOX;
        let (convex, concave) = self.bend(q, fq);
        let loose = |tight: bool| if tight { base } else { base + JENSEN_VOX };
        let rim = self.rim(q);
        (
            loose(convex) * self.voxel + rim,
            loose(concave) * self.voxel + rim,
        )
    }

    /// ½ voxel in the domain's rim (the half voxel outside the outermost sample centres, where
    /// the stored field is extended constant, not interpolated), else 0; metres.
    fn rim(&self, q: V) -> f64 {
        let h = 0.5 * self.voxel;
        let inside =
            (0..3).all(|a| q[a] >= self.origin[a] + h && q[a] <= self.origin[a] + self.size - h);
        if inside {
            0.0
        } else {
            h
        }
    }

    /// The parameter where the ray leaves the domain (`None` if it never meets it), and where it
    /// enters it (0 from inside).
    fn domain(&self, o: V, d: V) -> Option<(f64, f64)> {
        let (mut lo, mut hi) = (0.0f64, f64::INFINITY);
        for a in 0..3 {
            if d[a] != 0.0 {
                let t0 = (self.origin[a] - o[a]) / d[a];
                let t1 = (self.origin[a] + self.size - o[a]) / d[a];
                lo = lo.max(t0.min(t1));
                hi = hi.min(t0.max(t1));
            } else if !(o[a] >= self.origin[a] && o[a] <= self.origin[a] + self.size) {
                return None;
            }
        }
        (lo <= hi).then_some((lo, hi))
    }

    /// The oracle's answer for a ray over `[t0, t1]`: `(t*, t_out, t_in)`, metres.
    fn truth(&self, o: V, d: V, t0: f64, t1: f64) -> Truth {
        let at = |t: f64| [o[0] + t * d[0], o[1] + t * d[1], o[2] + t * d[2]];
        let band = (self.half_q + F32_VOX + JENSEN_VOX) * self.voxel;
        let fine = self.voxel / FINE;
        // Predicates: within δ_out, exact solid, δ_in deep.
        let tight = (self.half_q + F32_VOX) * self.voxel;
        let preds = |t: f64| -> [bool; 3] {
            let q = at(t);
            let f = self.field(q);
            if f > band + self.rim(q) {
                return [false; 3];
            }
            if f <= -band || (f <= tight && f > -tight) {
                // Both answers are decided without the field's bend.
                return [f <= tight + self.rim(q), f <= 0.0, f <= -band - self.rim(q)];
            }
            let (d_out, d_in) = self.tolerances(q, f);
            [f <= d_out, f <= 0.0, f <= -d_in]
        };
        let mut found: [Option<f64>; 3] = [None; 3];
        let mut t = t0;
        let mut prev = t0;
        loop {
            let f = self.field(at(t));
            let now = if f > band + fine {
                [false; 3]
            } else {
                preds(t)
            };
            for k in 0..3 {
                if found[k].is_none() && now[k] {
                    found[k] = Some(if t == t0 {
                        t0
                    } else {
                        // The first transition in (prev, t].
                        let (mut lo, mut hi) = (prev, t);
                        for _ in 0..14 {
                            let mid = 0.5 * (lo + hi);
                            if preds(mid)[k] {
                                hi = mid;
                            } else {
                                lo = mid;
                            }
                        }
                        hi
                    });
                }
            }
            if found[2].is_some() || t >= t1 {
                break;
            }
            prev = t;
            let step = if f > band + fine { f - band } else { fine };
            t = (t + step).min(t1);
        }
        Truth {
            star: found[1],
            out: found[0],
            inn: found[2],
        }
    }

    /// The exact field's unit gradient at `q`.
    fn normal(&self, q: V) -> V {
        let e = 1e-5 * self.voxel;
        let g: V = std::array::from_fn(|a| {
            let (mut p, mut m) = (q, q);
            p[a] += e;
            m[a] -= e;
            self.field(p) - self.field(m)
        });
        let l = len(g);
        [g[0] / l, g[1] / l, g[2] / l]
    }
}

/// The 13 lattice directions (axes, face diagonals, body diagonals), one of each ± pair.
const DIRS: [V; 13] = [
    [1.0, 0.0, 0.0],
    [0.0, 1.0, 0.0],
    [0.0, 0.0, 1.0],
    [1.0, 1.0, 0.0],
    [1.0, -1.0, 0.0],
    [1.0, 0.0, 1.0],
    [1.0, 0.0, -1.0],
    [0.0, 1.0, 1.0],
    [0.0, 1.0, -1.0],
    [1.0, 1.0, 1.0],
    [1.0, 1.0, -1.0],
    [1.0, -1.0, 1.0],
    [-1.0, 1.0, 1.0],
];

struct Truth {
    star: Option<f64>,
    out: Option<f64>,
    inn: Option<f64>,
}

/// Rays of one env: origins, unit directions, and a label per ray family.
struct Rays {
    o: Vec<[f32; 3]>,
    d: Vec<[f32; 3]>,
    family: Vec<&'static str>,
}

impl Rays {
    fn push(&mut self, o: [f32; 3], d: V, family: &'static str) {
        let l = len(d);
        self.o.push(o);
        self.d
            .push([(d[0] / l) as f32, (d[1] / l) as f32, (d[2] / l) as f32]);
        self.family.push(family);
    }
}

fn random_dir(rng: &mut LaneRng) -> V {
    loop {
        let v = [
            rng.signed() as f64,
            rng.signed() as f64,
            rng.signed() as f64,
        ];
        let l2 = dot(v, v);
        if l2 > 1e-4 && l2 <= 1.0 {
            return v;
        }
    }
}

/// Random rays from inside the domain, grazing rays along surfaces the random rays found, and
/// camera rays from the spawn point.
fn rays_for(
    oracle: &Oracle,
    scene: &EnvScene,
    env: usize,
    n_random: usize,
    cameras: usize,
) -> Rays {
    let mut rng = LaneRng::new(77, env as u64, 0, 5);
    let mut rays = Rays {
        o: Vec::new(),
        d: Vec::new(),
        family: Vec::new(),
    };
    let (lo, hi) = (
        oracle.origin[0] + oracle.voxel,
        oracle.origin[0] + oracle.size - oracle.voxel,
    );
    let z_lo = oracle.origin[2] + oracle.voxel;
    let mut hits = Vec::new();
    for _ in 0..n_random {
        let o = [
            rng.range(lo as f32, hi as f32),
            rng.range(lo as f32, hi as f32),
            // Most of the domain's height is open sky: keep origins near the scene.
            rng.range(z_lo as f32, (z_lo + 0.35 * oracle.size) as f32),
        ];
        let d = random_dir(&mut rng);
        rays.push(o, d, "random");
        let (o64, d64) = (
            o.map(|v| v as f64),
            *rays.d.last().map(|d| d.map(|v| v as f64)).as_ref().unwrap(),
        );
        if oracle.field(o64) > oracle.voxel {
            if let Some((t0, t1)) = oracle.domain(o64, d64) {
                if let Some(ts) = oracle.truth(o64, d64, t0, t1).star {
                    hits.push([
                        o64[0] + ts * d64[0],
                        o64[1] + ts * d64[1],
                        o64[2] + ts * d64[2],
                    ]);
                }
            }
        }
    }
    // Grazing: along the tangent plane at a surface point, ±0.6 voxel off it, a little tilted.
    for p in hits.iter().take(n_random / 2) {
        let n = oracle.normal(*p);
        let r = random_dir(&mut rng);
        let rn = dot(r, n);
        let mut u = [r[0] - rn * n[0], r[1] - rn * n[1], r[2] - rn * n[2]];
        let ul = len(u);
        if ul < 1e-3 {
            continue;
        }
        let tilt = rng.range(-0.05, 0.05) as f64;
        u = std::array::from_fn(|a| u[a] / ul + tilt * n[a]);
        let off = rng.range(-0.6, 0.6) as f64 * oracle.voxel;
        let back = rng.range(1.0, 12.0) as f64 * oracle.voxel;
        let o = std::array::from_fn(|a| (p[a] + off * n[a] - back * u[a]) as f32);
        rays.push(o, u, "grazing");
    }
    // Camera: 32×24 images from the spawn point at `cameras` headings.
    let cam = PinholeCamera::new(32, 24, 1.2).unwrap();
    let spawn = scene.spawn;
    for k in 0..cameras {
        let (s, c) = trackgen::math::sin_cos(k as f32 * 1.7 + 0.3);
        let body = Pose::look_at(spawn, spawn + Vec3::new(c, s, -0.15));
        let n = cam.rays_per_env();
        let (mut o, mut d) = (vec![[0.0f32; 3]; n], vec![[0.0f32; 3]; n]);
        cam.rays(&[body], &Pose::IDENTITY, &mut o, &mut d).unwrap();
        for (oi, di) in o.into_iter().zip(d) {
            rays.push(oi, di.map(|v| v as f64), "camera");
        }
    }
    rays
}

/// Per family: rays, hits reported, within ¼ voxel of t*, contract failures (with a message).
#[derive(Default)]
struct Tally {
    rays: usize,
    hits: usize,
    plain: usize,
    zero_starts: usize,
    failures: Vec<String>,
}

/// Casts `rays` in env `env` of `pool` and checks each against the oracle.
fn check_env(
    name: &str,
    pool: &ScenePool,
    env: usize,
    oracle: &Oracle,
    rays: &Rays,
) -> Vec<(&'static str, Tally)> {
    let n = rays.o.len();
    let mut dist = vec![0.0f32; n];
    let mut hit = vec![0u8; n];
    let mut steps = vec![0u32; n];
    let opts = CastOptions {
        max_distance: 1000.0,
        no_hit_value: -1.0,
        max_steps: 8192,
    };
    let envs = vec![env as u32; n];
    cast_rays(
        &pool.view(),
        RayEnvs::PerRay(&envs),
        &rays.o,
        &rays.d,
        &opts,
        RayOutputs {
            distance: &mut dist,
            hit: &mut hit,
            steps: &mut steps,
        },
        &Launch::new(),
    )
    .unwrap();
    let vox = oracle.voxel;
    let results: Vec<(usize, bool, bool, bool, Option<String>)> = (0..n)
        .into_par_iter()
        .map(|i| {
            let o = rays.o[i].map(|v| v as f64);
            let d = rays.d[i].map(|v| v as f64);
            let (t, h) = (dist[i] as f64, hit[i]);
            let truth = oracle
                .domain(o, d)
                .map(|(t0, t1)| oracle.truth(o, d, t0, t1))
                .unwrap_or(Truth {
                    star: None,
                    out: None,
                    inn: None,
                });
            let what = || {
                format!(
                    "{name} env {env} {} ray {i}: o {:?} d {:?}: cast ({t}, {h}), exact t* {:?}, \
                     window [{:?}, {:?}] (voxel {vox})",
                    rays.family[i], rays.o[i], rays.d[i], truth.star, truth.out, truth.inn
                )
            };
            let failure = match h {
                HIT => {
                    let early = truth.out.map_or(true, |to| t < to - ALONG_VOX * vox);
                    let late = truth.inn.is_some_and(|ti| t > ti + ALONG_VOX * vox);
                    (early || late)
                        .then(|| format!("{}: {}", if early { "early" } else { "late" }, what()))
                }
                MISS => truth.inn.map(|_| format!("missed: {}", what())),
                _ => Some(format!("step budget: {}", what())),
            };
            let plain = match (h, truth.star) {
                (HIT, Some(ts)) => (t - ts).abs() <= ALONG_VOX * vox,
                (MISS, None) => true,
                _ => false,
            };
            let family = ["random", "grazing", "camera"]
                .iter()
                .position(|f| *f == rays.family[i])
                .unwrap();
            (family, h == HIT, plain, h == HIT && t == 0.0, failure)
        })
        .collect();
    let mut tallies: Vec<(&'static str, Tally)> = ["random", "grazing", "camera"]
        .into_iter()
        .map(|f| (f, Tally::default()))
        .collect();
    for (family, h, plain, zero, failure) in results {
        let t = &mut tallies[family].1;
        t.rays += 1;
        t.hits += h as usize;
        t.plain += plain as usize;
        t.zero_starts += zero as usize;
        if let Some(f) = failure {
            t.failures.push(f);
        }
    }
    tallies
}

/// The contract for `preset` at `resolution` over envs `0..n_envs`: `n_random` random rays per
/// env, grazing rays along up to half as many of their hits, and `camera` images per env.
fn check_preset(
    preset_name: &str,
    resolution: Option<u32>,
    n_envs: u64,
    n_random: usize,
    cameras: usize,
) {
    let preset = ScenePreset::load(preset_name).unwrap();
    let launch = Launch::new();
    let scenes = generate_envs(&preset, 0, 0, 0..n_envs, &launch).unwrap();
    let res = resolution.unwrap_or(preset.resolution);
    let pool = build_pool(&scenes, res, preset.truncation_vox, &launch).unwrap();
    let mut failures = Vec::new();
    for (env, scene) in scenes.iter().enumerate() {
        let oracle = Oracle::new(scene, res, preset.truncation_vox);
        let rays = rays_for(&oracle, scene, env, n_random, cameras);
        for (family, t) in check_env(preset_name, &pool, env, &oracle, &rays) {
            eprintln!(
                "{preset_name} R={res} env {env} {family}: {} rays, {} hits, {} within ¼ voxel of t* \
                 ({:.4}), {} starts reported inside, {} outside the contract",
                t.rays,
                t.hits,
                t.plain,
                t.plain as f64 / t.rays.max(1) as f64,
                t.zero_starts,
                t.failures.len()
            );
            failures.extend(t.failures);
        }
    }
    for f in failures.iter().take(12) {
        eprintln!("{f}");
    }
    assert!(
        failures.is_empty(),
        "{preset_name}: {} rays outside the contract",
        failures.len()
    );
}

// CI size: one env per preset, a few seconds in all. The `_wide` versions (`cargo test -- --ignored
// scene_accuracy`) cover four envs per preset with ten times the rays.

#[test]
fn rooms_hits_within_a_quarter_voxel() {
    check_preset("rooms", None, 1, 200, 1);
}

#[test]
fn forest_hits_within_a_quarter_voxel() {
    check_preset("forest", None, 1, 200, 1);
}

#[test]
fn gates_hits_within_a_quarter_voxel() {
    check_preset("gates", None, 1, 200, 1);
}

#[test]
#[ignore = "minutes: the wide oracle sweep, run by hand"]
fn rooms_hits_within_a_quarter_voxel_wide() {
    check_preset("rooms", None, 4, 2000, 4);
    check_preset("rooms", Some(256), 2, 2000, 4);
}

#[test]
#[ignore = "minutes: the wide oracle sweep, run by hand"]
fn forest_hits_within_a_quarter_voxel_wide() {
    check_preset("forest", None, 4, 2000, 4);
}

#[test]
#[ignore = "minutes: the wide oracle sweep, run by hand"]
fn gates_hits_within_a_quarter_voxel_wide() {
    check_preset("gates", None, 2, 2000, 4);
}

/// Casts single rays of env `env` of `pool`: `(distance, hit)` per ray.
fn cast_few(pool: &ScenePool, env: usize, rays: &[([f32; 3], [f32; 3])]) -> Vec<(f32, u8)> {
    let n = rays.len();
    let (mut dist, mut hit, mut steps) = (vec![0.0f32; n], vec![0u8; n], vec![0u32; n]);
    let o: Vec<_> = rays.iter().map(|r| r.0).collect();
    let d: Vec<_> = rays.iter().map(|r| r.1).collect();
    cast_rays(
        &pool.view(),
        RayEnvs::PerRay(&vec![env as u32; n]),
        &o,
        &d,
        &CastOptions::new(1000.0),
        RayOutputs {
            distance: &mut dist,
            hit: &mut hit,
            steps: &mut steps,
        },
        &Launch::new(),
    )
    .unwrap();
    dist.into_iter().zip(hit).collect()
}

/// The exact first hit of a ray (metres), from the oracle.
fn exact_t(oracle: &Oracle, o: [f32; 3], d: [f32; 3]) -> Option<f64> {
    let (o, d) = (o.map(|v| v as f64), d.map(|v| v as f64));
    let (t0, t1) = oracle.domain(o, d)?;
    oracle.truth(o, d, t0, t1).star
}

/// Door widths: from the middle of every door of four `rooms` envs, rays to both jambs and up to
/// the lintel hit within ¼ voxel of the exact faces, and each width (the two jamb distances
/// summed) is within ¼ voxel of the exact width. (Gate openings are not in this test: at the
/// `gates` preset's resolution their bars are thinner than a voxel, below what the stored field
/// resolves; see the README's accuracy contract.)
#[test]
fn openings_keep_their_width() {
    let launch = Launch::new();
    let mut widths = 0;
    for (name, n_envs) in [("rooms", 4u64)] {
        let preset = ScenePreset::load(name).unwrap();
        let scenes = generate_envs(&preset, 0, 0, 0..n_envs, &launch).unwrap();
        let pool = build_pool(&scenes, preset.resolution, preset.truncation_vox, &launch).unwrap();
        for (env, scene) in scenes.iter().enumerate() {
            let oracle = Oracle::new(scene, preset.resolution, preset.truncation_vox);
            let vox = oracle.voxel;
            for prim in &scene.primitives {
                // (centre, the two opposite directions across the opening, further single rays)
                let (c, across, more): (Vec3, [V; 2], Vec<V>) = match (&prim.shape, prim.op) {
                    (
                        Shape::Box {
                            center,
                            half_extents: h,
                            ..
                        },
                        trackgen::scene::Op::Subtract,
                    ) => {
                        let along: V = if h.x > h.y {
                            [1.0, 0.0, 0.0]
                        } else {
                            [0.0, 1.0, 0.0]
                        };
                        (*center, [along, along.map(|v| -v)], vec![[0.0, 0.0, 1.0]])
                    }
                    (
                        Shape::GateFrame {
                            center, rotation, ..
                        },
                        _,
                    ) => {
                        let ax = axes64(*rotation);
                        (
                            *center,
                            [ax[1], ax[1].map(|v| -v)],
                            vec![ax[2], ax[2].map(|v| -v)],
                        )
                    }
                    _ => continue,
                };
                let o = c.to_array();
                let dirs: Vec<V> = across.iter().chain(more.iter()).copied().collect();
                let rays: Vec<_> = dirs.iter().map(|d| (o, d.map(|v| v as f32))).collect();
                let cast = cast_few(&pool, env, &rays);
                let exact: Vec<_> = rays.iter().map(|r| exact_t(&oracle, r.0, r.1)).collect();
                for (k, ((t, h), te)) in cast.iter().zip(&exact).enumerate() {
                    let te = te.expect("an opening is bounded by its jambs and lintel");
                    assert!(
                        *h == HIT && (*t as f64 - te).abs() <= ALONG_VOX * vox,
                        "{name} env {env}: opening at {o:?}, ray {k} {:?}: cast ({t}, {h}), exact {te}",
                        rays[k].1
                    );
                }
                let width = cast[0].0 as f64 + cast[1].0 as f64;
                let exact_width = exact[0].unwrap() + exact[1].unwrap();
                assert!(
                    (width - exact_width).abs() <= ALONG_VOX * vox,
                    "{name} env {env}: opening at {o:?} is {width} m wide, exactly {exact_width} m"
                );
                widths += 1;
            }
        }
    }
    assert!(widths > 20, "only {widths} openings measured");
}

/// The cases the accuracy issue reported, against the oracle's window: a start on a brick face
/// 1.42 voxels clear of the nearest surface (forest, R = 128, env 4: it read as inside), and a
/// ray 0.16 voxel from a wall face and parallel to it (rooms, R = 256, env 3: it stopped 2.4
/// voxels early; its hit is now at the concave corner ahead, within that corner's Jensen gap).
#[test]
fn reported_cases_hit_within_a_quarter_voxel() {
    let launch = Launch::new();
    let cases = [
        (
            "forest",
            128u32,
            4u64,
            [4.0f32, 14.00785, 4.01688],
            [1.0f32, 0.0, 0.0],
        ),
        ("rooms", 256, 3, [-4.0, 0.11, 1.0], [1.0, 0.0, 0.0]),
    ];
    for (name, res, env, o, d) in cases {
        let preset = ScenePreset::load(name).unwrap();
        let scene = generate_envs(&preset, 0, 0, env..env + 1, &launch)
            .unwrap()
            .remove(0);
        let pool = build_pool(
            std::slice::from_ref(&scene),
            res,
            preset.truncation_vox,
            &launch,
        )
        .unwrap();
        let oracle = Oracle::new(&scene, res, preset.truncation_vox);
        let te = exact_t(&oracle, o, d).expect("both rays hit something");
        let rays = Rays {
            o: vec![o],
            d: vec![d],
            family: vec!["random"],
        };
        let tally = check_env(name, &pool, 0, &oracle, &rays).remove(0).1;
        let (t, h) = cast_few(&pool, 0, &[(o, d)])[0];
        eprintln!("{name} R={res} env {env} from {o:?}: cast ({t}, {h}), exact {te}");
        assert!(h == HIT && t > 0.0, "{name}: a free start reads as inside");
        assert!(tally.failures.is_empty(), "{:?}", tally.failures);
    }
}

/// A point of a thin term's core (world, metres), at least √3 voxel from the core's ends, with
/// its thin section directions and its long ones (world unit vectors).
struct CorePoint {
    p: V,
    /// The section's inradius, metres.
    h: f64,
    long: Vec<V>,
    thin: Vec<V>,
}

fn scale(a: V, s: f64) -> V {
    [a[0] * s, a[1] * s, a[2] * s]
}
fn add(a: V, b: V) -> V {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}
fn normalize(a: V) -> V {
    scale(a, 1.0 / len(a))
}

/// Two unit vectors perpendicular to the unit vector `a` and to each other.
fn perpendiculars(a: V) -> [V; 2] {
    let helper = if a[0].abs() < 0.9 {
        [1.0, 0.0, 0.0]
    } else {
        [0.0, 1.0, 0.0]
    };
    let u = normalize(sub(helper, scale(a, dot(helper, a))));
    let w = [
        a[1] * u[2] - a[2] * u[1],
        a[2] * u[0] - a[0] * u[2],
        a[0] * u[1] - a[1] * u[0],
    ];
    [u, w]
}

/// Up to `n` core points of term `t` (thin or not; the caller keeps the dilated ones).
fn core_points(t: &Term, voxel: f64, rng: &mut LaneRng, n: usize) -> Vec<CorePoint> {
    let span = THIN_SPAN_VOX * voxel;
    let mut u = |m: f64| rng.range(-1.0, 1.0) as f64 * m;
    // A section with half extents `e` along local axes `axes` about `c`: 0 across the thin
    // directions, anywhere along the long ones keeping √3 voxel from the core's ends.
    let section = |c: V, axes: [V; 3], e: [f64; 3], u: &mut dyn FnMut(f64) -> f64| {
        let h = e.iter().copied().fold(f64::INFINITY, f64::min);
        let (mut p, mut long, mut thin) = (c, Vec::new(), Vec::new());
        for k in 0..3 {
            if e[k] - h < span {
                thin.push(axes[k]);
            } else {
                let reach = if e[k].is_finite() {
                    e[k] - h - span
                } else {
                    0.0
                };
                p = add(p, scale(axes[k], u(reach)));
                long.push(axes[k]);
            }
        }
        CorePoint { p, h, long, thin }
    };
    let mut out = Vec::new();
    let prm = t.p;
    for _ in 0..n {
        let point = match t.kind {
            Kind::Plane => return out,
            Kind::Box => section(
                t.c,
                t.axes,
                [prm[0] + prm[3], prm[1] + prm[3], prm[2] + prm[3]],
                &mut u,
            ),
            Kind::Sphere => CorePoint {
                p: t.c,
                h: prm[0],
                long: vec![],
                thin: vec![[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
            },
            Kind::Capsule => {
                let ba = [prm[0], prm[1], prm[2]];
                let l = len(ba);
                let axis = if l > 0.0 {
                    scale(ba, 1.0 / l)
                } else {
                    [0.0, 0.0, 1.0]
                };
                let [a, b] = perpendiculars(axis);
                section(
                    add(t.c, scale(ba, 0.5)),
                    [a, b, axis],
                    [prm[3], prm[3], prm[3] + 0.5 * l],
                    &mut u,
                )
            }
            // A disc core (a flat cylinder) keeps to a square inside the disc.
            Kind::Cylinder => {
                let across = if prm[1] < prm[0] {
                    prm[0] * std::f64::consts::FRAC_1_SQRT_2
                } else {
                    prm[0]
                };
                section(t.c, t.axes, [across, across, prm[1]], &mut u)
            }
            // One of the four bars, straight part only (|along| ≤ inner half − √3 voxel).
            Kind::Gate => {
                let (oy, oz, iy, iz, hd) = (prm[0], prm[1], prm[2], prm[3], prm[4]);
                let side = if u(1.0) < 0.0 { -1.0 } else { 1.0 };
                let [ax, ay, az] = t.axes;
                if u(1.0) < 0.0 {
                    // A side bar (across y), running along z.
                    let c = add(t.c, scale(ay, side * 0.5 * (oy + iy)));
                    section(c, [ax, ay, az], [hd, 0.5 * (oy - iy), iz], &mut u)
                } else {
                    let c = add(t.c, scale(az, side * 0.5 * (oz + iz)));
                    section(c, [ax, az, ay], [hd, 0.5 * (oz - iz), iy], &mut u)
                }
            }
        };
        out.push(point);
    }
    out
}

/// The trilinear interpolant at `q` of the dilated field sampled exactly at voxel centres (no
/// quantisation), metres; `None` within a voxel of the domain's faces.
fn exact_interpolant(oracle: &Oracle, q: V) -> Option<f64> {
    let vox = oracle.voxel;
    let g: V = std::array::from_fn(|a| (q[a] - oracle.origin[a]) / vox - 0.5);
    let n = oracle.size / vox;
    if g.iter().any(|&x| !(0.5..n - 2.5).contains(&x)) {
        return None;
    }
    let i0 = g.map(f64::floor);
    let f: V = std::array::from_fn(|a| g[a] - i0[a]);
    let mut acc = 0.0;
    for c in 0..8 {
        let bit = |a: usize| ((c >> a) & 1) as f64;
        let w: f64 = (0..3)
            .map(|a| if bit(a) == 1.0 { f[a] } else { 1.0 - f[a] })
            .product();
        let corner: V = std::array::from_fn(|a| oracle.origin[a] + (i0[a] + bit(a) + 0.5) * vox);
        acc += w * oracle.field(corner);
    }
    Some(acc)
}

/// The thin contract for `preset` at `resolution`, envs `0..n_envs`: rays through the cores of
/// the dilated terms (random directions, and grazing: within a few degrees of the core's long
/// directions) hit at or before the core, and within the window of the dilated field.
fn check_thin(preset_name: &str, resolution: u32, n_envs: u64, min_rays: usize) {
    let preset = ScenePreset::load(preset_name).unwrap();
    let launch = Launch::new();
    let scenes = generate_envs(&preset, 0, 0, 0..n_envs, &launch).unwrap();
    let pool = build_pool(&scenes, resolution, preset.truncation_vox, &launch).unwrap();
    let mut failures = Vec::new();
    let mut total = 0;
    let (mut worst_out, mut worst_in) = (0.0f64, 0.0f64);
    for (env, scene) in scenes.iter().enumerate() {
        let oracle = Oracle::new(scene, resolution, preset.truncation_vox);
        let vox = oracle.voxel;
        let mut rng = LaneRng::new(91, env as u64, resolution, 3);
        let mut rays = Rays {
            o: Vec::new(),
            d: Vec::new(),
            family: Vec::new(),
        };
        let mut cores = Vec::new();
        for (ti, t) in oracle.terms.iter().enumerate() {
            if oracle.dilate[ti] <= 0.0 {
                continue;
            }
            for c in core_points(t, vox, &mut rng, 16) {
                // On the core (as deep as the section's inradius), and no cut reaches a corner
                // of its cell (corners are within √3 voxel; the dilated depth is below a voxel).
                let clear = oracle
                    .terms
                    .iter()
                    .all(|s| !s.subtract || s.distance(c.p) > (THIN_SPAN_VOX + 1.0) * vox);
                if !clear || t.distance(c.p) > -c.h + 1e-6 * vox {
                    continue;
                }
                // The claim behind the rule: the exactly sampled interpolant is below −q/2 there.
                let Some(i) = exact_interpolant(&oracle, c.p) else {
                    continue;
                };
                assert!(
                    i <= -(oracle.half_q + 0.5 * THIN_MARGIN_VOX) * vox,
                    "{preset_name} R={resolution} env {env} term {ti}: core {:?} interpolates \
                     to {} voxel",
                    c.p,
                    i / vox
                );
                let random = normalize(random_dir(&mut rng));
                let grazing = if c.long.is_empty() {
                    None
                } else {
                    let along = c
                        .long
                        .iter()
                        .fold([0.0; 3], |acc, &l| add(acc, scale(l, rng.signed() as f64)));
                    let across = c.thin[rng.below(c.thin.len() as u32) as usize];
                    let tilt =
                        rng.range(0.03, 0.2) as f64 * if rng.unit() < 0.5 { -1.0 } else { 1.0 };
                    (len(along) > 1e-3)
                        .then(|| normalize(add(normalize(along), scale(across, tilt))))
                };
                for (d, family) in [(Some(random), "random"), (grazing, "grazing")] {
                    let Some(d) = d else { continue };
                    // Back off along the ray until free (the dilated field over ½ voxel).
                    let start = [3.0, 6.0, 12.0, 24.0].into_iter().find_map(|s: f64| {
                        let o = sub(c.p, scale(d, s * vox));
                        let inside = (0..3).all(|a| {
                            o[a] > oracle.origin[a] + vox
                                && o[a] < oracle.origin[a] + oracle.size - vox
                        });
                        (inside && oracle.field(o) > 0.5 * vox).then_some(o)
                    });
                    let Some(o) = start else { continue };
                    rays.push(o.map(|v| v as f32), d, family);
                    cores.push((ti, c.p));
                }
            }
        }
        let n = rays.o.len();
        total += n;
        let cast: Vec<(f32, u8)> = cast_few(
            &pool,
            env,
            &rays
                .o
                .iter()
                .zip(&rays.d)
                .map(|(o, d)| (*o, *d))
                .collect::<Vec<_>>(),
        );
        for i in 0..n {
            let o = rays.o[i].map(|v| v as f64);
            let d = rays.d[i].map(|v| v as f64);
            let (ti, p) = cores[i];
            let t_core = dot(sub(p, o), d);
            let (t, h) = (cast[i].0 as f64, cast[i].1);
            if h != HIT || t > t_core + ALONG_VOX * vox {
                failures.push(format!(
                    "{preset_name} R={resolution} env {env} {} ray {i} through the core of term \
                     {ti} at {p:?}: o {:?} d {:?}: cast ({t}, {h}), core at {t_core}",
                    rays.family[i], rays.o[i], rays.d[i]
                ));
                continue;
            }
            let q = add(o, scale(d, t));
            let f = oracle.exact_field(q) / vox;
            worst_out = worst_out.max(f);
            worst_in = worst_in.max(-f);
        }
        for (family, tally) in check_env(preset_name, &pool, env, &oracle, &rays) {
            if tally.rays > 0 {
                eprintln!(
                    "{preset_name} R={resolution} env {env} thin {family}: {} rays, {} hits, {} \
                     outside the window",
                    tally.rays,
                    tally.hits,
                    tally.failures.len()
                );
            }
            failures.extend(tally.failures);
        }
    }
    eprintln!(
        "{preset_name} R={resolution}: {total} rays through thin cores; hits up to {worst_out:.3} \
         voxel outside and {worst_in:.3} voxel inside the exact surface"
    );
    for f in failures.iter().take(12) {
        eprintln!("{f}");
    }
    assert!(
        failures.is_empty(),
        "{preset_name} R={resolution}: {} of {total} thin-core rays outside the contract",
        failures.len()
    );
    assert!(
        total >= min_rays,
        "{preset_name} R={resolution}: only {total} thin-core rays"
    );
}

#[test]
fn thin_solids_are_hit() {
    check_thin("rooms", 32, 2, 400);
    check_thin("rooms", 64, 2, 800);
    check_thin("gates", 256, 2, 200);
    check_thin("forest", 64, 1, 400);
}

#[test]
fn thin_rooms_hits_within_the_window() {
    check_preset("rooms", Some(32), 1, 300, 1);
    check_preset("rooms", Some(64), 1, 300, 1);
}
