//! [`GateBatch`]: the structure-of-arrays buffers of a batch of gate courses.

use crate::exec::layout::soa_batch;
use crate::geom::{Quat, Vec2, Vec3};

soa_batch! {
    /// The gates of `n_envs` environments, as structure-of-arrays buffers.
    ///
    /// Per-gate buffers are `[n_envs * g_max]`, env `e` owning `[e * g_max, (e + 1) * g_max)`; its
    /// first `count[e]` gates are the course, in flying order, and the padding past them is NaN.
    /// The buffers marked `npy` are the arrays of a gate corpus ([`crate::corpus`]).
    #[derive(Clone, Debug)]
    pub struct GateBatch {
        /// Number of envs.
        rows: n_envs,
        /// Capacity of each per-gate buffer (the preset's `max_gates`).
        capacity: g_max,
        /// The global index of env 0 of this batch.
        base: env_base,
        consts {
            /// Frame thickness (bar width and depth) of every gate, metres (a preset constant).
            thickness_m: f32,
        }
        per_point {
            /// Centre of each gate's opening, metres.
            pos: Vec3 = Vec3::NAN => npy("gate_pos", F4),
            /// Orientation `[x, y, z, w]`: local x forward (the flying direction), y left
            /// (horizontal: the frames are roll-free), z up.
            quat: Quat = Quat::NAN => npy("gate_quat", F4),
            /// Inner opening `[width, height]`, metres.
            size: Vec2 = Vec2::NAN => npy("gate_size", F4),
        }
        per_env {
            /// Gates per env (stored as `<i4` in a corpus).
            count: u32 = 0 => npy("gate_count", I4),
            /// 1 if the env's gates passed validity, 0 if every attempt failed and it holds the
            /// fallback ring.
            valid: u8 = 0 => npy("valid", U1),
            /// Placement attempts used (1 = the first try passed); with `valid[e] = 0` it is
            /// `max_attempts`.
            attempts: u8 = 0 => npy("attempts", U1),
            /// Generation counter of each env's course.
            generation: u32 = 0,
        }
    }
}

impl GateBatch {
    /// The gates `[e * g_max, e * g_max + count[e])` of a per-gate buffer.
    pub fn gates<'a, T>(&self, buffer: &'a [T], e: usize) -> &'a [T] {
        let start = e * self.g_max;
        &buffer[start..start + self.count[e] as usize]
    }
}
