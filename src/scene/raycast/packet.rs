//! Rays marched [`PACKET`] at a time, with the same results as one at a time.
//!
//! A ray's march is a chain of steps, each waiting on the one before (the step's length is the
//! distance bound read at the point it reaches), so one ray keeps a core's arithmetic units
//! mostly idle: a bound step is some 100 instructions whose longest dependent chain takes most
//! of the step's time. A *packet* holds a ray in each of its lanes and takes one step of every
//! lane per round, without branches, so the lanes' chains run side by side.
//!
//! A round takes, in every lane, the two steps that make up most of a march: a jump across a
//! uniform free box and a bound step in a brick cell far enough from the surface
//! ([`CELL_WALK_VOX`]); the arithmetic is [`march_from`]'s, operation for operation, so each
//! lane's `t` is the scalar march's to the bit. Any other step is an *event* of its lane,
//! taken before the next round: the end of the ray (past its end, out of steps, or inside a
//! solid, decided as [`march_from`] decides them), or a cell near a surface, from which
//! [`march_from`] takes the ray up at the same `(t, step)` (a march is one sequence of steps,
//! each a function of `t` alone) and finishes it, or hands it back where the stretch near the
//! surface decided nothing. A lane whose ray
//! ends takes the run's next ray. Blocks the leaf table has not met are filled within the
//! round, out of line.
//!
//! The packet pays where rays take several far steps (camera rays: 1.3–1.7× the one-ray rate,
//! README › Performance › Scenes); a ray that reaches a surface at its first steps costs a
//! wasted lane of a round and the hand-over, so random rays from points near surfaces gain
//! less or nothing.

use super::{
    march_from, CastOptions, LeafTable, Marched, RayStart, BUDGET, CELL_WALK_VOX, HIT, MISS,
    NUDGE_VOX,
};
use crate::geom::sdf::{fmax, fmin};
use crate::lanes::{transpose_bytes, F32x8};
use crate::scene::dag::{
    ref_kind, ref_payload, uniform_bound, EnvEntry, PoolView, BRICK_VOXELS, CODE_MAX, KIND_BRICK,
    KIND_INSIDE, KIND_OUTSIDE,
};

/// Rays in flight in one packet.
pub(super) const PACKET: usize = 8;

/// A lane without a ray.
const EMPTY: usize = usize::MAX;

/// The rays in flight, one per lane, as arrays over the lanes.
struct Lanes {
    p: [[f32; PACKET]; 3],
    d: [[f32; PACKET]; 3],
    inv: [[f32; PACKET]; 3],
    hi: [f32; PACKET],
    t: [f32; PACKET],
    step: [u32; PACKET],
    /// Each lane's ray (an index into the run), or [`EMPTY`].
    ray: [usize; PACKET],
}

/// What a round reads besides the lanes; the table is filled where a lane reaches a block it
/// has not met.
struct Round<'a, 'v> {
    top: f32,
    qerr: f32,
    quant: f32,
    view: &'a PoolView<'v>,
    table: &'a mut LeafTable,
    codes: &'a [i8],
}

/// One round's outcome, per lane: the step as [`march_from`] takes it, up to the decision.
struct Taken {
    /// The next `t` after a uniform jump or a bound step.
    next: [f32; PACKET],
    /// The leaf's reference.
    leaf: [u32; PACKET],
    /// Lanes whose step is a uniform jump, or a bound step far enough from the surface.
    plain: u32,
}

/// `f(l)` for every lane.
#[inline(always)]
fn lanes<T>(f: impl FnMut(usize) -> T) -> [T; PACKET] {
    std::array::from_fn(f)
}

/// The bits of the lanes where `b` holds.
#[inline(always)]
fn mask(b: [bool; PACKET]) -> u32 {
    b.iter()
        .enumerate()
        .fold(0, |m, (l, &x)| m | u32::from(x) << l)
}

impl Lanes {
    /// Lane `l`'s ray.
    fn ray(&self, l: usize) -> RayStart {
        RayStart {
            p: [self.p[0][l], self.p[1][l], self.p[2][l], 0.0],
            d: [self.d[0][l], self.d[1][l], self.d[2][l], 0.0],
            inv: [self.inv[0][l], self.inv[1][l], self.inv[2][l]],
            lo: 0.0,
            hi: self.hi[l],
        }
    }

    /// Puts `ray` in lane `l` (its march not begun) as ray `index` of the run.
    fn put(&mut self, l: usize, ray: &RayStart, index: usize) {
        for a in 0..3 {
            self.p[a][l] = ray.p[a];
            self.d[a][l] = ray.d[a];
            self.inv[a][l] = ray.inv[a];
        }
        self.hi[l] = ray.hi;
        self.t[l] = ray.lo;
        self.step[l] = 0;
        self.ray[l] = index;
    }

    /// Every lane's step at its `t`: [`march_from`]'s arithmetic for a uniform jump and for a
    /// brick bound step, both taken (no branch on the leaf's kind), the leaf read from the
    /// table. Each quantity for all lanes at once, so the arithmetic runs on vectors of lanes.
    #[inline(always)]
    fn round(&self, c: &mut Round<'_, '_>) -> Taken {
        let t = self.t;
        // `March::at` and `March::voxel` (the clamped point truncated is its floor).
        let q: [[f32; PACKET]; 3] =
            std::array::from_fn(|a| lanes(|l| self.p[a][l] + t[l] * self.d[a][l]));
        let voxel = q.map(|q| {
            F32x8::load(&q.map(|x| fmin(fmax(x, 0.0), c.top)))
                .truncate()
                .map(|v| v as u32)
        });
        // `LeafTable::leaf` and `Cursor::locate`: the blocks the table has not met are filled
        // first, out of line (rare once the table is warm), then every lane reads its entry.
        let lb = c.table.log_blocks;
        let index = lanes(|l| {
            let b = [0, 1, 2].map(|a| voxel[a][l] / super::BRICK);
            (b[0] | b[1] << lb | b[2] << (2 * lb)) as usize
        });
        let mut entry = index.map(|i| c.table.entries[i]);
        let known = mask(entry.map(|e| e >> 40 == c.table.epoch));
        if known != (1 << PACKET) - 1 {
            fill(c, &mut entry, known, &index, &voxel);
        }
        let leaf = entry.map(|e| e as u32);
        let shift = entry.map(|e| (e >> 32) as u32 & 0xff);
        let min: [[u32; PACKET]; 3] =
            std::array::from_fn(|a| lanes(|l| (voxel[a][l] >> shift[l]) << shift[l]));
        let size = shift.map(|s| 1u32 << s);
        // `March::exit` and the uniform jump.
        let mut exit = F32x8::splat(f32::INFINITY);
        let (zero, sizes) = (F32x8::splat(0.0), F32x8::from_i32(size.map(|s| s as i32)));
        for ((min, d), (p, inv)) in min.iter().zip(&self.d).zip(self.p.iter().zip(&self.inv)) {
            let d = F32x8::load(d);
            // The face ahead: `min` or `min + size` (sums below 2^16: exact, the integer sum's
            // float).
            let face = F32x8::from_i32(min.map(|m| m as i32));
            let face = face.select(d.gt(zero), face + sizes);
            let ta = (face - F32x8::load(p)) * F32x8::load(inv);
            // `fmin` only along the axes the ray moves on.
            exit = exit.min(ta).select(d.eq(zero), exit);
        }
        let exit = exit.to_array();
        let jump = lanes(|l| fmax(exit[l], t[l] + uniform_bound(leaf[l])) + NUDGE_VOX);
        // `March::brick_cell` and the bound step (the saturated cell's bound is the corner
        // bound, bit for bit: `saturated_reach`).
        let kind = leaf.map(ref_kind);
        let brick = kind.map(|k| k == KIND_BRICK);
        let first = lanes(|l| {
            if brick[l] {
                ref_payload(leaf[l]) as usize * BRICK_VOXELS
            } else {
                0
            }
        });
        let x: [[f32; PACKET]; 3] =
            std::array::from_fn(|a| lanes(|l| q[a][l] - (min[a][l] as i32 as f32 + 0.5)));
        let clamped = x.map(|x| x.map(|x| fmin(fmax(x, 0.0), 6.0)));
        let i0 = clamped.map(|c| F32x8::load(&c).truncate().map(|v| v as u32));
        let u: [[f32; PACKET]; 3] =
            std::array::from_fn(|a| lanes(|l| x[a][l] - clamped[a][l].floor()));
        let w = u.map(|u| u.map(|u| 1.0 - u));
        let uu = u.map(|u| u.map(|u| u * u));
        let ww = w.map(|w| w.map(|w| w * w));
        let base = lanes(|l| first[l] + (i0[0][l] + (i0[1][l] << 3) + (i0[2][l] << 6)) as usize);
        // Each lane's eight corner codes as `March::brick_cell` packs them (one bounds check
        // per lane: `base ≤ first + 6 · 73`), then corner by corner over the lanes.
        let packed: [u64; PACKET] = lanes(|l| {
            let w: &[i8; 74] = c.codes[base[l]..base[l] + 74]
                .try_into()
                .expect("a window of 74 codes");
            let pair = |o: usize| u64::from(u16::from_le_bytes([w[o] as u8, w[o + 1] as u8]));
            pair(0) | pair(8) << 16 | pair(64) << 32 | pair(72) << 48
        });
        let by_corner = transpose_bytes(packed);
        // `corner_reach`'s sums and roots, the same operations in the same order per lane.
        let mut r: [[f32; PACKET]; 8] = [[0.0; PACKET]; 8];
        for (corner, r) in r.iter_mut().enumerate() {
            let code = F32x8::from_i8(by_corner[corner]).to_array();
            let sq = |a: usize, l: usize, bit: usize| {
                if (corner >> bit) & 1 == 0 {
                    uu[a][l]
                } else {
                    ww[a][l]
                }
            };
            *r = lanes(|l| {
                let d2 = sq(0, l, 0) + sq(1, l, 1) + sq(2, l, 2);
                code[l] * c.quant - d2.sqrt()
            });
        }
        let solid_near = packed.map(|w| super::has_byte(w, -CODE_MAX as u8));
        let reach = lanes(|l| {
            let r4: [f32; 4] = std::array::from_fn(|k| fmax(r[k][l], r[k + 4][l]));
            fmax(fmax(r4[0], r4[2]), fmax(r4[1], r4[3]))
        });
        let bound = lanes(|l| {
            if solid_near[l] {
                f32::NEG_INFINITY
            } else {
                reach[l] - c.qerr
            }
        });
        let outside = kind.map(|k| k == KIND_OUTSIDE);
        Taken {
            next: lanes(|l| if outside[l] { jump[l] } else { t[l] + bound[l] }),
            leaf,
            plain: mask(lanes(|l| {
                outside[l] | (brick[l] & (bound[l] >= CELL_WALK_VOX))
            })),
        }
    }
}

/// Fills the table's entries of the lanes not in `known` (their blocks met for the first time,
/// as [`LeafTable::leaf`] fills them for the one-ray march) and reads them into `entry`.
#[cold]
#[inline(never)]
fn fill(
    c: &mut Round<'_, '_>,
    entry: &mut [u64; PACKET],
    known: u32,
    index: &[usize; PACKET],
    voxel: &[[u32; PACKET]; 3],
) {
    for l in 0..PACKET {
        if (known >> l) & 1 == 0 {
            c.table
                .leaf(c.view, [voxel[0][l], voxel[1][l], voxel[2][l]]);
            entry[l] = c.table.entries[index[l]];
        }
    }
}

/// Casts the rays `origins[i]`, `dirs[i]` of one env through `table` (whose grid holds the
/// env's), writing ray `i`'s result to `out.0[i]`, `out.1[i]`, `out.2[i]`: the results of
/// [`march_from`] one ray at a time, bit for bit.
#[allow(clippy::too_many_arguments)]
pub(super) fn cast_run(
    view: &PoolView,
    env: &EnvEntry,
    origins: &[[f32; 3]],
    dirs: &[[f32; 3]],
    opts: &CastOptions,
    table: &mut LeafTable,
    out: (&mut [f32], &mut [u8], &mut [u32]),
) {
    let (distance, hit, steps) = out;
    let n = origins.len();
    let mut write = |i: usize, (d, h, s): (f32, u8, u32)| {
        distance[i] = d;
        hit[i] = h;
        steps[i] = s;
    };
    table.start(env.root);
    let codes: &[i8] = bytemuck::cast_slice(view.bricks);
    let mut lanes = Lanes {
        p: [[0.0; PACKET]; 3],
        d: [[0.0; PACKET]; 3],
        inv: [[f32::INFINITY; PACKET]; 3],
        hi: [0.0; PACKET],
        t: [0.0; PACKET],
        step: [0; PACKET],
        ray: [EMPTY; PACKET],
    };
    let mut next = 0;
    // Fills lane `l` with the run's next ray that needs a step (writing those that miss the
    // domain as they come); leaves it empty when the run is out of rays.
    let mut refill = |lanes: &mut Lanes, l: usize, write: &mut dyn FnMut(usize, (f32, u8, u32))| {
        lanes.ray[l] = EMPTY;
        while next < n {
            let i = next;
            next += 1;
            match RayStart::new(view, env, origins[i], dirs[i], opts) {
                Some(ray) => {
                    lanes.put(l, &ray, i);
                    return;
                }
                None => write(i, (opts.no_hit_value, MISS, 0)),
            }
        }
    };
    for l in 0..PACKET {
        refill(&mut lanes, l, &mut write);
    }
    let h = env.voxel_size;
    let (top, qerr, quant) = (
        (view.info.resolution - 1) as f32,
        super::bound_error(view.info),
        view.info.quant_step(),
    );
    loop {
        let live = lanes
            .ray
            .iter()
            .enumerate()
            .fold(0u32, |m, (l, &r)| m | u32::from(r != EMPTY) << l);
        if live == 0 {
            return;
        }
        let mut round = Round {
            top,
            qerr,
            quant,
            view,
            table,
            codes,
        };
        let taken = lanes.round(&mut round);
        let mut events = 0u32;
        for l in 0..PACKET {
            // `march_from`'s checks before a step: steps left, not past the end (`t > hi`).
            let past = lanes.t[l] > lanes.hi[l];
            let go = (taken.plain >> l) & 1 == 1 && lanes.step[l] < opts.max_steps && !past;
            events |= u32::from(!go) << l;
            if go {
                lanes.t[l] = taken.next[l];
                lanes.step[l] += 1;
            }
        }
        let mut pending = events & live;
        while pending != 0 {
            let l = pending.trailing_zeros() as usize;
            pending &= pending - 1;
            let (t, step) = (lanes.t[l], lanes.step[l]);
            // The ends `march_from` would return at once, decided here: handing them over
            // too (a march set up per end) cast camera rays 7–15% slower.
            let done = if step >= opts.max_steps {
                (t * h, BUDGET, opts.max_steps)
            } else if t > lanes.hi[l] {
                (opts.no_hit_value, MISS, step)
            } else if ref_kind(taken.leaf[l]) == KIND_INSIDE {
                (t * h, HIT, step + 1)
            } else {
                match march_from::<true>(view, env, &lanes.ray(l), t, step, opts, Some(table)) {
                    Marched::Done(result) => result,
                    // Back to the packet's far steps.
                    Marched::Resume(t, step) => {
                        (lanes.t[l], lanes.step[l]) = (t, step);
                        continue;
                    }
                }
            };
            write(lanes.ray[l], done);
            refill(&mut lanes, l, &mut write);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{cast_one, cast_rays, CastOptions, RayEnvs, RayOutputs};
    use crate::exec::Launch;
    use crate::scene::{build_preset, preset::ScenePreset};

    /// `cast_rays`, which marches rays in packets, gives `cast_one`'s results bit for bit: camera
    /// and random rays, grazing and axis-parallel ones, bad rays (non-finite, zero, outside the
    /// domain) between them, runs of every length (the env changing every ray, every 7 rays,
    /// and in blocks), budgets from 1 step to the default and short and unbounded distances.
    #[test]
    fn packets_cast_as_one_ray_at_a_time() {
        let launch = Launch::for_threads(Some(2)).unwrap();
        let mut rand = crate::track::geometry::test_unit(0x9ac4_e7a1);
        for name in ["rooms", "gates", "forest"] {
            let preset = ScenePreset::load(name).unwrap();
            for res in [32, 128] {
                let pool = build_preset(&preset, 2, 0, 2, Some(res), &launch).unwrap();
                let view = pool.view();
                let (mut origins, mut dirs) = (Vec::new(), Vec::new());
                for e in view.envs() {
                    let side = e.voxel_size * res as f32;
                    for k in 0..700 {
                        let o = match k % 4 {
                            0 | 1 => e.spawn,
                            _ => std::array::from_fn(|a| e.origin[a] + side * rand()),
                        };
                        let mut d: [f32; 3] = std::array::from_fn(|_| 2.0 * rand() - 1.0);
                        match k % 11 {
                            // Grazing: nearly horizontal.
                            3 => d[2] *= 1e-3,
                            // Axis-parallel components.
                            4 => d[0] = 0.0,
                            5 => d = [0.0, 0.0, -1.0],
                            // Bad rays.
                            6 if k % 5 == 0 => d = [0.0; 3],
                            7 if k % 5 == 0 => d[1] = f32::NAN,
                            _ => {}
                        }
                        let o = if k % 13 == 8 {
                            // Outside the domain, pointing away or along a face.
                            [e.origin[0] - 1.0, o[1], o[2]]
                        } else {
                            o
                        };
                        origins.push(o);
                        dirs.push(d);
                    }
                }
                let n = origins.len();
                let every: Vec<u32> = (0..n).map(|i| (i % 2) as u32).collect();
                let sevens: Vec<u32> = (0..n).map(|i| (i / 7 % 2) as u32).collect();
                for (max_distance, max_steps) in [
                    (1e3, 1),
                    (1e3, 2),
                    (1e3, 5),
                    (1e3, 17),
                    (f32::INFINITY, 1024),
                    (2.0, 1024),
                ] {
                    let opts = CastOptions {
                        max_steps,
                        ..CastOptions::new(max_distance)
                    };
                    for envs in [
                        RayEnvs::Blocks {
                            rays_per_env: n / 2,
                        },
                        RayEnvs::PerRay(&every),
                        RayEnvs::PerRay(&sevens),
                    ] {
                        let what = format!("{name} R = {res}, {envs:?}, {opts:?}");
                        assert_cast_as_one(&view, envs, &origins, &dirs, &opts, &what);
                    }
                }
            }
        }
    }

    /// `cast_rays` of the rays against `cast_one` of each, bit for bit.
    fn assert_cast_as_one(
        view: &crate::scene::dag::PoolView,
        envs: RayEnvs,
        origins: &[[f32; 3]],
        dirs: &[[f32; 3]],
        opts: &CastOptions,
        what: &str,
    ) {
        let n = origins.len();
        let launch = Launch::for_threads(Some(2)).unwrap();
        let (mut dist, mut hit, mut steps) = (vec![0.0; n], vec![0; n], vec![0; n]);
        let out = RayOutputs {
            distance: &mut dist,
            hit: &mut hit,
            steps: &mut steps,
        };
        cast_rays(view, envs, origins, dirs, opts, out, &launch).unwrap();
        for i in 0..n {
            let e = match envs {
                RayEnvs::PerRay(v) => v[i] as usize,
                RayEnvs::Blocks { rays_per_env } => i / rays_per_env,
            };
            let want = cast_one(view, &view.envs()[e], origins[i], dirs[i], opts);
            let got = (dist[i], hit[i], steps[i]);
            assert_eq!(
                (got.0.to_bits(), got.1, got.2),
                (want.0.to_bits(), want.1, want.2),
                "{what}, ray {i}: {got:?}, one ray {want:?}"
            );
        }
    }
}
