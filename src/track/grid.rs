//! A fixed-size spatial hash over one env's points, in caller-provided scratch.
//!
//! `heads` has a power-of-two length of buckets, `next` one link per item; both are per-env
//! scratch sized once with the pipeline. A query visits each item of the 3×3 neighbouring cells
//! exactly once: items whose bucket is shared with another cell are filtered by recomputing
//! their cell, so hash collisions cost time but never change a result.

use super::generators::P2;

const EMPTY: u32 = u32::MAX;

/// Buckets for a grid over at most `items` items (a power of two ≥ 2·items, at least 64).
pub fn buckets_for(items: usize) -> usize {
    (2 * items).next_power_of_two().max(64)
}

/// A spatial hash grid borrowed from scratch.
pub struct Grid<'a> {
    heads: &'a mut [u32],
    next: &'a mut [u32],
    inv_cell: f32,
}

#[inline]
fn cell_of(p: P2, inv_cell: f32) -> (i32, i32) {
    ((p[0] * inv_cell).floor() as i32, (p[1] * inv_cell).floor() as i32)
}

#[inline]
fn bucket(c: (i32, i32), mask: usize) -> usize {
    let h = (c.0 as u32).wrapping_mul(0x9e37_79b1) ^ (c.1 as u32).wrapping_mul(0x85eb_ca77);
    (h ^ (h >> 15)) as usize & mask
}

impl<'a> Grid<'a> {
    /// Builds the grid of `keys` (one position per item) with square cells of side `cell_m`.
    pub fn build(heads: &'a mut [u32], next: &'a mut [u32], keys: &[P2], cell_m: f32) -> Self {
        debug_assert!(heads.len().is_power_of_two());
        heads.fill(EMPTY);
        let inv_cell = 1.0 / cell_m;
        let mask = heads.len() - 1;
        for (i, &k) in keys.iter().enumerate() {
            let b = bucket(cell_of(k, inv_cell), mask);
            next[i] = heads[b];
            heads[b] = i as u32;
        }
        Self {
            heads,
            next,
            inv_cell,
        }
    }

    /// Calls `visit(j)` for every item `j` whose key lies in the 3×3 cells around `p`.
    #[inline]
    pub fn for_neighbours(&self, keys: &[P2], p: P2, mut visit: impl FnMut(usize)) {
        let mask = self.heads.len() - 1;
        let c = cell_of(p, self.inv_cell);
        for dy in -1..=1 {
            for dx in -1..=1 {
                let cell = (c.0.wrapping_add(dx), c.1.wrapping_add(dy));
                let mut j = self.heads[bucket(cell, mask)];
                while j != EMPTY {
                    let ju = j as usize;
                    if cell_of(keys[ju], self.inv_cell) == cell {
                        visit(ju);
                    }
                    j = self.next[ju];
                }
            }
        }
    }
}
