// The hang path: a rank that skips a collective must not hang the others. With a short deadline
// the waiting ranks get a CommError naming the collective, and the group stays failed.
#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <regex>
#include <string>

#include "comm_test_util.hpp"
#include "device_test.hpp"
#include "tessera/comm/error.hpp"
#include "tessera/comm/process_group.hpp"

namespace {
using namespace tessera;
using namespace tessera::testing;
using comm::ProcessGroup;
using comm::ReduceOp;

// `n` as a number of its own in `text` (not a digit of another number, nor of "2.01 s").
bool mentions_number(const std::string& text, int n) {
  return std::regex_search(text, std::regex("(^|[^0-9.])" + std::to_string(n) + "($|[^0-9.])"));
}

template <class K> class CommTimeout : public DeviceTest<K> {};
TYPED_TEST_SUITE(CommTimeout, DeviceKinds, DeviceKindNames);
}  // namespace

TYPED_TEST(CommTimeout, SkippedAllReduceThrowsInsteadOfHanging) {
  const Device dev = this->device();
  ProcessGroup g(MPI_COMM_WORLD);
  if (g.size() < 2) GTEST_SKIP() << "needs 2 ranks: one skips the collective, the others wait";
  const double timeout = 2.0;
  g.set_timeout(timeout);
  EXPECT_EQ(g.timeout(), timeout);
  auto& s = Stream::default_for(dev);
  DeviceVec<double> buf(HostVec<double>(8, 1.0), dev);
  if (dev.is_cuda()) {  // make the NCCL communicator first, so that the hang is in the collective
    g.all_reduce(buf.data(), 8, ReduceOp::sum, s);
    g.synchronize(s);
    EXPECT_EQ(buf.download(), HostVec<double>(8, double(g.size())));
  }
  const bool skipper = g.rank() == g.size() - 1;
  if (!skipper) {
    std::string what;
    const auto start = std::chrono::steady_clock::now();
    try {
      g.all_reduce(buf.data(), 8, ReduceOp::sum, s);  // host: this call must throw
      if (dev.is_cuda()) g.synchronize(s);            // device: the call may return, enqueued
    } catch (const CommError& e) {
      what = e.what();
    }
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    // EXPECT, not ASSERT: every rank must reach the barrier below.
    EXPECT_FALSE(what.empty()) << "no CommError although rank " << g.size() - 1 << " skipped the all_reduce";
    EXPECT_LT(waited, timeout + 5.0) << "the timeout fired late";
    EXPECT_TRUE(g.failed());
    EXPECT_NE(what.find("all_reduce"), std::string::npos) << what;
    EXPECT_TRUE(mentions_number(what, g.size())) << "group size " << g.size() << " not in: " << what;
  }
  MPI_Barrier(MPI_COMM_WORLD);
  // The skipping rank aborts only now: a peer's abort while the collective runs could let NCCL
  // finish it with garbage instead of timing out.
  if (skipper) {
    g.abort("test skipped this collective");
    EXPECT_NE(g.failure().find("test skipped this collective"), std::string::npos) << g.failure();
  }
  // A failed group stays failed, on every rank, without waiting for anyone.
  EXPECT_TRUE(g.failed());
  EXPECT_FALSE(g.failure().empty());
  EXPECT_THROW(
      {
        g.all_reduce(buf.data(), 8, ReduceOp::sum, s);
        g.synchronize(s);
      },
      CommError);
  const ProcessGroup copy = g;  // copies share the state
  EXPECT_TRUE(copy.failed());
}

TEST(CommTimeoutSetting, ComesFromTheEnvironmentAndIsSharedByCopies) {
  {
    ScopedEnv env("TESSERA_COMM_TIMEOUT", "1");
    EXPECT_EQ(ProcessGroup(MPI_COMM_WORLD).timeout(), 1.0);
  }
  ProcessGroup g(MPI_COMM_WORLD);
  const ProcessGroup copy = g;
  g.set_timeout(42.5);
  EXPECT_EQ(copy.timeout(), 42.5);
  EXPECT_FALSE(copy.failed());
}
