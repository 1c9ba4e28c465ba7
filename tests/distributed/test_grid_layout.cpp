// ProcessGrid and Layout: grid shapes, neighbours, block partitions, owners, errors.
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <vector>

#include "../device_test.hpp"
#include "tessera/distributed/layout.hpp"

namespace {
using namespace tessera;
using namespace tessera::distributed;
using comm::ProcessGroup;

TEST(Grid, DimsAreChosenLikeMpiDimsCreate) {
  const auto world = tessera::testing::world();
  const int p = world.size();
  for (int nd = 1; nd <= 3; ++nd) {
    const auto g = ProcessGrid::balanced(world, nd);
    ASSERT_EQ(g.ndims(), nd);
    EXPECT_EQ(std::accumulate(g.dims().begin(), g.dims().end(), 1, std::multiplies<int>()), p);
    std::vector<int> want(nd, 0);
    MPI_Dims_create(p, nd, want.data());
    EXPECT_EQ(g.dims(), want);
    EXPECT_EQ(g.coords(g.rank()), g.coords());
    EXPECT_EQ(g.rank_at(g.coords()), g.rank());
  }
}

TEST(Grid, NeighboursWrapOnlyOnPeriodicAxes) {
  const auto world = tessera::testing::world();
  const int p = world.size();
  const ProcessGrid open(world, {p, 1}, {false, true}), ring(world, {p, 1}, {true, false});
  const int r = world.rank();
  EXPECT_EQ(open.neighbour(0, 1), r + 1 < p ? r + 1 : -1);
  EXPECT_EQ(open.neighbour(0, -1), r > 0 ? r - 1 : -1);
  EXPECT_EQ(ring.neighbour(0, 1), (r + 1) % p);
  EXPECT_EQ(ring.neighbour(0, -1), (r + p - 1) % p);
  EXPECT_EQ(open.neighbour(1, 1), r);  // periodic axis of extent 1: oneself
  EXPECT_EQ(ring.neighbour(1, 1), -1);
  EXPECT_THROW(open.neighbour(2, 1), InvalidArgument);
}

TEST(Grid, AxisGroupsAreRowsAndColumns) {
  const auto world = tessera::testing::world();
  if (world.size() % 2) GTEST_SKIP() << "needs an even rank count for a 2 x (p/2) grid";
  const ProcessGrid g(world, {2, world.size() / 2});
  const auto& row = g.axis_group(1);  // same coordinate on axis 0
  const auto& col = g.axis_group(0);
  EXPECT_EQ(row.size(), world.size() / 2);
  EXPECT_EQ(col.size(), 2);
  EXPECT_EQ(row.rank(), g.coords()[1]);
  EXPECT_EQ(col.rank(), g.coords()[0]);
  // The members of my row are exactly the world ranks with my axis-0 coordinate.
  std::vector<std::int32_t> mine{world.rank()}, all(row.size());
  row.all_gather(mine.data(), all.data(), 1, DType::int32, Stream::default_for(Device::host()));
  for (int k = 0; k < row.size(); ++k) EXPECT_EQ(all[k], g.rank_at({g.coords()[0], k}));
}

TEST(Layout, BalancedBlocksGiveTheFirstRanksOneMore) {
  const auto world = tessera::testing::world();
  const int p = world.size();
  const ProcessGrid g(world, {p});
  const Layout<2> l(g, {17, 5}, {0, -1});
  index_t total = 0;
  for (int r = 0; r < p; ++r) {
    const auto b = l.local_box(r);
    const index_t want = 17 / p + (r < 17 % p ? 1 : 0);
    EXPECT_EQ(b.hi[0] - b.lo[0], want) << "rank " << r;
    EXPECT_EQ(b.lo[1], 0);
    EXPECT_EQ(b.hi[1], 5);
    total += b.size();
  }
  EXPECT_EQ(total, 17 * 5);
}

TEST(Layout, OwnerAgreesWithLocalBoxesIncludingEmptyBlocks) {
  const auto world = tessera::testing::world();
  const auto g = ProcessGrid::balanced(world, 3);
  // 2 x 1 x 3: axes shorter than the grid leave some blocks empty.
  const auto l = Layout<3>::block(g, {2, 1, 3});
  for (index_t i = 0; i < 2; ++i)
    for (index_t k = 0; k < 3; ++k) {
      const Index<3> idx{i, 0, k};
      const int o = l.owner(idx);
      ASSERT_GE(o, 0);
      EXPECT_TRUE(l.local_box(o).contains(idx)) << l.str() << " owner " << o;
    }
  index_t total = 0;
  for (int r = 0; r < world.size(); ++r) total += l.local_box(r).size();
  EXPECT_EQ(total, 6);
  EXPECT_THROW(l.owner({2, 0, 0}), InvalidArgument);
}

TEST(Layout, ExplicitOffsetsHalosAndEquality) {
  const auto world = tessera::testing::world();
  const int p = world.size();
  const ProcessGrid g(world, {p});
  std::vector<index_t> off(p + 1);
  for (int r = 0; r <= p; ++r) off[r] = 3 * r * r;  // growing blocks
  const index_t n = off[p];
  const Layout<1> l(g, {n}, {0}, {off}, {0});
  for (int r = 0; r < p; ++r) EXPECT_EQ(l.local_box(r).lo[0], off[r]);
  const auto h = l.with_halo({1});
  EXPECT_FALSE(h == l);
  EXPECT_TRUE(h.same_blocks(l));
  EXPECT_EQ(h.padded_shape()[0], l.local_shape()[0] + 2 * h.halo()[0]);
  EXPECT_TRUE(l == Layout<1>(g, {n}, {0}, {off}, {0}));
  EXPECT_NE(l.str().find("split {0}"), std::string::npos) << l.str();
}

// Equality is about where elements and halos lie, not how the split list spells it (issue #41):
// on one rank (or any grid that leaves an axis in one part) split {0} and {-1} give the same blocks.
TEST(Layout, EqualityIgnoresSplitListsThatGiveTheSameBlocks) {
  const auto world = tessera::testing::world();
  const ProcessGrid g(world, {world.size()});
  const Layout<2> a(g, {6, 4}, {0, -1}), b(g, {6, 4}, {0, -1});
  EXPECT_TRUE(a == b);
  const Layout<2> whole(g, {6, 4}, {-1, -1});
  EXPECT_EQ(whole == a, world.size() == 1) << whole.str() << " vs " << a.str();
  EXPECT_EQ(whole == a, whole.same_blocks(a));
  const ProcessGrid one(world.split(world.rank(), 0), {1});  // a grid of this rank alone
  const Layout<2> s0(one, {6, 4}, {0, -1}), s1(one, {6, 4}, {-1, 0}), none(one, {6, 4}, {-1, -1});
  EXPECT_TRUE(s0 == s1);
  EXPECT_TRUE(s0 == none);
  EXPECT_FALSE(s0 == s0.with_halo({1, 0}));                  // halos differ
  EXPECT_TRUE(s0.with_halo({1, 0}) == none.with_halo({1, 0}));
  const ProcessGrid periodic(world.split(world.rank(), 0), {1}, {true});
  const Layout<2> p0(periodic, {6, 4}, {0, -1}, {1, 0}), p1(periodic, {6, 4}, {-1, -1}, {1, 0});
  EXPECT_FALSE(p0 == p1) << "halo exchange wraps axis 0 in one, not the other";
  EXPECT_TRUE(Layout<2>(periodic, {6, 4}, {0, -1}) == Layout<2>(periodic, {6, 4}, {-1, -1}))
      << "without halos periodicity changes nothing";
}

TEST(Layout, BadArgumentsThrow) {
  const auto world = tessera::testing::world();
  const ProcessGrid g(world, {world.size()});
  EXPECT_THROW(Layout<1>(g, {-1}, {0}), InvalidArgument);                 // negative extent
  EXPECT_THROW(Layout<2>(g, {4, 4}, {1, -1}), InvalidArgument);          // no grid axis 1
  EXPECT_THROW(Layout<2>(g, {4, 4}, {0, 0}), InvalidArgument);           // grid axis used twice
  EXPECT_THROW(Layout<1>(g, {4}, {0}, {std::vector<index_t>{0, 5}}, {0}), InvalidArgument);  // bad offsets
  if (world.size() > 1) EXPECT_THROW(Layout<1>(g, {world.size()}, {0}, {2}), InvalidArgument);  // halo > block
  EXPECT_THROW(ProcessGrid(world, {world.size() + 1}), InvalidArgument);
}

}  // namespace

// One geometry for boxes of a compile-time rank and of a run-time one.
TEST(Box, FixedAndRuntimeRanksAgree) {
  using tessera::distributed::Box;
  using tessera::distributed::DynBox;
  const Box<3> a{{0, 2, 1}, {4, 6, 5}}, b{{2, 0, 3}, {8, 4, 9}};
  const DynBox da(a), db(b);
  EXPECT_EQ(da.rank(), 3);
  EXPECT_EQ(da.intersect(db), DynBox(a.intersect(b)));
  EXPECT_EQ(da.intersect(db).fixed<3>(), a.intersect(b));
  EXPECT_EQ(a.intersect(b).str(), "[2:4, 2:4, 3:5]");
  EXPECT_EQ(da.intersect(db).str(), a.intersect(b).str());
  EXPECT_EQ(da.size(), a.size());
  EXPECT_EQ(da.size(), 64);
  EXPECT_TRUE(da.contains(std::vector<long long>{3, 5, 1}));
  EXPECT_FALSE(da.contains(std::vector<long long>{4, 5, 1}));
  // Disjoint: empty, with hi clamped to lo.
  const DynBox far{{10, 10, 10}, {12, 12, 12}};
  EXPECT_TRUE(da.intersect(far).empty());
  EXPECT_EQ(da.intersect(far).shape(), (std::vector<std::int64_t>{0, 0, 0}));
  // Row-major offsets and runs inside a block.
  const DynBox block{{0, 0, 0}, {4, 4, 4}};
  EXPECT_EQ(block.offset_of(std::vector<std::int64_t>{1, 2, 3}), 1 * 16 + 2 * 4 + 3);
  EXPECT_TRUE(block.has_run(DynBox{{1, 0, 0}, {3, 4, 4}}));   // whole planes
  EXPECT_TRUE(block.has_run(DynBox{{1, 2, 0}, {2, 4, 4}}));   // rows of one plane
  EXPECT_TRUE(block.has_run(DynBox{{1, 2, 1}, {2, 3, 3}}));   // part of one row
  EXPECT_FALSE(block.has_run(DynBox{{1, 0, 0}, {3, 2, 4}}));  // half planes
  EXPECT_THROW((void)da.fixed<2>(), tessera::InvalidArgument);
  EXPECT_THROW(DynBox({0, 0}, {1}), tessera::InvalidArgument);
}
