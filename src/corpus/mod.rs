//! Corpora on disk: format v1, a directory of `.npy` arrays and a `manifest.json`.
//!
//! A corpus holds the tracks of envs `[a, b)` of one `(preset, seed, generation)`: row `i` of every
//! array is global env `a + i`. Because an env's track is a pure function of
//! `(preset, seed, env, generation)`, a corpus of envs `[a, b)` holds exactly rows `a..b` of the
//! corpus of envs `[0, b)`, whatever the chunk size or thread count that wrote either.
//!
//! | file           | dtype   | shape          | contents                                        |
//! |----------------|---------|----------------|-------------------------------------------------|
//! | `center.npy`   | `<f4`   | `[N, N_max, 3]`| centerline points, metres; NaN past `count`     |
//! | `outer.npy`    | `<f4`   | `[N, N_max, 3]`| outer border points; NaN past `count`           |
//! | `inner.npy`    | `<f4`   | `[N, N_max, 3]`| inner border points; NaN past `count`           |
//! | `tangent.npy`  | `<f4`   | `[N, N_max, 3]`| unit tangents (driving direction); NaN past `count` |
//! | `normal.npy`   | `<f4`   | `[N, N_max, 3]`| unit horizontal normals (left); NaN past `count`|
//! | `arclen.npy`   | `<f4`   | `[N, N_max]`   | arc length from point 0, metres; NaN past `count` |
//! | `count.npy`    | `<i4`   | `[N]`          | points per env                                  |
//! | `length.npy`   | `<f4`   | `[N]`          | closed length, metres                           |
//! | `valid.npy`    | `\|u1`  | `[N]`          | 1 = passed validity, 0 = fallback circle         |
//! | `attempts.npy` | `\|u1`  | `[N]`          | attempts used                                   |
//!
//! A **gate corpus** (written for a preset with a `[gates]` section; its manifest has
//! `"kind": "gates"`, and `N_max` is `G`, the preset's `max_gates`) holds instead:
//!
//! | file             | dtype   | shape        | contents                                          |
//! |------------------|---------|--------------|---------------------------------------------------|
//! | `gate_pos.npy`   | `<f4`   | `[N, G, 3]`  | centre of each gate's opening, metres; NaN past `gate_count` |
//! | `gate_quat.npy`  | `<f4`   | `[N, G, 4]`  | orientation `[x, y, z, w]`: local x forward, y left (level), z up; NaN past `gate_count` |
//! | `gate_size.npy`  | `<f4`   | `[N, G, 2]`  | inner opening `[width, height]`, metres; NaN past `gate_count` |
//! | `gate_count.npy` | `<i4`   | `[N]`        | gates per env, in flying order                    |
//! | `valid.npy`      | `\|u1`  | `[N]`        | 1 = passed gate validity, 0 = fallback ring       |
//! | `attempts.npy`   | `\|u1`  | `[N]`        | gate placement attempts used                      |
//!
//! The frame thickness is a preset constant, recorded in the manifest's `preset_toml`.
//!
//! A track corpus written with [`CorpusExtras`] (`trackgen generate --heightfield R`,
//! `--props ...`) holds, besides, the optional arrays below; its manifest then records their
//! settings (`"heightfield": {"resolution", "margin_m"}`, `"props": {"side", "kind",
//! "spacing_m", "max_props"}`). Corpora written without them are byte-identical to before.
//!
//! | file                      | dtype | shape        | contents                                  |
//! |---------------------------|-------|--------------|-------------------------------------------|
//! | `heightfield.npy`         | `<f4` | `[N, R, R]`  | road height at texel centres, row `j` along `+y`, column `i` along `+x` ([`crate::course::heightfield`]); NaN for invalid envs |
//! | `heightfield_bounds.npy`  | `<f4` | `[N, 2, 2]`  | `[[x_min, y_min], [x_max, y_max]]`, metres |
//! | `prop_pos.npy`            | `<f4` | `[N, P, 3]`  | prop position (segment: chord midpoint) ([`crate::course::props`]); NaN past `prop_count` |
//! | `prop_quat.npy`           | `<f4` | `[N, P, 4]`  | orientation `[x, y, z, w]`, local x along the border |
//! | `prop_length.npy`         | `<f4` | `[N, P]`     | 3D chord to the next prop, metres          |
//! | `prop_count.npy`          | `<i4` | `[N]`        | props per env                              |
//!
//! `manifest.json` ([`Manifest`]) records the format and its version, the crate version, the
//! preset (source, resolved TOML, SHA-256), seed, generation, env range, `N_max`, every array's
//! file, dtype, shape and SHA-256, and summary statistics. It holds no timestamps, so the same
//! command writes byte-identical corpora.
//!
//! [`write_corpus`] generates envs in chunks with one reused [`Pipeline`](crate::track::Pipeline)
//! and streams rows into the files (each NPY header carries the final shape and is written
//! first), so memory stays at one chunk whatever the corpus size. It writes into a hidden sibling
//! directory and renames it into place at the end: a corpus directory is complete or absent.
//! [`read_corpus`], [`read_gate_corpus`] and [`Corpus`] validate and read one back.
//!
//! Shards written separately (`trackgen generate --env-range A..B`, on other processes or
//! machines) become one corpus with [`merge_corpora`] (`trackgen merge`): it checks that they
//! agree and tile one env range, copies their rows in env order and recomputes the statistics,
//! so the merged directory is byte-identical to the corpus one run writes for the whole range,
//! manifest included, and every reader (the Rust reader, the Python module, the numpy loader)
//! reads it as any other corpus.

mod manifest;
mod merge;
pub mod npy;
mod read;
mod write;

pub use manifest::{
    arrays_for, stored, ArrayEntry, ArraySet, CorpusExtras, Manifest, Stats, FORMAT,
    FORMAT_VERSION, KIND_GATES,
};
pub use merge::{merge_corpora, DEFAULT_MERGE_ROWS};
pub use read::{read_corpus, read_gate_corpus, Corpus};
pub use write::{
    corpus_bytes, extras_bytes, write_corpus, write_corpus_with, Progress, DEFAULT_CHUNK_ENVS,
    MANIFEST_FILE,
};
