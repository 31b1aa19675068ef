//! The output buffers of a batch of tracks (structure of arrays).

use crate::exec::layout::soa_batch;
use crate::geom::Vec3;

soa_batch! {
    /// The tracks of `n_envs` environments, as structure-of-arrays buffers.
    ///
    /// Per-point buffers are `[n_envs * n_max]`, env `e` owning `[e * n_max, (e + 1) * n_max)`;
    /// its first `count[e]` points are the track and the padding past them is NaN (a new batch is
    /// all NaN with counts 0; the CPU pipeline keeps this by padding only the rows between the new
    /// count and the previous one, so a batch must not be edited past its counts). Per-env scalars
    /// are `[n_envs]`. Vectors are glam [`Vec3`]s (the bytes of `[x, y, z]`) in metres, z up; the track lies near z = 0.
    /// The buffers marked `npy` are the arrays of a track corpus ([`crate::corpus`]).
    #[derive(Clone, Debug)]
    pub struct TrackBatch {
        /// Number of envs in the batch.
        rows: n_envs,
        /// Capacity of each per-point buffer, points per env.
        capacity: n_max,
        /// The global index of env 0 of this batch (a shard of a bigger corpus starts past 0).
        base: env_base,
        consts {}
        per_point {
            /// Centerline points.
            center: Vec3 = Vec3::NAN => npy("center", F4),
            /// Outer border points, index-aligned with `center` (away from the enclosed region).
            outer: Vec3 = Vec3::NAN => npy("outer", F4),
            /// Inner border points, index-aligned with `center`.
            inner: Vec3 = Vec3::NAN => npy("inner", F4),
            /// Unit tangents in the driving direction.
            tangent: Vec3 = Vec3::NAN => npy("tangent", F4),
            /// Unit horizontal normals, pointing left of the driving direction.
            normal: Vec3 = Vec3::NAN => npy("normal", F4),
            /// Arc length of each point from point 0, metres.
            arclen: f32 = f32::NAN => npy("arclen", F4),
        }
        per_env {
            /// Points per env (stored as `<i4` in a corpus: counts are far below 2³¹).
            count: u32 = 0 => npy("count", I4),
            /// Closed length per env (including the segment back to point 0), metres.
            length: f32 = 0.0 => npy("length", F4),
            /// 1 if the env's track passed validity, 0 if every attempt failed and it holds the
            /// fallback circle.
            valid: u8 = 0 => npy("valid", U1),
            /// Attempts used (1 = the first try passed); with `valid[e] = 0` it is `max_attempts`.
            attempts: u8 = 0 => npy("attempts", U1),
            /// Generation counter of each env's current track.
            generation: u32 = 0,
        }
    }
}

impl TrackBatch {
    /// The points `[e * n_max, e * n_max + count[e])` of a per-point buffer.
    pub fn points<'a, T>(&self, buffer: &'a [T], e: usize) -> &'a [T] {
        let start = e * self.n_max;
        &buffer[start..start + self.count[e] as usize]
    }
}
