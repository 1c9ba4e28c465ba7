// Runtime: the SPMD program's environment. Initializes MPI unless the program already did (and
// then finalizes only what it initialized), builds the world group and picks this rank's device:
// cuda:(node-local rank % visible GPUs) when GPUs are visible, else host.
// TESSERA_DEVICE=host|cuda|cuda:N overrides the choice.
#pragma once
#include <optional>

#include "tessera/comm/process_group.hpp"
#include "tessera/local/device.hpp"

namespace tessera {

class Runtime {
 public:
  Runtime();
  Runtime(int& argc, char**& argv);
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  comm::ProcessGroup& world() { return *world_; }
  const Device& device() const noexcept { return device_; }
  int rank() const noexcept { return world_->rank(); }
  int size() const noexcept { return world_->size(); }
  int local_rank() const noexcept { return world_->local_rank(); }
  // True when this Runtime called MPI_Init and will call MPI_Finalize.
  bool owns_mpi() const noexcept { return owns_mpi_; }
  // MPI thread support level provided (MPI_THREAD_*).
  int thread_level() const noexcept { return thread_level_; }

 private:
  void init(int* argc, char*** argv);
  bool owns_mpi_ = false;
  int thread_level_ = 0;
  std::optional<comm::ProcessGroup> world_;
  Device device_;
};

// The device a rank with this node-local rank uses, honouring TESSERA_DEVICE.
Device select_device(int local_rank);

}  // namespace tessera
