//! Meshes of courses for simulators and renderers: the road surface, walls along the borders,
//! gate frames and posts, as binary glTF 2.0 (`.glb`) or Wavefront OBJ.
//!
//! A [`Mesh`] is a list of named [`Part`]s (`road`, `walls`, `gates`), each an indexed triangle
//! list with per-vertex normals and UVs and one colour. [`course`] builds them from a track or
//! gate batch; [`glb`] and [`obj`] write them.
//!
//! # Axes and units
//! Metres, and by default the crate's world axes: `+z` up, `x`/`y` the ground plane
//! ([`Up::Z`]). glTF's own convention is `+y` up; [`Up::Y`] rotates every position and normal by
//! −90° about `x` on the way out, `(x, y, z) → (x, z, −y)`, for consumers that follow it
//! (three.js, Blender's glTF importer, game engines). Isaac Sim, MuJoCo and Gazebo are `z` up:
//! they take [`Up::Z`] as is.
//!
//! # Winding
//! Triangles are counter-clockwise seen from the side their normal points to: the road faces up
//! (`+z`), walls face the road, gate bars face outwards.

pub mod course;
pub mod glb;
pub mod obj;
pub mod scene;

use crate::geom::{Vec2, Vec3};

/// The up axis of an exported file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Up {
    /// The crate's world axes, `+z` up (default).
    #[default]
    Z,
    /// `+y` up (glTF's convention): `(x, y, z) → (x, z, −y)`.
    Y,
}

impl Up {
    /// `v` in this file's axes.
    pub fn apply(self, v: Vec3) -> Vec3 {
        match self {
            Up::Z => v,
            Up::Y => Vec3::new(v.x, v.z, -v.y),
        }
    }
}

/// One named piece of a mesh: an indexed triangle list with one colour.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Part {
    /// Name (`road`, `walls`, `gates`): the glTF node and mesh name, the OBJ object name.
    pub name: String,
    /// Linear RGBA base colour, each in `[0, 1]`.
    pub color: [f32; 4],
    /// Vertex positions, metres (world axes, `+z` up).
    pub positions: Vec<Vec3>,
    /// Unit vertex normals.
    pub normals: Vec<Vec3>,
    /// Texture coordinates.
    pub uvs: Vec<Vec2>,
    /// Three vertex indices per triangle, counter-clockwise seen from the front.
    pub indices: Vec<u32>,
}

impl Part {
    /// An empty part.
    pub fn new(name: &str, color: [f32; 4]) -> Self {
        Self {
            name: name.to_string(),
            color,
            ..Self::default()
        }
    }

    /// Triangles in the part.
    pub fn triangles(&self) -> usize {
        self.indices.len() / 3
    }

    /// Appends a vertex and returns its index.
    pub fn vertex(&mut self, position: Vec3, normal: Vec3, uv: Vec2) -> u32 {
        self.positions.push(position);
        self.normals.push(normal);
        self.uvs.push(uv);
        (self.positions.len() - 1) as u32
    }

    /// Appends a box with centre `center`, local axes `axes` (unit, right-handed) and half
    /// extents `half` along them: 24 vertices (flat normals per face), 12 triangles facing out.
    pub fn cuboid(&mut self, center: Vec3, axes: [Vec3; 3], half: Vec3) {
        let h = [half.x, half.y, half.z];
        for a in 0..3 {
            let (b, c) = ((a + 1) % 3, (a + 2) % 3);
            for sign in [1.0f32, -1.0] {
                let n = axes[a] * sign;
                // (u, v) span the face so that u × v = n.
                let (u, v) = if sign > 0.0 {
                    (axes[b] * h[b], axes[c] * h[c])
                } else {
                    (axes[c] * h[c], axes[b] * h[b])
                };
                let mid = center + n * h[a];
                let i = self.vertex(mid - u - v, n, Vec2::new(0.0, 0.0));
                self.vertex(mid + u - v, n, Vec2::new(1.0, 0.0));
                self.vertex(mid + u + v, n, Vec2::new(1.0, 1.0));
                self.vertex(mid - u + v, n, Vec2::new(0.0, 1.0));
                self.indices
                    .extend_from_slice(&[i, i + 1, i + 2, i, i + 2, i + 3]);
            }
        }
    }
}

/// A mesh: its parts, in order. Empty parts are left out of the files.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Mesh {
    /// The parts.
    pub parts: Vec<Part>,
}

impl Mesh {
    /// Vertices over all parts.
    pub fn vertices(&self) -> usize {
        self.parts.iter().map(|p| p.positions.len()).sum()
    }

    /// Triangles over all parts.
    pub fn triangles(&self) -> usize {
        self.parts.iter().map(Part::triangles).sum()
    }

    /// The part named `name`, if any.
    pub fn part(&self, name: &str) -> Option<&Part> {
        self.parts.iter().find(|p| p.name == name)
    }

    /// The parts that hold triangles.
    pub(crate) fn non_empty(&self) -> impl Iterator<Item = &Part> {
        self.parts.iter().filter(|p| !p.indices.is_empty())
    }
}
