//! The simulator recipes in `examples/` read what the corpus writes: `mujoco_hfield.py` turns
//! an env's heightfield into an MJCF `hfield` whose samples land on the texel centres at the
//! corpus heights, and `isaaclab_terrain.py` into an `int16` height field indexed `[x, y]`
//! (the transpose) whose mesh vertices sit on the same points and whose triangles face up.
//! Without numpy the test reports a `SKIP:` line (CI requires numpy).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use trackgen::corpus::Corpus;

use crate::cli::{assert_ok, trackgen};

fn examples() -> PathBuf {
    [env!("CARGO_MANIFEST_DIR"), "examples"].iter().collect()
}

fn numpy() -> bool {
    let ok = Command::new("python3")
        .args(["-c", "import numpy"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        crate::skip::skip(
            "examples_sim",
            "numpy not installed (`python3 -c \"import numpy\"` fails)",
            "TRACKGEN_REQUIRE_NUMPY",
        );
    }
    ok
}

fn python(args: &[&str], cwd: &Path) -> String {
    let o = Command::new("python3")
        .args(args)
        .current_dir(cwd)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

/// The numbers of attribute `name` of the first element that has it.
fn attr(xml: &str, name: &str) -> Vec<f64> {
    let start = xml.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
    let end = start + xml[start..].find('"').unwrap();
    xml[start..end]
        .split_whitespace()
        .map(|v| v.parse().unwrap())
        .collect()
}

#[test]
fn simulator_recipes_read_the_corpus_heightfields() {
    if !numpy() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let r = 24usize;
    assert_ok(&trackgen(
        &[
            "generate",
            "--preset",
            "f1",
            "--env-range",
            "3..5",
            "--heightfield",
            "24",
            "--out",
            "c",
        ],
        d,
    ));
    let corpus = Corpus::open(&d.join("c")).unwrap();
    let h = corpus.read_heightfields(1..2).unwrap();
    let (heights, [lo, hi]) = (h.heights(0), h.env_bounds(0));
    let texel = (hi.x - lo.x) as f64 / r as f64;
    let span = heights.iter().fold(0.0f32, |m, &z| m.max(z))
        - heights.iter().fold(0.0f32, |m, &z| m.min(z));
    assert!(span > 1.0, "f1 is hilly ({span} m)");

    // MuJoCo: sample (row, col) at pos + (-size_x + 2 size_x col/(ncol-1), ...), height
    // pos_z + elevation·size_z.
    let mj = examples().join("mujoco_hfield.py");
    let xml = python(&[mj.to_str().unwrap(), "c", "4"], d);
    assert_eq!(attr(&xml, "nrow"), vec![r as f64]);
    let (size, pos, elevation) = (
        attr(&xml, "size"),
        attr(&xml, "pos"),
        attr(&xml, "elevation"),
    );
    assert_eq!(elevation.len(), r * r);
    assert!(elevation.iter().all(|e| (0.0..=1.0).contains(e)));
    for row in 0..r {
        for col in 0..r {
            let x = pos[0] - size[0] + 2.0 * size[0] * col as f64 / (r - 1) as f64;
            let y = pos[1] - size[1] + 2.0 * size[1] * row as f64 / (r - 1) as f64;
            assert!((x - (lo.x as f64 + (col as f64 + 0.5) * texel)).abs() < 1e-3);
            assert!((y - (lo.y as f64 + (row as f64 + 0.5) * texel)).abs() < 1e-3);
            let z = pos[2] + elevation[row * r + col] * size[2];
            assert!(
                (z - heights[row * r + col] as f64).abs() < 1e-4,
                "({row}, {col})"
            );
        }
    }

    // Isaac Lab: hf[i, j] (x, y) = round(height[j, i] / v); vertex i·R + j at corner + (i h, j h, hf v).
    let script = format!(
        r#"
import json, sys
sys.path.insert(0, {dir:?})
import numpy as np
import isaaclab_terrain as t
hf, h, v, corner = t.height_field("c", 4)
verts, tris = t.mesh_arrays(hf, h, v, corner)
n = np.cross(verts[tris[:, 1]] - verts[tris[:, 0]], verts[tris[:, 2]] - verts[tris[:, 0]])
print(json.dumps({{"hf": hf.tolist(), "h": h, "v": v, "corner": corner.tolist(),
    "verts": verts.tolist(), "tris": len(tris), "down": int((n[:, 2] <= 0).sum())}}))
"#,
        dir = examples().to_str().unwrap()
    );
    let out: Value = serde_json::from_str(&python(&["-c", &script], d)).unwrap();
    let v = out["v"].as_f64().unwrap();
    assert!((out["h"].as_f64().unwrap() - texel).abs() < 1e-6);
    assert_eq!(out["tris"], 2 * (r - 1) * (r - 1));
    assert_eq!(out["down"], 0, "every triangle faces up");
    let corner = &out["corner"];
    for i in 0..r {
        for j in 0..r {
            let units = out["hf"][i][j].as_f64().unwrap();
            assert!((units * v - heights[j * r + i] as f64).abs() <= 0.5 * v + 1e-6);
            let p = &out["verts"][i * r + j];
            let x = lo.x as f64 + (i as f64 + 0.5) * texel;
            let y = lo.y as f64 + (j as f64 + 0.5) * texel;
            assert!(
                (p[0].as_f64().unwrap() - x).abs() < 1e-3
                    && (p[1].as_f64().unwrap() - y).abs() < 1e-3
            );
            assert!((p[2].as_f64().unwrap() - units * v).abs() < 1e-9);
        }
    }
    assert!((corner[0].as_f64().unwrap() - (lo.x as f64 + 0.5 * texel)).abs() < 1e-3);
}

#[test]
fn numpy_loader_reads_and_checks_the_optional_arrays() {
    if !numpy() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    assert_ok(&trackgen(
        &[
            "generate",
            "--envs",
            "3",
            "--heightfield",
            "8",
            "--props",
            "outer:segment:7",
            "--props-max",
            "300",
            "--out",
            "c",
        ],
        d,
    ));
    let loader: PathBuf = [env!("CARGO_MANIFEST_DIR"), "interop", "python"]
        .iter()
        .collect();
    let script = r#"
import sys, trackgen_corpus as t
c = t.load(sys.argv[1], verify=True)
print(c["heightfield"].shape, c["heightfield_bounds"].shape, c["prop_pos"].shape, c["prop_quat"].shape, c["prop_length"].shape, c["prop_count"].tolist())
"#;
    let run = |dir: &str| {
        Command::new("python3")
            .args(["-c", script, dir])
            .current_dir(d)
            .env("PYTHONPATH", &loader)
            .output()
            .unwrap()
    };
    let o = run("c");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let counts = Corpus::open(&d.join("c"))
        .unwrap()
        .read_props(0..3)
        .unwrap()
        .batch
        .count;
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        format!("(3, 8, 8) (3, 2, 2) (3, 300, 3) (3, 300, 4) (3, 300) {counts:?}")
    );
    // A manifest whose heightfield resolution disagrees with the file: both readers reject it,
    // naming the array.
    let path = d.join("c/manifest.json");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(
        &path,
        text.replace("\"resolution\": 8", "\"resolution\": 9"),
    )
    .unwrap();
    let o = run("c");
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("heightfield"));
    let err = Corpus::open(&d.join("c")).unwrap_err().to_string();
    assert!(err.contains("heightfield"), "{err}");
}
