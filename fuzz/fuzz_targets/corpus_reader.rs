//! Fuzzes the corpus reader: a corpus directory whose manifest or one array file holds arbitrary
//! bytes must open and read back, or fail with an error naming the file; never a panic, an abort
//! on a huge allocation, or a read outside the files.
//!
//! The input's first byte picks the file to replace (0: `manifest.json`, k: the k-th array of
//! the track corpus, in manifest order), the rest is its content. The other files are those of a
//! small valid corpus, written once per fuzzing process into a temporary directory.

#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use trackgen::corpus::{arrays_for, stored, write_corpus, Corpus, MANIFEST_FILE};
use trackgen::exec::Launch;
use trackgen::preset::Preset;

/// The valid corpus (`dir`) and a pristine copy of every file (name, bytes).
fn corpus() -> &'static (PathBuf, Vec<(String, Vec<u8>)>) {
    static CORPUS: OnceLock<(PathBuf, Vec<(String, Vec<u8>)>)> = OnceLock::new();
    CORPUS.get_or_init(|| {
        let root = std::env::temp_dir().join(format!("trackgen-fuzz-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).expect("temp dir");
        let dir = root.join("corpus");
        let preset = Preset::load("track").expect("built-in preset");
        write_corpus(&dir, &preset, 1, 0, 0..4, 4, Launch::new(), &mut |_| {}).expect("corpus");
        let files = std::iter::once(MANIFEST_FILE.to_string())
            .chain(
                stored(arrays_for(None).expect("the track corpus's arrays"))
                    .map(|(_, array)| format!("{}.npy", array.name)),
            )
            .map(|name| {
                let bytes = std::fs::read(dir.join(&name)).expect("corpus file");
                (name, bytes)
            })
            .collect();
        (dir, files)
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, content)) = data.split_first() else {
        return;
    };
    let (dir, files) = corpus();
    let (name, pristine) = &files[usize::from(pick) % files.len()];
    let path = dir.join(name);
    std::fs::write(&path, content).expect("write the fuzzed file");
    if let Ok(corpus) = Corpus::open(dir) {
        let n = corpus.manifest().n_envs().min(8);
        let _ = corpus.verify_checksums();
        let _ = corpus.read_rows(0..n);
        let _ = corpus.read_gate_rows(0..n);
    }
    std::fs::write(&path, pristine).expect("restore the file");
});
