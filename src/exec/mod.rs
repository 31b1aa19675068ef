//! The launch context: how stages run over lanes.
//!
//! A stage is a function over lanes (one env, or one point of one env) that reads input buffers
//! and writes output buffers. On the CPU, [`Launch`] runs lanes with rayon; the CUDA backend runs
//! the same stage as a kernel. Data-dependent control flow never branches on per-env data in
//! host code; it goes through two helpers that map onto CUDA graph conditional nodes:
//!
//! - [`Launch::skip_unless`]: run a body only if any flag of a device buffer is set
//!   (CUDA capture: an IF node);
//! - [`Launch::bounded_loop`]: repeat a body window while any env is still active, at most
//!   `max_windows` times (CUDA capture: a WHILE node whose condition a tiny kernel sets at the end
//!   of each window). No loop in the library is unbounded.
//!
//! A lane's result never depends on how lanes are scheduled: lanes only write their own slices.

pub mod cuda;
pub mod emulated;
pub mod kernels;
pub mod layout;
pub mod plan;

use std::sync::{Arc, Mutex, MutexGuard};

use rayon::prelude::*;

use crate::{Error, Result};

/// Where and how stages run: the CPU backend with a rayon pool.
#[derive(Clone, Default)]
pub struct Launch {
    pool: Option<Arc<rayon::ThreadPool>>,
}

impl std::fmt::Debug for Launch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Launch")
            .field("threads", &self.threads())
            .finish()
    }
}

/// The most pools (of distinct sizes) a calling thread keeps for [`Launch::with_threads`]; an
/// older one is dropped (its threads end once no context holds it).
const POOLS_KEPT: usize = 4;

/// The cores this process may use, read once: `available_parallelism` reads the cgroup's
/// files, some 25 µs, which a small call making a [`Launch`] paid every time.
fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

impl Launch {
    /// A context on rayon's global pool (`RAYON_NUM_THREADS` or all cores).
    pub fn new() -> Self {
        Self { pool: None }
    }

    /// The most worker threads a context may ask for: 4 × the cores, at most 1024. More only
    /// slow the work down (and starting 100 000 threads takes minutes).
    pub fn max_threads() -> usize {
        cores().saturating_mul(4).min(1024)
    }

    /// A context with a pool of `threads` threads (`0` means all cores): the calling thread's
    /// pool of that size, started the first time it asks; more than [`Launch::max_threads`] is
    /// an [`Error::Invalid`] naming the cap.
    pub fn with_threads(threads: usize) -> Result<Self> {
        let cap = Self::max_threads();
        if threads > cap {
            return Err(Error::Invalid(format!(
                "thread count {threads}: expected at most {cap} (4 × the {} cores, at most 1024)",
                cores()
            )));
        }
        // The calling thread's pool of that size, started by its first such context: starting
        // a pool spawns its threads, some 0.1 ms, which a loop of small calls would pay every
        // time. Per calling thread, so that contexts made on different threads never share
        // workers (they could wait on each other); the last [`POOLS_KEPT`] sizes asked, so that
        // a sweep over thread counts does not keep every pool's threads alive.
        thread_local! {
            static POOLS: std::cell::RefCell<Vec<(usize, Arc<rayon::ThreadPool>)>> =
                const { std::cell::RefCell::new(Vec::new()) };
        }
        let cached = POOLS.with_borrow_mut(|pools| {
            let i = pools.iter().position(|(t, _)| *t == threads)?;
            // The most recently asked size last.
            let entry = pools.remove(i);
            pools.push(entry);
            pools.last().map(|(_, p)| p.clone())
        });
        let pool = match cached {
            Some(pool) => pool,
            None => {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .map(Arc::new)
                    .map_err(|e| {
                        Error::Invalid(format!("cannot start {threads} worker threads: {e}"))
                    })?;
                POOLS.with_borrow_mut(|pools| {
                    if pools.len() == POOLS_KEPT {
                        pools.remove(0);
                    }
                    pools.push((threads, pool.clone()));
                });
                pool
            }
        };
        Ok(Self { pool: Some(pool) })
    }

    /// The context a `--threads` option asks for: `None` → [`Launch::new`] (the global pool),
    /// `Some(t)` → [`Launch::with_threads`]`(t)`.
    pub fn for_threads(threads: Option<usize>) -> Result<Self> {
        match threads {
            None => Ok(Self::new()),
            Some(t) => Self::with_threads(t),
        }
    }

    /// The number of worker threads lanes run on.
    pub fn threads(&self) -> usize {
        match &self.pool {
            Some(p) => p.current_num_threads(),
            None => rayon::current_num_threads(),
        }
    }

    /// Runs `f` inside this context's pool.
    pub fn install<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        match &self.pool {
            Some(p) => p.install(f),
            None => f(),
        }
    }

    /// Runs `body(lane, item)` for every item of an indexed parallel iterator (one item per lane,
    /// usually a tuple of per-lane slices of the stage's buffers).
    pub fn lanes<I>(&self, items: I, body: impl Fn(usize, I::Item) + Sync + Send)
    where
        I: IndexedParallelIterator,
    {
        self.install(|| {
            items
                .with_min_len(8)
                .enumerate()
                .for_each(|(lane, item)| body(lane, item))
        });
    }

    /// [`lanes`](Self::lanes) with per-thread scratch: each worker thread takes its own set of
    /// `scratch` for the lanes it runs, so lanes that only need scratch while they run reuse a
    /// few cache-resident buffers instead of touching one region per env, and nothing is
    /// allocated while the pass runs. The scratch must not carry anything from lane to lane that
    /// changes a result.
    pub fn lanes_with_scratch<I, S>(
        &self,
        items: I,
        scratch: &ThreadScratch<S>,
        body: impl Fn(&mut S, usize, I::Item) + Sync + Send,
    ) where
        I: IndexedParallelIterator,
        S: Send,
    {
        self.install(|| {
            items
                .with_min_len(8)
                .enumerate()
                .for_each_init(|| scratch.take(), |set, (lane, item)| body(set, lane, item))
        });
    }

    /// Checks that `mask` holds one flag per env of an `n_envs` batch (the shape every masked
    /// operation — `regenerate`, `reset` — takes).
    pub fn check_mask(mask: &[u8], n_envs: usize) -> Result<()> {
        if mask.len() != n_envs {
            return Err(Error::Invalid(format!(
                "mask has {} entries: expected one per env ({n_envs})",
                mask.len()
            )));
        }
        Ok(())
    }

    /// Whether any flag is non-zero: the condition of [`skip_unless`](Self::skip_unless) and of
    /// each [`bounded_loop`](Self::bounded_loop) window (on CUDA, a one-block reduction kernel).
    pub fn any(&self, flags: &[u8]) -> bool {
        flags.iter().any(|&f| f != 0)
    }

    /// Runs `body` only if some flag is non-zero; returns whether it ran.
    pub fn skip_unless(&self, flags: &[u8], body: impl FnOnce()) -> bool {
        if self.any(flags) {
            body();
            true
        } else {
            false
        }
    }

    /// Repeats `body(window, active)` while any `active` flag is set, at most `max_windows` times.
    /// The body clears the flags of lanes that are done. Returns the number of windows run.
    pub fn bounded_loop(
        &self,
        max_windows: u32,
        active: &mut [u8],
        mut body: impl FnMut(u32, &mut [u8]),
    ) -> u32 {
        let mut window = 0;
        while window < max_windows && self.any(active) {
            body(window, active);
            window += 1;
        }
        window
    }
}

/// Scratch of a pass for every worker thread of a [`Launch`], made once when a pipeline is
/// built (no allocation inside a stage): one set per thread of the launch's pool, plus one for
/// a thread outside it.
///
/// [`Launch::lanes_with_scratch`] hands each run of consecutive lanes (one rayon leaf job, which
/// runs on one thread without nesting) the set of the thread it runs on.
pub struct ThreadScratch<S> {
    sets: Vec<Mutex<S>>,
}

impl<S> ThreadScratch<S> {
    /// One set from `make` per worker thread of `launch`, and one more.
    pub fn new(launch: &Launch, make: impl Fn() -> S) -> Self {
        Self {
            sets: (0..=launch.threads()).map(|_| Mutex::new(make())).collect(),
        }
    }

    /// The set of the calling thread (the last set outside the pool). A leaf job holds it until
    /// its last lane returns; a thread runs one leaf at a time, so the lock is free (a set
    /// poisoned by a panicking lane is taken as it is: scratch carries nothing between lanes).
    fn take(&self) -> MutexGuard<'_, S> {
        let last = self.sets.len() - 1;
        let slot = rayon::current_thread_index().map_or(last, |i| i.min(last));
        self.sets[slot].lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded_loop_stops_at_cap_and_when_idle() {
        let launch = Launch::new();
        let mut active = vec![1u8; 4];
        let windows = launch.bounded_loop(3, &mut active, |_, _| {});
        assert_eq!(windows, 3);
        let mut countdown = [2u8, 0, 1, 0];
        let windows = launch.bounded_loop(10, &mut active, |_, act| {
            for (a, c) in act.iter_mut().zip(countdown.iter_mut()) {
                *c = c.saturating_sub(1);
                *a = u8::from(*c > 0);
            }
        });
        assert_eq!(windows, 2);
        assert!(!launch.any(&active));
    }

    /// A calling thread's contexts of one size share one pool; the thread keeps the last
    /// `POOLS_KEPT` sizes it asked for (an older size gets a new pool), and another thread
    /// never gets the same pool.
    #[test]
    fn pools_are_kept_per_thread_and_bounded() {
        let pool = |t: usize| Launch::with_threads(t).unwrap().pool.unwrap();
        let (first, others) = std::thread::spawn(move || {
            let first = pool(1);
            assert!(Arc::ptr_eq(&first, &pool(1)), "one size, one pool");
            // Asking for size 1 again keeps it among the most recent.
            for t in 2..=POOLS_KEPT {
                pool(t);
            }
            assert!(Arc::ptr_eq(&first, &pool(1)));
            for t in 2..=POOLS_KEPT + 1 {
                pool(t);
            }
            assert!(
                !Arc::ptr_eq(&first, &pool(1)),
                "the oldest size was dropped"
            );
            (first, pool(1))
        })
        .join()
        .unwrap();
        let elsewhere = pool(1);
        assert!(!Arc::ptr_eq(&elsewhere, &first) && !Arc::ptr_eq(&elsewhere, &others));
    }

    #[test]
    fn skip_unless_runs_only_on_a_flag() {
        let launch = Launch::new();
        let mut ran = false;
        assert!(!launch.skip_unless(&[0, 0], || ran = true));
        assert!(!ran);
        assert!(launch.skip_unless(&[0, 1], || ran = true));
        assert!(ran);
    }

    #[test]
    fn lanes_with_scratch_use_one_set_per_thread() {
        let launch = Launch::with_threads(2).unwrap();
        let scratch = ThreadScratch::new(&launch, || vec![0u32; 4]);
        assert_eq!(scratch.sets.len(), 3);
        let mut out = vec![0u32; 1000];
        launch.lanes_with_scratch(out.par_iter_mut(), &scratch, |set, lane, v| {
            set[0] += 1;
            *v = lane as u32 * 2;
        });
        assert!(out.iter().enumerate().all(|(i, &v)| v == i as u32 * 2));
        // Every lane ran with one of the sets; the thread outside the pool took none.
        let counts: Vec<u32> = scratch.sets.iter().map(|s| s.lock().unwrap()[0]).collect();
        assert_eq!(counts.iter().sum::<u32>(), 1000);
        assert_eq!(counts[2], 0);
    }

    #[test]
    fn lanes_visit_each_lane_once() {
        let launch = Launch::with_threads(2).unwrap();
        let mut out = vec![0u32; 1000];
        launch.lanes(out.par_iter_mut(), |lane, v| *v += lane as u32 + 1);
        assert!(out.iter().enumerate().all(|(i, &v)| v == i as u32 + 1));
    }
}
