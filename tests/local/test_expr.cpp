// Fused expressions, compiled by nvcc in CUDA builds (the generic kernels) and by the C++
// compiler otherwise; every result against a serial loop on host data.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <complex>
#include <utility>
#include <vector>

#include "device_test.hpp"
#include "tessera/local/expr.hpp"

namespace tl = tessera::local;
using tessera::Device;

template <class K> class ExprTest : public tessera::testing::DeviceTest<K> {};
TYPED_TEST_SUITE(ExprTest, tessera::testing::DeviceKinds, tessera::testing::DeviceKindNames);

TYPED_TEST(ExprTest, TriadIsOneKernel) {
  const Device d = this->device();
  const tl::index_t n = 100000;
  auto x = tl::arange<float>(n, d), y = tl::full<float, 1>({n}, 2.f, d), z = tl::full<float, 1>({n}, 1.f, d);
  auto out = tl::empty<float, 1>({n}, d);
  const long long before = tl::kernel_launch_count();
  out = x * y + z;
  if (d.is_cuda()) EXPECT_EQ(tl::kernel_launch_count() - before, 1);  // the whole tree, one launch
  const auto h = tl::to_host(out);
  for (tl::index_t i = 0; i < n; i += 997) EXPECT_EQ(h[i], 2.f * i + 1.f) << i;
}

#ifdef __CUDACC__
// The linear kernel's elements per thread (cuda_executor.cuh): one where every load and the store
// are 8 bytes or wider, four otherwise (a cast from f32 loads 4 bytes).
namespace {
template <class T> using A1 = const tl::Array<T, 1>&;
template <class T>
using Triad = decltype(tl::as_expr(std::declval<A1<T>>() * std::declval<A1<T>>() + std::declval<A1<T>>()));
}  // namespace
static_assert(tl::kLinearUnroll<double, Triad<double>> == 1);
static_assert(tl::kLinearUnroll<cuda::std::complex<float>, Triad<tessera::complex64>> == 1);
static_assert(tl::kLinearUnroll<float, Triad<float>> == 4);
static_assert(tl::kLinearUnroll<double, decltype(tl::as_expr(tl::cast<double>(std::declval<A1<float>>())))> == 4);
static_assert(tl::kLinearUnroll<double, decltype(tl::as_expr(std::declval<A1<double>>() * 2.0))> == 1);
#endif

// 8-byte and 16-byte elements (one per thread on GPU), an odd count: every element checked.
TYPED_TEST(ExprTest, WideElementTriads) {
  const Device d = this->device();
  const tl::index_t n = 100003;
  auto x = tl::arange<double>(n, d), y = tl::full<double, 1>({n}, 0.5, d);
  auto out = tl::empty<double, 1>({n}, d);
  out = x * y + x;
  const auto h = tl::to_host(out);
  for (tl::index_t i = 0; i < n; ++i) ASSERT_EQ(h[i], 1.5 * i) << i;
  auto c = tl::full<tessera::complex128, 1>({n}, {1.0, 2.0}, d);
  auto e = tl::full<tessera::complex128, 1>({n}, {0.0, 1.0}, d);
  auto co = tl::empty<tessera::complex128, 1>({n}, d);
  co = c * e + c;
  const auto hc = tl::to_host(co);
  for (tl::index_t i = 0; i < n; ++i) ASSERT_EQ(hc[i], tessera::complex128(-1.0, 3.0)) << i;
}

TYPED_TEST(ExprTest, MathBroadcastAndWhere) {
  const Device d = this->device();
  std::vector<double> hv(12);
  for (int i = 0; i < 12; ++i) hv[i] = 0.1 * i + 0.05;
  auto v = tl::from_host(hv, tl::Shape<2>{3, 4}, d);
  auto row = tl::from_host(std::vector<double>{1, 2, 3, 4}, tl::Shape<2>{1, 4}, d);
  auto u = tl::empty<double, 2>({3, 4}, d);
  u = 2.0 * v + tl::sin(v) - tl::exp(v) / row + tl::pow(v, row) + tl::tanh(tl::sqrt(v)) * tl::log(v + 1.0);
  auto hu = tl::to_host(u);
  for (int i = 0; i < 12; ++i) {
    const double x = hv[i], r = 1 + i % 4;
    EXPECT_NEAR(hu[i], 2 * x + std::sin(x) - std::exp(x) / r + std::pow(x, r) + std::tanh(std::sqrt(x)) * std::log(x + 1),
                1e-13);
  }
  auto w = tl::empty<double, 2>({3, 4}, d);
  w = tl::where(v > 0.5 && !(v > 1.0), v, -v) + tl::maximum(v, 0.3) - tl::minimum(v, 0.3) + tl::abs(-v) + tl::cos(v) * tl::tan(v);
  auto hw = tl::to_host(w);
  for (int i = 0; i < 12; ++i) {
    const double x = hv[i];
    EXPECT_NEAR(hw[i], ((x > 0.5 && !(x > 1.0)) ? x : -x) + std::max(x, 0.3) - std::min(x, 0.3) + x + std::cos(x) * std::tan(x), 1e-13);
  }
  w += v;
  w *= 2.0;
  auto hw2 = tl::to_host(w);
  EXPECT_NEAR(hw2[5], 2 * (hw[5] + hv[5]), 1e-13);
  auto m = tl::empty<std::int32_t, 2>({3, 4}, d);
  m = tl::cast<std::int32_t>(v * 10.0);
  EXPECT_EQ(tl::to_host(m)[7], static_cast<std::int32_t>(hv[7] * 10.0));
}

TYPED_TEST(ExprTest, ComplexAndStridedViews) {
  const Device d = this->device();
  using C = tessera::complex128;
  auto c = tl::full<C, 1>({6}, C{1.0, 2.0}, d);
  auto out = tl::empty<C, 1>({6}, d);
  out = tl::conj(c) * c + tl::exp(c);
  const C want = std::conj(C{1, 2}) * C{1, 2} + std::exp(C{1, 2});
  EXPECT_NEAR(std::abs(tl::to_host(out)[3] - want), 0.0, 1e-13);
  auto re = tl::empty<double, 1>({6}, d);
  re = tl::real(c) + tl::imag(c) * 10.0 + tl::abs(c);
  EXPECT_NEAR(tl::to_host(re)[0], 1 + 20 + std::sqrt(5.0), 1e-13);
  // Writing through a transposed, sliced view.
  auto a = tl::zeros<float, 2>({4, 6}, d);
  auto b = tl::arange<float>(12, d).template reshape<2>(tl::Shape<2>{6, 2});
  auto view = a.slice(1, 0, 6, 1).slice(0, 1, 4, 2).transpose();  // shape [6, 2]
  view = b * 2.f;
  const auto ha = tl::to_host(a);
  for (int r = 0; r < 4; ++r)
    for (int col = 0; col < 6; ++col) {
      const float expect = (r == 1 || r == 3) ? 2.f * (col * 2 + (r == 3)) : 0.f;
      EXPECT_EQ(ha[r * 6 + col], expect) << r << "," << col;
    }
}

// i * 0.5 - 3 at element i: distinct values, exact in every element type.
template <class T>
std::vector<T> ramp(std::size_t n) {
  std::vector<T> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<T>(static_cast<double>(i) * 0.5 - 3.0);
  return v;
}

// Copies from permuted views (the CUDA backend tiles them through shared memory): every axis
// order of a 3-D array with ragged edges, a batch axis and an extent-1 axis, for 4-, 8- and
// 16-byte elements, against the serial gather.
template <class T>
void check_permuted_copies(Device d) {
  const tl::index_t n0 = 37, n1 = 5, n2 = 70;
  const std::vector<T> hv = ramp<T>(n0 * n1 * n2);
  const auto a = tl::from_host(hv, tl::Shape<3>{n0, n1, n2}, d);
  const std::array<std::array<int, 3>, 5> orders{{{2, 1, 0}, {0, 2, 1}, {1, 2, 0}, {2, 0, 1}, {1, 0, 2}}};
  for (const auto& o : orders) {
    const auto v = a.permute(o);
    auto out = tl::empty<T, 3>(v.shape(), d);
    tl::copy(out, v);
    const auto h = tl::to_host(out);
    const tl::index_t ext[3] = {n0, n1, n2}, st[3] = {n1 * n2, n2, 1};
    for (tl::index_t i = 0; i < ext[o[0]]; ++i)
      for (tl::index_t j = 0; j < ext[o[1]]; ++j)
        for (tl::index_t k = 0; k < ext[o[2]]; ++k) {
          const T want = hv[i * st[o[0]] + j * st[o[1]] + k * st[o[2]]];
          ASSERT_EQ(h[(i * ext[o[1]] + j) * ext[o[2]] + k], want) << o[0] << o[1] << o[2] << " at " << i << "," << j << "," << k;
        }
  }
  // A 2-D transpose with an extent-1 axis in between and a sliced (strided) source.
  const auto b = tl::from_host(hv, tl::Shape<3>{n0 * n1, 1, n2}, d);
  const auto t = b.slice(0, 1, n0 * n1, 2).permute({2, 1, 0});  // [n2, 1, (n0 n1 - 1) / 2]
  auto out = tl::empty<T, 3>(t.shape(), d);
  tl::copy(out, t);
  const auto h = tl::to_host(out);
  for (tl::index_t c = 0; c < n2; ++c)
    for (tl::index_t r = 0; r < (n0 * n1 - 1) / 2; ++r) ASSERT_EQ(h[c * ((n0 * n1 - 1) / 2) + r], hv[(1 + 2 * r) * n2 + c]);
}

TYPED_TEST(ExprTest, PermutedCopiesMatchTheGather) {
  check_permuted_copies<float>(this->device());
  check_permuted_copies<double>(this->device());
  check_permuted_copies<tessera::complex128>(this->device());
}

// Strided copies that are not transposes (the CUDA backend copies them by rows): a stepped source
// into a contiguous array, a contiguous source into a stepped destination, a row axis merged
// across two axes, and rows too short for the row kernel, against the serial gather.
template <class T>
void check_strided_copies(Device d) {
  const tl::index_t n0 = 6, n1 = 9, n2 = 300;
  const std::vector<T> hv = ramp<T>(n0 * n1 * n2);
  const auto a = tl::from_host(hv, tl::Shape<3>{n0, n1, n2}, d);
  auto at = [&](tl::index_t i, tl::index_t j, tl::index_t k) { return hv[(i * n1 + j) * n2 + k]; };
  // Every other element of every third row, from element 1.
  const auto v = a.slice(1, 0, n1, 3).slice(2, 1, n2, 2);  // [6, 3, 150]
  auto out = tl::empty<T, 3>(v.shape(), d);
  tl::copy(out, v);
  auto h = tl::to_host(out);
  for (tl::index_t i = 0; i < n0; ++i)
    for (tl::index_t j = 0; j < 3; ++j)
      for (tl::index_t k = 0; k < 150; ++k) ASSERT_EQ(h[(i * 3 + j) * 150 + k], at(i, 3 * j, 1 + 2 * k)) << i << "," << j << "," << k;
  // Into a stepped destination: the source's values land on every other element, the rest keep 0.
  auto dst = tl::full<T, 3>({n0, n1, n2}, T(0), d);
  const auto src = tl::from_host(std::vector<T>(hv.begin(), hv.begin() + n0 * n1 * (n2 / 2)), tl::Shape<3>{n0, n1, n2 / 2}, d);
  auto dv = dst.slice(2, 0, n2, 2);
  tl::copy(dv, src);
  h = tl::to_host(dst);
  for (tl::index_t r = 0; r < n0 * n1; ++r)
    for (tl::index_t k = 0; k < n2; ++k) ASSERT_EQ(h[r * n2 + k], k % 2 ? T(0) : hv[r * (n2 / 2) + k / 2]) << r << "," << k;
  // Rows of 3 (the generic kernel): one column in three.
  const auto c = a.slice(2, 0, 9, 3);
  auto cout = tl::empty<T, 3>(c.shape(), d);
  tl::copy(cout, c);
  h = tl::to_host(cout);
  for (tl::index_t i = 0; i < n0; ++i)
    for (tl::index_t j = 0; j < n1; ++j)
      for (tl::index_t k = 0; k < 3; ++k) ASSERT_EQ(h[(i * n1 + j) * 3 + k], at(i, j, 3 * k));
}

TYPED_TEST(ExprTest, StridedCopiesMatchTheGather) {
  check_strided_copies<float>(this->device());
  check_strided_copies<double>(this->device());
  check_strided_copies<tessera::complex128>(this->device());
}

// Complex products by the textbook formula, as NumPy computes them (no Annex G recovery).
TYPED_TEST(ExprTest, ComplexProductsAreTheTextbookFormula) {
  const Device d = this->device();
  using C = tessera::complex64;
  const std::vector<C> ha{{1.5f, -2.f}, {0.25f, 3.f}, {-7.f, 0.5f}}, hb{{2.f, 0.5f}, {-1.f, -1.f}, {0.f, 4.f}};
  const auto a = tl::from_host(ha, tl::Shape<1>{3}, d), b = tl::from_host(hb, tl::Shape<1>{3}, d);
  auto out = tl::empty<C, 1>({3}, d);
  out = a * b + a;
  const auto h = tl::to_host(out);
  for (int i = 0; i < 3; ++i) {
    const C want{ha[i].real() * hb[i].real() - ha[i].imag() * hb[i].imag() + ha[i].real(),
                 ha[i].real() * hb[i].imag() + ha[i].imag() * hb[i].real() + ha[i].imag()};
    EXPECT_NEAR(std::abs(h[i] - want), 0.0, 1e-6) << i;
  }
}

TYPED_TEST(ExprTest, ErrorsNameShapesAndDevices) {
  const Device d = this->device();
  auto a = tl::ones<float, 2>({512, 512}, d), b = tl::ones<float, 2>({512, 256}, d);
  try {
    auto e = a + b;
    (void)e;
    FAIL() << "no exception";
  } catch (const tessera::ShapeMismatch& e) {
    EXPECT_NE(std::string(e.what()).find("shape mismatch in add: [512,512] vs [512,256]"), std::string::npos) << e.what();
  }
  if (d.is_cuda()) {
    auto h = tl::ones<float, 2>({512, 512}, Device::host());
    EXPECT_THROW(a + h, tessera::DeviceMismatch);
    EXPECT_THROW(h = a * 2.f, tessera::DeviceMismatch);
  }
  auto small = tl::empty<float, 2>({2, 2}, d);
  EXPECT_THROW(small = a * 2.f, tessera::ShapeMismatch);
}
