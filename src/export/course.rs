//! Course meshes: the road surface strip, walls along the borders, gate frames and posts.

use super::{Mesh, Part};
use crate::course::{GateBatch, Heightfields, PropKind, Props};
use crate::geom::{axes, Vec2, Vec3};
use crate::track::TrackBatch;

/// Road grey.
const ROAD: [f32; 4] = [0.22, 0.22, 0.24, 1.0];
/// Wall red.
const WALL: [f32; 4] = [0.75, 0.12, 0.10, 1.0];
/// Gate orange.
const GATE: [f32; 4] = [0.95, 0.45, 0.05, 1.0];
/// Kerb white.
const KERB: [f32; 4] = [0.92, 0.92, 0.9, 1.0];
/// Height of a kerb's top above the road, metres.
pub const KERB_HEIGHT_M: f32 = 0.08;
/// Terrain green.
const TERRAIN: [f32; 4] = [0.35, 0.5, 0.3, 1.0];
/// Prop orange.
const PROP: [f32; 4] = [1.0, 0.5, 0.0, 1.0];

/// Side of a point prop's box (a cone's footprint), metres.
pub const POINT_PROP_SIDE_M: f32 = 0.4;
/// Height of a point prop's box, metres.
pub const POINT_PROP_HEIGHT_M: f32 = 0.7;
/// Thickness of a wall piece, metres.
pub const WALL_PIECE_THICKNESS_M: f32 = 0.3;
/// Height of a wall piece, metres.
pub const WALL_PIECE_HEIGHT_M: f32 = 1.0;

/// What [`track_mesh`] and [`gate_mesh`] include besides the road or the gates.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MeshOptions {
    /// Walls along both borders, this tall (metres, > 0), facing the road; `None`: no walls.
    pub wall_height_m: Option<f32>,
    /// Kerbs outside both borders, this wide (metres, > 0); `None`: no kerbs.
    pub kerb_width_m: Option<f32>,
}

/// The road surface of env `e` of `tracks`: a closed triangle strip between the borders.
///
/// Rung `i` (`i = 0..=n`, rung `n` repeating rung 0 so that the texture closes) holds the
/// left border point (vertex `2i`) and the right one (`2i + 1`), left and right of the driving
/// direction. UVs: `u` = 0 on the left border and 1 on the right, `v` = arc length / road width
/// (so a square texture tiles square along the road); at the seam `v` = closed length / width.
/// `2(n + 1)` vertices and `2n` triangles, all facing up. Normals are the area-weighted
/// averages of the adjacent faces. An env with fewer than 3 points gives an empty part.
pub fn road(tracks: &TrackBatch, e: usize) -> Part {
    let mut part = Part::new("road", ROAD);
    let (center, arclen) = (
        tracks.points(&tracks.center, e),
        tracks.points(&tracks.arclen, e),
    );
    let n = center.len();
    if n < 3 {
        return part;
    }
    let (left, right) = sides(tracks, e);
    let width = (left[0] - right[0]).length();
    for i in 0..=n {
        let k = i % n;
        let v = if i == n { tracks.length[e] } else { arclen[k] } / width;
        part.vertex(left[k], Vec3::Z, Vec2::new(0.0, v));
        part.vertex(right[k], Vec3::Z, Vec2::new(1.0, v));
    }
    for i in 0..n as u32 {
        let (l, r, l1, r1) = (2 * i, 2 * i + 1, 2 * i + 2, 2 * i + 3);
        part.indices.extend_from_slice(&[r, r1, l, l, r1, l1]);
    }
    smooth_normals(&mut part, true);
    part
}

/// The `n + 1` rungs of a closed border of `n` points (the first repeated at the end): each
/// point, its arc length along the border from point 0, and the unit horizontal normal left of
/// the border's direction there (central difference of its neighbours).
fn border_rungs(border: &[Vec3]) -> impl Iterator<Item = (Vec3, f32, Vec3)> + '_ {
    let n = border.len();
    let mut s = 0.0f32;
    (0..=n).map(move |i| {
        let p = border[i % n];
        if i > 0 {
            s += (p - border[i - 1]).length();
        }
        let t = border[(i + 1) % n] - border[(i + n - 1) % n];
        let h = (t.x * t.x + t.y * t.y).sqrt().max(f32::MIN_POSITIVE);
        (p, s, Vec3::new(-t.y / h, t.x / h, 0.0))
    })
}

/// Walls of `height_m` along both borders of env `e`, each a vertical strip from the border
/// up, facing the road: per border `2(n + 1)` vertices (bottom `2i`, top `2i + 1`; `u` = arc
/// length along the border in metres, `v` = height in metres) and `2n` triangles.
pub fn walls(tracks: &TrackBatch, e: usize, height_m: f32) -> Part {
    let mut part = Part::new("walls", WALL);
    let n = tracks.count[e] as usize;
    if n < 3 {
        return part;
    }
    let (left, right) = sides(tracks, e);
    let up = Vec3::new(0.0, 0.0, height_m);
    for (border, faces_right) in [(left, true), (right, false)] {
        let first = part.positions.len() as u32;
        for (p, s, left_of) in border_rungs(border) {
            // Horizontal normal towards the road: right of the border's direction on the left
            // wall, left of it on the right wall.
            let normal = if faces_right { -left_of } else { left_of };
            part.vertex(p, normal, Vec2::new(s, 0.0));
            part.vertex(p + up, normal, Vec2::new(s, height_m));
        }
        for i in 0..n as u32 {
            let (b, t, b1, t1) = (
                first + 2 * i,
                first + 2 * i + 1,
                first + 2 * i + 2,
                first + 2 * i + 3,
            );
            if faces_right {
                part.indices.extend_from_slice(&[b, b1, t, t, b1, t1]);
            } else {
                part.indices.extend_from_slice(&[b, t, b1, b1, t, t1]);
            }
        }
    }
    part
}

/// Kerbs of `width_m` outside both borders of env `e`: per border a flat top strip
/// [`KERB_HEIGHT_M`] above the road from the border outwards (facing up) and its outer face down
/// to the road's height (facing away from the road). Per border `3(n + 1)` vertices (rung `i`:
/// the border raised, the outer edge raised, the outer edge at road height; `u` = arc length
/// along the border, metres) and `4n` triangles.
pub fn kerbs(tracks: &TrackBatch, e: usize, width_m: f32) -> Part {
    let mut part = Part::new("kerbs", KERB);
    let n = tracks.count[e] as usize;
    if n < 3 {
        return part;
    }
    let (left, right) = sides(tracks, e);
    let lift = Vec3::new(0.0, 0.0, KERB_HEIGHT_M);
    for (border, is_left) in [(left, true), (right, false)] {
        let first = part.positions.len() as u32;
        for (p, s, left_of) in border_rungs(border) {
            // Away from the road: left of the left border, right of the right one.
            let out = if is_left { left_of } else { -left_of };
            part.vertex(p + lift, Vec3::Z, Vec2::new(s, 0.0));
            part.vertex(p + lift + out * width_m, Vec3::Z, Vec2::new(s, width_m));
            part.vertex(
                p + out * width_m,
                out,
                Vec2::new(s, width_m + KERB_HEIGHT_M),
            );
        }
        for i in 0..n as u32 {
            let (a, b, c) = (first + 3 * i, first + 3 * i + 1, first + 3 * i + 2);
            let (a1, b1, c1) = (a + 3, b + 3, c + 3);
            if is_left {
                // Driving direction along the rungs; the left kerb's outside is to the left.
                part.indices.extend_from_slice(&[a, a1, b, b, a1, b1]);
                part.indices.extend_from_slice(&[b, b1, c, c, b1, c1]);
            } else {
                part.indices.extend_from_slice(&[a, b, a1, b, b1, a1]);
                part.indices.extend_from_slice(&[b, c, b1, c, c1, b1]);
            }
        }
    }
    part
}

/// The road of env `e` (and its walls and kerbs if `options` asks for them).
pub fn track_mesh(tracks: &TrackBatch, e: usize, options: &MeshOptions) -> Mesh {
    let mut mesh = Mesh {
        parts: vec![road(tracks, e)],
    };
    if let Some(h) = options.wall_height_m {
        mesh.parts.push(walls(tracks, e, h));
    }
    if let Some(w) = options.kerb_width_m {
        mesh.parts.push(kerbs(tracks, e, w));
    }
    mesh
}

/// The gate frames of env `e` of `gates` — per gate four bars of the preset's thickness around
/// the opening, `thickness_m` deep along the flight direction (the shape of
/// [`crate::geom::sdf::gate_frame`] that the runtime collides with) — and, with `posts`, a
/// square post of side `thickness_m` under each side bar from the frame's bottom down to
/// `z = 0` (the runtime's posts are round and reach down without end). 4 boxes per gate (6 with
/// posts), 24 vertices and 12 triangles per box.
pub fn gate_mesh(gates: &GateBatch, e: usize, posts: bool) -> Mesh {
    let mut part = Part::new("gates", GATE);
    let th = gates.thickness_m;
    let pos = gates.gates(&gates.pos, e);
    let quat = gates.gates(&gates.quat, e);
    let size = gates.gates(&gates.size, e);
    for ((&c, &q), &s) in pos.iter().zip(quat).zip(size) {
        let [x, y, z] = axes(q);
        let (hw, hh, ht) = (0.5 * s.x, 0.5 * s.y, 0.5 * th);
        // Top and bottom bars span the full outer width; the side bars fill the opening's height.
        for sign in [1.0f32, -1.0] {
            part.cuboid(
                c + z * (sign * (hh + ht)),
                [x, y, z],
                Vec3::new(ht, hw + th, ht),
            );
            part.cuboid(c + y * (sign * (hw + ht)), [x, y, z], Vec3::new(ht, ht, hh));
        }
        if posts {
            for sign in [1.0f32, -1.0] {
                let foot = c + y * (sign * (hw + ht)) - z * (hh + th);
                if foot.z > 0.0 {
                    let mid = Vec3::new(foot.x, foot.y, 0.5 * foot.z);
                    let (px, py) = (Vec3::new(x.x, x.y, 0.0), Vec3::new(-x.y, x.x, 0.0));
                    let hl = px.length();
                    let (px, py) = if hl > 0.0 {
                        (px / hl, py / hl)
                    } else {
                        (Vec3::X, Vec3::Y)
                    };
                    part.cuboid(mid, [px, py, Vec3::Z], Vec3::new(ht, ht, 0.5 * foot.z));
                }
            }
        }
    }
    Mesh { parts: vec![part] }
}

/// Env `e`'s heightfield as a terrain mesh: one vertex per texel centre at its height (`R²`
/// vertices, `u, v` = column and row / (R − 1)), two up-facing triangles per cell between
/// four centres (`2(R − 1)²`). An env with a NaN field (invalid) gives an empty part.
pub fn terrain(heightfields: &Heightfields, e: usize) -> Part {
    let mut part = Part::new("terrain", TERRAIN);
    let heights = heightfields.heights(e);
    let [lo, hi] = heightfields.env_bounds(e);
    if heights.iter().any(|h| !h.is_finite()) {
        return part;
    }
    let r = heightfields.config.resolution as usize;
    let d = (hi.x - lo.x) / r as f32;
    let at = |i: usize, j: usize| {
        Vec3::new(
            lo.x + (i as f32 + 0.5) * d,
            lo.y + (j as f32 + 0.5) * d,
            heights[j * r + i],
        )
    };
    let scale = 1.0 / (r - 1) as f32;
    for j in 0..r {
        for i in 0..r {
            part.vertex(
                at(i, j),
                Vec3::Z,
                Vec2::new(i as f32 * scale, j as f32 * scale),
            );
        }
    }
    for j in 0..r - 1 {
        for i in 0..r - 1 {
            let a = (j * r + i) as u32;
            let (b, c, d) = (a + 1, a + r as u32, a + r as u32 + 1);
            part.indices.extend_from_slice(&[a, b, d, a, d, c]);
        }
    }
    smooth_normals(&mut part, false);
    part
}

/// Env `e`'s boundary props as boxes: point props as [`POINT_PROP_SIDE_M`]-square boxes
/// [`POINT_PROP_HEIGHT_M`] tall standing on their position; wall pieces as boxes of their
/// length × [`WALL_PIECE_THICKNESS_M`] × [`WALL_PIECE_HEIGHT_M`] along their chord, standing on
/// it (pitched with it). 24 vertices and 12 triangles per prop.
pub fn prop_boxes(props: &Props, e: usize) -> Part {
    let mut part = Part::new("props", PROP);
    let (pos, quat, length) = props.env(e);
    for ((&p, &q), &l) in pos.iter().zip(quat).zip(length) {
        let [x, y, z] = axes(q);
        let half = match props.config.kind {
            PropKind::Point => Vec3::new(
                0.5 * POINT_PROP_SIDE_M,
                0.5 * POINT_PROP_SIDE_M,
                0.5 * POINT_PROP_HEIGHT_M,
            ),
            PropKind::Segment => Vec3::new(
                0.5 * l,
                0.5 * WALL_PIECE_THICKNESS_M,
                0.5 * WALL_PIECE_HEIGHT_M,
            ),
        };
        part.cuboid(p + z * half.z, [x, y, z], half);
    }
    part
}

/// The left and right borders of env `e` (left of the driving direction first).
fn sides(tracks: &TrackBatch, e: usize) -> (&[Vec3], &[Vec3]) {
    let (inner, outer) = (
        tracks.points(&tracks.inner, e),
        tracks.points(&tracks.outer, e),
    );
    let (c, n) = (
        tracks.points(&tracks.center, e)[0],
        tracks.points(&tracks.normal, e)[0],
    );
    if (inner[0] - c).dot(n) > 0.0 {
        (inner, outer)
    } else {
        (outer, inner)
    }
}

/// Sets each vertex normal to the normalised sum of its faces' (area-weighted) normals; with
/// `seam`, the first and last rung (two vertices each) of a closed strip share theirs.
fn smooth_normals(part: &mut Part, seam: bool) {
    let mut sums = vec![Vec3::ZERO; part.positions.len()];
    for t in part.indices.chunks_exact(3) {
        let (a, b, c) = (
            part.positions[t[0] as usize],
            part.positions[t[1] as usize],
            part.positions[t[2] as usize],
        );
        let n = (b - a).cross(c - a);
        for &i in t {
            sums[i as usize] += n;
        }
    }
    // The seam rung repeats rung 0: give both the same normal.
    let rungs = part.positions.len();
    if seam && rungs >= 4 {
        for k in 0..2 {
            let s = sums[k] + sums[rungs - 2 + k];
            sums[k] = s;
            sums[rungs - 2 + k] = s;
        }
    }
    for (n, s) in part.normals.iter_mut().zip(sums) {
        let l = s.length();
        *n = if l > 0.0 { s / l } else { Vec3::Z };
    }
}
