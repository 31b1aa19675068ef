"""Ray casts beside Embree (examples/python/bench_embree.py) at a tiny size, and the analytic
scene primitives it triangulates (`trackgen.ScenePrimitives`)."""

import json

import numpy as np
import pytest

import trackgen
from conftest import require

try:
    import embreex  # noqa: F401  (an optional dependency: pip install embreex)
except ImportError:
    embreex = None


def test_scene_primitives_mesh_lies_on_the_exact_surface():
    prims = trackgen.ScenePrimitives("forest", 1, seed=3)
    assert prims.n_primitives > 0 and prims.size_m > 0
    spawn = np.array([prims.spawn], np.float32)
    assert np.asarray(prims.distance(spawn))[0] > 0  # the spawn point is free
    cells = 32
    vertices, triangles = prims.mesh(cells)
    v, t = np.asarray(vertices), np.asarray(triangles)
    assert v.dtype == np.float32 and v.ndim == 2 and v.shape[1] == 3 and len(v) > 0
    assert t.dtype == np.uint32 and t.ndim == 2 and t.shape[1] == 3 and len(t) > 0
    assert t.max() < len(v)
    lo = np.asarray(prims.origin, np.float32)
    assert (v >= lo - 1e-4).all() and (v <= lo + prims.size_m + 1e-4).all()
    # Marching tetrahedra puts every vertex on a cell edge where the field, linear along the
    # edge, is zero: the exact field there is within a cell of zero (far less on faces).
    d = np.asarray(prims.distance(v))
    assert d.shape == (len(v),)
    assert np.abs(d).max() < prims.size_m / cells
    # The same env under another generation is another scene; the same arguments the same one.
    again = np.asarray(trackgen.ScenePrimitives("forest", 1, seed=3).mesh(cells)[0])
    assert again.tobytes() == v.tobytes()
    other = trackgen.ScenePrimitives("forest", 1, seed=3, generation=1)
    assert np.asarray(other.mesh(cells)[0]).tobytes() != v.tobytes()


def test_scene_primitives_errors():
    prims = trackgen.ScenePrimitives("gates", 0)
    with pytest.raises(ValueError, match="scene mesh resolution 1"):
        prims.mesh(1)
    with pytest.raises(ValueError, match="points: expected shape"):
        prims.distance(np.zeros((4, 2), np.float32))
    with pytest.raises(ValueError, match="points: expected dtype float32"):
        prims.distance(np.zeros((4, 3), np.float64))
    with pytest.raises(ValueError):
        trackgen.ScenePrimitives("no-such-scene-preset", 0)


def test_bench_embree_table_and_agreement(tmp_path, capsys):
    if embreex is None:
        require("embree")
    import bench_embree

    out = tmp_path / "rows.json"
    argv = ["--presets", "gates,forest", "--res", "64", "--camera", "16", "--random", "256"]
    rows = bench_embree.main(argv + ["--reps", "2", "--json", str(out)])
    printed = [line for line in capsys.readouterr().out.splitlines() if line.startswith("|")]
    assert printed[0] == "| " + " | ".join(bench_embree.COLUMNS) + " |"
    body = printed[2:]
    assert len(body) == 4 and len(rows) == 4
    assert all(line.count("|") == len(bench_embree.COLUMNS) + 1 for line in body)
    assert json.loads(out.read_text()) == rows
    names = [r["scene"] for r in rows]
    assert names == [f"{p} #0 {k}" for p in ("gates", "forest") for k in ("camera", "random")]
    for r in rows:
        assert r["R"] == 64 and r["rays"] == 256 and r["triangles"] > 0
        assert r["trackgen Mrays/s"] > 0 and r["Embree Mrays/s"] > 0
        assert r["hits trackgen"] > 0 and r["hits Embree"] > 0
        # The same scene: hit/miss and depth agree but for rays clipping edges (where the mesh's
        # linear cut and trackgen's trilinear surface differ by a fraction of a voxel).
        assert r["hit/miss agree"] >= 0.97, r
        assert r["depth within 1 voxel"] >= 0.95, r
        apart, closer = r["apart (trackgen/Embree closer to exact)"].split(" ")
        tg_closer, em_closer = (int(c) for c in closer.strip("()").split("/"))
        assert tg_closer + em_closer <= int(apart) <= 0.05 * r["rays"]
