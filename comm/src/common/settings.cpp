// The comm layer's settings (comm/settings.hpp), registered with the registry of config.hpp.
#include "tessera/comm/settings.hpp"

#include <sstream>

namespace tessera::comm {
namespace {
[[maybe_unused]] const bool registered = (config::layer<Settings>("comm"), true);
}  // namespace

std::vector<config::Variable> Settings::variables() {
  return {
      {"TESSERA_NCCL", "1", "0 or 1", "0: device buffers go through (CUDA-aware or staged) MPI instead of NCCL"},
      {"TESSERA_COMM_TIMEOUT", "300", "seconds > 0", "seconds before a collective is declared hung (CommError on every rank)"},
      {"TESSERA_EMULATE_NODES", "1", "integer >= 1",
       "tests: each real node's ranks split into this many emulated nodes (in rank order) wherever Tessera asks "
       "\"same node?\"; distinct NCCL_HOSTID per emulated node (launch/tessera-run --emulate-nodes k)"},
  };
}

Settings Settings::parse(const config::Lookup& get) {
  Settings s;
  s.nccl = config::parse_bool(get, "TESSERA_NCCL", s.nccl);
  s.comm_timeout = config::parse_seconds(get, "TESSERA_COMM_TIMEOUT", s.comm_timeout);
  s.emulate_nodes = static_cast<int>(config::parse_int(get, "TESSERA_EMULATE_NODES", s.emulate_nodes, 1, "an integer >= 1"));
  return s;
}

std::string Settings::str() const {
  std::ostringstream o;
  o << "TESSERA_NCCL=" << (nccl ? "1" : "0") << "    (0: device buffers through MPI)\n"
    << "TESSERA_COMM_TIMEOUT=" << comm_timeout << "    (seconds)\n"
    << "TESSERA_EMULATE_NODES=" << emulate_nodes << "    (emulated nodes per real node; 1: off)\n";
  return o.str();
}

const Settings& settings() { return config::layer<Settings>("comm").get(); }
void set_settings(const Settings& s) { config::layer<Settings>("comm").set(s); }

}  // namespace tessera::comm
