"""`device=`: the emulated CUDA kernels give the CPU's bytes, bad values are ValueErrors naming
the argument, and `cuda` without a usable driver raises the library's CUDA unavailable message.
`Pipeline` and `GatePipeline` are one type (GatePipeline is the Pipeline of gate courses)."""

import os
import shutil

import numpy as np
import pytest

import trackgen
from conftest import require


def same(a, b, names):
    for name in names:
        assert np.asarray(a[name]).tobytes() == np.asarray(b[name]).tobytes(), name


def need_cxx():
    # The emulated backend compiles the CUDA kernels with the host C++ compiler.
    if shutil.which(os.environ.get("CXX", "g++")) is None:
        require("cxx")


TRACK = ["center", "outer", "inner", "tangent", "normal", "arclen", "count", "length", "valid",
         "attempts", "generation"]
GATES = ["pos", "quat", "size", "count", "valid", "attempts", "generation"]


def test_emulated_gives_the_cpu_bytes():
    need_cxx()
    cpu = trackgen.Pipeline("track", 6, seed=3, env_base=10)
    emu = trackgen.Pipeline("track", 6, seed=3, env_base=10, device="emulated")
    assert (cpu.device, emu.device) == ("cpu", "emulated")
    same(cpu.arrays, emu.arrays, TRACK)
    mask = np.array([1, 0, 0, 1, 0, 1], np.uint8)
    cpu.regenerate(mask)
    emu.regenerate(mask)
    same(cpu.arrays, emu.arrays, TRACK)

    g_cpu = trackgen.GatePipeline("gates", 4, seed=2)
    g_emu = trackgen.GatePipeline("gates", 4, seed=2, device="emulated")
    same(g_cpu.arrays, g_emu.arrays, GATES)

    c_cpu = trackgen.Course("track", 4, seed=5)
    c_emu = trackgen.Course("track", 4, seed=5, device="emulated")
    assert c_emu.device == "emulated"
    for c in (c_cpu, c_emu):
        c.bind(orientation=True)
        for _ in range(3):
            c.pure_pursuit()
            c.step()
    same(c_cpu.track, c_emu.track, list(c_cpu.track))
    same(c_cpu.outputs, c_emu.outputs, list(c_cpu.outputs))


def test_corpus_on_the_emulated_device_has_the_cpu_bytes(tmp_path):
    need_cxx()
    trackgen.write_corpus(tmp_path / "cpu", "track", 5, seed=1)
    trackgen.write_corpus(tmp_path / "emu", "track", 5, seed=1, device="emulated")
    for name in sorted(os.listdir(tmp_path / "cpu")):
        assert (tmp_path / "cpu" / name).read_bytes() == (tmp_path / "emu" / name).read_bytes(), name


@pytest.mark.parametrize("make", [
    lambda d: trackgen.Pipeline("track", 2, device=d),
    lambda d: trackgen.GatePipeline("gates", 2, device=d),
    lambda d: trackgen.Course("track", 2, device=d),
])
def test_bad_devices_are_value_errors_naming_the_argument(make):
    for bad in ("tpu", "cuda:x", "CPU", ""):
        with pytest.raises(ValueError, match=r"device = .*expected \"cpu\", \"emulated\""):
            make(bad)
    with pytest.raises(TypeError):
        make(0)


def test_cuda_without_a_driver_raises_the_library_message():
    try:
        p = trackgen.Pipeline("track", 4, seed=1, device="cuda")
    except RuntimeError as e:
        assert str(e).startswith("CUDA unavailable: "), e
        with pytest.raises(RuntimeError, match="^CUDA unavailable: "):
            trackgen.Course("track", 4, device="cuda:0")
        return
    # A machine with a GPU: the device writes the CPU's bytes.
    assert p.device == "cuda:0"
    same(p.arrays, trackgen.Pipeline("track", 4, seed=1).arrays, TRACK)


def test_gate_pipeline_is_the_pipeline_of_gate_courses():
    g = trackgen.GatePipeline("gates", 3, seed=4)
    assert isinstance(g, trackgen.Pipeline)
    assert g.n_envs == 3 and g.seed == 4 and g.n_max == np.asarray(g.arrays["pos"]).shape[1]
    assert repr(g) == 'trackgen.GatePipeline("gates", n_envs=3, seed=4, device="cpu")'
    t = trackgen.Pipeline("track", 3, seed=4)
    assert repr(t) == 'trackgen.Pipeline("track", n_envs=3, seed=4, device="cpu")'
    assert set(g.arrays) >= {"pos", "quat", "size", "thickness_m"}
    assert "center" in t.arrays and "pos" not in t.arrays
    # A gate pipeline needs a gate preset.
    with pytest.raises(ValueError, match="gates"):
        trackgen.GatePipeline("track", 2)
    # Masked regeneration through the shared implementation.
    before = np.asarray(g.arrays["pos"]).copy()
    g.regenerate(np.array([0, 1, 0], bool))
    after = np.asarray(g.arrays["pos"])
    assert np.asarray(g.arrays["generation"]).tolist() == [0, 1, 0]
    assert after[0].tobytes() == before[0].tobytes() and after[1].tobytes() != before[1].tobytes()
