// The comm layer's settings: how process groups move device buffers and their deadline
// (registered with tessera/local/config.hpp; docs/settings.md lists them).
#pragma once
#include <string>
#include <vector>

#include "tessera/local/config.hpp"

namespace tessera::comm {

struct Settings {
  // TESSERA_NCCL=0: device buffers go through MPI instead of NCCL.
  bool nccl = true;
  // TESSERA_COMM_TIMEOUT: seconds before a collective is declared hung (> 0).
  double comm_timeout = 300.0;
  // TESSERA_EMULATE_NODES: split each real node's ranks into this many emulated nodes (tests of
  // the multi-node paths on one machine; 1: off).
  int emulate_nodes = 1;

  /// Reads and validates this layer's variables (InvalidArgument naming a bad one).
  static Settings parse(const config::Lookup& lookup);
  static std::vector<config::Variable> variables();
  /// One "NAME=value" line per variable.
  std::string str() const;
};

/// The comm layer's settings: installed by the Runtime, else read from the environment on first use.
const Settings& settings();
/// Replaces them (tests try values this way).
void set_settings(const Settings& s);

}  // namespace tessera::comm
