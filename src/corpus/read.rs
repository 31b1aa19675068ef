//! Reading a corpus back: validation of the manifest and every NPY header, row reads.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::ops::Range;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::manifest::{arrays_for, stored, Manifest, FORMAT, FORMAT_VERSION};
use super::npy::{hex, parse_header, Header};
use super::write::MANIFEST_FILE;
use crate::course::{GateBatch, Heightfields, Props};
use crate::exec::layout::Layout;
use crate::preset::Preset;
use crate::track::TrackBatch;
use crate::{Error, Result};

/// An opened corpus: its manifest, and every array's header checked against it.
#[derive(Clone, Debug)]
pub struct Corpus {
    dir: PathBuf,
    manifest: Manifest,
    headers: BTreeMap<String, Header>,
}

fn format_error(path: &Path, message: String) -> Error {
    Error::Format {
        path: path.to_path_buf(),
        message,
    }
}

impl Corpus {
    /// Opens the corpus in `dir`: parses `manifest.json`, checks its format and version, and
    /// checks that every array file exists with the manifest's dtype and shape and the size they
    /// imply. Errors name the file at fault.
    pub fn open(dir: &Path) -> Result<Self> {
        let manifest_path = dir.join(MANIFEST_FILE);
        if !dir.is_dir() {
            return Err(format_error(
                dir,
                "not a corpus directory (no such directory)".into(),
            ));
        }
        if !manifest_path.is_file() {
            return Err(format_error(
                &manifest_path,
                "missing: not a trackgen corpus directory".into(),
            ));
        }
        let text =
            std::fs::read_to_string(&manifest_path).map_err(|e| Error::input(&manifest_path, e))?;
        let manifest = parse_manifest(&text, &manifest_path)?;

        let mut headers = BTreeMap::new();
        let n_envs = manifest.n_envs();
        let sets = manifest
            .array_sets()
            .expect("parse_manifest rejects unknown kinds");
        let arrays = sets.iter().flat_map(|set| {
            stored(set.fields).map(move |(field, array)| (array, set.shape(field, n_envs)))
        });
        for (array, expected_shape) in arrays {
            let (name, dtype) = (array.name, array.dtype);
            let entry = manifest.arrays.get(name).ok_or_else(|| {
                format_error(&manifest_path, format!("no entry for array `{name}`"))
            })?;
            if entry.dtype != dtype.descr() || entry.shape != expected_shape {
                return Err(format_error(
                    &manifest_path,
                    format!(
                        "array `{name}` is {} {:?}: expected {} {:?}",
                        entry.dtype,
                        entry.shape,
                        dtype.descr(),
                        expected_shape
                    ),
                ));
            }
            if entry.file.is_empty()
                || entry.file.contains(['/', '\\'])
                || entry.file.starts_with('.')
            {
                return Err(format_error(
                    &manifest_path,
                    format!(
                        "array `{name}` file {:?}: expected a plain file name inside the corpus",
                        entry.file
                    ),
                ));
            }
            let path = dir.join(&entry.file);
            let header = read_header(&path)?;
            if header.dtype != dtype || header.shape != expected_shape {
                return Err(format_error(
                    &path,
                    format!(
                        "holds {} {:?}: the manifest says {} {:?}",
                        header.dtype.descr(),
                        header.shape,
                        dtype.descr(),
                        expected_shape
                    ),
                ));
            }
            let expected_len = header
                .data_bytes()
                .and_then(|d| d.checked_add(header.data_offset))
                .ok_or_else(|| format_error(&path, "array size overflows".into()))?;
            let len = std::fs::metadata(&path)
                .map_err(|e| Error::input(&path, e))?
                .len();
            if len != expected_len {
                return Err(format_error(
                    &path,
                    format!("file is {len} bytes: expected {expected_len} for its header's shape (truncated or appended to)"),
                ));
            }
            headers.insert(name.to_string(), header);
        }
        Ok(Self {
            dir: dir.to_path_buf(),
            manifest,
            headers,
        })
    }

    /// The manifest.
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// The corpus directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Whether this is a gate corpus (`kind = "gates"`).
    pub fn is_gates(&self) -> bool {
        self.manifest.kind.is_some()
    }

    /// Rows `rows` of the corpus (row `i` is global env `env_range[0] + i`) as a batch whose
    /// `env_base` is that global index and whose `generation` is the manifest's.
    /// A range past the corpus's rows is an [`Error::Invalid`]; an empty range gives an empty
    /// batch. A gate corpus is an [`Error::Invalid`] (read it with [`read_gate_rows`](Self::read_gate_rows)).
    pub fn read_rows(&self, rows: Range<u64>) -> Result<TrackBatch> {
        if self.is_gates() {
            return Err(Error::Invalid(format!(
                "{} is a gate corpus: read it with read_gate_rows",
                self.dir.display()
            )));
        }
        let n = self.check_rows(&rows)?;
        let n_max = usize::try_from(self.manifest.n_max)
            .map_err(|_| Error::Invalid("n_max too large for this machine".into()))?;
        let mut batch = TrackBatch::new(n, n_max, self.manifest.env_range[0] + rows.start)?;
        batch.generation.fill(self.manifest.generation);
        self.read_fields(&mut batch, rows.start)?;
        self.check_counts("count", &batch.count, rows.start)?;
        Ok(batch)
    }

    /// Rows `rows` of a gate corpus as a [`GateBatch`] (`env_base` the global index of the first
    /// row, `generation` the manifest's, `thickness_m` from the recorded preset). A track corpus,
    /// or a range past the corpus's rows, is an [`Error::Invalid`].
    pub fn read_gate_rows(&self, rows: Range<u64>) -> Result<GateBatch> {
        if !self.is_gates() {
            return Err(Error::Invalid(format!(
                "{} is a track corpus: read it with read_rows",
                self.dir.display()
            )));
        }
        let n = self.check_rows(&rows)?;
        let g_max = usize::try_from(self.manifest.n_max)
            .map_err(|_| Error::Invalid("n_max too large for this machine".into()))?;
        let manifest_path = self.dir.join(MANIFEST_FILE);
        let preset = Preset::parse(&self.manifest.preset_toml, &self.manifest.preset_source)
            .map_err(|e| format_error(&manifest_path, format!("`preset_toml`: {e}")))?;
        let thickness = preset.gates.as_ref().map_or(f32::NAN, |g| g.thickness_m);
        let mut batch =
            GateBatch::new(n, g_max, self.manifest.env_range[0] + rows.start, thickness)?;
        batch.generation.fill(self.manifest.generation);
        self.read_fields(&mut batch, rows.start)?;
        self.check_counts("gate_count", &batch.count, rows.start)?;
        Ok(batch)
    }

    /// Rows `rows` of the corpus's heightfields (written with `--heightfield R`), `env_base`
    /// the global index of the first row. A corpus without them, or a range past its rows, is
    /// an [`Error::Invalid`].
    pub fn read_heightfields(&self, rows: Range<u64>) -> Result<Heightfields> {
        let config = self.manifest.heightfield.ok_or_else(|| {
            Error::Invalid(format!(
                "{} holds no heightfields (write it with `trackgen generate --heightfield R`)",
                self.dir.display()
            ))
        })?;
        let n = self.check_rows(&rows)?;
        let mut h = Heightfields::new(config, n, self.manifest.env_range[0] + rows.start)?;
        self.read_fields(&mut h.grid, rows.start)?;
        self.read_fields(&mut h.bounds, rows.start)?;
        Ok(h)
    }

    /// Rows `rows` of the corpus's boundary props (written with `--props`), `env_base` the
    /// global index of the first row. A corpus without them, or a range past its rows, is an
    /// [`Error::Invalid`]; a count above the capacity is an [`Error::Format`] naming the file.
    pub fn read_props(&self, rows: Range<u64>) -> Result<Props> {
        let config = self.manifest.props.ok_or_else(|| {
            Error::Invalid(format!(
                "{} holds no props (write it with `trackgen generate --props ...`)",
                self.dir.display()
            ))
        })?;
        let n = self.check_rows(&rows)?;
        let mut p = Props::new(config, n, self.manifest.env_range[0] + rows.start)?;
        self.read_fields(&mut p.batch, rows.start)?;
        let path = self.array_path("prop_count");
        for (i, &c) in p.batch.count.iter().enumerate() {
            if c > config.max_props {
                return Err(format_error(
                    &path,
                    format!(
                        "row {} holds count {}: expected 0..={}",
                        rows.start + i as u64,
                        c as i32,
                        config.max_props
                    ),
                ));
            }
        }
        Ok(p)
    }

    /// The number of rows in `rows`, or an error if they are not rows of this corpus.
    fn check_rows(&self, rows: &Range<u64>) -> Result<usize> {
        let n_envs = self.manifest.n_envs();
        if rows.start > rows.end || rows.end > n_envs {
            return Err(Error::Invalid(format!(
                "rows {}..{}: the corpus {} has rows 0..{n_envs}",
                rows.start,
                rows.end,
                self.dir.display()
            )));
        }
        usize::try_from(rows.end - rows.start)
            .map_err(|_| Error::Invalid("row range too large for this machine".into()))
    }

    /// Reads rows from `first_row` of every stored array into its buffer of `batch`.
    fn read_fields<B: Layout>(&self, batch: &mut B, first_row: u64) -> Result<()> {
        let mut result = Ok(());
        batch.for_each_field_mut(|field, dst| {
            let Some(array) = field.npy else { return };
            if result.is_ok() {
                result = self.read_array_rows(array.name, first_row, dst);
                if array.dtype.size() == 4 {
                    swap_to_native(dst);
                }
            }
        });
        result
    }

    /// Checks the counts read from array `name` (rows from `first_row`; stored as `<i4`).
    fn check_counts(&self, name: &str, counts: &[u32], first_row: u64) -> Result<()> {
        let count_path = self.array_path(name);
        for (i, &c) in counts.iter().enumerate() {
            if u64::from(c) > self.manifest.n_max {
                return Err(format_error(
                    &count_path,
                    format!(
                        "row {} holds count {}: expected 0..={}",
                        first_row + i as u64,
                        c as i32,
                        self.manifest.n_max
                    ),
                ));
            }
        }
        Ok(())
    }

    fn array_path(&self, name: &str) -> PathBuf {
        self.dir.join(&self.manifest.arrays[name].file)
    }

    /// Reads `dst.len()` bytes of array `name` starting at row `first_row`.
    fn read_array_rows(&self, name: &str, first_row: u64, dst: &mut [u8]) -> Result<()> {
        let header = &self.headers[name];
        let n_envs = self.manifest.n_envs().max(1);
        let row_bytes = header.data_bytes().unwrap_or(0) / n_envs;
        let path = self.array_path(name);
        let mut file = File::open(&path).map_err(|e| Error::input(&path, e))?;
        file.seek(SeekFrom::Start(header.data_offset + first_row * row_bytes))
            .and_then(|_| file.read_exact(dst))
            .map_err(|e| Error::io(&path, e))
    }

    /// Checks every array file's SHA-256 against the manifest (reads every byte once).
    pub fn verify_checksums(&self) -> Result<()> {
        for (name, entry) in &self.manifest.arrays {
            if !self.headers.contains_key(name) {
                continue;
            }
            let path = self.dir.join(&entry.file);
            let mut file = File::open(&path).map_err(|e| Error::input(&path, e))?;
            let mut hasher = Sha256::new();
            let mut buf = vec![0u8; 1 << 20];
            loop {
                let n = file.read(&mut buf).map_err(|e| Error::io(&path, e))?;
                if n == 0 {
                    break;
                }
                hasher.update(&buf[..n]);
            }
            let actual = hex(&hasher.finalize());
            if actual != entry.sha256 {
                return Err(format_error(
                    &path,
                    format!(
                        "SHA-256 is {actual}: the manifest says {} (the file was modified or corrupted)",
                        entry.sha256
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// Parses and checks manifest text: format and version first (so a newer format gets a version
/// error, not a missing-field error), then the full structure.
fn parse_manifest(text: &str, path: &Path) -> Result<Manifest> {
    let value: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| format_error(path, format!("not valid JSON: {e}")))?;
    match value.get("format").and_then(|f| f.as_str()) {
        Some(FORMAT) => {}
        other => {
            return Err(format_error(
                path,
                format!("`format` = {other:?}: expected \"{FORMAT}\""),
            ))
        }
    }
    match value.get("format_version").and_then(|v| v.as_u64()) {
        Some(v) if v == u64::from(FORMAT_VERSION) => {}
        other => {
            return Err(format_error(
                path,
                format!(
                    "`format_version` = {}: this trackgen reads version {FORMAT_VERSION}",
                    other.map_or("missing".to_string(), |v| v.to_string())
                ),
            ))
        }
    }
    let manifest: Manifest = serde_json::from_value(value)
        .map_err(|e| format_error(path, format!("bad manifest: {e}")))?;
    let [a, b] = manifest.env_range;
    if a >= b {
        return Err(format_error(
            path,
            format!("`env_range` = [{a}, {b}]: expected start < end"),
        ));
    }
    if arrays_for(manifest.kind.as_deref()).is_none() {
        return Err(format_error(
            path,
            format!(
                "`kind` = {:?}: expected no `kind` (tracks) or \"gates\"",
                manifest.kind.as_deref().unwrap_or("")
            ),
        ));
    }
    if manifest.n_max == 0 {
        return Err(format_error(
            path,
            "`n_max` = 0: expected at least 1".into(),
        ));
    }
    if manifest.kind.is_some() && (manifest.heightfield.is_some() || manifest.props.is_some()) {
        return Err(format_error(
            path,
            "`heightfield` / `props` in a gate corpus: expected them in track corpora only".into(),
        ));
    }
    if let Some(h) = &manifest.heightfield {
        h.check()
            .map_err(|e| format_error(path, format!("`heightfield`: {e}")))?;
    }
    if let Some(p) = &manifest.props {
        p.check()
            .map_err(|e| format_error(path, format!("`props`: {e}")))?;
    }
    Ok(manifest)
}

/// Converts little-endian 4-byte words read from a file to native order (a no-op on
/// little-endian machines).
fn swap_to_native(words: &mut [u8]) {
    if cfg!(target_endian = "big") && words.len() % 4 == 0 {
        for word in words.chunks_exact_mut(4) {
            word.reverse();
        }
    }
}

/// Reads and parses the NPY header of `path`.
fn read_header(path: &Path) -> Result<Header> {
    let file = File::open(path).map_err(|e| Error::input(path, e))?;
    // Headers written by numpy or trackgen are far below this; a longer one is not ours.
    let mut head = Vec::new();
    file.take(1 << 16)
        .read_to_end(&mut head)
        .map_err(|e| Error::io(path, e))?;
    parse_header(&head, path)
}

/// Opens the gate corpus in `dir`, verifies every array's checksum, and reads all of its rows.
/// Errors name the file at fault; a track corpus is an [`Error::Invalid`].
pub fn read_gate_corpus(dir: &Path) -> Result<(Manifest, GateBatch)> {
    let corpus = Corpus::open(dir)?;
    corpus.verify_checksums()?;
    let batch = corpus.read_gate_rows(0..corpus.manifest().n_envs())?;
    Ok((corpus.manifest, batch))
}

/// Opens the corpus in `dir`, verifies every array's checksum, and reads all of its rows.
/// Errors name the file at fault; a gate corpus is an [`Error::Invalid`] (see [`read_gate_corpus`]).
pub fn read_corpus(dir: &Path) -> Result<(Manifest, TrackBatch)> {
    let corpus = Corpus::open(dir)?;
    corpus.verify_checksums()?;
    let batch = corpus.read_rows(0..corpus.manifest().n_envs())?;
    Ok((corpus.manifest, batch))
}
