//! `manifest.json`: what a corpus holds and how it was made.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::course::GateBatch;
use crate::exec::layout::{Field, NpyArray};
use crate::track::TrackBatch;

/// The `format` string of every corpus manifest.
pub const FORMAT: &str = "trackgen-corpus";

/// The corpus format version this crate writes and reads.
pub const FORMAT_VERSION: u32 = 1;

/// The `kind` of a gate corpus's manifest (track corpora have no `kind`).
pub const KIND_GATES: &str = "gates";

/// The buffers of the batch a corpus of `kind` holds (`None`: tracks,
/// [`TrackBatch::FIELDS`]; `Some("gates")`: [`GateBatch::FIELDS`]), or `None` for an unknown
/// kind. The corpus's arrays are the fields with an [`npy`](Field::npy) array, in this order;
/// [`Field::npy_shape`] gives each array's shape.
pub fn arrays_for(kind: Option<&str>) -> Option<&'static [Field]> {
    match kind {
        None => Some(TrackBatch::FIELDS),
        Some(KIND_GATES) => Some(GateBatch::FIELDS),
        Some(_) => None,
    }
}

/// The fields of `fields` that a corpus stores, with their arrays, in order.
pub fn stored(fields: &'static [Field]) -> impl Iterator<Item = (&'static Field, NpyArray)> {
    fields.iter().filter_map(|f| f.npy.map(|a| (f, a)))
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
    /// What the corpus holds: absent for tracks ([`TrackBatch`]), `"gates"` for gate courses
    /// ([`GateBatch`]). Track manifests do not carry the field, so they are unchanged.
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
