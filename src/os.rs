//! The few operating-system facts the crate asks for, behind safe functions: free space on a
//! file system (`statvfs`), whether a process exists (`kill(pid, 0)`), and the memory available
//! to a new allocation (`/proc/meminfo`), and whether the CPU has the instruction-set extensions
//! the build was compiled for (`cpuid`, through std). Every `unsafe` block of these calls is here, with the
//! reason it holds. On platforms without them the answers are `None` (unknown), and callers skip
//! the checks they feed.

use std::path::Path;

/// Bytes available to an unprivileged user on the file system holding `path` (which must
/// exist), or `None` when it cannot be told.
#[cfg(unix)]
#[allow(unsafe_code)]
pub fn free_bytes(path: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c_path = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    let mut stat = std::mem::MaybeUninit::<libc::statvfs>::uninit();
    // SAFETY: `c_path` is a NUL-terminated string that outlives the call, and `stat` points to
    // writable memory of the size `statvfs` fills; it is read only after a zero return, which
    // means it was filled.
    let stat = unsafe {
        if libc::statvfs(c_path.as_ptr(), stat.as_mut_ptr()) != 0 {
            return None;
        }
        stat.assume_init()
    };
    #[allow(clippy::unnecessary_cast)] // The field types differ between platforms.
    Some((stat.f_bavail as u64).saturating_mul(stat.f_frsize as u64))
}

/// See the Unix version: unknown here.
#[cfg(not(unix))]
pub fn free_bytes(_path: &Path) -> Option<u64> {
    None
}

/// Whether a process with id `pid` exists (`None`: cannot be told).
#[cfg(unix)]
#[allow(unsafe_code)]
pub fn process_exists(pid: u32) -> Option<bool> {
    let pid = libc::pid_t::try_from(pid).ok().filter(|&p| p > 0)?;
    // SAFETY: signal 0 sends nothing; `kill` only checks that `pid` names a process (and that we
    // may signal it). It reads no memory of ours.
    let status = unsafe { libc::kill(pid, 0) };
    if status == 0 {
        return Some(true);
    }
    match std::io::Error::last_os_error().raw_os_error() {
        Some(libc::ESRCH) => Some(false),
        // EPERM: it exists but belongs to someone else.
        Some(libc::EPERM) => Some(true),
        _ => None,
    }
}

/// See the Unix version: unknown here.
#[cfg(not(unix))]
pub fn process_exists(_pid: u32) -> Option<bool> {
    None
}

/// Bytes of memory available to new allocations without swapping (`MemAvailable` of
/// `/proc/meminfo`), or `None` when it cannot be told.
pub fn available_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib.saturating_mul(1024))
}

/// The instruction-set extensions this build was compiled to use (`-C target-cpu`, set for
/// x86-64 Linux in `.cargo/config.toml`) that the running CPU lacks, by their
/// `is_x86_feature_detected!` names; empty when it has them all (and off x86-64).
pub fn missing_cpu_features() -> Vec<&'static str> {
    #[allow(unused_mut)]
    let mut missing = Vec::new();
    #[cfg(target_arch = "x86_64")]
    {
        macro_rules! check {
            ($($feature:tt),*) => {$(
                if cfg!(target_feature = $feature) && !std::is_x86_feature_detected!($feature) {
                    missing.push($feature);
                }
            )*};
        }
        check!(
            "sse4.1", "sse4.2", "popcnt", "avx", "avx2", "bmi1", "bmi2", "fma", "lzcnt", "movbe",
            "f16c"
        );
    }
    missing
}

/// `Ok` when the running CPU has every instruction-set extension this build uses, else an
/// [`Error::Invalid`](crate::Error::Invalid) naming the missing ones and how to build for this
/// CPU. The binary and the Python module call it before anything else runs.
pub fn check_cpu() -> crate::Result<()> {
    let missing = missing_cpu_features();
    if missing.is_empty() {
        return Ok(());
    }
    Err(crate::Error::Invalid(format!(
        "this build of trackgen uses CPU instructions this machine lacks ({}): it was built for \
         x86-64-v3 (`.cargo/config.toml`); rebuild for this CPU with \
         RUSTFLAGS=\"-C target-cpu=native\" (or x86-64 for any x86-64 CPU)",
        missing.join(", ")
    )))
}

/// The CPU time this process has used so far, all its threads together
/// (`CLOCK_PROCESS_CPUTIME_ID`); `None` where that clock cannot be read. Unlike the wall clock,
/// it does not count the time other processes hold the cores, so on a shared machine it
/// measures the work itself.
#[cfg(unix)]
#[allow(unsafe_code)]
pub fn process_cpu_time() -> Option<std::time::Duration> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `clock_gettime` writes one `timespec` through the pointer, which points at a
    // live, writable `timespec` for the whole call.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    let secs = u64::try_from(ts.tv_sec).ok()?;
    let nanos = u32::try_from(ts.tv_nsec).ok()?;
    (rc == 0).then(|| std::time::Duration::new(secs, nanos))
}

/// The CPU time this process has used so far: not available off Unix.
#[cfg(not(unix))]
pub fn process_cpu_time() -> Option<std::time::Duration> {
    None
}

/// Hints the cache to fetch the line holding `p` for writing soon (`prefetchw`); a no-op where
/// the target has no such hint. Any address may be given: a prefetch never faults and changes
/// no memory.
#[inline(always)]
#[allow(unsafe_code)]
pub fn prefetch_write<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `prefetchw` only hints the cache; it reads and writes no memory and never faults,
    // whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_ET0 }>(p.cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_for_this_machine() {
        assert_eq!(process_exists(std::process::id()), Some(true));
        assert!(free_bytes(Path::new(".")).is_some_and(|b| b > 0));
        assert_eq!(free_bytes(Path::new("/no/such/dir")), None);
        if cfg!(target_os = "linux") {
            assert!(available_memory().is_some_and(|b| b > 0));
        }
        // The machine that built the tests runs them: it has what the build uses.
        assert_eq!(missing_cpu_features(), Vec::<&str>::new());
        assert!(check_cpu().is_ok());
    }
}
