// Distributed algorithms beside the reductions: sort / argsort and cumulative sums / products.
//
// sort(a), argsort(a) of a 1-D array (int32, int64, float, double): sample sort. The input is
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
// Every function is collective over a's group. Errors: InvalidArgument (axis out of range).
#pragma once
#include <cstdint>
#include <type_traits>

#include "tessera/distributed/array.hpp"
#include "tessera/local/reduce.hpp"

namespace tessera::distributed {

/// The element type of cumsum / cumprod: int64 for bool and integers, else T.
template <class T> using scan_t = local::sum_t<T>;

/// a sorted ascending (NaNs last), on balanced blocks.
template <class T> Array<T, 1> sort(const Array<T, 1>& a);
/// The global indices that sort a (stable), on balanced blocks.
template <class T> Array<std::int64_t, 1> argsort(const Array<T, 1>& a);

/// Inclusive cumulative sum / product along `axis`.
template <class T, int R> Array<scan_t<T>, R> cumsum(const Array<T, R>& a, int axis);
template <class T, int R> Array<scan_t<T>, R> cumprod(const Array<T, R>& a, int axis);
/// 1-D shorthands.
template <class T> Array<scan_t<T>, 1> cumsum(const Array<T, 1>& a) { return cumsum(a, 0); }
template <class T> Array<scan_t<T>, 1> cumprod(const Array<T, 1>& a) { return cumprod(a, 0); }

}  // namespace tessera::distributed
