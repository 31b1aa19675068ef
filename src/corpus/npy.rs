//! The NPY file format, version 1.0: a header, then the array's bytes in C order.
//!
//! A file starts with the magic `\x93NUMPY`, the version bytes `1 0`, a little-endian `u16`
//! header length, and an ASCII Python dict literal such as
//! `{'descr': '<f4', 'fortran_order': False, 'shape': (4096, 256, 3), }`, padded with spaces
//! and ended by `\n` so that the data starts at a multiple of 64 bytes
//! (<https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html>).
//! Because the shape is in the header, a writer that knows the final shape can write the header
//! first and then stream the rows: that is what [`NpyWriter`] does.
//!
//! The parser accepts versions 1.0, 2.0 and 3.0 (they differ only in the header-length field)
//! and the three dtypes a corpus uses.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::{Error, Result};

/// The magic bytes every NPY file starts with.
pub const MAGIC: &[u8; 6] = b"\x93NUMPY";

/// Data starts at a multiple of this many bytes.
pub const ALIGN: usize = 64;

pub use crate::exec::layout::Dtype;

/// What an NPY header says: the dtype, the C-order shape, and where the data starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// Element type.
    pub dtype: Dtype,
    /// Shape, outermost dimension first (C order).
    pub shape: Vec<u64>,
    /// Bytes before the data (magic, version, length field, dict, padding).
    pub data_offset: u64,
}

impl Header {
    /// Elements in the array (the product of the shape; 1 for a 0-d array), or `None` on overflow.
    pub fn elements(&self) -> Option<u64> {
        self.shape
            .iter()
            .try_fold(1u64, |acc, &d| acc.checked_mul(d))
    }

    /// Bytes of data after the header, or `None` on overflow.
    pub fn data_bytes(&self) -> Option<u64> {
        self.elements()?.checked_mul(self.dtype.size() as u64)
    }
}

/// The version 1.0 header of an array of `dtype` and `shape`; its length is a multiple of [`ALIGN`].
pub fn encode_header(dtype: Dtype, shape: &[u64]) -> Vec<u8> {
    let dims: Vec<String> = shape.iter().map(u64::to_string).collect();
    let shape_text = match dims.len() {
        1 => format!("({},)", dims[0]),
        _ => format!("({})", dims.join(", ")),
    };
    let mut dict = format!(
        "{{'descr': '{}', 'fortran_order': False, 'shape': {shape_text}, }}",
        dtype.descr()
    );
    // magic (6) + version (2) + length (2) + dict + '\n' rounds up to ALIGN.
    let unpadded = MAGIC.len() + 4 + dict.len() + 1;
    let padded = unpadded.div_ceil(ALIGN) * ALIGN;
    dict.extend(std::iter::repeat(' ').take(padded - unpadded));
    dict.push('\n');
    let mut out = Vec::with_capacity(padded);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&[1, 0]);
    // A corpus shape has at most three dims of u64, so the dict is far below u16::MAX bytes.
    out.extend_from_slice(&(dict.len() as u16).to_le_bytes());
    out.extend_from_slice(dict.as_bytes());
    out
}

/// Parses the header at the start of `bytes` (which may hold more than the header).
///
/// `file` names the file in errors. Fails on a bad magic, an unknown version, a truncated
/// header, Fortran order, or a dtype other than [`Dtype`]'s three.
pub fn parse_header(bytes: &[u8], file: &Path) -> Result<Header> {
    let bad = |message: String| Error::Format {
        path: file.to_path_buf(),
        message,
    };
    if bytes.len() < MAGIC.len() + 2 || &bytes[..MAGIC.len()] != MAGIC {
        return Err(bad("not an NPY file (missing the \\x93NUMPY magic)".into()));
    }
    let (major, minor) = (bytes[6], bytes[7]);
    let (len_field, text_start) = match major {
        1 => (2, 10),
        2 | 3 => (4, 12),
        _ => {
            return Err(bad(format!(
                "NPY version {major}.{minor}: expected 1.0, 2.0 or 3.0"
            )))
        }
    };
    if bytes.len() < text_start {
        return Err(bad("truncated NPY header".into()));
    }
    let header_len = if len_field == 2 {
        u16::from_le_bytes([bytes[8], bytes[9]]) as usize
    } else {
        u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize
    };
    let end = text_start + header_len;
    if bytes.len() < end {
        return Err(bad(format!(
            "truncated NPY header: it claims {header_len} bytes, the file has {}",
            bytes.len().saturating_sub(text_start)
        )));
    }
    let text = std::str::from_utf8(&bytes[text_start..end])
        .map_err(|_| bad("NPY header is not UTF-8 text".into()))?;

    let descr = dict_value(text, "descr")
        .ok_or_else(|| bad(format!("NPY header has no 'descr': {text:?}")))?;
    let descr = descr.trim_matches(|c| c == '\'' || c == '"');
    let dtype = Dtype::from_descr(descr).ok_or_else(|| {
        bad(format!(
            "NPY dtype '{descr}': expected one of '<f4', '<i4', '|u1'"
        ))
    })?;
    match dict_value(text, "fortran_order") {
        Some("False") => {}
        Some("True") => return Err(bad("NPY array is in Fortran order: expected C order".into())),
        other => {
            return Err(bad(format!(
                "NPY header 'fortran_order' = {other:?}: expected False"
            )))
        }
    }
    let shape_text = dict_value(text, "shape")
        .ok_or_else(|| bad(format!("NPY header has no 'shape': {text:?}")))?;
    let inner = shape_text
        .strip_prefix('(')
        .and_then(|s| s.strip_suffix(')'))
        .ok_or_else(|| bad(format!("NPY shape {shape_text:?}: expected a tuple")))?;
    let shape = inner
        .split(',')
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .map(|d| {
            d.trim_end_matches('L').parse::<u64>().map_err(|_| {
                bad(format!(
                    "NPY shape {shape_text:?}: {d:?} is not a dimension"
                ))
            })
        })
        .collect::<Result<Vec<u64>>>()?;
    Ok(Header {
        dtype,
        shape,
        data_offset: end as u64,
    })
}

/// The raw text of `key`'s value in a Python dict literal: up to the next `,` or `}` outside
/// parentheses, trimmed.
fn dict_value<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    let start = ["'", "\""].iter().find_map(|q| {
        let pat = format!("{q}{key}{q}");
        text.find(&pat).map(|i| i + pat.len())
    })?;
    let rest = text[start..].trim_start().strip_prefix(':')?.trim_start();
    let mut depth = 0usize;
    for (i, c) in rest.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' | '}' if depth == 0 => return Some(rest[..i].trim()),
            _ => {}
        }
    }
    None
}

/// An NPY file being streamed: the header (with the final shape) is written first, rows are
/// appended, and [`finish`](Self::finish) checks that exactly the promised bytes arrived.
/// It hashes every byte it writes (SHA-256) on the way.
pub struct NpyWriter {
    path: PathBuf,
    out: BufWriter<File>,
    hasher: Sha256,
    dtype: Dtype,
    expected_bytes: u64,
    written_bytes: u64,
}

impl NpyWriter {
    /// Creates `path` (it must not exist) and writes the header of a `dtype` array of `shape`.
    pub fn create(path: &Path, dtype: Dtype, shape: &[u64]) -> Result<Self> {
        let file = File::options()
            .write(true)
            .create_new(true)
            .open(path)
            .map_err(|e| Error::io(path, e))?;
        let header = encode_header(dtype, shape);
        let expected_bytes = Header {
            dtype,
            shape: shape.to_vec(),
            data_offset: 0,
        }
        .data_bytes()
        .ok_or_else(|| Error::Invalid(format!("array shape {shape:?} overflows")))?;
        let mut writer = Self {
            path: path.to_path_buf(),
            out: BufWriter::with_capacity(1 << 20, file),
            hasher: Sha256::new(),
            dtype,
            expected_bytes,
            written_bytes: 0,
        };
        writer.write_raw(&header)?;
        writer.written_bytes = 0;
        Ok(writer)
    }

    /// The element type this file holds.
    pub fn dtype(&self) -> Dtype {
        self.dtype
    }

    fn write_raw(&mut self, bytes: &[u8]) -> Result<()> {
        self.hasher.update(bytes);
        self.out
            .write_all(bytes)
            .map_err(|e| Error::io(&self.path, e))?;
        self.written_bytes += bytes.len() as u64;
        Ok(())
    }

    fn check_dtype(&self, dtype: Dtype) -> Result<()> {
        if dtype != self.dtype {
            return Err(Error::Invalid(format!(
                "{}: appending {} values to a {} array",
                self.path.display(),
                dtype.descr(),
                self.dtype.descr()
            )));
        }
        Ok(())
    }

    /// Appends `f32` values (written little-endian).
    pub fn append_f32(&mut self, values: &[f32]) -> Result<()> {
        self.check_dtype(Dtype::F4)?;
        if cfg!(target_endian = "little") {
            self.write_raw(bytemuck::cast_slice(values))
        } else {
            let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
            self.write_raw(&bytes)
        }
    }

    /// Appends `i32` values (written little-endian).
    pub fn append_i32(&mut self, values: &[i32]) -> Result<()> {
        self.check_dtype(Dtype::I4)?;
        if cfg!(target_endian = "little") {
            self.write_raw(bytemuck::cast_slice(values))
        } else {
            let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
            self.write_raw(&bytes)
        }
    }

    /// Appends elements of this file's dtype given as their native-order bytes (a whole number
    /// of elements; byte-swapped to little-endian on a big-endian machine).
    pub fn append_native(&mut self, bytes: &[u8]) -> Result<()> {
        let size = self.dtype.size();
        if bytes.len() % size != 0 {
            return Err(Error::Invalid(format!(
                "{}: appending {} bytes, not a whole number of {} values",
                self.path.display(),
                bytes.len(),
                self.dtype.descr()
            )));
        }
        if cfg!(target_endian = "little") || size == 1 {
            self.write_raw(bytes)
        } else {
            let swapped: Vec<u8> = bytes
                .chunks_exact(size)
                .flat_map(|word| word.iter().rev().copied())
                .collect();
            self.write_raw(&swapped)
        }
    }

    /// Appends `u8` values.
    pub fn append_u8(&mut self, values: &[u8]) -> Result<()> {
        self.check_dtype(Dtype::U1)?;
        self.write_raw(values)
    }

    /// Flushes and fsyncs the file; fails if the data written is not exactly the header's shape.
    /// Returns the SHA-256 of the whole file (header included), lowercase hex.
    pub fn finish(self) -> Result<String> {
        if self.written_bytes != self.expected_bytes {
            return Err(Error::Invalid(format!(
                "{}: wrote {} data bytes, the header promises {}",
                self.path.display(),
                self.written_bytes,
                self.expected_bytes
            )));
        }
        let path = self.path;
        let file = self
            .out
            .into_inner()
            .map_err(|e| Error::io(&path, e.into_error()))?;
        file.sync_all().map_err(|e| Error::io(&path, e))?;
        Ok(hex(&self.hasher.finalize()))
    }
}

/// Lowercase hex of `bytes`.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
