//! The primitives JSON schema (`trackgen-scene-primitives`, documented in
//! [`primitive`](super::primitive)): export of env scenes and import back.

use serde::{Deserialize, Serialize};

use super::primitive::{EnvScene, Primitive};
use crate::geom::Vec3;
use crate::{Error, Result};

/// The schema version [`export_json`] writes and [`import_json`] reads.
pub const VERSION: u64 = 2;

/// One env of the JSON export.
#[derive(Serialize)]
struct JsonEnv<'a> {
    env: u64,
    origin: Vec3,
    size_m: f32,
    spawn: Vec3,
    primitives: &'a [Primitive],
}

/// One env of a JSON document being read back.
#[derive(Deserialize)]
struct JsonEnvOwned {
    env: u64,
    origin: Vec3,
    size_m: f32,
    spawn: Vec3,
    primitives: Vec<Primitive>,
}

/// The JSON document of the module's schema for `scenes` (env `first_env + i` is `scenes[i]`).
pub fn export_json(
    scenes: &[EnvScene],
    first_env: u64,
    preset: &str,
    preset_sha256: &str,
    seed: u64,
    generation: u32,
) -> String {
    let envs: Vec<JsonEnv> = scenes
        .iter()
        .enumerate()
        .map(|(i, s)| JsonEnv {
            env: first_env + i as u64,
            origin: s.origin,
            size_m: s.size_m,
            spawn: s.spawn,
            primitives: &s.primitives,
        })
        .collect();
    let doc = serde_json::json!({
        "format": "trackgen-scene-primitives",
        "version": VERSION,
        "preset": preset,
        "preset_sha256": preset_sha256,
        "seed": seed,
        "generation": generation,
        "envs": envs,
    });
    serde_json::to_string_pretty(&doc).expect("scene JSON serialises")
}

/// Parses a document written by [`export_json`] back into `(env, scene)` pairs.
pub fn import_json(text: &str) -> Result<Vec<(u64, EnvScene)>> {
    let bad = |m: String| Error::Invalid(format!("primitives JSON: {m}"));
    let doc: serde_json::Value =
        serde_json::from_str(text).map_err(|e| bad(format!("not JSON: {e}")))?;
    if doc.get("format").and_then(|f| f.as_str()) != Some("trackgen-scene-primitives") {
        return Err(bad("`format` is not \"trackgen-scene-primitives\"".into()));
    }
    match doc.get("version").and_then(|v| v.as_u64()) {
        Some(VERSION) => {}
        Some(1) => {
            return Err(bad(format!(
                "`version` = 1: this reader takes version {VERSION} (rotations [x, y, z, w], \
                 gates flown along local x); regenerate the file with `trackgen scene`"
            )))
        }
        other => return Err(bad(format!("`version` = {other:?}: expected {VERSION}"))),
    }
    let envs = doc
        .get("envs")
        .cloned()
        .ok_or_else(|| bad("no `envs` array".into()))?;
    let envs: Vec<JsonEnvOwned> =
        serde_json::from_value(envs).map_err(|e| bad(format!("`envs`: {e}")))?;
    Ok(envs
        .into_iter()
        .map(|e| {
            (
                e.env,
                EnvScene {
                    origin: e.origin,
                    size_m: e.size_m,
                    spawn: e.spawn,
                    primitives: e.primitives,
                },
            )
        })
        .collect())
}
