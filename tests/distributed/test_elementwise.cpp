// Fused elementwise expressions on distributed arrays (compiled by nvcc in CUDA builds).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "device_test.hpp"
#include "tessera/distributed/elementwise.hpp"
#include "tessera/local/basic_ops.hpp"

namespace {
using namespace tessera;
using namespace tessera::distributed;
using comm::ProcessGroup;
using tessera::testing::DeviceTest;

// An array whose interior holds f(global flat index); halos hold -1.
template <class T, int R, class F>
Array<T, R> filled(const Layout<R>& l, Device d, F f) {
  Array<T, R> a(l, d);
  local::fill(a.local(), T(-1));
  const auto b = l.local_box();
  const auto s = b.shape();
  std::vector<T> host(b.size());
  for (index_t i = 0; i < b.size(); ++i) {
    index_t rem = i, flat = 0, stride = 1;
    for (int ax = R - 1; ax >= 0; --ax) {
      flat += (b.lo[ax] + rem % s[ax]) * stride;
      rem /= s[ax];
      stride *= l.global_shape()[ax];
    }
    host[i] = f(flat);
  }
  local::copy(a.interior(), local::from_host(host, s, d));
  return a;
}

template <class T, int R>
std::vector<T> interior_on_host(const Array<T, R>& a) {
  auto c = local::empty<T, R>(a.interior().shape(), a.device());
  local::copy(c, a.interior());
  return local::to_host(c);
}

template <class K> class Elementwise : public DeviceTest<K> {};
TYPED_TEST_SUITE(Elementwise, tessera::testing::DeviceKinds, tessera::testing::DeviceKindNames);

TYPED_TEST(Elementwise, FusedTriadOnUnevenThreeDGridWithHalos) {
  const Device d = this->device();
  const auto g = ProcessGrid::balanced(tessera::testing::world(), 3);
  const auto l = Layout<3>::block(g, {17, 13, 5});
  const auto lh = l.with_halo({1, 1, 0});
  auto a = filled<double, 3>(lh, d, [](index_t i) { return 0.5 * i; });
  auto b = filled<double, 3>(l, d, [](index_t i) { return double(i % 7); });
  auto c = filled<double, 3>(lh, d, [](index_t) { return 2.0; });
  Array<double, 3> z(l, d);
  z = a * b + c - 1.0;
  const auto got = interior_on_host(z), av = interior_on_host(a), bv = interior_on_host(b);
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_DOUBLE_EQ(got[i], av[i] * bv[i] + 1.0) << i;
  // Halos of the destination are untouched.
  auto zh = Array<double, 3>(lh, d);
  local::fill(zh.local(), -7.25);
  zh = -a;
  const auto all = local::to_host(zh.local());
  const auto inner = interior_on_host(zh);
  index_t sentinels = 0;
  for (double v : all) sentinels += v == -7.25;
  EXPECT_EQ(sentinels, zh.local().size() - zh.interior().size());
  for (std::size_t i = 0; i < inner.size(); ++i) EXPECT_DOUBLE_EQ(inner[i], -av[i]);
}

TYPED_TEST(Elementwise, MapAppliesAnyLocalFunction) {
  const Device d = this->device();
  const ProcessGrid g(tessera::testing::world(), {tessera::testing::world().size()});
  const Layout<2> l(g, {1, 29}, {-1, 0});  // 1 x N split along the long axis
  auto x = filled<float, 2>(l, d, [](index_t i) { return float(i); });
  Array<float, 2> y(l, d);
  y = map([](auto v, auto s) { return local::sqrt(v) * s; }, x, 2.0f);
  const auto xv = interior_on_host(x), yv = interior_on_host(y);
  for (std::size_t i = 0; i < yv.size(); ++i) EXPECT_FLOAT_EQ(yv[i], std::sqrt(xv[i]) * 2.0f);
}

TYPED_TEST(Elementwise, DifferentLayoutsThrowLayoutMismatch) {
  const Device d = this->device();
  const auto world = tessera::testing::world();
  const ProcessGrid g(world, {world.size()});
  const Layout<2> rows(g, {8, 6}, {0, -1}), cols(g, {8, 6}, {-1, 0});
  Array<float, 2> a(rows, d), b(cols, d), z(rows, d);
  if (world.size() == 1) {
    EXPECT_NO_THROW(z = a + b);  // one rank: both layouts have the same single block
    return;
  }
  try {
    z = a + b;
    ADD_FAILURE() << "no LayoutMismatch";
  } catch (const LayoutMismatch& e) {
    EXPECT_NE(std::string(e.what()).find("split {0,-1}"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("split {-1,0}"), std::string::npos) << e.what();
  }
  Array<float, 2> w(cols, d);
  EXPECT_THROW(w = a * 2.0f, LayoutMismatch);
}

}  // namespace
