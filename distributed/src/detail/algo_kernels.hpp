// Internal: the kernels of algorithms.hpp (sort, scans), one implementation per backend with the
// same signature — namespace host (src/host/algorithms_host.cpp) and namespace cuda
// (src/cuda/algorithms.cu, the one CUB translation unit) — dispatched by device in
// src/common/backends.cpp. `stream` is a cudaStream_t (null on host). Callers pass n > 0.
#pragma once
#include <cstdint>
#include <type_traits>

#include "tessera/local/array.hpp"
#include "tessera/local/element_types.hpp"
#include "tessera/local/hd.hpp"
#include "tessera/local/stream.hpp"

namespace tessera::distributed::detail {
using local::index_t;

// numpy's order: NaNs after everything (and equal to each other).
template <class T> TESSERA_HD bool sort_less(T a, T b) {
  if constexpr (T(0.5) != T(0)) return a < b || (a == a && b != b);
  else return a < b;
}
// First position in sorted keys[0, n) whose key is not before `key` (upper: after `key`).
template <class T> TESSERA_HD index_t sort_bound(const T* keys, index_t n, T key, bool upper) {
  index_t lo = 0, hi = n;
  while (lo < hi) {
    const index_t mid = lo + (hi - lo) / 2;
    if (upper ? !sort_less(key, keys[mid]) : sort_less(keys[mid], key)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
// Sample sort orders elements by (key, rank, position in the rank's sorted block): distinct, and
// for contiguous blocks in rank order the same as (key, global index). The number of this rank's
// (`me`) sorted elements before the splitter (sk, sr, sp):
template <class T> TESSERA_HD index_t split_point(const T* keys, index_t n, T sk, int sr, index_t sp, int me) {
  if (me == sr) return sp;
  return sort_bound(keys, n, sk, me < sr);
}

// Sorting along an axis: a rank's block, contiguous, seen as [outer, len, inner] with the axis in
// the middle; its rows are the (o, i) pairs. The row of flat position p, the flat position the
// j-th element (in order) of row q / len goes to (q = row * len + j), and p's index along the axis.
TESSERA_HD inline index_t row_of(index_t p, index_t len, index_t inner) {
  return p / (len * inner) * inner + p % inner;
}
TESSERA_HD inline index_t place_of(index_t q, index_t len, index_t inner) {
  const index_t row = q / len;
  return (row / inner * len + q % len) * inner + row % inner;
}
TESSERA_HD inline index_t along_of(index_t p, index_t len, index_t inner) { return p / inner % len; }

#define TESSERA_ALGO_KERNELS                                                                                      \
  /* Stable sort of keys (and values, if vals) in buffer 0, or of `in` (if not null; keys only) into */          \
  /* the buffers; returns the buffer (0 or 1) holding the result. canonical: -0.0 sorts as +0.0. */              \
  template <class T>                                                                                              \
  int sort(const T* in, T* keys0, T* keys1, index_t* vals0, index_t* vals1, index_t n, bool canonical,          \
           void* stream);                                                                                         \
  /* out[i] = split_point(keys, n, sk[i], sr[i], sp[i], me), i < ns (sk, sr, sp, out on the device) */             \
  template <class T>                                                                                              \
  void split_points(const T* keys, index_t n, const T* sk, const int* sr, const index_t* sp, int ns, int me,    \
                    index_t* out, void* stream);                                                                  \
  /* Inclusive scan (sum or product) of `in` into `data` (may be the same) along the middle axis of */             \
  /* contiguous [outer, len, inner] blocks. */                                                                    \
  template <class T>                                                                                              \
  void scan(const T* in, T* data, index_t outer, index_t len, index_t inner, bool prod, void* stream);           \
  /* data[o, i, j] = off[o, j] (+ or *) data[o, i, j] */                                                           \
  template <class T>                                                                                              \
  void scan_offset(T* data, const T* off, index_t outer, index_t len, index_t inner, bool prod, void* stream);  \
  /* out[j] = parts[0, j] (+ or *) ... parts[upto-1, j] (identity when upto == 0), j < m */                        \
  template <class T> void scan_fold(const T* parts, int upto, index_t m, bool prod, T* out, void* stream);         \
  /* dst[i] = src[off[i]] (gather) and dst[off[i]] = src[i] (scatter), i < n */                                    \
  template <class T> void gather(const T* src, const index_t* off, index_t n, T* dst, void* stream);              \
  template <class T> void scatter(T* dst, const index_t* off, const T* src, index_t n, void* stream);             \
  /* flags[i] = in[i] != 0 */                                                                                     \
  template <class T> void nonzero_flags(const T* in, index_t n, bool* flags, void* stream);                       \
  /* out[i] = c[i] ? x[i] : y[i] */                                                                               \
  template <class T> void select(const bool* c, const T* x, const T* y, index_t n, T* out, void* stream);         \
  /* The in[i] with flags[i], in order, to out; returns how many (waits for the device). */                       \
  template <class T> index_t compact(const T* in, const bool* flags, index_t n, T* out, void* stream);           \
  /* counts[b] += number of x[i] in bin b of numpy.histogram's edges over [lo, hi] (bin_of below), hi in */      \
  /* the last; for integers with lo = 0, hi = bins, bin = x (bincount). Outside values, NaNs: not counted. */      \
  template <class T> void histogram(const T* x, index_t n, double lo, double hi, index_t bins, index_t* counts,  \
                                    void* stream);                                                                \
  /* row[q] = row_of(pos[q], len, inner); dst[q] = place_of(q, len, inner) and, if along, */                     \
  /* along[q] = along_of(pos[q], len, inner); q < n */                                                            \
  void rows_of(const index_t* pos, index_t n, index_t len, index_t inner, index_t* row, void* stream);           \
  void places_of(const index_t* pos, index_t n, index_t len, index_t inner, index_t* dst, index_t* along,        \
                 void* stream);

namespace host { TESSERA_ALGO_KERNELS }
namespace cuda { TESSERA_ALGO_KERNELS }
#undef TESSERA_ALGO_KERNELS

// The explicit instantiations that each backend's translation unit makes at the end of its
// namespace: the element types the public functions take.
#define TESSERA_ALGO_INDEXING_INSTANCES(T)                                         \
  template void gather<T>(const T*, const index_t*, index_t, T*, void*);           \
  template void scatter<T>(T*, const index_t*, const T*, index_t, void*);          \
  template void select<T>(const bool*, const T*, const T*, index_t, T*, void*);    \
  template void nonzero_flags<T>(const T*, index_t, bool*, void*);                 \
  template index_t compact<T>(const T*, const bool*, index_t, T*, void*);
#define TESSERA_ALGO_ORDERED_INSTANCES(T)                                                                  \
  template void histogram<T>(const T*, index_t, double, double, index_t, index_t*, void*);                \
  template int sort<T>(const T*, T*, T*, index_t*, index_t*, index_t, bool, void*);                       \
  template void split_points<T>(const T*, index_t, const T*, const int*, const index_t*, int, int, index_t*, void*);
#define TESSERA_ALGO_SCAN_INSTANCES(T)                                                   \
  template void scan<T>(const T*, T*, index_t, index_t, index_t, bool, void*);           \
  template void scan_offset<T>(T*, const T*, index_t, index_t, index_t, bool, void*);    \
  template void scan_fold<T>(const T*, int, index_t, bool, T*, void*);
#define TESSERA_ALGO_KERNEL_INSTANCES                          \
  TESSERA_FOR_EACH_ELEMENT(TESSERA_ALGO_INDEXING_INSTANCES)    \
  TESSERA_FOR_EACH_INTEGER(TESSERA_ALGO_ORDERED_INSTANCES)     \
  TESSERA_FOR_EACH_REAL(TESSERA_ALGO_ORDERED_INSTANCES)        \
  TESSERA_ALGO_SCAN_INSTANCES(std::int64_t)                    \
  TESSERA_FOR_EACH_FFT(TESSERA_ALGO_SCAN_INSTANCES)

// The dispatch: the kernel of the stream's device, with that device current.
template <class T>
int sort_kernel(const T* in, T* keys0, T* keys1, index_t* vals0, index_t* vals1, index_t n, bool canonical,
                const Stream& s);
template <class T>
void split_points_kernel(const T* keys, index_t n, const T* sk, const int* sr, const index_t* sp, int ns, int me,
                         index_t* out, const Stream& s);
template <class T>
void scan_kernel(const T* in, T* data, index_t outer, index_t len, index_t inner, bool prod, const Stream& s);
template <class T>
void scan_offset_kernel(T* data, const T* off, index_t outer, index_t len, index_t inner, bool prod, const Stream& s);
template <class T> void scan_fold_kernel(const T* parts, int upto, index_t m, bool prod, T* out, const Stream& s);
template <class T> void gather_kernel(const T* src, const index_t* off, index_t n, T* dst, const Stream& s);
template <class T> void scatter_kernel(T* dst, const index_t* off, const T* src, index_t n, const Stream& s);
template <class T> void nonzero_flags_kernel(const T* in, index_t n, bool* flags, const Stream& s);
template <class T> void select_kernel(const bool* c, const T* x, const T* y, index_t n, T* out, const Stream& s);
template <class T> index_t compact_kernel(const T* in, const bool* flags, index_t n, T* out, const Stream& s);
template <class T>
void histogram_kernel(const T* x, index_t n, double lo, double hi, index_t bins, index_t* counts, const Stream& s);
void rows_of_kernel(const index_t* pos, index_t n, index_t len, index_t inner, index_t* row, const Stream& s);
void places_of_kernel(const index_t* pos, index_t n, index_t len, index_t inner, index_t* dst, index_t* along,
                      const Stream& s);

// numpy.histogram's arithmetic: edges in the bin type (float32 for float32 data, else double)
// from linspace's float64 i*step + lo (the last edge hi itself), each product and sum rounded
// on its own (no fused multiply-add: numpy does not fuse them).
template <class T> using HistogramBinType = std::conditional_t<std::is_same_v<T, float>, float, double>;
TESSERA_HD inline double unfused_mul(double a, double b) {
#ifdef __CUDA_ARCH__
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}
TESSERA_HD inline double unfused_add(double a, double b) {
#ifdef __CUDA_ARCH__
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}
template <class B> TESSERA_HD B histogram_edge(index_t i, double lo, double hi, index_t bins) {
  if (i == bins) return static_cast<B>(hi);
  const double step = (hi - lo) / static_cast<double>(bins);
  const double y = step == 0 ? unfused_mul(static_cast<double>(i) / static_cast<double>(bins), hi - lo)
                             : unfused_mul(static_cast<double>(i), step);
  return static_cast<B>(unfused_add(y, lo));
}
// The bin of v in histogram(), numpy's: the first guess from the scaled offset, then moved by one
// where v lies before its lower edge or on/after its upper one (the last bin is closed); -1 when
// outside [lo, hi] (compared in the bin type, as numpy compares float32 data) or NaN.
template <class T> TESSERA_HD index_t bin_of(T v, double lo, double hi, index_t bins) {
  using B = HistogramBinType<T>;
  const B x = static_cast<B>(v);
  if (!(x >= static_cast<B>(lo) && x <= static_cast<B>(hi))) return -1;
  const double guess = static_cast<double>(x - static_cast<B>(lo)) / (hi - lo) * static_cast<double>(bins);
  index_t b = static_cast<index_t>(guess);
  b = b < 0 ? 0 : (b >= bins ? bins - 1 : b);
  if (x < histogram_edge<B>(b, lo, hi, bins) && b > 0) --b;
  if (b != bins - 1 && x >= histogram_edge<B>(b + 1, lo, hi, bins)) ++b;
  return b;
}

}  // namespace tessera::distributed::detail
