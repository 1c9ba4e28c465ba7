#include <gtest/gtest.h>
#include <mpi.h>

#include <string>

#include "tessera/config.hpp"
#include "tessera/local/error.hpp"
#if TESSERA_HAVE_CUDA
#include "tessera/local/cuda_check.hpp"
#endif

namespace {
int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }
}  // namespace

TEST(Error, NamesRankAndDevice) {
  const tessera::ShapeMismatch e("shape mismatch in add: [512,512] vs [512,256]",
                                 tessera::Device::cuda(1));
  const std::string expect = "shape mismatch in add: [512,512] vs [512,256] (rank " +
                             std::to_string(world_rank()) + ", cuda:1)";
  EXPECT_EQ(std::string(e.what()), expect);
  EXPECT_EQ(e.rank(), world_rank());
  EXPECT_EQ(e.message(), "shape mismatch in add: [512,512] vs [512,256]");
}

TEST(Error, HierarchyIsCatchableAsError) {
  EXPECT_THROW(throw tessera::OutOfMemory("x"), tessera::Error);
  EXPECT_THROW(throw tessera::DeviceMismatch("x"), std::runtime_error);
  EXPECT_THROW(throw tessera::CudaError("x", 2), tessera::Error);
  const tessera::Error e("plain");
  EXPECT_TRUE(contains(e.what(), "plain (rank " + std::to_string(world_rank()) + ")"));
}

#if TESSERA_HAVE_CUDA
TEST(CudaCheck, NonStickyErrorThrowsWithCallAndLocation) {
  // With or without a GPU, selecting a device that does not exist fails and is not sticky.
  try {
    TESSERA_CHECK_CUDA(cudaSetDevice(4096));
    FAIL() << "cudaSetDevice(4096) succeeded";
  } catch (const tessera::CudaError& e) {
    const std::string w = e.what();
    EXPECT_TRUE(contains(w, "cudaSetDevice(4096)")) << w;
    EXPECT_TRUE(contains(w, "test_error.cpp:")) << w;
    EXPECT_TRUE(contains(w, "(rank " + std::to_string(world_rank()))) << w;
    EXPECT_NE(e.code(), 0);
  }
  // The error was cleared: the next query is not blamed for it. (Without a driver every call
  // keeps failing with cudaErrorInsufficientDriver, so this only holds with a GPU.)
  if (tessera::cuda_device_count() > 0) EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

TEST(CudaCheck, ClassifiesStickyErrors) {
  using tessera::detail::is_sticky_cuda_error;
  EXPECT_TRUE(is_sticky_cuda_error(cudaErrorIllegalAddress));
  EXPECT_TRUE(is_sticky_cuda_error(cudaErrorLaunchFailure));
  EXPECT_FALSE(is_sticky_cuda_error(cudaErrorInvalidDevice));
  EXPECT_FALSE(is_sticky_cuda_error(cudaErrorMemoryAllocation));
}
#endif
