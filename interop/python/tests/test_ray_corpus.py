"""Sharded corpora on a local Ray instance read back as one, byte-identical to one process."""

import os
import sys

import numpy as np
import pytest

import trackgen
from conftest import ROOT, require

try:
    import ray
except ImportError:  # Ray is a test dependency; CI installs it (TRACKGEN_REQUIRE_RAY=1)
    ray = None


@pytest.fixture(scope="module")
def local_ray():
    if ray is None:
        require("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def test_ray_shards_equal_a_single_process_corpus(tmp_path, local_ray):
    import ray_corpus

    dirs = ray_corpus.generate(str(tmp_path / "shards"), "track", 50, shard_envs=16, seed=5)
    assert len(dirs) == 4
    arrays, manifest = ray_corpus.read_shards(dirs)
    assert manifest["env_range"] == [0, 50]
    trackgen.write_corpus(tmp_path / "one", "track", 50, seed=5)
    whole = trackgen.Corpus(tmp_path / "one").read()
    for name, view in whole.items():
        assert arrays[name].tobytes() == np.asarray(view).tobytes(), name
    # The numpy-only loader reads the single-process corpus to the same bytes.
    sys.path.insert(0, str(ROOT / "interop" / "python"))
    import trackgen_corpus

    loaded = trackgen_corpus.load(str(tmp_path / "one"))
    for name in ("center", "arclen", "length", "valid"):
        assert loaded[name].tobytes() == arrays[name].tobytes(), name
    # A gap between shards is refused.
    with pytest.raises(ValueError, match="tile the env range"):
        ray_corpus.read_shards([dirs[0], dirs[2]])
