//! A fixed-size spatial hash over one env's points, in caller-provided scratch.
//!
//! `heads` has a power-of-two length of buckets, `next` one link per item and `cells` one cell
//! key per item; all are per-env scratch sized once with the pipeline. [`Grid::for_pairs`]
//! visits every unordered pair of items in the same or in adjacent cells exactly once (the
//! "half neighbourhood": the own cell plus four forward neighbours). Items whose bucket is
//! shared with another cell are filtered by their stored cell key, so hash collisions cost
//! time but never change a result.

use crate::geom::Vec2;

const EMPTY: u32 = u32::MAX;

/// Buckets for a grid over at most `items` items (a power of two ≥ 2·items, at least 64).
pub fn buckets_for(items: usize) -> usize {
    (2 * items).next_power_of_two().max(64)
}

/// A spatial hash grid borrowed from scratch.
pub struct Grid<'a> {
    heads: &'a mut [u32],
    next: &'a mut [u32],
    cells: &'a mut [u64],
    len: usize,
}

/// `floor(t)` as an integer, by conversion (no libm call); saturates far outside any grid.
#[inline]
fn floor_i32(t: f32) -> i32 {
    let i = t as i32;
    if (i as f32) > t {
        i - 1
    } else {
        i
    }
}

#[inline]
fn key(cx: i32, cy: i32) -> u64 {
    (u64::from(cx as u32) << 32) | u64::from(cy as u32)
}

#[inline]
fn bucket(k: u64, mask: usize) -> usize {
    let h = (k >> 32) as u32;
    let l = k as u32;
    let h = h.wrapping_mul(0x9e37_79b1) ^ l.wrapping_mul(0x85eb_ca77);
    (h ^ (h >> 15)) as usize & mask
}

/// Forward neighbour offsets: with the own cell they cover each adjacent pair once.
const FORWARD: [(i32, i32); 4] = [(1, 0), (1, 1), (0, 1), (-1, 1)];

impl<'a> Grid<'a> {
    /// Builds the grid of `keys` (one position per item) with square cells of side `cell_m`.
    pub fn build(
        heads: &'a mut [u32],
        next: &'a mut [u32],
        cells: &'a mut [u64],
        points: &[Vec2],
        cell_m: f32,
    ) -> Self {
        debug_assert!(heads.len().is_power_of_two());
        heads.fill(EMPTY);
        let inv_cell = 1.0 / cell_m;
        let mask = heads.len() - 1;
        for (i, &p) in points.iter().enumerate() {
            let k = key(floor_i32(p[0] * inv_cell), floor_i32(p[1] * inv_cell));
            cells[i] = k;
            let b = bucket(k, mask);
            next[i] = heads[b];
            heads[b] = i as u32;
        }
        Self {
            heads,
            next,
            cells,
            len: points.len(),
        }
    }

    /// Calls `visit(i, j)` (with `i > j` in the own cell, any order across cells) once for every
    /// unordered pair of items in the same or adjacent cells, until `visit` returns `false`.
    /// Returns whether every pair was visited.
    #[inline]
    pub fn for_pairs(&self, mut visit: impl FnMut(usize, usize) -> bool) -> bool {
        let mask = self.heads.len() - 1;
        for i in 0..self.len {
            let k = self.cells[i];
            // Own cell: the chain after i holds the items inserted before it.
            let mut j = self.next[i];
            while j != EMPTY {
                let ju = j as usize;
                if self.cells[ju] == k && !visit(i, ju) {
                    return false;
                }
                j = self.next[ju];
            }
            let (cx, cy) = ((k >> 32) as u32 as i32, k as u32 as i32);
            for (dx, dy) in FORWARD {
                let nk = key(cx.wrapping_add(dx), cy.wrapping_add(dy));
                let mut j = self.heads[bucket(nk, mask)];
                while j != EMPTY {
                    let ju = j as usize;
                    if self.cells[ju] == nk && !visit(i, ju) {
                        return false;
                    }
                    j = self.next[ju];
                }
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_close_pair_once() {
        // A jittered lattice; compare with all pairs closer than the cell size.
        let mut pts = Vec::new();
        for i in 0..20 {
            for j in 0..20 {
                let jitter = ((i * 7 + j * 13) % 10) as f32 * 0.09;
                pts.push(Vec2::new(
                    i as f32 * 0.7 + jitter - 5.0,
                    j as f32 * 0.6 - jitter,
                ));
            }
        }
        let cell = 1.0;
        let (mut heads, mut next, mut cells) = (vec![0; 1024], vec![0; 400], vec![0; 400]);
        let grid = Grid::build(&mut heads, &mut next, &mut cells, &pts, cell);
        let mut seen = std::collections::BTreeMap::new();
        grid.for_pairs(|i, j| {
            *seen.entry((i.min(j), i.max(j))).or_insert(0) += 1;
            true
        });
        assert!(seen.values().all(|&c| c == 1), "a pair was visited twice");
        for i in 0..pts.len() {
            for j in 0..i {
                let d = ((pts[i][0] - pts[j][0]).powi(2) + (pts[i][1] - pts[j][1]).powi(2)).sqrt();
                if d < cell {
                    assert!(seen.contains_key(&(j, i)), "close pair {j},{i} missed");
                }
            }
        }
        // Early exit.
        let mut calls = 0;
        assert!(!grid.for_pairs(|_, _| {
            calls += 1;
            false
        }));
        assert_eq!(calls, 1);
    }
}
