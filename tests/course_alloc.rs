//! `step()` allocates nothing per env or per step: over 200 steps of 4096 envs the process
//! allocates less than 64 KiB in total (what rayon's job queue may take), while a single
//! per-step buffer of one byte per env would already be 800 KiB. Its own test binary, so no
//! other test's allocations are counted.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use trackgen::course::{Binding, Course, CourseConfig, Mode, PurePursuit};
use trackgen::exec::Launch;
use trackgen::preset::Preset;

struct Counting;

static BYTES: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards every call to the system allocator unchanged; only counts bytes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        BYTES.fetch_add(layout.size(), Ordering::Relaxed);
        // SAFETY: the caller's contract for `alloc` is passed on as is.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System.alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

#[test]
fn step_does_not_allocate() {
    let envs = 4096;
    let preset = Preset::load("karting").unwrap();
    let launch = Launch::with_threads(2).unwrap();
    let mut course = Course::new(
        Mode::Track,
        &preset,
        envs,
        1,
        CourseConfig::default(),
        launch,
    )
    .unwrap();
    let g = course.geometry();
    let binding = Binding::new(g.spawn_position.clone())
        .with_orientations(g.spawn_orientation.clone())
        .with_half_extents(vec![trackgen::geom::Vec2::new(1.0, 0.6); envs]);
    course.bind(binding).unwrap();
    let agent = PurePursuit::for_course(&course);
    for _ in 0..5 {
        agent.act(&mut course).unwrap();
        course.step().unwrap();
    }
    let before = BYTES.load(Ordering::Relaxed);
    for _ in 0..200 {
        course.step().unwrap();
    }
    let allocated = BYTES.load(Ordering::Relaxed) - before;
    assert!(
        allocated < 64 * 1024,
        "200 steps allocated {allocated} bytes"
    );
}
