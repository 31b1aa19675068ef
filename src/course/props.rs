//! Boundary props: poses along a track border at a set spacing, for instanced rendering and
//! colliders — cones and poles (points) or wall pieces (segments).
//!
//! # Contract
//! For env `e` with a valid track, [`props_lane`] walks the closed border polyline (inner or
//! outer, 3D) of length `L` and places `n` props at arc lengths `k·L/n`, `k = 0..n`, where
//! `n = round(L / spacing_m)` clamped to `3 ..= max_props`: the spacing is snapped to `L/n`
//! so that the ring closes with no gap and no doubled prop (with `n = max_props` the spacing
//! widens). With `p_k` the border point at `k·L/n` and `p_n = p_0`:
//!
//! - [`PropKind::Point`]: `pos = p_k`; `quat` the yaw-only rotation whose local `x` follows the
//!   border's direction at `p_k` (cones stand upright);
//! - [`PropKind::Segment`]: `pos = (p_k + p_{k+1}) / 2`, the midpoint of the chord; `quat` the
//!   roll-free rotation ([`crate::geom::roll_free`]) whose local `x` runs along the chord, so a
//!   wall piece of `length` along local `x` spans `p_k → p_{k+1}` exactly and consecutive pieces
//!   share their end points;
//!
//! and in both kinds `length = |p_{k+1} − p_k|`, the 3D chord to the next prop, metres.
//! Props are NaN past `count[e]`; an invalid env (`valid = 0`: the fallback circle) gets
//! `count = 0`.
//!
//! # Determinism
//! Lane code in the rule of [`crate::geom`]: IEEE operations, `math::atan2` and `math::sin_cos`
//! through the frame helpers; the walk along the border is sequential.

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::exec::layout::soa_batch;
use crate::exec::Launch;
use crate::geom::{roll_free, Quat, Vec3};
use crate::track::TrackBatch;
use crate::{Error, Result};

/// The most props per env accepted.
pub const MAX_PROPS: u32 = 1 << 16;

/// Which border props line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    /// The inner border (towards the enclosed region).
    Inner,
    /// The outer border.
    Outer,
}

/// What a prop is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PropKind {
    /// A point on the border (cones, poles).
    Point,
    /// A chord between consecutive points (wall pieces).
    Segment,
}

/// How props are placed.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct PropConfig {
    /// The border they line.
    pub side: Side,
    /// Points or segments.
    pub kind: PropKind,
    /// Wanted arc length between consecutive props, metres (> 0); snapped to close the ring.
    pub spacing_m: f32,
    /// Capacity `P_max` per env (3 ..= [`MAX_PROPS`]).
    pub max_props: u32,
}

impl PropConfig {
    /// `Ok` if the values are in range, else an [`Error::Invalid`] naming the value.
    pub fn check(&self) -> Result<()> {
        if !(self.spacing_m > 0.0 && self.spacing_m.is_finite()) {
            return Err(Error::Invalid(format!(
                "prop spacing_m = {}: expected a finite number > 0",
                self.spacing_m
            )));
        }
        if !(3..=MAX_PROPS).contains(&self.max_props) {
            return Err(Error::Invalid(format!(
                "max_props = {}: expected 3..={MAX_PROPS}",
                self.max_props
            )));
        }
        Ok(())
    }
}

soa_batch! {
    /// The boundary props of `n_envs` envs: `p_max` per env, the first `count[e]` of env `e` in
    /// order along the border, NaN past them. A corpus stores them as `prop_pos.npy`
    /// `[N, P, 3]`, `prop_quat.npy` `[N, P, 4]`, `prop_length.npy` `[N, P]` (`<f4`) and
    /// `prop_count.npy` `[N]` (`<i4`).
    #[derive(Clone, Debug)]
    pub struct PropBatch {
        /// Number of envs.
        rows: n_envs,
        /// Capacity per env, `P_max`.
        capacity: p_max,
        /// The global index of env 0.
        base: env_base,
        consts {}
        per_point {
            /// Point: the prop's position; segment: the chord's midpoint. Metres.
            pos: Vec3 = Vec3::NAN => npy("prop_pos", F4),
            /// Orientation `[x, y, z, w]`, local `x` along the border (see the module contract).
            quat: Quat = Quat::NAN => npy("prop_quat", F4),
            /// 3D chord to the next prop, metres (a segment's length).
            length: f32 = f32::NAN => npy("prop_length", F4),
        }
        per_env {
            /// Props per env (stored as `<i4`).
            count: u32 = 0 => npy("prop_count", I4),
        }
    }
}

/// The props of a batch of envs with their config.
#[derive(Clone, Debug)]
pub struct Props {
    /// How they are placed.
    pub config: PropConfig,
    /// The poses.
    pub batch: PropBatch,
}

impl Props {
    /// Empty props of `n_envs` envs from `env_base`; an [`Error::Invalid`] for a bad config or
    /// a batch that cannot be allocated.
    pub fn new(config: PropConfig, n_envs: usize, env_base: u64) -> Result<Self> {
        config.check()?;
        Ok(Self {
            config,
            batch: PropBatch::new(n_envs, config.max_props as usize, env_base)?,
        })
    }

    /// Places the props of the envs with `mask[e] != 0` along their tracks; the others are not
    /// written. A `tracks` batch or `mask` whose env count differs from these props' is an
    /// [`Error::Invalid`] naming both counts (nothing is written).
    pub fn place(&mut self, tracks: &TrackBatch, mask: &[u8], launch: &Launch) -> Result<()> {
        super::heightfield::check_envs("props", self.batch.n_envs, tracks, mask)?;
        let (p_max, config) = (self.batch.p_max, self.config);
        let b = &mut self.batch;
        let lanes = (
            (
                b.pos.par_chunks_mut(p_max),
                b.quat.par_chunks_mut(p_max),
                b.length.par_chunks_mut(p_max),
            ),
            b.count.par_iter_mut(),
            mask.par_iter(),
        );
        launch.lanes(
            lanes.into_par_iter(),
            |e, ((pos, quat, length), count, &m)| {
                if m == 0 {
                    return;
                }
                let n = tracks.count[e] as usize;
                let start = e * tracks.n_max;
                let border = match config.side {
                    Side::Inner => &tracks.inner[start..start + n],
                    Side::Outer => &tracks.outer[start..start + n],
                };
                let out = PropRow {
                    pos,
                    quat,
                    length,
                    count,
                };
                props_lane(&config, border, tracks.valid[e] != 0, out);
            },
        );
        Ok(())
    }

    /// Env `e`'s props: `(pos, quat, length)` of its first `count[e]`.
    pub fn env(&self, e: usize) -> (&[Vec3], &[Quat], &[f32]) {
        let b = &self.batch;
        let (s, n) = (e * b.p_max, b.count[e] as usize);
        (&b.pos[s..s + n], &b.quat[s..s + n], &b.length[s..s + n])
    }
}

/// One env's output rows (`P_max` each) and count.
#[derive(Debug)]
pub struct PropRow<'a> {
    /// Positions.
    pub pos: &'a mut [Vec3],
    /// Orientations.
    pub quat: &'a mut [Quat],
    /// Chord lengths.
    pub length: &'a mut [f32],
    /// Props written.
    pub count: &'a mut u32,
}

/// Places one env's props along the closed `border` (see the [module](self) contract).
pub fn props_lane(config: &PropConfig, border: &[Vec3], valid: bool, out: PropRow<'_>) {
    let capacity = out.pos.len();
    out.pos.fill(Vec3::NAN);
    out.quat.fill(Quat::NAN);
    out.length.fill(f32::NAN);
    *out.count = 0;
    let m = border.len();
    if !valid || m < 3 || capacity < 3 {
        return;
    }
    let next = |i: usize| if i + 1 == m { 0 } else { i + 1 };
    let mut total = 0.0f32;
    for i in 0..m {
        total += (border[next(i)] - border[i]).length();
    }
    let wanted = total / config.spacing_m;
    let n = if wanted.is_finite() && wanted < capacity as f32 {
        (crate::math::round_small(wanted) as usize).clamp(3, capacity)
    } else {
        capacity
    };
    let step = total / n as f32;
    // Walk the border once: segment `seg` spans arc lengths [walked, walked + seg_len).
    let (mut seg, mut walked) = (0usize, 0.0f32);
    let mut seg_len = (border[1] - border[0]).length();
    let mut at = |target: f32| -> (Vec3, Vec3) {
        while walked + seg_len <= target && seg + 1 < m {
            walked += seg_len;
            seg += 1;
            seg_len = (border[next(seg)] - border[seg]).length();
        }
        let (a, b) = (border[seg], border[next(seg)]);
        let t = if seg_len > 0.0 {
            ((target - walked) / seg_len).clamp(0.0, 1.0)
        } else {
            0.0
        };
        (a + (b - a) * t, b - a)
    };
    let (first, first_dir) = at(0.0);
    let (mut p, mut dir) = (first, first_dir);
    for k in 0..n {
        let (q, q_dir) = if k + 1 == n {
            (first, first_dir)
        } else {
            at((k + 1) as f32 * step)
        };
        let chord = q - p;
        out.length[k] = chord.length();
        match config.kind {
            PropKind::Point => {
                out.pos[k] = p;
                out.quat[k] = roll_free(Vec3::new(dir.x, dir.y, 0.0));
            }
            PropKind::Segment => {
                out.pos[k] = (p + q) * 0.5;
                out.quat[k] = roll_free(chord);
            }
        }
        (p, dir) = (q, q_dir);
    }
    *out.count = n as u32;
}
