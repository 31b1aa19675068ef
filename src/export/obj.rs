//! Wavefront OBJ: the simplest format loaders read.
//!
//! One `o NAME` object per non-empty [`Part`](super::Part) with its `v` (positions), `vt` (UVs)
//! and `vn` (normals) lines, then `f a/a/a b/b/b c/c/c` faces with 1-based indices counted over
//! the whole file, counter-clockwise from the front. Colours are not written (OBJ keeps them in
//! a separate `.mtl` file); the header comment records the up axis and the unit.

use std::fmt::Write;

use super::{Mesh, Up};

/// The OBJ text of `mesh` with up axis `up`.
pub fn to_obj(mesh: &Mesh, up: Up) -> String {
    let mut out = String::new();
    let up_name = match up {
        Up::Z => "+z",
        Up::Y => "+y",
    };
    let _ = writeln!(
        out,
        "# trackgen {}: metres, {up_name} up",
        env!("CARGO_PKG_VERSION")
    );
    let mut base = 1u64;
    for part in mesh.non_empty() {
        let _ = writeln!(out, "o {}", part.name);
        for &p in &part.positions {
            let p = up.apply(p);
            let _ = writeln!(out, "v {} {} {}", p.x, p.y, p.z);
        }
        for t in &part.uvs {
            let _ = writeln!(out, "vt {} {}", t.x, t.y);
        }
        for &n in &part.normals {
            let n = up.apply(n);
            let _ = writeln!(out, "vn {} {} {}", n.x, n.y, n.z);
        }
        for t in part.indices.chunks_exact(3) {
            let [a, b, c] = [t[0], t[1], t[2]].map(|i| base + u64::from(i));
            let _ = writeln!(out, "f {a}/{a}/{a} {b}/{b}/{b} {c}/{c}/{c}");
        }
        base += part.positions.len() as u64;
    }
    out
}
