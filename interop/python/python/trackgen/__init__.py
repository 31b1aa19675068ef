"""trackgen: deterministic batched race tracks, gate courses and SDF scenes for parallel RL
environments, generated, raced and regenerated in process.

    import numpy as np, trackgen
    course = trackgen.Course("track", 4096, seed=7)
    course.bind()                                # positions start at the spawn poses
    pos = np.asarray(course.position)            # writable, zero-copy: the course reads it
    course.step()
    progress = np.asarray(course.outputs["progress"])
    course.regenerate(np.asarray(course.outputs["lap_completed"]))

Every batch array and output is a `trackgen.Array`: a zero-copy view supporting the NumPy array
interface (`numpy.asarray`) and DLPack (`numpy.from_dlpack`, `torch.from_dlpack`) that keeps its
owner alive. Buffers are written in place: a view always shows the latest call's values.
"""

from ._trackgen import (
    Array,
    Corpus,
    Course,
    GatePipeline,
    Pipeline,
    Preset,
    ScenePrimitives,
    Scenes,
    __version__,
    merge_corpora,
    presets,
    scene_presets,
    write_corpus,
)

__all__ = [
    "Array",
    "Corpus",
    "Course",
    "GatePipeline",
    "Pipeline",
    "Preset",
    "ScenePrimitives",
    "Scenes",
    "__version__",
    "merge_corpora",
    "presets",
    "scene_presets",
    "write_corpus",
]
