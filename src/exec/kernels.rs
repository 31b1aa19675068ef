//! The kernel sources, embedded in the library.
//!
//! Every file under `kernels/` is listed here once, with its path relative to `kernels/` (the
//! include root: sources include each other as `"common/math.cuh"`). NVRTC compiles the `.cu`
//! files for the device at run time; the emulated-CUDA executor ([`super::emulated`]) writes them
//! out and compiles them as host C++. A test checks that this table and the directory agree.

use std::path::Path;

use crate::{Error, Result};

/// One kernel source file.
#[derive(Clone, Copy, Debug)]
pub struct Source {
    /// The path relative to `kernels/`, e.g. `"track/resample.cuh"`.
    pub path: &'static str,
    /// The file's text.
    pub text: &'static str,
}

macro_rules! sources {
    ($($path:literal),* $(,)?) => {
        /// Every kernel source file, headers (`.cuh`) and kernel units (`.cu`).
        pub const SOURCES: &[Source] = &[
            $(Source { path: $path, text: include_str!(concat!("../../kernels/", $path)) }),*
        ];
    };
}

sources![
    "common/prelude.cuh",
    "common/math.cuh",
    "common/rng.cuh",
    "common/kernel.cuh",
    "common/geom.cuh",
    "common/selftest.cuh",
    "common/selftest.cu",
    "exec/control.cu",
    "exec/condition.cu",
    "track/geometry.cuh",
    "track/chunks.cuh",
    "track/resample.cuh",
    "track/relax.cuh",
    "track/validity.cuh",
    "track/zprofile.cuh",
    "track/inflate.cuh",
    "track/pipeline.cu",
    "track/generate.cuh",
    "track/polar.cuh",
    "track/polar.cu",
    "track/bezier.cuh",
    "track/bezier.cu",
    "track/hull.cuh",
    "track/hull.cu",
    "track/checkpoint.cuh",
    "track/checkpoint.cu",
    "track/circuit.cuh",
    "track/circuit.cu",
    "track/voronoi.cuh",
    "track/voronoi.cu",
    "track/repulsive.cuh",
    "track/repulsive.cu",
    "track/stages.cu",
];

/// Writes every source under `dir`, at its path (`dir/common/math.cuh`, ...): the include root
/// of a compile from the embedded sources.
pub fn write_tree(dir: &Path) -> Result<()> {
    for s in SOURCES {
        let file = dir.join(s.path);
        if let Some(parent) = file.parent() {
            std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
        }
        std::fs::write(&file, s.text).map_err(|e| Error::io(&file, e))?;
    }
    Ok(())
}

/// The kernel units: the sources that define kernels (`.cu`).
pub fn units() -> impl Iterator<Item = &'static Source> {
    SOURCES.iter().filter(|s| s.path.ends_with(".cu"))
}

/// The source at `path` (relative to `kernels/`), if the table has it.
pub fn source(path: &str) -> Option<&'static Source> {
    SOURCES.iter().find(|s| s.path == path)
}

/// The kernels a unit declares: the `NAME` of every `TG_KERNEL(NAME, PARAMS)` at the start of a
/// line.
pub fn kernels_of(unit: &Source) -> impl Iterator<Item = &'static str> {
    let text: &'static str = unit.text;
    text.lines().filter_map(|line| {
        line.strip_prefix("TG_KERNEL(")
            .and_then(|rest| rest.split(',').next())
            .map(str::trim)
    })
}

/// The unit that declares kernel `name`.
pub fn unit_of(name: &str) -> Option<&'static Source> {
    units().find(|u| kernels_of(u).any(|k| k == name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_kernels_are_found_in_their_unit() {
        assert_eq!(
            unit_of("tg_any_u8").map(|u| u.path),
            Some("exec/control.cu")
        );
        assert_eq!(
            unit_of("tg_track_begin").map(|u| u.path),
            Some("track/pipeline.cu")
        );
        assert!(unit_of("tg_no_such_kernel").is_none());
        let names: Vec<_> = kernels_of(source("exec/control.cu").unwrap()).collect();
        assert_eq!(names, ["tg_clear_word", "tg_any_u8"]);
    }
}
