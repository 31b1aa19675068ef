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
//! `manifest.json` ([`Manifest`]) records the format and its version, the crate version, the
//! preset (source, resolved TOML, SHA-256), seed, generation, env range, `N_max`, every array's
//! file, dtype, shape and SHA-256, and summary statistics. It holds no timestamps, so the same
//! command writes byte-identical corpora.
//!
//! [`write_corpus`] generates envs in chunks with one reused [`Pipeline`](crate::track::Pipeline)
//! and streams rows into the files (each NPY header carries the final shape and is written
//! first), so memory stays at one chunk whatever the corpus size. It writes into a hidden sibling
//! directory and renames it into place at the end: a corpus directory is complete or absent.
//! [`read_corpus`] and [`Corpus`] validate and read one back.

mod manifest;
pub mod npy;
mod read;
mod write;

pub use manifest::{array_shape, ArrayEntry, Manifest, Stats, ARRAYS, FORMAT, FORMAT_VERSION};
pub use read::{read_corpus, Corpus};
pub use write::{write_corpus, DEFAULT_CHUNK_ENVS, MANIFEST_FILE};
