// The host kernels of the distributed layer (detail/kernels.hpp): plain loops over the same
// philox.hpp functions as the CUDA kernels, hence bitwise identical values.
#include <cmath>
#include <complex>
#include <numbers>

#include "../detail/arg_combine.hpp"
#include "../detail/kernels.hpp"
#include "../detail/twiddle_phase.hpp"
#include "tessera/local/element_types.hpp"
#include "tessera/local/philox.hpp"

namespace tessera::distributed::detail::host {
namespace {
// Calls f(offset, global flat index) for every element of the interior, the last axis fastest.
template <class F>
void for_each_index(const IndexMap& m, F f) {
  if (m.size == 0) return;
  const int r = m.rank;
  index_t i[IndexMap::kMaxRank] = {}, off = 0, g = 0;
  for (int d = 0; d < r; ++d) g += m.lo[d] * m.gstrides[d];
  const index_t inner = r ? m.shape[r - 1] : 1, st = r ? m.strides[r - 1] : 0, gst = r ? m.gstrides[r - 1] : 0;
  for (index_t k = 0; k < m.size; k += inner) {
    for (index_t j = 0; j < inner; ++j) f(off + j * st, g + j * gst);
    for (int d = r - 2; d >= 0; --d) {  // next row: carry into the outer axes
      off += m.strides[d], g += m.gstrides[d];
      if (++i[d] < m.shape[d]) break;
      off -= i[d] * m.strides[d], g -= i[d] * m.gstrides[d], i[d] = 0;
    }
  }
}

template <class T> struct Arange { T operator()(index_t g) const { return static_cast<T>(g); } };
template <class R> struct Arange<std::complex<R>> {  // real part = g, imaginary part = 0
  std::complex<R> operator()(index_t g) const { return {static_cast<R>(g), R(0)}; }
};
}  // namespace

template <class T> void arange_fill(T* data, const IndexMap& m, void*) {
  for_each_index(m, [&](index_t off, index_t g) { data[off] = Arange<T>{}(g); });
}
template <class T>
void uniform_fill(T* data, const IndexMap& m, std::uint64_t seed, T low, T range, T top, void*) {
  for_each_index(m, [&](index_t off, index_t g) {
    data[off] = philox::uniform(philox::block_at(seed, static_cast<std::uint64_t>(g)), low, range, top);
  });
}
template <class T> void normal_fill(T* data, const IndexMap& m, std::uint64_t seed, T mean, T stddev, void*) {
  for_each_index(m, [&](index_t off, index_t g) {
    data[off] = philox::normal(philox::block_at(seed, static_cast<std::uint64_t>(g)), mean, stddev);
  });
}
template <class T>
void integers_fill(T* data, const IndexMap& m, std::uint64_t seed, T low, std::uint64_t range, void*) {
  for_each_index(m, [&](index_t off, index_t g) {
    data[off] = philox::integer(philox::block_at(seed, static_cast<std::uint64_t>(g)), low, range);
  });
}
template <class T>
void arg_combine(const T* vals, const index_t* idx, int parts, index_t m, bool is_min, index_t* out, void*) {
  for (index_t j = 0; j < m; ++j) out[j] = arg_combine_one(vals, idx, parts, m, j, is_min);
}
template <class Real> void scale(Real* data, std::size_t n, double factor, void*) {
  const Real f = static_cast<Real>(factor);
  for (std::size_t i = 0; i < n; ++i) data[i] *= f;
}
template <class Real> void twiddle(std::complex<Real>* data, const Twiddle& t, void*) {
  const double w = 2 * std::numbers::pi / static_cast<double>(t.modulus);
  for (index_t r = 0; r < t.rows; ++r)
    for (index_t c = 0; c < t.cols; ++c) {
      const double a = t.sign * w * static_cast<double>(twiddle_index(t.row0, t.col0, r, c, t.modulus, t.square));
      const std::complex<double> f(t.scale * std::cos(a), t.scale * std::sin(a));
      auto& e = data[r * (t.ld ? t.ld : t.cols) + c];
      e = std::complex<Real>(std::complex<double>(e) * f);
    }
}

#define TESSERA_ARANGE(T) template void arange_fill<T>(T*, const IndexMap&, void*);
#define TESSERA_REAL_FILLS(T)                                                           \
  template void uniform_fill<T>(T*, const IndexMap&, std::uint64_t, T, T, T, void*);    \
  template void normal_fill<T>(T*, const IndexMap&, std::uint64_t, T, T, void*);        \
  template void scale<T>(T*, std::size_t, double, void*);                               \
  template void twiddle<T>(std::complex<T>*, const Twiddle&, void*);
#define TESSERA_INTEGER_FILLS(T) \
  template void integers_fill<T>(T*, const IndexMap&, std::uint64_t, T, std::uint64_t, void*);
#define TESSERA_ARG_COMBINE(T) \
  template void arg_combine<T>(const T*, const index_t*, int, index_t, bool, index_t*, void*);
TESSERA_FOR_EACH_NUMERIC(TESSERA_ARANGE)
TESSERA_FOR_EACH_REAL(TESSERA_REAL_FILLS)
TESSERA_FOR_EACH_INTEGER(TESSERA_INTEGER_FILLS)
TESSERA_FOR_EACH_ORDERED(TESSERA_ARG_COMBINE)

}  // namespace tessera::distributed::detail::host
