"""Python overhead of `Course.step()`: the median wall time of a `course.step()` call from Python
against the median of the same Rust call timed inside Rust (`Course._rust_step_times`), at E envs.

    python examples/python/bench_step.py --envs 4096 --reps 2000

Between timed calls every env moves one pure-pursuit step (untimed), so localization does the
work of a moving agent; the two timings alternate in blocks so machine noise hits both alike.
"""

import argparse
import statistics
import time

import trackgen


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--envs", type=int, default=4096)
    ap.add_argument("--reps", type=int, default=2000)
    ap.add_argument("--block", type=int, default=50)
    ap.add_argument("--preset", default="track")
    ap.add_argument("--threads", type=int, default=None)
    args = ap.parse_args()
    course = trackgen.Course(args.preset, args.envs, threads=args.threads)
    course.bind(orientation=True)
    py_times, rust_times = [], []
    clock = time.perf_counter
    for _ in range(max(1, args.reps // args.block)):
        for _ in range(args.block):
            course.pure_pursuit()
            start = clock()
            course.step()
            py_times.append(clock() - start)
        for _ in range(args.block):
            course.pure_pursuit()
            rust_times.extend(course._rust_step_times(1))
    py_med = statistics.median(py_times)
    rust_med = statistics.median(rust_times)
    print(f"envs {args.envs}, {len(py_times)} calls each: Python course.step() median "
          f"{py_med * 1e6:.1f} us, Rust Course::step median {rust_med * 1e6:.1f} us, "
          f"overhead {(py_med - rust_med) * 1e6:.2f} us = {100 * (py_med - rust_med) / rust_med:.2f}%")


if __name__ == "__main__":
    main()
