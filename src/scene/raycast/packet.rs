//! Rays marched [`PACKET`] at a time, with the same results as one at a time.
//!
//! A ray's march is a chain of steps, each waiting on the one before (the step's length is the
//! distance bound read at the point it reaches), so one ray keeps a core's arithmetic units
//! mostly idle: a bound step is some 100 instructions whose longest dependent chain takes most
//! of the step's time. A *packet* holds a ray in each of its lanes and takes one step of every
//! lane per round, without branches, so the lanes' chains run side by side: each quantity of
//! eight lanes is one vector (the leaf table's entries and the cells' corner codes are
//! gathered), and a round takes the packet's [`PACKET`]` / 8` vectors one after another, whose
//! chains of dependent operations overlap in the core.
//!
//! A round takes, in every lane, the two steps that make up most of a march: a jump across a
//! uniform free box and a bound step in a brick cell far enough from the surface
//! ([`CELL_WALK_VOX`]); the arithmetic is [`march`](super::march)'s, operation for operation, so
//! each lane's `t` is the one-ray march's to the bit. Any other step is an *event* of its lane,
//! taken before the next round: the end of the ray (past its end, out of steps, or inside a solid,
//! decided as [`march`](super::march) decides them), or a cell near a surface. A ray near a surface
//! leaves its lane for the *near stage* (module `near`), whose own lanes cross and walk the cells
//! of the sample grid, a cell per lane and round, and which hands the ray back to a far lane at the
//! `(t, step)` where [`march`](super::march) would go on with bound steps (a march is one sequence
//! of steps, each a function of `t` alone, so the order in which rays take their steps changes
//! nothing). The far lanes take rays handed back first, then the run's next rays, whose starts
//! ([`RayStart::new`]) are made eight at a time in vectors (`Starts`); the near stage takes a
//! round when its lanes are full, or when the far lanes run short of rays. Blocks the leaf table
//! has not met are filled within the round, out of line.
//!
//! The packet pays where rays take several far steps (camera rays: 1.44–1.70× the rate before
//! packets with eight lanes, and more with four vectors of eight, README › Performance ›
//! Scenes); a ray that reaches a surface at its first steps costs a wasted lane of a round and
//! the hand-over, so random rays from points near surfaces gain less.

use super::{
    ball_exit, CastOptions, LeafTable, RayStart, BOX_REACH, BUDGET, CELL_WALK_VOX, HIT, MISS,
    NUDGE_VOX,
};
use near::{Near, Parked, NEAR};

mod near;
use crate::lanes::{F32x8, Mask8, U32x8};
use crate::scene::dag::{
    ref_kind, EnvEntry, PoolView, BOUND_UNIT_VOX, BRICK_VOXELS, CODE_MAX, KIND_BRICK, KIND_INSIDE,
    KIND_OUTSIDE, PAYLOAD_BITS, PAYLOAD_MAX,
};

/// Rays in flight in one packet. Four vectors of eight: camera rays ran 4–11% faster than
/// with one (the same instructions per ray), 16 and 24 lanes in between (`trackgen bench-scene
/// --rows rays`, alternating runs).
pub(super) const PACKET: usize = 32;

/// Lanes per vector.
const VECTOR: usize = 8;

// The lane masks are `u32`, and a packet is whole vectors.
const _: () = assert!(PACKET <= 32 && PACKET % VECTOR == 0);

/// Whether rays of `view` can be cast in packets: it has bricks (a lane not in a brick reads
/// the first brick's codes and ignores them), and every code's offset is below `2^31` (the
/// offsets the gathers take).
pub(super) fn fits(view: &PoolView) -> bool {
    !view.bricks.is_empty() && view.bricks.len() * BRICK_VOXELS <= 1 << 31
}

/// A lane without a ray.
const EMPTY: usize = usize::MAX;

/// Every lane of the far stage.
const ALL: u32 = if PACKET == 32 {
    u32::MAX
} else {
    (1 << PACKET) - 1
};

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

/// One round's outcome, per lane: the step as [`march`](super::march) takes it, up to the decision.
struct Taken {
    /// The next `t` after a uniform jump or a bound step.
    next: [f32; PACKET],
    /// The leaf's reference.
    leaf: [u32; PACKET],
    /// The bound of a brick step (`−∞` beside a solid).
    bound: [f32; PACKET],
    /// Lanes whose step is a uniform jump, or a bound step far enough from the surface.
    plain: u32,
}

impl Lanes {
    /// Lanes without rays.
    fn new() -> Self {
        Lanes {
            p: [[0.0; PACKET]; 3],
            d: [[0.0; PACKET]; 3],
            inv: [[f32::INFINITY; PACKET]; 3],
            hi: [0.0; PACKET],
            t: [0.0; PACKET],
            step: [0; PACKET],
            ray: [EMPTY; PACKET],
        }
    }

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

    /// Puts `parked` in lane `l`, its march at the parked `(t, step)`.
    fn put_parked(&mut self, l: usize, parked: &Parked) {
        self.put(l, &parked.ray, parked.index);
        (self.t[l], self.step[l]) = (parked.t, parked.step);
    }

    /// Every lane's step at its `t`: [`march`](super::march)'s arithmetic for a uniform jump and
    /// for a brick bound step, both taken (no branch on the leaf's kind), the leaf read from the
    /// table. Each quantity for all lanes at once, in vectors of lanes: the table's entries and
    /// each lane's corner codes are gathered.
    #[inline(always)]
    fn round(&self, c: &mut Round<'_, '_>, taken: &mut Taken) {
        taken.plain = 0;
        for v in 0..PACKET / VECTOR {
            self.round_vector(c, v, taken);
        }
    }

    /// [`round`](Self::round) of vector `v`'s lanes, written to their lanes of `taken`.
    #[inline(always)]
    fn round_vector(&self, c: &mut Round<'_, '_>, v: usize, taken: &mut Taken) {
        let part = |a: &[f32; PACKET]| F32x8::load(a[v * VECTOR..][..VECTOR].try_into().unwrap());
        let t = part(&self.t);
        let (zero, one) = (F32x8::splat(0.0), U32x8::splat(1));
        let p = self.p.each_ref().map(part);
        let d = self.d.each_ref().map(part);
        // `March::at` and `March::voxel` (the clamped point truncated is its floor).
        let q = [0, 1, 2].map(|a| p[a] + t * d[a]);
        let voxel = q.map(|q| q.max(zero).min(F32x8::splat(c.top)).truncate_u32());
        // `LeafTable::leaf` and `Cursor::locate`.
        let (leaf, shift) = leaves(c, voxel);
        let three = U32x8::splat(3);
        let min = voxel.map(|v| v.shift_right(shift).shift_left(shift));
        let size = one.shift_left(shift).to_f32();
        // `uniform_bound`: the payload (below 2^30) converted, rounded as `as f32` rounds.
        let payload = leaf & U32x8::splat(PAYLOAD_MAX);
        let uniform = payload.to_f32() * F32x8::splat(BOUND_UNIT_VOX);
        let reach = uniform * F32x8::splat(BOX_REACH);
        // `March::exit` of the widened box, and the uniform jump.
        let mut exit = F32x8::splat(f32::INFINITY);
        for a in 0..3 {
            // The face ahead: `min − reach` or `min + size + reach` (`min + size` below 2^16:
            // exact, the integer sum's float).
            let face = min[a].to_f32();
            let face = (face - reach).select(d[a].gt(zero), (face + size) + reach);
            let ta = (face - p[a]) * part(&self.inv[a]);
            // `fmin` only along the axes the ray moves on.
            exit = exit.min(ta).select(d[a].eq(zero), exit);
        }
        let jump = exit.max(t + uniform) + F32x8::splat(NUDGE_VOX);
        // `March::brick_step` and the step by its corner exit.
        let kind = leaf.shift_right(U32x8::splat(PAYLOAD_BITS));
        let brick = kind.eq(U32x8::splat(KIND_BRICK));
        let outside = kind.eq(U32x8::splat(KIND_OUTSIDE));
        // The brick's first code (no brick: the first brick's, read and ignored).
        let first = U32x8::splat(0).select(brick, payload.shift_left(U32x8::splat(9)));
        let x: [F32x8; 3] = std::array::from_fn(|a| q[a] - (min[a].to_f32() + F32x8::splat(0.5)));
        let clamped = x.map(|x| x.max(zero).min(F32x8::splat(6.0)));
        let i0 = clamped.map(F32x8::truncate_u32);
        let u: [F32x8; 3] = std::array::from_fn(|a| x[a] - clamped[a].floor());
        let w = u.map(|u| F32x8::splat(1.0) - u);
        let uu = u.map(|u| u * u);
        let ww = w.map(|w| w * w);
        let base = first + (i0[0] + (i0[1].shift_left(three) + i0[2].shift_left(U32x8::splat(6))));
        // Each lane's eight corner codes as four little-endian words (`base ≤ first + 6 · 73`,
        // the last word at `base + 70` ending at the last corner, in the brick): corners
        // `2k, 2k + 1` in the low bytes of the words at 0, 8 and 64, corners 6 and 7 in the
        // high bytes of the word at 70. Each code sign-extended by a left and an arithmetic
        // right shift.
        let words = [0, 8, 64, 70].map(|o| U32x8::gather_words(c.codes, base + U32x8::splat(o)));
        let byte = |word: U32x8, b: u32| {
            word.shift_left(U32x8::splat(24 - 8 * b))
                .shift_right_signed(U32x8::splat(24))
        };
        let codes: [U32x8; 8] = std::array::from_fn(|corner| match corner {
            6 | 7 => byte(words[3], corner as u32 - 4),
            _ => byte(words[corner / 2], corner as u32 % 2),
        });
        // `corner_exit`'s sums and exits, the same operations in the same order per lane.
        let quant = F32x8::splat(c.quant);
        let qerr = F32x8::splat(c.qerr);
        let dn: [F32x8; 3] = std::array::from_fn(|a| (zero - u[a]) * d[a]);
        let dp: [F32x8; 3] = std::array::from_fn(|a| w[a] * d[a]);
        let s: [F32x8; 8] = std::array::from_fn(|corner| {
            let pick = |a: usize, lower: &[F32x8; 3], upper: &[F32x8; 3]| {
                if (corner >> a) & 1 == 0 {
                    lower[a]
                } else {
                    upper[a]
                }
            };
            let d2 = pick(0, &uu, &ww) + pick(1, &uu, &ww) + pick(2, &uu, &ww);
            let dot = pick(0, &dn, &dp) + pick(1, &dn, &dp) + pick(2, &dn, &dp);
            ball_exit(codes[corner].to_f32() * quant - qerr, d2, dot)
        });
        let solid = U32x8::splat(-CODE_MAX as i32 as u32);
        let solid_near = codes[1..]
            .iter()
            .fold(codes[0].eq(solid), |m, &k| m.or(k.eq(solid)));
        let s4: [F32x8; 4] = std::array::from_fn(|k| s[k].max(s[k + 4]));
        let exit_far = s4[0].max(s4[2]).max(s4[1].max(s4[3]));
        let bound = exit_far.select(solid_near, F32x8::splat(f32::NEG_INFINITY));
        let far = bound.ge(F32x8::splat(CELL_WALK_VOX));
        let lanes = v * VECTOR..(v + 1) * VECTOR;
        let next = (t + bound).select(outside, jump);
        taken.next[lanes.clone()].copy_from_slice(&next.to_array());
        taken.leaf[lanes.clone()].copy_from_slice(&leaf.to_array());
        taken.bound[lanes].copy_from_slice(&bound.to_array());
        taken.plain |= outside.or(brick.and(far)).bits() << (v * VECTOR);
    }
}

/// The leaf holding each lane's voxel, `(reference, log2 of its side)`, as [`LeafTable::leaf`]
/// finds it: the blocks the table has not met are filled first, out of line (rare once the
/// table is warm), then every lane reads its entry.
#[inline(always)]
fn leaves(c: &mut Round<'_, '_>, voxel: [U32x8; 3]) -> (U32x8, U32x8) {
    let (lb, three) = (U32x8::splat(c.table.log_blocks), U32x8::splat(3));
    let block = voxel.map(|v| v.shift_right(three));
    let index = block[0] | block[1].shift_left(lb) | block[2].shift_left(lb + lb);
    let mut tag = U32x8::gather(&c.table.tags, index);
    let known = tag
        .shift_right(U32x8::splat(8))
        .eq(U32x8::splat(c.table.epoch))
        .bits();
    if known != (1 << VECTOR) - 1 {
        fill(c, known, voxel);
        tag = U32x8::gather(&c.table.tags, index);
    }
    (
        U32x8::gather(&c.table.refs, index),
        tag & U32x8::splat(0xff),
    )
}

/// Fills the table's entries of the lanes not in `known` (their blocks met for the first time,
/// as [`LeafTable::leaf`] fills them for the one-ray march).
#[cold]
#[inline(never)]
fn fill(c: &mut Round<'_, '_>, known: u32, voxel: [U32x8; 3]) {
    let [x, y, z] = voxel.map(U32x8::to_array);
    let mut unknown = !known & ((1 << VECTOR) - 1);
    while unknown != 0 {
        let l = unknown.trailing_zeros() as usize;
        unknown &= unknown - 1;
        c.table.leaf(c.view, [x[l], y[l], z[l]]);
    }
}

/// The run's next rays, their starts made a vector of rays at a time
/// ([`make`](Self::make)), waiting for far lanes.
struct Starts {
    rays: [RayStart; VECTOR],
    /// Each ray's index in the run.
    index: [usize; VECTOR],
    /// The rays held are `rays[at..len]`.
    at: usize,
    len: usize,
}

impl Starts {
    fn new() -> Self {
        let none = RayStart {
            p: [0.0; 4],
            d: [0.0; 4],
            inv: [0.0; 3],
            lo: 0.0,
            hi: 0.0,
        };
        Starts {
            rays: [none; VECTOR],
            index: [0; VECTOR],
            at: 0,
            len: 0,
        }
    }

    /// The next ray and its index, if any is held.
    fn pop(&mut self) -> Option<(RayStart, usize)> {
        (self.at < self.len).then(|| {
            self.at += 1;
            (self.rays[self.at - 1], self.index[self.at - 1])
        })
    }

    fn is_empty(&self) -> bool {
        self.at == self.len
    }

    /// Holds the starts of rays `first..` (`origins`, `dirs`: at most a vector of rays, none
    /// held now): [`RayStart::new`] of each, the same operations in the lanes of vectors (every
    /// case computed and the lane's chosen), and `miss(i)` for each ray `i` that it finds a miss.
    /// One ray at a time, the divisions, square root and branches of its start cost some 15%
    /// of a random ray's time (casting 4.7 steps).
    fn make(
        &mut self,
        view: &PoolView,
        env: &EnvEntry,
        opts: &CastOptions,
        (origins, dirs): (&[[f32; 3]], &[[f32; 3]]),
        first: usize,
        mut miss: impl FnMut(usize),
    ) {
        let k = origins.len();
        debug_assert!(k <= VECTOR && dirs.len() == k && self.is_empty());
        let lanes = |v: &[[f32; 3]], a: usize| {
            F32x8::load(&std::array::from_fn(|l| if l < k { v[l][a] } else { 0.0 }))
        };
        let o: [F32x8; 3] = std::array::from_fn(|a| lanes(origins, a));
        let dir: [F32x8; 3] = std::array::from_fn(|a| lanes(dirs, a));
        let (zero, one) = (F32x8::splat(0.0), F32x8::splat(1.0));
        let finite = |x: F32x8| (x * zero).eq(zero);
        let every = Mask8::from_bools(std::array::from_fn(|l| l < k));
        let mut ok = o.iter().chain(&dir).fold(every, |m, &x| m.and(finite(x)));
        // `unit`: a squared length that overflows or underflows divides by the largest
        // component first (`|x|` as `fmax(x, 0 − x)`: finite components, zeros made `+0`).
        let n2 = dir[0] * dir[0] + dir[1] * dir[1] + dir[2] * dir[2];
        let normal = finite(n2).and(n2.ge(F32x8::splat(1e-30)));
        let abs = |x: F32x8| x.max(zero - x);
        let m = abs(dir[0]).max(abs(dir[1])).max(abs(dir[2]));
        ok = ok.and(normal.or(m.gt(zero).and(finite(m))));
        let dd: [F32x8; 3] = std::array::from_fn(|a| (dir[a] / m).select(normal, dir[a]));
        let norm = (dd[0] * dd[0] + dd[1] * dd[1] + dd[2] * dd[2]).sqrt();
        let d = dd.map(|x| x / norm);
        // The clip to the domain cube.
        let inv_h = 1.0 / env.voxel_size;
        let rf = F32x8::splat(view.info.resolution as f32);
        let p: [F32x8; 3] =
            std::array::from_fn(|a| (o[a] - F32x8::splat(env.origin[a])) * F32x8::splat(inv_h));
        let (mut lo, mut hi) = (zero, F32x8::splat(opts.max_distance * inv_h));
        let mut inv = [F32x8::splat(f32::INFINITY); 3];
        for a in 0..3 {
            let stopped = d[a].eq(zero);
            let i = one / d[a];
            let t0 = (zero - p[a]) * i;
            let t1 = (rf - p[a]) * i;
            lo = lo.max(t0.min(t1)).select(stopped, lo);
            hi = hi.min(t0.max(t1)).select(stopped, hi);
            inv[a] = i.select(stopped, inv[a]);
            ok = ok.and_not(stopped.and_not(p[a].ge(zero).and(rf.ge(p[a]))));
        }
        ok = ok.and(lo.eq(lo)).and(hi.eq(hi)).and_not(lo.gt(hi));
        let [p, d, inv] = [p, d, inv].map(|v| v.map(F32x8::to_array));
        let (lo, hi, ok) = (lo.to_array(), hi.to_array(), ok.bits());
        self.at = 0;
        self.len = 0;
        for l in 0..k {
            if (ok >> l) & 1 == 0 {
                miss(first + l);
                continue;
            }
            self.rays[self.len] = RayStart {
                p: [p[0][l], p[1][l], p[2][l], 0.0],
                d: [d[0][l], d[1][l], d[2][l], 0.0],
                inv: [inv[0][l], inv[1][l], inv[2][l]],
                lo: lo[l],
                hi: hi[l],
            };
            self.index[self.len] = first + l;
            self.len += 1;
        }
    }
}

/// Rays handed from one stage to the other, waiting for a lane: a worker's, kept from run to
/// run (empty between runs) so that a run allocates nothing once they have grown.
#[derive(Default)]
pub(super) struct Queues {
    to_far: Vec<Parked>,
    to_near: Vec<Parked>,
}

/// Casts the rays `origins[i]`, `dirs[i]` of one env through `table` (whose grid holds the
/// env's), writing ray `i`'s result to `out.0[i]`, `out.1[i]`, `out.2[i]`: the results of
/// [`march`](super::march) one ray at a time, bit for bit.
#[allow(clippy::too_many_arguments)]
pub(super) fn cast_run(
    view: &PoolView,
    env: &EnvEntry,
    origins: &[[f32; 3]],
    dirs: &[[f32; 3]],
    opts: &CastOptions,
    table: &mut LeafTable,
    queues: &mut Queues,
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
    let mut lanes = Lanes::new();
    let mut starts = Starts::new();
    let mut next = 0;
    let Queues { to_far, to_near } = queues;
    debug_assert!(to_far.is_empty() && to_near.is_empty());
    let mut near = Near::new();
    // The far lanes holding a ray.
    let mut live = 0u32;
    let mut taken = Taken {
        next: [0.0; PACKET],
        leaf: [0; PACKET],
        bound: [0.0; PACKET],
        plain: 0,
    };
    let h = env.voxel_size;
    let (top, qerr, quant) = (
        (view.info.resolution - 1) as f32,
        super::bound_error(view.info),
        view.info.quant_step(),
    );
    loop {
        // Empty far lanes take the rays back from the near stage, then the run's next rays that
        // need a step (writing those that miss the domain as they come), while few wait for
        // the near stage.
        let mut free = !live & ALL;
        while free != 0 {
            let l = free.trailing_zeros() as usize;
            if let Some(parked) = to_far.pop() {
                lanes.put_parked(l, &parked);
            } else {
                let ray = loop {
                    if to_near.len() >= NEAR {
                        break None;
                    }
                    if let Some(ray) = starts.pop() {
                        break Some(ray);
                    }
                    if next == n {
                        break None;
                    }
                    let k = (n - next).min(VECTOR);
                    let rays = (&origins[next..next + k], &dirs[next..next + k]);
                    starts.make(view, env, opts, rays, next, |i| {
                        write(i, (opts.no_hit_value, MISS, 0))
                    });
                    next += k;
                };
                let Some((ray, i)) = ray else {
                    break;
                };
                lanes.put(l, &ray, i);
            }
            free &= free - 1;
            live |= 1 << l;
        }
        // Every far lane full: the near stage waits until it is full too.
        let far_full = live == ALL;
        let mut round = Round {
            top,
            qerr,
            quant,
            view,
            table,
            codes,
        };
        if live != 0 {
            lanes.round(&mut round, &mut taken);
            let mut events = 0u32;
            for l in 0..PACKET {
                // `march`'s checks before a step: steps left, not past the end (`t > hi`).
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
                let done = if step >= opts.max_steps {
                    (t * h, BUDGET, opts.max_steps)
                } else if t > lanes.hi[l] {
                    (opts.no_hit_value, MISS, step)
                } else if ref_kind(taken.leaf[l]) == KIND_INSIDE {
                    (t * h, HIT, step + 1)
                } else {
                    // A brick step near a surface: to the near stage.
                    to_near.push(Parked {
                        ray: lanes.ray(l),
                        index: lanes.ray[l],
                        t,
                        step,
                        bound: taken.bound[l],
                    });
                    live &= !(1 << l);
                    continue;
                };
                write(lanes.ray[l], done);
                live &= !(1 << l);
            }
        }
        near.fill(to_near);
        let near_live = near.live();
        if near_live == 0 && live == 0 && to_far.is_empty() && next == n && starts.is_empty() {
            return;
        }
        // The near stage takes a round when its lanes are full, or when the far stage runs short
        // of rays (rays wait for the near stage, or the run's rays are all taken).
        if near_live != 0 && (near_live.count_ones() as usize == NEAR || !far_full) {
            near.round(
                &mut round,
                env,
                opts,
                near_live,
                |parked, result| match result {
                    Some(result) => write(parked.index, result),
                    None => to_far.push(parked),
                },
            );
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
                let mut ties = 0;
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
                        // Lengths whose square overflows or underflows `f32`.
                        match k % 17 {
                            9 => d = d.map(|v| v * 1e30),
                            10 => d = d.map(|v| v * 1e-30),
                            _ => {}
                        }
                        let o = if k % 13 == 8 {
                            // Outside the domain, pointing away or along a face.
                            [e.origin[0] - 1.0, o[1], o[2]]
                        } else if k % 4 >= 2 && k % 3 == 0 {
                            // On planes of voxel centres (faces of the sample grid's cells)
                            // and heading down every axis: the crossing at the first step
                            // breaks a tie on each axis (counted where the point converts
                            // to voxel space exactly).
                            let inv_h = 1.0 / e.voxel_size;
                            let o: [f32; 3] = std::array::from_fn(|a| {
                                let g = ((o[a] - e.origin[a]) * inv_h).floor() + 0.5;
                                e.origin[a] + g * e.voxel_size
                            });
                            let on_planes = (0..3).all(|a| {
                                let g = (o[a] - e.origin[a]) * inv_h;
                                g - g.floor() == 0.5
                            });
                            ties += usize::from(on_planes);
                            d = d.map(|v| -v.abs());
                            o
                        } else {
                            o
                        };
                        origins.push(o);
                        dirs.push(d);
                    }
                }
                assert!(
                    ties >= 50,
                    "{name} R = {res}: {ties} rays start on cell faces"
                );
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
