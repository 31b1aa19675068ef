//! Batch layouts (`exec::layout`): what every declared batch gets from its one field list.

use rayon::prelude::*;
use trackgen::course::{GateBatch, StepOutputs};
use trackgen::exec::layout::{par_chunks, Dtype, Extent, Layout, SplitRows};
use trackgen::geom::Vec3;
use trackgen::track::TrackBatch;

/// `(field, corpus array, dtype, scalars per element)` of the stored buffers, written out here.
fn stored<B: Layout>() -> Vec<(&'static str, &'static str, Dtype, u64)> {
    B::FIELDS
        .iter()
        .filter_map(|f| f.npy.map(|a| (f.name, a.name, a.dtype, a.components)))
        .collect()
}

#[test]
fn the_corpus_tables_come_from_the_declarations() {
    use Dtype::{F4, I4, U1};
    assert_eq!(
        stored::<TrackBatch>(),
        [
            ("center", "center", F4, 3),
            ("outer", "outer", F4, 3),
            ("inner", "inner", F4, 3),
            ("tangent", "tangent", F4, 3),
            ("normal", "normal", F4, 3),
            ("arclen", "arclen", F4, 1),
            ("count", "count", I4, 1),
            ("length", "length", F4, 1),
            ("valid", "valid", U1, 1),
            ("attempts", "attempts", U1, 1),
        ]
    );
    assert_eq!(
        stored::<GateBatch>(),
        [
            ("pos", "gate_pos", F4, 3),
            ("quat", "gate_quat", F4, 4),
            ("size", "gate_size", F4, 2),
            ("count", "gate_count", I4, 1),
            ("valid", "valid", U1, 1),
            ("attempts", "attempts", U1, 1),
        ]
    );
    // Buffers a corpus does not store are still in the table.
    let generation = TrackBatch::FIELDS.last().unwrap();
    assert_eq!(
        (
            generation.name,
            generation.extent,
            generation.elem_bytes,
            generation.npy
        ),
        ("generation", Extent::PerEnv, 4, None)
    );
    assert!(StepOutputs::FIELDS
        .iter()
        .all(|f| f.extent == Extent::PerEnv));
    assert_eq!(StepOutputs::FIELDS.len(), 16);
    let shapes: Vec<_> = GateBatch::FIELDS
        .iter()
        .filter_map(|f| f.npy_shape(5, 8))
        .collect();
    assert_eq!(
        shapes,
        [
            vec![5, 8, 3],
            vec![5, 8, 4],
            vec![5, 8, 2],
            vec![5],
            vec![5],
            vec![5]
        ]
    );
}

#[test]
fn new_fills_slice_moves_the_base_and_bytes_eq_sees_nan_padding() {
    let mut b = GateBatch::new(3, 4, 10, 0.2).unwrap();
    assert!(b.pos.iter().all(|p| p.is_nan()));
    assert_eq!((b.count.len(), b.pos.len(), b.quat.len()), (3, 12, 12));
    b.count[1] = 2;
    b.pos[5] = Vec3::new(1.0, 2.0, 3.0);
    let s = b.slice(1..3);
    assert_eq!(
        (s.n_envs, s.g_max, s.env_base, s.thickness_m),
        (2, 4, 11, 0.2)
    );
    assert_eq!((s.count[0], s.pos[1]), (2, Vec3::new(1.0, 2.0, 3.0)));
    // NaN padding compares equal byte for byte; any changed byte does not.
    assert!(b.bytes_eq(&b.clone()));
    let mut c = b.clone();
    c.quat[11].w = 0.0;
    assert!(!b.bytes_eq(&c));
    let mut c = b.clone();
    c.thickness_m = 0.3;
    assert!(!b.bytes_eq(&c));
    let mut c = b.clone();
    c.env_base += 1;
    assert!(!Layout::bytes_eq(&b, &c));
}

#[test]
fn for_each_field_visits_every_buffer_in_table_order() {
    let b = TrackBatch::new(2, 5, 0).unwrap();
    let mut seen = Vec::new();
    b.for_each_field(|f, bytes| seen.push((f.name, bytes.len())));
    let want: Vec<_> = TrackBatch::FIELDS
        .iter()
        .map(|f| (f.name, f.len(2, 5) * f.elem_bytes))
        .collect();
    assert_eq!(seen, want);
    assert_eq!(seen[0], ("center", 2 * 5 * 12));
    assert_eq!(seen.last(), Some(&("generation", 2 * 4)));
}

#[test]
fn checks_and_overflow_name_the_buffer_and_the_sizes() {
    let mut b = TrackBatch::new(2, 5, 0).unwrap();
    assert!(b.check().is_ok());
    b.arclen.pop();
    let m = b.check().unwrap_err().to_string();
    assert!(
        m.contains("TrackBatch.arclen") && m.contains("9 entries") && m.contains("(10)"),
        "{m}"
    );
    let mut b = TrackBatch::new(2, 5, 0).unwrap();
    b.valid.push(1);
    let m = b.check().unwrap_err().to_string();
    assert!(
        m.contains("TrackBatch.valid") && m.contains("one per env (2)"),
        "{m}"
    );
    let m = TrackBatch::new(usize::MAX, 2, 0).unwrap_err().to_string();
    assert!(
        m.contains("n_envs") && m.contains("n_max") && m.contains("overflows"),
        "{m}"
    );
    let mut o = StepOutputs::new(3).unwrap();
    assert!(o.check(3).is_ok());
    o.hit.clear();
    let m = o.check(3).unwrap_err().to_string();
    assert!(
        m.contains("StepOutputs.hit") && m.contains("0 entries"),
        "{m}"
    );
}

/// A one-buffer view, to drive `par_chunks` directly.
struct Ids<'a>(&'a mut [u32]);

impl SplitRows for Ids<'_> {
    fn rows(&self) -> usize {
        self.0.len()
    }
    fn split_at(self, mid: usize) -> (Self, Self) {
        let (a, b) = self.0.split_at_mut(mid);
        (Ids(a), Ids(b))
    }
}

#[test]
fn par_chunks_splits_every_row_once_in_order() {
    for (n, chunk) in [(0, 4), (1, 4), (10, 4), (12, 4), (1000, 7), (1000, 1)] {
        let mut ids: Vec<u32> = (0..n).collect();
        let chunks: Vec<Vec<u32>> = par_chunks(Ids(&mut ids), chunk as usize)
            .map(|c| c.0.to_vec())
            .collect();
        let want: Vec<Vec<u32>> = (0..n)
            .collect::<Vec<_>>()
            .chunks(chunk as usize)
            .map(<[u32]>::to_vec)
            .collect();
        assert_eq!(chunks, want, "n = {n}, chunk = {chunk}");
        // Writes through the chunks land in their own rows; the reverse walk sees the same chunks.
        par_chunks(Ids(&mut ids), chunk as usize)
            .enumerate()
            .for_each(|(k, c)| c.0.iter_mut().for_each(|v| *v = k as u32));
        assert!(ids
            .iter()
            .enumerate()
            .all(|(i, &v)| v == (i / chunk as usize) as u32));
        let rev: Vec<usize> = par_chunks(Ids(&mut ids), chunk as usize)
            .rev()
            .map(|c| c.0.len())
            .collect();
        let mut want_rev: Vec<usize> = want.iter().map(Vec::len).collect();
        want_rev.reverse();
        assert_eq!(rev, want_rev);
    }
}
