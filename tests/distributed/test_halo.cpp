// Halo exchange: interiors hold a formula of the global index, halos a sentinel; after the
// exchange every halo cell must hold the formula at its (wrapped, on periodic axes) global index,
// or still the sentinel beyond a non-periodic outer boundary. The reference is computed per
// cell of the padded shard, independently of the exchange's plan.
#include <gtest/gtest.h>

#include <complex>
#include <cstdint>
#include <vector>

#include "device_test.hpp"
#include "tessera/distributed/halo.hpp"
#include "tessera/local/basic_ops.hpp"

namespace {
using namespace tessera;
using namespace tessera::distributed;
using comm::ProcessGroup;
using tessera::testing::DeviceTest;

template <int R>
using Periodic = std::array<bool, R>;

template <class T>
T value_of(index_t flat) {
  if constexpr (std::is_same_v<T, bool>) return flat % 3 == 1;
  else if constexpr (is_complex_v<T>) return T(typename T::value_type(flat), typename T::value_type(-2 * flat));
  else return T(flat + 1);
}
template <class T>
T sentinel() {
  if constexpr (std::is_same_v<T, bool>) return false;
  else return T(-7);
}

template <int R>
index_t flat_index(const Index<R>& g, const Index<R>& n) {
  index_t f = 0;
  for (int a = 0; a < R; ++a) f = f * n[a] + g[a];
  return f;
}

// A shard with the formula in its interior and the sentinel in its halos.
template <class T, int R>
Array<T, R> make_filled(const Layout<R>& l, Device d) {
  Array<T, R> a(l, d);
  local::fill(a.local(), sentinel<T>());
  const auto b = l.local_box();
  const auto s = b.shape();
  std::vector<T> host(b.size());
  for (index_t i = 0; i < b.size(); ++i) {
    Index<R> g;
    index_t rem = i;
    for (int ax = R - 1; ax >= 0; --ax) g[ax] = b.lo[ax] + rem % s[ax], rem /= s[ax];
    host[i] = value_of<T>(flat_index<R>(g, l.global_shape()));
  }
  if (b.size() > 0) local::copy(a.interior(), local::from_host(host, s, d));
  return a;
}

// Checks every cell of this rank's padded shard; returns the number of halo cells filled.
template <class T, int R>
index_t check_shard(const Array<T, R>& a, const char* what) {
  const auto& l = a.layout();
  const auto& n = l.global_shape();
  const auto& h = l.halo();
  const auto b = l.local_box();
  const auto padded = l.padded_shape();
  a.stream().synchronize();
  Stream::default_for(a.device()).synchronize();
  const auto got = local::to_host(a.local());
  index_t filled = 0, bad = 0;
  for (index_t i = 0; i < local::shape_size(padded); ++i) {
    Index<R> p, g;
    index_t rem = i;
    for (int ax = R - 1; ax >= 0; --ax) p[ax] = rem % padded[ax], rem /= padded[ax];
    bool halo = false, beyond = false;
    for (int ax = 0; ax < R; ++ax) {
      g[ax] = b.lo[ax] + p[ax] - h[ax];
      halo = halo || p[ax] < h[ax] || p[ax] >= padded[ax] - h[ax];
      if (g[ax] < 0 || g[ax] >= n[ax]) {
        if (l.periodic()[ax] && n[ax] > 0) g[ax] = (g[ax] % n[ax] + n[ax]) % n[ax];
        else beyond = true;
      }
    }
    const T want = beyond ? sentinel<T>() : value_of<T>(flat_index<R>(g, n));
    filled += halo && !beyond;
    if (got[i] != want && bad++ < 5)
      ADD_FAILURE() << what << ": shard cell " << Layout<R>::idx_str(p) << " (global " << Layout<R>::idx_str(g)
                    << (halo ? ", halo" : ", interior") << (beyond ? ", beyond the boundary" : "") << ") of block "
                    << b.str() << " in " << l.str();
  }
  EXPECT_EQ(bad, 0) << what;
  return filled;
}

template <class T, int R>
void exchange_and_check(const Layout<R>& l, Device d, const char* what) {
  auto a = make_filled<T, R>(l, d);
  exchange_halos(a);
  check_shard(a, what);
}

ProcessGroup world() { return tessera::testing::world(); }

template <class K> class HaloExchangeTest : public DeviceTest<K> {};
TYPED_TEST_SUITE(HaloExchangeTest, tessera::testing::DeviceKinds, tessera::testing::DeviceKindNames);

TYPED_TEST(HaloExchangeTest, OneDimensionalWidthsOneAndTwo) {
  const Device d = this->device();
  const ProcessGrid g(world());
  for (index_t w : {1, 2})
    for (bool per : {false, true}) {
      const Layout<1> l(g, {23}, {0}, {w}, Periodic<1>{per});
      exchange_and_check<double, 1>(l, d, per ? "1-D periodic" : "1-D");
    }
  // No halos: nothing to exchange, nothing pending.
  Array<double, 1> none(Layout<1>(g, {23}, {0}, {0}, Periodic<1>{true}), d);
  auto h = exchange_halos_begin(none);
  EXPECT_FALSE(h.pending());
}

TYPED_TEST(HaloExchangeTest, TwoDimensionalAllPeriodicities) {
  const Device d = this->device();
  const auto g = ProcessGrid::balanced(world(), 2);
  for (int mask = 0; mask < 4; ++mask) {
    const Layout<2> l(g, {13, 11}, {0, 1}, {1, 2}, Periodic<2>{bool(mask & 1), bool(mask & 2)});
    exchange_and_check<double, 2>(l, d, "2-D halo {1,2}");
  }
  exchange_and_check<float, 2>(Layout<2>(g, {9, 14}, {0, 1}, {2, 2}, Periodic<2>{true, true}), d, "2-D halo 2");
}

TYPED_TEST(HaloExchangeTest, ThreeDimensionalUnevenBlocks) {
  const Device d = this->device();
  const auto g = ProcessGrid::balanced(world(), 3);
  const Index<3> n{17, 13, 5};
  for (const auto& halo : {Index<3>{1, 1, 1}, Index<3>{2, 1, 1}, Index<3>{1, 0, 2}})
    for (const auto& per : {Periodic<3>{false, false, false}, Periodic<3>{true, true, true},
                            Periodic<3>{true, false, true}})
      exchange_and_check<double, 3>(Layout<3>(g, n, {0, 1, 2}, halo, per), d, "17x13x5");
  // 17x13x5 split over a 1-D grid along the middle axis (uneven when the world has 3 ranks).
  exchange_and_check<std::int64_t, 3>(
      Layout<3>(ProcessGrid(world()), n, {-1, 0, -1}, {1, 2, 1}, Periodic<3>{true, true, false}), d,
      "17x13x5 split on axis 1");
}

TYPED_TEST(HaloExchangeTest, FourDimensional) {
  const Device d = this->device();
  const auto g = ProcessGrid::balanced(world(), 2);
  exchange_and_check<double, 4>(
      Layout<4>(g, {6, 5, 7, 3}, {1, -1, 0, -1}, {1, 1, 2, 1}, Periodic<4>{true, false, true, true}), d, "4-D");
}

// Two ranks on a periodic axis: the left and the right neighbour (and, on a 2-D grid, the
// diagonal ones) are the same rank, so several messages go to one peer in one group. Worlds
// of more ranks run it on pairs (and a single rank on its own).
TYPED_TEST(HaloExchangeTest, TwoRanksPeriodicSameNeighbour) {
  const Device d = this->device();
  const ProcessGroup pair = world().split(world().rank() / 2, world().rank());
  exchange_and_check<double, 1>(Layout<1>(ProcessGrid(pair), {7}, {0}, {2}, Periodic<1>{true}), d, "pair 1-D");
  const ProcessGrid g2(pair, {pair.size(), 1});
  exchange_and_check<double, 2>(Layout<2>(g2, {6, 5}, {0, 1}, {1, 1}, Periodic<2>{true, true}), d, "pair 2-D");
  const ProcessGrid g3(pair, {1, pair.size(), 1});
  exchange_and_check<std::complex<double>, 3>(
      Layout<3>(g3, {3, 4, 3}, {0, 1, 2}, {1, 2, 1}, Periodic<3>{true, true, true}), d, "pair 3-D");
}

// One rank: every halo of a periodic axis wraps around within the shard.
TYPED_TEST(HaloExchangeTest, OneRankPeriodicSelfWrap) {
  const Device d = this->device();
  const ProcessGroup self = world().split(world().rank(), 0);
  const auto g = ProcessGrid::balanced(self, 3);
  exchange_and_check<double, 3>(Layout<3>(g, {5, 4, 6}, {0, 1, 2}, {1, 2, 2}, Periodic<3>{true, true, true}), d,
                                "self 3-D");
  exchange_and_check<float, 2>(Layout<2>(g, {5, 4}, {0, -1}, {1, 1}, Periodic<2>{true, false}), d, "self 2-D");
}

// Whole (unsplit) periodic axes wrap within every rank while split axes talk to neighbours.
TYPED_TEST(HaloExchangeTest, WholeAxesWrapLocally) {
  const Device d = this->device();
  const ProcessGrid g(world());
  exchange_and_check<double, 2>(Layout<2>(g, {9, 7}, {0, -1}, {1, 2}, Periodic<2>{false, true}), d, "whole axis 1");
  exchange_and_check<double, 3>(Layout<3>(g, {3, 9, 4}, {-1, 0, -1}, {1, 1, 1}, Periodic<3>{true, true, true}), d,
                                "whole axes 0 and 2");
}

// Axes shorter than the grid give empty blocks; their halos come from the nearest non-empty block.
TYPED_TEST(HaloExchangeTest, EmptyBlocks) {
  const Device d = this->device();
  const ProcessGrid g(world());
  for (bool per : {false, true}) {
    exchange_and_check<double, 1>(Layout<1>(g, {2}, {0}, {1}, Periodic<1>{per}), d, "2 cells");
    exchange_and_check<double, 2>(Layout<2>(g, {1, 6}, {0, -1}, {1, 1}, Periodic<2>{per, per}), d, "1xN");
    exchange_and_check<double, 2>(Layout<2>(g, {6, 1}, {-1, 0}, {2, 1}, Periodic<2>{per, true}), d, "Nx1");
  }
  // Explicit offsets with empty blocks in the middle and at both ends.
  const int p = g.size();
  Layout<1>::Offsets o;
  o[0].push_back(0);
  for (int k = 0; k < p; ++k) o[0].push_back(o[0].back() + (k % 2 == 1 || p == 1 ? 3 + k : 0));
  for (bool per : {false, true})
    exchange_and_check<std::int32_t, 1>(Layout<1>(g, {o[0].back()}, {0}, o, {2}, Periodic<1>{per}), d,
                                        "explicit offsets");
}

// A grid axis that splits no array axis: each replica exchanges within its own copy.
TYPED_TEST(HaloExchangeTest, ReplicatedGridAxis) {
  const Device d = this->device();
  const auto g = ProcessGrid::balanced(world(), 2);
  exchange_and_check<double, 1>(Layout<1>(g, {11}, {1}, {1}, Periodic<1>{true}), d, "replicated over axis 0");
  exchange_and_check<double, 2>(Layout<2>(g, {5, 8}, {-1, 0}, {1, 1}, Periodic<2>{true, true}), d,
                                "replicated over axis 1");
}

TYPED_TEST(HaloExchangeTest, AllElementTypes) {
  const Device d = this->device();
  const auto g = ProcessGrid::balanced(world(), 2);
  const Layout<2> l(g, {7, 6}, {0, 1}, {1, 1}, Periodic<2>{true, true});
  exchange_and_check<bool, 2>(l, d, "bool");
  exchange_and_check<std::int32_t, 2>(l, d, "int32");
  exchange_and_check<std::int64_t, 2>(l, d, "int64");
  exchange_and_check<float, 2>(l, d, "float32");
  exchange_and_check<double, 2>(l, d, "float64");
  exchange_and_check<std::complex<float>, 2>(l, d, "complex64");
  exchange_and_check<std::complex<double>, 2>(l, d, "complex128");
}

// Split phase: work between begin and end (reading the interior, writing another array)
// overlaps the transfers; the halos are right after end, and again after a second exchange
// with new values through the cached buffers.
TYPED_TEST(HaloExchangeTest, SplitPhaseWithWorkBetween) {
  const Device d = this->device();
  const auto g = ProcessGrid::balanced(world(), 3);
  const Layout<3> l(g, {17, 13, 5}, {0, 1, 2}, {1, 1, 1}, Periodic<3>{true, false, true});
  auto a = make_filled<double, 3>(l, d);
  Array<double, 3> twice(l, d);
  auto h = exchange_halos_begin(a);
  EXPECT_TRUE(h.pending());
  local::add(twice.interior(), a.interior(), a.interior());
  h.end();
  EXPECT_FALSE(h.pending());
  h.end();  // idempotent
  check_shard(a, "split phase");
  const auto ai = local::to_host(local::to(a.interior(), d)), ti = local::to_host(local::to(twice.interior(), d));
  for (std::size_t i = 0; i < ai.size(); ++i) EXPECT_EQ(ti[i], 2 * ai[i]) << i;

  // Again, through exchange_halos_end, with the halos reset and the interior changed.
  local::fill(a.local(), sentinel<double>());
  auto b = make_filled<double, 3>(l, d);
  local::copy(a.local(), b.local());
  auto h2 = exchange_halos_begin(a);
  exchange_halos_end(h2);
  check_shard(a, "second exchange");

  // Two exchanges in flight at once on arrays of the same layout (distinct cached buffers).
  auto c = make_filled<double, 3>(l, d), e = make_filled<double, 3>(l, d);
  auto hc = exchange_halos_begin(c);
  auto he = exchange_halos_begin(e);
  he.end();
  hc.end();
  check_shard(c, "first of two in flight");
  check_shard(e, "second of two in flight");
}

// An array adopted on its own stream: the exchange is ordered after it and before it.
TYPED_TEST(HaloExchangeTest, AdoptedArrayOnItsOwnStream) {
  const Device d = this->device();
  const auto g = ProcessGrid::balanced(world(), 2);
  const Layout<2> l(g, {10, 9}, {0, 1}, {2, 1}, Periodic<2>{true, false});
  Stream s(d);
  auto src = make_filled<double, 2>(l, d);
  local::Array<double, 2> mem(l.padded_shape(), d);
  local::copy(mem, src.local());
  Stream::default_for(d).synchronize();
  auto a = Array<double, 2>::adopt(mem.data(), l, d, s);
  {
    auto h = exchange_halos_begin(a);  // ended by the destructor
  }
  s.synchronize();
  check_shard(a, "adopted");
}

TYPED_TEST(HaloExchangeTest, WholeAxisShorterThanHaloThrows) {
  const Device d = this->device();
  const ProcessGrid g(world());
  Array<double, 2> a(Layout<2>(g, {8, 2}, {0, -1}, {1, 3}, Periodic<2>{false, true}), d);
  EXPECT_THROW(exchange_halos(a), InvalidArgument);
  // Non-periodic, the short axis is simply not exchanged.
  exchange_and_check<double, 2>(Layout<2>(g, {8, 2}, {0, -1}, {1, 3}, Periodic<2>{true, false}), d, "short whole");
}

}  // namespace

// The member spelling of the design guide: u.exchange_halos() is the free function.
TEST(HaloMember, ExchangeHalosMemberFillsPeriodicHalos) {
  using namespace tessera;
  using namespace tessera::distributed;
  const auto world = tessera::testing::world();
  const ProcessGrid g(world, {world.size()}, {true});
  const Layout<1> l(g, {4 * world.size()}, {0}, {1});
  Array<double, 1> u(l, Device::host());
  local::fill(u.local(), -1.0);
  local::fill(u.interior(), double(world.rank()));
  u.exchange_halos();
  const auto v = local::to_host(u.local());
  const int p = world.size(), r = world.rank();
  EXPECT_EQ(v.front(), double((r + p - 1) % p));
  EXPECT_EQ(v.back(), double((r + 1) % p));
  auto h = u.exchange_halos_begin();
  h.end();
  EXPECT_EQ(local::to_host(u.local()).front(), double((r + p - 1) % p));
}
