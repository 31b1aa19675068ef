//! Batch layouts: each structure-of-arrays batch type declared once.
//!
//! A batch is a set of buffers over `n_envs` environments: **per-env** buffers hold one element
//! per env (`[n_envs]`), **per-point** buffers a fixed capacity of elements per env
//! (`[n_envs * capacity]`, env `e` owning `[e * capacity, (e + 1) * capacity)`). Everything a
//! consumer needs to know about the buffers — allocation with each buffer's fill value, slicing
//! an env range, byte equality, length checks, the `.npy` arrays of a corpus, and the bytes a
//! device backend uploads and downloads — comes from one field list given to `soa_batch!`, so
//! adding a buffer is one line and no copy of the list can fall out of step.
//!
//! Batches never derive `PartialEq`: their padding is NaN, and NaN is not equal to itself, so
//! `==` would be false for every real batch. [`Layout::bytes_eq`] compares bytes instead.

use rayon::iter::plumbing::{bridge, Consumer, Producer, ProducerCallback, UnindexedConsumer};
use rayon::iter::{IndexedParallelIterator, ParallelIterator};

use crate::{Error, Result};

/// The element type of a `.npy` array (the corpus stores these).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dtype {
    /// Little-endian `f32`, `'<f4'`.
    F4,
    /// Little-endian `i32`, `'<i4'`.
    I4,
    /// `u8`, `'|u1'`.
    U1,
}

impl Dtype {
    /// The numpy type string (`'<f4'`, `'<i4'`, `'|u1'`).
    pub const fn descr(self) -> &'static str {
        match self {
            Dtype::F4 => "<f4",
            Dtype::I4 => "<i4",
            Dtype::U1 => "|u1",
        }
    }

    /// Bytes per element.
    pub const fn size(self) -> usize {
        match self {
            Dtype::F4 | Dtype::I4 => 4,
            Dtype::U1 => 1,
        }
    }

    /// The dtype of a numpy type string, or `None` for any other (`'<u1'` reads as `'|u1'`).
    pub fn from_descr(descr: &str) -> Option<Self> {
        match descr {
            "<f4" => Some(Dtype::F4),
            "<i4" => Some(Dtype::I4),
            "|u1" | "<u1" => Some(Dtype::U1),
            _ => None,
        }
    }
}

/// Whether a buffer holds one element per env or a fixed capacity of elements per env.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Extent {
    /// `[n_envs]`.
    PerEnv,
    /// `[n_envs * capacity]`; env `e` owns `[e * capacity, (e + 1) * capacity)`.
    PerPoint,
}

/// How a buffer is stored as a `.npy` array of a corpus.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NpyArray {
    /// The array's name (its file is `NAME.npy`).
    pub name: &'static str,
    /// The element type on disk.
    pub dtype: Dtype,
    /// Scalars of `dtype` per buffer element (3 for `[f32; 3]`, 1 for `f32`).
    pub components: u64,
}

/// One buffer of a batch layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field {
    /// The buffer's field name in its batch struct.
    pub name: &'static str,
    /// Per env or per point.
    pub extent: Extent,
    /// Bytes per element.
    pub elem_bytes: usize,
    /// Its array in a corpus, if the corpus stores it.
    pub npy: Option<NpyArray>,
}

impl Field {
    /// The field `name` of element type `T`; `npy` names its corpus array and dtype. Evaluated
    /// at compile time: an element whose size is not a whole number of `dtype` scalars, or a
    /// per-env array of more than one scalar, fails the build.
    pub const fn new<T>(
        name: &'static str,
        extent: Extent,
        npy: Option<(&'static str, Dtype)>,
    ) -> Self {
        let elem_bytes = std::mem::size_of::<T>();
        let npy = match npy {
            Some((array, dtype)) => {
                assert!(
                    elem_bytes % dtype.size() == 0,
                    "element is not whole dtype scalars"
                );
                let components = (elem_bytes / dtype.size()) as u64;
                assert!(
                    matches!(extent, Extent::PerPoint) || components == 1,
                    "a per-env array holds one scalar per env"
                );
                Some(NpyArray {
                    name: array,
                    dtype,
                    components,
                })
            }
            None => None,
        };
        Self {
            name,
            extent,
            elem_bytes,
            npy,
        }
    }

    /// Elements of this buffer in a batch of `n_envs` envs of `capacity` points.
    pub fn len(&self, n_envs: usize, capacity: usize) -> usize {
        match self.extent {
            Extent::PerEnv => n_envs,
            Extent::PerPoint => n_envs * capacity,
        }
    }

    /// The shape of its corpus array for `n_envs` envs of `capacity` points (`None` if the
    /// corpus does not store it): `[N]` per env, `[N, capacity]` for one scalar per point,
    /// `[N, capacity, k]` for `k` scalars per point.
    pub fn npy_shape(&self, n_envs: u64, capacity: u64) -> Option<Vec<u64>> {
        let npy = self.npy?;
        Some(match (self.extent, npy.components) {
            (Extent::PerEnv, _) => vec![n_envs],
            (Extent::PerPoint, 1) => vec![n_envs, capacity],
            (Extent::PerPoint, k) => vec![n_envs, capacity, k],
        })
    }
}

/// A batch type declared by `soa_batch!`: its field table and its buffers as bytes, for code
/// generic over batches (the corpus reader, device upload and download).
pub trait Layout {
    /// Every buffer, in declaration order.
    const FIELDS: &'static [Field];

    /// Calls `f` with each buffer's field and bytes, in [`FIELDS`](Self::FIELDS) order.
    fn for_each_field(&self, f: impl FnMut(&'static Field, &[u8]));

    /// Calls `f` with each buffer's field and mutable bytes, in [`FIELDS`](Self::FIELDS) order.
    fn for_each_field_mut(&mut self, f: impl FnMut(&'static Field, &mut [u8]));

    /// Whether every buffer and header value is byte-identical (NaN padding equals NaN padding).
    fn bytes_eq(&self, other: &Self) -> bool;
}

/// `n_envs × capacity`, or an [`Error::Invalid`] naming both sizes when it overflows.
pub fn points(rows: (&str, usize), capacity: (&str, usize)) -> Result<usize> {
    rows.1.checked_mul(capacity.1).ok_or_else(|| {
        Error::Invalid(format!(
            "{} = {} × {} = {} overflows",
            rows.0, rows.1, capacity.0, capacity.1
        ))
    })
}

/// A buffer of `len` copies of `fill`, or an [`Error::Invalid`] naming `batch.field` and the
/// size when it cannot be allocated.
pub fn alloc<T: Clone>(batch: &str, field: &str, len: usize, fill: T) -> Result<Vec<T>> {
    let mut buffer = Vec::new();
    buffer.try_reserve_exact(len).map_err(|_| {
        Error::Invalid(format!(
            "{batch}.{field}: cannot allocate {len} elements of {} bytes",
            std::mem::size_of::<T>()
        ))
    })?;
    buffer.resize(len, fill);
    Ok(buffer)
}

/// `Ok` if buffer `batch.field` of `extent` has the length a batch of `n_envs` envs of
/// `capacity` points implies, else an [`Error::Invalid`] naming the buffer and both lengths.
pub fn check_len(
    batch: &str,
    field: &str,
    extent: Extent,
    len: usize,
    n_envs: usize,
    capacity: usize,
) -> Result<()> {
    let expected = match extent {
        Extent::PerEnv => n_envs,
        Extent::PerPoint => n_envs.saturating_mul(capacity),
    };
    if len == expected {
        return Ok(());
    }
    let what = match extent {
        Extent::PerEnv => format!("one per env ({n_envs})"),
        Extent::PerPoint => format!("{capacity} per env × {n_envs} envs ({expected})"),
    };
    Err(Error::Invalid(format!(
        "buffer `{batch}.{field}` has {len} entries: expected {what}"
    )))
}

/// Mutable rows of a batch's per-env buffers over a range of envs, which split at an env
/// index into two disjoint views (generated by `soa_batch!` with a `rows:` clause).
pub trait SplitRows: Sized + Send {
    /// Envs in this view.
    fn rows(&self) -> usize;
    /// Envs `..mid` and `mid..` of this view.
    fn split_at(self, mid: usize) -> (Self, Self);
}

/// `rows` in chunks of `chunk` envs (the last may be shorter) as an indexed parallel iterator:
/// what `par_chunks_mut(chunk)` is to one buffer, for every buffer of a batch at once.
pub fn par_chunks<R: SplitRows>(rows: R, chunk: usize) -> ParChunks<R> {
    assert!(chunk > 0, "chunks of 0 envs");
    ParChunks { rows, chunk }
}

/// The parallel iterator of [`par_chunks`].
#[derive(Debug)]
pub struct ParChunks<R> {
    rows: R,
    chunk: usize,
}

impl<R: SplitRows> ParallelIterator for ParChunks<R> {
    type Item = R;

    fn drive_unindexed<C: UnindexedConsumer<R>>(self, consumer: C) -> C::Result {
        bridge(self, consumer)
    }

    fn opt_len(&self) -> Option<usize> {
        Some(IndexedParallelIterator::len(self))
    }
}

impl<R: SplitRows> IndexedParallelIterator for ParChunks<R> {
    fn len(&self) -> usize {
        self.rows.rows().div_ceil(self.chunk)
    }

    fn drive<C: Consumer<R>>(self, consumer: C) -> C::Result {
        bridge(self, consumer)
    }

    fn with_producer<CB: ProducerCallback<R>>(self, callback: CB) -> CB::Output {
        callback.callback(ChunkProducer {
            rows: self.rows,
            chunk: self.chunk,
        })
    }
}

struct ChunkProducer<R> {
    rows: R,
    chunk: usize,
}

impl<R: SplitRows> Producer for ChunkProducer<R> {
    type Item = R;
    type IntoIter = Chunks<R>;

    fn into_iter(self) -> Chunks<R> {
        Chunks {
            rows: Some(self.rows),
            chunk: self.chunk,
        }
    }

    fn split_at(self, index: usize) -> (Self, Self) {
        let mid = index.saturating_mul(self.chunk).min(self.rows.rows());
        let (a, b) = self.rows.split_at(mid);
        let chunk = self.chunk;
        (
            ChunkProducer { rows: a, chunk },
            ChunkProducer { rows: b, chunk },
        )
    }
}

/// The sequential chunks of one producer.
struct Chunks<R> {
    rows: Option<R>,
    chunk: usize,
}

impl<R: SplitRows> Iterator for Chunks<R> {
    type Item = R;

    fn next(&mut self) -> Option<R> {
        let rows = self.rows.take()?;
        let n = rows.rows();
        if n == 0 {
            return None;
        }
        let (head, tail) = rows.split_at(self.chunk.min(n));
        self.rows = Some(tail);
        Some(head)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self
            .rows
            .as_ref()
            .map_or(0, |r| r.rows().div_ceil(self.chunk));
        (n, Some(n))
    }
}

impl<R: SplitRows> ExactSizeIterator for Chunks<R> {}

impl<R: SplitRows> DoubleEndedIterator for Chunks<R> {
    fn next_back(&mut self) -> Option<R> {
        let rows = self.rows.take()?;
        let n = rows.rows();
        if n == 0 {
            return None;
        }
        let last = (n.div_ceil(self.chunk) - 1) * self.chunk;
        let (head, tail) = rows.split_at(last);
        self.rows = Some(head);
        Some(tail)
    }
}

/// Declares a structure-of-arrays batch type from its field list.
///
/// ```ignore
/// soa_batch! {
///     /// Docs of the type.
///     #[derive(Clone, Debug)]
///     pub struct GateBatch {
///         /// Number of envs.
///         rows: n_envs,
///         /// Capacity of each per-gate buffer.
///         capacity: g_max,
///         /// The global index of env 0.
///         base: env_base,
///         consts {
///             /// A per-batch constant (copied by `slice`, compared by `bytes_eq`).
///             thickness_m: f32,
///         }
///         per_point {
///             /// Centre of each gate (NaN padding).
///             pos: [f32; 3] = [f32::NAN; 3] => npy("gate_pos", F4),
///         }
///         per_env {
///             /// Generation counter of each env (not in a corpus).
///             generation: u32 = 0,
///         }
///     }
/// }
/// ```
///
/// The struct gets every listed field `pub` (buffers as `Vec<T>`), and:
/// - `FIELDS`: the [`Field`] table (name, extent, element size, corpus array), in order;
/// - `new(rows, capacity, base, consts..)`: every buffer allocated and filled (an
///   [`Error::Invalid`] naming the sizes on overflow or allocation failure);
/// - `slice(range)`: envs `range` as a new batch (`base` moved to the range's first env);
/// - `bytes_eq(&other)`: byte equality of the header values and every buffer;
/// - `check()`: every buffer's length against the header (an error names the buffer);
/// - `for_each_field` / `for_each_field_mut`: each buffer's bytes, with its [`Field`];
/// - an impl of [`Layout`].
///
/// A batch of per-env buffers only (`per_env { .. }` alone) has no header fields: `new(n_envs)`,
/// `check(n_envs)`. It may add `rows: VIS struct Rows from Row;` after its `per_env` list: a
/// view `Rows<'a>` of mutable rows of every buffer, with `rows_mut()` on the batch, `trim(n)`,
/// `set(i, &Row)` (a struct with a field of each name) and [`SplitRows`], so that
/// [`par_chunks`] splits all buffers into env chunks at once.
macro_rules! soa_batch {
    (@npy) => { None };
    (@npy $array:literal, $dtype:ident) => {
        Some(($array, $crate::exec::layout::Dtype::$dtype))
    };
    (@methods $name:ident,
        [$( $p:ident: $pt:ty ),*],
        [$( $v:ident: $vt:ty ),*]
    ) => {
        /// Byte equality of every buffer: NaN padding equals NaN padding (this type does not
        /// derive `PartialEq`, which would be false for any batch with NaN in it).
        pub fn bytes_eq(&self, other: &Self) -> bool {
            self.header_bytes_eq(other)
                $( && bytemuck::cast_slice::<$pt, u8>(&self.$p) == bytemuck::cast_slice::<$pt, u8>(&other.$p) )*
                $( && bytemuck::cast_slice::<$vt, u8>(&self.$v) == bytemuck::cast_slice::<$vt, u8>(&other.$v) )*
        }

        /// Calls `f` with each buffer's [`Field`]($crate::exec::layout::Field) and bytes, in
        /// `FIELDS` order.
        pub fn for_each_field(&self, mut f: impl FnMut(&'static $crate::exec::layout::Field, &[u8])) {
            let mut fields = Self::FIELDS.iter();
            $( f(fields.next().expect("one field per buffer"), bytemuck::cast_slice(&self.$p)); )*
            $( f(fields.next().expect("one field per buffer"), bytemuck::cast_slice(&self.$v)); )*
        }

        /// Calls `f` with each buffer's [`Field`]($crate::exec::layout::Field) and mutable
        /// bytes, in `FIELDS` order.
        pub fn for_each_field_mut(
            &mut self,
            mut f: impl FnMut(&'static $crate::exec::layout::Field, &mut [u8]),
        ) {
            let mut fields = Self::FIELDS.iter();
            $( f(fields.next().expect("one field per buffer"), bytemuck::cast_slice_mut(&mut self.$p)); )*
            $( f(fields.next().expect("one field per buffer"), bytemuck::cast_slice_mut(&mut self.$v)); )*
        }
    };
    (@rows $name:ident, $rvis:vis, $rows:ident, $row:ty, [$( $v:ident: $vt:ty ),*]) => {
        #[doc = concat!(
            "Mutable rows of every buffer of [`", stringify!($name), "`] over a range of envs ",
            "(from `rows_mut`; split into env chunks by ",
            "[`par_chunks`](crate::exec::layout::par_chunks))."
        )]
        $rvis struct $rows<'a> {
            $( $rvis $v: &'a mut [$vt], )*
        }

        impl $name {
            /// Every buffer as one view of mutable rows.
            $rvis fn rows_mut(&mut self) -> $rows<'_> {
                $rows { $( $v: &mut self.$v, )* }
            }
        }

        impl $rows<'_> {
            /// The first `n` rows of every buffer (so that writes below `n` need no bounds
            /// checks).
            #[inline]
            $rvis fn trim(self, n: usize) -> Self {
                Self { $( $v: &mut self.$v[..n], )* }
            }

            /// Writes `row`'s field of each name into row `i` of that buffer.
            #[inline(always)]
            $rvis fn set(&mut self, i: usize, row: &$row) {
                $( self.$v[i] = row.$v; )*
            }
        }

        impl $crate::exec::layout::SplitRows for $rows<'_> {
            fn rows(&self) -> usize {
                let mut n = usize::MAX;
                $( n = n.min(self.$v.len()); )*
                n
            }

            fn split_at(self, mid: usize) -> (Self, Self) {
                $( let $v = self.$v.split_at_mut(mid); )*
                (Self { $( $v: $v.0, )* }, Self { $( $v: $v.1, )* })
            }
        }
    };
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident {
            per_env { $(
                $(#[$v_doc:meta])* $v:ident: $vt:ty = $v_fill:expr
                $( => npy($v_array:literal, $v_dtype:ident) )?
            ),* $(,)? }
            rows: $rvis:vis struct $rows:ident from $row:ty;
        }
    ) => {
        $crate::exec::layout::soa_batch! {
            $(#[$meta])*
            $vis struct $name {
                per_env { $(
                    $(#[$v_doc])* $v: $vt = $v_fill $( => npy($v_array, $v_dtype) )?
                ),* }
            }
        }
        $crate::exec::layout::soa_batch!(@rows $name, $rvis, $rows, $row, [$( $v: $vt ),*]);
    };
    (@layout $name:ident) => {
        impl $crate::exec::layout::Layout for $name {
            const FIELDS: &'static [$crate::exec::layout::Field] = $name::FIELDS;

            fn for_each_field(&self, f: impl FnMut(&'static $crate::exec::layout::Field, &[u8])) {
                $name::for_each_field(self, f)
            }

            fn for_each_field_mut(
                &mut self,
                f: impl FnMut(&'static $crate::exec::layout::Field, &mut [u8]),
            ) {
                $name::for_each_field_mut(self, f)
            }

            fn bytes_eq(&self, other: &Self) -> bool {
                $name::bytes_eq(self, other)
            }
        }
    };
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident {
            $(#[$rows_doc:meta])* rows: $rows:ident,
            $(#[$cap_doc:meta])* capacity: $cap:ident,
            $(#[$base_doc:meta])* base: $base:ident,
            consts { $( $(#[$c_doc:meta])* $c:ident: $ct:ty ),* $(,)? }
            per_point { $(
                $(#[$p_doc:meta])* $p:ident: $pt:ty = $p_fill:expr
                $( => npy($p_array:literal, $p_dtype:ident) )?
            ),* $(,)? }
            per_env { $(
                $(#[$v_doc:meta])* $v:ident: $vt:ty = $v_fill:expr
                $( => npy($v_array:literal, $v_dtype:ident) )?
            ),* $(,)? }
        }
    ) => {
        $(#[$meta])*
        $vis struct $name {
            $(#[$rows_doc])* pub $rows: usize,
            $(#[$cap_doc])* pub $cap: usize,
            $(#[$base_doc])* pub $base: u64,
            $( $(#[$c_doc])* pub $c: $ct, )*
            $( $(#[$p_doc])* pub $p: Vec<$pt>, )*
            $( $(#[$v_doc])* pub $v: Vec<$vt>, )*
        }

        impl $name {
            /// Every buffer's [`Field`]($crate::exec::layout::Field), in declaration order
            /// (per-point buffers first).
            pub const FIELDS: &'static [$crate::exec::layout::Field] = &[
                $( $crate::exec::layout::Field::new::<$pt>(
                    stringify!($p),
                    $crate::exec::layout::Extent::PerPoint,
                    $crate::exec::layout::soa_batch!(@npy $($p_array, $p_dtype)?),
                ), )*
                $( $crate::exec::layout::Field::new::<$vt>(
                    stringify!($v),
                    $crate::exec::layout::Extent::PerEnv,
                    $crate::exec::layout::soa_batch!(@npy $($v_array, $v_dtype)?),
                ), )*
            ];

            #[doc = concat!(
                "A batch of `", stringify!($rows), "` envs of `", stringify!($cap),
                "` points for envs `", stringify!($base), " ..`, every buffer at its fill value ",
                "(NaN points, zero counts); an [`Error::Invalid`](crate::Error::Invalid) naming ",
                "the sizes if they overflow or cannot be allocated."
            )]
            pub fn new(
                $rows: usize,
                $cap: usize,
                $base: u64,
                $( $c: $ct, )*
            ) -> $crate::Result<Self> {
                let points = $crate::exec::layout::points(
                    (stringify!($rows), $rows),
                    (stringify!($cap), $cap),
                )?;
                Ok(Self {
                    $rows,
                    $cap,
                    $base,
                    $( $c, )*
                    $( $p: $crate::exec::layout::alloc(stringify!($name), stringify!($p), points, $p_fill)?, )*
                    $( $v: $crate::exec::layout::alloc(stringify!($name), stringify!($v), $rows, $v_fill)?, )*
                })
            }

            /// Envs `range` of this batch as a new batch (rows copied; its env base is the
            /// global index of `range.start`).
            pub fn slice(&self, range: std::ops::Range<usize>) -> Self {
                let (a, b, k) = (range.start, range.end, self.$cap);
                Self {
                    $rows: b - a,
                    $cap: k,
                    $base: self.$base + a as u64,
                    $( $c: self.$c, )*
                    $( $p: self.$p[a * k..b * k].to_vec(), )*
                    $( $v: self.$v[a..b].to_vec(), )*
                }
            }

            /// `Ok` if every buffer has the length the header implies, else an
            /// [`Error::Invalid`](crate::Error::Invalid) naming the first that does not.
            pub fn check(&self) -> $crate::Result<()> {
                use $crate::exec::layout::{check_len, Extent};
                let (n, k) = (self.$rows, self.$cap);
                $( check_len(stringify!($name), stringify!($p), Extent::PerPoint, self.$p.len(), n, k)?; )*
                $( check_len(stringify!($name), stringify!($v), Extent::PerEnv, self.$v.len(), n, k)?; )*
                Ok(())
            }

            fn header_bytes_eq(&self, other: &Self) -> bool {
                self.$rows == other.$rows
                    && self.$cap == other.$cap
                    && self.$base == other.$base
                    $( && bytemuck::bytes_of(&self.$c) == bytemuck::bytes_of(&other.$c) )*
            }

            $crate::exec::layout::soa_batch!(@methods $name, [$( $p: $pt ),*], [$( $v: $vt ),*]);
        }

        $crate::exec::layout::soa_batch!(@layout $name);
    };
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident {
            per_env { $(
                $(#[$v_doc:meta])* $v:ident: $vt:ty = $v_fill:expr
                $( => npy($v_array:literal, $v_dtype:ident) )?
            ),* $(,)? }
        }
    ) => {
        $(#[$meta])*
        $vis struct $name {
            $( $(#[$v_doc])* pub $v: Vec<$vt>, )*
        }

        impl $name {
            /// Every buffer's [`Field`]($crate::exec::layout::Field), in declaration order.
            pub const FIELDS: &'static [$crate::exec::layout::Field] = &[
                $( $crate::exec::layout::Field::new::<$vt>(
                    stringify!($v),
                    $crate::exec::layout::Extent::PerEnv,
                    $crate::exec::layout::soa_batch!(@npy $($v_array, $v_dtype)?),
                ), )*
            ];

            /// `n_envs` entries in every buffer, each at its fill value; an
            /// [`Error::Invalid`](crate::Error::Invalid) naming the buffer if it cannot be
            /// allocated.
            pub fn new(n_envs: usize) -> $crate::Result<Self> {
                Ok(Self {
                    $( $v: $crate::exec::layout::alloc(stringify!($name), stringify!($v), n_envs, $v_fill)?, )*
                })
            }

            /// Envs `range` as a new value (rows copied).
            pub fn slice(&self, range: std::ops::Range<usize>) -> Self {
                Self {
                    $( $v: self.$v[range.clone()].to_vec(), )*
                }
            }

            /// `Ok` if every buffer has `n_envs` entries, else an
            /// [`Error::Invalid`](crate::Error::Invalid) naming the first that does not.
            pub fn check(&self, n_envs: usize) -> $crate::Result<()> {
                $( $crate::exec::layout::check_len(
                    stringify!($name),
                    stringify!($v),
                    $crate::exec::layout::Extent::PerEnv,
                    self.$v.len(),
                    n_envs,
                    0,
                )?; )*
                Ok(())
            }

            fn header_bytes_eq(&self, _other: &Self) -> bool {
                true
            }

            $crate::exec::layout::soa_batch!(@methods $name, [], [$( $v: $vt ),*]);
        }

        $crate::exec::layout::soa_batch!(@layout $name);
    };
}

pub(crate) use soa_batch;
