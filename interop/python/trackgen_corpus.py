"""Load a trackgen corpus (format v1) with numpy.

    import trackgen_corpus
    corpus = trackgen_corpus.load("corpus")
    corpus["center"].shape      # (N, N_max, 3) float32, NaN past corpus["count"][i]
    corpus["manifest"]["seed"]

Track corpora hold center, outer, inner, tangent, normal, arclen, count, length, valid, attempts;
gate corpora (manifest "kind": "gates") hold gate_pos, gate_quat, gate_size, gate_count, valid,
attempts. A track corpus written with `--heightfield R` also holds heightfield [N, R, R] and
heightfield_bounds [N, 2, 2] (manifest "heightfield": {"resolution", "margin_m"}); one written
with `--props` holds prop_pos [N, P, 3], prop_quat [N, P, 4], prop_length [N, P] and prop_count
[N] (manifest "props": {..., "max_props": P}).

The loader checks what the Rust reader (`trackgen::corpus::Corpus::open`) checks: the format and
its version, the kind, `env_range` (two integers, start < end), `n_max` (>= 1), every array of the
kind listed with its dtype and shape, plain file names inside the corpus directory (no `/`, no
`..`, no hidden files), and each file's header. Every problem is a `CorpusError` (a `ValueError`)
naming the file.

From the command line (exit status 0: valid, 2: not a valid corpus):

    python -m trackgen_corpus check DIR [--verify]

Depends on numpy only. The format is described in the trackgen README ("Corpus format").
"""

import hashlib
import json
import os
import sys

import numpy as np

FORMAT = "trackgen-corpus"
FORMAT_VERSION = 1

# (name, dtype, per-point components or None for per-env arrays), as in src/corpus/manifest.rs.
TRACK_ARRAYS = [
    ("center", "<f4", 3),
    ("outer", "<f4", 3),
    ("inner", "<f4", 3),
    ("tangent", "<f4", 3),
    ("normal", "<f4", 3),
    ("arclen", "<f4", 1),
    ("count", "<i4", None),
    ("length", "<f4", None),
    ("valid", "|u1", None),
    ("attempts", "|u1", None),
]
GATE_ARRAYS = [
    ("gate_pos", "<f4", 3),
    ("gate_quat", "<f4", 4),
    ("gate_size", "<f4", 2),
    ("gate_count", "<i4", None),
    ("valid", "|u1", None),
    ("attempts", "|u1", None),
]
REQUIRED_KEYS = [
    "format",
    "format_version",
    "crate_version",
    "preset_source",
    "preset_toml",
    "preset_sha256",
    "seed",
    "generation",
    "env_range",
    "n_max",
    "arrays",
    "stats",
]


class CorpusError(ValueError):
    """A corpus that is not what its manifest says (or no corpus at all); names the file."""

    def __init__(self, path, message):
        super().__init__(f"{path}: {message}")
        self.path = path


def _is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


def _shape(per_point, n_envs, n_max):
    if per_point is None:
        return [n_envs]
    if per_point == 1:
        return [n_envs, n_max]
    return [n_envs, n_max, per_point]


def _optional_arrays(manifest, manifest_path, n_envs):
    """(name, dtype, shape) of the optional arrays the manifest records, as in
    src/corpus/manifest.rs (CorpusExtras::sets)."""
    out = []
    height = manifest.get("heightfield")
    if height is not None:
        r = height.get("resolution") if isinstance(height, dict) else None
        if not (_is_int(r) and 2 <= r <= 4096):
            raise CorpusError(manifest_path, f"`heightfield` = {height!r}: expected {{\"resolution\": 2..4096, \"margin_m\": M}}")
        out += [("heightfield", "<f4", [n_envs, r, r]), ("heightfield_bounds", "<f4", [n_envs, 2, 2])]
    props = manifest.get("props")
    if props is not None:
        p = props.get("max_props") if isinstance(props, dict) else None
        if not (_is_int(p) and 3 <= p <= 65536):
            raise CorpusError(manifest_path, f"`props` = {props!r}: expected {{..., \"max_props\": 3..65536}}")
        out += [
            ("prop_pos", "<f4", [n_envs, p, 3]),
            ("prop_quat", "<f4", [n_envs, p, 4]),
            ("prop_length", "<f4", [n_envs, p]),
            ("prop_count", "<i4", [n_envs]),
        ]
    if out and manifest.get("kind") is not None:
        raise CorpusError(manifest_path, "`heightfield` / `props` in a gate corpus: expected them in track corpora only")
    return out


def read_manifest(path):
    """The checked manifest of the corpus directory `path` (a dict), and its arrays as
    (name, dtype, shape)."""
    manifest_path = os.path.join(path, "manifest.json")
    if not os.path.isfile(manifest_path):
        raise CorpusError(manifest_path, "missing: not a trackgen corpus directory")
    try:
        with open(manifest_path, "r", encoding="utf-8") as f:
            manifest = json.load(f)
    except UnicodeDecodeError as e:
        raise CorpusError(manifest_path, f"not UTF-8 text ({e})") from None
    except json.JSONDecodeError as e:
        raise CorpusError(manifest_path, f"not valid JSON: {e}") from None
    except OSError as e:
        raise CorpusError(manifest_path, f"cannot be read: {e.strerror or e}") from None
    if not isinstance(manifest, dict):
        raise CorpusError(manifest_path, "expected a JSON object")
    if manifest.get("format") != FORMAT:
        raise CorpusError(manifest_path, f"`format` = {manifest.get('format')!r}: expected {FORMAT!r}")
    if manifest.get("format_version") != FORMAT_VERSION:
        raise CorpusError(
            manifest_path,
            f"`format_version` = {manifest.get('format_version')!r}: this loader reads {FORMAT_VERSION}",
        )
    missing = [k for k in REQUIRED_KEYS if k not in manifest]
    if missing:
        raise CorpusError(manifest_path, f"bad manifest: missing {', '.join('`' + k + '`' for k in missing)}")
    kind = manifest.get("kind")
    if kind is None:
        arrays = TRACK_ARRAYS
    elif kind == "gates":
        arrays = GATE_ARRAYS
    else:
        raise CorpusError(manifest_path, f"`kind` = {kind!r}: expected no `kind` (tracks) or \"gates\"")
    env_range = manifest["env_range"]
    if not (isinstance(env_range, list) and len(env_range) == 2 and all(_is_int(v) and v >= 0 for v in env_range)):
        raise CorpusError(manifest_path, f"`env_range` = {env_range!r}: expected [start, end], two integers >= 0")
    if env_range[0] >= env_range[1]:
        raise CorpusError(manifest_path, f"`env_range` = {env_range!r}: expected start < end")
    n_max = manifest["n_max"]
    if not (_is_int(n_max) and n_max >= 1):
        raise CorpusError(manifest_path, f"`n_max` = {n_max!r}: expected an integer >= 1")
    for key in ("seed", "generation"):
        if not (_is_int(manifest[key]) and manifest[key] >= 0):
            raise CorpusError(manifest_path, f"`{key}` = {manifest[key]!r}: expected an integer >= 0")
    if not isinstance(manifest["arrays"], dict):
        raise CorpusError(manifest_path, "`arrays`: expected an object of array entries")
    n_envs = env_range[1] - env_range[0]
    arrays = [(name, dtype, _shape(per_point, n_envs, n_max)) for name, dtype, per_point in arrays]
    arrays += _optional_arrays(manifest, manifest_path, n_envs)
    for name, dtype, expected in arrays:
        entry = manifest["arrays"].get(name)
        if not isinstance(entry, dict):
            raise CorpusError(manifest_path, f"no entry for array `{name}`")
        if entry.get("dtype") != dtype or entry.get("shape") != expected:
            raise CorpusError(
                manifest_path,
                f"array `{name}` is {entry.get('dtype')} {entry.get('shape')}: expected {dtype} {expected}",
            )
        file = entry.get("file")
        if not isinstance(file, str) or not file or "/" in file or "\\" in file or file.startswith("."):
            raise CorpusError(
                manifest_path, f"array `{name}` file {file!r}: expected a plain file name inside the corpus"
            )
        if not isinstance(entry.get("sha256"), str):
            raise CorpusError(manifest_path, f"array `{name}`: `sha256` missing")
    return manifest, arrays


def load(path, mmap=False, verify=False):
    """Return a dict of the corpus's arrays (by name) plus "manifest" (the parsed manifest.json).

    mmap: memory-map the arrays read-only instead of reading them (for corpora bigger than RAM).
    verify: check every file's SHA-256 against the manifest first.
    Raises CorpusError (a ValueError) naming the file when the corpus is not what the manifest
    says, or is no corpus.
    """
    manifest, arrays = read_manifest(path)
    out = {"manifest": manifest}
    for name, _, _ in arrays:
        entry = manifest["arrays"][name]
        file = os.path.join(path, entry["file"])
        try:
            if verify:
                digest = hashlib.sha256()
                with open(file, "rb") as f:
                    for block in iter(lambda: f.read(1 << 20), b""):
                        digest.update(block)
                if digest.hexdigest() != entry["sha256"]:
                    raise CorpusError(file, "SHA-256 does not match the manifest")
            array = np.load(file, mmap_mode="r" if mmap else None, allow_pickle=False)
        except CorpusError:
            raise
        except FileNotFoundError:
            raise CorpusError(file, "no such file") from None
        except (OSError, ValueError, EOFError) as e:
            raise CorpusError(file, f"not a readable .npy file: {e}") from None
        if not isinstance(array, np.ndarray):
            raise CorpusError(file, "not a single .npy array")
        if array.dtype != np.dtype(entry["dtype"]) or list(array.shape) != entry["shape"]:
            raise CorpusError(
                file,
                f"holds {array.dtype.str} {list(array.shape)}, the manifest says {entry['dtype']} {entry['shape']}",
            )
        out[name] = array
    return out


def main(argv=None):
    """`python -m trackgen_corpus check DIR [--verify]`: 0 when DIR is a valid corpus, else 2."""
    args = list(sys.argv[1:] if argv is None else argv)
    verify = "--verify" in args
    args = [a for a in args if a != "--verify"]
    if len(args) != 2 or args[0] != "check":
        print("usage: python -m trackgen_corpus check DIR [--verify]", file=sys.stderr)
        return 2
    try:
        corpus = load(args[1], mmap=True, verify=verify)
    except CorpusError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    m = corpus["manifest"]
    a, b = m["env_range"]
    kind = "gate" if m.get("kind") == "gates" else "track"
    print(f"ok: {args[1]}: {kind} corpus of envs {a}..{b}, n_max {m['n_max']}{', checksums verified' if verify else ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
