//! Parsers of argument values that several commands share.

use std::ops::Range;

/// `A..B` with `A < B`.
pub fn parse_range(text: &str) -> std::result::Result<Range<u64>, String> {
    let (a, b) = text
        .split_once("..")
        .ok_or_else(|| format!("{text:?} is not a range: expected A..B, e.g. 100..200"))?;
    let num = |s: &str, which: &str| {
        s.trim().parse::<u64>().map_err(|_| {
            format!("{text:?}: range {which} {s:?} is not a non-negative integer (expected A..B)")
        })
    };
    let (a, b) = (num(a, "start")?, num(b, "end")?);
    if a >= b {
        return Err(format!(
            "{text:?} is empty or reversed: expected A..B with A < B"
        ));
    }
    Ok(a..b)
}

/// A thread count: a positive integer or `all` (0).
pub fn parse_threads(text: &str) -> std::result::Result<usize, String> {
    match text.trim() {
        "all" | "0" => Ok(0),
        t => t
            .parse::<usize>()
            .map_err(|_| format!("{text:?}: expected a thread count or `all`")),
    }
}
