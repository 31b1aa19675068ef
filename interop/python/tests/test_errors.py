"""Every error path: Python exceptions carrying the Rust message, naming argument and value."""

import numpy as np
import pytest

import trackgen


def test_preset_errors():
    with pytest.raises(ValueError, match="nonexistent"):
        trackgen.Preset("nonexistent")
    with pytest.raises(ValueError, match="half_width_m"):
        trackgen.Preset.from_toml("[track]\nhalf_width_m = -1.0\n", "bad.toml")
    with pytest.raises(TypeError, match="preset"):
        trackgen.Pipeline(3.5, 4)


def test_missing_preset_file(tmp_path):
    with pytest.raises((FileNotFoundError, ValueError), match="missing.toml"):
        trackgen.Preset(str(tmp_path / "missing.toml"))


def test_bind_shape_dtype_contiguity():
    c = trackgen.Course("track", 4)
    with pytest.raises(ValueError, match=r"position: expected shape \(4, 3\), got \(4, 2\)"):
        c.bind(position=np.zeros((4, 2), np.float32))
    with pytest.raises(ValueError, match="position: expected dtype float32, got float64"):
        c.bind(position=np.zeros((4, 3)))
    with pytest.raises(ValueError, match="position: expected a C-contiguous array"):
        c.bind(position=np.zeros((3, 4), np.float32).T)
    with pytest.raises(TypeError, match="position: expected a NumPy array or a DLPack tensor, got list"):
        c.bind(position=[[0.0, 0.0, 0.0]] * 4)
    with pytest.raises(ValueError, match=r"orientation: expected shape \(4, 4\)"):
        c.bind(orientation=np.zeros((4, 3), np.float32))


def test_step_before_bind_and_mask_errors():
    c = trackgen.Course("track", 4)
    with pytest.raises(ValueError, match="before bind"):
        c.step()
    with pytest.raises(ValueError, match="before bind"):
        c.lookahead(4, 2.0)
    with pytest.raises(ValueError, match=r"mask: expected shape \(4,\), got \(5,\)"):
        c.reset(np.zeros(5, np.uint8))
    with pytest.raises(ValueError, match="mask: expected dtype uint8 \\(or bool\\), got int64"):
        c.regenerate(np.zeros(4, np.int64))
    c.regenerate(np.zeros(4, bool))  # bool masks are accepted


def test_course_arguments():
    with pytest.raises(ValueError, match='mode = "fly"'):
        trackgen.Course("track", 2, mode="fly")
    with pytest.raises(ValueError, match="checkpoint_spacing_m"):
        trackgen.Course("track", 2, checkpoint_spacing_m=0.0)
    with pytest.raises(ValueError, match="thread count"):
        trackgen.Pipeline("track", 2, threads=1_000_000)
    c = trackgen.Course("track", 2)
    c.bind()
    with pytest.raises(ValueError, match="spacing_m = 0"):
        c.lookahead(4, 0.0)
    with pytest.raises(ValueError, match="points = 0"):
        c.lookahead(0, 1.0)


def test_file_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope"):
        trackgen.Corpus(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="manifest.json: missing: not a trackgen corpus"):
        trackgen.Corpus(tmp_path / "empty")
    (tmp_path / "empty" / "manifest.json").write_text("{")
    with pytest.raises(ValueError, match="manifest.json"):
        trackgen.Corpus(tmp_path / "empty")
    with pytest.raises(FileNotFoundError, match="none.scene"):
        trackgen.Scenes.open(tmp_path / "none.scene")
    (tmp_path / "junk.scene").write_bytes(b"not a scene file")
    with pytest.raises(ValueError, match="junk.scene"):
        trackgen.Scenes.open(tmp_path / "junk.scene")
    trackgen.write_corpus(tmp_path / "c", "track", 4)
    with pytest.raises(ValueError, match="exists"):
        trackgen.write_corpus(tmp_path / "c", "track", 4)
    with pytest.raises(OSError):
        trackgen.write_corpus(tmp_path / "no" / "such" / "dir", "track", 4)
    with pytest.raises(ValueError, match="expected n_envs or env_range"):
        trackgen.write_corpus(tmp_path / "d")


def test_ray_errors():
    s = trackgen.Scenes.generate("rooms", 2, resolution=32)
    with pytest.raises(ValueError, match=r"directions: expected shape \(2, 5, 3\), got \(2, 4, 3\)"):
        s.cast_rays(np.zeros((2, 5, 3), np.float32), np.zeros((2, 4, 3), np.float32), max_distance=5.0)
    with pytest.raises(ValueError, match="max_distance"):
        s.cast_rays(np.zeros((2, 1, 3), np.float32), np.ones((2, 1, 3), np.float32), max_distance=-1.0)
    with pytest.raises(ValueError, match="env_of_ray"):
        s.cast_rays(np.zeros((3, 3), np.float32), np.ones((3, 3), np.float32), max_distance=5.0,
                    env_of_ray=np.array([0, 1, 7], np.uint32))
