// The io layer's settings (io/settings.hpp), registered with config.hpp's registry.
#include "tessera/io/settings.hpp"

#include <sstream>

namespace tessera::io {
namespace {
[[maybe_unused]] const bool registered = (config::layer<Settings>("io"), true);
}  // namespace

std::vector<config::Variable> Settings::variables() {
  return {
      {"TESSERA_MPIIO_COLLECTIVE", "(by the MPI)", "0 or 1",
       "1 / 0: collective / independent MPI-IO for .npy; unset: independent under Open MPI 4, else collective (see files.md)"},
      {"TESSERA_IO_THREADS", "0", "an integer >= 0",
       "threads per rank encoding/decoding and writing/reading Zarr chunks; 0: the cores the rank is bound to, or "
       "(unbound) the node's hardware threads divided among its ranks"},
  };
}

Settings Settings::parse(const config::Lookup& get) {
  Settings s;
  if (auto v = get("TESSERA_MPIIO_COLLECTIVE"); v && !v->empty())
    s.mpiio_collective = config::parse_bool(get, "TESSERA_MPIIO_COLLECTIVE", false);
  s.io_threads =
      static_cast<int>(config::parse_int(get, "TESSERA_IO_THREADS", s.io_threads, 0, "an integer >= 0 (0: from the hardware)"));
  return s;
}

std::string Settings::str() const {
  std::ostringstream o;
  o << "TESSERA_MPIIO_COLLECTIVE=" << (mpiio_collective ? (*mpiio_collective ? "1" : "0") : "") << "    (empty: by the MPI)\n"
    << "TESSERA_IO_THREADS=" << io_threads
    << "    (0: the cores the rank is bound to, else hardware threads / ranks on the node)\n";
  return o.str();
}

const Settings& settings() { return config::layer<Settings>("io").get(); }
void set_settings(const Settings& s) { config::layer<Settings>("io").set(s); }

}  // namespace tessera::io
