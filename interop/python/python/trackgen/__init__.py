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


class GatePipeline(Pipeline):
    """The batched gate-course pipeline (a preset with a `[gates]` section) and its batch: a
    `Pipeline` of gate courses, the same implementation (`trackgen::course::Courses`).

    `arrays`: `pos [E, G, 3]`, `quat [E, G, 4]` (`[x, y, z, w]`), `size [E, G, 2]`, `count`,
    `valid`, `attempts`, `generation` `[E]`, and `thickness_m`; `n_max` is `G`.
    `GatePipeline(preset, n_envs, *, seed=0, generation=0, env_base=0, threads=None, device="cpu")`.
    """

    __slots__ = ()
    __module__ = "trackgen"
    _gates = True


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
