//! The node pool: an octree DAG over 8³ int8 bricks, shared by every env of a corpus.
//!
//! # Layout
//!
//! An env's domain is a cube of `R = 8·2^L` voxels (`L` = [`PoolInfo::levels`]). A *node* at
//! level `k ≥ 1` covers `8·2^k` voxels per axis and has eight children, child `i` covering the
//! octant `(i & 1, (i >> 1) & 1, (i >> 2) & 1)` (x, y, z; 1 = upper half). Each child is a 32-bit
//! *reference*: the top two bits are its kind, the low 30 bits its payload.
//!
//! | kind | payload | meaning |
//! |---|---|---|
//! | [`KIND_NODE`] | index into the node pool | a node of level `k − 1` |
//! | [`KIND_BRICK`] | index into the brick pool | a leaf of 8³ samples (only below level 1) |
//! | [`KIND_OUTSIDE`] | bound in [`BOUND_UNIT_VOX`] | uniform: every point of the box is outside, at least `bound` voxels from any surface |
//! | [`KIND_INSIDE`] | bound in [`BOUND_UNIT_VOX`] | uniform: every point of the box is inside, at least `bound` voxels deep |
//!
//! A [`Node`] stores its level and an 8-bit child mask (bit `i` set ⇔ child `i` is a node or a
//! brick) beside the eight references, so a loader can check a node against its children.
//! A brick holds the signed distance at its 512 voxel centres (`x + 8y + 64z`) as `i8` codes:
//! distance in voxels = `code · T / 127`, where `T` is the truncation in voxels; codes saturate
//! at ±127 (true distance beyond ±T). Rounding keeps the sign: a code is ≥ 0 exactly where the
//! sampled distance is ≥ 0. Bounds and codes are in *voxels*, so identical geometry at different
//! scales shares bricks.
//!
//! # Sharing and order
//!
//! Every node and brick is stored once: [`PoolBuilder`] hashes each one's content (a fixed 64-bit
//! hash, so the pool is the same on every machine) and, on a hash match, compares the bytes
//! (structural equality) before sharing, so a collision can only cost a duplicate, never a wrong
//! node. Identical sub-regions of different envs (an empty room corner, a wall section, a floor)
//! therefore share storage; each env keeps its own root in the env table (Kämpe, Sintorn and
//! Assarsson, *High Resolution Sparse Voxel DAGs*, SIGGRAPH 2013, for the idea of merging
//! identical subtrees of an octree into a DAG). After all envs are added the pool is renumbered
//! breadth first from the roots (env order), so nodes of one level are contiguous and a child's
//! index is always larger than its parent's; bricks are numbered in the order that walk meets them.

use std::collections::HashMap;

use bytemuck::{Pod, Zeroable};

use crate::rng::mix64;

/// Voxels per brick side.
pub const BRICK: u32 = 8;
/// Samples per brick.
pub const BRICK_VOXELS: usize = 512;
/// A leaf: 8³ quantised signed distances, index `x + 8y + 64z`.
pub type Brick = [i8; BRICK_VOXELS];
/// The largest code magnitude: ±127 means ±T voxels (or beyond).
pub const CODE_MAX: i8 = 127;

/// Reference kind: an inner node.
pub const KIND_NODE: u32 = 0;
/// Reference kind: a brick.
pub const KIND_BRICK: u32 = 1;
/// Reference kind: a uniform box that is entirely outside (free space).
pub const KIND_OUTSIDE: u32 = 2;
/// Reference kind: a uniform box that is entirely inside a solid.
pub const KIND_INSIDE: u32 = 3;
/// Bits of a reference's payload.
pub const PAYLOAD_BITS: u32 = 30;
/// The largest payload.
pub const PAYLOAD_MAX: u32 = (1 << PAYLOAD_BITS) - 1;
/// The unit of a uniform reference's distance bound, voxels.
pub const BOUND_UNIT_VOX: f32 = 0.5;

/// The kind of reference `r`.
#[inline(always)]
pub const fn ref_kind(r: u32) -> u32 {
    r >> PAYLOAD_BITS
}

/// The payload of reference `r`.
#[inline(always)]
pub const fn ref_payload(r: u32) -> u32 {
    r & PAYLOAD_MAX
}

/// A reference of `kind` with `payload` (masked to 30 bits).
#[inline(always)]
pub const fn make_ref(kind: u32, payload: u32) -> u32 {
    (kind << PAYLOAD_BITS) | (payload & PAYLOAD_MAX)
}

/// A uniform reference whose box lies at least `bound_vox` voxels from any surface (rounded down
/// to [`BOUND_UNIT_VOX`]; negative bounds become 0).
pub fn uniform_ref(inside: bool, bound_vox: f32) -> u32 {
    let units = (bound_vox / BOUND_UNIT_VOX)
        .max(0.0)
        .min(PAYLOAD_MAX as f32) as u32;
    make_ref(if inside { KIND_INSIDE } else { KIND_OUTSIDE }, units)
}

/// The distance bound of a uniform reference, voxels.
#[inline(always)]
pub fn uniform_bound(r: u32) -> f32 {
    ref_payload(r) as f32 * BOUND_UNIT_VOX
}

/// An inner node: `header` = child mask (bits 0–7) | level (bits 8–15); then eight references.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Pod, Zeroable)]
pub struct Node {
    /// Child mask (bit `i`: child `i` is a node or brick) in bits 0–7, level in bits 8–15.
    pub header: u32,
    /// The eight child references, octant order.
    pub children: [u32; 8],
}

impl Node {
    /// A node of `level` with `children`; the mask is derived from the children's kinds.
    pub fn new(level: u32, children: [u32; 8]) -> Self {
        let mut mask = 0u32;
        for (i, &c) in children.iter().enumerate() {
            if ref_kind(c) <= KIND_BRICK {
                mask |= 1 << i;
            }
        }
        Self {
            header: mask | (level << 8),
            children,
        }
    }

    /// The child mask.
    pub fn mask(&self) -> u32 {
        self.header & 0xff
    }

    /// The level (1 = children are bricks or uniform).
    pub fn level(&self) -> u32 {
        (self.header >> 8) & 0xff
    }
}

/// One env of the table: its domain, a free spawn point and its root reference.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
pub struct EnvEntry {
    /// Min corner of the cubic domain, metres.
    pub origin: [f32; 3],
    /// Voxel side, metres (domain side = `R · voxel_size`).
    pub voxel_size: f32,
    /// A point in free space, metres.
    pub spawn: [f32; 3],
    /// The root reference (a node of level `L`, a brick when `L = 0`, or uniform).
    pub root: u32,
}

/// The parameters every env of a pool shares.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PoolInfo {
    /// Voxels per domain side (a power of two, 8..=[`MAX_RESOLUTION`]).
    pub resolution: u32,
    /// Node levels above the bricks: `R = 8 · 2^levels`.
    pub levels: u32,
    /// Truncation `T`, voxels: brick codes ±127 mean ±T.
    pub truncation_vox: f32,
}

/// The largest supported resolution.
pub const MAX_RESOLUTION: u32 = 1024;
/// The smallest truncation, voxels (smaller bands leave bricks too little to step on).
pub const MIN_TRUNCATION_VOX: f32 = 2.0;
/// The largest truncation, voxels.
pub const MAX_TRUNCATION_VOX: f32 = 16.0;

impl PoolInfo {
    /// Checks `resolution` (power of two in 8..=1024) and `truncation_vox` (2..=16).
    pub fn new(resolution: u32, truncation_vox: f32) -> crate::Result<Self> {
        if !(resolution.is_power_of_two() && (BRICK..=MAX_RESOLUTION).contains(&resolution)) {
            return Err(crate::Error::Invalid(format!(
                "resolution {resolution}: expected a power of two in [{BRICK}, {MAX_RESOLUTION}]"
            )));
        }
        if !(MIN_TRUNCATION_VOX..=MAX_TRUNCATION_VOX).contains(&truncation_vox) {
            return Err(crate::Error::Invalid(format!(
                "truncation {truncation_vox} voxels: expected a number in \
                 [{MIN_TRUNCATION_VOX}, {MAX_TRUNCATION_VOX}]"
            )));
        }
        Ok(Self {
            resolution,
            levels: (resolution / BRICK).trailing_zeros(),
            truncation_vox,
        })
    }

    /// Voxels per code step: `T / 127`.
    pub fn quant_step(&self) -> f32 {
        self.truncation_vox / CODE_MAX as f32
    }

    /// The code of a distance of `v` voxels: nearest step, sign kept (`v < 0` gives a code ≤ −1),
    /// saturated at ±127.
    #[inline]
    pub fn encode(&self, v: f32) -> i8 {
        let s = v / self.quant_step();
        if s >= 0.0 {
            (s + 0.5).min(CODE_MAX as f32) as i8
        } else if s < 0.0 {
            -((-s + 0.5).clamp(1.0, CODE_MAX as f32) as i8)
        } else {
            // NaN: no information; the saturated outside value keeps it harmless.
            CODE_MAX
        }
    }

    /// The distance in voxels of `code`.
    #[inline(always)]
    pub fn decode(&self, code: i8) -> f32 {
        code as f32 * self.quant_step()
    }
}

/// A borrowed pool (from a [`ScenePool`] or a loaded file): what ray casts read.
#[derive(Clone, Copy, Debug)]
pub struct PoolView<'a> {
    pub(crate) info: PoolInfo,
    pub(crate) envs: &'a [EnvEntry],
    pub(crate) nodes: &'a [Node],
    pub(crate) bricks: &'a [Brick],
}

impl<'a> PoolView<'a> {
    /// The shared parameters.
    pub fn info(&self) -> PoolInfo {
        self.info
    }

    /// The env table.
    pub fn envs(&self) -> &'a [EnvEntry] {
        self.envs
    }

    /// The node pool, breadth-first.
    pub fn nodes(&self) -> &'a [Node] {
        self.nodes
    }

    /// The brick pool.
    pub fn bricks(&self) -> &'a [Brick] {
        self.bricks
    }

    /// Bytes of the node and brick pools and the env table.
    pub fn bytes(&self) -> usize {
        std::mem::size_of_val(self.envs)
            + std::mem::size_of_val(self.nodes)
            + std::mem::size_of_val(self.bricks)
    }

    /// The leaf containing voxel `v` of env `env`'s tree: `(reference, min corner, side)` in
    /// voxels. `v` must be inside the grid.
    #[inline]
    pub(crate) fn leaf(&self, root: u32, v: [u32; 3]) -> (u32, [u32; 3], u32) {
        let mut r = root;
        let mut min = [0u32; 3];
        let mut size = self.info.resolution;
        while ref_kind(r) == KIND_NODE {
            let node = &self.nodes[ref_payload(r) as usize];
            size >>= 1;
            let mut child = 0;
            for a in 0..3 {
                if v[a] >= min[a] + size {
                    min[a] += size;
                    child |= 1 << a;
                }
            }
            r = node.children[child];
        }
        (r, min, size)
    }

    /// The decoded sample at voxel `v` (voxels): a brick's value, `+T` in uniform free space,
    /// `−T` in uniform solid.
    pub fn sample(&self, env: usize, v: [u32; 3]) -> f32 {
        let (r, min, _) = self.leaf(self.envs[env].root, v);
        self.sample_leaf(r, min, v)
    }

    #[inline]
    pub(crate) fn sample_leaf(&self, r: u32, min: [u32; 3], v: [u32; 3]) -> f32 {
        match ref_kind(r) {
            KIND_BRICK => {
                let b = &self.bricks[ref_payload(r) as usize];
                let i = (v[0] - min[0]) + 8 * (v[1] - min[1]) + 64 * (v[2] - min[2]);
                self.info.decode(b[i as usize])
            }
            KIND_INSIDE => -self.info.truncation_vox,
            _ => self.info.truncation_vox,
        }
    }
}

/// An owned pool: the env table, the nodes and the bricks.
#[derive(Clone, Debug)]
pub struct ScenePool {
    pub(crate) info: PoolInfo,
    pub(crate) envs: Vec<EnvEntry>,
    pub(crate) nodes: Vec<Node>,
    pub(crate) bricks: Vec<Brick>,
    pub(crate) stats: DedupStats,
}

impl ScenePool {
    /// The borrowed view that ray casts read.
    pub fn view(&self) -> PoolView<'_> {
        PoolView {
            info: self.info,
            envs: &self.envs,
            nodes: &self.nodes,
            bricks: &self.bricks,
        }
    }

    /// How much sharing the pool got (see [`DedupStats`]).
    pub fn stats(&self) -> DedupStats {
        self.stats
    }
}

/// Sizes before and after cross-env sharing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DedupStats {
    /// Nodes summed over envs, each env deduplicated on its own.
    pub env_nodes: u64,
    /// Bricks summed over envs, each env deduplicated on its own.
    pub env_bricks: u64,
    /// Nodes in the shared pool.
    pub nodes: u64,
    /// Bricks in the shared pool.
    pub bricks: u64,
}

impl DedupStats {
    /// Bytes the envs would need in separate pools (nodes + bricks).
    pub fn env_bytes(&self) -> u64 {
        self.env_nodes * NODE_BYTES + self.env_bricks * BRICK_VOXELS as u64
    }

    /// Bytes of the shared pool (nodes + bricks).
    pub fn pool_bytes(&self) -> u64 {
        self.nodes * NODE_BYTES + self.bricks * BRICK_VOXELS as u64
    }

    /// Cross-env dedup ratio: separate bytes / shared bytes (1 when nothing is shared).
    pub fn ratio(&self) -> f64 {
        self.env_bytes() as f64 / (self.pool_bytes().max(1)) as f64
    }
}

/// Bytes of one [`Node`].
pub const NODE_BYTES: u64 = std::mem::size_of::<Node>() as u64;

/// The 64-bit content hash of `bytes`: four interleaved lanes of SplitMix64's finaliser over
/// little-endian words, folded at the end. Fixed, so pools are identical on every machine.
pub fn content_hash(bytes: &[u8]) -> u64 {
    let mut lanes = [
        0x9e37_79b9_7f4a_7c15u64,
        0xbf58_476d_1ce4_e5b9,
        0x94d0_49bb_1331_11eb,
        0x2545_f491_4f6c_dd1d,
    ];
    let mut chunks = bytes.chunks_exact(32);
    for c in &mut chunks {
        for (l, w) in lanes.iter_mut().zip(c.chunks_exact(8)) {
            let word = u64::from_le_bytes(w.try_into().expect("8-byte chunk"));
            *l = mix64(*l ^ word);
        }
    }
    let mut tail = [0u8; 32];
    let rest = chunks.remainder();
    tail[..rest.len()].copy_from_slice(rest);
    let mut h = bytes.len() as u64;
    for (l, w) in lanes.iter().zip(tail.chunks_exact(8)) {
        let word = u64::from_le_bytes(w.try_into().expect("8-byte chunk"));
        h = mix64(h ^ mix64(*l ^ word));
    }
    h
}

/// A dedup table over a growing `Vec<T>`: a hash → first index map plus a per-item chain of
/// further items with the same hash (walked with a full equality check).
#[derive(Default, Debug, Clone)]
pub(crate) struct Dedup {
    first: HashMap<u64, u32>,
    next: Vec<u32>,
}

const CHAIN_END: u32 = u32::MAX;

impl Dedup {
    /// The index of an item equal to `item` in `items`, appending it if there is none.
    pub fn intern<T: PartialEq>(&mut self, items: &mut Vec<T>, item: T, hash: u64) -> u32 {
        let new_index = items.len() as u32;
        match self.first.get(&hash) {
            None => {
                self.first.insert(hash, new_index);
            }
            Some(&head) => {
                let mut at = head;
                loop {
                    if items[at as usize] == item {
                        return at;
                    }
                    let n = self.next[at as usize];
                    if n == CHAIN_END {
                        self.next[at as usize] = new_index;
                        break;
                    }
                    at = n;
                }
            }
        }
        items.push(item);
        self.next.push(CHAIN_END);
        new_index
    }
}

/// The content hash of a node.
pub(crate) fn node_hash(n: &Node) -> u64 {
    content_hash(bytemuck::bytes_of(n))
}

/// The content hash of a brick.
pub(crate) fn brick_hash(b: &Brick) -> u64 {
    content_hash(bytemuck::cast_slice(b))
}

/// One env's tree before merging: post-order nodes and bricks (deduplicated within the env),
/// local indices, and the env's table entry (its `root` a local reference).
#[derive(Clone, Debug)]
pub(crate) struct LocalTree {
    pub nodes: Vec<Node>,
    pub bricks: Vec<Brick>,
    pub entry: EnvEntry,
    /// Voxel samples computed (512 per brick filled).
    pub voxels_evaluated: u64,
}

/// Merges env trees into one shared pool (in the order they are added), then renumbers it
/// breadth first.
#[derive(Debug)]
pub struct PoolBuilder {
    pub(crate) info: PoolInfo,
    envs: Vec<EnvEntry>,
    nodes: Vec<Node>,
    bricks: Vec<Brick>,
    node_dedup: Dedup,
    brick_dedup: Dedup,
    stats: DedupStats,
}

impl PoolBuilder {
    /// An empty pool for `info`.
    pub fn new(info: PoolInfo) -> Self {
        Self {
            info,
            envs: Vec::new(),
            nodes: Vec::new(),
            bricks: Vec::new(),
            node_dedup: Dedup::default(),
            brick_dedup: Dedup::default(),
            stats: DedupStats::default(),
        }
    }

    /// The shared parameters.
    pub fn info(&self) -> PoolInfo {
        self.info
    }

    /// Envs added so far.
    pub fn n_envs(&self) -> usize {
        self.envs.len()
    }

    /// Appends one env's tree as the next env.
    pub(crate) fn merge(&mut self, tree: LocalTree) {
        self.stats.env_nodes += tree.nodes.len() as u64;
        self.stats.env_bricks += tree.bricks.len() as u64;
        let brick_ids: Vec<u32> = tree
            .bricks
            .into_iter()
            .map(|b| {
                let h = brick_hash(&b);
                self.brick_dedup.intern(&mut self.bricks, b, h)
            })
            .collect();
        let mut node_ids = Vec::with_capacity(tree.nodes.len());
        let remap = |r: u32, node_ids: &[u32]| match ref_kind(r) {
            KIND_NODE => make_ref(KIND_NODE, node_ids[ref_payload(r) as usize]),
            KIND_BRICK => make_ref(KIND_BRICK, brick_ids[ref_payload(r) as usize]),
            _ => r,
        };
        for node in tree.nodes {
            let mut children = node.children;
            for c in &mut children {
                *c = remap(*c, &node_ids);
            }
            let n = Node::new(node.level(), children);
            let h = node_hash(&n);
            node_ids.push(self.node_dedup.intern(&mut self.nodes, n, h));
        }
        let mut entry = tree.entry;
        entry.root = remap(entry.root, &node_ids);
        self.envs.push(entry);
    }

    /// The finished pool, renumbered breadth first from the roots in env order.
    pub fn finish(self) -> ScenePool {
        let (envs, nodes, bricks) = breadth_first(self.envs, &self.nodes, &self.bricks);
        let stats = DedupStats {
            nodes: nodes.len() as u64,
            bricks: bricks.len() as u64,
            ..self.stats
        };
        ScenePool {
            info: self.info,
            envs,
            nodes,
            bricks,
            stats,
        }
    }
}

/// Renumbers a pool breadth first from the env roots; unreachable entries are dropped.
pub(crate) fn breadth_first(
    mut envs: Vec<EnvEntry>,
    nodes: &[Node],
    bricks: &[Brick],
) -> (Vec<EnvEntry>, Vec<Node>, Vec<Brick>) {
    let mut node_new = vec![u32::MAX; nodes.len()];
    let mut brick_new = vec![u32::MAX; bricks.len()];
    let mut order: Vec<u32> = Vec::with_capacity(nodes.len());
    let mut brick_order: Vec<u32> = Vec::with_capacity(bricks.len());
    let mut visit = |r: u32, order: &mut Vec<u32>, brick_order: &mut Vec<u32>| -> u32 {
        match ref_kind(r) {
            KIND_NODE => {
                let old = ref_payload(r) as usize;
                if node_new[old] == u32::MAX {
                    node_new[old] = order.len() as u32;
                    order.push(old as u32);
                }
                make_ref(KIND_NODE, node_new[old])
            }
            KIND_BRICK => {
                let old = ref_payload(r) as usize;
                if brick_new[old] == u32::MAX {
                    brick_new[old] = brick_order.len() as u32;
                    brick_order.push(old as u32);
                }
                make_ref(KIND_BRICK, brick_new[old])
            }
            _ => r,
        }
    };
    for e in &mut envs {
        e.root = visit(e.root, &mut order, &mut brick_order);
    }
    let mut out_nodes = Vec::with_capacity(nodes.len());
    let mut i = 0;
    while i < order.len() {
        let old = &nodes[order[i] as usize];
        let mut children = old.children;
        for c in &mut children {
            *c = visit(*c, &mut order, &mut brick_order);
        }
        out_nodes.push(Node::new(old.level(), children));
        i += 1;
    }
    let out_bricks = brick_order.iter().map(|&b| bricks[b as usize]).collect();
    (envs, out_nodes, out_bricks)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_keep_sign_and_saturate() {
        let info = PoolInfo::new(64, 4.0).unwrap();
        assert_eq!(info.encode(0.0), 0);
        assert_eq!(info.encode(-1e-6), -1);
        assert_eq!(info.encode(1e-6), 0);
        assert_eq!(info.encode(100.0), 127);
        assert_eq!(info.encode(-100.0), -127);
        for i in -400..=400 {
            let v = i as f32 * 0.01;
            let back = info.decode(info.encode(v));
            assert!(
                (back - v).abs() <= info.quant_step() + 1e-6,
                "{v} -> {back}"
            );
            assert_eq!(back < 0.0, v < 0.0, "{v}");
        }
    }

    #[test]
    fn dedup_falls_back_to_equality_on_a_forced_collision() {
        let mut d = Dedup::default();
        let mut items = Vec::new();
        assert_eq!(d.intern(&mut items, 10u32, 1), 0);
        assert_eq!(d.intern(&mut items, 20u32, 1), 1);
        assert_eq!(d.intern(&mut items, 10u32, 1), 0);
        assert_eq!(d.intern(&mut items, 20u32, 1), 1);
        assert_eq!(d.intern(&mut items, 30u32, 1), 2);
        assert_eq!(items, vec![10, 20, 30]);
    }

    #[test]
    fn refs_round_trip() {
        let r = make_ref(KIND_BRICK, 12345);
        assert_eq!((ref_kind(r), ref_payload(r)), (KIND_BRICK, 12345));
        let u = uniform_ref(false, 3.7);
        assert_eq!(ref_kind(u), KIND_OUTSIDE);
        assert_eq!(uniform_bound(u), 3.5);
        assert_eq!(uniform_bound(uniform_ref(true, -1.0)), 0.0);
    }
}
