"""tessera.linalg: norms of distributed arrays."""
from ._functions import norm

__all__ = ["norm"]
