// Device-parameterised tests: a test body written once runs for `host` and for `cuda`.
//   template <class K> class MySuite : public tessera::testing::DeviceTest<K> {};
//   TYPED_TEST_SUITE(MySuite, tessera::testing::DeviceKinds, tessera::testing::DeviceKindNames);
//   TYPED_TEST(MySuite, Works) { auto dev = this->device(); ... }
// The CUDA instance skips, with the reason, in builds without CUDA or when no GPU is visible.
#pragma once
#include <gtest/gtest.h>
#include <mpi.h>

#include <string>
#include <type_traits>

#include "tessera/comm/runtime.hpp"
#include "tessera/config.hpp"
#include "tessera/local/device.hpp"

namespace tessera::testing {

struct HostKind {};
struct CudaKind {};
using DeviceKinds = ::testing::Types<HostKind, CudaKind>;

struct DeviceKindNames {
  template <class K>
  static std::string GetName(int) {
    return std::is_same_v<K, CudaKind> ? "cuda" : "host";
  }
};

// Called by mpi_main: records this rank's node-local rank for device selection (select_device).
void init_test_environment(MPI_Comm world);
// The group of all ranks, one for the whole test program (first call collective). Each
// comm::ProcessGroup::world() is a new communicator, and on GPUs a new NCCL communicator that
// the exchange's transport cache keeps: the distributed suites spent most of their multi-GPU
// time setting those up (fft1d at 2 ranks: 90 s against 9 s through MPI on one GPU).
const comm::ProcessGroup& world();
int node_local_rank();

template <class K>
class DeviceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if constexpr (std::is_same_v<K, CudaKind>) {
      if (!TESSERA_HAVE_CUDA) GTEST_SKIP() << "CUDA backend not built into this Tessera";
      if (cuda_device_count() == 0) GTEST_SKIP() << "no GPU visible to this process";
      const Device d = select_device(node_local_rank());  // the Runtime's rule, TESSERA_DEVICE included
      if (!d.is_cuda()) GTEST_SKIP() << "TESSERA_DEVICE puts this rank on " << d.str();
      device_ = d;
      make_current(device_);
    }
  }
  Device device() const { return device_; }

 private:
  Device device_ = Device::host();
};

}  // namespace tessera::testing
