"""numpy side of the histogram interop test (see histogram_numpy.cmake).

histogram_numpy.py DIR -- writes, per case, the input x_<case>.npy and numpy.histogram's counts
counts_<case>.npy, and one line "<case> <dtype> <n> <bins> <lo> <hi>" per case to DIR/cases.txt (lo and hi
as repr, which round-trips a double). histogram_interop then loads the inputs on 1-5 ranks, on
the host and the GPU, and must reproduce the counts exactly. Exits 77 (skipped) without numpy.
"""
import os
import sys

try:
    import numpy as np
except ImportError:
    print("numpy not available: skipped")
    sys.exit(77)


def cases():
    rng = np.random.default_rng(41)
    tenths = np.arange(10) / 10  # the example: numpy gives 1 1 2 0 1 2 1 0 1 1
    yield "tenths_f8", tenths, 10, 0.0, 1.0
    yield "tenths_f4", tenths.astype(np.float32), 10, 0.0, 1.0
    # values on and one ulp either side of numpy's own (float64 / float32) edges
    for name, dt in (("f8", np.float64), ("f4", np.float32)):
        for bins, lo, hi in ((6, 0.1, 0.7), (7, -3.0, 3.0), (13, -0.3, 2.9), (1000, 0.0, 1.0)):
            e = np.linspace(lo, hi, bins + 1).astype(dt)
            x = np.concatenate([e, np.nextafter(e, dt(-np.inf)), np.nextafter(e, dt(np.inf)),
                                rng.uniform(lo - 0.1, hi + 0.1, 3000).astype(dt),
                                np.array([np.nan, np.inf, -np.inf], dtype=dt)])
            yield "edges%d_%s" % (bins, name), x.astype(dt), bins, lo, hi
        yield "normal_" + name, (3 * rng.standard_normal(5000)).astype(dt), 7, -3.0, 3.0
    for name, dt in (("i4", np.int32), ("i8", np.int64)):
        x = np.arange(-50, 200, dtype=dt)
        yield "ints_" + name, x, 7, -10.0, 100.5
        yield "intsthird_" + name, x, 30, 0.0, 1.0 / 3 * 300
    big = (np.int64(10) ** 15 + np.arange(-20, 20)).astype(np.int64)
    yield "large_i8", big, 3, 1e15 - 10, 1e15 + 10


def main():
    d = sys.argv[1]
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "cases.txt"), "w") as f:
        for name, x, bins, lo, hi in cases():
            counts, _ = np.histogram(x, bins, range=(lo, hi))
            np.save(os.path.join(d, "x_%s.npy" % name), x)
            np.save(os.path.join(d, "counts_%s.npy" % name), counts.astype(np.int64))
            f.write("%s %s %d %d %r %r\n" % (name, x.dtype.str[1:], x.size, bins, lo, hi))
    return 0


if __name__ == "__main__":
    sys.exit(main())
