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

/// `SIDE:KIND:SPACING` of `--props`: `inner` or `outer`, `point` (cones, poles) or `segment`
/// (wall pieces), and the wanted spacing in metres (> 0).
pub fn parse_props(
    text: &str,
) -> std::result::Result<(trackgen::course::Side, trackgen::course::PropKind, f32), String> {
    use trackgen::course::{PropKind, Side};
    let parts: Vec<&str> = text.split(':').collect();
    let [side, kind, spacing] = parts[..] else {
        return Err(format!(
            "{text:?}: expected SIDE:KIND:SPACING, e.g. outer:point:5 or inner:segment:4"
        ));
    };
    let side = match side {
        "inner" => Side::Inner,
        "outer" => Side::Outer,
        s => return Err(format!("{text:?}: side {s:?}: expected inner or outer")),
    };
    let kind = match kind {
        "point" => PropKind::Point,
        "segment" => PropKind::Segment,
        k => return Err(format!("{text:?}: kind {k:?}: expected point or segment")),
    };
    let spacing = spacing
        .parse::<f32>()
        .ok()
        .filter(|s| *s > 0.0 && s.is_finite())
        .ok_or_else(|| format!("{text:?}: spacing {spacing:?}: expected metres > 0"))?;
    Ok((side, kind, spacing))
}
