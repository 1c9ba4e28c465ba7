// Every exception's what() ends the same way, " (rank r, <device>)" or " (rank r)", added once,
// by tessera::Error. One exception of each class, from a real throw site where one is cheap on
// host; and while a Runtime exists, an error thrown without a device names the Runtime's device.
#include <gtest/gtest.h>
#include <mpi.h>

#include <optional>
#include <regex>
#include <string>
#include <typeinfo>

#include "tessera/comm/error.hpp"
#include "tessera/comm/runtime.hpp"
#include "tessera/config.hpp"
#include "tessera/distributed/consistency.hpp"
#include "tessera/distributed/creation.hpp"
#include "tessera/distributed/reduce.hpp"
#include "tessera/local/array.hpp"
#include "tessera/local/basic_ops.hpp"
#include "tessera/io/npy.hpp"

namespace {
using namespace tessera;
namespace td = tessera::distributed;

const std::regex kEnding(R"(\(rank [0-9-]+(, (host|cuda:[0-9]+))?\)$)");

// Runs f, which must throw E; checks that what() has the common ending, once, and returns it.
template <class E, class F>
std::string what_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    const std::string w = e.what();
    EXPECT_TRUE(std::regex_search(w, kEnding)) << typeid(E).name() << ": " << w;
    EXPECT_EQ(w.find("(rank "), w.rfind("(rank ")) << "rank added twice: " << w;
    return w;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected " << typeid(E).name() << ", got " << typeid(e).name() << ": " << e.what();
    return {};
  }
  ADD_FAILURE() << "no " << typeid(E).name() << " thrown";
  return {};
}

// An MPI call that fails and returns (MPI_ERRORS_RETURN): a send to a rank a 1-rank
// communicator does not have.
void failing_mpi_call() {
  MPI_Comm self = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_SELF, &self);
  MPI_Comm_set_errhandler(self, MPI_ERRORS_RETURN);
  int x = 0;
  try {
    TESSERA_CHECK_MPI(MPI_Send(&x, 1, MPI_INT, 1, 0, self));
  } catch (...) {
    MPI_Comm_free(&self);
    throw;
  }
  MPI_Comm_free(&self);
}

// A collective on a group that was aborted before: fails at once, with no peer involved.
void failed_group_call() {
  comm::ProcessGroup g(MPI_COMM_SELF);
  g.abort("aborted by the test");
  g.barrier();
}

// An .npy file that does not exist (collective: every rank calls it).
void bad_npy_header() {
  const auto l = td::Layout<1>::block(td::ProcessGrid(comm::ProcessGroup::world()), {4});
  (void)io::load_npy<double, 1>("/nonexistent/tessera_error_context.npy", l, Device::host());
}

td::Array<double, 2> zeros_of(td::Index<2> shape) {
  return td::zeros<double, 2>(td::Layout<2>::block(td::ProcessGrid(comm::ProcessGroup::world()), shape),
                              Device::host());
}
}  // namespace

TEST(ErrorContext, EveryClassEndsWithRankAndDevice) {
  const Device host = Device::host();
  what_of<InvalidArgument>([] { (void)Device::parse("bogus"); });
  what_of<InvalidArgument>([] { (void)zeros_of({4, 4}).layout().offsets(2); });
  what_of<ShapeMismatch>([&] { local::copy(local::Array<double, 1>({3}, host), local::Array<double, 1>({4}, host)); });
  what_of<DeviceMismatch>([&] {
    double buffer[3] = {};
    const local::Array<double, 1> a({3}, host);
    local::add(a, a, local::Array<double, 1>::view(buffer, {3}, Device::cuda(0)));
  });
  what_of<OutOfMemory>([&] { (void)local::Array<double, 1>({local::index_t(1) << 60}, host); });
#if TESSERA_HAVE_CUDA
  what_of<BackendUnavailable>([] { throw BackendUnavailable("no such backend here"); });
  what_of<CudaError>([] { throw CudaError("cudaSetDevice(4096) failed", 101); });
#else
  what_of<BackendUnavailable>([] { check_device_usable(Device::cuda(0)); });
  what_of<CudaError>([] { throw CudaError("cudaSetDevice(4096) failed", 101, Device::cuda(4096)); });
#endif
  what_of<MpiError>(failing_mpi_call);
  what_of<NcclError>([] { throw NcclError("ncclAllReduce failed: unhandled system error", 2); });
  what_of<CommError>(failed_group_call);
  what_of<td::LayoutMismatch>([] { (void)td::dot(zeros_of({8, 8}), zeros_of({8, 6})); });
  what_of<io::IoError>(bad_npy_header);
  // A mismatch needs two ranks that disagree; with one, the class alone.
  const auto world = comm::ProcessGroup::world();
  if (world.size() > 1) {
    what_of<td::ConsistencyError>([&] {
      td::check_consistent(world, td::CallSignature(world.rank() == 0 ? "first" : "other", DType::float64, host));
    });
  } else {
    what_of<td::ConsistencyError>([] { throw td::ConsistencyError("consistency check failed in op"); });
  }
  what_of<Error>([] { throw Error("the base class"); });
}

TEST(ErrorContext, ErrorsWithoutADeviceNameTheRuntimes) {
  std::optional<Runtime> own;  // the test main may not have made one
  if (!process_device()) own.emplace();
  ASSERT_TRUE(process_device().has_value());
  if (own) EXPECT_EQ(*process_device(), own->device());
  const std::string ending = ", " + process_device()->str() + ")";
  for (const std::string& w : {what_of<InvalidArgument>([] { (void)Device::parse("bogus"); }),
                               what_of<MpiError>(failing_mpi_call), what_of<CommError>(failed_group_call),
                               what_of<io::IoError>(bad_npy_header)}) {
    ASSERT_GE(w.size(), ending.size());
    EXPECT_EQ(w.substr(w.size() - ending.size()), ending) << w;
  }
  // An explicit device wins over the Runtime's.
  EXPECT_EQ(std::string(ShapeMismatch("x", Device::cuda(7)).what()),
            "x (rank " + std::to_string(process_rank()) + ", cuda:7)");
  if (own) {
    own.reset();  // gone with its Runtime: errors name no device
    EXPECT_FALSE(process_device().has_value());
    EXPECT_EQ(std::string(Error("x").what()), "x (rank " + std::to_string(process_rank()) + ")");
  }
}
