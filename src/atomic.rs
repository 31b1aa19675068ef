//! Atomic file writes: nothing half-written ever appears at the destination.
//!
//! The bytes go to a hidden sibling `.NAME.tmp-<pid>` (same directory, so the rename cannot cross
//! file systems), are flushed and fsynced, and the file is renamed over `NAME`. On any error the
//! temporary file is removed and the error names the destination path.
//!
//! Every temporary file or directory in progress ([`TempPath`], also used by the corpus writer) is
//! listed in a process-wide registry, so that a program interrupted by a signal can remove them
//! ([`remove_in_progress`]); the library installs no signal handler itself, the `trackgen` binary
//! does. Temporary siblings left by a process that no longer exists (killed with `SIGKILL`, or a
//! machine that went down) are found and removed by [`remove_stale_temps`].

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::{Error, Result};

/// Temporary paths of this process that are in progress (created, not yet renamed or removed).
static IN_PROGRESS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn in_progress() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    // A panic while holding the lock leaves a list that is still valid.
    IN_PROGRESS.lock().unwrap_or_else(|e| e.into_inner())
}

/// The hidden temporary sibling of `path`: `.NAME.tmp-<pid>` in the same directory.
pub fn temp_sibling(path: &Path) -> Result<PathBuf> {
    let name = path
        .file_name()
        .ok_or_else(|| Error::Invalid(format!("{}: expected a file name", path.display())))?;
    Ok(path.with_file_name(format!(
        ".{}.tmp-{}",
        name.to_string_lossy(),
        std::process::id()
    )))
}

/// A temporary file or directory in progress: listed for [`remove_in_progress`] while it lives,
/// removed on drop unless [`kept`](TempPath::keep) (after it was renamed into place).
#[derive(Debug)]
pub struct TempPath {
    path: PathBuf,
    keep: bool,
}

impl TempPath {
    /// Lists `path` (about to be created) as in progress.
    pub fn new(path: PathBuf) -> Self {
        in_progress().push(path.clone());
        Self { path, keep: false }
    }

    /// The temporary path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Unlists the path without removing it (it has been renamed into place).
    pub fn keep(mut self) {
        self.keep = true;
    }
}

impl Drop for TempPath {
    fn drop(&mut self) {
        in_progress().retain(|p| p != &self.path);
        if !self.keep {
            // Best effort: the error being reported matters more than a failed cleanup.
            remove_path(&self.path);
        }
    }
}

fn remove_path(path: &Path) {
    match path.symlink_metadata() {
        Ok(m) if m.is_dir() => {
            let _ = std::fs::remove_dir_all(path);
        }
        Ok(_) => {
            let _ = std::fs::remove_file(path);
        }
        Err(_) => {}
    }
}

/// Removes every temporary path this process has in progress and returns them: for a program's
/// `SIGINT`/`SIGTERM` handler (run it from a normal thread, not inside the signal handler), right
/// before it exits. A writer still running afterwards fails with an I/O error.
pub fn remove_in_progress() -> Vec<PathBuf> {
    let mut list = in_progress();
    for path in list.iter() {
        // A writer may add a file between the listing and the removal of a directory: retry.
        for _ in 0..3 {
            remove_path(path);
            if path.symlink_metadata().is_err() {
                break;
            }
        }
    }
    std::mem::take(&mut *list)
}

/// Removes the temporary siblings `.NAME.tmp-<pid>` of `path` whose process `pid` no longer
/// exists (left by a killed writer), and returns them. Those of live processes (another writer
/// of the same output, or this one) are left alone, and so is everything when process ids
/// cannot be checked on this platform.
pub fn remove_stale_temps(path: &Path) -> Result<Vec<PathBuf>> {
    let Some(name) = path.file_name() else {
        return Ok(Vec::new());
    };
    let prefix = format!(".{}.tmp-", name.to_string_lossy());
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let Ok(entries) = std::fs::read_dir(&parent) else {
        return Ok(Vec::new());
    };
    let mut removed = Vec::new();
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let Some(pid) = file_name
            .to_str()
            .and_then(|n| n.strip_prefix(&prefix))
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if pid != std::process::id() && crate::os::process_exists(pid) == Some(false) {
            let stale = entry.path();
            let result = if entry.file_type().is_ok_and(|t| t.is_dir()) {
                std::fs::remove_dir_all(&stale)
            } else {
                std::fs::remove_file(&stale)
            };
            result.map_err(|e| Error::io(&stale, e))?;
            removed.push(stale);
        }
    }
    Ok(removed)
}

/// Writes `path` atomically: `write` fills a buffered writer on the temporary file; its value is
/// returned once the file is in place.
pub fn write_atomic<T>(
    path: &Path,
    write: impl FnOnce(&mut BufWriter<File>) -> std::io::Result<T>,
) -> Result<T> {
    let tmp = TempPath::new(temp_sibling(path)?);
    let value = (|| {
        let file = File::create(tmp.path()).map_err(|e| Error::io(path, e))?;
        let mut out = BufWriter::with_capacity(1 << 20, file);
        let value = write(&mut out).map_err(|e| Error::io(path, e))?;
        out.flush().map_err(|e| Error::io(path, e))?;
        let file = out
            .into_inner()
            .map_err(|e| Error::io(path, e.into_error()))?;
        file.sync_all().map_err(|e| Error::io(path, e))?;
        std::fs::rename(tmp.path(), path).map_err(|e| Error::io(path, e))?;
        Ok(value)
    })()?;
    tmp.keep();
    Ok(value)
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
        assert!(!in_progress().iter().any(|p| p.starts_with(dir.path())));
    }

    #[test]
    fn stale_temps_of_dead_processes_go_and_live_ones_stay() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("corpus");
        // A pid past every pid_max (2^22) names no process.
        let dead = dir.path().join(".corpus.tmp-4194999");
        let live = dir
            .path()
            .join(format!(".corpus.tmp-{}", std::process::id()));
        let other = dir.path().join(".other.tmp-4194999");
        for d in [&dead, &live, &other] {
            std::fs::create_dir(d).unwrap();
        }
        std::fs::write(dead.join("center.npy"), b"x").unwrap();
        let removed = remove_stale_temps(&out).unwrap();
        if cfg!(unix) {
            assert_eq!(removed, vec![dead.clone()]);
            assert!(!dead.exists());
        }
        assert!(live.exists() && other.exists());
    }

    #[test]
    fn temp_paths_are_listed_while_they_live() {
        // `remove_in_progress` is tested through the binary (tests/suite/signals.rs): here it
        // would remove the temporary files of tests running in parallel.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".x.tmp-1");
        let tmp = TempPath::new(path.clone());
        std::fs::create_dir(&path).unwrap();
        std::fs::write(path.join("a"), b"a").unwrap();
        assert!(in_progress().contains(&path));
        drop(tmp);
        assert!(!path.exists() && !in_progress().contains(&path));
    }
}
