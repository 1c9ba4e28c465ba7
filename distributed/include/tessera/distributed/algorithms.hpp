// Distributed algorithms beside the reductions: sort / argsort and cumulative sums / products.
//
// sort(a), argsort(a) of a 1-D array (int32, int64, float, double; n-d arrays: of ravel(a), the
// flattened array): sample sort. The input is
// first put on balanced blocks of a 1-D grid of its group (redistributed unless it is already);
// each rank sorts its block (CUB radix sort on GPUs, std::sort on the host), p-1 regular samples
// per rank are all-gathered and p-1 splitters chosen from them, one all-to-all-v moves every key
// (and, for argsort, its global index) to the rank of its bucket, and each rank sorts what it
// received. Elements are ordered by (key, global index), so buckets stay balanced under duplicate
// keys and argsort is stable (ties by global index). A last redistribute makes the output blocks
// balanced (1-D grid of the group). NaNs sort last, as in numpy; argsort treats -0.0 and +0.0 as
// equal. On one rank: one local sort. argsort returns global indices (int64).
//
// cumsum(a, axis), cumprod(a, axis) of any array along any axis: each rank scans its block along
// the axis; when the axis is split, the ranks of that grid axis all-gather their blocks' totals
// and each combines the totals of the ranks before it (an exclusive scan of the partials) into
// its block. The result has a's blocks, no halos, and numpy's type: int64 for bool and integers,
// else the element type. Float results may differ from a serial scan in the last bits.
//
// take(a, idx) / put(a, idx, v): a's elements at global flat row-major indices (negative ones
// count from the end, as numpy), idx a 1-D int64 array of any layout over a's ranks. Each rank
// routes its indices to the ranks holding them (one all-to-all-v of requests, one of values back
// or forth); the result of take has idx's blocks, v must have them. An index outside [-n, n)
// makes every rank throw IndexError naming it, its position in idx and the rank holding it. put
// writes every copy where a's grid replicates; of duplicate indices one write wins.
//
// histogram(x, bins, lo, hi) and bincount(x, minlength): per-rank counts (int64) on the device,
// then one all-reduce; every rank gets the same local array on x's device. histogram: `bins`
// equal bins over [lo, hi], the last one closed; NaNs and values outside are not counted. The
// counts are numpy.histogram's (range=(lo, hi)): a value belongs to the bin whose numpy.linspace
// edges hold it, edges and comparisons in float32 for float32 data and in double otherwise.
// bincount: bins 0..max(x) (at least minlength); a negative value is an InvalidArgument.
//
// flatnonzero(a), compress(mask, a): the global flat indices of a's nonzero elements / a's
// elements where mask is true, in row-major order, on balanced blocks of a 1-D grid (inputs are
// first put on row blocks, compacted locally, then balanced by one redistribute). where(c, x, y):
// c ? x : y elementwise; c, x, y must have the same blocks (LayoutMismatch otherwise).
//
// Every function is collective over a's group. Errors: InvalidArgument (axis out of range).
#pragma once
#include <cstdint>
#include <type_traits>

#include "tessera/distributed/array.hpp"
#include "tessera/local/reduce.hpp"

namespace tessera::distributed {

/// An index outside the array it indexes (take, put).
class IndexError : public Error { using Error::Error; };

template <class T, int R> Array<T, 1> ravel(const Array<T, R>& a);  // (below)

/// The element type of cumsum / cumprod: int64 for bool and integers, else T.
template <class T> using scan_t = local::sum_t<T>;

/// a sorted ascending (NaNs last), on balanced blocks.
template <class T> Array<T, 1> sort(const Array<T, 1>& a);
/// The global indices that sort a (stable), on balanced blocks.
template <class T> Array<std::int64_t, 1> argsort(const Array<T, 1>& a);
/// n-d arrays: sort / argsort of the flattened array (global flat row-major indices).
template <class T, int R> requires(R > 1) Array<T, 1> sort(const Array<T, R>& a) { return sort(ravel(a)); }
template <class T, int R> requires(R > 1) Array<std::int64_t, 1> argsort(const Array<T, R>& a) {
  return argsort(ravel(a));
}

/// a sorted along `axis` (numpy.sort(a, axis)): every row along the axis ascending (NaNs last),
/// stable, on a's blocks (without halos). Each rank sorts the rows it holds whole: a split axis is
/// redistributed away first (its grid's group on a 1-D grid splitting the longest other axis) and
/// the result back. Per rank: one radix sort by key, one by row (which keeps each row's keys in
/// order) and a gather. 1-D arrays: the sample sort, on a's blocks.
template <class T, int R> Array<T, R> sort(const Array<T, R>& a, int axis);
/// The indices along `axis` that sort each row (numpy.argsort(a, axis), stable), on a's blocks.
template <class T, int R> Array<std::int64_t, R> argsort(const Array<T, R>& a, int axis);

/// Inclusive cumulative sum / product along `axis`.
template <class T, int R> Array<scan_t<T>, R> cumsum(const Array<T, R>& a, int axis);
template <class T, int R> Array<scan_t<T>, R> cumprod(const Array<T, R>& a, int axis);
/// 1-D shorthands.
template <class T> Array<scan_t<T>, 1> cumsum(const Array<T, 1>& a) { return cumsum(a, 0); }
template <class T> Array<scan_t<T>, 1> cumprod(const Array<T, 1>& a) { return cumprod(a, 0); }

/// out[i] = a.flat[idx[i]], on idx's blocks.
template <class T, int R> Array<T, 1> take(const Array<T, R>& a, const Array<std::int64_t, 1>& idx);
/// a.flat[idx[i]] = v[i]; v has idx's blocks.
template <class T, int R> void put(Array<T, R>& a, const Array<std::int64_t, 1>& idx, const Array<T, 1>& v);

/// Counts of `bins` equal bins over [lo, hi], the same on every rank (on x's device).
template <class T, int R> local::Array<std::int64_t, 1> histogram(const Array<T, R>& x, index_t bins, double lo, double hi);
/// Counts of each value 0..max(x) (at least minlength bins), the same on every rank (int32, int64).
template <class T, int R> local::Array<std::int64_t, 1> bincount(const Array<T, R>& x, index_t minlength = 0);

/// Global flat indices of the nonzero elements, ascending, on balanced 1-D blocks.
template <class T, int R> Array<std::int64_t, 1> flatnonzero(const Array<T, R>& a);
/// a's elements where mask is true, row-major, on balanced 1-D blocks.
template <class T, int R> Array<T, 1> compress(const Array<bool, R>& mask, const Array<T, R>& a);
/// The array flattened (row-major) to 1-D, without copying where its rows are already split over
/// a 1-D grid (else after one redistribute to row blocks); blocks follow the rows.
template <class T, int R> Array<T, 1> ravel(const Array<T, R>& a);
/// c ? x : y elementwise, on x's blocks without halos.
template <class T, int R> Array<T, R> where(const Array<bool, R>& c, const Array<T, R>& x, const Array<T, R>& y);

}  // namespace tessera::distributed
