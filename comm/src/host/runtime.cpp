#include "tessera/comm/runtime.hpp"

#include <cstdlib>
#include <string>

#include "../detail/state.hpp"
#include "tessera/comm/error.hpp"
#include "tessera/local/error.hpp"

namespace tessera {

Device select_device(int local_rank) {
  const int gpus = cuda_device_count();
  if (const char* forced = std::getenv("TESSERA_DEVICE"); forced && *forced) {
    const std::string text(forced);
    if (text == "cuda") {
      if (gpus == 0) throw BackendUnavailable("TESSERA_DEVICE=cuda but no CUDA device is visible");
      return Device::cuda(local_rank % gpus);
    }
    Device d = Device::parse(text);
    check_device_usable(d);
    return d;
  }
  return gpus > 0 ? Device::cuda(local_rank % gpus) : Device::host();
}

Runtime::Runtime() { init(nullptr, nullptr); }
Runtime::Runtime(int& argc, char**& argv) { init(&argc, &argv); }

void Runtime::init(int* argc, char*** argv) {
  int initialized = 0;
  TESSERA_CHECK_MPI(MPI_Initialized(&initialized));
  if (!initialized) {
    // FUNNELED: only the thread that made the Runtime calls MPI.
    TESSERA_CHECK_MPI(MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &thread_level_));
    owns_mpi_ = true;
  } else {
    TESSERA_CHECK_MPI(MPI_Query_thread(&thread_level_));
  }
  try {
    world_.emplace(comm::ProcessGroup::world());
    set_process_rank(world_->rank());
    device_ = select_device(world_->local_rank());
    make_current(device_);
    set_process_device(device_);  // errors thrown without a device of their own name this one
  } catch (...) {
    world_.reset();
    if (owns_mpi_) MPI_Finalize();
    throw;
  }
}

Runtime::~Runtime() {
  try {
    comm::detail::nccl_shutdown();  // every NCCL communicator, newest first, and the watchdog
  } catch (...) {  // nothing to report to from a destructor
  }
  world_.reset();  // free our communicators before MPI goes away
  set_process_device(std::nullopt);
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (owns_mpi_ && !finalized) MPI_Finalize();
}

}  // namespace tessera
