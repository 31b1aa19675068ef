//! Atomic file writes: nothing half-written ever appears at the destination.
//!
//! The bytes go to a hidden sibling `.NAME.tmp-<pid>` (same directory, so the rename cannot cross
//! file systems), are flushed and fsynced, and the file is renamed over `NAME`. On any error the
//! temporary file is removed and the error names the destination path.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use crate::{Error, Result};

/// Writes `path` atomically: `write` fills a buffered writer on the temporary file; its value is
/// returned once the file is in place.
pub fn write_atomic<T>(
    path: &Path,
    write: impl FnOnce(&mut BufWriter<File>) -> std::io::Result<T>,
) -> Result<T> {
    let name = path
        .file_name()
        .ok_or_else(|| Error::Invalid(format!("{}: expected a file name", path.display())))?;
    let tmp = path.with_file_name(format!(
        ".{}.tmp-{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    let result = (|| {
        let file = File::create(&tmp).map_err(|e| Error::io(path, e))?;
        let mut out = BufWriter::with_capacity(1 << 20, file);
        let value = write(&mut out).map_err(|e| Error::io(path, e))?;
        out.flush().map_err(|e| Error::io(path, e))?;
        let file = out
            .into_inner()
            .map_err(|e| Error::io(path, e.into_error()))?;
        file.sync_all().map_err(|e| Error::io(path, e))?;
        std::fs::rename(&tmp, path).map_err(|e| Error::io(path, e))?;
        Ok(value)
    })();
    if result.is_err() {
        // Best effort: the write error is what the caller needs to see.
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_in_place_or_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.bin");
        let n = write_atomic(&path, |w| w.write_all(b"abc").map(|_| 3)).unwrap();
        assert_eq!((n, std::fs::read(&path).unwrap()), (3, b"abc".to_vec()));
        let failed = dir.path().join("failed.bin");
        let err = write_atomic(&failed, |w| {
            w.write_all(b"partial")?;
            Err::<(), _>(std::io::Error::other("boom"))
        })
        .unwrap_err();
        assert!(err.to_string().contains("failed.bin"), "{err}");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "only out.bin remains");
        assert!(write_atomic(&dir.path().join("no/such/dir/x"), |_| Ok(())).is_err());
    }
}
