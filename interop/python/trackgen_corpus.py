"""Load a trackgen corpus (format v1) with numpy.

    import trackgen_corpus
    corpus = trackgen_corpus.load("corpus")
    corpus["center"].shape      # (N, N_max, 3) float32, NaN past corpus["count"][i]
    corpus["manifest"]["seed"]

Track corpora hold center, outer, inner, tangent, normal, arclen, count, length, valid, attempts;
gate corpora (manifest "kind": "gates") hold gate_pos, gate_quat, gate_size, gate_count, valid,
attempts. The loader reads whatever arrays the manifest lists.

Depends on numpy only. The format is described in the trackgen README ("Corpus format").
"""

import hashlib
import json
import os

import numpy as np

FORMAT = "trackgen-corpus"
FORMAT_VERSION = 1


def load(path, mmap=False, verify=False):
    """Return a dict of the corpus's arrays (by name) plus "manifest" (the parsed manifest.json).

    mmap: memory-map the arrays read-only instead of reading them (for corpora bigger than RAM).
    verify: check every file's SHA-256 against the manifest first.
    Raises ValueError naming the file when the corpus is not what the manifest says.
    """
    manifest_path = os.path.join(path, "manifest.json")
    with open(manifest_path, "r", encoding="utf-8") as f:
        manifest = json.load(f)
    if manifest.get("format") != FORMAT:
        raise ValueError(f"{manifest_path}: format {manifest.get('format')!r}, expected {FORMAT!r}")
    if manifest.get("format_version") != FORMAT_VERSION:
        raise ValueError(
            f"{manifest_path}: format_version {manifest.get('format_version')!r}, "
            f"this loader reads {FORMAT_VERSION}"
        )
    out = {"manifest": manifest}
    for name, entry in manifest["arrays"].items():
        file = os.path.join(path, entry["file"])
        if verify:
            digest = hashlib.sha256()
            with open(file, "rb") as f:
                for block in iter(lambda: f.read(1 << 20), b""):
                    digest.update(block)
            if digest.hexdigest() != entry["sha256"]:
                raise ValueError(f"{file}: SHA-256 does not match the manifest")
        array = np.load(file, mmap_mode="r" if mmap else None, allow_pickle=False)
        if array.dtype != np.dtype(entry["dtype"]) or list(array.shape) != entry["shape"]:
            raise ValueError(
                f"{file}: holds {array.dtype.str} {list(array.shape)}, "
                f"the manifest says {entry['dtype']} {entry['shape']}"
            )
        out[name] = array
    return out
