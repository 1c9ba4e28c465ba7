"""Tessera's typed errors as Python exceptions. Each C++ error type has a class here, derived
from the Python exception a NumPy user would catch for it (a shape or layout problem is a
ValueError, a file problem an OSError); the message is the library's, naming the operation, the
offending values, the rank and the device."""
from . import _tessera


class TesseraError(Exception):
    """Base of every error raised by the tessera package."""


class InvalidArgument(TesseraError, ValueError):
    pass


class InvalidHandle(TesseraError, ValueError):
    """An object used after tessera.finalize() (or freed)."""


class ShapeMismatch(TesseraError, ValueError):
    pass


class LayoutMismatch(TesseraError, ValueError):
    """Operands whose layouts (split, grid, blocks or halos) differ: redistribute explicitly."""


class DeviceMismatch(TesseraError, ValueError):
    """Operands on different devices: move one with a.to(device)."""


class DtypeMismatch(TesseraError, TypeError):
    pass


class OutOfMemory(TesseraError, MemoryError):
    pass


class BackendUnavailable(TesseraError, RuntimeError):
    """A device or feature this build or machine does not have (e.g. "cuda" without a GPU)."""


class IoError(TesseraError, OSError):
    pass


class CommError(TesseraError, RuntimeError):
    """MPI or NCCL failed, or a collective missed its deadline (the watchdog)."""


class CudaError(TesseraError, RuntimeError):
    pass


class ConsistencyError(TesseraError, RuntimeError):
    """Ranks called an operation differently (TESSERA_CHECK=1)."""


class Busy(TesseraError, RuntimeError):
    """An object still in use (a pending halo exchange, a runtime with live arrays)."""


class CompileError(TesseraError, RuntimeError):
    """The runtime kernel compiler (NVRTC) rejected a kernel."""


class InternalError(TesseraError, RuntimeError):
    pass


# The C API's status codes (tessera.h), shared by the compiled core.
_BY_STATUS = {
    1: InvalidArgument, 2: InvalidHandle, 3: ShapeMismatch, 4: LayoutMismatch, 5: DeviceMismatch,
    6: DtypeMismatch, 7: OutOfMemory, 8: BackendUnavailable, 9: IoError, 10: CommError, 11: CudaError,
    12: ConsistencyError, 13: Busy, 14: CompileError, 99: InternalError,
}
_tessera._set_error_classes(_BY_STATUS)
