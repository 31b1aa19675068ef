//! The output buffers of a batch of tracks (structure of arrays).

use crate::{Error, Result};

/// The tracks of `n_envs` environments, as structure-of-arrays buffers.
///
/// Per-point buffers are `[n_envs * n_max]`, env `e` owning `[e * n_max, (e + 1) * n_max)`;
/// its first `count[e]` points are the track and the padding past them is NaN. Per-env scalars
/// are `[n_envs]`. Vectors are `[x, y, z]` in metres, z up; the track lies near z = 0.
#[derive(Clone, Debug, PartialEq)]
pub struct TrackBatch {
    /// Number of envs in the batch.
    pub n_envs: usize,
    /// Capacity of each per-point buffer, points per env.
    pub n_max: usize,
    /// The global index of env 0 of this batch (a shard of a bigger corpus starts past 0).
    pub env_base: u64,
    /// Centerline points.
    pub center: Vec<[f32; 3]>,
    /// Outer border points, index-aligned with `center` (away from the enclosed region).
    pub outer: Vec<[f32; 3]>,
    /// Inner border points, index-aligned with `center`.
    pub inner: Vec<[f32; 3]>,
    /// Unit tangents in the driving direction.
    pub tangent: Vec<[f32; 3]>,
    /// Unit horizontal normals, pointing left of the driving direction.
    pub normal: Vec<[f32; 3]>,
    /// Arc length of each point from point 0, metres.
    pub arclen: Vec<f32>,
    /// Points per env.
    pub count: Vec<u32>,
    /// Closed length per env (including the segment back to point 0), metres.
    pub length: Vec<f32>,
    /// 1 if the env's track passed validity, 0 if every attempt failed and it holds the fallback circle.
    pub valid: Vec<u8>,
    /// Attempts used (1 = the first try passed); with `valid[e] = 0` it is `max_attempts`.
    pub attempts: Vec<u8>,
    /// Generation counter of each env's current track.
    pub generation: Vec<u32>,
}

impl TrackBatch {
    /// An empty batch (all points NaN, counts 0) for envs `env_base .. env_base + n_envs`.
    pub fn new(n_envs: usize, n_max: usize, env_base: u64) -> Result<Self> {
        let points = n_envs.checked_mul(n_max).ok_or_else(|| {
            Error::Invalid(format!("n_envs = {n_envs} × n_max = {n_max} overflows"))
        })?;
        let nan3 = [f32::NAN; 3];
        Ok(Self {
            n_envs,
            n_max,
            env_base,
            center: vec![nan3; points],
            outer: vec![nan3; points],
            inner: vec![nan3; points],
            tangent: vec![nan3; points],
            normal: vec![nan3; points],
            arclen: vec![f32::NAN; points],
            count: vec![0; n_envs],
            length: vec![0.0; n_envs],
            valid: vec![0; n_envs],
            attempts: vec![0; n_envs],
            generation: vec![0; n_envs],
        })
    }

    /// The points `[e * n_max, e * n_max + count[e])` of a per-point buffer.
    pub fn points<'a, T>(&self, buffer: &'a [T], e: usize) -> &'a [T] {
        let start = e * self.n_max;
        &buffer[start..start + self.count[e] as usize]
    }

    /// Envs `range` of this batch as a new batch (rows copied).
    pub fn slice(&self, range: std::ops::Range<usize>) -> Self {
        let (a, b) = (range.start, range.end);
        let rows = |v: &Vec<[f32; 3]>| v[a * self.n_max..b * self.n_max].to_vec();
        Self {
            n_envs: b - a,
            n_max: self.n_max,
            env_base: self.env_base + a as u64,
            center: rows(&self.center),
            outer: rows(&self.outer),
            inner: rows(&self.inner),
            tangent: rows(&self.tangent),
            normal: rows(&self.normal),
            arclen: self.arclen[a * self.n_max..b * self.n_max].to_vec(),
            count: self.count[a..b].to_vec(),
            length: self.length[a..b].to_vec(),
            valid: self.valid[a..b].to_vec(),
            attempts: self.attempts[a..b].to_vec(),
            generation: self.generation[a..b].to_vec(),
        }
    }

    /// Byte-level equality (NaN padding compares equal to NaN padding).
    pub fn same_bytes(&self, other: &Self) -> bool {
        fn b<T: bytemuck::NoUninit>(v: &[T]) -> &[u8] {
            bytemuck::cast_slice(v)
        }
        self.n_envs == other.n_envs
            && self.n_max == other.n_max
            && self.env_base == other.env_base
            && b(&self.center) == b(&other.center)
            && b(&self.outer) == b(&other.outer)
            && b(&self.inner) == b(&other.inner)
            && b(&self.tangent) == b(&other.tangent)
            && b(&self.normal) == b(&other.normal)
            && b(&self.arclen) == b(&other.arclen)
            && self.count == other.count
            && b(&self.length) == b(&other.length)
            && self.valid == other.valid
            && self.attempts == other.attempts
            && self.generation == other.generation
    }
}
