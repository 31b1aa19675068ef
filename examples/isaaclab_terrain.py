"""An Isaac Lab terrain of one env's road heightfield from a trackgen corpus.

    trackgen generate --envs 16 --heightfield 128 --out corpus
    python examples/isaaclab_terrain.py corpus 3              # prints the terrain's summary

The recipe: Isaac Lab's height-field terrains are `int16` arrays indexed [x, y], scaled by
`horizontal_scale` (metres per sample) and `vertical_scale` (metres per unit), with sample
(i, j) at (i·horizontal_scale, j·horizontal_scale) from the terrain's corner
(`isaaclab.terrains.height_field.utils.convert_height_field_to_mesh`). trackgen's grid is
[row j along +y, column i along +x] at texel centres, so `height_field()` transposes it,
quantises it, and returns the world position of sample (0, 0): the first texel centre,
(x_min + d/2, y_min + d/2, 0). In Isaac Lab, use it in a sub-terrain function:

    from isaaclab.terrains.height_field.utils import convert_height_field_to_mesh
    hf, h_scale, v_scale, corner = height_field("corpus", 3)
    vertices, triangles = convert_height_field_to_mesh(hf, h_scale, v_scale, slope_threshold=None)
    mesh = trimesh.Trimesh(vertices=vertices + corner, faces=triangles)

and hand `mesh` to a `TerrainImporterCfg(terrain_type="usd" | "generator", ...)` (or import the
road mesh of `trackgen export --env 3 --out env3.glb` directly: Isaac Sim is z up like
trackgen). Isaac Lab itself is not needed to run this file: `mesh_arrays()` builds the same
vertices and triangles with numpy, which is what the tests check.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "interop", "python"))

import numpy as np  # noqa: E402

import trackgen_corpus  # noqa: E402


def height_field(corpus_dir, env, vertical_scale=0.005):
    """(hf int16 [R, R] indexed [x, y], horizontal_scale, vertical_scale, corner [3]) of global
    env `env`: sample (i, j) is at corner + (i·h, j·h, hf[i, j]·vertical_scale)."""
    corpus = trackgen_corpus.load(corpus_dir, mmap=True)
    if "heightfield" not in corpus:
        raise SystemExit(f"{corpus_dir}: no heightfield.npy (write it with `trackgen generate --heightfield R`)")
    a, b = corpus["manifest"]["env_range"]
    if not a <= env < b:
        raise SystemExit(f"env {env}: {corpus_dir} holds envs {a}..{b}")
    heights = np.asarray(corpus["heightfield"][env - a], dtype=np.float64)
    if not np.isfinite(heights).all():
        raise SystemExit(f"env {env}: its track failed validity (NaN heightfield)")
    (x0, y0), (x1, _) = np.asarray(corpus["heightfield_bounds"][env - a], dtype=np.float64)
    d = (x1 - x0) / heights.shape[0]
    units = np.round(heights.T / vertical_scale)
    if np.abs(units).max() > np.iinfo(np.int16).max:
        raise SystemExit(f"env {env}: heights exceed int16 at vertical_scale {vertical_scale}; pass a larger one")
    return units.astype(np.int16), d, vertical_scale, np.array([x0 + d / 2, y0 + d / 2, 0.0])


def mesh_arrays(hf, horizontal_scale, vertical_scale, corner):
    """World vertices [R·R, 3] (sample (i, j) at index i·R + j) and triangles [2(R-1)², 3]
    facing up, of the height field (what convert_height_field_to_mesh gives without slope
    correction, moved to the corner)."""
    rows, cols = hf.shape
    i, j = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
    vertices = np.stack([i * horizontal_scale, j * horizontal_scale, hf * vertical_scale], axis=-1).reshape(-1, 3)
    vertices = vertices + corner
    a = (i[:-1, :-1] * cols + j[:-1, :-1]).reshape(-1)
    b, c, dd = a + cols, a + 1, a + cols + 1
    triangles = np.concatenate([np.stack([a, b, dd], 1), np.stack([a, dd, c], 1)])
    return vertices, triangles.astype(np.uint32)


def main(argv):
    if len(argv) != 2:
        print("usage: python isaaclab_terrain.py CORPUS_DIR ENV", file=sys.stderr)
        return 2
    hf, h, v, corner = height_field(argv[0], int(argv[1]))
    vertices, triangles = mesh_arrays(hf, h, v, corner)
    print(f"height field {hf.shape} int16, horizontal_scale {h:.6g} m, vertical_scale {v:.6g} m, "
          f"corner {corner.round(4).tolist()}; mesh {len(vertices)} vertices, {len(triangles)} triangles")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
