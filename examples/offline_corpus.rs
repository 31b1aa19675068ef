//! Offline corpora: writes a track corpus and a gate-course corpus, plus a shard of each, reads
//! them back, checks that each shard holds exactly the rows of the full corpus, and prints what
//! was written and how to load it with numpy.
//!
//! Run: `cargo run --release --example offline_corpus [-- OUT_DIR [ENVS]]` (OUT_DIR must not
//! exist; default: a fresh directory under the system temp directory).

use std::path::PathBuf;

use trackgen::corpus::{read_corpus, read_gate_corpus, write_corpus, DEFAULT_CHUNK_ENVS};
use trackgen::exec::Launch;
use trackgen::preset::Preset;

fn main() -> trackgen::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let out: PathBuf = args.first().map_or_else(
        || std::env::temp_dir().join(format!("trackgen-offline-{}", std::process::id())),
        PathBuf::from,
    );
    let envs: u64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(2048);
    std::fs::create_dir(&out).map_err(|e| trackgen::Error::io(&out, e))?;
    let (seed, generation) = (42, 0);
    let shard = envs / 4..envs / 2;

    for name in ["track", "gates"] {
        let preset = Preset::load(name)?;
        let full_dir = out.join(name);
        let shard_dir = out.join(format!("{name}-shard"));
        let manifest = write_corpus(
            &full_dir,
            &preset,
            seed,
            generation,
            0..envs,
            DEFAULT_CHUNK_ENVS,
            Launch::new(),
            &mut |_| {},
        )?;
        write_corpus(
            &shard_dir,
            &preset,
            seed,
            generation,
            shard.clone(),
            DEFAULT_CHUNK_ENVS,
            Launch::new(),
            &mut |_| {},
        )?;
        let (a, b) = (shard.start as usize, shard.end as usize);
        let same = if preset.gates.is_some() {
            let (_, full) = read_gate_corpus(&full_dir)?;
            let (_, part) = read_gate_corpus(&shard_dir)?;
            full.slice(a..b).bytes_eq(&part)
        } else {
            let (_, full) = read_corpus(&full_dir)?;
            let (_, part) = read_corpus(&shard_dir)?;
            full.slice(a..b).bytes_eq(&part)
        };
        assert!(
            same,
            "the shard must hold exactly rows {a}..{b} of the full corpus"
        );
        let s = &manifest.stats;
        println!(
            "{name}: {envs} envs in {} ({} arrays, kind {}), valid {:.4}, mean {:.1} {}, mean length {:.0} m; \
             shard {a}..{b} identical to its rows",
            full_dir.display(),
            manifest.arrays.len(),
            manifest.kind.as_deref().unwrap_or("tracks"),
            s.valid_fraction,
            s.mean_count,
            if preset.gates.is_some() { "gates" } else { "points" },
            s.mean_length_m,
        );
    }
    println!(
        "\nnumpy:\n  import numpy as np\n  center = np.load(\"{0}/track/center.npy\")        # (N, N_max, 3)\n  \
         gate_pos = np.load(\"{0}/gates/gate_pos.npy\")     # (N, G, 3)\n  \
         gate_quat = np.load(\"{0}/gates/gate_quat.npy\")   # (N, G, 4), [x, y, z, w]",
        out.display()
    );
    Ok(())
}
