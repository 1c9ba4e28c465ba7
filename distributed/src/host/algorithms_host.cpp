// The host kernels of algorithms.hpp (detail/algo_kernels.hpp): std::sort / std::stable_sort in
// numpy's order, and plain scan loops.
#include <algorithm>
#include <complex>
#include <cstdint>
#include <numeric>
#include <vector>

#include "../detail/algo_kernels.hpp"
#include "tessera/local/element_types.hpp"

namespace tessera::distributed::detail::host {

template <class T>
int sort(const T* in, T* keys0, T*, index_t* vals0, index_t*, index_t n, bool canonical, void*) {
  if (in) std::copy(in, in + n, keys0);
  if (!vals0) {
    std::sort(keys0, keys0 + n, sort_less<T>);
    return 0;
  }
  // Argsort: order a permutation, ties kept in input order (the values arrive in index order).
  std::vector<index_t> perm(n);
  std::iota(perm.begin(), perm.end(), index_t(0));
  std::stable_sort(perm.begin(), perm.end(), [&](index_t x, index_t y) { return sort_less(keys0[x], keys0[y]); });
  std::vector<T> k(n);
  std::vector<index_t> v(n);
  for (index_t i = 0; i < n; ++i) k[i] = keys0[perm[i]], v[i] = vals0[perm[i]];
  for (index_t i = 0; i < n; ++i) keys0[i] = canonical && k[i] == T(0) ? T(0) : k[i], vals0[i] = v[i];
  return 0;
}

template <class T>
void split_points(const T* keys, index_t n, const T* sk, const int* sr, const index_t* sp, int ns, int me,
                  index_t* out, void*) {
  for (int i = 0; i < ns; ++i) out[i] = split_point(keys, n, sk[i], sr[i], sp[i], me);
}

namespace {
template <class T> T combine(T a, T b, bool prod) { return prod ? a * b : a + b; }
}  // namespace

template <class T> void scan(const T* in, T* data, index_t outer, index_t len, index_t inner, bool prod, void*) {
  if (in != data) std::copy(in, in + outer * len * inner, data);
  for (index_t o = 0; o < outer; ++o) {
    T* base = data + o * len * inner;
    for (index_t i = 1; i < len; ++i)
      for (index_t j = 0; j < inner; ++j) base[i * inner + j] = combine(base[(i - 1) * inner + j], base[i * inner + j], prod);
  }
}
template <class T>
void scan_offset(T* data, const T* off, index_t outer, index_t len, index_t inner, bool prod, void*) {
  for (index_t o = 0; o < outer; ++o)
    for (index_t i = 0; i < len; ++i)
      for (index_t j = 0; j < inner; ++j) {
        T& e = data[(o * len + i) * inner + j];
        e = combine(off[o * inner + j], e, prod);
      }
}
template <class T> void scan_fold(const T* parts, int upto, index_t m, bool prod, T* out, void*) {
  for (index_t j = 0; j < m; ++j) {
    T acc = prod ? T(1) : T(0);
    for (int c = 0; c < upto; ++c) acc = combine(acc, parts[c * m + j], prod);
    out[j] = acc;
  }
}

void rows_of(const index_t* pos, index_t n, index_t len, index_t inner, index_t* row, void*) {
  for (index_t q = 0; q < n; ++q) row[q] = row_of(pos[q], len, inner);
}
void places_of(const index_t* pos, index_t n, index_t len, index_t inner, index_t* dst, index_t* along, void*) {
  for (index_t q = 0; q < n; ++q) {
    dst[q] = place_of(q, len, inner);
    if (along) along[q] = along_of(pos[q], len, inner);
  }
}

template <class T> void gather(const T* src, const index_t* off, index_t n, T* dst, void*) {
  for (index_t i = 0; i < n; ++i) dst[i] = src[off[i]];
}
template <class T> void scatter(T* dst, const index_t* off, const T* src, index_t n, void*) {
  for (index_t i = 0; i < n; ++i) dst[off[i]] = src[i];
}
template <class T> void nonzero_flags(const T* in, index_t n, bool* flags, void*) {
  for (index_t i = 0; i < n; ++i) flags[i] = in[i] != T(0);
}
template <class T> void select(const bool* c, const T* x, const T* y, index_t n, T* out, void*) {
  for (index_t i = 0; i < n; ++i) out[i] = c[i] ? x[i] : y[i];
}
template <class T> index_t compact(const T* in, const bool* flags, index_t n, T* out, void*) {
  index_t k = 0;
  for (index_t i = 0; i < n; ++i)
    if (flags[i]) out[k++] = in[i];
  return k;
}
template <class T> void histogram(const T* x, index_t n, double lo, double hi, index_t bins, index_t* counts, void*) {
  for (index_t i = 0; i < n; ++i)
    if (const index_t b = bin_of(x[i], lo, hi, bins); b >= 0) ++counts[b];
}

TESSERA_ALGO_KERNEL_INSTANCES

}  // namespace tessera::distributed::detail::host
