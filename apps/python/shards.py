"""What the Python examples share: each rank's shard as an array of NumPy (host runtimes) or CuPy
(GPU runtimes) without a copy, and CuPy's work ordered with tessera's."""
import contextlib
import warnings

import numpy as np


class Shards:
    """xp: the shards' array module; view(shard): the shard as an xp array, in place;
    on_tessera_stream(a): a context in which CuPy runs on the stream a's shard names."""

    def __init__(self, device):
        if device == "host":
            self.xp = np
        else:
            import cupy  # GPU shards: CuPy reads them through __cuda_array_interface__
            self.xp = cupy

    def view(self, shard):
        return shard if self.xp is np else self.xp.asarray(shard)

    def on_tessera_stream(self, a):
        if self.xp is np:
            return contextlib.nullcontext()
        stream = a.local.__cuda_array_interface__["stream"]
        with warnings.catch_warnings():  # CuPy 14 deprecates ExternalStream for stream-protocol objects
            warnings.simplefilter("ignore", DeprecationWarning)
            return self.xp.cuda.ExternalStream(stream)
