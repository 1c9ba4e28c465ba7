"""tessera.ElementwiseKernel: CuPy's string kernels on each rank's blocks. On GPU runtimes the
results are checked against NumPy; on the host, where string kernels do not run, the refusal and
the argument checks are."""
import os

import numpy as np
import pytest

import tessera as ts
from conftest import values

AxisError = getattr(getattr(np, "exceptions", np), "AxisError")

on_gpu = pytest.mark.skipif(os.environ.get("TESSERA_PYTHON_TEST_DEVICE", "host") == "host",
                            reason="string kernels run on GPUs (TESSERA_PYTHON_TEST_DEVICE=cuda)")


def arrays(n=37, dtype=np.float64):
    x, y = values((n, 5), dtype, seed=1), values((n, 5), dtype, seed=2)
    return x, y, ts.asarray(x, split=0), ts.asarray(y, split=0)


@on_gpu
def test_placeholders_scalars_and_new_outputs():
    x, y, a, b = arrays()
    k = ts.ElementwiseKernel("T x, T y, T c", "T z", "z = x * sin(y) + c", "tessera_test_ek")
    z = k(a, b, 2.0)
    np.testing.assert_allclose(z.numpy(), x * np.sin(y) + 2.0, rtol=1e-12)
    out = ts.zeros_like(a)
    assert k(a, b, 1.0, out) is out
    np.testing.assert_allclose(out.numpy(), x * np.sin(y) + 1.0, rtol=1e-12)


@on_gpu
def test_two_outputs_concrete_types_and_index():
    x, y, a, b = arrays(n=9, dtype=np.float32)
    k = ts.ElementwiseKernel("float32 x, float32 y", "float32 s, bool g", "s = x + y; g = x > y", "tessera_test_two")
    s, g = k(a, b)
    np.testing.assert_allclose(s.numpy(), x + y, rtol=1e-6)
    np.testing.assert_array_equal(g.numpy(), x > y)


@on_gpu
def test_a_body_that_does_not_compile():
    _, _, a, b = arrays()
    with pytest.raises(ts.CompileError):
        ts.ElementwiseKernel("T x", "T z", "z = x +* 1", "tessera_test_bad")(a)


def test_argument_checks(runtime):
    _, _, a, b = arrays()
    k = ts.ElementwiseKernel("T x, T y", "T z", "z = x + y", "tessera_test_args")
    with pytest.raises(TypeError):
        k(a)  # one input short
    with pytest.raises(TypeError):
        k(1.0, 2.0)  # no array
    with pytest.raises(ts.LayoutMismatch if runtime.size > 1 else ts.ShapeMismatch):
        k(a, ts.asarray(values((37, 5), np.float64), split=1) if runtime.size > 1 else ts.zeros((3, 5), split=0))
    with pytest.raises(ValueError):
        ts.ElementwiseKernel("T", "T z", "z = 1")
    with pytest.raises(ValueError):
        ts.ElementwiseKernel("T x", "", "x")
    with pytest.raises(TypeError):
        ts.ElementwiseKernel("T x", "U z", "z = x")(a)  # U is bound by no input
    if runtime.device == "host":
        with pytest.raises(ts.BackendUnavailable):
            k(a, b)


@on_gpu
@pytest.mark.parametrize("n", [37, 1, 1000])  # uneven blocks, blocks of no element, larger
def test_reduction_kernel_l2_norm_and_mean(n):
    x, y, a, b = arrays(n)
    l2 = ts.ReductionKernel("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "tessera_test_l2")
    np.testing.assert_allclose(l2(a), np.sqrt(np.sum(x * x)), rtol=1e-12)
    mean = ts.ReductionKernel("T x, T w", "T m", "x * w", "a + b", "m = a / n_reduced", "0", "tessera_test_mean")
    got = mean(a, 2.0)
    assert isinstance(got, np.float64)
    np.testing.assert_allclose(got, np.mean(x * 2.0), rtol=1e-12)
    dot = ts.ReductionKernel("T x, T y", "T z", "x * y", "a + b", "z = a", "0", "tessera_test_dot")
    np.testing.assert_allclose(dot(a, b), np.sum(x * y), rtol=1e-11, atol=1e-12)


@on_gpu
def test_reduction_kernel_types_and_identities():
    xi = values((29, 3), np.int32, seed=4)
    i = ts.asarray(xi, split=1)
    mx = ts.ReductionKernel("T x", "T y", "x", "max(a, b)", "y = a", "-2147483647", "tessera_test_max")
    got = mx(i)
    assert got.dtype == np.int32 and got == xi.max()
    cnt = ts.ReductionKernel("T x", "int64 c", "x > 0 ? 1 : 0", "a + b", "c = a", "0", "tessera_test_count",
                             reduce_type="int64")
    assert cnt(i) == np.count_nonzero(xi > 0)
    f = ts.asarray(values((29, 3), np.float32, seed=5), split=0)
    s = ts.ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", "tessera_test_sum32")(f)
    assert s.dtype == np.float32
    np.testing.assert_allclose(s, f.numpy().astype(np.float64).sum(), rtol=1e-5)


@on_gpu
@pytest.mark.parametrize("split", [0, 1, (0, 1)])
def test_reduction_kernel_along_axes(split):
    x = values((13, 6, 5), np.float64, seed=7)
    a = ts.asarray(x, split=split)
    l2 = ts.ReductionKernel("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "tessera_test_l2_axes")
    for axis in (2, 0, 1, (0, 2), (1, 2), -1):
        got = l2(a, axis=axis)
        want = np.sqrt(np.sum(x * x, axis=axis))
        assert got.shape == want.shape
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)
        kd = l2(a, axis=axis, keepdims=True)
        np.testing.assert_allclose(kd.numpy(), np.sqrt(np.sum(x * x, axis=axis, keepdims=True)), rtol=1e-12)
    mean = ts.ReductionKernel("T x, T w", "T m, int64 n", "x * w", "a + b", "m = a / n_reduced; n = n_reduced", "0",
                              "tessera_test_mean_axes")
    m, n = mean(a, 2.0, axis=(0, 1))
    np.testing.assert_allclose(m.numpy(), np.mean(x * 2.0, axis=(0, 1)), rtol=1e-12)
    np.testing.assert_array_equal(n.numpy(), np.full(5, 78))
    whole = l2(a, axis=(0, 1, 2), keepdims=True)
    np.testing.assert_allclose(whole.numpy(), np.sqrt(np.sum(x * x, keepdims=True)), rtol=1e-12)


def test_reduction_kernel_argument_checks(runtime):
    x, y, a, b = arrays()
    k = ts.ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", "tessera_test_checks")
    with pytest.raises(TypeError, match="Wrong number of arguments"):
        k(a, b)
    with pytest.raises(TypeError, match="needs at least one tessera.ndarray"):
        k(1.0)
    with pytest.raises(AxisError):
        k(a, axis=2)
    with pytest.raises(ValueError, match="duplicate"):
        k(a, axis=(0, 0))
    with pytest.raises(ValueError, match="at least one output"):
        ts.ReductionKernel("T x", "", "x", "a + b", "", "0")
    if runtime.size > 1:  # (on one rank every split lies alike)
        c = ts.asarray(values((37, 5), np.float64), split=1)
        with pytest.raises(ts.LayoutMismatch):
            ts.ReductionKernel("T x, T y", "T z", "x * y", "a + b", "z = a", "0")(a, c)
    if runtime.device == "host":
        with pytest.raises(ts.BackendUnavailable, match="GPU arrays"):
            k(a)
