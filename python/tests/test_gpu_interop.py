"""GPU shards exchanged with CuPy, PyTorch and JAX without a copy, both ways: tessera's shard
read through DLPack (the other library's array has the shard's address), and the other
library's array adopted by ts.from_shards (the shard is its memory). GPU runtimes only; each
library is skipped where it is not installed."""
import os

import numpy as np
import pytest

import tessera as ts
from conftest import values

pytestmark = pytest.mark.skipif(os.environ.get("TESSERA_PYTHON_TEST_DEVICE", "host") == "host",
                                reason="GPU runtimes only (TESSERA_PYTHON_TEST_DEVICE=cuda)")
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # ranks share the GPU with JAX


def address(shard):
    return shard.__cuda_array_interface__["data"][0]


def distributed(runtime):
    x = values((37, 5), np.float64, seed=runtime.size)
    return x, ts.asarray(x, split=0)


def test_cupy_round_trip(runtime):
    cp = pytest.importorskip("cupy")
    x, a = distributed(runtime)
    v = cp.from_dlpack(a.local)
    if v.size:
        assert v.data.ptr == address(a.local)
    np.testing.assert_array_equal(cp.asnumpy(v), x[a.block])
    v *= 2.0  # written through CuPy, seen by tessera
    cp.cuda.Device().synchronize()
    np.testing.assert_array_equal(a.numpy(), 2.0 * x)
    mine = cp.asarray(x[a.block])
    b = ts.from_shards(mine, split=0)
    if mine.size:
        assert address(b.local) == mine.data.ptr
    b[...] = b + 1.0  # written by tessera's kernel, seen by CuPy
    b.synchronize()
    np.testing.assert_array_equal(cp.asnumpy(mine), x[a.block] + 1.0)


def test_torch_round_trip(runtime):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch without CUDA")
    x, a = distributed(runtime)
    t = torch.from_dlpack(a.local)
    if t.numel():
        assert t.data_ptr() == address(a.local)
    np.testing.assert_array_equal(t.cpu().numpy(), x[a.block])
    t.mul_(3.0)
    torch.cuda.synchronize()
    np.testing.assert_array_equal(a.numpy(), 3.0 * x)
    mine = torch.tensor(x[a.block], device=f"cuda:{torch.cuda.current_device()}")
    b = ts.from_shards(mine, split=0)
    if mine.numel():
        assert address(b.local) == mine.data_ptr()
    b[...] = b * 2.0
    b.synchronize()
    np.testing.assert_array_equal(mine.cpu().numpy(), 2.0 * x[a.block])


def test_jax_round_trip(runtime):
    jax = pytest.importorskip("jax")
    if not any(d.platform == "gpu" for d in jax.devices()):
        pytest.skip("JAX without a GPU")
    import jax.numpy as jnp
    jax.config.update("jax_enable_x64", True)  # float64 shards stay float64
    x, a = distributed(runtime)
    j = jnp.from_dlpack(a.local)
    if j.size:
        assert j.unsafe_buffer_pointer() == address(a.local)
    np.testing.assert_array_equal(np.asarray(j), x[a.block])
    mine = jax.device_put(jnp.asarray(x[a.block]), jax.devices("gpu")[0])
    b = ts.from_shards(mine, split=0)  # JAX arrays are immutable: read, not written
    if mine.size:
        assert address(b.local) == mine.unsafe_buffer_pointer()
    np.testing.assert_array_equal(b.numpy(), x)
