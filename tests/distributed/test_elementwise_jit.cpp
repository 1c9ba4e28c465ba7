// Distributed fused expressions from a plain C++ translation unit (g++, no nvcc): on GPU arrays
// they go through the runtime kernel compiler, on host arrays through the host executor; the named
// math nodes (td::sin, td::where, td::clip, ...) against a serial reference from the global index.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "device_test.hpp"
#include "tessera/distributed/elementwise.hpp"
#include "tessera/local/basic_ops.hpp"

namespace {
using namespace tessera;
using namespace tessera::distributed;

template <class T> std::vector<T> interior(const Array<T, 2>& a) {
  auto c = local::empty<T, 2>(a.interior().shape(), a.device());
  local::copy(c, a.interior());
  return local::to_host(c);
}
// f(global row, global column) on this rank's block.
template <class T, class F> Array<T, 2> filled(const Layout<2>& l, Device d, F f) {
  const auto b = l.local_box();
  std::vector<T> host;
  for (index_t i = b.lo[0]; i < b.hi[0]; ++i)
    for (index_t j = b.lo[1]; j < b.hi[1]; ++j) host.push_back(f(i, j));
  Array<T, 2> a(l, d);
  if (!host.empty()) local::copy(a.interior(), local::from_host(host, b.shape(), d));
  return a;
}

template <class K> class ElementwiseJit : public tessera::testing::DeviceTest<K> {};
TYPED_TEST_SUITE(ElementwiseJit, tessera::testing::DeviceKinds, tessera::testing::DeviceKindNames);

TYPED_TEST(ElementwiseJit, NamedMathNodesInPlainCpp) {
  const Device d = this->device();
  const auto l = Layout<2>::block(ProcessGrid::balanced(tessera::testing::world(), 2), {37, 23});
  auto fa = [](index_t i, index_t j) { return std::sin(0.3 * i + 0.7 * j) * 2.5; };
  auto fb = [](index_t i, index_t j) { return 0.01 * double(i * 23 + j) - 3.0; };
  const auto a = filled<double>(l, d, fa), b = filled<double>(l, d, fb);
  Array<double, 2> u(l, d), v(l, d);
  u = where(a > 0.0, a, 0.0) + sin(a) * clip(b, -1.0, 1.0) + arctan2(a, b) - expm1(a / 4.0) + floor(b) * 0.5;
  v = sqrt(abs(a)) + log1p(abs(b)) + cosh(a / 3.0) - round(b * 2.0) + rsqrt(abs(a) + 1.0) + cast<double>(b > a);
  const auto ug = interior(u), vg = interior(v);
  const auto box = l.local_box();
  std::size_t k = 0;
  for (index_t i = box.lo[0]; i < box.hi[0]; ++i)
    for (index_t j = box.lo[1]; j < box.hi[1]; ++j, ++k) {
      const double x = fa(i, j), y = fb(i, j);
      const double uw = (x > 0 ? x : 0.0) + std::sin(x) * std::min(std::max(y, -1.0), 1.0) + std::atan2(x, y) -
                        std::expm1(x / 4.0) + std::floor(y) * 0.5;
      const double vw = std::sqrt(std::abs(x)) + std::log1p(std::abs(y)) + std::cosh(x / 3.0) - std::rint(y * 2.0) +
                        1.0 / std::sqrt(std::abs(x) + 1.0) + (y > x ? 1.0 : 0.0);
      EXPECT_NEAR(ug[k], uw, 1e-12 * (1 + std::abs(uw))) << i << "," << j;
      EXPECT_NEAR(vg[k], vw, 1e-12 * (1 + std::abs(vw))) << i << "," << j;
    }
  // Operands of other blocks still throw, from plain C++ too.
  const auto other = Layout<2>(ProcessGrid(tessera::testing::world()), {37, 23}, {-1, 0});
  if (!other.same_blocks(l)) {
    const auto c = filled<double>(other, d, fa);
    EXPECT_THROW((void)(sin(a) + c), LayoutMismatch);
  }
}

TYPED_TEST(ElementwiseJit, StringKernelOnDistributedArrays) {
  const Device d = this->device();
  const auto l = Layout<2>::block(ProcessGrid::balanced(tessera::testing::world(), 2), {29, 17}, {1, 1});
  auto fa = [](index_t i, index_t j) { return 0.25 * double(i) - 0.5 * double(j); };
  const auto a = filled<double>(l, d, fa);
  Array<double, 2> z(l, d);
  local::ElementwiseKernel k("T x, T s", "T z", "z = s * x * x + 1", "dist_square");
  const auto other = Layout<2>(ProcessGrid(tessera::testing::world()), {29, 17}, {-1, 0});
  if (!other.same_blocks(l)) {
    const Array<double, 2> c(other, d);
    EXPECT_THROW(launch(k, a, 2.0, c), LayoutMismatch);
  }
  if (d.is_host()) {
    EXPECT_THROW(launch(k, a, 2.0, z), BackendUnavailable);  // string kernels are GPU kernels
    return;
  }
  launch(k, a, 2.0, z);  // interiors with halos: strided operands
  const auto zg = interior(z);
  const auto box = l.local_box();
  std::size_t n = 0;
  for (index_t i = box.lo[0]; i < box.hi[0]; ++i)
    for (index_t j = box.lo[1]; j < box.hi[1]; ++j, ++n) EXPECT_DOUBLE_EQ(zg[n], 2.0 * fa(i, j) * fa(i, j) + 1) << i << "," << j;
}


TYPED_TEST(ElementwiseJit, ReductionKernelOverTheWholeDistributedArray) {
  const Device d = this->device();
  const index_t rows = 41, cols = 19;
  const auto l = Layout<2>::block(ProcessGrid::balanced(tessera::testing::world(), 2), {rows, cols}, {1, 1});
  auto fa = [](index_t i, index_t j) { return std::cos(0.37 * double(i) + 0.11 * double(j)) * 3.0 - 0.2; };
  const auto a = filled<double>(l, d, fa);
  // The root mean square of w*x over every element (halos excluded: strided interiors), and the
  // largest element; post_map sees the global element count.
  local::ReductionKernel rms("T x, T w", "T y", "w * x * w * x", "a + b", "y = sqrt(a / n_reduced)", "0", "dist_rms");
  local::ReductionKernel largest("T x", "T y", "x", "a > b ? a : b", "y = a", "-1e300", "dist_max");
  auto y = local::zeros<double, 2>({1, 1}, d), m = local::zeros<double, 2>({1, 1}, d);
  const auto other = Layout<2>(ProcessGrid(tessera::testing::world()), {rows, cols}, {-1, 0});
  if (!other.same_blocks(l)) {
    const Array<double, 2> c(other, d);
    EXPECT_THROW(launch(rms, a, c, y), LayoutMismatch);
  }
  if (d.is_host()) {
    EXPECT_THROW(launch(rms, a, 0.5, y), BackendUnavailable);  // reduction kernels are GPU kernels
    return;
  }
  launch(rms, a, 0.5, y);
  launch(largest, a, m);
  double s2 = 0, best = -1e300;
  for (index_t i = 0; i < rows; ++i)
    for (index_t j = 0; j < cols; ++j) s2 += 0.25 * fa(i, j) * fa(i, j), best = std::max(best, fa(i, j));
  const double want = std::sqrt(s2 / double(rows * cols));
  EXPECT_NEAR(local::to_host(y)[0], want, 1e-13 * want);
  EXPECT_EQ(local::to_host(m)[0], best);  // a max is exact in any order
  // A scalar first: the partials and the all-gather still live on the arrays' device.
  local::ReductionKernel weighted("T w, T x", "T y", "w * x * w * x", "a + b", "y = sqrt(a / n_reduced)", "0",
                                  "dist_rms_scalar_first");
  auto y2 = local::zeros<double, 2>({1, 1}, d);
  launch(weighted, 0.5, a, y2);
  EXPECT_NEAR(local::to_host(y2)[0], want, 1e-13 * want);
}

}  // namespace
