"""Zero-copy views: the array interface, DLPack, read-only outputs, owners kept alive."""

import gc

import numpy as np
import pytest

import trackgen


def test_pipeline_arrays_shapes_and_dtypes():
    p = trackgen.Pipeline("track", 8, seed=3)
    a = p.arrays
    n_max = trackgen.Preset("track").n_max
    assert a["center"].shape == (8, n_max, 3) and a["center"].dtype == "float32"
    assert np.asarray(a["arclen"]).shape == (8, n_max)
    for name, dtype in [("count", np.uint32), ("length", np.float32), ("valid", np.uint8),
                        ("attempts", np.uint8), ("generation", np.uint32)]:
        arr = np.asarray(a[name])
        assert arr.shape == (8,) and arr.dtype == dtype, name
    count = np.asarray(a["count"])
    center = np.asarray(a["center"])
    for e in range(8):
        assert np.isfinite(center[e, : count[e]]).all()
        assert np.isnan(center[e, count[e]:]).all()
    assert repr(a["center"]) == f"trackgen.Array(shape=(8, {n_max}, 3), dtype=float32, readonly=True)"


def test_numpy_and_dlpack_share_memory_and_follow_writes():
    p = trackgen.Pipeline("track", 4, seed=1)
    view = p.arrays["center"]
    via_interface = np.asarray(view)
    via_dlpack = np.from_dlpack(view)
    assert np.shares_memory(via_interface, via_dlpack)
    assert view.__dlpack_device__() == (1, 0)
    before = via_interface.copy()
    p.generate(generation=5)  # written in place: both views see the new batch
    assert not np.array_equal(before, via_interface, equal_nan=True)
    assert np.array_equal(via_interface, via_dlpack, equal_nan=True)
    fresh = trackgen.Pipeline("track", 4, seed=1, generation=5)
    assert np.asarray(fresh.arrays["center"]).tobytes() == via_interface.tobytes()


def test_outputs_are_read_only_bound_inputs_writable():
    c = trackgen.Course("track", 4)
    c.bind()
    progress = np.asarray(c.outputs["progress"])
    assert not progress.flags.writeable
    with pytest.raises(ValueError):
        progress[0] = 1.0
    legacy = np.from_dlpack(c.outputs["progress"])  # numpy asks for DLPack 1.x: read-only flag
    assert not legacy.flags.writeable
    pos = np.asarray(c.position)
    assert pos.flags.writeable and pos.shape == (4, 3) and pos.dtype == np.float32


def test_write_through_one_view_is_seen_through_another_and_by_step():
    c = trackgen.Course("track", 4)
    c.bind()
    a = np.asarray(c.position)
    b = np.from_dlpack(c.position)
    a[2] = [1e4, 1e4, 0.0]
    assert np.array_equal(b[2], [1e4, 1e4, 0.0])
    c.step()
    off = np.asarray(c.outputs["off_track"])
    assert off.tolist() == [0, 0, 1, 0]


def test_owner_deleted_while_views_live():
    p = trackgen.Pipeline("track", 4, seed=2)
    view = p.arrays["center"]
    arr = np.asarray(view)
    dl = np.from_dlpack(p.arrays["length"])
    snapshot, lengths = arr.copy(), dl.copy()
    del p, view
    gc.collect()
    assert arr.tobytes() == snapshot.tobytes()
    assert dl.tobytes() == lengths.tobytes()
    assert arr.base is not None


def test_dlpack_capsule_dropped_unconsumed_and_bad_requests():
    p = trackgen.Pipeline("track", 2)
    view = p.arrays["length"]
    for _ in range(100):
        view.__dlpack__()  # unconsumed capsules free themselves
        view.__dlpack__(max_version=(1, 0))
    with pytest.raises(BufferError, match="copy=True"):
        view.__dlpack__(copy=True)
    with pytest.raises(BufferError, match="dl_device"):
        view.__dlpack__(dl_device=(2, 0))
    with pytest.raises(ValueError, match="stream"):
        view.__dlpack__(stream=1)


def test_rebinding_keeps_old_views_valid_and_detached():
    c = trackgen.Course("track", 3)
    c.bind()
    old = np.asarray(c.position)
    spawn = old.copy()
    c.bind(position=np.zeros((3, 3), np.float32))
    new = np.asarray(c.position)
    assert not np.shares_memory(old, new)
    old[:] = 123.0  # the retired buffer is still alive, and no longer read
    c.step()
    assert np.asarray(c.outputs["off_track"]).all()  # (0, 0, 0) is far off every track
    del c
    gc.collect()
    assert (old == 123.0).all() and spawn.shape == (3, 3)
