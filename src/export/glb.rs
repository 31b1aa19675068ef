//! Binary glTF 2.0 (`.glb`): one JSON chunk and one binary chunk.
//!
//! Each non-empty [`Part`](super::Part) becomes a node, a mesh of one triangle primitive and a
//! material (its colour as `baseColorFactor`, not metallic). Each attribute (`POSITION`,
//! `NORMAL`, `TEXCOORD_0`) and the `indices` (`UNSIGNED_INT`) have their own buffer view, all
//! in the one buffer of the binary chunk, 4-byte aligned. `POSITION` accessors carry `min` and
//! `max`, as the specification requires. `asset.extras` records the up axis (`"z"` or `"y"`)
//! and the unit (`"m"`); see [`Up`] for what `"y"` changes.
//!
//! Layout (glTF 2.0 §4.4): a 12-byte header (`glTF`, version 2, total length), then chunks of
//! `[length, type, data]` — `JSON` padded with spaces, `BIN\0` padded with zeros to 4 bytes.

use serde_json::{json, Value};

use super::{Mesh, Up};
use crate::geom::Vec3;

/// `glTF`, little-endian.
pub const MAGIC: u32 = 0x4654_6C67;
/// Chunk type of the JSON chunk.
pub const CHUNK_JSON: u32 = 0x4E4F_534A;
/// Chunk type of the binary chunk.
pub const CHUNK_BIN: u32 = 0x004E_4942;

const FLOAT: u32 = 5126;
const UNSIGNED_INT: u32 = 5125;
const ARRAY_BUFFER: u32 = 34962;
const ELEMENT_ARRAY_BUFFER: u32 = 34963;
const TRIANGLES: u32 = 4;

/// Little-endian bytes of `values` (glTF buffers are little-endian).
fn le(values: impl Iterator<Item = f32>) -> Vec<u8> {
    values.flat_map(f32::to_le_bytes).collect()
}

/// The `.glb` bytes of `mesh` with up axis `up`.
pub fn to_glb(mesh: &Mesh, up: Up) -> Vec<u8> {
    let mut bin: Vec<u8> = Vec::new();
    let mut views: Vec<Value> = Vec::new();
    let mut accessors: Vec<Value> = Vec::new();
    let mut meshes: Vec<Value> = Vec::new();
    let mut nodes: Vec<Value> = Vec::new();
    let mut materials: Vec<Value> = Vec::new();
    let mut view = |bin: &mut Vec<u8>, bytes: &[u8], target: u32| -> usize {
        let offset = bin.len();
        bin.extend_from_slice(bytes);
        views.push(json!({
            "buffer": 0, "byteOffset": offset, "byteLength": bytes.len(), "target": target
        }));
        views.len() - 1
    };
    for part in mesh.non_empty() {
        let positions: Vec<Vec3> = part.positions.iter().map(|&p| up.apply(p)).collect();
        let normals: Vec<Vec3> = part.normals.iter().map(|&n| up.apply(n)).collect();
        let (lo, hi) = positions.iter().fold(
            (Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY)),
            |(lo, hi), &p| (lo.min(p), hi.max(p)),
        );
        let count = positions.len();
        let v = view(
            &mut bin,
            &le(positions.iter().flat_map(|p| p.to_array())),
            ARRAY_BUFFER,
        );
        accessors.push(json!({
            "bufferView": v, "componentType": FLOAT, "count": count, "type": "VEC3",
            "min": [lo.x, lo.y, lo.z], "max": [hi.x, hi.y, hi.z]
        }));
        let position = accessors.len() - 1;
        let v = view(
            &mut bin,
            &le(normals.iter().flat_map(|n| n.to_array())),
            ARRAY_BUFFER,
        );
        accessors.push(json!({
            "bufferView": v, "componentType": FLOAT, "count": count, "type": "VEC3"
        }));
        let normal = accessors.len() - 1;
        let v = view(
            &mut bin,
            &le(part.uvs.iter().flat_map(|t| t.to_array())),
            ARRAY_BUFFER,
        );
        accessors.push(json!({
            "bufferView": v, "componentType": FLOAT, "count": count, "type": "VEC2"
        }));
        let uv = accessors.len() - 1;
        let index_bytes: Vec<u8> = part.indices.iter().flat_map(|i| i.to_le_bytes()).collect();
        let v = view(&mut bin, &index_bytes, ELEMENT_ARRAY_BUFFER);
        let max_index = part.indices.iter().copied().max().unwrap_or(0);
        let min_index = part.indices.iter().copied().min().unwrap_or(0);
        accessors.push(json!({
            "bufferView": v, "componentType": UNSIGNED_INT, "count": part.indices.len(),
            "type": "SCALAR", "min": [min_index], "max": [max_index]
        }));
        let indices = accessors.len() - 1;
        let [r, g, b, a] = part.color;
        materials.push(json!({
            "name": part.name,
            "pbrMetallicRoughness": {
                "baseColorFactor": [r, g, b, a], "metallicFactor": 0.0, "roughnessFactor": 0.9
            }
        }));
        meshes.push(json!({
            "name": part.name,
            "primitives": [{
                "attributes": { "POSITION": position, "NORMAL": normal, "TEXCOORD_0": uv },
                "indices": indices, "material": materials.len() - 1, "mode": TRIANGLES
            }]
        }));
        nodes.push(json!({ "name": part.name, "mesh": meshes.len() - 1 }));
    }
    let up_name = match up {
        Up::Z => "z",
        Up::Y => "y",
    };
    let mut doc = json!({
        "asset": {
            "version": "2.0",
            "generator": concat!("trackgen ", env!("CARGO_PKG_VERSION")),
            "extras": { "up": up_name, "unit": "m" }
        },
        "scene": 0,
        "scenes": [{ "nodes": (0..nodes.len()).collect::<Vec<_>>() }],
        "nodes": nodes,
        "meshes": meshes,
        "materials": materials,
        "accessors": accessors,
        "bufferViews": views,
    });
    if !bin.is_empty() {
        doc["buffers"] = json!([{ "byteLength": bin.len() }]);
    }
    let mut text = serde_json::to_vec(&doc).expect("a glTF document serialises");
    while text.len() % 4 != 0 {
        text.push(b' ');
    }
    while bin.len() % 4 != 0 {
        bin.push(0);
    }
    let bin_chunk = if bin.is_empty() { 0 } else { 8 + bin.len() };
    let total = 12 + 8 + text.len() + bin_chunk;
    let mut out = Vec::with_capacity(total);
    for word in [MAGIC, 2, total as u32, text.len() as u32, CHUNK_JSON] {
        out.extend_from_slice(&word.to_le_bytes());
    }
    out.extend_from_slice(&text);
    if !bin.is_empty() {
        out.extend_from_slice(&(bin.len() as u32).to_le_bytes());
        out.extend_from_slice(&CHUNK_BIN.to_le_bytes());
        out.extend_from_slice(&bin);
    }
    out
}
