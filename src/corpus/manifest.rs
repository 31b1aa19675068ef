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

/// The arrays of a gate corpus (`kind = "gates"`), in the order they are written, as in
/// [`ARRAYS`]; the second dimension is `G = n_max`, the preset's `max_gates`.
pub const GATE_ARRAYS: &[(&str, Dtype, Option<u64>)] = &[
    ("gate_pos", Dtype::F4, Some(3)),
    ("gate_quat", Dtype::F4, Some(4)),
    ("gate_size", Dtype::F4, Some(2)),
    ("gate_count", Dtype::I4, None),
    ("valid", Dtype::U1, None),
    ("attempts", Dtype::U1, None),
];

/// The `kind` of a gate corpus's manifest (track corpora have no `kind`).
pub const KIND_GATES: &str = "gates";

/// The arrays of a corpus of `kind` (`None`: tracks, [`ARRAYS`]; `Some("gates")`:
/// [`GATE_ARRAYS`]), or `None` for an unknown kind.
pub fn arrays_for(kind: Option<&str>) -> Option<&'static [(&'static str, Dtype, Option<u64>)]> {
    match kind {
        None => Some(ARRAYS),
        Some(KIND_GATES) => Some(GATE_ARRAYS),
        Some(_) => None,
    }
}

/// The shape of an array with `per_point` components (as in [`ARRAYS`]) for `n_envs` envs of
/// `n_max` points: `[N, n_max, k]` for `Some(k)` with `k > 1`, `[N, n_max]` for `Some(1)`,
/// `[N]` for `None`.
pub fn array_shape(per_point: Option<u64>, n_envs: u64, n_max: u64) -> Vec<u64> {
    match per_point {
        Some(1) => vec![n_envs, n_max],
        Some(k) => vec![n_envs, n_max, k],
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
    /// Fraction of envs whose track (gate course) passed validity (the others hold the fallback
    /// circle, or ring of gates).
    pub valid_fraction: f64,
    /// Mean points per env (gate corpus: mean gates per env).
    pub mean_count: f64,
    /// Mean closed track length, metres (gate corpus: mean closed length of the polyline
    /// through the gate centres).
    pub mean_length_m: f64,
    /// Mean attempts used per env.
    pub mean_attempts: f64,
    /// Shape statistics of the tracks (see [`crate::track::stats`]); absent in gate corpora and
    /// in manifests written before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shape: Option<crate::track::stats::ShapeStats>,
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
    /// What the corpus holds: absent for tracks ([`ARRAYS`]), `"gates"` for gate courses
    /// ([`GATE_ARRAYS`]). Track manifests do not carry the field, so they are unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// The seed.
    pub seed: u64,
    /// The generation every env was generated at.
    pub generation: u32,
    /// Global env indices `[a, b)`: row `i` of every array is env `a + i`.
    pub env_range: [u64; 2],
    /// Points per env (the second dimension of per-point arrays); gates per env (`G`) in a
    /// gate corpus.
    pub n_max: u64,
    /// Array files by name (`center`, `outer`, ..., `attempts`; or `gate_pos`, ..., `attempts`).
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
