//! The scene file (format version 1): one file per corpus, loaded zero-copy.
//!
//! All integers and floats are little-endian. Sections start at multiples of 64 bytes; the gaps
//! are zero.
//!
//! | offset | size | field | value |
//! |---|---|---|---|
//! | 0 | 8 | `magic` | `TRKSCENE` |
//! | 8 | 4 | `version` | 1 |
//! | 12 | 4 | `flags` | bit 0 `signed` (set: brick codes are signed distances); other bits 0 |
//! | 16 | 4 | `header_bytes` | 128 |
//! | 20 | 4 | `brick_size` | 8 |
//! | 24 | 4 | `resolution` | `R`, a power of two in 8..=1024 |
//! | 28 | 4 | `levels` | `log2(R / 8)` |
//! | 32 | 4 | `truncation_vox` | `T` (f32, 2..=16) |
//! | 36 | 4 | `quant_scale` | voxels per code, `T / 127` (f32, bit-exact) |
//! | 40 | 4 | `bound_unit` | voxels per unit of a uniform bound, 0.5 (f32) |
//! | 44 | 4 | `n_envs` | ≥ 1 |
//! | 48 | 4 | `n_nodes` | |
//! | 52 | 4 | `n_bricks` | |
//! | 56 | 8 | `env_offset` | 128 |
//! | 64 | 8 | `node_offset` | `env_offset + 32·n_envs`, rounded up to 64 |
//! | 72 | 8 | `brick_offset` | `node_offset + 36·n_nodes`, rounded up to 64 |
//! | 80 | 8 | `checksum_offset` | `brick_offset + 512·n_bricks` |
//! | 88 | 40 | reserved | zero |
//!
//! Then the env table ([`EnvEntry`], 32 bytes each), the node pool ([`Node`], 36 bytes each,
//! breadth first), the brick pool (512 `i8` each) and, at `checksum_offset`, the CRC-32 (IEEE) of
//! every byte before it, as a `u32`; the file ends there.
//!
//! [`SceneFile::open`] maps the file and validates it: the header fields above, the file length,
//! the checksum, then every env (finite origin, spawn and voxel size > 0; root of the right
//! kind, level and range), every node (reserved header bits, level, mask matching the children,
//! child indices in range and of the next level down, after their parent), and every brick code
//! (−127..=127). Each failure is an [`Error::Format`] naming the field, the index and the value.
//! After that the sections are borrowed in place (`bytemuck` casts, no copy), and every traversal
//! of a validated pool is bounded by its levels.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::dag::{
    ref_kind, ref_payload, Brick, EnvEntry, Node, PoolInfo, PoolView, BOUND_UNIT_VOX, BRICK,
    KIND_BRICK, KIND_NODE,
};
use crate::atomic::write_atomic;
use crate::{Error, Result};

/// The file's first eight bytes.
pub const MAGIC: &[u8; 8] = b"TRKSCENE";
/// The format version this crate writes and reads.
pub const VERSION: u32 = 1;
/// Flag bit: brick codes are signed distances.
pub const FLAG_SIGNED: u32 = 1;
/// Bytes of the header.
pub const HEADER_BYTES: usize = 128;
/// Bytes of the trailing checksum.
pub const CHECKSUM_BYTES: usize = 4;
const ALIGN: u64 = 64;
const ENV_BYTES: u64 = std::mem::size_of::<EnvEntry>() as u64;
const NODE_BYTES: u64 = std::mem::size_of::<Node>() as u64;
const BRICK_BYTES: u64 = std::mem::size_of::<Brick>() as u64;

/// Byte offsets of the header fields (for tests and tools that patch files).
pub mod field {
    /// `magic`.
    pub const MAGIC: usize = 0;
    /// `version`.
    pub const VERSION: usize = 8;
    /// `flags`.
    pub const FLAGS: usize = 12;
    /// `header_bytes`.
    pub const HEADER_BYTES: usize = 16;
    /// `brick_size`.
    pub const BRICK_SIZE: usize = 20;
    /// `resolution`.
    pub const RESOLUTION: usize = 24;
    /// `levels`.
    pub const LEVELS: usize = 28;
    /// `truncation_vox`.
    pub const TRUNCATION: usize = 32;
    /// `quant_scale`.
    pub const QUANT_SCALE: usize = 36;
    /// `bound_unit`.
    pub const BOUND_UNIT: usize = 40;
    /// `n_envs`.
    pub const N_ENVS: usize = 44;
    /// `n_nodes`.
    pub const N_NODES: usize = 48;
    /// `n_bricks`.
    pub const N_BRICKS: usize = 52;
    /// `env_offset`.
    pub const ENV_OFFSET: usize = 56;
    /// `node_offset`.
    pub const NODE_OFFSET: usize = 64;
    /// `brick_offset`.
    pub const BRICK_OFFSET: usize = 72;
    /// `checksum_offset`.
    pub const CHECKSUM_OFFSET: usize = 80;
    /// The reserved bytes.
    pub const RESERVED: usize = 88;
    /// `(name, offset, size)` of every header field, in order.
    pub const ALL: &[(&str, usize, usize)] = &[
        ("magic", MAGIC, 8),
        ("version", VERSION, 4),
        ("flags", FLAGS, 4),
        ("header_bytes", HEADER_BYTES, 4),
        ("brick_size", BRICK_SIZE, 4),
        ("resolution", RESOLUTION, 4),
        ("levels", LEVELS, 4),
        ("truncation_vox", TRUNCATION, 4),
        ("quant_scale", QUANT_SCALE, 4),
        ("bound_unit", BOUND_UNIT, 4),
        ("n_envs", N_ENVS, 4),
        ("n_nodes", N_NODES, 4),
        ("n_bricks", N_BRICKS, 4),
        ("env_offset", ENV_OFFSET, 8),
        ("node_offset", NODE_OFFSET, 8),
        ("brick_offset", BRICK_OFFSET, 8),
        ("checksum_offset", CHECKSUM_OFFSET, 8),
        ("reserved", RESERVED, 40),
    ];
}

fn align_up(x: u64) -> u64 {
    x.div_ceil(ALIGN) * ALIGN
}

/// Where each section lies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Layout {
    env_offset: u64,
    node_offset: u64,
    brick_offset: u64,
    checksum_offset: u64,
}

impl Layout {
    /// The layout of a pool with these counts, or `None` on overflow.
    fn of(n_envs: u64, n_nodes: u64, n_bricks: u64) -> Option<Self> {
        let env_offset = HEADER_BYTES as u64;
        let node_offset = align_up(env_offset.checked_add(n_envs.checked_mul(ENV_BYTES)?)?);
        let brick_offset = align_up(node_offset.checked_add(n_nodes.checked_mul(NODE_BYTES)?)?);
        let checksum_offset = brick_offset.checked_add(n_bricks.checked_mul(BRICK_BYTES)?)?;
        checksum_offset.checked_add(CHECKSUM_BYTES as u64)?;
        Some(Self {
            env_offset,
            node_offset,
            brick_offset,
            checksum_offset,
        })
    }

    fn file_len(&self) -> u64 {
        self.checksum_offset + CHECKSUM_BYTES as u64
    }
}

fn header_bytes(view: &PoolView, layout: &Layout) -> [u8; HEADER_BYTES] {
    let mut h = [0u8; HEADER_BYTES];
    let info = view.info;
    let mut put = |at: usize, bytes: &[u8]| h[at..at + bytes.len()].copy_from_slice(bytes);
    put(field::MAGIC, MAGIC);
    put(field::VERSION, &VERSION.to_le_bytes());
    put(field::FLAGS, &FLAG_SIGNED.to_le_bytes());
    put(field::HEADER_BYTES, &(HEADER_BYTES as u32).to_le_bytes());
    put(field::BRICK_SIZE, &BRICK.to_le_bytes());
    put(field::RESOLUTION, &info.resolution.to_le_bytes());
    put(field::LEVELS, &info.levels.to_le_bytes());
    put(field::TRUNCATION, &info.truncation_vox.to_le_bytes());
    put(field::QUANT_SCALE, &info.quant_step().to_le_bytes());
    put(field::BOUND_UNIT, &BOUND_UNIT_VOX.to_le_bytes());
    put(field::N_ENVS, &(view.envs.len() as u32).to_le_bytes());
    put(field::N_NODES, &(view.nodes.len() as u32).to_le_bytes());
    put(field::N_BRICKS, &(view.bricks.len() as u32).to_le_bytes());
    put(field::ENV_OFFSET, &layout.env_offset.to_le_bytes());
    put(field::NODE_OFFSET, &layout.node_offset.to_le_bytes());
    put(field::BRICK_OFFSET, &layout.brick_offset.to_le_bytes());
    put(
        field::CHECKSUM_OFFSET,
        &layout.checksum_offset.to_le_bytes(),
    );
    h
}

/// Streams the file's bytes into `out`; returns the bytes written.
fn write_to(view: &PoolView, out: &mut impl Write) -> std::io::Result<u64> {
    if cfg!(target_endian = "big") {
        return Err(std::io::Error::other(
            "scene files are little-endian; this build targets a big-endian machine",
        ));
    }
    let layout = Layout::of(
        view.envs.len() as u64,
        view.nodes.len() as u64,
        view.bricks.len() as u64,
    )
    .ok_or_else(|| std::io::Error::other("pool too large for a scene file"))?;
    let mut crc = crc32fast::Hasher::new();
    let mut written = 0u64;
    let mut put = |bytes: &[u8], out: &mut dyn Write| -> std::io::Result<()> {
        crc.update(bytes);
        written += bytes.len() as u64;
        out.write_all(bytes)
    };
    let zeros = [0u8; ALIGN as usize];
    put(&header_bytes(view, &layout), out)?;
    put(bytemuck::cast_slice(view.envs), out)?;
    put(
        &zeros[..(layout.node_offset - layout.env_offset - ENV_BYTES * view.envs.len() as u64)
            as usize],
        out,
    )?;
    put(bytemuck::cast_slice(view.nodes), out)?;
    put(
        &zeros[..(layout.brick_offset - layout.node_offset - NODE_BYTES * view.nodes.len() as u64)
            as usize],
        out,
    )?;
    for chunk in view.bricks.chunks(1024) {
        put(bytemuck::cast_slice(chunk), out)?;
    }
    let sum = crc.finalize();
    out.write_all(&sum.to_le_bytes())?;
    Ok(written + CHECKSUM_BYTES as u64)
}

/// The file's bytes, in memory.
pub fn encode(view: &PoolView) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    write_to(view, &mut out).map_err(|e| Error::io("<memory>", e))?;
    Ok(out)
}

/// Writes `view` to `path` atomically ([`crate::atomic::write_atomic`]); returns the bytes written.
pub fn write_scene_file(path: &Path, view: &PoolView) -> Result<u64> {
    write_atomic(path, |out| write_to(view, out))
}

/// The bytes behind a loaded file.
enum Backing {
    Mapped(memmap2::Mmap),
    /// An owned copy in 8-byte words (so the casts are aligned), and the byte length.
    Owned(Vec<u64>, usize),
}

/// A validated scene file, borrowed in place.
pub struct SceneFile {
    path: PathBuf,
    backing: Backing,
    info: PoolInfo,
    layout: Layout,
    n_envs: usize,
    n_nodes: usize,
    n_bricks: usize,
}

impl std::fmt::Debug for SceneFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SceneFile")
            .field("path", &self.path)
            .field("info", &self.info)
            .field("n_envs", &self.n_envs)
            .field("n_nodes", &self.n_nodes)
            .field("n_bricks", &self.n_bricks)
            .finish()
    }
}

impl SceneFile {
    /// Maps and validates the scene file at `path`.
    ///
    /// The file must not be changed by anyone while it is mapped (as with every memory map);
    /// trackgen itself only ever replaces scene files by renaming a new one over them.
    pub fn open(path: &Path) -> Result<Self> {
        let file = File::open(path).map_err(|e| Error::input(path, e))?;
        if file.metadata().is_ok_and(|m| m.is_dir()) {
            return Err(Error::Format {
                path: path.to_path_buf(),
                message: "is a directory: expected a scene file".into(),
            });
        }
        // SAFETY: the map is read-only and private to this process; the documented contract is
        // that the file is not modified while mapped (writers rename a new file over it, which
        // leaves this mapping's inode untouched). Every byte read through it is validated first.
        #[allow(unsafe_code)] // The one unsafe call of the scene layer: mapping the file.
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(|e| Error::io(path, e))?;
        Self::validate(path.to_path_buf(), Backing::Mapped(map))
    }

    /// Validates a scene file held in memory; `name` names it in errors.
    pub fn from_bytes(bytes: &[u8], name: &str) -> Result<Self> {
        let mut words = vec![0u64; bytes.len().div_ceil(8)];
        bytemuck::cast_slice_mut::<u64, u8>(&mut words)[..bytes.len()].copy_from_slice(bytes);
        Self::validate(PathBuf::from(name), Backing::Owned(words, bytes.len()))
    }

    fn bytes_of(backing: &Backing) -> &[u8] {
        match backing {
            Backing::Mapped(m) => m,
            Backing::Owned(w, n) => &bytemuck::cast_slice(w)[..*n],
        }
    }

    fn bytes(&self) -> &[u8] {
        Self::bytes_of(&self.backing)
    }

    /// The file's path (or the name given to [`from_bytes`](Self::from_bytes)).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The validated pool, borrowed from the file's bytes.
    pub fn view(&self) -> PoolView<'_> {
        let bytes = self.bytes();
        let section = |at: u64, len: usize| &bytes[at as usize..at as usize + len];
        PoolView {
            info: self.info,
            envs: bytemuck::cast_slice(section(self.layout.env_offset, self.n_envs * 32)),
            nodes: bytemuck::cast_slice(section(self.layout.node_offset, self.n_nodes * 36)),
            bricks: bytemuck::cast_slice(section(self.layout.brick_offset, self.n_bricks * 512)),
        }
    }

    fn validate(path: PathBuf, backing: Backing) -> Result<Self> {
        let bad = |message: String| Error::Format {
            path: path.clone(),
            message,
        };
        if cfg!(target_endian = "big") {
            return Err(bad(
                "scene files are little-endian; this build targets a big-endian machine".into(),
            ));
        }
        let bytes = Self::bytes_of(&backing);
        if bytes.len() < HEADER_BYTES {
            return Err(bad(format!(
                "file is {} bytes, shorter than the {HEADER_BYTES}-byte header (truncated?)",
                bytes.len()
            )));
        }
        let u32_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4"));
        let u64_at = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8"));
        let f32_at = |at: usize| f32::from_le_bytes(bytes[at..at + 4].try_into().expect("4"));
        if &bytes[..8] != MAGIC {
            return Err(bad(format!(
                "header field `magic` = {:?}: expected {:?} (not a trackgen scene file)",
                String::from_utf8_lossy(&bytes[..8]),
                String::from_utf8_lossy(MAGIC)
            )));
        }
        let expect_u32 = |name: &str, at: usize, want: u32| {
            let got = u32_at(at);
            if got == want {
                Ok(())
            } else {
                Err(bad(format!(
                    "header field `{name}` = {got}: expected {want}"
                )))
            }
        };
        expect_u32("version", field::VERSION, VERSION)?;
        expect_u32("flags", field::FLAGS, FLAG_SIGNED)?;
        expect_u32("header_bytes", field::HEADER_BYTES, HEADER_BYTES as u32)?;
        expect_u32("brick_size", field::BRICK_SIZE, BRICK)?;
        let resolution = u32_at(field::RESOLUTION);
        let truncation = f32_at(field::TRUNCATION);
        let info = PoolInfo::new(resolution, truncation).map_err(|e| {
            let which = if resolution.is_power_of_two()
                && (BRICK..=super::dag::MAX_RESOLUTION).contains(&resolution)
            {
                "truncation_vox"
            } else {
                "resolution"
            };
            bad(format!("header field `{which}`: {e}"))
        })?;
        expect_u32("levels", field::LEVELS, info.levels)?;
        let scale = f32_at(field::QUANT_SCALE);
        if scale.to_bits() != info.quant_step().to_bits() {
            return Err(bad(format!(
                "header field `quant_scale` = {scale}: expected truncation_vox / 127 = {}",
                info.quant_step()
            )));
        }
        let unit = f32_at(field::BOUND_UNIT);
        if unit.to_bits() != BOUND_UNIT_VOX.to_bits() {
            return Err(bad(format!(
                "header field `bound_unit` = {unit}: expected {BOUND_UNIT_VOX}"
            )));
        }
        let n_envs = u32_at(field::N_ENVS);
        let n_nodes = u32_at(field::N_NODES);
        let n_bricks = u32_at(field::N_BRICKS);
        if n_envs == 0 {
            return Err(bad("header field `n_envs` = 0: expected at least 1".into()));
        }
        let cap = super::dag::PAYLOAD_MAX;
        for (name, n) in [("n_nodes", n_nodes), ("n_bricks", n_bricks)] {
            if n > cap {
                return Err(bad(format!(
                    "header field `{name}` = {n}: expected at most {cap}"
                )));
            }
        }
        let layout = Layout::of(n_envs.into(), n_nodes.into(), n_bricks.into())
            .ok_or_else(|| bad("header counts overflow the file size".into()))?;
        for (name, at, want) in [
            ("env_offset", field::ENV_OFFSET, layout.env_offset),
            ("node_offset", field::NODE_OFFSET, layout.node_offset),
            ("brick_offset", field::BRICK_OFFSET, layout.brick_offset),
            (
                "checksum_offset",
                field::CHECKSUM_OFFSET,
                layout.checksum_offset,
            ),
        ] {
            let got = u64_at(at);
            if got != want {
                return Err(bad(format!(
                    "header field `{name}` = {got}: expected {want} (from n_envs = {n_envs}, \
                     n_nodes = {n_nodes}, n_bricks = {n_bricks})"
                )));
            }
        }
        if let Some(i) = bytes[field::RESERVED..HEADER_BYTES]
            .iter()
            .position(|&b| b != 0)
        {
            return Err(bad(format!(
                "header field `reserved` has byte {} = {}: expected all zero",
                field::RESERVED + i,
                bytes[field::RESERVED + i]
            )));
        }
        let len = bytes.len() as u64;
        if len != layout.file_len() {
            let section = if len < layout.node_offset {
                "the env table"
            } else if len < layout.brick_offset {
                "the node pool"
            } else if len < layout.checksum_offset {
                "the brick pool"
            } else if len < layout.file_len() {
                "the checksum"
            } else {
                "nothing (trailing bytes)"
            };
            return Err(bad(format!(
                "file is {len} bytes, the header describes {} (truncated or extended: the file \
                 ends in {section})",
                layout.file_len()
            )));
        }
        let body = &bytes[..layout.checksum_offset as usize];
        let stored = u32_at(layout.checksum_offset as usize);
        let actual = crc32fast::hash(body);
        if stored != actual {
            return Err(bad(format!(
                "checksum mismatch: stored CRC-32 {stored:08x}, computed {actual:08x} (the file \
                 is corrupted)"
            )));
        }
        for (name, from, to) in [
            (
                "env table",
                layout.env_offset + ENV_BYTES * u64::from(n_envs),
                layout.node_offset,
            ),
            (
                "node pool",
                layout.node_offset + NODE_BYTES * u64::from(n_nodes),
                layout.brick_offset,
            ),
        ] {
            if bytes[from as usize..to as usize].iter().any(|&b| b != 0) {
                return Err(bad(format!(
                    "padding after the {name} (bytes {from}..{to}) is not zero"
                )));
            }
        }
        let file = Self {
            path: path.clone(),
            backing,
            info,
            layout,
            n_envs: n_envs as usize,
            n_nodes: n_nodes as usize,
            n_bricks: n_bricks as usize,
        };
        check_pool(&file.view()).map_err(bad)?;
        Ok(file)
    }
}

/// Checks every env, node and brick of a pool; the message names the first problem.
fn check_pool(view: &PoolView) -> std::result::Result<(), String> {
    let (n_nodes, n_bricks) = (view.nodes.len(), view.bricks.len());
    let levels = view.info.levels;
    for (e, env) in view.envs.iter().enumerate() {
        let finite = |v: &[f32]| v.iter().all(|x| x.is_finite());
        if !finite(&env.origin) {
            return Err(format!("env {e}: origin {:?} is not finite", env.origin));
        }
        if !(env.voxel_size.is_finite() && env.voxel_size > 0.0) {
            return Err(format!(
                "env {e}: voxel_size = {}: expected a finite number > 0",
                env.voxel_size
            ));
        }
        if !finite(&env.spawn) {
            return Err(format!("env {e}: spawn {:?} is not finite", env.spawn));
        }
        let extent = env.voxel_size * view.info.resolution as f32;
        if !env.origin.iter().all(|o| (o + extent).is_finite()) {
            return Err(format!(
                "env {e}: domain {:?} + {extent} overflows f32",
                env.origin
            ));
        }
        let r = env.root;
        match ref_kind(r) {
            KIND_NODE => {
                let i = ref_payload(r) as usize;
                if i >= n_nodes {
                    return Err(format!(
                        "env {e}: root node index {i} out of range (the pool has {n_nodes} nodes)"
                    ));
                }
                if view.nodes[i].level() != levels {
                    return Err(format!(
                        "env {e}: root node {i} has level {}: expected {levels}",
                        view.nodes[i].level()
                    ));
                }
            }
            KIND_BRICK => {
                let i = ref_payload(r) as usize;
                if levels != 0 {
                    return Err(format!(
                        "env {e}: root is brick {i}, but the tree has {levels} node levels"
                    ));
                }
                if i >= n_bricks {
                    return Err(format!(
                        "env {e}: root brick index {i} out of range (the pool has {n_bricks} bricks)"
                    ));
                }
            }
            _ => {}
        }
    }
    for (i, node) in view.nodes.iter().enumerate() {
        if node.header >> 16 != 0 {
            return Err(format!(
                "node {i}: header {:#x} has reserved bits set",
                node.header
            ));
        }
        let level = node.level();
        if level == 0 || level > levels {
            return Err(format!("node {i}: level {level}: expected 1..={levels}"));
        }
        if Node::new(level, node.children).mask() != node.mask() {
            return Err(format!(
                "node {i}: child mask {:#010b} does not match its children's kinds",
                node.mask()
            ));
        }
        for (c, &r) in node.children.iter().enumerate() {
            let j = ref_payload(r) as usize;
            match ref_kind(r) {
                KIND_NODE => {
                    if j >= n_nodes {
                        return Err(format!(
                            "node {i} child {c}: node index {j} out of range (the pool has \
                             {n_nodes} nodes)"
                        ));
                    }
                    if j <= i {
                        return Err(format!(
                            "node {i} child {c}: node index {j} is not after its parent \
                             (breadth-first order)"
                        ));
                    }
                    if view.nodes[j].level() + 1 != level {
                        return Err(format!(
                            "node {i} child {c}: node {j} has level {}: expected {}",
                            view.nodes[j].level(),
                            level - 1
                        ));
                    }
                }
                KIND_BRICK => {
                    if level != 1 {
                        return Err(format!(
                            "node {i} child {c}: a brick below a level-{level} node (bricks sit \
                             below level 1)"
                        ));
                    }
                    if j >= n_bricks {
                        return Err(format!(
                            "node {i} child {c}: brick index {j} out of range (the pool has \
                             {n_bricks} bricks)"
                        ));
                    }
                }
                _ => {}
            }
        }
    }
    for (i, b) in view.bricks.iter().enumerate() {
        if let Some(v) = b.iter().position(|&c| c == i8::MIN) {
            return Err(format!(
                "brick {i} voxel {v}: code -128 is outside -127..=127"
            ));
        }
    }
    Ok(())
}
