//! Fuzzes the preset parsers: any text must give a validated preset or an error naming what is
//! wrong, never a panic. Each input goes to the course preset parser (`Preset::parse`, which also
//! resolves and hashes) and to the scene preset parser (`ScenePreset::parse`).

#![no_main]

use libfuzzer_sys::fuzz_target;
use trackgen::preset::Preset;
use trackgen::scene::ScenePreset;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(preset) = Preset::parse(&text, "fuzz-input") {
        let _ = preset.hash();
    }
    let _ = ScenePreset::parse(&text, "fuzz-input");
});
