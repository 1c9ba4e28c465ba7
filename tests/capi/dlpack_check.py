"""DLPack zero-copy check: numpy (host) or CuPy (--cupy, device) reads a shard that the C API
exports, through Python's ctypes and no compiled extension. Checks values against the global
index, that the consumer's array is the shard's own memory (same address; a write by Tessera is
seen through it), that it outlives tessera_array_free, and that its deleter runs (the runtime can
be freed only then). Usage: python3 dlpack_check.py LIBTESSERA_C [--cupy]. Exit 77: no numpy/CuPy."""
import ctypes
import gc
import sys

try:
    import numpy as np
    xp = np
    if "--cupy" in sys.argv:
        import cupy as xp
except ImportError as e:
    print(f"skipped: {e}")
    sys.exit(77)

lib = ctypes.CDLL(sys.argv[1], mode=ctypes.RTLD_GLOBAL)
cuda = "--cupy" in sys.argv


class Handle(ctypes.Structure):
    _fields_ = [("id", ctypes.c_uint64)]


lib.tessera_last_error.restype = ctypes.c_char_p


def ok(status):
    if status != 0:
        raise RuntimeError(lib.tessera_last_error().decode())


rt, grid, lay, arr = Handle(), Handle(), Handle(), Handle()
# numpy reads host memory only: a GPU build would put the array on its GPU by default.
ok(lib.tessera_runtime_create_world(b"cuda" if cuda else b"host", ctypes.byref(rt)))
rank, size = ctypes.c_int(), ctypes.c_int()
ok(lib.tessera_runtime_rank(rt, ctypes.byref(rank), ctypes.byref(size)))
I64x2 = ctypes.c_int64 * 2
shape, halo = I64x2(6, 5), I64x2(1, 2)
ok(lib.tessera_grid_create(rt, 1, None, None, ctypes.byref(grid)))
ok(lib.tessera_layout_create(grid, 2, shape, None, None, halo, None, ctypes.byref(lay)))
lo, hi, pad = I64x2(), I64x2(), I64x2()
ok(lib.tessera_layout_info(lay, None, None, lo, hi, pad))
ok(lib.tessera_array_create(lay, 1, ctypes.byref(arr)))  # TESSERA_F64, on the runtime's device
i, j = np.meshgrid(np.arange(lo[0], hi[0]), np.arange(lo[1], hi[1]), indexing="ij")
block = np.ascontiguousarray(10.0 * i + j)
ok(lib.tessera_array_write(arr, block.ctypes.data_as(ctypes.c_void_p), ctypes.c_int64(block.size)))
data = ctypes.c_void_p()
ok(lib.tessera_array_info(arr, ctypes.byref(data), None, None))

PyCapsule_New = ctypes.pythonapi.PyCapsule_New
PyCapsule_New.restype = ctypes.py_object
PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


class Exported:
    """What from_dlpack consumes: __dlpack__ hands over the DLManagedTensor in a capsule."""

    def __init__(self, with_halos):
        self.tensor = ctypes.c_void_p()
        ok(lib.tessera_array_to_dlpack(arr, with_halos, ctypes.byref(self.tensor)))

    def __dlpack__(self, stream=None, **kwargs):
        return PyCapsule_New(self.tensor, b"dltensor", None)

    def __dlpack_device__(self):
        return (2, 0) if cuda else (1, 0)  # kDLCUDA / kDLCPU


def address(a):
    return a.data.ptr if cuda else a.ctypes.data


whole = xp.from_dlpack(Exported(1))
inner = xp.from_dlpack(Exported(0))
h0, h1 = halo[0], halo[1]
assert whole.shape == (pad[0], pad[1]), whole.shape
assert address(whole) == data.value, "numpy/CuPy copied the shard"
assert address(inner) == data.value + 8 * (h0 * pad[1] + h1), "interior view is not the shard's memory"
assert inner.strides == (8 * pad[1], 8), inner.strides
host = lambda a: xp.asnumpy(a) if cuda else a
assert np.array_equal(host(inner), block), "exported values differ from the global index"
block2 = -block  # a write by Tessera shows through the consumer's array: the same memory
ok(lib.tessera_array_write(arr, block2.ctypes.data_as(ctypes.c_void_p), ctypes.c_int64(block2.size)))
assert np.array_equal(host(inner), block2), "the consumer's array did not see Tessera's write"
ok(lib.tessera_array_free(arr))  # the exported tensors keep the shard alive
assert np.array_equal(host(whole)[h0:-h0, h1:-h1], block2)
ok(lib.tessera_layout_free(lay))
ok(lib.tessera_grid_free(grid))
assert lib.tessera_runtime_free(rt) != 0, "runtime freed while exported tensors live"
del whole, inner
gc.collect()
ok(lib.tessera_runtime_free(rt))  # every deleter ran
print(f"rank {rank.value}/{size.value}: {'CuPy' if cuda else 'numpy'} read the shard without a copy")
