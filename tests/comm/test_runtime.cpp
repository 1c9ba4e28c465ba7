#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdlib>
#include <numeric>
#include <string>
#include <vector>

#include "device_test.hpp"
#include "tessera/comm/error.hpp"
#include "tessera/comm/process_group.hpp"
#include "comm_test_util.hpp"
#include "tessera/comm/runtime.hpp"
#include "tessera/local/settings.hpp"

namespace {
int world_rank() { int r; MPI_Comm_rank(MPI_COMM_WORLD, &r); return r; }
int world_size() { int s; MPI_Comm_size(MPI_COMM_WORLD, &s); return s; }

using tessera::testing::ScopedEnv;
}  // namespace

TEST(Runtime, JoinsAnMpiTheProgramAlreadyInitialized) {
  tessera::Runtime rt;
  EXPECT_FALSE(rt.owns_mpi());  // mpi_main initialized MPI, so the Runtime must not finalize it
  EXPECT_EQ(rt.rank(), world_rank());
  EXPECT_EQ(rt.size(), world_size());
  EXPECT_GE(rt.local_rank(), 0);
  EXPECT_LT(rt.local_rank(), rt.world().local_size());
  EXPECT_EQ(rt.local_rank(), tessera::testing::node_local_rank());
  EXPECT_EQ(rt.device(), tessera::select_device(rt.local_rank()));  // the one device rule
  int finalized = 1;
  MPI_Finalized(&finalized);
  EXPECT_EQ(finalized, 0);
}

TEST(Runtime, DeviceSelectionSharesGpusRoundRobin) {
  ScopedEnv env("TESSERA_DEVICE", "");  // empty: the default rule
  const int gpus = tessera::cuda_device_count();
  if (gpus == 0) {
    EXPECT_EQ(tessera::select_device(0), tessera::Device::host());
    EXPECT_EQ(tessera::select_device(5), tessera::Device::host());
    return;
  }
  for (int k = 0; k < gpus; ++k) {  // node-local ranks 0..gpus-1 get distinct GPUs, then they repeat
    EXPECT_EQ(tessera::select_device(k), tessera::Device::cuda(k));
    EXPECT_EQ(tessera::select_device(k + gpus), tessera::select_device(k));
  }
}

TEST(Runtime, DeviceSelectionHonoursEnvironment) {
  {
    ScopedEnv env("TESSERA_DEVICE", "host");
    EXPECT_EQ(tessera::select_device(3), tessera::Device::host());
  }
  // A bad value is refused when the settings are read (at Runtime start), naming it.
  EXPECT_THROW(ScopedEnv("TESSERA_DEVICE", "bogus"), tessera::InvalidArgument);
  const auto old = tessera::config::environment_value("TESSERA_DEVICE");
  setenv("TESSERA_DEVICE", "bogus", 1);
  EXPECT_THROW(tessera::Runtime(), tessera::InvalidArgument);
  old ? (void)setenv("TESSERA_DEVICE", old->c_str(), 1) : (void)unsetenv("TESSERA_DEVICE");
  if (tessera::cuda_device_count() == 0) {
    ScopedEnv env("TESSERA_DEVICE", "cuda");
    EXPECT_THROW(tessera::select_device(0), tessera::Error);
  } else {
    ScopedEnv env("TESSERA_DEVICE", "cuda");
    EXPECT_TRUE(tessera::select_device(0).is_cuda());
  }
}

TEST(ProcessGroup, AllReduceMatchesSerialReference) {
  auto world = tessera::comm::ProcessGroup::world();
  const int n = world.size(), r = world.rank();
  std::vector<double> v = {double(r + 1), double(-r), 0.5 * r};
  world.all_reduce(v.data(), v.size(), tessera::comm::ReduceOp::sum);
  EXPECT_DOUBLE_EQ(v[0], n * (n + 1) / 2.0);
  EXPECT_DOUBLE_EQ(v[1], -n * (n - 1) / 2.0);
  EXPECT_DOUBLE_EQ(v[2], 0.25 * n * (n - 1));
  EXPECT_EQ(world.all_reduce(r, tessera::comm::ReduceOp::max), n - 1);
  EXPECT_EQ(world.all_reduce(r + 10, tessera::comm::ReduceOp::min), 10);
  EXPECT_EQ(world.all_reduce(2LL, tessera::comm::ReduceOp::prod), 1LL << n);
  EXPECT_FLOAT_EQ(world.all_reduce(1.5f, tessera::comm::ReduceOp::sum), 1.5f * n);
}

TEST(ProcessGroup, SplitFormsEvenAndOddGroups) {
  auto world = tessera::comm::ProcessGroup::world();
  auto sub = world.split(world.rank() % 2, world.rank());
  const int expected_size = (world.size() + (world.rank() % 2 == 0 ? 1 : 0)) / 2;
  EXPECT_EQ(sub.size(), expected_size);
  EXPECT_EQ(sub.rank(), world.rank() / 2);
  // The sum of world ranks within the sub-group, against a serial loop.
  int expect = 0;
  for (int q = world.rank() % 2; q < world.size(); q += 2) expect += q;
  EXPECT_EQ(sub.all_reduce(world.rank(), tessera::comm::ReduceOp::sum), expect);
  EXPECT_THROW(world.split(-1, 0), tessera::InvalidArgument);
}

TEST(ProcessGroup, UserCommunicatorIsNotFreed) {
  MPI_Comm mine = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &mine);
  { tessera::comm::ProcessGroup g(mine); g.barrier(); }
  int size = 0;
  EXPECT_EQ(MPI_Comm_size(mine, &size), MPI_SUCCESS);  // still valid
  EXPECT_EQ(size, world_size());
  MPI_Comm_free(&mine);
}

TEST(MpiCheck, FailedCallThrowsMpiError) {
  auto world = tessera::comm::ProcessGroup::world();
  int x = 0;
  try {
    // A destination rank past the end: our communicators return errors instead of aborting.
    TESSERA_CHECK_MPI(MPI_Send(&x, 1, MPI_INT, world.size() + 7, 0, world.mpi_comm()));
    FAIL() << "MPI_Send to a bad rank succeeded";
  } catch (const tessera::MpiError& e) {
    const std::string w = e.what();
    EXPECT_NE(w.find("MPI_Send"), std::string::npos) << w;
    EXPECT_NE(w.find("test_runtime.cpp:"), std::string::npos) << w;
    EXPECT_NE(w.find("(rank " + std::to_string(world_rank())), std::string::npos) << w;
  }
}
