//! Preset loading: every shipped preset parses, defaults match the `track` preset, and each
//! class of bad input is an error naming the key, the value and what was expected.

use trackgen::preset::{Preset, BUILTIN};

fn err(text: &str) -> String {
    Preset::parse(text, "test.toml").unwrap_err().to_string()
}

#[test]
fn every_builtin_preset_parses() {
    for (name, _) in BUILTIN {
        let p = Preset::load(name).unwrap();
        assert_eq!(p.source, *name);
        assert_eq!(p.hash().len(), 64);
        // The resolved form parses back to the same preset.
        let again = Preset::parse(p.resolved_toml(), name).unwrap();
        assert_eq!(again.resolved_toml(), p.resolved_toml());
    }
}

#[test]
fn missing_keys_take_the_track_preset_values() {
    let empty = Preset::parse("", "empty").unwrap();
    let track = Preset::load("track").unwrap();
    assert_eq!(empty.resolved_toml(), track.resolved_toml());
    assert_eq!(empty.hash(), track.hash());
}

#[test]
fn unknown_key_is_named() {
    let m = err("[track]\nhalf_widht_m = 3.0\n");
    assert!(m.contains("track.half_widht_m"), "{m}");
    assert!(m.contains("half_width_m"), "lists the known keys: {m}");
    assert!(m.contains("test.toml"), "{m}");
}

#[test]
fn wrong_type_names_key_value_and_expectation() {
    let m = err("[track]\nhalf_width_m = \"wide\"\n");
    assert!(
        m.contains("track.half_width_m") && m.contains("\"wide\""),
        "{m}"
    );
    assert!(m.contains("a number in [0.5, 50]"), "{m}");
    let m = err("[track]\nn_max = 12.5\n");
    assert!(
        m.contains("track.n_max") && m.contains("an integer in [16, 4096]"),
        "{m}"
    );
}

#[test]
fn out_of_range_names_the_range() {
    let m = err("[track]\nn_max = 8\n");
    assert!(
        m.contains("track.n_max") && m.contains("= 8") && m.contains("[16, 4096]"),
        "{m}"
    );
    let m = err("[relax]\nmargin = -1\n");
    assert!(m.contains("relax.margin") && m.contains("[0, 2]"), "{m}");
    let m = err("[polar]\nn_ctrl = 1000\n[track]\ngenerator = \"polar\"\n");
    assert!(m.contains("polar.n_ctrl") && m.contains("[4, 64]"), "{m}");
}

#[test]
fn bad_choice_lists_the_choices() {
    let m = err("[track]\ngenerator = \"spiral\"\n");
    assert!(
        m.contains("track.generator") && m.contains("\"spiral\""),
        "{m}"
    );
    assert!(m.contains("\"voronoi\""), "{m}");
    let m = err("[zprofile]\nkind = \"hilly\"\n");
    assert!(
        m.contains("zprofile.kind") && m.contains("\"random_walk\""),
        "{m}"
    );
}

#[test]
fn unknown_or_unused_section_is_named() {
    let m = err("[trak]\nn_max = 64\n");
    assert!(m.contains("[trak]"), "{m}");
    let m = err("[track]\ngenerator = \"polar\"\n[hull]\nn_points = 10\n");
    assert!(m.contains("[hull]") && m.contains("\"polar\""), "{m}");
    let m = err("track = 3\n");
    assert!(m.contains("`track` = 3") && m.contains("table"), "{m}");
}

#[test]
fn cross_field_constraints() {
    let m = err("[track]\nhalf_width_m = 10\nmin_turn_radius_m = 5\n");
    assert!(
        m.contains("track.min_turn_radius_m") && m.contains("half_width_m"),
        "{m}"
    );
    let m = err("[track]\nscale_m = 20\nmin_turn_radius_m = 12\n");
    assert!(m.contains("track.scale_m"), "{m}");
    let m = err("[track]\ngenerator = \"voronoi\"\n[voronoi]\nn_sites = 8\nn_cells = 9\n");
    assert!(m.contains("voronoi.n_cells"), "{m}");
    // Curvature sampling: the coarsest spacing is at least the finest, and relaxation is off.
    let m = err(
        "[track]\nsampling = \"curvature\"\nspacing_m = 8\nmax_spacing_m = 6\n\
                 [relax]\nmax_windows = 0\n",
    );
    assert!(
        m.contains("track.max_spacing_m` = 6") && m.contains("track.spacing_m"),
        "{m}"
    );
    let m = err("[track]\nsampling = \"curvature\"\n[relax]\nmax_windows = 3\n");
    assert!(
        m.contains("relax.max_windows` = 3") && m.contains("curvature"),
        "{m}"
    );
    let m = err("[track]\nsampling = \"adaptive\"\n");
    assert!(
        m.contains("track.sampling") && m.contains("\"curvature\""),
        "{m}"
    );
    let m = err("[track]\nsagitta_m = 0\n");
    assert!(
        m.contains("track.sagitta_m") && m.contains("[0.001, 10]"),
        "{m}"
    );
    // The generator's own points: the circuit generator only, with the same two constraints.
    let m =
        err("[track]\ngenerator = \"polar\"\nsampling = \"generator\"\n[relax]\nmax_windows = 0\n");
    assert!(
        m.contains("track.sampling") && m.contains("\"circuit\"") && m.contains("\"polar\""),
        "{m}"
    );
    let m = err(
        "[track]\ngenerator = \"circuit\"\nsampling = \"generator\"\n[relax]\nmax_windows = 1\n",
    );
    assert!(
        m.contains("relax.max_windows` = 1") && m.contains("generator"),
        "{m}"
    );
    let m = err(
        "[track]\ngenerator = \"circuit\"\nsampling = \"generator\"\nspacing_m = 8\n\
         max_spacing_m = 6\n[relax]\nmax_windows = 0\n",
    );
    assert!(
        m.contains("track.max_spacing_m` = 6") && m.contains("\"generator\""),
        "{m}"
    );
    let p = Preset::load("circuit").unwrap();
    assert_eq!(p.track.sampling, trackgen::preset::Sampling::Generator);
    // Uniform sampling ignores the curvature keys' relation (they keep their ranges).
    let p = Preset::parse("[track]\nspacing_m = 8\nmax_spacing_m = 6\n", "test").unwrap();
    assert_eq!(p.track.sampling, trackgen::preset::Sampling::Uniform);
}

#[test]
fn invalid_toml_and_missing_file() {
    let m = err("[track\n");
    assert!(m.contains("not valid TOML"), "{m}");
    let m = Preset::load("/no/such/preset.toml")
        .unwrap_err()
        .to_string();
    assert!(
        m.contains("/no/such/preset.toml") && m.contains("built-in presets"),
        "{m}"
    );
}

#[test]
fn preset_file_by_path() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mine.toml");
    std::fs::write(&path, "[track]\nhalf_width_m = 5.0\n").unwrap();
    let p = Preset::load(path.to_str().unwrap()).unwrap();
    assert_eq!(p.track.half_width_m, 5.0);
    assert_ne!(p.hash(), Preset::load("track").unwrap().hash());
}
