//! `manifest.json`: what a corpus holds and how it was made.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::npy::Dtype;

/// The `format` string of every corpus manifest.
pub const FORMAT: &str = "trackgen-corpus";

/// The corpus format version this crate writes and reads.
pub const FORMAT_VERSION: u32 = 1;

/// The arrays of a corpus, in the order they are written: `(name, dtype, per_point)`.
///
/// `per_point` is the number of components per point: `Some(3)` for `[N, N_max, 3]` vectors,
/// `Some(1)` for `[N, N_max]` per-point scalars; `None` marks `[N]` per-env scalars.
pub const ARRAYS: &[(&str, Dtype, Option<u64>)] = &[
    ("center", Dtype::F4, Some(3)),
    ("outer", Dtype::F4, Some(3)),
    ("inner", Dtype::F4, Some(3)),
    ("tangent", Dtype::F4, Some(3)),
    ("normal", Dtype::F4, Some(3)),
    ("arclen", Dtype::F4, Some(1)),
    ("count", Dtype::I4, None),
    ("length", Dtype::F4, None),
    ("valid", Dtype::U1, None),
    ("attempts", Dtype::U1, None),
];

/// The shape of an array with `per_point` components (as in [`ARRAYS`]) for `n_envs` envs of
/// `n_max` points.
pub fn array_shape(per_point: Option<u64>, n_envs: u64, n_max: u64) -> Vec<u64> {
    match per_point {
        Some(3) => vec![n_envs, n_max, 3],
        Some(_) => vec![n_envs, n_max],
        None => vec![n_envs],
    }
}

/// One array file of a corpus.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArrayEntry {
    /// File name inside the corpus directory (`center.npy`).
    pub file: String,
    /// numpy type string: `"<f4"`, `"<i4"` or `"|u1"`.
    pub dtype: String,
    /// Shape, outermost first.
    pub shape: Vec<u64>,
    /// SHA-256 of the whole `.npy` file (header included), lowercase hex.
    pub sha256: String,
}

/// Summary statistics over all envs of a corpus.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    /// Fraction of envs whose track passed validity (the others hold the fallback circle).
    pub valid_fraction: f64,
    /// Mean points per env.
    pub mean_count: f64,
    /// Mean closed track length, metres.
    pub mean_length_m: f64,
    /// Mean attempts used per env.
    pub mean_attempts: f64,
}

/// The contents of `manifest.json`.
///
/// It holds no timestamps or timings, so the same command writes the same bytes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// Always [`FORMAT`].
    pub format: String,
    /// [`FORMAT_VERSION`] of the writer.
    pub format_version: u32,
    /// Version of the trackgen crate that wrote it.
    pub crate_version: String,
    /// The preset's source: a built-in name or the path it was loaded from.
    pub preset_source: String,
    /// The resolved preset (every key, defaults filled in) as TOML text.
    pub preset_toml: String,
    /// SHA-256 of `preset_toml`, lowercase hex.
    pub preset_sha256: String,
    /// The seed.
    pub seed: u64,
    /// The generation every env was generated at.
    pub generation: u32,
    /// Global env indices `[a, b)`: row `i` of every array is env `a + i`.
    pub env_range: [u64; 2],
    /// Points per env (the second dimension of per-point arrays).
    pub n_max: u64,
    /// Array files by name (`center`, `outer`, ..., `attempts`).
    pub arrays: BTreeMap<String, ArrayEntry>,
    /// Summary statistics.
    pub stats: Stats,
}

impl Manifest {
    /// Rows in every array (`env_range[1] - env_range[0]`).
    pub fn n_envs(&self) -> u64 {
        self.env_range[1].saturating_sub(self.env_range[0])
    }
}
