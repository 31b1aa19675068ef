"""A corpus generated as `env_range` shards on Ray, and read back as one.

    python examples/python/ray_corpus.py OUT --preset track --envs 100000 --shard-envs 10000

Each shard is a Ray task running `trackgen.write_corpus(OUT/shard-A-B, env_range=(A, B))`
(one thread per task: Ray spreads the tasks over the cluster's CPUs). Because every env is a pure
function of `(preset, seed, env, generation)`, shard `[A, B)` holds exactly rows `A..B` of the
single-process corpus, so `read_shards` — which checks that the shards agree on preset, seed,
generation, kind and `n_max` and tile `[0, N)` without gap or overlap — gives the same bytes as
reading a corpus written in one process (tested in interop/python/tests/test_ray_corpus.py).
"""

import argparse
import os

import numpy as np
import ray

import trackgen


@ray.remote
def _write_shard(out, preset, seed, generation, start, stop, chunk_envs):
    trackgen.write_corpus(out, preset, env_range=(start, stop), seed=seed,
                          generation=generation, chunk_envs=chunk_envs, threads=1)
    return out


def generate(out_dir, preset="track", n_envs=4096, shard_envs=1024, seed=0, generation=0,
             chunk_envs=4096):
    """Writes shards `shard-A-B` of envs `[0, n_envs)` under `out_dir` as Ray tasks (ray.init
    first); returns their directories in env order."""
    os.makedirs(out_dir, exist_ok=True)
    tasks = []
    for start in range(0, n_envs, shard_envs):
        stop = min(start + shard_envs, n_envs)
        path = os.path.join(out_dir, f"shard-{start:012d}-{stop:012d}")
        tasks.append(_write_shard.remote(path, preset, seed, generation, start, stop, chunk_envs))
    return ray.get(tasks)


SAME = ("preset_sha256", "seed", "generation", "n_max", "format_version")


def read_shards(dirs):
    """Reads shard corpora as one: a dict of NumPy arrays (rows in global env order) and the
    shared manifest fields with `env_range` of the whole. ValueError when the shards disagree or
    leave a gap or an overlap."""
    corpora = sorted((trackgen.Corpus(d) for d in dirs), key=lambda c: c.manifest["env_range"][0])
    if not corpora:
        raise ValueError("read_shards: no shard directories given")
    first = corpora[0].manifest
    end = first["env_range"][0]
    for c in corpora:
        m = c.manifest
        for key in SAME + ("kind",):
            if m.get(key) != first.get(key):
                raise ValueError(f"shard {m['env_range']}: {key} = {m.get(key)!r}, "
                                 f"expected {first.get(key)!r} (as the first shard)")
        if m["env_range"][0] != end:
            raise ValueError(f"shard {m['env_range']}: starts at {m['env_range'][0]}, "
                             f"expected {end} (the shards must tile the env range)")
        end = m["env_range"][1]
    parts = [c.read() for c in corpora]
    arrays = {}
    for name, first_view in parts[0].items():
        if isinstance(first_view, float):
            arrays[name] = first_view
        else:
            arrays[name] = np.concatenate([np.asarray(p[name]) for p in parts])
    manifest = {key: first.get(key) for key in SAME + ("kind", "preset_source")}
    manifest["env_range"] = [first["env_range"][0], end]
    return arrays, manifest


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--preset", default="track")
    ap.add_argument("--envs", type=int, default=4096)
    ap.add_argument("--shard-envs", type=int, default=1024)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--num-cpus", type=int, default=None)
    args = ap.parse_args()
    ray.init(num_cpus=args.num_cpus)
    dirs = generate(args.out, args.preset, args.envs, args.shard_envs, args.seed)
    arrays, manifest = read_shards(dirs)
    print(f"{len(dirs)} shards, envs {manifest['env_range']}, "
          f"valid fraction {float(np.mean(arrays['valid'])):.3f}")
