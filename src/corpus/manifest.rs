//! `manifest.json`: what a corpus holds and how it was made.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::course::heightfield::{HeightfieldBatch, HeightfieldBounds, CORNERS};
use crate::course::{GateBatch, HeightfieldConfig, PropBatch, PropConfig};
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

/// The optional arrays a corpus may hold besides its kind's: what [`write_corpus_with`]
/// adds on request and the manifest records (its `heightfield` and `props` entries).
///
/// [`write_corpus_with`]: super::write_corpus_with
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CorpusExtras {
    /// Road heightfields: `heightfield.npy` `[N, R, R]` and `heightfield_bounds.npy`
    /// `[N, 2, 2]` ([`HeightfieldBatch`], [`HeightfieldBounds`]). Track corpora only.
    pub heightfield: Option<HeightfieldConfig>,
    /// Boundary props: `prop_pos.npy` `[N, P, 3]`, `prop_quat.npy` `[N, P, 4]`,
    /// `prop_length.npy` `[N, P]`, `prop_count.npy` `[N]` ([`PropBatch`]). Track corpora only.
    pub props: Option<PropConfig>,
}

impl CorpusExtras {
    /// Whether nothing optional is asked for.
    pub fn is_empty(&self) -> bool {
        self.heightfield.is_none() && self.props.is_none()
    }

    /// The optional batches' array sets, in the order a corpus stores them.
    pub fn sets(&self) -> Vec<ArraySet> {
        let mut sets = Vec::new();
        if let Some(h) = &self.heightfield {
            let r = u64::from(h.resolution);
            sets.push(ArraySet {
                fields: HeightfieldBatch::FIELDS,
                capacity: r * r,
                grid: Some(r),
            });
            sets.push(ArraySet {
                fields: HeightfieldBounds::FIELDS,
                capacity: CORNERS as u64,
                grid: None,
            });
        }
        if let Some(p) = &self.props {
            sets.push(ArraySet {
                fields: PropBatch::FIELDS,
                capacity: u64::from(p.max_props),
                grid: None,
            });
        }
        sets
    }

    /// The extras a manifest records.
    pub fn of(manifest: &Manifest) -> Self {
        Self {
            heightfield: manifest.heightfield,
            props: manifest.props,
        }
    }
}

/// The arrays of one batch declaration in a corpus: its fields (those with an `npy` array are
/// stored), the per-env capacity of its per-point buffers, and, for a square grid of `R²`
/// points per env, `grid = Some(R)`: the array is stored `[N, R, R]` instead of `[N, R²]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArraySet {
    /// The batch's fields ([`Layout::FIELDS`](crate::exec::layout::Layout::FIELDS)).
    pub fields: &'static [Field],
    /// Per-point capacity per env.
    pub capacity: u64,
    /// `Some(R)` for a grid of `R × R` points per env.
    pub grid: Option<u64>,
}

impl ArraySet {
    /// The shape of `field`'s array in a corpus of `n_envs` rows.
    pub fn shape(&self, field: &Field, n_envs: u64) -> Vec<u64> {
        let mut shape = field
            .npy_shape(n_envs, self.capacity)
            .expect("stored fields have an array");
        if let (Some(r), crate::exec::layout::Extent::PerPoint) = (self.grid, field.extent) {
            shape.splice(1..2, [r, r]);
        }
        shape
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
    /// The heightfield settings, when the corpus holds `heightfield` and `heightfield_bounds`
    /// (absent otherwise, so corpora without them are unchanged).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heightfield: Option<HeightfieldConfig>,
    /// The prop settings, when the corpus holds `prop_pos`, `prop_quat`, `prop_length` and
    /// `prop_count` (absent otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub props: Option<PropConfig>,
}

impl Manifest {
    /// Rows in every array (`env_range[1] - env_range[0]`).
    pub fn n_envs(&self) -> u64 {
        self.env_range[1].saturating_sub(self.env_range[0])
    }

    /// Every array set of the corpus: its kind's batch (capacity `n_max`), then the optional
    /// ones its `heightfield` and `props` entries record. `None` for an unknown kind.
    pub fn array_sets(&self) -> Option<Vec<ArraySet>> {
        let base = ArraySet {
            fields: arrays_for(self.kind.as_deref())?,
            capacity: self.n_max,
            grid: None,
        };
        let mut sets = vec![base];
        sets.extend(CorpusExtras::of(self).sets());
        Some(sets)
    }
}
