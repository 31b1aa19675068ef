"""DLPack without NumPy on the consumer side: a consumer written here against the DLPack ABI
(dlpack.h, v1.x and legacy) with ctypes, as torch or JAX consume a capsule: it takes the
capsule, reads the tensor's struct, marks the capsule used, reads and writes the memory through
the data pointer, and calls the deleter when done. NumPy only builds the expected values."""

import ctypes
import gc

import numpy as np
import pytest

import trackgen


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class DLManagedTensor(ctypes.Structure):
    pass


DLManagedTensor._fields_ = [
    ("dl_tensor", DLTensor),
    ("manager_ctx", ctypes.c_void_p),
    ("deleter", ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor))),
]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    pass


DLManagedTensorVersioned._fields_ = [
    ("version", DLPackVersion),
    ("manager_ctx", ctypes.c_void_p),
    ("deleter", ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensorVersioned))),
    ("flags", ctypes.c_uint64),
    ("dl_tensor", DLTensor),
]

api = ctypes.pythonapi
api.PyCapsule_GetName.restype = ctypes.c_char_p
api.PyCapsule_GetName.argtypes = [ctypes.py_object]
api.PyCapsule_GetPointer.restype = ctypes.c_void_p
api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
api.PyCapsule_SetName.restype = ctypes.c_int
api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
# Capsule names must outlive the capsules: module constants.
USED = {b"dltensor": ctypes.c_char_p(b"used_dltensor"),
        b"dltensor_versioned": ctypes.c_char_p(b"used_dltensor_versioned")}
CODES = {0: "int", 1: "uint", 2: "float"}
K_DL_CPU = 1
FLAG_READ_ONLY = 1


class Consumed:
    """A consumed capsule: the tensor's fields as Python values, the memory, the deleter."""

    def __init__(self, obj, versioned):
        capsule = obj.__dlpack__(max_version=(1, 0)) if versioned else obj.__dlpack__()
        name = api.PyCapsule_GetName(capsule)
        assert name == (b"dltensor_versioned" if versioned else b"dltensor")
        ptr = api.PyCapsule_GetPointer(capsule, name)
        kind = DLManagedTensorVersioned if versioned else DLManagedTensor
        self.managed = ctypes.cast(ptr, ctypes.POINTER(kind))
        # Taking ownership: the capsule no longer frees the tensor, the deleter does.
        assert api.PyCapsule_SetName(capsule, USED[name]) == 0
        del capsule
        m = self.managed.contents
        self.version = (m.version.major, m.version.minor) if versioned else None
        self.flags = m.flags if versioned else None
        t = m.dl_tensor
        self.device = (t.device.device_type, t.device.device_id)
        self.shape = tuple(t.shape[i] for i in range(t.ndim))
        self.strides = None if not t.strides else tuple(t.strides[i] for i in range(t.ndim))
        self.dtype = (CODES[t.dtype.code], t.dtype.bits, t.dtype.lanes)
        self.address = t.data + t.byte_offset
        self.nbytes = int(np.prod(self.shape)) * t.dtype.bits // 8

    def read(self):
        return ctypes.string_at(self.address, self.nbytes)

    def write_f32(self, index, value):
        ctypes.cast(self.address, ctypes.POINTER(ctypes.c_float))[index] = value

    def delete(self):
        self.managed.contents.deleter(self.managed)


@pytest.mark.parametrize("versioned", [True, False])
def test_a_non_numpy_consumer_reads_the_view_in_place(versioned):
    p = trackgen.Pipeline("track", 5, seed=8)
    view = p.arrays["center"]
    t = Consumed(view, versioned)
    expected = np.asarray(view)
    assert t.device == (K_DL_CPU, 0)
    assert t.shape == expected.shape and t.dtype == ("float", 32, 1)
    assert t.strides is None or t.strides == tuple(s // 4 for s in expected.strides)
    assert t.address == expected.__array_interface__["data"][0]  # the same memory: no copy
    if versioned:
        assert t.version[0] == 1 and t.flags & FLAG_READ_ONLY
    assert t.read() == expected.tobytes()
    p.generate(generation=3)  # written in place: the consumer sees the new batch
    assert t.read() == np.asarray(view).tobytes()
    # The tensor keeps its owner alive until the deleter runs.
    snapshot = t.read()
    del p, view, expected
    gc.collect()
    assert t.read() == snapshot
    t.delete()


def test_counts_are_uint32_and_bound_inputs_writable_through_the_consumer():
    c = trackgen.Course("track", 4)
    c.bind()
    count = Consumed(c.track["count"], versioned=True)
    assert count.dtype == ("uint", 32, 1) and count.shape == (4,)
    position = Consumed(c.position, versioned=True)
    assert position.shape == (4, 3) and not position.flags & FLAG_READ_ONLY
    for k, v in enumerate((1e4, 1e4, 0.0)):
        position.write_f32(2 * 3 + k, v)  # env 2, written by the consumer
    assert np.asarray(c.position)[2].tolist() == [1e4, 1e4, 0.0]
    c.step()  # the course reads the consumer's write in place
    assert np.asarray(c.outputs["off_track"]).tolist() == [0, 0, 1, 0]
    count.delete()
    position.delete()
