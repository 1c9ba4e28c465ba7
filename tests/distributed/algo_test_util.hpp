// Helpers of the algorithm suites (linalg, sort, scans, indexing): arrays filled from a formula
// of the global flat index, and the layouts they are tested on.
#pragma once
#include <vector>

#include "dist_test_util.hpp"
#include "tessera/distributed/array.hpp"
#include "tessera/local/basic_ops.hpp"

namespace tessera::distributed::testing {

// An array whose interior holds f(global flat index) and whose halos hold `halo`.
template <class T, int R, class F>
Array<T, R> filled(const Layout<R>& l, Device d, F f, T halo = T{}) {
  Array<T, R> a(l, d);
  if (a.local().size()) local::fill(a.local(), halo);
  const auto b = l.local_box();
  const auto s = b.shape();
  const auto gs = local::row_major_strides(l.global_shape());
  std::vector<T> host(b.size());
  for (index_t k = 0; k < b.size(); ++k) {
    index_t rem = k, g = 0;
    for (int ax = R - 1; ax >= 0; --ax) g += (b.lo[ax] + rem % s[ax]) * gs[ax], rem /= s[ax];
    host[k] = f(g);
  }
  if (b.size()) local::copy(a.interior(), local::from_host(host, s, d));
  return a;
}

// f over the whole global array, row-major.
template <class T, class F>
std::vector<T> serial(index_t n, F f) {
  std::vector<T> v(n);
  for (index_t g = 0; g < n; ++g) v[g] = f(g);
  return v;
}

// Offsets of n over p parts: all elements in the last part (the others empty).
inline std::vector<index_t> skewed(index_t n, int p) {
  std::vector<index_t> o(p + 1, 0);
  o[p] = n;
  return o;
}
// Offsets of n over p parts: 2 per part, the rest in the last one (uneven, maybe empty parts).
inline std::vector<index_t> uneven(index_t n, int p) {
  std::vector<index_t> o(p + 1);
  for (int c = 0; c <= p; ++c) o[c] = c == p ? n : std::min<index_t>(n, 2 * c);
  return o;
}

}  // namespace tessera::distributed::testing
