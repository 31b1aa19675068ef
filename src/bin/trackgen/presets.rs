//! `trackgen presets`: the built-in course and scene presets.

use trackgen::preset::{Preset, BUILTIN};
use trackgen::scene::preset::SceneKind;
use trackgen::{Error, Result};

use crate::output::emit;

#[derive(clap::Args, Debug)]
pub struct PresetsArgs {
    /// Print this built-in preset's TOML file.
    #[arg(long, value_name = "NAME")]
    pub show: Option<String>,
}

/// Runs `trackgen presets`.
pub fn presets(args: PresetsArgs) -> Result<()> {
    let scenes = trackgen::scene::preset::BUILTIN;
    match args.show {
        Some(name) => {
            // A course preset first (`gates` is both); `scene-NAME` always names the scene preset.
            let course = BUILTIN.iter().find(|(n, _)| *n == name);
            let scene_name = name.strip_prefix("scene-").unwrap_or(&name);
            let scene = scenes.iter().find(|(n, _)| *n == scene_name);
            match (name.starts_with("scene-"), course, scene) {
                (false, Some((_, text)), _) | (_, _, Some((_, text))) => emit(text),
                _ => {
                    let names: Vec<&str> = BUILTIN.iter().map(|(n, _)| *n).collect();
                    let scene_names: Vec<&str> = scenes.iter().map(|(n, _)| *n).collect();
                    Err(Error::Invalid(format!(
                        "--show {name}: no built-in preset of that name; course presets: {}; \
                         scene presets: {} (`scene-gates` for the scene preset `gates`)",
                        names.join(", "),
                        scene_names.join(", ")
                    )))
                }
            }
        }
        None => {
            let mut out = String::new();
            let width = BUILTIN
                .iter()
                .chain(scenes)
                .map(|(n, _)| n.len())
                .max()
                .unwrap_or(0)
                .max(11);
            out.push_str(&format!(
                "{:<width$} {:<6} {:<11} description\n",
                "name", "kind", "generator"
            ));
            for (name, text) in BUILTIN {
                let preset = Preset::parse(text, name)?;
                out.push_str(&format!(
                    "{name:<width$} {:<6} {:<11} {}\n",
                    "course",
                    preset.generator.name(),
                    description(text)
                ));
            }
            for (name, text) in scenes {
                let preset = trackgen::scene::ScenePreset::parse(text, name)?;
                out.push_str(&format!(
                    "{name:<width$} {:<6} {:<11} {}\n",
                    "scene",
                    match preset.kind {
                        SceneKind::Rooms(_) => "rooms",
                        SceneKind::Forest(_) => "forest",
                        SceneKind::Gates(_) => "gates",
                    },
                    description(text)
                ));
            }
            out.push_str(
                "(trackgen presets --show NAME prints one; --show scene-gates the scene preset \
                 `gates`)\n",
            );
            emit(&out)
        }
    }
}

/// The description of a preset file: its first comment paragraph after
/// `# trackgen preset `NAME`: ` (or `# trackgen scene preset `NAME`: `).
fn description(text: &str) -> String {
    let mut lines = text.lines();
    let first = lines.next().unwrap_or("");
    let mut out = first
        .split_once("`: ")
        .map_or("", |(_, d)| d.trim())
        .to_string();
    if first.starts_with("# trackgen scene preset") {
        for line in lines.map_while(|l| l.strip_prefix("# ")) {
            out.push(' ');
            out.push_str(line.trim());
        }
    }
    out
}
