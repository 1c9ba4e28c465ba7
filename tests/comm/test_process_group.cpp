// ProcessGroup structure: split, Cartesian grids and their row/column sub-groups, communicator
// ownership. Members are checked by gathering world ranks over the group, against a hand
// computation of the expected layout.
#include <gtest/gtest.h>
#include <mpi.h>

#include <utility>
#include <vector>

#include "comm_test_util.hpp"
#include "tessera/comm/process_group.hpp"
#include "tessera/comm/settings.hpp"

namespace {
using tessera::InvalidArgument;
using tessera::comm::ProcessGroup;
using tessera::testing::world_rank;
using tessera::testing::world_size;

// World ranks of g's members, in g's rank order.
std::vector<int> members(const ProcessGroup& g) {
  int me = world_rank();
  std::vector<int> all(g.size(), -1);
  g.all_gather(&me, all.data(), 1, tessera::DType::int32, tessera::Stream::default_for(tessera::Device::host()));
  return all;
}

// A row-major grid computed by hand: the last axis varies fastest.
struct Grid {
  std::vector<int> dims;
  std::vector<bool> periods;
  std::vector<int> coords(int rank) const {
    std::vector<int> c(dims.size());
    for (int a = int(dims.size()) - 1; a >= 0; --a) c[a] = rank % dims[a], rank /= dims[a];
    return c;
  }
  int rank_at(std::vector<int> c) const {
    int rank = 0;
    for (std::size_t a = 0; a < dims.size(); ++a) {
      if (periods[a]) c[a] = ((c[a] % dims[a]) + dims[a]) % dims[a];
      else if (c[a] < 0 || c[a] >= dims[a]) return -1;
      rank = rank * dims[a] + c[a];
    }
    return rank;
  }
};

void expect_layout(const ProcessGroup& cart, const Grid& ref) {
  ASSERT_TRUE(cart.is_cartesian());
  EXPECT_EQ(cart.dims(), ref.dims);
  EXPECT_EQ(cart.periods(), ref.periods);
  EXPECT_EQ(cart.rank(), world_rank());  // ranks are not reordered
  EXPECT_EQ(cart.coords(), ref.coords(cart.rank()));
  for (int q = 0; q < cart.size(); ++q) {
    EXPECT_EQ(cart.coords(q), ref.coords(q)) << "rank " << q;
    EXPECT_EQ(cart.rank_at(ref.coords(q)), q);
  }
  for (std::size_t axis = 0; axis < ref.dims.size(); ++axis) {
    for (int disp : {-2, -1, 0, 1, 2}) {
      auto src = cart.coords(), dst = cart.coords();
      src[axis] -= disp, dst[axis] += disp;
      EXPECT_EQ(cart.rank_at(dst), ref.rank_at(dst)) << "axis " << axis << " disp " << disp;
      EXPECT_EQ(cart.shift(int(axis), disp), std::make_pair(ref.rank_at(src), ref.rank_at(dst)))
          << "shift(" << axis << ", " << disp << ")";
    }
  }
}

std::vector<int> dims_create(int size, int ndims) {
  std::vector<int> d(ndims, 0);
  MPI_Dims_create(size, ndims, d.data());
  return d;
}
}  // namespace

TEST(ProcessGroupSplit, EvenAndOddColoursWithReversedKeys) {
  const auto world = ProcessGroup::world();
  const int n = world.size(), r = world.rank();
  const auto sub = world.split(r % 2, n - r);  // higher world rank, lower key: order reversed
  std::vector<int> want;
  for (int q = n - 1; q >= 0; --q)
    if (q % 2 == r % 2) want.push_back(q);
  EXPECT_EQ(sub.size(), int(want.size()));
  EXPECT_EQ(members(sub), want);
  EXPECT_EQ(want[sub.rank()], r);
  EXPECT_FALSE(sub.is_cartesian());
}

TEST(ProcessGroupSplit, EqualKeysKeepTheParentOrder) {
  const auto world = ProcessGroup::world();
  std::vector<int> want(world.size());
  for (int q = 0; q < world.size(); ++q) want[q] = q;
  EXPECT_EQ(members(world.split(7, 0)), want);
}

TEST(Cartesian, OneDimensionalPeriodicAndNot) {
  const auto world = ProcessGroup::world();
  EXPECT_FALSE(world.is_cartesian());
  for (bool periodic : {false, true})
    expect_layout(world.cartesian({world.size()}, {periodic}), Grid{{world.size()}, {periodic}});
  expect_layout(world.cartesian({world.size()}), Grid{{world.size()}, {false}});  // default: not periodic
}

TEST(Cartesian, TwoDimensionalFilledLikeMpiDimsCreate) {
  const auto world = ProcessGroup::world();
  const auto filled = dims_create(world.size(), 2);
  expect_layout(world.cartesian({0, 0}, {true, false}), Grid{filled, {true, false}});
  // One entry given, the other filled in.
  expect_layout(world.cartesian({0, 1}, {false, true}), Grid{{world.size(), 1}, {false, true}});
}

TEST(Cartesian, TwoDimensionalExplicit) {
  const auto world = ProcessGroup::world();
  const int n = world.size();
  expect_layout(world.cartesian({1, n}, {false, true}), Grid{{1, n}, {false, true}});
  expect_layout(world.cartesian({n, 1}, {true, true}), Grid{{n, 1}, {true, true}});
  if (n % 2 == 0) expect_layout(world.cartesian({2, n / 2}), Grid{{2, n / 2}, {false, false}});
  expect_layout(world.cartesian({1, n, 1}, {false, true, true}), Grid{{1, n, 1}, {false, true, true}});
}

TEST(Cartesian, RowAndColumnSubGroups) {
  const auto world = ProcessGroup::world();
  const int n = world.size();
  std::vector<std::vector<int>> shapes = {dims_create(n, 2), {1, n}, {n, 1}};
  if (n % 2 == 0) shapes.push_back({2, n / 2});
  for (const auto& dims : shapes) {
    const auto cart = world.cartesian(dims, {true, false});
    const auto c = cart.coords();
    std::vector<int> row, col;  // world ranks sharing this rank's row (first coordinate) / column
    for (int j = 0; j < dims[1]; ++j) row.push_back(c[0] * dims[1] + j);
    for (int i = 0; i < dims[0]; ++i) col.push_back(i * dims[1] + c[1]);
    const auto rows = cart.sub({false, true}), cols = cart.sub({true, false});
    EXPECT_EQ(rows.size(), dims[1]) << dims[0] << "x" << dims[1];
    EXPECT_EQ(cols.size(), dims[0]) << dims[0] << "x" << dims[1];
    EXPECT_EQ(members(rows), row) << "row of a " << dims[0] << "x" << dims[1] << " grid";
    EXPECT_EQ(members(cols), col) << "column of a " << dims[0] << "x" << dims[1] << " grid";
    EXPECT_EQ(rows.rank(), c[1]);
    EXPECT_EQ(cols.rank(), c[0]);
  }
}

// cartesian() and sub() are made once per shape: asking again (0 entries filled in the same way)
// returns the same communicator; another periodicity or other kept axes give another.
TEST(Cartesian, OneGroupPerShape) {
  const auto world = ProcessGroup::world();
  const int n = world.size();
  const auto a = world.cartesian({n, 1}), b = world.cartesian({0, 1}), c = world.cartesian({n, 1}, {true, false});
  EXPECT_EQ(a.mpi_comm(), b.mpi_comm());
  EXPECT_NE(a.mpi_comm(), c.mpi_comm());
  EXPECT_EQ(a.sub({true, false}).mpi_comm(), b.sub({true, false}).mpi_comm());
  EXPECT_NE(a.sub({true, false}).mpi_comm(), a.sub({false, true}).mpi_comm());
  EXPECT_EQ(a.all_reduce(1, tessera::comm::ReduceOp::sum), n);
}

TEST(Cartesian, DimsThatDoNotMatchTheSizeThrow) {
  const auto world = ProcessGroup::world();
  const int n = world.size();
  EXPECT_THROW(world.cartesian({n + 1}), InvalidArgument);
  EXPECT_THROW(world.cartesian({n, 2}), InvalidArgument);
  EXPECT_THROW(world.cartesian({2 * n, 0}), InvalidArgument);  // nothing can fill the 0
}

TEST(ProcessGroupLifetime, UserCommunicatorOutlivesItsGroups) {
  MPI_Comm mine = MPI_COMM_NULL;
  ASSERT_EQ(MPI_Comm_dup(MPI_COMM_WORLD, &mine), MPI_SUCCESS);
  {
    ProcessGroup g(mine);
    const ProcessGroup copy = g;  // copies share one duplicate, never the user's communicator
    EXPECT_EQ(copy.mpi_comm(), g.mpi_comm());
    EXPECT_NE(g.mpi_comm(), mine);
    int cmp = MPI_UNEQUAL;
    MPI_Comm_compare(g.mpi_comm(), mine, &cmp);
    EXPECT_EQ(cmp, MPI_CONGRUENT);
    EXPECT_EQ(g.all_reduce(1, tessera::comm::ReduceOp::sum), world_size());
  }
  int sum = 0, one = 1;
  EXPECT_EQ(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, mine), MPI_SUCCESS);  // still usable
  EXPECT_EQ(sum, world_size());
  EXPECT_EQ(MPI_Comm_free(&mine), MPI_SUCCESS);
}

// TESSERA_EMULATE_NODES=k (CTest's *_emulated_nodes runs; all ranks on one real machine): the
// world's ranks form k contiguous emulated nodes, every group agrees on them (a sub-group's
// node-local ranks are the members of its emulated node), and the process knows its node.
namespace {
// The emulated node of world rank q when n ranks share one real node as k nodes.
int node_of(int q, int n, int k) { return static_cast<int>(static_cast<long long>(q) * k / n); }
}  // namespace

TEST(EmulatedNodes, WorldAndSubGroupsAgree) {
  const int k = tessera::comm::settings().emulate_nodes;
  if (k <= 1) GTEST_SKIP() << "TESSERA_EMULATE_NODES is not set";
  const auto world = ProcessGroup::world();
  const int n = world.size(), r = world.rank();
  int same = 0;
  for (int q = 0; q < n; ++q) same += node_of(q, n, k) == node_of(r, n, k);
  EXPECT_EQ(world.local_size(), same);
  int before = 0;
  for (int q = 0; q < r; ++q) before += node_of(q, n, k) == node_of(r, n, k);
  EXPECT_EQ(world.local_rank(), before);
  // A group of the odd world ranks: its node-local ranks are the odd ranks of this emulated node.
  const auto odd = world.split(r % 2, r);
  int odd_same = 0;
  for (int q = r % 2; q < n; q += 2) odd_same += node_of(q, n, k) == node_of(r, n, k);
  EXPECT_EQ(odd.local_size(), odd_same);
  // The process's emulated node (the one NCCL's host id names): the world's numbering.
  EXPECT_EQ(ProcessGroup::emulated_node(), node_of(r, n, k));
}
