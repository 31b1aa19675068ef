"""Type stubs of the trackgen Python module (the Rust extension `trackgen._trackgen`)."""

import os
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

__version__: str

_Path = Union[str, "os.PathLike[str]"]
_ArrayLike = Any  # a C-contiguous NumPy array or a CPU DLPack tensor

class Array:
    """A zero-copy view of a buffer owned by a trackgen object (kept alive by the view).

    `numpy.asarray(view)` (array interface) and `numpy.from_dlpack(view)` / `torch.from_dlpack`
    (DLPack) give arrays over the same memory; outputs are read-only, bound inputs writable.
    """

    @property
    def shape(self) -> Tuple[int, ...]: ...
    @property
    def dtype(self) -> str: ...
    @property
    def readonly(self) -> bool: ...
    @property
    def owner(self) -> object: ...
    @property
    def __array_interface__(self) -> Dict[str, Any]: ...
    def __dlpack__(
        self,
        *,
        stream: Optional[Any] = None,
        max_version: Optional[Tuple[int, int]] = None,
        dl_device: Optional[Tuple[int, int]] = None,
        copy: Optional[bool] = None,
    ) -> Any: ...
    def __dlpack_device__(self) -> Tuple[int, int]: ...
    def __len__(self) -> int: ...

class Preset:
    """A resolved course preset: a built-in name or a TOML file path."""

    def __init__(self, name_or_path: str) -> None: ...
    @staticmethod
    def from_toml(text: str, source: str = "<string>") -> "Preset": ...
    @property
    def source(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def generator(self) -> str: ...
    @property
    def toml(self) -> str: ...
    @property
    def hash(self) -> str: ...
    @property
    def n_max(self) -> int: ...
    @property
    def half_width_m(self) -> float: ...
    @property
    def spacing_m(self) -> float: ...

_PresetArg = Union[Preset, str]

def presets() -> List[str]: ...
def scene_presets() -> List[str]: ...

_Device = str  # "cpu", "emulated", "cuda" or "cuda:N"

class Pipeline:
    """The batched track pipeline and its batch; `arrays` are zero-copy views written in place."""

    def __init__(
        self,
        preset: _PresetArg,
        n_envs: int,
        *,
        seed: int = 0,
        generation: int = 0,
        env_base: int = 0,
        threads: Optional[int] = None,
        device: _Device = "cpu",
    ) -> None: ...
    def generate(self, generation: int = 0) -> None: ...
    def regenerate(self, mask: _ArrayLike, advance: bool = True) -> None: ...
    @property
    def arrays(self) -> Dict[str, Union[Array, float]]: ...
    @property
    def n_envs(self) -> int: ...
    @property
    def n_max(self) -> int: ...
    @property
    def seed(self) -> int: ...
    @property
    def device(self) -> str: ...

class GatePipeline(Pipeline):
    """The batched gate-course pipeline (a preset with a `[gates]` section) and its batch: a
    `Pipeline` of gate courses (`n_max` is `G`, the gates per env)."""

    def __init__(
        self,
        preset: _PresetArg,
        n_envs: int,
        *,
        seed: int = 0,
        generation: int = 0,
        env_base: int = 0,
        threads: Optional[int] = None,
        device: _Device = "cpu",
    ) -> None: ...

class Course:
    """A batch of courses and the sim-time signals to race them."""

    def __init__(
        self,
        preset: _PresetArg,
        n_envs: int,
        *,
        mode: Optional[str] = None,
        seed: int = 0,
        threads: Optional[int] = None,
        env_base: int = 0,
        checkpoint_spacing_m: float = 25.0,
        max_checkpoints: int = 64,
        localize_window: int = 3,
        relocalize_m: Optional[float] = None,
        footprint_half_extents_m: Tuple[float, float] = (0.0, 0.0),
        wrong_way_tolerance_m: float = 0.0,
        device: _Device = "cpu",
    ) -> None: ...
    def bind(
        self,
        position: Optional[_ArrayLike] = None,
        orientation: Union[None, bool, _ArrayLike] = None,
        half_extents: Optional[_ArrayLike] = None,
    ) -> None: ...
    def unbind(self) -> None: ...
    @property
    def position(self) -> Optional[Array]: ...
    @property
    def orientation(self) -> Optional[Array]: ...
    @property
    def half_extents(self) -> Optional[Array]: ...
    def step(self) -> None: ...
    def reset(self, mask: _ArrayLike) -> None: ...
    def regenerate(self, mask: _ArrayLike, advance: bool = True) -> None: ...
    def generate(self, generation: int) -> None: ...
    def lookahead(self, points: int, spacing_m: float) -> Tuple[Array, Array]: ...
    def pure_pursuit(
        self, speed_m: Optional[float] = None, lookahead_m: Optional[float] = None
    ) -> None: ...
    @property
    def outputs(self) -> Dict[str, Array]: ...
    @property
    def geometry(self) -> Dict[str, Union[Array, float]]: ...
    @property
    def track(self) -> Dict[str, Array]: ...
    @property
    def gates(self) -> Optional[Dict[str, Union[Array, float]]]: ...
    @property
    def generation(self) -> Array: ...
    @property
    def n_envs(self) -> int: ...
    @property
    def mode(self) -> str: ...
    @property
    def seed(self) -> int: ...
    @property
    def preset(self) -> Preset: ...
    @property
    def device(self) -> str: ...

def write_corpus(
    out: _Path,
    preset: Optional[_PresetArg] = None,
    n_envs: Optional[int] = None,
    *,
    seed: int = 0,
    generation: int = 0,
    env_range: Optional[Tuple[int, int]] = None,
    chunk_envs: int = 4096,
    threads: Optional[int] = None,
    device: _Device = "cpu",
) -> Dict[str, Any]: ...
def merge_corpora(
    out: _Path, shards: Sequence[_Path], *, chunk_rows: int = 4096
) -> Dict[str, Any]: ...

class Corpus:
    """A corpus directory, validated like the Rust reader."""

    def __init__(self, dir: _Path) -> None: ...
    @property
    def manifest(self) -> Dict[str, Any]: ...
    @property
    def n_envs(self) -> int: ...
    @property
    def kind(self) -> str: ...
    def read(self, start: int = 0, stop: Optional[int] = None) -> Dict[str, Array]: ...
    def verify(self) -> None: ...

class ScenePrimitives:
    """One env's analytic scene primitives (what `Scenes.generate` voxelises for that env)."""

    def __init__(self, preset: str, env: int, *, seed: int = 0, generation: int = 0) -> None: ...
    @property
    def origin(self) -> Tuple[float, float, float]: ...
    @property
    def size_m(self) -> float: ...
    @property
    def spawn(self) -> Tuple[float, float, float]: ...
    @property
    def n_primitives(self) -> int: ...
    def distance(self, points: _ArrayLike) -> Array: ...
    def mesh(self, cells: int) -> Tuple[Array, Array]: ...

class Scenes:
    """Per-env SDF scenes in one shared voxel-DAG pool, and batched ray casts."""

    @staticmethod
    def generate(
        preset: str,
        n_envs: int,
        *,
        seed: int = 0,
        generation: int = 0,
        resolution: Optional[int] = None,
        threads: Optional[int] = None,
    ) -> "Scenes": ...
    @staticmethod
    def open(path: _Path) -> "Scenes": ...
    def write(self, path: _Path) -> int: ...
    @property
    def n_envs(self) -> int: ...
    @property
    def resolution(self) -> int: ...
    @property
    def spawn(self) -> List[Tuple[float, float, float]]: ...
    def cast_rays(
        self,
        origins: _ArrayLike,
        directions: _ArrayLike,
        *,
        max_distance: float,
        no_hit_value: Optional[float] = None,
        max_steps: Optional[int] = None,
        env_of_ray: Optional[_ArrayLike] = None,
        threads: Optional[int] = None,
    ) -> Tuple[Array, Array, Array]: ...
