// Consistency mode (TESSERA_CHECK=1 / set_consistency_checks): ranks that call a distributed
// operation with different shapes, layouts, types, roots or operations all throw
// ConsistencyError naming the operation and the ranks, instead of hanging; matching calls pass,
// and the group keeps working after a mismatch.
#include <gtest/gtest.h>

#include <complex>
#include <string>

#include "tessera/distributed/consistency.hpp"
#include "tessera/distributed/creation.hpp"
#include "tessera/fft/fft.hpp"
#include "tessera/distributed/halo.hpp"
#include "tessera/distributed/redistribute.hpp"
#include "tessera/distributed/reduce.hpp"
#include "tessera/local/basic_ops.hpp"

namespace {
using namespace tessera;
using namespace tessera::distributed;
using comm::ProcessGroup;

// Turns the checks on for one test and restores the previous setting.
class Consistency : public ::testing::Test {
 protected:
  void SetUp() override {
    was_ = consistency_checks();
    set_consistency_checks(true);
  }
  void TearDown() override { set_consistency_checks(was_); }
  ProcessGroup world_ = ProcessGroup::world();
  ProcessGrid grid_{world_};
  bool last() const { return world_.rank() == world_.size() - 1; }

 private:
  bool was_ = false;
};

// The last rank calls differently from the others.
class Mismatch : public Consistency {
 protected:
  void SetUp() override {
    Consistency::SetUp();
    if (world_.size() < 2) GTEST_SKIP() << "a mismatch needs at least 2 ranks";
  }
};

// Runs f, expects ConsistencyError whose message names `op`, rank 0 and the last rank; then
// checks that the group still works.
template <class F>
void expect_mismatch(const ProcessGroup& g, const std::string& op, F&& f) {
  try {
    f();
    ADD_FAILURE() << "no ConsistencyError for " << op;
  } catch (const ConsistencyError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("consistency check failed in"), std::string::npos) << m;
    EXPECT_NE(m.find(op), std::string::npos) << m;
    EXPECT_NE(m.find(g.size() == 2 ? "rank 0: " : "ranks 0,"), std::string::npos) << m;
    EXPECT_NE(m.find("rank " + std::to_string(g.size() - 1) + ": "), std::string::npos) << m;
  }
  EXPECT_EQ(g.all_reduce(1, comm::ReduceOp::sum), g.size());  // still in step
}

TEST_F(Consistency, SwitchAndEnvironment) {
  EXPECT_TRUE(consistency_checks());
  set_consistency_checks(false);
  EXPECT_FALSE(consistency_checks());
  set_consistency_checks(true);
  EXPECT_TRUE(consistency_checks());
}

TEST_F(Consistency, MatchingCallsPass) {
  const auto l = Layout<2>::block(grid_, {9, 7}, {1, 0});
  auto a = arange<double, 2>(l, Device::host());
  exchange_halos(a);
  EXPECT_DOUBLE_EQ(sum(a), 62.0 * 63.0 / 2.0);
  EXPECT_EQ(argmax(a), 62);
  auto b = redistribute(a, Layout<2>(grid_, {9, 7}, {-1, 0}));
  EXPECT_DOUBLE_EQ(sum(b), sum(a));
  EXPECT_DOUBLE_EQ(sum(slice(a, Box<2>{{1, 1}, {3, 3}})), 8.0 + 9.0 + 15.0 + 16.0);
  auto g = gather(a, world_.size() - 1);
  if (last()) EXPECT_EQ(local::to_host(g)[62], 62.0);
  EXPECT_EQ(allgather(a).size(), 63);
  EXPECT_EQ(sum(a, 1).global_shape(), (Index<2>{9, 1}));
  EXPECT_EQ(CheckScope::depth(), 0);  // every scope closed
}

TEST_F(Consistency, NestedCallsAreNotCheckedAgain) {
  // Inside a checked operation, a local call only some ranks make (here: rank 0 alone reduces
  // along an unsplit axis) must not start a check that the others never join.
  const Layout<2> l(grid_, {4, 4}, {0, -1});
  auto a = ones<double, 2>(l, Device::host());
  {
    const auto outer = check_call<double, 2>("outer", l, Device::host());
    EXPECT_EQ(CheckScope::depth(), 1);
    if (world_.rank() == 0) EXPECT_EQ(sum(a, 1).global_shape(), (Index<2>{4, 1}));
  }
  EXPECT_EQ(CheckScope::depth(), 0);
  EXPECT_DOUBLE_EQ(sum(a), 16.0);
}

TEST_F(Mismatch, DifferentGlobalShapes) {
  const auto l = Layout<2>::block(grid_, {8, last() ? 9 : 8});
  auto a = zeros<double, 2>(l, Device::host());
  expect_mismatch(world_, "sum", [&] { (void)sum(a); });
}

TEST_F(Mismatch, DifferentHalos) {
  const auto l = Layout<2>::block(grid_, {8, 8}, {1, last() ? 2 : 1});
  auto a = zeros<float, 2>(l, Device::host());
  expect_mismatch(world_, "exchange_halos", [&] { exchange_halos(a); });
}

TEST_F(Mismatch, DifferentSplits) {
  const Layout<2> l(grid_, {8, 8}, {last() ? -1 : 0, last() ? 0 : -1});
  auto a = zeros<double, 2>(l, Device::host());
  expect_mismatch(world_, "allgather", [&] { (void)allgather(a); });
}

TEST_F(Mismatch, DifferentElementTypes) {
  const auto l = Layout<1>::block(grid_, {16});
  auto f = zeros<float, 1>(l, Device::host());
  auto d = zeros<double, 1>(l, Device::host());
  expect_mismatch(world_, "max", [&] { last() ? (void)max(f) : (void)max(d); });
}

TEST_F(Mismatch, DifferentOperations) {
  const auto l = Layout<1>::block(grid_, {16});
  auto a = ones<std::int64_t, 1>(l, Device::host());
  expect_mismatch(world_, "sum", [&] { last() ? (void)prod(a) : (void)sum(a); });
}

TEST_F(Mismatch, DifferentReductionAxes) {
  const auto l = Layout<2>::block(grid_, {6, 6});
  auto a = ones<double, 2>(l, Device::host());
  expect_mismatch(world_, "sum", [&] { (void)sum(a, last() ? 1 : 0); });
}

TEST_F(Mismatch, DifferentGatherRoots) {
  auto a = zeros<double, 1>(Layout<1>::block(grid_, {10}), Device::host());
  expect_mismatch(world_, "gather", [&] { (void)gather(a, last() ? 1 : 0); });
}

TEST_F(Mismatch, DifferentScatterRoots) {
  const auto l = Layout<1>::block(grid_, {10});
  auto whole = local::zeros<double, 1>({10}, Device::host());
  expect_mismatch(world_, "scatter", [&] { (void)scatter(last() ? 1 : 0, whole, l, Device::host()); });
}

TEST_F(Mismatch, DifferentRedistributeTargets) {
  auto a = zeros<double, 2>(Layout<2>::block(grid_, {6, 6}), Device::host());
  const Layout<2> to(grid_, {6, 6}, {-1, last() ? -1 : 0});
  expect_mismatch(world_, "redistribute", [&] { (void)redistribute(a, to); });
}

TEST_F(Mismatch, DifferentSliceBoxes) {
  auto a = zeros<double, 2>(Layout<2>::block(grid_, {6, 6}), Device::host());
  expect_mismatch(world_, "slice", [&] { (void)slice(a, Box<2>{{0, 0}, {3, last() ? 4 : 3}}); });
}

TEST_F(Mismatch, DifferentFftNorms) {
  const auto l = Layout<2>::block(grid_, {8, 8});
  auto x = zeros<std::complex<double>, 2>(l, Device::host());
  auto plan = fft::get_plan<std::complex<double>, 2>(l, Device::host());
  expect_mismatch(world_, "fft forward", [&] { (void)plan->forward(x, last() ? fft::Norm::ortho : fft::Norm::backward); });
}

TEST_F(Mismatch, MismatchAfterMatchesLeavesGroupUsable) {
  const auto l = Layout<1>::block(grid_, {12});
  auto a = ones<double, 1>(l, Device::host());
  EXPECT_DOUBLE_EQ(sum(a), 12.0);
  auto bad = zeros<double, 1>(Layout<1>::block(grid_, {last() ? 13 : 12}), Device::host());
  expect_mismatch(world_, "sum", [&] { (void)sum(bad); });
  EXPECT_DOUBLE_EQ(sum(a), 12.0);
}

TEST_F(Consistency, OffMeansNoCheck) {
  // With checks off, a reduction along an unsplit axis stays local: one rank may call it alone.
  set_consistency_checks(false);
  const auto l = Layout<2>(grid_, {4, 4}, {0, -1});
  auto a = ones<double, 2>(l, Device::host());
  if (world_.rank() == 0) EXPECT_EQ(sum(a, 1).global_shape(), (Index<2>{4, 1}));
  world_.barrier();
}

}  // namespace
