//! Skipped tests that a human running `cargo test` sees: libtest captures what a passing test
//! prints through `println!`/`eprintln!`, so the `SKIP:` line goes straight to the process's
//! stderr instead. `.ci/run` counts these lines into its closing summary.

use std::io::Write;

/// Reports that `test` skips for `reason`, unless the environment variable `require` is `1`
/// (CI sets it), in which case the test fails.
pub fn skip(test: &str, reason: &str, require: &str) {
    if std::env::var(require).as_deref() == Ok("1") {
        panic!("{require}=1 but {test} would skip: {reason}");
    }
    // Best effort, and not through `eprintln!`, which the test harness would capture.
    let _ = writeln!(std::io::stderr().lock(), "SKIP: {test}: {reason}");
}
