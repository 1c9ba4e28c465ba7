"""Bad inputs raise typed exceptions (never crash, never copy silently)."""
import numpy as np
import pytest

import tessera as ts
from conftest import values

AxisError = getattr(getattr(np, "exceptions", np), "AxisError")


def a3(split=0, dtype=np.float64, **kw):
    return ts.asarray(values((6, 5, 4), dtype), split=split, **kw)


BAD_CREATION = [
    (lambda: ts.zeros((4, 4), dtype="float16"), TypeError),
    (lambda: ts.zeros((4, 4), dtype="not-a-type"), TypeError),
    (lambda: ts.zeros((4, 4), dtype=np.uint8), TypeError),
    (lambda: ts.zeros((4, 4), dtype=object), TypeError),
    (lambda: ts.zeros((2, 2, 2, 2, 2)), ValueError),
    (lambda: ts.zeros(()), ValueError),
    (lambda: ts.zeros((-1, 3)), ValueError),
    (lambda: ts.zeros("abc"), TypeError),
    (lambda: ts.zeros((4, 4), split=2), AxisError),
    (lambda: ts.zeros((4, 4), split=-3), AxisError),
    (lambda: ts.zeros((4, 4), split=(0, 0)), ValueError),
    (lambda: ts.zeros((4, 4), split="x"), TypeError),
    (lambda: ts.zeros((4, 4), split=1.5), TypeError),
    (lambda: ts.zeros((4, 4), halo=(1,)), ValueError),
    (lambda: ts.zeros((4, 4), halo=-1), ValueError),
    (lambda: ts.zeros((4, 4), device="gpu"), ValueError),
    (lambda: ts.zeros((4, 4), device=3), ValueError),
    (lambda: ts.linspace(0, 1, -2), ValueError),
    (lambda: ts.random.uniform(size=(4,), dtype=np.int32), TypeError),
    (lambda: ts.random.normal(), TypeError),
    (lambda: ts.from_shards([1, 2, 3]), TypeError),
    (lambda: ts.from_shards(np.zeros((4, 4))[:, ::2]), ValueError),
    (lambda: ts.from_shards(np.zeros((4, 4)), split=3), AxisError),
    (lambda: ts.init(), RuntimeError),  # a runtime runs already
]


@pytest.mark.parametrize("case", range(len(BAD_CREATION)))
def test_bad_creation(case):
    f, exc = BAD_CREATION[case]
    with pytest.raises(exc):
        f()


def test_cuda_without_a_gpu(runtime):
    if runtime.device != "host":
        pytest.skip("this runtime has a GPU")
    with pytest.raises(ts.BackendUnavailable):
        ts.zeros((4,), device="cuda")
    assert issubclass(ts.BackendUnavailable, RuntimeError)


def test_operands_that_do_not_fit(runtime):
    a = a3()
    with pytest.raises(ts.ShapeMismatch):
        a + ts.zeros((6, 5), split=0)  # (5, 4) and (6, 5) do not broadcast
    with pytest.raises(ts.ShapeMismatch, match="non-broadcastable"):
        row = ts.zeros((5, 4), split=0)
        row += a  # the result would be a's shape, not row's
    if a.device != "host":
        with pytest.raises(ts.DeviceMismatch):
            a + np.ones(4)  # a NumPy operand of a GPU array: moved explicitly, never silently
    if runtime.size > 1:  # on one rank every split has the same blocks: those operands fit
        with pytest.raises(ts.LayoutMismatch):
            a + a3(split=1)
        with pytest.raises(ts.DeviceMismatch if a.device != "host" else ts.LayoutMismatch):
            a + ts.asarray(values((6, 5, 4), np.float64), split=0, device="host").resplit(2)
    with pytest.raises(ts.LayoutMismatch):
        a + a3(split=0, halo=1)
    with pytest.raises(TypeError):
        a + "text"
    with pytest.raises(TypeError):
        a + [1, 2, 3]
    with pytest.raises(TypeError):
        a3(dtype=np.int32) & a3(dtype=np.int32)
    with pytest.raises(TypeError):
        ~a
    assert issubclass(ts.LayoutMismatch, ValueError) and issubclass(ts.ShapeMismatch, ValueError)


def test_no_silent_gather():
    a = a3()
    with pytest.raises(TypeError):
        np.asarray(a)
    with pytest.raises(TypeError):
        np.unique(a)  # a NumPy function tessera lacks: TypeError, not a gathered result
    with pytest.raises(ValueError, match="no fields"):
        np.sort(a, order="x")  # as NumPy's, for an array without fields
    with pytest.raises(ValueError):
        bool(a > 0)
    with pytest.raises(NotImplementedError, match="beside slices"):
        a[[0, 1], :, [1, 2]]  # several index arrays among slices
    with pytest.raises(IndexError, match="out of bounds"):
        a[:, [0, 5]]
    with pytest.raises(IndexError, match="out of bounds"):
        a[:, [0, 5]] = 1.0
    with pytest.raises(IndexError, match="integer"):
        a[np.array([0.5, 1.5])]
    with pytest.raises(IndexError, match="boolean index"):
        a[np.array([True, False])]
    with pytest.raises(IndexError, match="boolean index"):
        a[np.ones((6, 5, 3), dtype=bool)]
    with pytest.raises(ValueError):
        a[::-1] = np.zeros((5, 5, 4))
    with pytest.raises(ValueError):
        a[1:3] = a3()[1:4]
    with pytest.raises(IndexError):
        a[1.5]
    with pytest.raises(IndexError):
        a[0, 0, 0, 0]
    with pytest.raises(IndexError):
        a[..., ...]
    with pytest.raises(IndexError):
        a[:, 9]
    with pytest.raises(ValueError):
        a[0:2] = np.zeros((3, 5, 4))


def test_bad_reductions_and_transforms():
    a = a3()
    with pytest.raises(AxisError):
        ts.sum(a, axis=3)
    with pytest.raises(ts.DtypeMismatch):
        ts.max(a3(dtype=np.complex64))
    with pytest.raises(NotImplementedError):
        ts.linalg.norm(a, ord=1)
    with pytest.raises(ValueError):
        ts.fft.fftn(a, norm="sideways")
    with pytest.raises(ValueError, match="different lengths"):
        ts.fft.fftn(a, s=(3, 3), axes=(0,))
    with pytest.raises(ValueError, match="data points"):
        ts.fft.fftn(a, s=(0, 3, 3))
    with pytest.raises(NotImplementedError, match="repeat"):
        ts.fft.fftn(a, axes=(0, 0))
    with pytest.raises(AxisError):
        ts.fft.fft(a, axis=3)
    with pytest.raises(TypeError):
        ts.fft.rfftn(a3(dtype=np.complex128))
    with pytest.raises(ValueError, match="monotonically"):
        ts.histogram(a, bins=[0.0, 2.0, 1.0])
    with pytest.raises(ValueError, match="same shape"):
        ts.histogram(a, bins=4, weights=a3()[1:])
    with pytest.raises(ValueError, match="same length"):
        ts.bincount(ts.asarray(np.arange(4), split=0), weights=np.ones(5))


def test_bad_algorithm_inputs():
    a = a3()
    with pytest.raises(ts.DtypeMismatch):
        ts.sort(ts.asarray(values((8,), np.complex64), split=0))
    with pytest.raises(ts.DtypeMismatch):
        ts.argmax(a3(dtype=np.complex128))
    with pytest.raises(ts.ShapeMismatch):
        ts.matmul(a, a)  # 3-D @ 3-D is batched: shapes (6,5,4) @ (6,5,4) do not chain
    with pytest.raises(ts.DtypeMismatch):
        ts.matmul(ts.zeros((4, 4), dtype=np.int32, split=0), ts.zeros((4, 4), dtype=np.int32, split=0))
    with pytest.raises(AxisError):
        ts.cumsum(a, axis=5)
    with pytest.raises(ValueError):
        ts.argmin(ts.zeros((0,), split=0))
    with pytest.raises(ts.InvalidArgument):
        ts.histogram(ts.arange(10, split=0), bins=0)


def test_bad_files(shared_dir):
    import os
    with pytest.raises(OSError):
        ts.io.load_npy(os.path.join(shared_dir, "missing.npy"))
    with pytest.raises(OSError):
        ts.io.load_zarr(os.path.join(shared_dir, "missing.zarr"))
    with pytest.raises(ValueError):
        ts.io.save_zarr(os.path.join(shared_dir, "x.zarr"), a3(), chunks=(2, 2))
    with pytest.raises(ts.IoError):
        ts.io.save_npy(os.path.join(shared_dir, "no", "such", "dir", "x.npy"), a3())
    assert issubclass(ts.IoError, OSError)


def test_freed_runtime_raises_not_crashes(runtime):
    # A fresh communicator's runtime cannot start while one runs; an array from a finalized
    # runtime raises InvalidHandle (checked in a subprocess-free way through the handle table).
    a = a3()
    a._release()
    with pytest.raises(ts.InvalidHandle):
        ts.sum(a)
