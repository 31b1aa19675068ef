//! Sizes checked before any work: memory that an argument multiplies into an allocation, disk
//! space that an output will take, and vectors allocated with `try_reserve`, so that a large
//! argument is an error naming it and the bytes instead of an abort.

use std::path::{Path, PathBuf};

use trackgen::{Error, Result};

/// `bytes` in the largest binary unit that keeps it ≥ 1: `1.5 GiB`.
pub fn human(bytes: u128) -> String {
    let units = ["bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < units.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} bytes")
    } else {
        format!("{value:.1} {}", units[unit])
    }
}

/// Memory new allocations can take: `MemAvailable`, or (unknown) the address-space bound.
fn memory_limit() -> u128 {
    trackgen::os::available_memory().map_or(isize::MAX as u128, u128::from)
}

/// An error unless `bytes` (`None`: more than `u64` holds) of memory are available for what
/// `arg` (e.g. `--cell 100000`) asks for.
pub fn check_memory(arg: &str, bytes: Option<u128>) -> Result<()> {
    let limit = memory_limit();
    match bytes {
        Some(b) if b <= limit => Ok(()),
        Some(b) => Err(Error::Invalid(format!(
            "{arg}: needs about {} ({b} bytes) of memory, more than the {} available",
            human(b),
            human(limit)
        ))),
        None => Err(Error::Invalid(format!(
            "{arg}: the memory it needs overflows 128 bits ({} available)",
            human(limit)
        ))),
    }
}

/// `n` copies of `value`, or an error naming `arg` and the bytes when they cannot be allocated.
pub fn try_vec<T: Clone>(n: usize, value: T, arg: &str) -> Result<Vec<T>> {
    let bytes = (n as u128) * std::mem::size_of::<T>() as u128;
    check_memory(arg, Some(bytes))?;
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| {
        Error::Invalid(format!(
            "{arg}: cannot allocate {} ({bytes} bytes)",
            human(bytes)
        ))
    })?;
    v.resize(n, value);
    Ok(v)
}

/// The directory an output path will be created in.
pub fn parent_dir(out: &Path) -> PathBuf {
    match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// An error unless the file system of `out` has `bytes` free (with a 1% + 16 MiB margin);
/// `override_flag` (e.g. `--no-space-check`) is named as the way past it. Unknown free space
/// passes.
pub fn check_space(what: &str, out: &Path, bytes: u128, override_flag: &str) -> Result<()> {
    let dir = parent_dir(out);
    let Some(free) = trackgen::os::free_bytes(&dir) else {
        return Ok(());
    };
    let needed = bytes + bytes / 100 + (16 << 20);
    if needed > u128::from(free) {
        return Err(Error::Invalid(format!(
            "{what} would write about {} ({bytes} bytes) into {}, but its file system has {} \
             free: refusing (give {override_flag} to write anyway)",
            human(bytes),
            dir.display(),
            human(u128::from(free))
        )));
    }
    Ok(())
}
