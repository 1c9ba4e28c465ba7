// Reductions of distributed arrays, to a scalar and along an axis, against serial references on
// formula data: uneven, empty and replicated blocks, halos that must not count, ties.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <vector>

#include "device_test.hpp"
#include "dist_test_util.hpp"
#include "tessera/distributed/reduce.hpp"

namespace {
using namespace tessera;
using namespace tessera::distributed;
using tessera::distributed::testing::gather_to_host;
using comm::ProcessGroup;
using tessera::testing::DeviceTest;
using cd = std::complex<double>;

// An array whose interior holds f(global flat index) and whose halos hold `halo` (a value that
// would change the result if halos counted).
template <class T, int R, class F>
Array<T, R> filled(const Layout<R>& l, Device d, F f, T halo) {
  Array<T, R> a(l, d);
  local::fill(a.local(), halo);
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
template <class T, int R>
std::vector<T> serial(const Layout<R>& l, T (*f)(index_t)) {
  std::vector<T> v(l.global_size());
  for (index_t g = 0; g < l.global_size(); ++g) v[g] = f(g);
  return v;
}


// Layouts of a 3-D array over 1-, 2- and 3-D grids: halos, uneven and empty blocks (explicit
// offsets; axes shorter than the grid), a replicated grid axis.
std::vector<Layout<3>> layouts3(Index<3> n) {
  const auto world = tessera::testing::world();
  const int p = world.size();
  const ProcessGrid g1(world), g2 = ProcessGrid::balanced(world, 2), g3 = ProcessGrid::balanced(world, 3);
  std::vector<index_t> skew(p + 1, 0);  // all blocks of axis 0 empty but the last
  skew[p] = n[0];
  std::vector<index_t> uneven(p + 1);
  for (int c = 0; c <= p; ++c) uneven[c] = c == p ? n[1] : std::min<index_t>(n[1], 2 * c);
  return {
      Layout<3>::block(g3, n),
      Layout<3>::block(g3, n, {1, 1, 1}),
      Layout<3>(g1, n, {-1, -1, 0}, {0, 0, 1}),
      Layout<3>(g2, n, {1, -1, -1}, {0, 1, 0}),  // grid axis 0 splits nothing: replicas
      Layout<3>(g1, n, {0, -1, -1}, {skew, std::vector<index_t>{0, n[1]}, {0, n[2]}}, {0, 0, 0}),
      Layout<3>(g1, n, {-1, 0, -1}, {std::vector<index_t>{0, n[0]}, uneven, {0, n[2]}}, {1, 1, 0}),
      Layout<3>::block(g3, {1, 2, n[2]}),  // axes shorter than the grid
  };
}

std::int32_t ints(index_t g) { return static_cast<std::int32_t>((g * 37) % 101) - 50; }
double reals(index_t g) { return 10.0 * std::sin(0.37 * static_cast<double>(g)); }
float floats(index_t g) { return static_cast<float>(reals(g)); }
cd cplx(index_t g) { return {reals(g), std::cos(0.11 * static_cast<double>(g))}; }

template <class V>
index_t first_arg(const std::vector<V>& v, bool is_min) {
  index_t best = 0;
  for (index_t i = 1; i < static_cast<index_t>(v.size()); ++i)
    if (is_min ? v[i] < v[best] : v[best] < v[i]) best = i;
  return best;
}

template <class K> class Reduce : public DeviceTest<K> {};
TYPED_TEST_SUITE(Reduce, tessera::testing::DeviceKinds, tessera::testing::DeviceKindNames);

TYPED_TEST(Reduce, ScalarsMatchSerialOnEveryLayout) {
  const Device d = this->device();
  for (const auto& l : layouts3({17, 13, 5})) {
    SCOPED_TRACE(l.str());
    const auto iv = serial(l, ints);
    const auto rv = serial(l, reals);
    const auto a = filled<std::int32_t>(l, d, ints, -1000000);
    std::int64_t isum = 0;
    for (auto v : iv) isum += v;
    EXPECT_EQ(sum(a), isum);
    EXPECT_EQ(min(a), *std::min_element(iv.begin(), iv.end()));
    EXPECT_EQ(max(a), *std::max_element(iv.begin(), iv.end()));
    EXPECT_EQ(argmin(a), first_arg(iv, true));
    EXPECT_EQ(argmax(a), first_arg(iv, false));
    EXPECT_DOUBLE_EQ(mean(a), double(isum) / l.global_size());
    EXPECT_TRUE(any(a));
    EXPECT_EQ(all(a), std::find(iv.begin(), iv.end(), 0) == iv.end());

    const auto x = filled<double>(l, d, reals, 1e6);
    double s = 0, s2 = 0, scale = 0;
    for (double v : rv) s += v, s2 += v * v, scale += std::abs(v);
    EXPECT_NEAR(sum(x), s, 1e-12 * scale);
    EXPECT_NEAR(sum_squares(x), s2, 1e-12 * s2);
    EXPECT_NEAR(norm2(x), std::sqrt(s2), 1e-12 * std::sqrt(s2));
    EXPECT_NEAR(mean(x), s / l.global_size(), 1e-12 * scale);
    EXPECT_EQ(min(x), *std::min_element(rv.begin(), rv.end()));
    EXPECT_EQ(max(x), *std::max_element(rv.begin(), rv.end()));
    EXPECT_EQ(argmin(x), first_arg(rv, true));
    EXPECT_EQ(argmax(x), first_arg(rv, false));

    const auto f = filled<float>(l, d, floats, 1e6f);
    double fs = 0;
    for (index_t g = 0; g < l.global_size(); ++g) fs += floats(g);
    EXPECT_NEAR(sum(f), fs, 1e-5 * scale);

    const auto z = filled<cd>(l, d, cplx, cd(1e6, 1e6));
    cd zs = 0;
    double zs2 = 0;
    for (index_t g = 0; g < l.global_size(); ++g) zs += cplx(g), zs2 += std::norm(cplx(g));
    EXPECT_NEAR(std::abs(sum(z) - zs), 0.0, 1e-12 * scale);
    EXPECT_NEAR(norm2(z), std::sqrt(zs2), 1e-12 * std::sqrt(zs2));

    // dot with a second array of the same blocks but other halos.
    const auto y = filled<double>(l.with_halo({0, 1, 1}), d, [](index_t g) { return double(g % 3) - 1.0; }, 1e6);
    double dv = 0;
    for (index_t g = 0; g < l.global_size(); ++g) dv += reals(g) * (double(g % 3) - 1.0);
    EXPECT_NEAR(dot(x, y), dv, 1e-12 * scale);
    EXPECT_EQ(dot(a, a), [&] { std::int64_t t = 0; for (auto v : iv) t += std::int64_t(v) * v; return t; }());
  }
}

TYPED_TEST(Reduce, ProductsIncludingComplex) {
  const Device d = this->device();
  auto iv = [](index_t g) -> std::int64_t { return (g % 5 == 0 ? 2 : 1) * (g % 7 == 3 ? -1 : 1); };
  auto rv = [](index_t g) { return g % 4 == 1 ? 1.25 : (g % 9 == 0 ? -0.5 : 1.0); };
  auto zv = [](index_t g) { return g % 3 == 0 ? cd(0.0, 1.0) : cd(1.0, g % 2 ? 0.25 : -0.125); };
  for (const auto& l : layouts3({5, 4, 3})) {
    SCOPED_TRACE(l.str());
    std::int64_t ip = 1;
    double rp = 1;
    cd zp = 1;
    for (index_t g = 0; g < l.global_size(); ++g) ip *= iv(g), rp *= rv(g), zp *= zv(g);
    EXPECT_EQ(prod(filled<std::int64_t>(l, d, iv, 0)), ip);
    EXPECT_NEAR(prod(filled<double>(l, d, rv, 0.0)), rp, 1e-12 * std::abs(rp));
    EXPECT_NEAR(std::abs(prod(filled<cd>(l, d, zv, cd(0))) - zp), 0.0, 1e-12 * std::abs(zp));
  }
}

TYPED_TEST(Reduce, ArgTiesGoToTheSmallestGlobalIndex) {
  const Device d = this->device();
  const auto world = tessera::testing::world();
  const ProcessGrid g1(world), g2 = ProcessGrid::balanced(world, 2);
  std::vector<index_t> skew(world.size() + 1, 0);
  skew.back() = 6;
  // 6 x 8: minimum -1 at (5,5), (1,0) and (0,7) -> 7; maximum 9 at (3,0) and (2,6) -> 22. A 2-D
  // split puts (1,0) on a lower rank than (0,7), and the skewed blocks put index 0 on the last rank.
  const std::vector<Layout<2>> layouts = {
      Layout<2>::block(g2, {6, 8}), Layout<2>::block(g2, {6, 8}, {1, 1}), Layout<2>(g1, {6, 8}, {0, -1}),
      Layout<2>(g1, {6, 8}, {-1, 0}, {0, 1}), Layout<2>(g1, {6, 8}, {0, -1}, {skew, {0, 8}}, {0, 0})};
  auto f = [](index_t g) -> std::int32_t {
    if (g == 5 * 8 + 5 || g == 8 || g == 7) return -1;
    if (g == 3 * 8 || g == 2 * 8 + 6) return 9;
    return static_cast<std::int32_t>(g % 5);
  };
  for (const auto& l : layouts) {
    SCOPED_TRACE(l.str());
    EXPECT_EQ(argmin(filled<std::int32_t>(l, d, f, 9)), 7);     // a halo of 9 would win argmax if it counted
    EXPECT_EQ(argmax(filled<std::int32_t>(l, d, f, -1)), 22);
    EXPECT_EQ(argmin(filled<float>(l, d, [](index_t) { return 2.5f; }, 0.0f)), 0);
    EXPECT_EQ(argmax(filled<double>(l, d, [](index_t) { return 2.5; }, 9.0)), 0);
    EXPECT_EQ(argmax(filled<bool>(l, d, [](index_t g) { return g == 13 || g == 40; }, true)), 13);
    EXPECT_EQ(argmin(filled<bool>(l, d, [](index_t g) { return g != 30 && g != 31; }, false)), 30);
  }
}

TYPED_TEST(Reduce, EmptyArraysHaveIdentitiesOrThrowEverywhere) {
  const Device d = this->device();
  const auto world = tessera::testing::world();
  const Layout<2> l = Layout<2>::block(ProcessGrid::balanced(world, 2), {0, 5});
  const auto a = filled<double>(l, d, [](index_t) { return 1.0; }, 7.0);
  EXPECT_EQ(sum(a), 0.0);
  EXPECT_EQ(prod(a), 1.0);
  EXPECT_FALSE(any(a));
  EXPECT_TRUE(all(a));
  EXPECT_EQ(norm2(a), 0.0);
  EXPECT_THROW(min(a), InvalidArgument);
  EXPECT_THROW(argmax(a), InvalidArgument);
  EXPECT_THROW(mean(a), InvalidArgument);
  const auto s0 = sum(a, 0);
  EXPECT_EQ(s0.global_shape(), (Index<2>{1, 5}));
  for (double v : gather_to_host(s0)) EXPECT_EQ(v, 0.0);
  EXPECT_EQ(sum(a, 1).global_shape(), (Index<2>{0, 1}));
  EXPECT_THROW(max(a, 0), InvalidArgument);
  EXPECT_THROW(argmin(a, 0), InvalidArgument);
  EXPECT_NO_THROW(min(a, 1));  // no element to reduce along axis 1: an empty result
  EXPECT_THROW(sum(a, 2), InvalidArgument);
}

// Serial reduction of the global array v of shape n along `axis` (keepdims), by op(acc, x, j).
template <class Acc, class V, class Op>
std::vector<Acc> along(const std::vector<V>& v, Index<3> n, int axis, Acc init, Op op) {
  Index<3> on = n;
  on[axis] = 1;
  std::vector<Acc> out(local::shape_size(on), init);
  for (index_t i = 0; i < n[0]; ++i)
    for (index_t j = 0; j < n[1]; ++j)
      for (index_t k = 0; k < n[2]; ++k) {
        Index<3> o{i, j, k};
        const index_t pos = o[axis];
        o[axis] = 0;
        auto& acc = out[(o[0] * on[1] + o[1]) * on[2] + o[2]];
        acc = op(acc, v[(i * n[1] + j) * n[2] + k], pos);
      }
  return out;
}

TYPED_TEST(Reduce, AlongAnAxisSplitOrNot) {
  const Device d = this->device();
  const Index<3> n{17, 13, 5};
  // Few distinct values: many ties along every axis, across ranks too.
  auto f = [](index_t g) { return static_cast<std::int32_t>((g * 37) % 11) - 3; };
  for (const auto& l : layouts3(n)) {
    const auto nn = l.global_shape();
    std::vector<std::int32_t> v(l.global_size());
    for (index_t g = 0; g < l.global_size(); ++g) v[g] = f(g);
    const auto a = filled<std::int32_t>(l, d, f, 1000);
    const auto x = filled<double>(l, d, reals, 1e6);
    std::vector<double> xv(l.global_size());
    for (index_t g = 0; g < l.global_size(); ++g) xv[g] = reals(g);
    for (int axis = 0; axis < 3; ++axis) {
      SCOPED_TRACE(l.str() + ", axis " + std::to_string(axis));
      const auto s = sum(a, axis);
      auto want_shape = nn;
      want_shape[axis] = 1;
      EXPECT_EQ(s.global_shape(), want_shape);
      EXPECT_EQ(s.layout().split()[axis], -1);
      EXPECT_EQ(s.layout().halo(), (Index<3>{0, 0, 0}));
      for (int b = 0; b < 3; ++b)
        if (b != axis) EXPECT_EQ(s.layout().offsets(b), l.offsets(b));
      EXPECT_EQ(gather_to_host(s), (along<std::int64_t>(v, nn, axis, 0, [](std::int64_t acc, std::int32_t x, index_t) { return acc + x; })));
      EXPECT_EQ(gather_to_host(min(a, axis)), (along<std::int32_t>(v, nn, axis, 1 << 30, [](std::int32_t acc, std::int32_t x, index_t) { return std::min(acc, x); })));
      EXPECT_EQ(gather_to_host(max(a, axis)), (along<std::int32_t>(v, nn, axis, -(1 << 30), [](std::int32_t acc, std::int32_t x, index_t) { return std::max(acc, x); })));
      // argmin/argmax as (value, index) pairs, then the index.
      using P = std::pair<std::int32_t, index_t>;
      auto amin = along<P>(v, nn, axis, P{1 << 30, -1}, [](P acc, std::int32_t x, index_t j) { return x < acc.first ? P{x, j} : acc; });
      auto amax = along<P>(v, nn, axis, P{-(1 << 30), -1}, [](P acc, std::int32_t x, index_t j) { return x > acc.first ? P{x, j} : acc; });
      const auto gmin = gather_to_host(argmin(a, axis)), gmax = gather_to_host(argmax(a, axis));
      ASSERT_EQ(gmin.size(), amin.size());
      for (std::size_t i = 0; i < amin.size(); ++i) {
        EXPECT_EQ(gmin[i], amin[i].second) << i;
        EXPECT_EQ(gmax[i], amax[i].second) << i;
      }
      const auto m = gather_to_host(mean(a, axis));
      const auto ms = along<double>(v, nn, axis, 0.0, [](double acc, std::int32_t x, index_t) { return acc + x; });
      for (std::size_t i = 0; i < ms.size(); ++i) EXPECT_DOUBLE_EQ(m[i], ms[i] / nn[axis]) << i;
      const auto xs = gather_to_host(sum(x, axis));
      const auto xw = along<double>(xv, nn, axis, 0.0, [](double acc, double x, index_t) { return acc + x; });
      for (std::size_t i = 0; i < xw.size(); ++i) EXPECT_NEAR(xs[i], xw[i], 1e-12 * 10 * nn[axis]) << i;
      const auto xm = gather_to_host(max(x, axis));
      EXPECT_EQ(xm, (along<double>(xv, nn, axis, -1e300, [](double acc, double x, index_t) { return std::max(acc, x); })));
    }
  }
}

TYPED_TEST(Reduce, ComplexProductAlongASplitAxis) {
  const Device d = this->device();
  const auto world = tessera::testing::world();
  const Layout<2> l(ProcessGrid(world), {7, 3}, {0, -1});
  auto zv = [](index_t g) { return cd(1.0 + 0.1 * (g % 4), g % 3 == 0 ? 0.5 : -0.25); };
  const auto got = gather_to_host(prod(filled<cd>(l, d, zv, cd(0)), 0));
  ASSERT_EQ(got.size(), 3u);
  for (index_t c = 0; c < 3; ++c) {
    cd want = 1;
    for (index_t r = 0; r < 7; ++r) want *= zv(r * 3 + c);
    EXPECT_NEAR(std::abs(got[c] - want), 0.0, 1e-12 * std::abs(want)) << c;
  }
}

TYPED_TEST(Reduce, ReplicatedDataCountsOnce) {
  const Device d = this->device();
  const auto world = tessera::testing::world();
  // Every rank holds the whole array (a 2-D grid splitting nothing): the sum is not multiplied.
  const Layout<1> l(ProcessGrid::balanced(world, 2), {10}, {-1});
  const auto a = filled<std::int64_t>(l, d, [](index_t g) { return g; }, 0);
  EXPECT_EQ(sum(a), 45);
  EXPECT_EQ(argmax(a), 9);
  EXPECT_EQ(prod(filled<std::int64_t>(l, d, [](index_t g) { return g % 2 ? 2 : 1; }, 0)), 32);
}

TYPED_TEST(Reduce, DotNeedsTheSameBlocks) {
  const Device d = this->device();
  const auto world = tessera::testing::world();
  const ProcessGrid g(world);
  const Layout<2> rows(g, {8, 6}, {0, -1}), cols(g, {8, 6}, {-1, 0});
  const auto a = filled<float>(rows, d, [](index_t) { return 1.0f; }, 0.0f);
  const auto b = filled<float>(cols, d, [](index_t) { return 1.0f; }, 0.0f);
  if (world.size() == 1) {
    EXPECT_EQ(dot(a, b), 48.0f);
  } else {
    EXPECT_THROW(dot(a, b), LayoutMismatch);
  }
}

}  // namespace
