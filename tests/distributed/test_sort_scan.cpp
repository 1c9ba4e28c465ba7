// sort / argsort and cumsum / cumprod against serial references on the gathered input: uneven,
// empty and replicated blocks, duplicate keys, NaNs and -0.0, empty arrays, every axis.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <numeric>
#include <vector>

#include "algo_test_util.hpp"
#include "device_test.hpp"
#include "tessera/distributed/algorithms.hpp"

namespace {
using namespace tessera;
using namespace tessera::distributed;
using namespace tessera::distributed::testing;
using comm::ProcessGroup;
using tessera::testing::DeviceTest;
using cd = std::complex<double>;

template <class T> bool nan_last_less(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) return a < b || (!std::isnan(a) && std::isnan(b));
  else return a < b;
}
template <class T> bool same(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) return (std::isnan(a) && std::isnan(b)) || a == b;
  else return a == b;
}

// Keys with many duplicates; floats also NaN and -0.0.
template <class T> T key(index_t g) {
  if constexpr (std::is_floating_point_v<T>) {
    if (g % 13 == 5) return std::numeric_limits<T>::quiet_NaN();
    if (g % 17 == 3) return T(-0.0);
    return T(((g * 37) % 23) - 11) * T(0.5);
  } else {
    return T(((g * 7919) % 31) - 15);
  }
}

std::vector<Layout<1>> layouts1(index_t n) {
  const auto world = tessera::testing::world();
  const int p = world.size();
  const ProcessGrid g1(world), g2 = ProcessGrid::balanced(world, 2);
  return {Layout<1>(g1, {n}, {0}), Layout<1>(g1, {n}, {0}, {uneven(n, p)}, {0}),
          Layout<1>(g1, {n}, {0}, {skewed(n, p)}, {0}), Layout<1>(g2, {n}, {1}),  // replicas on grid axis 0
          Layout<1>(g1, {n}, {0}, {std::vector<index_t>(uneven(n, p))}, {n >= 2 * p ? 1 : 0})};
}

template <class T> void check_sort(Device d) {
  const int p = tessera::testing::world().size();
  for (index_t n : {index_t(0), index_t(1), index_t(7), index_t(100), index_t(1001)})
    for (const auto& l : layouts1(n)) {
      SCOPED_TRACE(l.str());
      const auto a = filled<T>(l, d, key<T>, T(99));
      const auto ref = serial<T>(n, key<T>);
      std::vector<index_t> perm(n);
      std::iota(perm.begin(), perm.end(), index_t(0));
      std::stable_sort(perm.begin(), perm.end(), [&](index_t x, index_t y) { return nan_last_less(ref[x], ref[y]); });
      const auto s = sort(a);
      const auto idx = argsort(a);
      ASSERT_EQ(s.global_shape()[0], n);
      const Layout<1> balanced(ProcessGrid(tessera::testing::world()), {n}, {0});
      for (int r = 0; r < p; ++r) {
        ASSERT_EQ(s.layout().local_box(r), balanced.local_box(r));
        ASSERT_EQ(idx.layout().local_box(r), balanced.local_box(r));
      }
      const auto got = gather_to_host(s);
      const auto gi = gather_to_host(idx);
      for (index_t i = 0; i < n; ++i) {
        ASSERT_TRUE(same(got[i], ref[perm[i]])) << "sort element " << i << ": " << got[i] << " vs " << ref[perm[i]];
        ASSERT_EQ(gi[i], perm[i]) << "argsort element " << i;
      }
    }
}

template <class K> class SortScan : public DeviceTest<K> {};
TYPED_TEST_SUITE(SortScan, tessera::testing::DeviceKinds, tessera::testing::DeviceKindNames);

TYPED_TEST(SortScan, SortAndStableArgsortOfEveryType) {
  check_sort<float>(this->device());
  check_sort<double>(this->device());
  check_sort<std::int32_t>(this->device());
  check_sort<std::int64_t>(this->device());
}

TYPED_TEST(SortScan, SortOfAllEqualKeysStaysBalanced) {
  const Device d = this->device();
  const auto a = filled<std::int64_t>(Layout<1>(ProcessGrid(tessera::testing::world()), {257}, {0}), d,
                                      [](index_t) { return std::int64_t(4); });
  const auto gi = gather_to_host(argsort(a));
  for (index_t i = 0; i < 257; ++i) ASSERT_EQ(gi[i], i);
}

TYPED_TEST(SortScan, SortOfTheFlattenedNdArray) {
  const Device d = this->device();
  const auto world = tessera::testing::world();
  for (const auto& l : {Layout<2>::block(ProcessGrid::balanced(world, 2), {7, 9}, {1, 1}),
                        Layout<2>(ProcessGrid(world), {7, 9}, {0, -1})}) {
    SCOPED_TRACE(l.str());
    const auto a = filled<double>(l, d, key<double>, 1e9);
    const auto ref = serial<double>(63, key<double>);
    EXPECT_EQ(gather_to_host(ravel(a)).size(), 63u);
    for (index_t g = 0; g < 63; ++g) ASSERT_TRUE(same(gather_to_host(ravel(a))[g], ref[g])) << g;
    std::vector<index_t> perm(63);
    std::iota(perm.begin(), perm.end(), index_t(0));
    std::stable_sort(perm.begin(), perm.end(), [&](index_t x, index_t y) { return nan_last_less(ref[x], ref[y]); });
    const auto gi = gather_to_host(argsort(a));
    const auto gs = gather_to_host(sort(a));
    for (index_t i = 0; i < 63; ++i) {
      ASSERT_EQ(gi[i], perm[i]) << i;
      ASSERT_TRUE(same(gs[i], ref[perm[i]])) << i;
    }
  }
}

// Layouts of a 3-D array: 2-D and 1-D grids, halos, uneven and empty blocks.
std::vector<Layout<3>> layouts3(Index<3> n) {
  const auto world = tessera::testing::world();
  const int p = world.size();
  const ProcessGrid g1(world), g2 = ProcessGrid::balanced(world, 2);
  return {Layout<3>::block(g2, n), Layout<3>::block(g2, n, {1, 1, 0}), Layout<3>(g1, n, {-1, -1, 0}),
          Layout<3>(g1, n, {-1, 0, -1}, {std::vector<index_t>{0, n[0]}, uneven(n[1], p), {0, n[2]}}, {0, 0, 0}),
          Layout<3>(g1, n, {0, -1, -1}, {skewed(n[0], p), {0, n[1]}, {0, n[2]}}, {0, 0, 0}),
          Layout<3>(g2, n, {-1, 1, 0})};
}

// Sort / argsort along every axis of every 3-D layout against a stable serial sort of each row.
template <class T> void check_axis_sorts(Device d) {
  const Index<3> n{5, 7, 6};
  const index_t total = 5 * 7 * 6;
  const auto ref = serial<T>(total, key<T>);
  for (const auto& l : layouts3(n))
    for (int axis = 0; axis < 3; ++axis) {
      SCOPED_TRACE(l.str() + " axis " + std::to_string(axis));
      const auto a = filled<T>(l, d, key<T>, T(99));
      const auto vs = sort(a, axis);
      const auto is = argsort(a, axis);
      EXPECT_TRUE(vs.layout().same_blocks(l)) << "on the input's blocks: " << vs.layout().str();
      EXPECT_TRUE(is.layout().same_blocks(l)) << is.layout().str();
      const auto gv = gather_to_host(vs);
      const auto gi = gather_to_host(is);
      const index_t st = axis == 0 ? 42 : axis == 1 ? 6 : 1;
      for (index_t g = 0; g < total; ++g) {
        if ((g / st) % n[axis] != 0) continue;  // g starts a row along the axis
        std::vector<index_t> row(n[axis]);
        std::iota(row.begin(), row.end(), index_t(0));
        std::stable_sort(row.begin(), row.end(),
                         [&](index_t x, index_t y) { return nan_last_less(ref[g + x * st], ref[g + y * st]); });
        for (index_t j = 0; j < n[axis]; ++j) {
          ASSERT_EQ(gi[g + j * st], row[j]) << "argsort at " << g + j * st;
          ASSERT_TRUE(same(gv[g + j * st], ref[g + row[j] * st])) << "sort at " << g + j * st;
        }
      }
    }
}

TYPED_TEST(SortScan, SortAndArgsortAlongEveryAxis) {
  const Device d = this->device();
  check_axis_sorts<std::int32_t>(d);
  check_axis_sorts<std::int64_t>(d);
  check_axis_sorts<float>(d);
  check_axis_sorts<double>(d);
  // 1-D: the sample sort, on the input's blocks; a bad axis names itself.
  const auto world = tessera::testing::world();
  const Layout<1> l(ProcessGrid(world), {41}, {0}, {uneven(41, world.size())}, {0});
  const auto a = filled<double>(l, d, key<double>);
  EXPECT_TRUE(sort(a, 0).layout().same_blocks(l));
  EXPECT_EQ(gather_to_host(sort(a, 0)).size(), 41u);
  EXPECT_THROW((void)sort(filled<double>(layouts3({5, 7, 6})[0], d, key<double>), 3), InvalidArgument);
}

template <class T, class U, class F>
void check_scans(Device d, F f, double tol) {
  const Index<3> n{5, 7, 6};
  const auto ref = serial<T>(5 * 7 * 6, f);
  for (const auto& l : layouts3(n))
    for (int axis = 0; axis < 3; ++axis) {
      SCOPED_TRACE(l.str() + " axis " + std::to_string(axis));
      const auto a = filled<T>(l, d, f, T(3));
      const auto cs = gather_to_host(cumsum(a, axis));
      const auto cp = gather_to_host(cumprod(a, axis));
      const index_t st = axis == 0 ? 42 : axis == 1 ? 6 : 1;
      for (index_t g = 0; g < 5 * 7 * 6; ++g) {
        const index_t i = (g / st) % n[axis];
        U sum(ref[g]), prod(ref[g]);
        if (i > 0) sum = cs[g - st] + U(ref[g]), prod = cp[g - st] * U(ref[g]);  // the reference, recursively
        ASSERT_LE(std::abs(cs[g] - sum), tol) << "cumsum at " << g;
        ASSERT_LE(std::abs(cp[g] - prod), tol) << "cumprod at " << g;
      }
    }
}

TYPED_TEST(SortScan, CumsumCumprodAlongEveryAxis) {
  const Device d = this->device();
  check_scans<std::int32_t, std::int64_t>(d, [](index_t g) { return std::int32_t(g % 5 == 0 ? 2 : g % 7 == 1 ? -1 : 1); }, 0);
  check_scans<double, double>(d, [](index_t g) { return 1.0 + 0.1 * std::sin(double(g)); }, 1e-12);
  check_scans<cd, cd>(d, [](index_t g) { return cd(1.0 + 0.05 * std::sin(double(g)), 0.05 * std::cos(double(g))); }, 1e-12);
  check_scans<bool, std::int64_t>(d, [](index_t g) { return g % 3 != 0; }, 0);
}

TYPED_TEST(SortScan, OneDimensionalScanAndBadAxis) {
  const Device d = this->device();
  const auto world = tessera::testing::world();
  for (index_t n : {index_t(0), index_t(1), index_t(1000)}) {
    const auto a = filled<float>(Layout<1>(ProcessGrid(world), {n}, {0}, {uneven(n, world.size())}, {0}), d,
                                 [](index_t g) { return float(g % 3); });
    const auto c = gather_to_host(cumsum(a));
    double acc = 0;
    for (index_t g = 0; g < n; ++g) {
      acc += g % 3;
      ASSERT_EQ(c[g], float(acc)) << g;
    }
    EXPECT_THROW((void)cumsum(a, 1), InvalidArgument);
  }
}

}  // namespace
