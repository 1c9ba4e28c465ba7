// Helpers shared by the distributed FFT suites: a deterministic global array, the distributed
// array holding it, the serial FFTW transform of it, and the relative error.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <type_traits>
#include <vector>

#include "tessera/distributed/array.hpp"
#include "tessera/local/basic_ops.hpp"
#include "tessera/local/fft_plan.hpp"

namespace tessera::distributed::testing::fft_util {
namespace ts = tessera;
namespace td = tessera::distributed;
namespace lf = tessera::local::fft;
using ts::Device;
using ts::local::index_t;

template <class T> struct Real { using type = T; };
template <class T> struct Real<std::complex<T>> { using type = T; };
template <class T> constexpr bool is_complex = !std::is_same_v<T, typename Real<T>::type>;

// A deterministic global array (the same on every rank).
template <class T>
std::vector<T> pattern(index_t n, int seed = 1) {
  std::vector<T> v(n);
  for (index_t i = 0; i < n; ++i) {
    const double a = std::sin(0.37 * i + seed) + 0.25 * std::cos(1.3 * i * seed);
    if constexpr (is_complex<T>) v[i] = T(a, std::cos(0.11 * i - seed));
    else v[i] = static_cast<T>(a);
  }
  return v;
}

// The distributed array of `layout` holding `global` (row-major global values).
template <class T, int R>
td::Array<T, R> make(const td::Layout<R>& layout, Device d, const std::vector<T>& global) {
  td::Array<T, R> a(layout, d);
  const auto box = layout.local_box();
  const auto s = box.shape();
  const auto gs = ts::local::row_major_strides(layout.global_shape());
  std::vector<T> mine(box.size());
  for (index_t k = 0; k < box.size(); ++k) {
    index_t rem = k, g = 0;
    for (int ax = R - 1; ax >= 0; --ax) g += (box.lo[ax] + rem % s[ax]) * gs[ax], rem /= s[ax];
    mine[k] = global[g];
  }
  ts::local::copy(a.interior(), ts::local::Array<T, R>::view(mine.data(), s, Device::host()));
  return a;
}

// Serial unnormalized transform of the whole array on the host (FFTW).
template <class In, int R>
std::vector<std::complex<typename Real<In>::type>> serial(const std::vector<In>& x, const ts::distributed::Index<R>& n) {
  using C = std::complex<typename Real<In>::type>;
  std::vector<long long> dims(n.begin(), n.end());
  lf::PlanDesc d;
  d.device = Device::host();
  d.kind = is_complex<In> ? lf::Kind::c2c : lf::Kind::r2c;
  d.precision = lf::precision_of<typename Real<In>::type>();
  d.rank = R;
  for (int a = 0; a < R; ++a) d.n[a] = n[a];
  std::vector<C> out(lf::output_elements(lf::normalize(d)));
  lf::get_plan(d)->execute(x.data(), out.data(), lf::Direction::forward);
  return out;
}

template <class A, class B>
double rel_err(const std::vector<A>& got, const std::vector<B>& want) {
  double num = 0, den = 0;
  EXPECT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < std::min(got.size(), want.size()); ++i) {
    num += std::norm(std::complex<double>(got[i]) - std::complex<double>(want[i]));
    den += std::norm(std::complex<double>(want[i]));
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}
template <class T> double tol() { return sizeof(typename Real<T>::type) == 4 ? 1e-5 : 1e-12; }

}  // namespace tessera::distributed::testing::fft_util
