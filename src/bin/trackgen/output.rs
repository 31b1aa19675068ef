//! What the commands print: results on stdout (a closed pipe ends output quietly).

use std::io::Write;
use std::path::{Path, PathBuf};

use trackgen::{Error, Result};

/// Writes `text` to stdout; a closed pipe (`| head`) ends output quietly.
pub fn emit(text: &str) -> Result<()> {
    match std::io::stdout().lock().write_all(text.as_bytes()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(Error::io("<stdout>", e)),
        _ => Ok(()),
    }
}

/// `n` with thousands separators: `17615.8` → `17,616`.
pub fn grouped(n: f64) -> String {
    let digits = format!("{:.0}", n.max(0.0));
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `"1 thread"`, `"2 threads"`.
pub fn threads_label(n: usize) -> String {
    if n == 1 {
        "1 thread".into()
    } else {
        format!("{n} threads")
    }
}

/// `path` with every link and `..` resolved: the path itself if it exists, else its resolved
/// directory joined with its file name (`None` when neither can be resolved).
fn resolved(path: &Path) -> Option<PathBuf> {
    path.canonicalize().ok().or_else(|| {
        let parent = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        Some(parent.canonicalize().ok()?.join(path.file_name()?))
    })
}

/// The one output policy of every writer: `out` (given as `flag`) is never one of `inputs` (nor
/// inside an input directory), and an existing `out` is an error unless `force`. Temporary
/// siblings that a killed run left next to `out` are removed (and named on stderr).
pub fn check_output(flag: &str, out: &Path, inputs: &[&Path], force: bool) -> Result<()> {
    if let Some(out_real) = resolved(out) {
        for input in inputs {
            if resolved(input).is_some_and(|input_real| out_real.starts_with(input_real)) {
                return Err(Error::Invalid(format!(
                    "{flag} {}: is the input {}: refusing to write over an input (choose \
                     another output)",
                    out.display(),
                    input.display()
                )));
            }
        }
    }
    if out.symlink_metadata().is_ok() && !force {
        return Err(Error::Invalid(format!(
            "output {} already exists: refusing to overwrite it (give --force to replace it, \
             or choose another output)",
            out.display()
        )));
    }
    for stale in trackgen::atomic::remove_stale_temps(out)? {
        eprintln!(
            "removed {}: a temporary output left by a run that no longer exists",
            stale.display()
        );
    }
    Ok(())
}
