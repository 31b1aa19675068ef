//! [`GateBatch`]: the structure-of-arrays buffers of a batch of gate courses.

use crate::{Error, Result};

/// The gates of `n_envs` environments, as structure-of-arrays buffers.
///
/// Per-gate buffers are `[n_envs * g_max]`, env `e` owning `[e * g_max, (e + 1) * g_max)`; its
/// first `count[e]` gates are the course, in flying order, and the padding past them is NaN.
#[derive(Clone, Debug, PartialEq)]
pub struct GateBatch {
    /// Number of envs.
    pub n_envs: usize,
    /// Capacity of each per-gate buffer (the preset's `max_gates`).
    pub g_max: usize,
    /// The global index of env 0 of this batch.
    pub env_base: u64,
    /// Frame thickness (bar width and depth) of every gate, metres (a preset constant).
    pub thickness_m: f32,
    /// Centre of each gate's opening, metres.
    pub pos: Vec<[f32; 3]>,
    /// Orientation `[x, y, z, w]`: local x forward (the flying direction), y left (horizontal:
    /// the frames are roll-free), z up.
    pub quat: Vec<[f32; 4]>,
    /// Inner opening `[width, height]`, metres.
    pub size: Vec<[f32; 2]>,
    /// Gates per env.
    pub count: Vec<u32>,
    /// 1 if the env's gates passed validity, 0 if every attempt failed and it holds the fallback ring.
    pub valid: Vec<u8>,
    /// Placement attempts used (1 = the first try passed); with `valid[e] = 0` it is `max_attempts`.
    pub attempts: Vec<u8>,
    /// Generation counter of each env's course.
    pub generation: Vec<u32>,
}

impl GateBatch {
    /// An empty batch (all gates NaN, counts 0) for envs `env_base .. env_base + n_envs`.
    pub fn new(n_envs: usize, g_max: usize, env_base: u64, thickness_m: f32) -> Result<Self> {
        let gates = n_envs.checked_mul(g_max).ok_or_else(|| {
            Error::Invalid(format!("n_envs = {n_envs} × g_max = {g_max} overflows"))
        })?;
        Ok(Self {
            n_envs,
            g_max,
            env_base,
            thickness_m,
            pos: vec![[f32::NAN; 3]; gates],
            quat: vec![[f32::NAN; 4]; gates],
            size: vec![[f32::NAN; 2]; gates],
            count: vec![0; n_envs],
            valid: vec![0; n_envs],
            attempts: vec![0; n_envs],
            generation: vec![0; n_envs],
        })
    }

    /// The gates `[e * g_max, e * g_max + count[e])` of a per-gate buffer.
    pub fn gates<'a, T>(&self, buffer: &'a [T], e: usize) -> &'a [T] {
        let start = e * self.g_max;
        &buffer[start..start + self.count[e] as usize]
    }

    /// Envs `range` of this batch as a new batch (rows copied).
    pub fn slice(&self, range: std::ops::Range<usize>) -> Self {
        let (a, b, g) = (range.start, range.end, self.g_max);
        Self {
            n_envs: b - a,
            g_max: g,
            env_base: self.env_base + a as u64,
            thickness_m: self.thickness_m,
            pos: self.pos[a * g..b * g].to_vec(),
            quat: self.quat[a * g..b * g].to_vec(),
            size: self.size[a * g..b * g].to_vec(),
            count: self.count[a..b].to_vec(),
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
            && self.g_max == other.g_max
            && self.env_base == other.env_base
            && self.thickness_m.to_bits() == other.thickness_m.to_bits()
            && b(&self.pos) == b(&other.pos)
            && b(&self.quat) == b(&other.quat)
            && b(&self.size) == b(&other.size)
            && self.count == other.count
            && self.valid == other.valid
            && self.attempts == other.attempts
            && self.generation == other.generation
    }
}
