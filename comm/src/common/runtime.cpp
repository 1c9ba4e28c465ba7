#include "tessera/comm/runtime.hpp"

#include <cstdio>
#include <string>

#include "../detail/state.hpp"
#include "tessera/comm/error.hpp"
#include "tessera/local/config.hpp"
#include "tessera/local/error.hpp"

namespace tessera {

Device select_device(int local_rank) {
  const std::string& forced = tessera::settings().device;
  if (forced.empty()) return device_for_local_rank(local_rank);
  if (forced == "cuda") {
    if (cuda_device_count() == 0) throw BackendUnavailable("TESSERA_DEVICE=cuda but no CUDA device is visible");
    return device_for_local_rank(local_rank);
  }
  Device d = Device::parse(forced);
  check_device_usable(d);
  return d;
}

Runtime::Runtime() { init(nullptr, nullptr); }
Runtime::Runtime(int& argc, char**& argv) { init(&argc, &argv); }

void Runtime::init(int* argc, char*** argv) {
  config::install_all();  // every loaded layer's, before MPI: a bad value fails fast, on every rank
  settings_ = tessera::settings();
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
    context_ = std::make_unique<Context>();
    world_.emplace(comm::ProcessGroup::world());
    set_process_rank(world_->rank());
    device_ = select_device(world_->local_rank());
    make_current(device_);
    set_process_device(device_);  // errors thrown without a device of their own name this one
    if (settings_.verbose && world_->rank() == 0)
      std::fprintf(stderr, "tessera: %d ranks, rank 0 on %s; settings:\n%s", world_->size(), device_.str().c_str(),
                   config::str_all().c_str());
  } catch (...) {
    world_.reset();
    context_.reset();
    if (owns_mpi_) MPI_Finalize();
    throw;
  }
}

bool Runtime::mpi_initialized() {
  int initialized = 0, finalized = 0;
  TESSERA_CHECK_MPI(MPI_Initialized(&initialized));
  TESSERA_CHECK_MPI(MPI_Finalized(&finalized));
  return initialized && !finalized;
}

Runtime::~Runtime() {
  try {
    context_->synchronize();
  } catch (...) {  // a failed device: release what can be released
  }
  context_->release_resources();  // plan caches, pools, halo buffers (they may hold groups)
  try {
    comm::detail::nccl_shutdown();  // every NCCL communicator, newest first, and the watchdog
  } catch (...) {  // nothing to report to from a destructor
  }
  world_.reset();  // free our communicators before MPI goes away
  context_.reset();  // the streams
  set_process_device(std::nullopt);
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (owns_mpi_ && !finalized) MPI_Finalize();
}

}  // namespace tessera
