//! Mesh export (`trackgen::export`, `trackgen export`): road vertices lie on the band and every
//! road triangle faces up; walls face the road; gate boxes surround their gates; scene meshes
//! are closed and face out; the `.glb` files pass the glTF 2.0 structure rules (header, chunk
//! and buffer lengths, buffer views inside the buffer, accessors inside their views, `POSITION`
//! min/max equal to the data, indices below the vertex count) checked here and load in an
//! independent reader (`pygltflib`, when installed) with the expected counts; OBJ files have the
//! expected lines.

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

use serde_json::Value;
use trackgen::course::{Course, CourseConfig, Mode};
use trackgen::exec::Launch;
use trackgen::export::course::{gate_mesh, road, terrain, track_mesh, walls, MeshOptions};
use trackgen::export::scene::scene_mesh;
use trackgen::export::{glb, obj, Mesh, Part, Up};
use trackgen::geom::{Quat, Vec3};
use trackgen::preset::Preset;
use trackgen::scene::{EnvScene, Primitive, Shape};

use crate::cli::{assert_ok, trackgen};

fn hilly_course(n: usize) -> (Preset, Course) {
    let p = Preset::parse(
        "[track]\nn_max = 160\n[zprofile]\nkind = \"noise\"\namplitude_m = 6.0\nmax_grade = 0.08\nknots = 5\n",
        "hilly",
    )
    .unwrap();
    let c = Course::new(
        Mode::Track,
        &p,
        n,
        3,
        CourseConfig::default(),
        Launch::new(),
    )
    .unwrap();
    (p, c)
}

fn face_normal(part: &Part, t: &[u32]) -> Vec3 {
    let [a, b, c] = [0, 1, 2].map(|k| part.positions[t[k] as usize]);
    (b - a).cross(c - a)
}

#[test]
fn road_vertices_lie_on_the_band_and_triangles_face_up() {
    let (p, c) = hilly_course(3);
    let t = c.track_batch();
    for e in 0..3 {
        let part = road(t, e);
        let n = t.count[e] as usize;
        assert_eq!(part.positions.len(), 2 * (n + 1));
        assert_eq!(part.triangles(), 2 * n);
        let center = t.points(&t.center, e);
        for (v, q) in part.positions.iter().enumerate() {
            // Vertex 2i / 2i + 1 is a border point of rung i: half a width from its centre, at
            // its height.
            let c = center[(v / 2) % n];
            let off = (*q - c).length();
            assert!((off - p.track.half_width_m).abs() < 1e-3 && (q.z - c.z).abs() < 1e-5);
            assert!(part.normals[v].z > 0.9);
        }
        for tri in part.indices.chunks_exact(3) {
            let nrm = face_normal(&part, tri);
            assert!(
                nrm.z > 0.0 && nrm.z > 0.9 * nrm.length(),
                "triangle {tri:?} faces {nrm}"
            );
        }
        // The texture runs along the arc length and closes at the seam.
        let width = 2.0 * p.track.half_width_m;
        assert!((part.uvs[2 * n].y - t.length[e] / width).abs() < 1e-3);
    }
}

#[test]
fn walls_face_the_road_and_gates_surround_their_gates() {
    let (_, c) = hilly_course(1);
    let t = c.track_batch();
    let center = t.points(&t.center, 0);
    let w = walls(t, 0, 1.5);
    assert_eq!(w.triangles(), 4 * center.len());
    for tri in w.indices.chunks_exact(3) {
        let nrm = face_normal(&w, tri);
        assert!(nrm.z.abs() < 1e-3 * nrm.length(), "walls are vertical");
        let v = w.positions[tri[0] as usize];
        let nearest = center
            .iter()
            .min_by(|a, b| (**a - v).length().total_cmp(&(**b - v).length()))
            .unwrap();
        assert!(
            nrm.dot(*nearest - v) > 0.0,
            "a wall faces away from the road"
        );
    }
    let mesh = track_mesh(
        t,
        0,
        &MeshOptions {
            wall_height_m: Some(1.5),
            kerb_width_m: None,
        },
    );
    assert_eq!(mesh.parts.len(), 2);

    // Kerbs: outside the band, their tops facing up and their outer faces away from the road.
    let k = trackgen::export::course::kerbs(t, 0, 0.6);
    assert_eq!(
        (k.positions.len(), k.triangles()),
        (6 * (center.len() + 1), 8 * center.len())
    );
    for tri in k.indices.chunks_exact(3) {
        let nrm = face_normal(&k, tri);
        let v = k.positions[tri[0] as usize];
        let nearest = center
            .iter()
            .min_by(|a, b| (**a - v).length().total_cmp(&(**b - v).length()))
            .unwrap();
        let away = (v - *nearest).truncate().extend(0.0);
        assert!(
            nrm.z > 0.9 * nrm.length()
                || (nrm.dot(away) > 0.0 && nrm.z.abs() < 1e-3 * nrm.length())
        );
    }

    // The terrain: a vertex per texel centre at its height, triangles facing up.
    let mut fields =
        trackgen::course::Heightfields::new(trackgen::course::HeightfieldConfig::new(12), 1, 0)
            .unwrap();
    fields.bake(t, &[1], &Launch::new()).unwrap();
    let err = fields
        .bake(t, &[1, 1], &Launch::new())
        .unwrap_err()
        .to_string();
    assert!(err.contains("mask of 2 entries"), "{err}");
    let ground = terrain(&fields, 0);
    assert_eq!(ground.positions.len(), 144);
    assert!(ground
        .positions
        .iter()
        .zip(fields.heights(0))
        .all(|(p, &z)| p.z == z));
    for tri in ground.indices.chunks_exact(3) {
        assert!(face_normal(&ground, tri).z > 0.0);
    }

    let gates = Course::new(
        Mode::Gates,
        &Preset::load("gates").unwrap(),
        1,
        0,
        CourseConfig::default(),
        Launch::new(),
    )
    .unwrap();
    let g = gates.gate_batch().unwrap();
    let count = g.count[0] as usize;
    let plain = gate_mesh(g, 0, false);
    assert_eq!(plain.vertices(), count * 4 * 24);
    assert_eq!(plain.triangles(), count * 4 * 12);
    let posts = gate_mesh(g, 0, true);
    assert!(posts.vertices() > plain.vertices());
    let part = &plain.parts[0];
    for (k, chunk) in part.positions.chunks(4 * 24).enumerate() {
        let (pos, size) = (g.pos[k], g.size[k]);
        let th = g.thickness_m;
        let outer = Vec3::new(0.5 * th, 0.5 * size.x + th, 0.5 * size.y + th).length();
        for v in chunk {
            let d = (*v - pos).length();
            assert!(
                d <= outer + 1e-3,
                "gate {k}: vertex {d} m out (corner {outer} m)"
            );
            assert!(
                d >= 0.5 * size.x.min(size.y) - 1e-3,
                "gate {k}: vertex in the opening"
            );
        }
    }
}

#[test]
fn scene_mesh_is_closed_and_faces_out() {
    let sphere = EnvScene {
        origin: Vec3::splat(-2.0),
        size_m: 4.0,
        spawn: Vec3::ZERO,
        primitives: vec![
            Primitive::union(Shape::Sphere {
                center: Vec3::ZERO,
                radius: 1.2,
            }),
            Primitive::subtract(Shape::Box {
                center: Vec3::new(1.2, 0.0, 0.0),
                rotation: Quat::IDENTITY,
                half_extents: Vec3::splat(0.5),
            }),
        ],
    };
    let mesh = scene_mesh(&sphere, 32).unwrap();
    let part = &mesh.parts[0];
    assert!(part.triangles() > 500);
    let cell = 4.0 / 32.0;
    let mut edges: HashMap<(u32, u32), i32> = HashMap::new();
    for tri in part.indices.chunks_exact(3) {
        for k in 0..3 {
            let (a, b) = (tri[k], tri[(k + 1) % 3]);
            // Each directed edge once, its reverse once: a closed, consistently wound surface.
            *edges.entry((a, b)).or_default() += 1;
        }
        let centroid = tri
            .iter()
            .map(|&i| part.positions[i as usize])
            .sum::<Vec3>()
            / 3.0;
        let nrm = face_normal(part, tri);
        // Outward: away from the solid (the ball, less the cut-out box).
        let probe = centroid + nrm / nrm.length() * (0.5 * cell);
        let inside = probe.length() < 1.2
            && !(probe - Vec3::new(1.2, 0.0, 0.0))
                .abs()
                .cmple(Vec3::splat(0.5))
                .all();
        let near_edge = (probe.length() - 1.2).abs() < cell;
        assert!(
            !inside || near_edge,
            "triangle at {centroid} faces into the solid"
        );
    }
    for (&(a, b), &n) in &edges {
        assert_eq!(n, 1, "edge {a}-{b} used {n} times");
        assert_eq!(edges.get(&(b, a)), Some(&1), "edge {a}-{b} has no twin");
    }
    for v in &part.positions {
        let d = v.length() - 1.2;
        let in_cut = (*v - Vec3::new(1.2, 0.0, 0.0))
            .abs()
            .cmple(Vec3::splat(0.5 + cell))
            .all();
        assert!(d.abs() < cell || in_cut, "vertex {v} off the surface");
    }
    assert!(scene_mesh(&sphere, 1).is_err());
}

/// Reads a `.glb` and checks the glTF 2.0 structure rules; returns its JSON and per-mesh
/// `(name, vertices, triangles)`.
fn check_glb(bytes: &[u8]) -> (Value, Vec<(String, usize, usize)>) {
    let word = |o: usize| u32::from_le_bytes(bytes[o..o + 4].try_into().unwrap()) as usize;
    assert_eq!(word(0) as u32, glb::MAGIC);
    assert_eq!(word(4), 2, "version");
    assert_eq!(word(8), bytes.len(), "header length");
    let json_len = word(12);
    assert_eq!(word(16) as u32, glb::CHUNK_JSON);
    assert_eq!(json_len % 4, 0);
    let doc: Value = serde_json::from_slice(&bytes[20..20 + json_len]).unwrap();
    let bin_at = 20 + json_len;
    let bin_len = word(bin_at);
    assert_eq!(word(bin_at + 4) as u32, glb::CHUNK_BIN);
    assert_eq!(bin_len % 4, 0);
    assert_eq!(bin_at + 8 + bin_len, bytes.len());
    let bin = &bytes[bin_at + 8..];
    let buffer_len = doc["buffers"][0]["byteLength"].as_u64().unwrap() as usize;
    assert!(buffer_len <= bin_len && bin_len - buffer_len < 4);
    assert_eq!(doc["asset"]["version"], "2.0");
    let views = doc["bufferViews"].as_array().unwrap();
    for v in views {
        let (o, l) = (
            v["byteOffset"].as_u64().unwrap(),
            v["byteLength"].as_u64().unwrap(),
        );
        assert!(
            o % 4 == 0 && (o + l) as usize <= buffer_len,
            "view {v} outside the buffer"
        );
    }
    let accessors = doc["accessors"].as_array().unwrap();
    let data = |a: &Value| -> Vec<u32> {
        let v = &views[a["bufferView"].as_u64().unwrap() as usize];
        let comps = match a["type"].as_str().unwrap() {
            "SCALAR" => 1,
            "VEC2" => 2,
            "VEC3" => 3,
            t => panic!("type {t}"),
        };
        let n = a["count"].as_u64().unwrap() as usize * comps;
        assert!(
            n * 4 <= v["byteLength"].as_u64().unwrap() as usize,
            "accessor past its view"
        );
        let o = v["byteOffset"].as_u64().unwrap() as usize;
        (0..n)
            .map(|k| u32::from_le_bytes(bin[o + 4 * k..o + 4 * k + 4].try_into().unwrap()))
            .collect()
    };
    let mut meshes = Vec::new();
    for m in doc["meshes"].as_array().unwrap() {
        let prim = &m["primitives"][0];
        assert_eq!(prim["mode"], 4);
        let pos = &accessors[prim["attributes"]["POSITION"].as_u64().unwrap() as usize];
        assert_eq!(pos["componentType"], 5126);
        let values: Vec<f32> = data(pos).into_iter().map(f32::from_bits).collect();
        let count = pos["count"].as_u64().unwrap() as usize;
        for axis in 0..3 {
            let column = values.iter().skip(axis).step_by(3);
            let lo = column.clone().copied().fold(f32::INFINITY, f32::min);
            let hi = column.copied().fold(f32::NEG_INFINITY, f32::max);
            assert_eq!(
                pos["min"][axis].as_f64().unwrap() as f32,
                lo,
                "POSITION min"
            );
            assert_eq!(
                pos["max"][axis].as_f64().unwrap() as f32,
                hi,
                "POSITION max"
            );
        }
        for attr in ["NORMAL", "TEXCOORD_0"] {
            let a = &accessors[prim["attributes"][attr].as_u64().unwrap() as usize];
            assert_eq!(a["count"].as_u64().unwrap() as usize, count, "{attr} count");
            data(a);
        }
        let idx = &accessors[prim["indices"].as_u64().unwrap() as usize];
        assert_eq!(idx["componentType"], 5125);
        let indices = data(idx);
        assert_eq!(indices.len() % 3, 0);
        assert!(
            indices.iter().all(|&i| (i as usize) < count),
            "index past the vertices"
        );
        meshes.push((
            m["name"].as_str().unwrap().to_string(),
            count,
            indices.len() / 3,
        ));
    }
    (doc, meshes)
}

fn expected(mesh: &Mesh) -> Vec<(String, usize, usize)> {
    mesh.parts
        .iter()
        .map(|p| (p.name.clone(), p.positions.len(), p.triangles()))
        .collect()
}

#[test]
fn glb_and_obj_files_hold_the_mesh() {
    let (_, c) = hilly_course(1);
    let mesh = track_mesh(
        c.track_batch(),
        0,
        &MeshOptions {
            wall_height_m: Some(1.0),
            kerb_width_m: None,
        },
    );
    let (doc, meshes) = check_glb(&glb::to_glb(&mesh, Up::Z));
    assert_eq!(meshes, expected(&mesh));
    assert_eq!(doc["asset"]["extras"]["up"], "z");
    // y up: (x, y, z) → (x, z, −y).
    let (doc_y, _) = check_glb(&glb::to_glb(&mesh, Up::Y));
    let (zmax, ymin) = (
        &doc["accessors"][0]["max"][2],
        &doc_y["accessors"][0]["max"][1],
    );
    assert_eq!(zmax, ymin);
    assert_eq!(
        doc["accessors"][0]["min"][1].as_f64().unwrap(),
        -doc_y["accessors"][0]["max"][2].as_f64().unwrap()
    );
    let text = obj::to_obj(&mesh, Up::Z);
    let count = |prefix: &str| text.lines().filter(|l| l.starts_with(prefix)).count();
    assert_eq!(count("v "), mesh.vertices());
    assert_eq!(count("vn "), mesh.vertices());
    assert_eq!(count("f "), mesh.triangles());
    assert_eq!(count("o "), 2);
    for l in text.lines().filter(|l| l.starts_with("f ")) {
        for v in l.split_whitespace().skip(1) {
            let i: usize = v.split('/').next().unwrap().parse().unwrap();
            assert!((1..=mesh.vertices()).contains(&i));
        }
    }
}

fn pygltflib() -> bool {
    let ok = Command::new("python3")
        .args(["-c", "import pygltflib"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        crate::skip::skip(
            "export_glb_loads_in_pygltflib",
            "pygltflib not installed (`python3 -m pip install pygltflib`)",
            "TRACKGEN_REQUIRE_PYGLTFLIB",
        );
    }
    ok
}

/// Loads `path` with pygltflib and returns per mesh `(name, vertices, triangles)` as it reads
/// them, after checking every index against the vertex count.
fn pygltflib_counts(path: &Path) -> Vec<(String, usize, usize)> {
    let script = r#"
import struct, sys, pygltflib
g = pygltflib.GLTF2().load(sys.argv[1])
blob = g.binary_blob()
for m in g.meshes:
    p = m.primitives[0]
    pos = g.accessors[p.attributes.POSITION]
    idx = g.accessors[p.indices]
    view = g.bufferViews[idx.bufferView]
    data = struct.unpack_from("<%dI" % idx.count, blob, view.byteOffset + (idx.byteOffset or 0))
    assert max(data) < pos.count, "index out of range"
    print(m.name, pos.count, idx.count // 3)
"#;
    let out = Command::new("python3")
        .args(["-c", script])
        .arg(path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (
                f[0].to_string(),
                f[1].parse().unwrap(),
                f[2].parse().unwrap(),
            )
        })
        .collect()
}

#[test]
fn export_command_writes_files_that_an_independent_reader_loads() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    assert_ok(&trackgen(
        &["generate", "--preset", "f1", "--envs", "3", "--out", "c"],
        d,
    ));
    assert_ok(&trackgen(
        &[
            "export", "c", "--env", "2", "--walls", "1.2", "--kerbs", "0.5", "--out", "e2.glb",
        ],
        d,
    ));
    assert_ok(&trackgen(
        &[
            "export", "c", "--envs", "0..3", "--format", "obj", "--up", "y", "--out", "objs",
        ],
        d,
    ));
    for e in 0..3 {
        assert!(d.join(format!("objs/env_{e:06}.obj")).is_file());
    }
    let corpus = trackgen::corpus::Corpus::open(&d.join("c")).unwrap();
    let batch = corpus.read_rows(2..3).unwrap();
    let mesh = track_mesh(
        &batch,
        0,
        &MeshOptions {
            wall_height_m: Some(1.2),
            kerb_width_m: Some(0.5),
        },
    );
    let (_, meshes) = check_glb(&std::fs::read(d.join("e2.glb")).unwrap());
    assert_eq!(meshes, expected(&mesh));
    let n = batch.count[0] as usize;
    assert_eq!(meshes[0], ("road".to_string(), 2 * (n + 1), 2 * n));

    assert_ok(&trackgen(
        &["generate", "--preset", "gates", "--envs", "1", "--out", "g"],
        d,
    ));
    assert_ok(&trackgen(
        &["export", "g", "--env", "0", "--out", "g.glb"],
        d,
    ));
    let (_, gate_meshes) = check_glb(&std::fs::read(d.join("g.glb")).unwrap());
    assert_eq!(gate_meshes[0].0, "gates");

    // Errors name what is wrong.
    let err = |args: &[&str], needle: &str| {
        let o = trackgen(args, d);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
    };
    err(
        &["export", "c", "--env", "3", "--out", "x.glb"],
        "holds envs 0..3",
    );
    err(
        &["export", "c", "--env", "0", "--out", "e2.glb"],
        "already exists",
    );
    err(
        &[
            "export", "g", "--env", "0", "--walls", "1", "--out", "y.glb",
        ],
        "--walls",
    );
    err(&["export", "c", "--out", "z.glb"], "--env I");

    if pygltflib() {
        assert_eq!(pygltflib_counts(&d.join("e2.glb")), meshes);
        assert_eq!(pygltflib_counts(&d.join("g.glb")), gate_meshes);
    }
}
