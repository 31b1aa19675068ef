"""A corpus generated as `env_range` shards on Ray, then merged into one corpus.

    python examples/python/ray_corpus.py OUT --preset track --envs 100000 --shard-envs 10000

Each shard is a Ray task running `trackgen.write_corpus(OUT/shards/shard-A-B, env_range=(A, B))`
(one thread per task: Ray spreads the tasks over the cluster's CPUs). Because every env is a pure
function of `(preset, seed, env, generation)`, shard `[A, B)` holds exactly rows `A..B` of the
single-process corpus, and `trackgen.merge_corpora` (the CLI's `trackgen merge`) writes
`OUT/corpus`: byte for byte the corpus one process writes, manifest included, which the Rust
reader, the Python module and the numpy loader read like any other (tested in
interop/python/tests/test_ray_corpus.py). The merge checks that the shards agree on preset, seed
and generation and tile `[0, N)` without gap or overlap.
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
    dirs = generate(os.path.join(args.out, "shards"), args.preset, args.envs, args.shard_envs,
                    args.seed)
    manifest = trackgen.merge_corpora(os.path.join(args.out, "corpus"), dirs)
    valid = np.asarray(trackgen.Corpus(os.path.join(args.out, "corpus")).read()["valid"])
    print(f"{len(dirs)} shards merged into {os.path.join(args.out, 'corpus')}, "
          f"envs {manifest['env_range']}, valid fraction {float(np.mean(valid)):.3f}")
