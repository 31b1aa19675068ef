//! The mesh of a scene env's primitives: the zero level set of their CSG fold, by marching
//! tetrahedra.
//!
//! The env's cubic domain is cut into `R³` cells; the signed distance
//! ([`CompiledScene::distance`]) is sampled at the `(R + 1)³` cell corners; each cell is split
//! into the six tetrahedra around its main diagonal (Freudenthal's split, so neighbouring cells
//! agree on their shared faces and the surface has no cracks), and each tetrahedron whose
//! corners change sign gets one triangle (one or three corners inside) or two (two inside),
//! with vertices where the distance, linear along the edge, is zero. Vertices on the same grid
//! edge are shared. Normals are the distance's gradient (central differences, half a cell);
//! triangles are wound to face out of the solid. Marching tetrahedra needs no case table and
//! has no ambiguous cases (Doi and Koide 1991).
//!
//! Subtractions and unions are meshed as the fold defines them (rooms with door openings come
//! out with the openings). Surfaces reach the domain's faces and stop there (the floor plane is
//! clipped to the domain). Features thinner than a cell may be lost; `R` sets the detail.

use std::collections::HashMap;

use super::{Mesh, Part};
use crate::geom::{Vec2, Vec3};
use crate::scene::{CompiledScene, EnvScene};
use crate::{Error, Result};

/// Scene grey-blue.
const SCENE: [f32; 4] = [0.55, 0.6, 0.7, 1.0];

/// The largest `R` accepted (`R³` cells).
pub const MAX_RES: u32 = 512;

/// Cube corner `k` (bits: 1 = +x, 2 = +y, 4 = +z) of each tetrahedron of the split.
const TETS: [[usize; 4]; 6] = [
    [0, 1, 3, 7],
    [0, 1, 5, 7],
    [0, 2, 3, 7],
    [0, 2, 6, 7],
    [0, 4, 5, 7],
    [0, 4, 6, 7],
];

/// The mesh (one part, `scene`) of `scene`'s primitives at `res` cells per side of its domain;
/// an [`Error::Invalid`] for `res` outside `2..=512` or a primitive the compiler rejects.
pub fn scene_mesh(scene: &EnvScene, res: u32) -> Result<Mesh> {
    if !(2..=MAX_RES).contains(&res) {
        return Err(Error::Invalid(format!(
            "scene mesh resolution {res}: expected 2..={MAX_RES} cells per side"
        )));
    }
    let compiled = CompiledScene::new(&scene.primitives)?;
    let r = res as usize;
    let n = r + 1;
    let cell = scene.size_m / res as f32;
    let at = |i: usize, j: usize, k: usize| {
        scene.origin + Vec3::new(i as f32, j as f32, k as f32) * cell
    };
    let mut field = vec![0.0f32; n * n * n];
    for k in 0..n {
        for j in 0..n {
            for i in 0..n {
                field[(k * n + j) * n + i] = compiled.distance(at(i, j, k));
            }
        }
    }
    let gradient = |p: Vec3| {
        let h = 0.5 * cell;
        let d = |o: Vec3| compiled.distance(p + o) - compiled.distance(p - o);
        let g = Vec3::new(d(Vec3::X * h), d(Vec3::Y * h), d(Vec3::Z * h));
        let l = g.length();
        if l > 0.0 {
            g / l
        } else {
            Vec3::Z
        }
    };
    let mut part = Part::new("scene", SCENE);
    let mut shared: HashMap<(usize, usize), u32> = HashMap::new();
    let mut vertex = |part: &mut Part, a: usize, b: usize, pa: Vec3, pb: Vec3| -> u32 {
        let key = (a.min(b), a.max(b));
        *shared.entry(key).or_insert_with(|| {
            let (fa, fb) = (field[a], field[b]);
            let t = (fa / (fa - fb)).clamp(0.0, 1.0);
            let p = pa + (pb - pa) * t;
            part.vertex(p, gradient(p), Vec2::ZERO)
        })
    };
    for k in 0..r {
        for j in 0..r {
            for i in 0..r {
                let corner = |c: usize| (i + (c & 1), j + ((c >> 1) & 1), k + ((c >> 2) & 1));
                let index = |c: usize| {
                    let (x, y, z) = corner(c);
                    (z * n + y) * n + x
                };
                let inside = (0..8).filter(|&c| field[index(c)] < 0.0).count();
                if inside == 0 || inside == 8 {
                    continue;
                }
                for tet in TETS {
                    let ids = tet.map(index);
                    let pos = tet.map(|c| {
                        let (x, y, z) = corner(c);
                        at(x, y, z)
                    });
                    let (ins, outs): (Vec<usize>, Vec<usize>) =
                        (0..4).partition(|&v| field[ids[v]] < 0.0);
                    if ins.is_empty() || outs.is_empty() {
                        continue;
                    }
                    let outward = outs.iter().map(|&v| pos[v]).sum::<Vec3>() / outs.len() as f32
                        - ins.iter().map(|&v| pos[v]).sum::<Vec3>() / ins.len() as f32;
                    // Edges (inside corner, outside corner) of each triangle, in an order
                    // around the cut.
                    let tris: Vec<[(usize, usize); 3]> = match ins.len() {
                        1 => vec![[(ins[0], outs[0]), (ins[0], outs[1]), (ins[0], outs[2])]],
                        3 => vec![[(ins[0], outs[0]), (ins[1], outs[0]), (ins[2], outs[0])]],
                        _ => {
                            let quad = [
                                (ins[0], outs[0]),
                                (ins[0], outs[1]),
                                (ins[1], outs[1]),
                                (ins[1], outs[0]),
                            ];
                            vec![[quad[0], quad[1], quad[2]], [quad[0], quad[2], quad[3]]]
                        }
                    };
                    for tri in tris {
                        // The winding is decided on the edges' midpoints: the cut is the same
                        // polygon for any crossing points inside the edges, so this never
                        // depends on how close a crossing is to a corner (where the real
                        // triangle can be too small to have a reliable normal).
                        let mid = tri.map(|(a, b)| 0.5 * (pos[a] + pos[b]));
                        let flip = (mid[1] - mid[0]).cross(mid[2] - mid[0]).dot(outward) < 0.0;
                        let [a, b, c] =
                            tri.map(|(x, y)| vertex(&mut part, ids[x], ids[y], pos[x], pos[y]));
                        if a == b || b == c || a == c {
                            continue;
                        }
                        if flip {
                            part.indices.extend_from_slice(&[a, c, b]);
                        } else {
                            part.indices.extend_from_slice(&[a, b, c]);
                        }
                    }
                }
            }
        }
    }
    Ok(Mesh { parts: vec![part] })
}
