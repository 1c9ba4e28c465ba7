"""numpy side of the io_npy interop tests (see io_npy.cmake).

npy_check.py check DIR  -- numpy.load the files npy_interop wrote and compare with the formulas
npy_check.py write DIR  -- write .npy files (all seven dtypes, 1-3 dims) for npy_interop read
Exits 77 (skipped) when numpy is missing.
"""
import os
import sys

try:
    import numpy as np
except ImportError:
    print("numpy not available: skipped")
    sys.exit(77)

SHAPES = {"1d": (29,), "2d": (7, 11), "3d": (17, 13, 5)}
DTYPES = {"b1": "|b1", "i4": "<i4", "i8": "<i8", "f4": "<f4", "f8": "<f8", "c8": "<c8", "c16": "<c16"}


def formula(name, shape):
    g = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    if name == "b1":
        return g % 3 == 0
    if name in ("i4", "i8"):
        return (g * 7 - 5).astype(DTYPES[name])
    if name in ("f4", "f8"):
        return (g * 0.5 - 3).astype(DTYPES[name])
    return (g * 0.5 - 1j * g).astype(DTYPES[name])


def main():
    mode, d = sys.argv[1], sys.argv[2]
    bad = 0
    for name, descr in DTYPES.items():
        for dims, shape in SHAPES.items():
            path = os.path.join(d, "%s_%s.npy" % (name, dims))
            want = formula(name, shape)
            if mode == "write":
                np.save(path, want)
                continue
            got = np.load(path)
            if got.dtype != np.dtype(descr) or got.shape != shape or not np.array_equal(got, want):
                print("MISMATCH %s: dtype %s shape %s" % (path, got.dtype, got.shape))
                bad += 1
    if mode == "write":
        open(os.path.join(d, "done"), "w").close()
        print("wrote %d files" % (len(DTYPES) * len(SHAPES)))
    else:
        print("checked %d files, %d bad" % (len(DTYPES) * len(SHAPES), bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
