// The io layer's settings: the .npy MPI-IO mode and the Zarr chunk pipeline's threads
// (registered with tessera/local/config.hpp; docs/settings.md lists them).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "tessera/local/config.hpp"

namespace tessera::io {

struct Settings {
  // TESSERA_MPIIO_COLLECTIVE=1 / =0: collective / independent MPI-IO calls for .npy; unset: chosen
  // by the MPI (independent under Open MPI 4).
  std::optional<bool> mpiio_collective;
  // TESSERA_IO_THREADS: threads per rank of the Zarr chunk pipeline; 0 = the node's hardware
  // threads shared among its ranks.
  int io_threads = 0;

  /// Reads and validates this layer's variables (InvalidArgument naming a bad one).
  static Settings parse(const config::Lookup& lookup);
  static std::vector<config::Variable> variables();
  /// One "NAME=value" line per variable.
  std::string str() const;
};

/// The io layer's settings: installed by the Runtime, else read on first use.
const Settings& settings();
/// Replaces them (tests try values this way).
void set_settings(const Settings& s);

}  // namespace tessera::io
