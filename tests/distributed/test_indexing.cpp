// take / put, histogram / bincount, flatnonzero / compress / where against serial references on
// the gathered arrays: uneven, empty, replicated and halo'd blocks, negative and duplicate
// indices, out-of-range indices, empty arrays.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <limits>
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

// Layouts of a 2-D {r, c} array: 2-D blocks with halos, a replicated grid axis, uneven and skewed.
std::vector<Layout<2>> layouts2(index_t r, index_t c) {
  const auto world = tessera::testing::world();
  const int p = world.size();
  const ProcessGrid g1(world), g2 = ProcessGrid::balanced(world, 2);
  return {Layout<2>::block(g2, {r, c}, {1, 1}), Layout<2>(g2, {r, c}, {-1, 1}),
          Layout<2>(g1, {r, c}, {-1, 0}, {std::vector<index_t>{0, r}, uneven(c, p)}, {0, 0}),
          Layout<2>(g1, {r, c}, {0, -1}, {skewed(r, p), std::vector<index_t>{0, c}}, {0, 0})};
}
std::vector<Layout<1>> layouts1(index_t n) {
  const auto world = tessera::testing::world();
  const int p = world.size();
  const ProcessGrid g1(world), g2 = ProcessGrid::balanced(world, 2);
  return {Layout<1>(g1, {n}, {0}), Layout<1>(g1, {n}, {0}, {uneven(n, p)}, {0}), Layout<1>(g2, {n}, {0})};
}

cd val(index_t g) { return {double(g), -0.5 * double(g)}; }
std::int64_t index_at(index_t i) { return ((i * 7) % 23) - 11; }  // negative, duplicate, all in [-12, 12)

template <class K> class Indexing : public DeviceTest<K> {};
TYPED_TEST_SUITE(Indexing, tessera::testing::DeviceKinds, tessera::testing::DeviceKindNames);

TYPED_TEST(Indexing, TakeAndPutAtGlobalIndices) {
  const Device d = this->device();
  const index_t rows = 3, cols = 4, n = rows * cols;
  for (const auto& la : layouts2(rows, cols))
    for (const auto& li : layouts1(30)) {
      SCOPED_TRACE(la.str() + " by " + li.str());
      const auto a = filled<cd>(la, d, val, cd(-99, -99));
      const auto idx = filled<std::int64_t>(li, d, index_at);
      const auto t = gather_to_host(take(a, idx));
      for (index_t i = 0; i < 30; ++i) {
        const std::int64_t g = index_at(i) < 0 ? index_at(i) + n : index_at(i);
        ASSERT_EQ(t[i], val(g)) << "take at " << i;
      }
      // put: unique indices (positions 0..n-1 reversed), values 1000 + position.
      auto b = filled<cd>(la, d, val, cd(-99, -99));
      const Layout<1> lp(li.grid(), {n}, {li.split()[0]});
      const auto pidx = filled<std::int64_t>(lp, d, [&](index_t i) { return std::int64_t(i % 2 ? n - i : i - n); });  // a permutation (n even)
      const auto pv = filled<cd>(lp, d, [](index_t i) { return cd(1000.0 + double(i), 1.0); });
      put(b, pidx, pv);
      const auto got = gather_to_host(b);
      for (index_t i = 0; i < n; ++i) {
        const std::int64_t g = i % 2 ? n - i : i;
        ASSERT_EQ(got[g], cd(1000.0 + double(i), 1.0)) << "put at " << i;
      }
    }
}

TYPED_TEST(Indexing, OutOfRangeIndexThrowsIndexErrorOnEveryRank) {
  const Device d = this->device();
  const auto world = tessera::testing::world();
  const auto a = filled<double>(Layout<1>(ProcessGrid(world), {10}, {0}), d, [](index_t g) { return double(g); });
  const auto idx = filled<std::int64_t>(Layout<1>(ProcessGrid(world), {9}, {0}), d,
                                        [](index_t i) { return std::int64_t(i == 7 ? 10 : i); });
  try {
    (void)take(a, idx);
    FAIL() << "no exception";
  } catch (const IndexError& e) {
    EXPECT_NE(std::string(e.what()).find("index 10 at position 7"), std::string::npos) << e.what();
  }
  const auto v = filled<double>(idx.layout(), d, [](index_t) { return 1.0; });
  auto b = a;
  EXPECT_THROW(put(b, idx, v), IndexError);
}

TYPED_TEST(Indexing, HistogramAndBincount) {
  const Device d = this->device();
  for (const auto& l : layouts2(9, 11)) {
    SCOPED_TRACE(l.str());
    auto f = [](index_t g) {
      return g % 10 == 3 ? std::numeric_limits<double>::quiet_NaN() : 4.0 * std::sin(0.9 * double(g));
    };
    const auto x = filled<double>(l, d, f, 1e9);
    const auto h = local::to_host(local::to(histogram(x, 7, -3.0, 3.0), Device::host()));
    std::vector<std::int64_t> ref(7, 0);
    for (index_t g = 0; g < 99; ++g) {
      const double v = f(g);
      if (!(v >= -3.0 && v <= 3.0)) continue;
      ++ref[std::min<index_t>(6, index_t((v + 3.0) * 7 / 6.0))];
    }
    EXPECT_EQ(h, ref);
    auto iv = [](index_t g) { return std::int32_t((g * 13) % 17); };
    const auto xi = filled<std::int32_t>(l, d, iv, std::int32_t(-5));
    const auto bc = local::to_host(local::to(bincount(xi, 20), Device::host()));
    std::vector<std::int64_t> bref(20, 0);
    for (index_t g = 0; g < 99; ++g) ++bref[iv(g)];
    EXPECT_EQ(bc, bref);
  }
  const auto e = filled<std::int64_t>(Layout<1>(ProcessGrid(tessera::testing::world()), {0}, {0}), d, [](index_t) { return std::int64_t(0); });
  EXPECT_EQ(bincount(e, 3).size(), 3);
  const auto neg = filled<std::int64_t>(Layout<1>(ProcessGrid(tessera::testing::world()), {5}, {0}), d,
                                        [](index_t g) { return std::int64_t(g - 1); });
  EXPECT_THROW((void)bincount(neg), InvalidArgument);
}

// numpy.histogram compares against its linspace edges after the first guess (issue #41):
// np.histogram(np.arange(10) / 10, 10, (0, 1)) counts 1 1 2 0 1 2 1 0 1 1 (0.3 falls below the
// edge 0.30000000000000004, 0.6 and 0.7 likewise), float32 data 1 each; the numpy interop test
// (histogram_numpy) covers edges, ulps either side, NaN/inf and integers against numpy itself.
TYPED_TEST(Indexing, HistogramMatchesNumpyAtItsEdges) {
  const Device d = this->device();
  const Layout<1> l(ProcessGrid(tessera::testing::world()), {10}, {0});
  const auto x = filled<double>(l, d, [](index_t g) { return double(g) / 10; }, 0.0);
  EXPECT_EQ(local::to_host(local::to(histogram(x, 10, 0.0, 1.0), Device::host())),
            (std::vector<std::int64_t>{1, 1, 2, 0, 1, 2, 1, 0, 1, 1}));
  const auto xf = filled<float>(l, d, [](index_t g) { return static_cast<float>(double(g) / 10); }, 0.0f);
  EXPECT_EQ(local::to_host(local::to(histogram(xf, 10, 0.0, 1.0), Device::host())), std::vector<std::int64_t>(10, 1));
}

TYPED_TEST(Indexing, NonzeroCompressWhere) {
  const Device d = this->device();
  for (index_t r : {index_t(0), index_t(1), index_t(9)})
    for (const auto& l : layouts2(r, 7)) {
      SCOPED_TRACE(l.str());
      auto f = [](index_t g) { return g % 3 == 1 ? 0.0 : double(g); };
      auto m = [](index_t g) { return g % 4 != 2; };
      const auto a = filled<double>(l, d, f, 5.0);
      const auto mask = filled<bool>(l.with_halo({}), d, m);
      std::vector<std::int64_t> nz;
      std::vector<double> picked, w;
      for (index_t g = 0; g < r * 7; ++g) {
        if (f(g) != 0.0) nz.push_back(g);
        if (m(g)) picked.push_back(f(g));
        w.push_back(m(g) ? f(g) : -1.0);
      }
      const auto fnz = flatnonzero(a);
      EXPECT_EQ(gather_to_host(fnz), nz);
      const Layout<1> balanced(ProcessGrid(tessera::testing::world()), {index_t(nz.size())}, {0});
      EXPECT_EQ(fnz.layout().local_box(), balanced.local_box());
      EXPECT_EQ(gather_to_host(compress(mask, a)), picked);
      const auto minus = filled<double>(l, d, [](index_t) { return -1.0; });
      EXPECT_EQ(gather_to_host(where(mask, a, minus)), w);
    }
}

}  // namespace
