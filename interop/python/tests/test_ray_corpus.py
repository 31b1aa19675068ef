"""Sharded corpora on a local Ray instance merged into one corpus, byte-identical to one process,
and read as one by the Rust reader (the CLI), the Python module and the numpy loader."""

import os
import subprocess
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


def files(d):
    return {name: (d / name).read_bytes() for name in sorted(os.listdir(d))}


def test_ray_shards_merge_into_the_single_process_corpus(tmp_path, local_ray, cli):
    import ray_corpus

    dirs = ray_corpus.generate(str(tmp_path / "shards"), "track", 50, shard_envs=16, seed=5)
    assert len(dirs) == 4
    manifest = trackgen.merge_corpora(tmp_path / "merged", list(reversed(dirs)))
    assert manifest["env_range"] == [0, 50]
    trackgen.write_corpus(tmp_path / "one", "track", 50, seed=5)
    # Every file, manifest and statistics included, is the single-process corpus's.
    assert files(tmp_path / "merged") == files(tmp_path / "one")
    # The Python module reads the merged corpus as one ...
    merged = trackgen.Corpus(tmp_path / "merged")
    merged.verify()
    assert merged.n_envs == 50
    arrays = merged.read()
    # ... and so do the numpy-only loader and the Rust reader (`trackgen preview` opens it).
    sys.path.insert(0, str(ROOT / "interop" / "python"))
    import trackgen_corpus

    loaded = trackgen_corpus.load(str(tmp_path / "merged"))
    for name in ("center", "arclen", "length", "valid"):
        assert loaded[name].tobytes() == np.asarray(arrays[name]).tobytes(), name
    run = subprocess.run([str(cli), "preview", str(tmp_path / "merged"), "--out",
                          str(tmp_path / "sheet.png"), "--max", "50", "--cell", "32"],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "drew 50 tracks" in run.stdout


def test_merge_errors_name_the_shard_and_leave_nothing(tmp_path):
    for a, b in ((0, 4), (4, 7), (9, 12)):
        trackgen.write_corpus(tmp_path / f"s{a}", "track", env_range=(a, b), seed=1, threads=1)
    trackgen.write_corpus(tmp_path / "seed2", "track", env_range=(4, 7), seed=2, threads=1)
    before = sorted(os.listdir(tmp_path))
    with pytest.raises(ValueError, match=r"envs 7\.\.9 are in no shard"):
        trackgen.merge_corpora(tmp_path / "out", [tmp_path / "s0", tmp_path / "s4", tmp_path / "s9"])
    with pytest.raises(ValueError, match=r"overlaps"):
        trackgen.merge_corpora(tmp_path / "out", [tmp_path / "s4", tmp_path / "s4"])
    with pytest.raises(ValueError, match=r"seed2.*`seed` = 2: expected 1"):
        trackgen.merge_corpora(tmp_path / "out", [tmp_path / "s0", tmp_path / "seed2"])
    with pytest.raises(ValueError, match="no shards"):
        trackgen.merge_corpora(tmp_path / "out", [])
    with pytest.raises(FileNotFoundError, match="missing"):
        trackgen.merge_corpora(tmp_path / "out", [tmp_path / "missing"])
    assert sorted(os.listdir(tmp_path)) == before
