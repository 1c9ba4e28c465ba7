"""Every rank runs every test (mpirun -np N python3 -m pytest): each test is collective and
checks its distributed result against NumPy on the gathered data."""
import os
import tempfile

import numpy as np
import pytest

import tessera as ts

DTYPES = [np.bool_, np.int32, np.int64, np.float32, np.float64, np.complex64, np.complex128]
NUMERIC = [np.int32, np.int64, np.float32, np.float64, np.complex64, np.complex128]
FLOATS = [np.float32, np.float64]
# Splits of a 3-D array: one axis, two axes (a 2-D grid), none (replicated).
SPLITS = [0, 1, 2, (0, 1), None]


@pytest.fixture(scope="session", autouse=True)
def runtime():
    rt = ts.init(device=os.environ.get("TESSERA_PYTHON_TEST_DEVICE", "host"))
    yield rt
    ts.finalize()


@pytest.fixture
def shared_dir(runtime):
    """A directory every rank names alike (rank 0 makes it)."""
    d = tempfile.mkdtemp(prefix="tessera_py_") if runtime.rank == 0 else None
    return runtime.comm.bcast(d, root=0)


def values(shape, dtype, seed=0):
    """Test values of every dtype, the same on every rank."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-3, 3, size=shape)
    if np.dtype(dtype) == np.bool_:
        return x > 0
    if np.dtype(dtype).kind in "iu":
        return np.round(x * 10).astype(dtype)
    if np.dtype(dtype).kind == "c":
        return (x + 1j * rng.uniform(-3, 3, size=shape)).astype(dtype)
    return x.astype(dtype)


def local_values(view):
    """A shard view's values as NumPy: the view itself on the host, a copy from a GPU."""
    return view if isinstance(view, np.ndarray) else view.get()


def tol(dtype):
    return 1e-4 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-10
