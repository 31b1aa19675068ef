"""A MuJoCo `hfield` of one env's road heightfield from a trackgen corpus.

    trackgen generate --envs 16 --heightfield 128 --out corpus
    python examples/mujoco_hfield.py corpus 3 > env3.xml      # an MJCF model with the terrain

Reads the corpus with the numpy loader (interop/python/trackgen_corpus.py): `heightfield.npy`
[N, R, R] (row j along +y, column i along +x, heights in metres at texel centres) and
`heightfield_bounds.npy` [N, 2, 2] ([[x_min, y_min], [x_max, y_max]]).

How the grid maps onto MuJoCo's hfield (z up, metres, as trackgen):
- MuJoCo puts elevation sample (r, c) (row-major, `nrow` × `ncol`) at
  x = -size[0] + 2·size[0]·c/(ncol-1), y = -size[1] + 2·size[1]·r/(nrow-1) in the geom's frame,
  so rows run along +y like trackgen's; the samples sit on the grid's outermost points, so the
  half sizes are those of the texel *centres*: (x_max - x_min - d)/2 with d the texel size, and
  the geom sits at the centre of the bounds.
- MuJoCo scales elevation data in [0, 1] by size[2]: the heights are normalised here,
  size[2] = max - min (at least 1 mm for a flat road), and the geom is lowered to z = min, so
  sample k is at min + elevation[k]·size[2] = the trackgen height. size[3] is the base's depth
  below the lowest point.

Only numpy is needed to write the model; with the `mujoco` package installed, `--check` also
compiles it and prints the hfield's size.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "interop", "python"))

import numpy as np  # noqa: E402

import trackgen_corpus  # noqa: E402


def hfield(corpus_dir, env, base_m=1.0):
    """(nrow, ncol, size [4], pos [3], elevation [R*R] in [0, 1]) of global env `env`."""
    corpus = trackgen_corpus.load(corpus_dir, mmap=True)
    if "heightfield" not in corpus:
        raise SystemExit(f"{corpus_dir}: no heightfield.npy (write it with `trackgen generate --heightfield R`)")
    a, b = corpus["manifest"]["env_range"]
    if not a <= env < b:
        raise SystemExit(f"env {env}: {corpus_dir} holds envs {a}..{b}")
    heights = np.asarray(corpus["heightfield"][env - a], dtype=np.float64)
    (x0, y0), (x1, y1) = np.asarray(corpus["heightfield_bounds"][env - a], dtype=np.float64)
    if not np.isfinite(heights).all():
        raise SystemExit(f"env {env}: its track failed validity (NaN heightfield)")
    r = heights.shape[0]
    d = (x1 - x0) / r
    lo, hi = heights.min(), heights.max()
    span = max(hi - lo, 1e-3)
    size = [(x1 - x0 - d) / 2, (y1 - y0 - d) / 2, span, base_m]
    pos = [(x0 + x1) / 2, (y0 + y1) / 2, lo]
    elevation = ((heights - lo) / span).reshape(-1)
    return r, r, size, pos, elevation


def mjcf(corpus_dir, env):
    """An MJCF model (text) holding env `env`'s road heightfield as an hfield geom."""
    nrow, ncol, size, pos, elevation = hfield(corpus_dir, env)
    fmt = lambda v: " ".join(f"{x:.9g}" for x in v)  # noqa: E731
    return f"""<mujoco model="trackgen_env_{env}">
  <asset>
    <hfield name="road" nrow="{nrow}" ncol="{ncol}" size="{fmt(size)}"
            elevation="{fmt(elevation)}"/>
  </asset>
  <worldbody>
    <geom name="road" type="hfield" hfield="road" pos="{fmt(pos)}" rgba="0.3 0.3 0.32 1"/>
  </worldbody>
</mujoco>
"""


def main(argv):
    args = [a for a in argv if a != "--check"]
    if len(args) != 2:
        print("usage: python mujoco_hfield.py CORPUS_DIR ENV [--check] > model.xml", file=sys.stderr)
        return 2
    xml = mjcf(args[0], int(args[1]))
    if "--check" in argv:
        import mujoco

        model = mujoco.MjModel.from_xml_string(xml)
        print(f"compiled: hfield size {list(model.hfield_size[0])}", file=sys.stderr)
    sys.stdout.write(xml)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
