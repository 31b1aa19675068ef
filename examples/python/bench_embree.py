"""Ray casts beside Embree: one thread, the same scene, the same rays, one table.

For each scene preset and resolution R, env `--env` of the preset is

- voxelised by trackgen (`trackgen.Scenes.generate`, R voxels per side: the SDF voxel-DAG the
  ray cast walks), and
- triangulated from the same analytic primitives (`trackgen.ScenePrimitives.mesh`: marching
  tetrahedra of the exact CSG fold over `--cells` cells per side, default R, so the mesh and
  the voxel grid have the same spacing) and handed to Embree (embreex, PyPI).

Both engines cast the same float32 rays, one env's worth per call:

- `camera`: a `--camera`² pinhole camera (90° vertical field of view) at the env's spawn point,
  level, looking along yaw 2.4·env rad (the camera of `trackgen bench-scene`);
- `random`: `--random` rays from uniform points of the env's domain that lie more than one voxel
  clear of every solid (by the exact signed distance of the primitives), in uniform directions.

Timing is on one thread for both: trackgen's `cast_rays(..., threads=1)` (the GIL released, one
worker thread) and embreex's `EmbreeScene.run` (a loop of `rtcIntersect1` calls on the calling
thread, query `DISTANCE`; the BVH is built, untimed, before the first timed call). Each rate is
the median over `--reps` calls of the whole ray set, the calls of the two engines alternating; the
Python call overhead of both (argument checks, output allocation; trackgen casts a one-thread
call on the calling thread, the GIL released) is inside the timings. Rates are given by wall clock
and by the process's CPU time (`time.process_time`, all its threads): on a loaded machine the
wall clock counts the time other processes hold the core, the CPU time does not.

Agreement: a ray agrees on hit/miss when both report a hit within `max_distance` or both a miss;
the depth columns give, of the rays both hit, the share whose distances differ by at most ¼ voxel
and 1 voxel (voxel = domain side / R). The two surfaces differ by construction (trackgen: the
trilinear interpolant of the stored samples, ¼ voxel contract; the mesh: a linear interpolation
of the exact field along tetrahedron edges, which cuts convex edges short), most where rays clip
edges. The last column counts the rays the engines disagree on (hit/miss, or depth by more than a
voxel) and, of those, the ones whose trackgen (Embree) distance is closer to the exact first hit:
the first point, sampled every 1/20 voxel along the ray, where the primitives' signed distance is
at most 0 (`ScenePrimitives.distance`).

    python3 examples/python/bench_embree.py --presets rooms,forest,gates --res 128,256

Prints a Markdown table (and, with `--json PATH`, writes its rows as JSON). Needs numpy, the
trackgen Python module (`pip install ./interop/python`) and embreex (`pip install embreex`).
"""

import argparse
import json
import math
import os
import statistics
import sys
import time

# numpy's BLAS threads spin on after a call (the setup's) and their time counts in the process's
# CPU time, of whichever engine runs then: one BLAS thread, set before numpy loads it.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

import trackgen  # noqa: E402

COLUMNS = [
    "scene",
    "R",
    "rays",
    "triangles",
    "trackgen Mrays/s",
    "Embree Mrays/s",
    "trackgen/Embree",
    "trackgen Mrays/s CPU",
    "Embree Mrays/s CPU",
    "trackgen/Embree CPU",
    "hit/miss agree",
    "depth within 1/4 voxel",
    "depth within 1 voxel",
    "apart (trackgen/Embree closer to exact)",
]


def camera_rays(spawn, env, side):
    """The bench-scene camera at `spawn`: side×side pixels, 90° vertical field of view, level,
    looking along yaw 2.4·env; row-major from the top-left pixel. Float32 [side², 3] each."""
    half = math.tan(0.5 * math.radians(90.0))
    focal = 0.5 * side / half
    px = (np.arange(side, dtype=np.float64) + 0.5 - 0.5 * side) / focal
    down, right = np.meshgrid(px, px, indexing="ij")
    yaw = env * 2.4
    fwd = np.array([math.cos(yaw), math.sin(yaw), 0.0])
    left = np.array([-math.sin(yaw), math.cos(yaw), 0.0])
    up = np.array([0.0, 0.0, 1.0])
    d = fwd[None, :] - right.reshape(-1, 1) * left[None, :] - down.reshape(-1, 1) * up[None, :]
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    o = np.broadcast_to(np.asarray(spawn, np.float64), d.shape)
    return np.ascontiguousarray(o, np.float32), np.ascontiguousarray(d, np.float32)


def random_rays(prims, n, clearance_m, rng):
    """`n` rays from uniform domain points whose exact signed distance exceeds `clearance_m`,
    in uniform directions. Float32 [n, 3] each."""
    lo = np.asarray(prims.origin, np.float64)
    size = prims.size_m
    kept = [np.zeros((0, 3), np.float32)]
    have = 0
    for _ in range(1000):
        if have >= n:
            break
        p = (lo + rng.random((4 * n, 3)) * size).astype(np.float32)
        free = p[np.asarray(prims.distance(p)) > clearance_m]
        kept.append(free)
        have += len(free)
    if have < n:
        raise RuntimeError(f"found {have} of {n} free ray origins in 1000 draws")
    o = np.concatenate(kept)[:n]
    d = rng.normal(size=(n, 3))
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    return np.ascontiguousarray(o, np.float32), np.ascontiguousarray(d, np.float32)


def median_seconds(calls, reps):
    """The median wall-clock and process CPU times of each of `calls` over `reps` rounds, as
    `[(wall, cpu), ..]`; each round times every call once, in turn, so a change in the
    machine's load falls on all of them alike."""
    times = [([], []) for _ in calls]
    for _ in range(reps):
        for call, (wall, cpu) in zip(calls, times):
            w, c = time.perf_counter(), time.process_time()
            call()
            cpu.append(time.process_time() - c)
            wall.append(time.perf_counter() - w)
    return [(statistics.median(w), statistics.median(c)) for w, c in times]


def exact_first_hit(prims, o, d, max_distance, step):
    """Per ray, the first sample (every `step` metres from the origin) where the exact field of
    the primitives is <= 0; `max_distance` where none is."""
    out = np.full(len(o), max_distance, np.float64)
    ts = np.arange(0.0, max_distance, step)
    chunk = max(1, 2_000_000 // len(ts))
    for i in range(0, len(o), chunk):
        oo, dd = o[i : i + chunk], d[i : i + chunk].astype(np.float64)
        pts = oo[:, None, :] + ts[None, :, None] * dd[:, None, :]
        f = np.asarray(prims.distance(np.ascontiguousarray(pts.reshape(-1, 3), np.float32)))
        inside = f.reshape(len(oo), len(ts)) <= 0
        first = np.argmax(inside, axis=1)
        out[i : i + chunk] = np.where(inside.any(axis=1), ts[first], max_distance)
    return out


def compare(name, r, rays, triangles, tg, em, prims, max_distance, voxel, reps):
    """One table row: rates of both engines and their agreement on `rays` = (origins, dirs)."""
    o, d = rays
    n = len(o)
    dist_t, hit_t, _ = tg(o, d)
    dist_e = em(o, d)
    dist_t = np.asarray(dist_t)
    hit_t = np.asarray(hit_t) == 1
    hit_e = dist_e < max_distance
    both = hit_t & hit_e
    err = np.abs(dist_t[both] - dist_e[both])
    # The rays the engines disagree on (hit/miss, or depth by more than a voxel), against the
    # exact field sampled every 1/20 voxel: which engine's distance is closer to its first zero.
    apart = (hit_t != hit_e) | (both & (np.abs(dist_t - dist_e) > voxel))
    dt = np.where(hit_t, dist_t, max_distance)[apart]
    de = np.where(hit_e, dist_e, max_distance)[apart]
    exact = exact_first_hit(prims, o[apart], d[apart], max_distance, voxel / 20)
    tg_closer = int(np.count_nonzero(np.abs(dt - exact) < np.abs(de - exact)))
    em_closer = int(np.count_nonzero(np.abs(de - exact) < np.abs(dt - exact)))
    share = lambda mask: float(np.count_nonzero(mask)) / max(1, mask.size)  # noqa: E731
    (w_tg, c_tg), (w_em, c_em) = median_seconds([lambda: tg(o, d), lambda: em(o, d)], reps)
    return {
        "scene": name,
        "R": r,
        "rays": n,
        "triangles": triangles,
        "trackgen Mrays/s": n / w_tg / 1e6,
        "Embree Mrays/s": n / w_em / 1e6,
        "trackgen/Embree": w_em / w_tg,
        "trackgen Mrays/s CPU": n / c_tg / 1e6,
        "Embree Mrays/s CPU": n / c_em / 1e6,
        "trackgen/Embree CPU": c_em / c_tg,
        "hit/miss agree": share(hit_t == hit_e),
        "depth within 1/4 voxel": share(err <= 0.25 * voxel),
        "depth within 1 voxel": share(err <= voxel),
        "apart (trackgen/Embree closer to exact)": f"{len(dt)} ({tg_closer}/{em_closer})",
        "hits trackgen": share(hit_t),
        "hits Embree": share(hit_e),
    }


def run(args):
    try:
        from embreex import rtcore_scene
        from embreex.mesh_construction import TriangleMesh
    except ImportError as e:
        raise SystemExit(f"bench_embree: embreex is not installed ({e}); pip install embreex")
    rows = []
    for preset in args.presets:
        prims = trackgen.ScenePrimitives(preset, args.env, seed=args.seed)
        max_distance = prims.size_m * math.sqrt(3.0)
        for r in args.res:
            voxel = prims.size_m / r
            scenes = trackgen.Scenes.generate(preset, args.env + 1, seed=args.seed, resolution=r)
            vertices, triangles = prims.mesh(args.cells or r)
            vertices = np.ascontiguousarray(np.asarray(vertices), np.float32)
            triangles = np.ascontiguousarray(np.asarray(triangles).astype(np.int32))
            scene = rtcore_scene.EmbreeScene(robust=not args.embree_fast)
            TriangleMesh(scene, vertices, triangles)

            env_of_ray = {}  # ray count -> the uint32 env index of every ray, made once

            def tg(o, d, scenes=scenes, env_of_ray=env_of_ray):
                if len(o) not in env_of_ray:
                    env_of_ray[len(o)] = np.full(len(o), args.env, np.uint32)
                env = env_of_ray[len(o)]
                return scenes.cast_rays(
                    o, d, max_distance=max_distance, env_of_ray=env, threads=1
                )

            def em(o, d, scene=scene):
                return scene.run(o, d, dists=max_distance, query="DISTANCE")

            rng = np.random.default_rng(args.seed * 1000003 + r)
            sets = {
                "camera": camera_rays(scenes.spawn[args.env], args.env, args.camera),
                "random": random_rays(prims, args.random, voxel, rng),
            }
            for kind, rays in sets.items():
                if len(rays[0]) == 0:
                    continue
                name = f"{preset} #{args.env} {kind}"
                row = compare(
                    name, r, rays, len(triangles), tg, em, prims, max_distance, voxel, args.reps
                )
                rows.append(row)
                print(format_row(row), file=sys.stderr, flush=True)
    return rows


def format_row(row):
    cells = []
    for c in COLUMNS:
        v = row[c]
        if "Mrays/s" in c:
            cells.append(f"{v:.2f}")
        elif c.startswith("trackgen/Embree"):
            cells.append(f"{v:.2f}x")
        elif isinstance(v, float):
            cells.append(f"{100 * v:.1f}%")
        else:
            cells.append(str(v))
    return "| " + " | ".join(cells) + " |"


def table(rows):
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += [format_row(r) for r in rows]
    return "\n".join(lines)


def positive_ints(text):
    values = [int(v) for v in text.split(",") if v]
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: expected positive integers, comma-separated")
    return values


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--presets", default="rooms,forest,gates", help="scene presets, comma-separated"
    )
    ap.add_argument("--res", type=positive_ints, default=[128, 256], help="voxels per side, R,..")
    ap.add_argument("--cells", type=int, default=0, help="mesh cells per side (default: R)")
    ap.add_argument("--env", type=int, default=0, help="the env (global index)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--camera", type=int, default=64, help="camera side, pixels (0: none)")
    ap.add_argument("--random", type=int, default=4096, help="random rays (0: none)")
    ap.add_argument("--reps", type=int, default=15, help="timed calls per engine and ray set")
    ap.add_argument(
        "--embree-fast",
        action="store_true",
        help="Embree without RTC_SCENE_FLAG_ROBUST (embreex's default is robust)",
    )
    ap.add_argument("--json", help="also write the rows to this JSON file")
    args = ap.parse_args(argv)
    args.presets = [p for p in args.presets.split(",") if p]
    if args.reps < 1 or args.camera < 0 or args.random < 0 or args.env < 0:
        ap.error("--reps must be at least 1; --camera, --random and --env at least 0")
    rows = run(args)
    import embreex

    flags = "RTC_SCENE_FLAG_NONE" if args.embree_fast else "RTC_SCENE_FLAG_ROBUST"
    print(
        f"# one thread each; trackgen {trackgen.__version__}, embreex"
        f" {getattr(embreex, '__version__', '?')} ({flags}); medians of {args.reps} calls;"
        f" env {args.env}, seed {args.seed}"
    )
    print(table(rows))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return rows


if __name__ == "__main__":
    main()
