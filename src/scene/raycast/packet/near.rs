//! The stretch of a march near a surface, for many rays at once.
//!
//! Near a surface a march crosses the cell of the sample grid holding its point, then walks
//! cell by cell (a few cells per ray; [`march`](super::super::march)). One ray at a time, each
//! cell is a chain of dependent operations (the leaf, the corners, the cubic along the ray, its
//! root) with data-dependent branches between them, so the core idles or mispredicts. Here the
//! rays the far rounds find near a surface wait in their own lanes, and a *near round* takes one
//! cell of every lane with the one-ray march's arithmetic, operation for operation, eight lanes
//! per vector: the cell's setup (the crossing's or the walk's), the leaf, the eight corners
//! (gathered from the brick, or a uniform leaf's value), the cubic along the ray and which of
//! `first_root`'s cases holds, the walk's next cell and its exits. Lane by lane remain only the
//! root searches (each case's lanes in turn, with `first_root`'s own functions), the corners of
//! a cell across leaves, a crossing on the clamped rim of the domain (the one-ray crossing), and
//! the rays that leave the stage: with a result, or back to far steps.

use super::super::{
    bracket_root, cell_face, cubic as cubic_at, cubic_along, search_root, shape_lanes, walk_cell,
    CastOptions, March, RayStart, BUDGET, CELL_NUDGE_VOX, HIT, MISS, WALK_STAY_VOX,
};
use super::{leaves, Lanes, Round, ALL, PACKET, VECTOR};
use crate::geom::sdf::fmax;
use crate::lanes::{F32x8, Mask8, U32x8};
use crate::scene::dag::{EnvEntry, KIND_BRICK, KIND_INSIDE, PAYLOAD_BITS, PAYLOAD_MAX};

/// Lanes of the near stage: as many as the far stage's, whose ray arrays it holds too.
pub(super) const NEAR: usize = PACKET;

/// A ray between the two stages, at `(t, step)` of its march.
#[derive(Clone, Copy)]
pub(super) struct Parked {
    pub(super) ray: RayStart,
    /// The ray's index in the run.
    pub(super) index: usize,
    pub(super) t: f32,
    pub(super) step: u32,
    /// Into the near stage: the bound of the brick step at `t` (below `CELL_WALK_VOX`).
    pub(super) bound: f32,
}

/// What became of a lane after a near round.
pub(super) enum Moved {
    /// The cast's result: `(distance, hit, steps)`.
    Done((f32, u8, u32)),
    /// Back to far steps from `(t, step)`.
    Far(f32, u32),
    /// Walking on.
    Stay,
}

/// The rays in the near stage, one per lane, as arrays over the lanes.
pub(super) struct Near {
    /// The rays, their `t` and steps (each lane's index into the run where `live` holds it).
    rays: Lanes,
    /// The lanes holding a ray.
    live: u32,
    /// A crossing lane's bound at `t` ([`Parked::bound`]).
    bound: [f32; NEAR],
    /// The lanes walking (the others cross the cell at `t` first).
    walking: u32,
    /// A walking lane's cell (corner 0) and its exits per axis.
    cell: [[u32; NEAR]; 3],
    faces: [[f32; NEAR]; 3],
}

/// The lanes that leave the stage after a near round, and how.
struct Leaving {
    /// Out of steps before a cell.
    budget: u32,
    /// Past the end before a cell.
    past: u32,
    /// A zero in the cell, at `t`.
    hit: u32,
    /// Back to far steps from `t`.
    far: u32,
    /// Crossing lanes on the clamped rim, left to the one-ray crossing.
    rim: u32,
    /// The hit's ray parameter, or where far steps go on.
    t: [f32; NEAR],
}

impl Near {
    pub(super) fn new() -> Self {
        Near {
            rays: Lanes::new(),
            live: 0,
            bound: [0.0; NEAR],
            walking: 0,
            cell: [[0; NEAR]; 3],
            faces: [[0.0; NEAR]; 3],
        }
    }

    /// The lanes holding a ray.
    pub(super) fn live(&self) -> u32 {
        self.live
    }

    /// Puts rays from `parked` into the empty lanes, to cross the cell at their `t`, while
    /// there are any.
    pub(super) fn fill(&mut self, parked: &mut Vec<Parked>) {
        let mut free = !self.live & ALL;
        while free != 0 {
            let Some(ray) = parked.pop() else {
                return;
            };
            let l = free.trailing_zeros() as usize;
            free &= free - 1;
            self.put(l, &ray);
        }
    }

    /// Puts `parked` in lane `l`, to cross the cell at its `t`.
    fn put(&mut self, l: usize, parked: &Parked) {
        self.rays.put_parked(l, parked);
        self.bound[l] = parked.bound;
        self.walking &= !(1 << l);
        self.live |= 1 << l;
    }

    /// Lane `l`'s ray parked at `(t, step)`, the lane emptied.
    fn park(&mut self, l: usize, t: f32, step: u32) -> Parked {
        let parked = Parked {
            ray: self.rays.ray(l),
            index: self.rays.ray[l],
            t,
            step,
            bound: 0.0,
        };
        self.live &= !(1 << l);
        parked
    }

    /// One cell of every lane in `live`: `moved(ray, result)` for each lane whose ray leaves
    /// the stage (the lane is then empty), with the cast's result or, back to far steps, none.
    pub(super) fn round(
        &mut self,
        c: &mut Round<'_, '_>,
        env: &EnvEntry,
        opts: &CastOptions,
        live: u32,
        mut moved: impl FnMut(Parked, Option<(f32, u8, u32)>),
    ) {
        let mut out = Leaving {
            budget: 0,
            past: 0,
            hit: 0,
            far: 0,
            rim: 0,
            t: [0.0; NEAR],
        };
        for v in 0..NEAR / VECTOR {
            if (live >> (v * VECTOR)) & 0xff != 0 {
                self.cells(c, opts, v, live, &mut out);
            }
        }
        let h = env.voxel_size;
        let mut pending = live & (out.budget | out.past | out.hit | out.far | out.rim);
        while pending != 0 {
            let l = pending.trailing_zeros() as usize;
            pending &= pending - 1;
            let bit = 1 << l;
            let (t, step) = (out.t[l], self.rays.step[l]);
            let result = if out.rim & bit != 0 {
                match self.cross_rim(c, env, l) {
                    Moved::Stay => continue,
                    Moved::Far(t, step) => {
                        moved(self.park(l, t, step), None);
                        continue;
                    }
                    Moved::Done(result) => result,
                }
            } else if out.budget & bit != 0 {
                (self.rays.t[l] * h, BUDGET, opts.max_steps)
            } else if out.past & bit != 0 {
                (opts.no_hit_value, MISS, step)
            } else if out.hit & bit != 0 {
                (t * h, HIT, step)
            } else {
                moved(self.park(l, t, step), None);
                continue;
            };
            moved(self.park(l, 0.0, 0), Some(result));
        }
    }

    /// Vector `v`'s lanes' cells, written to their lanes of `out`: the cell holding the point
    /// at `t` as `March::cross_cell` finds it for a crossing lane, the walk's cell for a
    /// walking one, with the exit, the smallest corner and the cubic along the ray.
    #[inline(always)]
    fn cells(
        &mut self,
        c: &mut Round<'_, '_>,
        opts: &CastOptions,
        v: usize,
        live: u32,
        out: &mut Leaving,
    ) {
        let lanes = v * VECTOR..(v + 1) * VECTOR;
        let part = |a: &[f32; NEAR]| F32x8::load(a[lanes.clone()].try_into().unwrap());
        let upart = |a: &[u32; NEAR]| U32x8::load(a[lanes.clone()].try_into().unwrap());
        let (zero, one, top) = (F32x8::splat(0.0), F32x8::splat(1.0), F32x8::splat(c.top));
        let walk_bits = (self.walking >> (v * VECTOR)) & 0xff;
        let walking = lanes_of(walk_bits);
        let t = part(&self.rays.t);
        let hi = part(&self.rays.hi);
        let p = self.rays.p.each_ref().map(part);
        let d = self.rays.d.each_ref().map(part);
        let inv = self.rays.inv.each_ref().map(part);
        // `March::at`, less the half voxel: grid coordinates.
        let g: [F32x8; 3] = std::array::from_fn(|a| (p[a] + t * d[a]) - F32x8::splat(0.5));
        // `March::cross_cell` off the rim: the cell, the fractions and the exit.
        let mut rim = g[0].lt(zero);
        let mut s_cross = (hi - t).max(zero);
        let mut cross_cell = [U32x8::splat(0); 3];
        let mut f_cross = [zero; 3];
        for a in 0..3 {
            rim = rim.or(g[a].lt(zero)).or(g[a].ge(top));
            let b = g[a].max(zero).min(top - one).truncate_u32();
            let bf = b.to_f32();
            // Ties go to the cell the ray is heading into (`g` is `b` there, and `b − 1` exact).
            let tie = d[a].lt(zero).and(g[a].eq(bf)).and(bf.gt(zero));
            let b = b.select(tie, (g[a] - one).max(zero).truncate_u32());
            let bf = b.to_f32();
            let next = bf.select(d[a].gt(zero), bf + one);
            let cand = ((next - g[a]) * inv[a]).max(zero);
            s_cross = s_cross.select(d[a].lt(zero).or(d[a].gt(zero)), s_cross.min(cand));
            f_cross[a] = g[a] - bf;
            cross_cell[a] = b;
        }
        // The walk's cell.
        let faces = self.faces.each_ref().map(part);
        let exit_walk = faces[0].min(faces[1]).min(faces[2]);
        let walk_cell = self.cell.each_ref().map(upart);
        let s_walk = (exit_walk.min(hi) - t).max(zero);
        let i0: [U32x8; 3] = std::array::from_fn(|a| cross_cell[a].select(walking, walk_cell[a]));
        let f: [F32x8; 3] =
            std::array::from_fn(|a| f_cross[a].select(walking, g[a] - walk_cell[a].to_f32()));
        let s_end = s_cross.select(walking, s_walk);
        let exit = (t + s_cross).select(walking, exit_walk);
        // The leaf holding corner 0 (`LeafTable::leaf`), and whether the cell lies in it.
        let three = U32x8::splat(3);
        let (leaf, shift) = leaves(c, i0);
        let one_u = U32x8::splat(1);
        let inside = (0..3).fold(Mask8::from_bools([true; 8]), |m, a| {
            m.and(
                (i0[a] + one_u)
                    .shift_right(shift)
                    .eq(i0[a].shift_right(shift)),
            )
        });
        let brick = leaf
            .shift_right(U32x8::splat(PAYLOAD_BITS))
            .eq(U32x8::splat(KIND_BRICK));
        let rim_bits = rim.bits() & !walk_bits;
        let slow = !inside.bits() & (live >> (v * VECTOR)) & 0xff & !rim_bits;
        // The corners in the brick (`March::grid_corners`): the codes at offsets 0, 1, 8, 9,
        // 64, 65, 72 and 73 from corner 0, as four words (see `Lanes::round_vector`). A cell
        // across leaves takes the first brick's codes here, and its corners below.
        let payload = leaf & U32x8::splat(PAYLOAD_MAX);
        let first = U32x8::splat(0).select(brick, payload.shift_left(U32x8::splat(9)));
        let seven = U32x8::splat(7);
        let local = i0.map(|v| {
            let l = v & seven;
            l.select(l.eq(seven), U32x8::splat(6))
        });
        let base = first
            + (local[0] + (local[1].shift_left(three) + local[2].shift_left(U32x8::splat(6))));
        let words = [0, 8, 64, 70].map(|o| U32x8::gather_words(c.codes, base + U32x8::splat(o)));
        let byte = |word: U32x8, b: u32| {
            word.shift_left(U32x8::splat(24 - 8 * b))
                .shift_right_signed(U32x8::splat(24))
        };
        let quant = F32x8::splat(c.quant);
        // A cell in a uniform leaf: every corner the leaf's value (`PoolView::sample_leaf`).
        let truncation = F32x8::splat(c.view.info.truncation_vox);
        let solid = leaf
            .shift_right(U32x8::splat(PAYLOAD_BITS))
            .eq(U32x8::splat(KIND_INSIDE));
        let uniform = truncation.select(solid, zero - truncation);
        let mut k: [F32x8; 8] = std::array::from_fn(|corner| {
            let code = match corner {
                6 | 7 => byte(words[3], corner as u32 - 4),
                _ => byte(words[corner / 2], corner as u32 % 2),
            };
            uniform.select(brick, code.to_f32() * quant)
        });
        if slow != 0 {
            corners_apart(c, slow, i0, &mut k);
        }
        let low = k[0]
            .min(k[1])
            .min(k[2].min(k[3]))
            .min(k[4].min(k[5]).min(k[6].min(k[7])));
        // `first_root` where a corner is at or below zero (`March::cross_cell`, `March::walk`),
        // its cases told apart in vectors and each case's lanes searched in turn.
        let needs = zero.ge(low).bits() & (live >> (v * VECTOR)) & 0xff & !rim_bits;
        let mut root = F32x8::splat(f32::NAN);
        if needs != 0 {
            let cubic = cubic_along(k, f, d);
            let (positive, decreasing) = shape_lanes(cubic, s_end);
            let at_start = zero.ge(cubic[0]).bits() & needs;
            let rest = needs & !at_start & !positive.bits();
            let end_at_or_below = s_end.gt(zero).and(zero.ge(cubic_at(cubic, s_end)));
            let bracket = rest & decreasing.and(end_at_or_below).bits();
            let search = rest & !decreasing.bits();
            let mut s = [f32::NAN; VECTOR];
            let (c4, ends) = (cubic.map(F32x8::to_array), s_end.to_array());
            let each = |mut m: u32, s: &mut [f32; VECTOR], f: &dyn Fn([f32; 4], f32) -> f32| {
                while m != 0 {
                    let l = m.trailing_zeros() as usize;
                    m &= m - 1;
                    s[l] = f(c4.map(|c| c[l]), ends[l]);
                }
            };
            each(at_start, &mut s, &|_, _| 0.0);
            each(bracket, &mut s, &|c, end| bracket_root(c, 0.0, end));
            each(search, &mut s, &|c, end| {
                search_root(c, end).unwrap_or(f32::NAN)
            });
            root = t + F32x8::load(&s);
        }
        // The walk's checks before its cell (its budget is the march's), and the lanes that
        // take a cell here (a crossing on the rim is taken one ray at a time).
        let live_bits = (live >> (v * VECTOR)) & 0xff;
        let step = upart(&self.rays.step);
        let budget = step.eq(U32x8::splat(opts.max_steps)).and(walking);
        let past = t.gt(hi).and(walking).and_not(budget);
        let takes = lanes_of(live_bits & !budget.or(past).bits() & !rim_bits);
        let step = step.select(takes, step + U32x8::splat(1));
        let hit = root.eq(root).and(takes);
        let near = low.lt(F32x8::splat(WALK_STAY_VOX));
        let half = F32x8::splat(0.5);
        // `cell_face` of cell `c` along axis `a`.
        let face = |a: usize, c: F32x8| {
            let up = ((c + one) + half - p[a]) * inv[a];
            let down = (c + half - p[a]) * inv[a];
            F32x8::splat(f32::INFINITY)
                .select(d[a].lt(zero), down)
                .select(d[a].gt(zero), up)
        };
        // A walking lane moves into the neighbour across its nearest face (`next_cell`),
        // unless that is past the grid's last cell.
        let every = zero.eq(zero);
        let x = faces[1].ge(faces[0]).and(faces[2].ge(faces[0]));
        let y = faces[2].ge(faces[1]).and_not(x);
        let nearest = [x, y, every.and_not(x).and_not(y)];
        let last = top - one;
        let mut beyond = zero.gt(zero);
        let mut next_cell = walk_cell;
        let mut next_faces = faces;
        for a in 0..3 {
            let up = d[a].gt(zero);
            let at = walk_cell[a].to_f32();
            let edge = up.and(at.eq(last)).or(at.eq(zero).and_not(up));
            beyond = beyond.or(edge.and(nearest[a]));
            let moved = (at + F32x8::splat(-1.0).select(up, one))
                .max(zero)
                .truncate_u32();
            next_cell[a] = walk_cell[a].select(nearest[a], moved);
            next_faces[a] = faces[a].select(nearest[a], face(a, moved.to_f32()));
        }
        let walks_on = walking.and(takes).and_not(hit);
        let walk_far = walks_on.and_not(near.and_not(beyond));
        let walk_stay = walks_on.and(near).and_not(beyond);
        // A crossing lane goes on from past the cell, walking (`walk_cell`) where its smallest
        // corner is near and the point is off the rim.
        let crosses_on = takes.and_not(walking).and_not(hit);
        let after = (t + part(&self.bound)).max(exit + F32x8::splat(CELL_NUDGE_VOX));
        let mut inside = every;
        let mut first_cell = walk_cell;
        let mut first_faces = faces;
        for a in 0..3 {
            let g = (p[a] + after * d[a]) - half;
            inside = inside.and(g.ge(zero).and(g.lt(top)));
            let b = g.max(zero).min(top - one).truncate_u32();
            let bf = b.to_f32();
            let tie = d[a].lt(zero).and(g.eq(bf)).and(bf.gt(zero));
            let b = b.select(tie, (g - one).max(zero).truncate_u32());
            first_cell[a] = b;
            first_faces[a] = face(a, b.to_f32());
        }
        let cross_stay = crosses_on.and(near).and(inside);
        let cross_far = crosses_on.and_not(near.and(inside));
        // The lanes staying walk on from their new state.
        let store = |a: &mut [f32; NEAR], x: F32x8| a[lanes.clone()].copy_from_slice(&x.to_array());
        let ustore =
            |a: &mut [u32; NEAR], x: U32x8| a[lanes.clone()].copy_from_slice(&x.to_array());
        let stay_t = t.select(walk_stay, t.max(exit)).select(cross_stay, after);
        store(&mut self.rays.t, stay_t);
        ustore(&mut self.rays.step, step);
        for a in 0..3 {
            let cell = walk_cell[a]
                .select(walk_stay, next_cell[a])
                .select(cross_stay, first_cell[a]);
            ustore(&mut self.cell[a], cell);
            let face = faces[a]
                .select(walk_stay, next_faces[a])
                .select(cross_stay, first_faces[a]);
            store(&mut self.faces[a], face);
        }
        let shift = v * VECTOR;
        self.walking |= cross_stay.bits() << shift;
        // The lanes leaving, and where to.
        let far_t = (exit + F32x8::splat(CELL_NUDGE_VOX)).select(cross_far, after);
        store(&mut out.t, far_t.select(hit, root));
        out.budget |= (budget.bits() & live_bits) << shift;
        out.past |= (past.bits() & live_bits) << shift;
        out.hit |= hit.bits() << shift;
        out.far |= walk_far.or(cross_far).bits() << shift;
        out.rim |= (rim_bits & live_bits) << shift;
    }

    /// Crossing lane `l` on the clamped rim of the domain: `march`'s cell crossing, one ray
    /// at a time, up to the walk's first cell.
    fn cross_rim(&mut self, c: &mut Round<'_, '_>, env: &EnvEntry, l: usize) -> Moved {
        let t = self.rays.t[l];
        let step = self.rays.step[l] + 1;
        self.rays.step[l] = step;
        let ray = self.rays.ray(l);
        let mut march = March::new(c.view, env.root, &ray, Some(&mut *c.table));
        let q = march.at(t).to_array();
        let (exit, root, low) = march.cross_cell(t, q, ray.hi);
        if let Some(t_hit) = root {
            return Moved::Done((t_hit * env.voxel_size, HIT, step));
        }
        let t = fmax(t + self.bound[l], exit + CELL_NUDGE_VOX);
        if low >= WALK_STAY_VOX {
            return Moved::Far(t, step);
        }
        // Still near: walk on from `t`.
        let (p, d) = (ray.p, ray.d);
        let q: [f32; 4] = std::array::from_fn(|a| p[a] + t * d[a]);
        let Some(i) = walk_cell(q, &d, c.top) else {
            return Moved::Far(t, step);
        };
        for (a, &ia) in i.iter().enumerate() {
            self.cell[a][l] = ia;
            self.faces[a][l] = cell_face(p[a], d[a], ray.inv[a], ia);
        }
        self.rays.t[l] = t;
        self.walking |= 1 << l;
        Moved::Stay
    }
}

/// The corners of the lanes in `slow` (of cells `i0`) whose cell lies across leaves, one lane at
/// a time with its eight corners in a vector: each corner's leaf read from the table
/// ([`leaves`]), then its code gathered from its brick (a uniform leaf's value where the corner
/// has no brick), as [`March::grid_corners`](super::super::March::grid_corners) reads them. The
/// corners in every slow lane's vector at once (three gathers per corner) cast camera rays 3–7%
/// slower; each corner's leaf and kind read one after another (`LeafTable::leaf`, a branch on
/// the kind) cost about 180 instructions and most of a mispredicted branch per lane.
#[inline(never)]
fn corners_apart(c: &mut Round<'_, '_>, slow: u32, i0: [U32x8; 3], k: &mut [F32x8; 8]) {
    let i0 = i0.map(U32x8::to_array);
    let mut lanes = k.map(F32x8::to_array);
    // Corner `j`'s offset along each axis (`x + 2y + 4z` order).
    let corner = U32x8::load(&[0, 1, 2, 3, 4, 5, 6, 7]);
    let one = U32x8::splat(1);
    let offset = [0, 1, 2].map(|a| corner.shift_right(U32x8::splat(a)) & one);
    let (seven, three, zero) = (U32x8::splat(7), U32x8::splat(3), U32x8::splat(0));
    let quant = F32x8::splat(c.quant);
    let truncation = F32x8::splat(c.view.info.truncation_vox);
    let mut pending = slow;
    while pending != 0 {
        let l = pending.trailing_zeros() as usize;
        pending &= pending - 1;
        let v: [U32x8; 3] = std::array::from_fn(|a| U32x8::splat(i0[a][l]) + offset[a]);
        let (leaf, _) = leaves(c, v);
        let kind = leaf.shift_right(U32x8::splat(PAYLOAD_BITS));
        let brick = kind.eq(U32x8::splat(KIND_BRICK));
        let solid = kind.eq(U32x8::splat(KIND_INSIDE));
        let uniform = truncation.select(solid, F32x8::splat(0.0) - truncation);
        // The code's byte offset (a uniform leaf's: the first brick's first code, ignored),
        // read from the aligned word holding it (the bricks are whole words).
        let local = (v[0] & seven)
            | (v[1] & seven).shift_left(three)
            | (v[2] & seven).shift_left(U32x8::splat(6));
        let payload = leaf & U32x8::splat(PAYLOAD_MAX);
        let at = zero.select(brick, payload.shift_left(U32x8::splat(9)) | local);
        let word = U32x8::gather_words(c.codes, at & U32x8::splat(!3));
        let code = word
            .shift_right((at & three).shift_left(three))
            .shift_left(U32x8::splat(24))
            .shift_right_signed(U32x8::splat(24));
        let value = uniform.select(brick, code.to_f32() * quant).to_array();
        for (lane, v) in lanes.iter_mut().zip(value) {
            lane[l] = v;
        }
    }
    *k = lanes.map(|x| F32x8::load(&x));
}

/// The lanes of a vector whose bits are set in `bits`.
#[inline(always)]
fn lanes_of(bits: u32) -> Mask8 {
    Mask8::from_bools(std::array::from_fn(|l| (bits >> l) & 1 == 1))
}
