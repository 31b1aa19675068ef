//! The C++ twins of `src/math` and `src/rng` (`kernels/common/{math,rng}.cuh`) agree with the
//! Rust implementation to the bit.
//!
//! The headers are compiled as host C++ (the compiler the `cc` crate finds, `-std=c++17 -O2
//! -ffp-contract=off -fno-fast-math`) into the driver `tests/suite/twin/driver.cpp`, which goes through
//! the same per-lane dispatch (`kernels/common/selftest.cuh`) as the device self-test kernels.
//! The test writes inputs to files, runs the driver, and compares its outputs with Rust's:
//!
//! - every math function over 2²¹ arguments (structured values: signed zeros, infinities,
//!   NaNs, subnormals, powers of two, the floats nearest to multiples of π/2 and π, thresholds of
//!   exp and ln, large arguments up to `f32::MAX`; random floats of moderate magnitude; then
//!   random bit patterns), and `atan2` over
//!   ~1.7 M pairs (all pairs of special values, random pairs, ratios near the reduction's
//!   breakpoints);
//! - `stream_state` over 2¹⁸ `(seed, env, generation, stage)` tuples;
//! - 8192 lane streams × 128 rounds of `next_u32`, `unit`, `below`, `signed`, `range`
//!   (1 M draws of each, 5.2 M in all).
//!
//! Floats compare by bit pattern, except that any NaN equals any NaN: NaN payloads are not part
//! of the determinism contract (Rust and LLVM do not specify which payload an operation returns,
//! and CUDA arithmetic returns its own canonical NaN), only NaN-ness is.

use std::path::{Path, PathBuf};
use std::process::Command;

use trackgen::math;
use trackgen::rng::{self, LaneRng};

/// Op codes of `tg_selftest_math` (`kernels/common/selftest.cuh`).
const OP_SIN: u32 = 0;
const OP_COS: u32 = 1;
const OP_SIN_COS_SIN: u32 = 2;
const OP_SIN_COS_COS: u32 = 3;
const OP_ATAN2: u32 = 4;
const OP_EXP: u32 = 5;
const OP_LN: u32 = 6;
const OP_WRAP_ANGLE: u32 = 7;
const OP_ROUND_SMALL: u32 = 8;

/// A one-argument math function.
type Unary = fn(f32) -> f32;
/// The words of one stream: `(seed, env, generation, stage)`.
type StreamTuple = (u64, u64, u32, u32);
/// One lane's draw parameters: its stream, `n` for `below`, `(lo, hi)` for `range`.
type DrawLane = (StreamTuple, u32, f32, f32);

/// The one-argument ops, with their Rust functions.
const UNARY: [(u32, &str, Unary); 8] = [
    (OP_SIN, "sin", math::sin),
    (OP_COS, "cos", math::cos),
    (OP_SIN_COS_SIN, "sin_cos().0", |x| math::sin_cos(x).0),
    (OP_SIN_COS_COS, "sin_cos().1", |x| math::sin_cos(x).1),
    (OP_EXP, "exp", math::exp),
    (OP_LN, "ln", math::ln),
    (OP_WRAP_ANGLE, "wrap_angle", math::wrap_angle),
    (OP_ROUND_SMALL, "round_small", math::round_small),
];

/// Rounds of draws per lane, and lanes.
const ROUNDS: u32 = 128;
const DRAW_LANES: usize = 8192;
/// Stream-state tuples.
const STREAM_LANES: usize = 1 << 18;

/// A deterministic pseudo-random 64-bit value per index.
fn random(i: u64) -> u64 {
    rng::mix64(i ^ 0x7419_0000_0000_0000)
}

/// The target triple of the machine running the test (the driver runs here too).
fn host_triple() -> String {
    let arch = std::env::consts::ARCH;
    match std::env::consts::OS {
        "linux" => format!("{arch}-unknown-linux-gnu"),
        "macos" => format!("{arch}-apple-darwin"),
        os => format!("{arch}-unknown-{os}"),
    }
}

/// The compiled driver, in a temporary directory that also holds the data files.
struct Driver {
    dir: tempfile::TempDir,
    exe: PathBuf,
}

impl Driver {
    fn build() -> Self {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let dir = tempfile::tempdir().expect("cannot create a temporary directory");
        let exe = dir.path().join("twin_driver");
        let triple = host_triple();
        let compiler = cc::Build::new()
            .cpp(true)
            .target(&triple)
            .host(&triple)
            .opt_level(2)
            .debug(false)
            .cargo_metadata(false)
            .get_compiler();
        assert!(
            !compiler.is_like_msvc(),
            "the twin test needs a GCC- or Clang-like C++ compiler, found {}",
            compiler.path().display()
        );
        let output = compiler
            .to_command()
            .args(["-std=c++17", "-O2", "-ffp-contract=off", "-fno-fast-math"])
            .args(["-Wall", "-Wextra", "-Werror"])
            .arg("-I")
            .arg(root.join("kernels"))
            .arg(root.join("tests/suite/twin/driver.cpp"))
            .arg("-o")
            .arg(&exe)
            .output()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", compiler.path().display()));
        assert!(
            output.status.success(),
            "compiling the twin driver with {} failed:\n{}",
            compiler.path().display(),
            String::from_utf8_lossy(&output.stderr)
        );
        Self { dir, exe }
    }

    /// Runs the driver with `args`, where `@name` stands for the file `name` of the data dir,
    /// and returns what it printed.
    fn run(&self, args: &[&str]) -> String {
        let args: Vec<PathBuf> = args
            .iter()
            .map(|a| match a.strip_prefix('@') {
                Some(name) => self.dir.path().join(name),
                None => PathBuf::from(a),
            })
            .collect();
        let output = Command::new(&self.exe)
            .args(&args)
            .output()
            .expect("cannot run the twin driver");
        assert!(
            output.status.success(),
            "twin driver {args:?} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).expect("the driver prints UTF-8")
    }

    fn write(&self, name: &str, words: &[u32]) {
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_ne_bytes()).collect();
        std::fs::write(self.dir.path().join(name), bytes).expect("cannot write driver input");
    }

    fn read(&self, name: &str) -> Vec<u32> {
        let bytes = std::fs::read(self.dir.path().join(name)).expect("cannot read driver output");
        bytes
            .chunks_exact(4)
            .map(|c| u32::from_ne_bytes(c.try_into().unwrap()))
            .collect()
    }
}

/// Whether two float bit patterns are equal under the test's rule (any NaN equals any NaN).
fn same_f32(a: u32, b: u32) -> bool {
    a == b || (f32::from_bits(a).is_nan() && f32::from_bits(b).is_nan())
}

/// Compares expected (Rust) and actual (C++) words; returns a report of the mismatches, if any.
fn compare(
    what: &str,
    want: &[u32],
    got: &[u32],
    same: impl Fn(usize, u32, u32) -> bool,
    describe: impl Fn(usize) -> String,
) -> Option<String> {
    if want.len() != got.len() {
        return Some(format!(
            "{what}: driver wrote {} values, expected {}",
            got.len(),
            want.len()
        ));
    }
    let bad: Vec<usize> = (0..want.len())
        .filter(|&i| !same(i, want[i], got[i]))
        .collect();
    if bad.is_empty() {
        println!("{what}: {} values bit-identical", want.len());
        return None;
    }
    let examples: Vec<String> = bad
        .iter()
        .take(8)
        .map(|&i| {
            format!(
                "  {}: rust {:#010x}, c++ {:#010x}",
                describe(i),
                want[i],
                got[i]
            )
        })
        .collect();
    Some(format!(
        "{what}: {} of {} values differ, e.g.\n{}",
        bad.len(),
        want.len(),
        examples.join("\n")
    ))
}

/// The bit patterns `x − n ulp … x + n ulp` (of the same sign as `x`).
fn around(x: f32, n: u32) -> impl Iterator<Item = f32> {
    let bits = x.to_bits();
    (bits.saturating_sub(n)..=bits.saturating_add(n)).map(f32::from_bits)
}

/// One-argument inputs: structured values, then random bit patterns up to 2²¹ in all.
fn unary_inputs() -> Vec<f32> {
    let mut xs: Vec<f32> = vec![
        0.0,
        f32::INFINITY,
        f32::NAN,
        f32::from_bits(0x7f80_0001), // signalling NaN
        f32::from_bits(0x7fff_ffff),
        f32::MAX,
        f32::MIN_POSITIVE,
        f32::EPSILON,
        1.0,
        0.5,
        2.0,
        math::PI,
        math::TAU,
        math::FRAC_PI_2,
        math::FRAC_PI_4,
        88.722_84,
        88.722_83,
        103.972_08,
        103.972_09,
        87.336_54,
        4_194_304.0,
        12_582_912.0,
        4.611_686e18,
    ];
    // Subnormals, and every power of two with its neighbours.
    xs.extend((0..2000u64).map(|i| f32::from_bits((random(i) as u32) & 0x007f_ffff)));
    xs.extend([1, 2, 3, 0x007f_ffff, 0x0040_0000].map(f32::from_bits));
    for e in -149..=127 {
        xs.extend(around(2f32.powi(e), 2));
    }
    // The floats nearest to multiples of π/2 (sin/cos zeros and quadrant edges) up to 2¹⁶,
    // and to odd multiples of π (the wrap_angle boundary), ±2 ulp.
    for k in 0..41_724i64 {
        xs.extend(around((k as f64 * std::f64::consts::FRAC_PI_2) as f32, 2));
    }
    for k in 0..10_432i64 {
        xs.extend(around(
            ((2 * k + 1) as f64 * std::f64::consts::PI) as f32,
            2,
        ));
    }
    // Large arguments: 64 random mantissas per binade up to f32::MAX.
    for e in 0..=254u32 {
        xs.extend((0..64u64).map(|i| {
            f32::from_bits((e << 23) | (random(i + 7919 * u64::from(e)) as u32 & 0x007f_ffff))
        }));
    }
    // ln near 1, exp near its thresholds and at multiples of ln 2, round_small at half-integers
    // and near 2²².
    xs.extend(around(1.0, 2000));
    for t in [88.722_84f32, 87.336_54, 103.972_08, 4_194_304.0] {
        xs.extend(around(t, 300));
    }
    for n in -150..=128 {
        xs.extend(around((f64::from(n) * std::f64::consts::LN_2) as f32, 2));
    }
    xs.extend((0..20_000).map(|i| i as f32 * 0.5 + 0.25));
    xs.extend((0..20_000).map(|i| i as f32 + 0.5));
    // Both signs of everything so far.
    let negated: Vec<f32> = xs.iter().map(|&x| -x).collect();
    xs.extend(negated);
    // Random floats of moderate magnitude (2⁻⁸ … 2¹⁷, either sign), where the functions do
    // their real work, then random bit patterns (all classes: NaNs, infinities, subnormals).
    xs.extend((0..1u64 << 18).map(|i| {
        let r = random(i + (1 << 45)) as u32;
        let exponent = 119 + (r >> 23) % 26;
        f32::from_bits((r & 0x8000_0000) | (exponent << 23) | (r & 0x007f_ffff))
    }));
    let total = 1usize << 21;
    assert!(xs.len() < total * 3 / 4, "{} structured inputs", xs.len());
    let structured = xs.len() as u64;
    xs.extend((structured..total as u64).map(|i| f32::from_bits(random(i) as u32)));
    xs
}

/// `atan2` argument pairs `(y, x)`.
fn atan2_inputs() -> Vec<(f32, f32)> {
    let special: Vec<f32> = [
        0.0,
        f32::INFINITY,
        f32::NAN,
        f32::MAX,
        f32::MIN_POSITIVE,
        f32::from_bits(1),
        f32::from_bits(0x007f_ffff),
        1.0,
        0.5,
        2.0,
        3.0,
        math::PI,
        1e-20,
        1e20,
        0.414_213_57,
        0.6875,
    ]
    .into_iter()
    .flat_map(|v| [v, -v])
    .collect();
    let mut pairs = Vec::new();
    for &y in &special {
        for &x in &special {
            pairs.push((y, x));
        }
    }
    // Ratios near the breakpoints of the reduction (tan(π/8), 11/16, 1), all four quadrants.
    for t in [0.414_213_57f32, 0.6875, 1.0] {
        for r in around(t, 2000) {
            for (y, x) in [(r, 1.0), (1.0, r)] {
                pairs.extend([(y, x), (-y, x), (y, -x), (-y, -x)]);
            }
        }
    }
    // Random pairs with nearby exponents, then random bit patterns.
    for i in 0..500_000u64 {
        let y = f32::from_bits(random(3 * i) as u32);
        let x_bits = (random(3 * i + 1) as u32 & 0x81ff_ffff) | (y.to_bits() & 0x7e00_0000);
        pairs.push((y, f32::from_bits(x_bits)));
    }
    for i in 0..1_100_000u64 {
        let r = random(i + (1 << 40));
        pairs.push((f32::from_bits(r as u32), f32::from_bits((r >> 32) as u32)));
    }
    pairs
}

/// `(seed, env, generation, stage)` tuples: structured corners, then random words.
fn stream_inputs() -> Vec<StreamTuple> {
    let mut words = vec![(0, 0, 0, 0), (u64::MAX, u64::MAX, u32::MAX, u32::MAX)];
    words.extend(rng::stream::ALL.iter().map(|&(_, id)| (0, 0, 0, id)));
    for i in 0..4096u64 {
        words.push((i, 0, 0, 0));
        words.push((0, i, 0, 0));
        words.push((0, 0, i as u32, 0));
        words.push((
            7,
            i,
            3,
            rng::stream::with_attempt(rng::stream::GENERATE, i as u32 & 0xff),
        ));
    }
    let structured = words.len() as u64;
    words.extend((structured..STREAM_LANES as u64).map(|i| {
        let (a, b) = (random(2 * i), random(2 * i + 1));
        (a, b, b as u32, (b >> 32) as u32)
    }));
    words
}

/// The six driver words of a stream tuple.
fn stream_words((seed, env, generation, stage): StreamTuple) -> [u32; 6] {
    [
        seed as u32,
        (seed >> 32) as u32,
        env as u32,
        (env >> 32) as u32,
        generation,
        stage,
    ]
}

/// Per-lane draw parameters.
fn draw_inputs() -> Vec<DrawLane> {
    let ns = [0u32, 1, 2, 3, 7, 10, 1000, 1 << 31, u32::MAX];
    let bounds = [
        (0.0f32, 1.0f32),
        (-1.0, 1.0),
        (5.0, 5.0),
        (3.0, 2.0),
        (-1e30, 1e30),
        (-f32::MAX, f32::MAX),
        (0.0, f32::INFINITY),
        (f32::NAN, 1.0),
        (1e-3, 1e-3 + 1e-9),
    ];
    (0..DRAW_LANES as u64)
        .map(|i| {
            let r = random(i + (1 << 50));
            let words = (r, i, (r >> 40) as u32, (i % 5) as u32);
            let n = if i % 2 == 0 {
                ns[(i / 2) as usize % ns.len()]
            } else {
                r as u32
            };
            let (lo, hi) = if i % 3 == 0 {
                bounds[(i / 3) as usize % bounds.len()]
            } else {
                let a = f32::from_bits((r >> 8) as u32 & 0x4fff_ffff);
                let b = f32::from_bits((r >> 24) as u32 & 0xcfff_ffff);
                (b, a)
            };
            (words, n, lo, hi)
        })
        .collect()
}

fn check_unary(driver: &Driver, xs: &[f32]) -> Vec<String> {
    let a: Vec<u32> = xs.iter().map(|x| x.to_bits()).collect();
    driver.write("unary.bin", &a);
    let mut failures = Vec::new();
    for (op, name, f) in UNARY {
        let out = format!("out_{op}.bin");
        driver.run(&[
            "math",
            &op.to_string(),
            "@unary.bin",
            "@unary.bin",
            &format!("@{out}"),
        ]);
        let want: Vec<u32> = xs.iter().map(|&x| f(x).to_bits()).collect();
        let got = driver.read(&out);
        failures.extend(compare(
            name,
            &want,
            &got,
            |_, a, b| same_f32(a, b),
            |i| format!("{name}({:e} = {:#010x})", xs[i], a[i]),
        ));
    }
    failures
}

fn check_atan2(driver: &Driver) -> Vec<String> {
    let pairs = atan2_inputs();
    let ys: Vec<u32> = pairs.iter().map(|p| p.0.to_bits()).collect();
    let xs: Vec<u32> = pairs.iter().map(|p| p.1.to_bits()).collect();
    driver.write("atan2_y.bin", &ys);
    driver.write("atan2_x.bin", &xs);
    driver.run(&[
        "math",
        &OP_ATAN2.to_string(),
        "@atan2_y.bin",
        "@atan2_x.bin",
        "@atan2.bin",
    ]);
    let want: Vec<u32> = pairs
        .iter()
        .map(|&(y, x)| math::atan2(y, x).to_bits())
        .collect();
    compare(
        "atan2",
        &want,
        &driver.read("atan2.bin"),
        |_, a, b| same_f32(a, b),
        |i| format!("atan2({:e}, {:e})", pairs[i].0, pairs[i].1),
    )
    .into_iter()
    .collect()
}

fn check_stream_state(driver: &Driver) -> Vec<String> {
    let tuples = stream_inputs();
    let words: Vec<u32> = tuples.iter().flat_map(|&t| stream_words(t)).collect();
    driver.write("stream.bin", &words);
    driver.run(&["stream", "@stream.bin", "@stream_out.bin"]);
    let want: Vec<u32> = tuples
        .iter()
        .flat_map(|&(s, e, g, st)| rng::stream_state(s, e, g, st))
        .collect();
    compare(
        "stream_state",
        &want,
        &driver.read("stream_out.bin"),
        |_, a, b| a == b,
        |i| format!("stream_state{:?} word {}", tuples[i / 4], i % 4),
    )
    .into_iter()
    .collect()
}

fn check_draws(driver: &Driver) -> Vec<String> {
    let lanes = draw_inputs();
    let params: Vec<u32> = lanes
        .iter()
        .flat_map(|&(t, n, lo, hi)| {
            let w = stream_words(t);
            [
                w[0],
                w[1],
                w[2],
                w[3],
                w[4],
                w[5],
                n,
                lo.to_bits(),
                hi.to_bits(),
            ]
        })
        .collect();
    driver.write("draws.bin", &params);
    driver.run(&["draws", &ROUNDS.to_string(), "@draws.bin", "@draws_out.bin"]);
    let mut want = Vec::with_capacity(lanes.len() * 5 * ROUNDS as usize);
    for &((seed, env, generation, stage), n, lo, hi) in &lanes {
        let mut r = LaneRng::new(seed, env, generation, stage);
        for _ in 0..ROUNDS {
            want.push(r.next_u32());
            want.push(r.unit().to_bits());
            want.push(r.below(n));
            want.push(r.signed().to_bits());
            want.push(r.range(lo, hi).to_bits());
        }
    }
    const KINDS: [&str; 5] = ["next_u32", "unit", "below", "signed", "range"];
    let per_lane = 5 * ROUNDS as usize;
    compare(
        "draws (next_u32, unit, below, signed, range)",
        &want,
        &driver.read("draws_out.bin"),
        // `next_u32` and `below` are integers; the float draws follow the NaN rule.
        |i, a, b| match i % 5 {
            0 | 2 => a == b,
            _ => same_f32(a, b),
        },
        |i| {
            let (lane, k) = (i / per_lane, i % per_lane);
            format!(
                "lane {lane} {:?} round {} {}",
                lanes[lane],
                k / 5,
                KINDS[k % 5]
            )
        },
    )
    .into_iter()
    .collect()
}

#[test]
fn twins_match_rust_bit_for_bit() {
    let driver = Driver::build();
    let xs = unary_inputs();
    assert!(xs.len() >= 1_000_000);
    // The checks use disjoint files, so they run side by side.
    let failures: Vec<String> = std::thread::scope(|scope| {
        let driver = &driver;
        let xs = &xs;
        let jobs = [
            scope.spawn(move || check_unary(driver, xs)),
            scope.spawn(move || check_atan2(driver)),
            scope.spawn(move || {
                let mut f = check_stream_state(driver);
                f.extend(check_draws(driver));
                f
            }),
        ];
        jobs.into_iter()
            .flat_map(|j| j.join().expect("a twin check panicked"))
            .collect()
    });
    assert!(
        failures.is_empty(),
        "C++ twins differ from Rust:\n{}",
        failures.join("\n")
    );
}

/// The C++ stream-id table (`TG_STREAM_IDS`, as the driver prints it) is the Rust table
/// `rng::stream::ALL`: the same names, values and order.
#[test]
fn stream_ids_match_the_cuda_table() {
    let driver = Driver::build();
    let printed = driver.run(&["streams"]);
    let cpp: Vec<(String, u32)> = printed
        .lines()
        .map(|line| {
            let (name, value) = line.split_once(' ').expect("NAME VALUE");
            (name.to_string(), value.parse().expect("a u32"))
        })
        .collect();
    let rust: Vec<(String, u32)> = rng::stream::ALL
        .iter()
        .map(|&(name, value)| (name.to_string(), value))
        .collect();
    assert_eq!(
        cpp, rust,
        "kernels/common/rng.cuh TG_STREAM_IDS vs rng::stream::ALL"
    );
    // The ids are distinct, so no two stages share a stream.
    let mut values: Vec<u32> = rust.iter().map(|r| r.1).collect();
    values.sort_unstable();
    values.dedup();
    assert_eq!(values.len(), rust.len());
}

#[test]
fn the_twin_comparison_can_fail() {
    // The comparison rule itself: bits must match, except NaN against NaN.
    assert!(same_f32(0x7fc0_0000, 0x7fff_ffff));
    assert!(!same_f32(0x0000_0000, 0x8000_0000), "-0 and +0 must differ");
    assert!(!same_f32(0x3f80_0000, 0x3f80_0001));
    assert!(!same_f32(0x7fc0_0000, 0x7f80_0000), "NaN is not inf");
    assert!(compare("x", &[1, 2], &[1, 3], |_, a, b| a == b, |i| i.to_string()).is_some());
    assert!(compare("x", &[1, 2], &[1], |_, a, b| a == b, |i| i.to_string()).is_some());
}
