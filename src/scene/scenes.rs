//! Scenes at run time: every env's scene in one live, deduplicated pool, regenerated per env.
//!
//! [`Scenes`] holds `E` envs of a [`ScenePreset`] in one node pool and one brick pool shared by
//! all envs (the layout of [`dag`](super::dag)), plus each env's generation counter and
//! primitives. [`Scenes::regenerate`] gives the masked envs their next generation (or rebuilds
//! the current one) without touching any other env's nodes or bricks.
//!
//! # The live pool
//!
//! Each node and brick slot carries a **reference count**: the references to it from live nodes
//! (with multiplicity) plus the env roots that name it. A content index (hash → slot, with an
//! equality check on collisions, as in [`PoolBuilder`](super::PoolBuilder)) keeps every live
//! node and brick stored once, so equal subtrees of different envs share slots. Regenerating
//! the masked envs runs in three steps:
//!
//! 1. their new trees are built (in parallel, each env's own, deduplicated within the env);
//! 2. their old roots are released: a slot whose count drops to zero leaves the index, releases
//!    its children and goes on a free list;
//! 3. the new trees are merged in env order: a node or brick equal to a live one shares it,
//!    anything else takes a slot from the free list (last freed first) before the pool grows.
//!
//! A slot an unmasked env reaches has a count of at least one throughout, so it is never freed,
//! moved or rewritten: **unmasked envs keep every byte**. Freed slots are only reused, never
//! left behind, so the pool's length is the largest number of slots ever live at once:
//!
//! **Bound.** After any sequence of regenerations the pool holds at most
//! `max over time of Σ_e nodes(e)` nodes and `max over time of Σ_e bricks(e)` bricks, where
//! `nodes(e)`, `bricks(e)` count env `e`'s own tree (deduplicated within the env) — hence at most
//! `E · ((R/8)³ − 1)/7` nodes and `E · (R/8)³` bricks, whatever the number of regenerations.
//! The live part (what the envs reach now, after sharing) is usually far smaller.
//!
//! [`Scenes::pool`] compacts the live pool into a [`ScenePool`] renumbered breadth first from
//! the roots — the same bytes a [`PoolBuilder`](super::PoolBuilder) writes for the same envs
//! and generations — which is what scene files hold.
//!
//! # Courses
//!
//! A `gates` scene is its env's gate course at the env's generation (see
//! [`generate`](super::generate)). [`Course::regenerate`](crate::course::Course::regenerate)
//! and [`Scenes::regenerate`] with the same mask and `advance` move the same generation
//! counters, so a gates scene keeps showing its env's course.
//!
//! The device is the CPU for now (a [`Backend::Cpu`]); the CUDA lowering runs the same three
//! steps as kernels over the same layout.

use std::collections::HashMap;

use rayon::prelude::*;

use super::build::{build_tree, PrimitiveSource};
use super::dag::{
    brick_hash, make_ref, node_hash, ref_kind, ref_payload, Brick, EnvEntry, LocalTree, Node,
    PoolInfo, ScenePool, KIND_BRICK, KIND_NODE,
};
use super::generate::generate_envs;
use super::preset::ScenePreset;
use super::primitive::EnvScene;
use crate::exec::plan::Backend;
use crate::exec::Launch;
use crate::{Error, Result};

/// A content index over pool slots that supports removal: hash → first slot, plus a per-slot
/// chain of further slots with the same hash.
#[derive(Debug, Default, Clone)]
struct SlotIndex {
    first: HashMap<u64, u32>,
    next: Vec<u32>,
}

const CHAIN_END: u32 = u32::MAX;

impl SlotIndex {
    /// The live slot holding `item`, if any.
    fn find<T: PartialEq>(&self, items: &[T], item: &T, hash: u64) -> Option<u32> {
        let mut at = *self.first.get(&hash)?;
        loop {
            if items[at as usize] == *item {
                return Some(at);
            }
            at = self.next[at as usize];
            if at == CHAIN_END {
                return None;
            }
        }
    }

    /// Adds slot `slot` (holding content with `hash`) at the end of its chain.
    fn insert(&mut self, slot: u32, hash: u64) {
        if self.next.len() <= slot as usize {
            self.next.resize(slot as usize + 1, CHAIN_END);
        }
        self.next[slot as usize] = CHAIN_END;
        match self.first.get(&hash) {
            None => {
                self.first.insert(hash, slot);
            }
            Some(&head) => {
                let mut at = head;
                while self.next[at as usize] != CHAIN_END {
                    at = self.next[at as usize];
                }
                self.next[at as usize] = slot;
            }
        }
    }

    /// Removes slot `slot` (holding content with `hash`) from its chain.
    fn remove(&mut self, slot: u32, hash: u64) {
        let Some(&head) = self.first.get(&hash) else {
            return;
        };
        let after = self.next[slot as usize];
        if head == slot {
            if after == CHAIN_END {
                self.first.remove(&hash);
            } else {
                self.first.insert(hash, after);
            }
        } else {
            let mut at = head;
            while self.next[at as usize] != slot {
                at = self.next[at as usize];
                if at == CHAIN_END {
                    return;
                }
            }
            self.next[at as usize] = after;
        }
        self.next[slot as usize] = CHAIN_END;
    }
}

/// One kind of slot (nodes or bricks): contents, reference counts, free list and index.
#[derive(Debug, Clone)]
struct Slots<T> {
    items: Vec<T>,
    refs: Vec<u32>,
    free: Vec<u32>,
    index: SlotIndex,
}

impl<T: PartialEq + Copy> Slots<T> {
    fn new() -> Self {
        Self {
            items: Vec::new(),
            refs: Vec::new(),
            free: Vec::new(),
            index: SlotIndex::default(),
        }
    }

    /// The live slot equal to `item`, or a new one (from the free list first) with count 0;
    /// `true` when it is new.
    fn intern(&mut self, item: T, hash: u64) -> (u32, bool) {
        if let Some(slot) = self.index.find(&self.items, &item, hash) {
            return (slot, false);
        }
        let slot = match self.free.pop() {
            Some(s) => {
                self.items[s as usize] = item;
                s
            }
            None => {
                self.items.push(item);
                self.refs.push(0);
                (self.items.len() - 1) as u32
            }
        };
        self.index.insert(slot, hash);
        (slot, true)
    }

    fn live(&self) -> usize {
        self.items.len() - self.free.len()
    }
}

/// Sizes of the live pool.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LiveStats {
    /// Node slots (live + free): the pool's length.
    pub node_slots: u64,
    /// Brick slots (live + free).
    pub brick_slots: u64,
    /// Nodes some env reaches.
    pub live_nodes: u64,
    /// Bricks some env reaches.
    pub live_bricks: u64,
    /// Σ over envs of each env's own tree (deduplicated within the env), nodes: what the pool
    /// would hold without sharing across envs.
    pub env_nodes: u64,
    /// The same for bricks.
    pub env_bricks: u64,
}

/// `E` envs of a scene preset in one live, shared, deduplicated pool, regenerated per env (see
/// the module doc).
#[derive(Debug)]
pub struct Scenes {
    preset: ScenePreset,
    seed: u64,
    info: PoolInfo,
    launch: Launch,
    generation: Vec<u32>,
    scenes: Vec<EnvScene>,
    envs: Vec<EnvEntry>,
    /// Per env: its own tree's `(nodes, bricks)`.
    tree_sizes: Vec<(u32, u32)>,
    nodes: Slots<Node>,
    bricks: Slots<Brick>,
}

impl Scenes {
    /// `n_envs` envs of `preset` under `seed`, all at generation 0, voxelised at the preset's
    /// resolution on `device`. Only [`Backend::Cpu`] is supported yet; any other backend is
    /// [`Error::CudaUnavailable`].
    pub fn new(preset: &ScenePreset, n_envs: usize, seed: u64, device: &Backend) -> Result<Self> {
        let launch = match device {
            Backend::Cpu(l) => l.clone(),
            other => {
                return Err(Error::CudaUnavailable(format!(
                    "Scenes on {}: run-time scenes run on the CPU backend only (the kernel \
                     lowering of scene regeneration is not written yet); expected Backend::Cpu",
                    match other {
                        Backend::Emulated { .. } => "the emulated-CUDA backend",
                        Backend::Cuda { .. } => "a CUDA device",
                        Backend::Cpu(_) => "the CPU",
                    }
                )))
            }
        };
        if n_envs == 0 {
            return Err(Error::Invalid("n_envs = 0: expected at least 1 env".into()));
        }
        if n_envs as u64 > u32::MAX as u64 {
            return Err(Error::Invalid(format!(
                "n_envs = {n_envs}: expected at most {}",
                u32::MAX
            )));
        }
        let info = PoolInfo::new(preset.resolution, preset.truncation_vox)?;
        let mut s = Self {
            preset: preset.clone(),
            seed,
            info,
            launch,
            generation: vec![0; n_envs],
            scenes: Vec::with_capacity(n_envs),
            envs: Vec::with_capacity(n_envs),
            tree_sizes: vec![(0, 0); n_envs],
            nodes: Slots::new(),
            bricks: Slots::new(),
        };
        let all = vec![1u8; n_envs];
        s.rebuild(&all, true)?;
        Ok(s)
    }

    /// Gives the envs with `mask[e] != 0` a scene: with `advance` their generation moves to
    /// `generation + 1` (wrapping) and they get that generation's scene; without, their current
    /// generation is rebuilt (the same trees). Other envs keep every byte (entry, nodes,
    /// bricks, generation). Errors (nothing changed): a mask of the wrong length.
    pub fn regenerate(&mut self, mask: &[u8], advance: bool) -> Result<()> {
        Launch::check_mask(mask, self.n_envs())?;
        if !mask.iter().any(|&m| m != 0) {
            return Ok(());
        }
        let next: Vec<u32> = self
            .generation
            .iter()
            .zip(mask)
            .map(|(&g, &m)| {
                if m != 0 && advance {
                    g.wrapping_add(1)
                } else {
                    g
                }
            })
            .collect();
        let old = std::mem::replace(&mut self.generation, next);
        let result = self.rebuild(mask, false);
        if result.is_err() {
            self.generation = old;
        }
        result
    }

    /// Builds the masked envs at their generation and swaps them in (all of them when `fresh`,
    /// which fills the tables the first time).
    fn rebuild(&mut self, mask: &[u8], fresh: bool) -> Result<()> {
        let masked: Vec<usize> = (0..mask.len()).filter(|&e| mask[e] != 0).collect();
        let (preset, seed, info, launch) = (&self.preset, self.seed, self.info, &self.launch);
        let generation = &self.generation;
        // 1. The new scenes and trees, in parallel; nothing is changed until all succeeded.
        let built: Vec<(EnvScene, LocalTree)> = self.launch.install(|| {
            masked
                .par_iter()
                .map(|&e| {
                    let range = e as u64..e as u64 + 1;
                    let scene =
                        generate_envs(preset, seed, generation[e], range, launch)?.remove(0);
                    let source = PrimitiveSource::new(&scene, &info)
                        .map_err(|err| Error::Invalid(format!("env {e}: {err}")))?;
                    let entry = EnvEntry {
                        origin: scene.origin.to_array(),
                        voxel_size: scene.size_m / info.resolution as f32,
                        spawn: scene.spawn.to_array(),
                        root: 0,
                    };
                    let tree = build_tree(&source, &info, entry);
                    Ok((scene, tree))
                })
                .collect::<Result<Vec<_>>>()
        })?;
        // 2. Release the old roots; 3. merge the new trees in env order.
        if !fresh {
            for &e in &masked {
                self.release(self.envs[e].root);
            }
        }
        for (&e, (scene, tree)) in masked.iter().zip(built) {
            self.tree_sizes[e] = (tree.nodes.len() as u32, tree.bricks.len() as u32);
            let entry = self.merge(tree);
            if fresh {
                self.scenes.push(scene);
                self.envs.push(entry);
            } else {
                self.scenes[e] = scene;
                self.envs[e] = entry;
            }
        }
        Ok(())
    }

    /// Adds one reference to `r` (a node or brick slot; uniform references are no slots).
    fn retain(&mut self, r: u32) {
        match ref_kind(r) {
            KIND_NODE => self.nodes.refs[ref_payload(r) as usize] += 1,
            KIND_BRICK => self.bricks.refs[ref_payload(r) as usize] += 1,
            _ => {}
        }
    }

    /// Drops one reference to `r`; slots whose count reaches zero are freed, their children
    /// released in turn.
    fn release(&mut self, r: u32) {
        let mut stack = vec![r];
        while let Some(r) = stack.pop() {
            let slot = ref_payload(r);
            match ref_kind(r) {
                KIND_NODE => {
                    let count = &mut self.nodes.refs[slot as usize];
                    *count -= 1;
                    if *count == 0 {
                        let node = self.nodes.items[slot as usize];
                        self.nodes.index.remove(slot, node_hash(&node));
                        self.nodes.free.push(slot);
                        stack.extend(node.children);
                    }
                }
                KIND_BRICK => {
                    let count = &mut self.bricks.refs[slot as usize];
                    *count -= 1;
                    if *count == 0 {
                        let hash = brick_hash(&self.bricks.items[slot as usize]);
                        self.bricks.index.remove(slot, hash);
                        self.bricks.free.push(slot);
                    }
                }
                _ => {}
            }
        }
    }

    /// Interns one env's tree into the live pool; its table entry with the root retained.
    fn merge(&mut self, tree: LocalTree) -> EnvEntry {
        let brick_ids: Vec<u32> = tree
            .bricks
            .iter()
            .map(|b| self.bricks.intern(*b, brick_hash(b)).0)
            .collect();
        let mut node_ids: Vec<u32> = Vec::with_capacity(tree.nodes.len());
        let remap = |r: u32, node_ids: &[u32]| match ref_kind(r) {
            KIND_NODE => make_ref(KIND_NODE, node_ids[ref_payload(r) as usize]),
            KIND_BRICK => make_ref(KIND_BRICK, brick_ids[ref_payload(r) as usize]),
            _ => r,
        };
        for node in &tree.nodes {
            let children = node.children.map(|c| remap(c, &node_ids));
            let n = Node::new(node.level(), children);
            let (slot, new) = self.nodes.intern(n, node_hash(&n));
            if new {
                for c in children {
                    self.retain(c);
                }
            }
            node_ids.push(slot);
        }
        let root = remap(tree.entry.root, &node_ids);
        self.retain(root);
        EnvEntry { root, ..tree.entry }
    }

    /// Envs in the batch.
    pub fn n_envs(&self) -> usize {
        self.envs.len()
    }

    /// The shared grid parameters.
    pub fn info(&self) -> PoolInfo {
        self.info
    }

    /// The preset.
    pub fn preset(&self) -> &ScenePreset {
        &self.preset
    }

    /// The seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// Each env's generation counter.
    pub fn generation(&self) -> &[u32] {
        &self.generation
    }

    /// Env `e`'s analytic scene (its primitives) at its current generation.
    pub fn scene(&self, e: usize) -> &EnvScene {
        &self.scenes[e]
    }

    /// The env table (roots are slots of [`nodes`](Self::nodes) and [`bricks`](Self::bricks)).
    pub fn envs(&self) -> &[EnvEntry] {
        &self.envs
    }

    /// The node slots, live and free (a free slot keeps its last bytes; no env reaches it).
    pub fn nodes(&self) -> &[Node] {
        &self.nodes.items
    }

    /// The brick slots, live and free.
    pub fn bricks(&self) -> &[Brick] {
        &self.bricks.items
    }

    /// The view ray casts read: the live pool in place, free slots included (unreached).
    pub fn view(&self) -> super::PoolView<'_> {
        super::PoolView {
            info: self.info,
            envs: &self.envs,
            nodes: &self.nodes.items,
            bricks: &self.bricks.items,
        }
    }

    /// Sizes of the live pool.
    pub fn stats(&self) -> LiveStats {
        let (env_nodes, env_bricks) = self
            .tree_sizes
            .iter()
            .fold((0u64, 0u64), |(n, b), &(tn, tb)| {
                (n + tn as u64, b + tb as u64)
            });
        LiveStats {
            node_slots: self.nodes.items.len() as u64,
            brick_slots: self.bricks.items.len() as u64,
            live_nodes: self.nodes.live() as u64,
            live_bricks: self.bricks.live() as u64,
            env_nodes,
            env_bricks,
        }
    }

    /// The reference counts of the node slots and the brick slots (0 for a free slot).
    pub fn reference_counts(&self) -> (&[u32], &[u32]) {
        (&self.nodes.refs, &self.bricks.refs)
    }

    /// The live pool compacted and renumbered breadth first from the roots (env order): the
    /// bytes a [`PoolBuilder`](super::PoolBuilder) gives for the same envs at the same
    /// generations, ready for [`write_scene_file`](super::write_scene_file).
    pub fn pool(&self) -> ScenePool {
        let stats = self.stats();
        let (envs, nodes, bricks) =
            super::dag::breadth_first(self.envs.clone(), &self.nodes.items, &self.bricks.items);
        ScenePool {
            info: self.info,
            stats: super::DedupStats {
                env_nodes: stats.env_nodes,
                env_bricks: stats.env_bricks,
                nodes: nodes.len() as u64,
                bricks: bricks.len() as u64,
            },
            envs,
            nodes,
            bricks,
        }
    }
}
