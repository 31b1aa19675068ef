//! The scene file: round trip, byte-identical rewrites, and a clear error (never a panic) for
//! every corrupted header field, truncation at every section boundary, a flipped checksum byte,
//! a child index out of range, and other structural damage.

use trackgen::exec::Launch;
use trackgen::scene::dag::{make_ref, ref_kind, ref_payload, KIND_BRICK, KIND_NODE};
use trackgen::scene::file::{encode, field, CHECKSUM_BYTES, HEADER_BYTES};
use trackgen::scene::{
    build_preset, cast_rays, CastOptions, RayEnvs, RayOutputs, SceneFile, ScenePool, ScenePreset,
};

fn small_pool() -> ScenePool {
    let preset = ScenePreset::load("rooms").unwrap();
    build_preset(&preset, 3, 0, 3, Some(32), &Launch::new()).unwrap()
}

/// The file's bytes with the checksum recomputed (so structural checks are reached).
fn reseal(mut bytes: Vec<u8>) -> Vec<u8> {
    let end = bytes.len() - CHECKSUM_BYTES;
    let sum = crc32fast::hash(&bytes[..end]);
    bytes[end..].copy_from_slice(&sum.to_le_bytes());
    bytes
}

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap())
}

#[track_caller]
fn rejects(bytes: &[u8], needles: &[&str]) -> String {
    let err = SceneFile::from_bytes(bytes, "test.scene")
        .expect_err("corrupted file accepted")
        .to_string();
    for n in needles {
        assert!(err.contains(n), "error {err:?} does not mention {n:?}");
    }
    assert!(err.starts_with("test.scene: "), "{err}");
    err
}

#[test]
fn round_trip_through_a_file_is_zero_copy_and_equal() {
    let pool = small_pool();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rooms.scene");
    let n = trackgen::scene::write_scene_file(&path, &pool.view()).unwrap();
    assert_eq!(n, std::fs::metadata(&path).unwrap().len());
    let file = SceneFile::open(&path).unwrap();
    let (a, b) = (pool.view(), file.view());
    assert_eq!(a.info(), b.info());
    assert_eq!(a.envs(), b.envs());
    assert_eq!(a.nodes(), b.nodes());
    assert_eq!(a.bricks(), b.bricks());
    // Zero copy: the node pool is borrowed from the mapped file's bytes.
    let bytes = std::fs::read(&path).unwrap();
    let node_offset = u64_at(&bytes, field::NODE_OFFSET) as usize;
    assert_eq!(
        bytemuck::cast_slice::<_, u8>(b.nodes()),
        &bytes[node_offset..node_offset + b.nodes().len() * 36]
    );
    // Ray casts read the file's pool like the built one.
    let o = vec![[0.0, 0.0, 1.2]; 3];
    let d = vec![[1.0, 0.3, -0.2]; 3];
    let mut out = [
        (vec![0.0f32; 3], vec![0u8; 3], vec![0u32; 3]),
        (vec![0.0f32; 3], vec![0u8; 3], vec![0u32; 3]),
    ];
    for (view, (dist, hit, steps)) in [a, b].iter().zip(out.iter_mut()) {
        cast_rays(
            view,
            RayEnvs::Blocks { rays_per_env: 1 },
            &o,
            &d,
            &CastOptions::new(30.0),
            RayOutputs {
                distance: dist,
                hit,
                steps,
            },
            &Launch::new(),
        )
        .unwrap();
    }
    assert_eq!(out[0], out[1]);
    // No temporary file is left behind.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

#[test]
fn same_inputs_bytes_eq_whatever_the_threads() {
    let preset = ScenePreset::load("forest").unwrap();
    let one = build_preset(
        &preset,
        9,
        2,
        5,
        Some(32),
        &Launch::with_threads(1).unwrap(),
    )
    .unwrap();
    let two = build_preset(
        &preset,
        9,
        2,
        5,
        Some(32),
        &Launch::with_threads(2).unwrap(),
    )
    .unwrap();
    let again = build_preset(&preset, 9, 2, 5, Some(32), &Launch::new()).unwrap();
    let bytes = encode(&one.view()).unwrap();
    assert_eq!(bytes, encode(&two.view()).unwrap());
    assert_eq!(bytes, encode(&again.view()).unwrap());
    // A different seed gives a different file.
    let other = build_preset(&preset, 10, 2, 5, Some(32), &Launch::new()).unwrap();
    assert_ne!(bytes, encode(&other.view()).unwrap());
}

#[test]
fn every_header_field_corrupted_is_named() {
    let good = encode(&small_pool().view()).unwrap();
    SceneFile::from_bytes(&good, "test.scene").unwrap();
    for &(name, at, size) in field::ALL {
        // Flip every bit of the field's first byte, and separately set the field to all ones.
        for pattern in [0, 1] {
            let mut bad = good.clone();
            if pattern == 0 {
                bad[at] ^= 0xff;
            } else {
                bad[at..at + size].fill(0xff);
            }
            let err = rejects(&bad, &[]);
            // Fields derived from others may be reported through the field they contradict.
            let named = err.contains(&format!("`{name}`"))
                || (name == "truncation_vox" && err.contains("`quant_scale`"))
                || (matches!(name, "n_envs" | "n_nodes" | "n_bricks")
                    && (err.contains("offset`") || err.contains("overflow")));
            assert!(named, "corrupting `{name}` gave {err:?}");
        }
    }
}

#[test]
fn truncation_at_every_section_boundary_is_an_error() {
    let good = encode(&small_pool().view()).unwrap();
    let boundaries = [
        0,
        7,
        HEADER_BYTES - 1,
        HEADER_BYTES,
        u64_at(&good, field::NODE_OFFSET) as usize,
        u64_at(&good, field::NODE_OFFSET) as usize + 36,
        u64_at(&good, field::BRICK_OFFSET) as usize,
        u64_at(&good, field::BRICK_OFFSET) as usize + 512,
        u64_at(&good, field::CHECKSUM_OFFSET) as usize,
        good.len() - 1,
    ];
    for cut in boundaries {
        let err = rejects(&good[..cut], &[]);
        assert!(err.contains("bytes"), "cut at {cut}: {err}");
    }
    let mut longer = good.clone();
    longer.push(0);
    rejects(&longer, &["trailing"]);
}

#[test]
fn flipped_bytes_fail_the_checksum() {
    let good = encode(&small_pool().view()).unwrap();
    let end = good.len() - CHECKSUM_BYTES;
    for at in [end, end + 3, HEADER_BYTES + 5, end - 1, good.len() / 2] {
        let mut bad = good.clone();
        bad[at] ^= 0x10;
        rejects(&bad, &["checksum"]);
    }
}

#[test]
fn structural_damage_behind_a_valid_checksum_is_named() {
    let pool = small_pool();
    let good = encode(&pool.view()).unwrap();
    let envs_at = HEADER_BYTES;
    let nodes_at = u64_at(&good, field::NODE_OFFSET) as usize;
    let bricks_at = u64_at(&good, field::BRICK_OFFSET) as usize;
    let n_nodes = pool.view().nodes().len();
    let n_bricks = pool.view().bricks().len();
    let patch = |at: usize, bytes: &[u8]| {
        let mut b = good.clone();
        b[at..at + bytes.len()].copy_from_slice(bytes);
        reseal(b)
    };
    // The first node's first child that is a node, and the first child that is a brick.
    let view = pool.view();
    let first_child = |kind| {
        view.nodes()
            .iter()
            .enumerate()
            .find_map(|(i, n)| {
                n.children
                    .iter()
                    .position(|&c| ref_kind(c) == kind)
                    .map(|c| (i, c))
            })
            .unwrap()
    };
    let (ni, nc) = first_child(KIND_NODE);
    let (bi, bc) = first_child(KIND_BRICK);
    let child_at = |i: usize, c: usize| nodes_at + 36 * i + 4 + 4 * c;
    let out_node = make_ref(KIND_NODE, n_nodes as u32).to_le_bytes();
    rejects(
        &patch(child_at(ni, nc), &out_node),
        &["out of range", &format!("node {ni} child {nc}")],
    );
    let out_brick = make_ref(KIND_BRICK, n_bricks as u32 + 7).to_le_bytes();
    rejects(
        &patch(child_at(bi, bc), &out_brick),
        &["brick index", "out of range"],
    );
    // A child pointing back at its parent (a cycle) breaks breadth-first order.
    let cycle = make_ref(KIND_NODE, ni as u32).to_le_bytes();
    rejects(&patch(child_at(ni, nc), &cycle), &["not after its parent"]);
    // A brick where a node must be.
    let wrong = make_ref(KIND_BRICK, 0).to_le_bytes();
    if view.nodes()[ni].level() > 1 {
        rejects(&patch(child_at(ni, nc), &wrong), &["below a level"]);
    }
    // Header mask that disagrees with the children.
    let header = view.nodes()[0].header ^ 0x1;
    rejects(&patch(nodes_at, &header.to_le_bytes()), &["node 0", "mask"]);
    // Reserved header bits, bad level.
    rejects(
        &patch(nodes_at, &(view.nodes()[0].header | 1 << 20).to_le_bytes()),
        &["reserved bits"],
    );
    // Env table: NaN origin, zero voxel size, root out of range.
    rejects(
        &patch(envs_at, &f32::NAN.to_le_bytes()),
        &["env 0", "origin"],
    );
    rejects(
        &patch(envs_at + 12, &0.0f32.to_le_bytes()),
        &["env 0", "voxel_size"],
    );
    rejects(
        &patch(envs_at + 16, &f32::INFINITY.to_le_bytes()),
        &["env 0", "spawn"],
    );
    let root = view.envs()[1].root;
    assert_eq!(ref_kind(root), KIND_NODE);
    let bad_root = make_ref(KIND_NODE, (n_nodes + ref_payload(root) as usize) as u32).to_le_bytes();
    rejects(
        &patch(envs_at + 32 + 28, &bad_root),
        &["env 1", "root node index"],
    );
    // A brick code of -128.
    rejects(
        &patch(bricks_at + 512 + 3, &[0x80]),
        &["brick 1 voxel 3", "-128"],
    );
    // Padding after the env table.
    let pad = envs_at + 32 * view.envs().len();
    if pad < nodes_at {
        rejects(&patch(pad, &[1]), &["padding"]);
    }
}

#[test]
fn garbage_never_panics() {
    let good = encode(&small_pool().view()).unwrap();
    let mut rng = trackgen::rng::LaneRng::new(1, 2, 3, 4);
    for i in 0..300 {
        let mut bad = good.clone();
        for _ in 0..1 + i % 8 {
            let at = rng.below(bad.len() as u32) as usize;
            bad[at] = rng.next_u32() as u8;
        }
        let bad = if i % 2 == 0 { reseal(bad) } else { bad };
        if let Ok(file) = SceneFile::from_bytes(&bad, "fuzz") {
            // Whatever passes validation is safe to trace.
            let view = file.view();
            let n = view.envs().len();
            let o = vec![[0.5, -0.5, 1.0]; n];
            let d = vec![[0.3, 1.0, -0.4]; n];
            let (mut dist, mut hit, mut steps) = (vec![0.0; n], vec![0u8; n], vec![0u32; n]);
            cast_rays(
                &view,
                RayEnvs::Blocks { rays_per_env: 1 },
                &o,
                &d,
                &CastOptions::new(50.0),
                RayOutputs {
                    distance: &mut dist,
                    hit: &mut hit,
                    steps: &mut steps,
                },
                &Launch::new(),
            )
            .unwrap();
        }
    }
    for len in 0..200 {
        let bytes: Vec<u8> = (0..len).map(|_| rng.next_u32() as u8).collect();
        assert!(SceneFile::from_bytes(&bytes, "random").is_err());
    }
}

#[test]
fn missing_file_names_the_path() {
    let err = SceneFile::open(std::path::Path::new("/nonexistent/x.scene"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("/nonexistent/x.scene"), "{err}");
}

#[test]
fn committed_fuzz_seeds_match_the_format() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/scene_loader");
    let mut valid = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let result = SceneFile::open(&path);
        if name.starts_with("valid-") {
            result.unwrap_or_else(|e| panic!("seed {name} no longer loads: {e}"));
            valid += 1;
        } else {
            assert!(result.is_err(), "corrupt seed {name} loads");
        }
    }
    assert!(valid >= 4, "only {valid} valid seeds in {}", dir.display());
}
