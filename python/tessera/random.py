"""Random arrays from Tessera's counter-based generator: each value is a function of the seed and
its global index, so the same call gives the same array on any number of ranks and any device.
Successive calls draw new streams (the same on every rank: calls are collective and ordered)."""
import numpy as np

from . import _functions, _tessera

_state = {"seed": 20240601, "calls": 0}


def seed(s):
    """Sets the base seed (and restarts the sequence of calls)."""
    _state["seed"], _state["calls"] = int(s), 0


def _next_seed(seed_arg):
    if seed_arg is not None:
        return int(seed_arg)
    _state["calls"] += 1
    return (_state["seed"] * 0x9E3779B97F4A7C15 + _state["calls"]) & 0xFFFFFFFFFFFFFFFF


def _shape(first, size):
    # uniform((n, m), split=0): a shape as the first argument (the house's style) is taken as size.
    if size is None and isinstance(first, (tuple, list)):
        return None, tuple(first)
    return first, size


def _draw(kind, p1, p2, size, dtype, split, grid, halo, device, seed_arg):
    if size is None:
        raise TypeError(f"tessera.random.{kind} needs a size (the array's shape)")
    a = _functions.zeros(size, dtype if dtype is not None else np.float64, split, grid, halo, device)
    if a.dtype.kind != "f":
        raise TypeError(f"tessera.random.{kind} makes float32 or float64 arrays, not {a.dtype}")
    _tessera.fill_random(a._id, kind, _next_seed(seed_arg), float(p1), float(p2))
    return a


def uniform(low=0.0, high=1.0, size=None, dtype=None, split=None, grid=None, halo=0, device=None, seed=None):
    """Uniform values in [low, high) (NumPy's random.uniform; size is the shape)."""
    low, size = _shape(low, size)
    return _draw("uniform", 0.0 if low is None else low, high, size, dtype, split, grid, halo, device, seed)


def normal(loc=0.0, scale=1.0, size=None, dtype=None, split=None, grid=None, halo=0, device=None, seed=None):
    """Normal values of mean loc and standard deviation scale (NumPy's random.normal)."""
    loc, size = _shape(loc, size)
    return _draw("normal", 0.0 if loc is None else loc, scale, size, dtype, split, grid, halo, device, seed)


def rand(*shape, split=None, device=None):
    return uniform(size=shape, split=split, device=device)


def randn(*shape, split=None, device=None):
    return normal(size=shape, split=split, device=device)
