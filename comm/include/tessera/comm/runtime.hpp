// Runtime: the SPMD program's environment. Reads the settings (settings.hpp) once, initializes MPI
// unless the program already did (and then finalizes only what it initialized), makes the Context
// (context.hpp: streams, caches, pools), builds the world group and picks this rank's device:
// cuda:(node-local rank % visible GPUs) when GPUs are visible, else host; TESSERA_DEVICE
// overrides the choice. Destruction releases the Context's resources, then the NCCL
// communicators, then the Context's streams and the world group, and finalizes MPI if it
// initialized it. A program that initializes MPI itself may make and destroy Runtimes several
// times before its own MPI_Finalize.
#pragma once
#include <memory>
#include <optional>

#include "tessera/comm/process_group.hpp"
#include "tessera/local/context.hpp"
#include "tessera/local/device.hpp"
#include "tessera/local/settings.hpp"

namespace tessera {

/// The SPMD program's environment: MPI, the Context, the world group and this rank's device.
class Runtime {
 public:
  /// Starts the runtime (MPI_Init_thread if needed); throws InvalidArgument for a bad setting.
  Runtime();
  /// The same, passing the program's arguments to MPI_Init_thread.
  Runtime(int& argc, char**& argv);
  /// Releases everything in order (see above).
  ~Runtime();
  /// Whether MPI is initialized (by a Runtime or by the program) and not yet finalized.
  static bool mpi_initialized();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  /// The group of all ranks.
  comm::ProcessGroup& world() { return *world_; }
  /// This rank's device.
  const Device& device() const noexcept { return device_; }
  /// This rank's world rank, the world size and the node-local rank.
  int rank() const noexcept { return world_->rank(); }
  int size() const noexcept { return world_->size(); }
  int local_rank() const noexcept { return world_->local_rank(); }
  /// The settings read at start.
  const Settings& settings() const noexcept { return settings_; }
  /// The context this Runtime owns (current while it lives).
  Context& context() noexcept { return *context_; }
  /// True when this Runtime called MPI_Init and will call MPI_Finalize.
  bool owns_mpi() const noexcept { return owns_mpi_; }
  /// MPI thread support level provided (MPI_THREAD_*).
  int thread_level() const noexcept { return thread_level_; }

 private:
  void init(int* argc, char*** argv);
  Settings settings_;
  bool owns_mpi_ = false;
  int thread_level_ = 0;
  std::unique_ptr<Context> context_;
  std::optional<comm::ProcessGroup> world_;
  Device device_;
};

/// The device a rank with this node-local rank uses: settings().device if set, else
/// cuda:(local_rank % visible GPUs), else host. The one device-selection rule.
Device select_device(int local_rank);

}  // namespace tessera
