"""The runtime: one per process, over an mpi4py communicator, on one device. It owns the C API
handles the package makes (grids, layouts, arrays, FFT plans) and frees them, arrays first, at
finalize() or at exit, before MPI is finalized (mpi4py finalizes MPI after Python's atexit
handlers)."""
import atexit
import re
import weakref

from . import _tessera
from ._errors import BackendUnavailable, InvalidHandle

_DEVICE = re.compile(r"^(host|cuda(:[0-9]+)?)$")
_current = None


class Runtime:
    """What tessera.init() returns; also a context manager that finalizes on exit."""

    def __init__(self, comm, device):
        if device is not None and (not isinstance(device, str) or not _DEVICE.match(device)):
            raise ValueError(f"device {device!r} is none of 'host', 'cuda', 'cuda:N'")
        self.comm = comm
        self.id = _tessera.runtime_create(comm.py2f(), device or "")
        self.rank, self.size, self.device = _tessera.runtime_info(self.id)
        self._grids = {}    # dims -> grid handle
        self._layouts = {}  # layout key -> layout handle
        self._plans = {}    # FFT plan key -> (plan, in layout, out layout, the source's layout key)
        self._arrays = {}  # id -> weak reference of the live arrays (freed first at the end)

    # ---- handles shared by arrays ----
    def grid(self, dims):
        """The grid handle of `dims` (a tuple; 0 entries chosen like MPI_Dims_create). Collective."""
        dims = tuple(int(d) for d in dims)
        if dims not in self._grids:
            self._grids[dims] = _tessera.grid_create(self.id, list(dims))
        return self._grids[dims]

    def layout(self, key):
        """The layout handle of a layout key (see _array.block_key)."""
        if key not in self._layouts:
            _, shape, split, dims, halo, periodic = key
            grid = self.grid(dims)
            self._layouts[key] = _tessera.layout_create(grid, list(shape), list(split), list(halo), list(periodic))
        return self._layouts[key]

    def track(self, array):
        key = id(array)
        self._arrays[key] = weakref.ref(array, lambda _, k=key, arrays=self._arrays: arrays.pop(k, None))

    def live_arrays(self):
        return [a for a in (r() for r in list(self._arrays.values())) if a is not None]

    def check_alive(self):
        if self.id is None:
            raise InvalidHandle("the tessera runtime was finalized (call tessera.init() again)")

    def device_kind(self, device):
        """'host' or this runtime's GPU for a device argument (None: the runtime's device)."""
        if device is None:
            return self.device
        if not isinstance(device, str) or not _DEVICE.match(device):
            raise ValueError(f"device {device!r} is none of 'host', 'cuda', 'cuda:N'")
        if device == "host":
            return "host"
        if not self.device.startswith("cuda"):
            raise BackendUnavailable(f"device {device!r}: this runtime is on {self.device} "
                                     f"(rank {self.rank}); tessera.init(device='cuda') for GPU arrays")
        if device != "cuda" and device != self.device:
            raise BackendUnavailable(f"device {device!r}: this rank's runtime uses {self.device} (rank {self.rank})")
        return self.device

    # ---- the end ----
    def free(self):
        if self.id is None:
            return
        for a in self.live_arrays():
            a._release()
        self._arrays.clear()
        for plan, lin, lout, _ in self._plans.values():
            _tessera.fft_plan_free(plan)
            _tessera.layout_free(lin)
            _tessera.layout_free(lout)
        for h in self._layouts.values():
            _tessera.layout_free(h)
        for h in self._grids.values():
            _tessera.grid_free(h)
        self._plans.clear(), self._layouts.clear(), self._grids.clear()
        _tessera.runtime_free(self.id)
        self.id = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        finalize()
        return False

    def __repr__(self):
        state = "finalized" if self.id is None else f"rank {self.rank} of {self.size} on {self.device}"
        return f"<tessera.Runtime {state}>"


def init(comm=None, device=None):
    """Starts Tessera on the ranks of `comm` (an mpi4py communicator; default MPI.COMM_WORLD) with
    this rank's device: None (a GPU per node-local rank where there are GPUs, else the host; the
    TESSERA_DEVICE setting), "host", "cuda" or "cuda:N". Collective. Returns the Runtime (a context
    manager); tessera.finalize() or the end of the program frees it."""
    global _current
    if _current is not None and _current.id is not None:
        raise RuntimeError("tessera.init: a runtime is running already (tessera.finalize() first)")
    if comm is None:
        from mpi4py import MPI
        comm = MPI.COMM_WORLD
    if not hasattr(comm, "py2f"):
        raise TypeError(f"comm must be an mpi4py communicator, not {type(comm).__name__}")
    _current = Runtime(comm, device)
    return _current


def finalize():
    """Frees every array, plan and layout of the runtime, then the runtime. Collective."""
    global _current
    if _current is not None:
        _current.free()
    _current = None


def runtime():
    """The running Runtime; tessera.init() starts one on first use (MPI.COMM_WORLD)."""
    if _current is None or _current.id is None:
        init()
    return _current


atexit.register(finalize)
