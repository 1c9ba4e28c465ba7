"""Shared by the CuPy peer scripts: CuPy itself (exit code 77 when it is missing, which the
drivers read as "skipped") and the median of CUDA-event timings."""
import statistics
import sys


def cupy(script):
    try:
        import cupy as cp
    except ImportError:
        print(f"{script}: CuPy is not installed", file=sys.stderr)
        sys.exit(77)
    return cp


def median_ms(fn, warmup=3, reps=10):
    import cupy as cp
    for _ in range(warmup):
        fn()
    cp.cuda.Device().synchronize()
    times = []
    for _ in range(reps):
        a, b = cp.cuda.Event(), cp.cuda.Event()
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(cp.cuda.get_elapsed_time(a, b))
    return statistics.median(times)
